/* SPDX-License-Identifier: MIT */
/*
 * sparse-map cp: copy a file and keep its holes.  Only the data ranges are
 * written, with copy_file_range(2) where the kernel takes it (XFS and Btrfs
 * then share the blocks), else pread/pwrite; the size set at the end makes
 * the holes.  Past the size the map was taken at, the source is read on to
 * its end (procfs files say 0 bytes and hold more), and a read that ends
 * early ends the copy (a sysfs attribute says 4096 bytes and reads 23): the
 * copy holds every byte a plain read returns.  It is written beside DST
 * and renamed over it only once complete.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (1 << 20)
#define STEP (64 << 20)		/* copy_file_range and progress in steps of this */

struct copy {
	int src, dst;
	bool copy_range;	/* still worth trying copy_file_range */
	unsigned char *buf;
	int progress;		/* 1 on, 0 off, -1 on a terminal after a moment */
	bool shown;		/* a progress line is on the terminal */
	struct timespec t0;
	int64_t size;		/* for the progress line */
	const char *name;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sparse-map cp [OPTION]... SRC DST\n"
		"  or:  sparse-map cp [OPTION]... SRC... DIRECTORY\n"
		"Copy SRC to DST (or into DIRECTORY) writing only its data, so that the\n"
		"copy keeps SRC's holes and takes no more space than SRC's data.\n"
		"\n"
		"  --progress      show progress on standard error\n"
		"  --no-progress   never show it (default: shown on a terminal when a\n"
		"                  copy takes more than a second)\n"
		"  --zeroes        also leave out blocks that store only zeroes\n"
		"  --backend=NAME  how to map SRC: auto (default), seek, fiemap, scan,\n"
		"                  ranges or none (a dense copy)\n"
		"  --sync          flush SRC's dirty data before mapping it\n"
		"  --help          print this help and exit\n");
}

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(struct copy *c, int64_t at)
{
	char h1[32], h2[32];
	int pct, fill;

	if (c->progress == 0 || (c->progress < 0 && since(&c->t0) < 1.0))
		return;
	if (c->size > 0) {
		pct = (int)((double)(at > c->size ? c->size : at) * 100.0 / (double)c->size);
		fill = pct * 30 / 100;
		fprintf(stderr, "\r%s [%-30.*s] %3d%% %s of %s", c->name, fill,
			"##############################", pct, tool_human(at, h1),
			tool_human(c->size, h2));
	} else {
		fprintf(stderr, "\r%s %s", c->name, tool_human(at, h1));
	}
	c->shown = true;
}

/* Errors after which copy_file_range will not work for this pair, while
 * pread/pwrite may: other file systems, old kernels, special files. */
static bool copy_range_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP ||
	       err == ENOTSUP || err == EBADF;
}

/* Copy [off, off + len) of SRC to the same place in DST: the bytes copied,
 * fewer than len only where SRC now ends, or -errno. */
static int64_t copy_data(struct copy *c, int64_t off, int64_t len)
{
	int64_t done = 0;

	while (done < len) {
		int64_t want = len - done;
		ssize_t n;
		int r;

		if (c->copy_range) {
			loff_t in = off + done, out = in;

			n = copy_file_range(c->src, &in, c->dst, &out,
					    (size_t)(want < STEP ? want : STEP), 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && copy_range_unsupported(errno)) {
				c->copy_range = false;
				continue;
			}
			if (n < 0)
				return -errno;
			if (n > 0) {
				done += n;
				show_progress(c, off + done);
				continue;
			}
			/* 0: SRC's end, or a file system that copies nothing
			 * (procfs); only a read tells them apart. */
		}
		n = tool_pread(c->src, c->buf, (size_t)(want < BUF_SIZE ? want : BUF_SIZE), off + done);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		c->copy_range = false;	/* it said 0 where there were bytes */
		r = tool_pwrite(c->dst, c->buf, (size_t)n, off + done);
		if (r < 0)
			return r;
		done += n;
		if ((off + done) % STEP < n)
			show_progress(c, off + done);
	}
	return done;
}

/* Copy SRC's data ranges, then what it holds past the map, and set DST's
 * size: 0 or -errno. */
static int copy_file(struct copy *c, const struct tool_map_opts *opts)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t size, n;
	bool ended = false;
	int rc;

	rc = tool_map_open(c->src, opts, &map);
	if (rc < 0)
		return rc;
	size = c->size = sparse_map_size(map);
	while ((rc = sparse_map_next(map, &r)) == 1) {
		if (r.kind != SPARSE_MAP_DATA)
			continue;
		n = copy_data(c, r.offset, r.length);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n < r.length) {
			size = r.offset + n;	/* SRC ends here now */
			ended = true;
			break;
		}
	}
	sparse_map_close(map);
	if (rc < 0)
		return rc;
	if (!ended) {
		n = copy_data(c, size, INT64_MAX - size);
		if (n < 0)
			return (int)n;
		size += n;
	}
	if (ftruncate(c->dst, size) < 0)
		return -errno;
	show_progress(c, size);
	return 0;
}

/* The temporary copy not yet renamed into place: removed by a signal that
 * ends the command (Ctrl-C, SIGTERM, SIGHUP), which is then raised again. */
static char *volatile pending_tmp;
static const int ending[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

static void on_ending(int sig)
{
	char *tmp = pending_tmp;

	if (tmp)
		unlink(tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Hold the ending signals while pending_tmp and the file disagree. */
static void block_signals(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(ending) / sizeof(ending[0]); i++)
		sigaddset(&set, ending[i]);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

static void catch_ending_signals(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_ending;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(ending) / sizeof(ending[0]); i++) {
		/* A signal the caller ignores (nohup) stays ignored. */
		if (sigaction(ending[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(ending[i], &sa, NULL);
	}
}

/* Copy one file to the path dst: 0, or -1 after saying why. */
static int cp_one(const char *src, const char *dst, const struct tool_map_opts *opts,
		  int progress)
{
	struct copy c = { -1, -1, true, NULL, progress, false, { 0, 0 }, 0, src };
	struct stat st, dst_st;
	char *tmp = NULL;
	mode_t mask;
	int rc = -1, err;

	clock_gettime(CLOCK_MONOTONIC, &c.t0);
	c.src = tool_open_read(src);
	if (c.src < 0 || fstat(c.src, &st) < 0) {
		tool_fail_errno(src, errno, NULL);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		tool_fail(src, "give a file, not a directory", "is a directory");
		goto out;
	}
	if (stat(dst, &dst_st) == 0 && dst_st.st_dev == st.st_dev && dst_st.st_ino == st.st_ino) {
		tool_fail(dst, "give another name", "is the same file as %s", src);
		goto out;
	}
	c.buf = malloc(BUF_SIZE);
	tmp = malloc(strlen(dst) + sizeof(".sparse-map-XXXXXX"));
	if (!c.buf || !tmp) {
		tool_fail_errno(src, ENOMEM, NULL);
		goto out;
	}
	sprintf(tmp, "%s.sparse-map-XXXXXX", dst);
	block_signals(true);	/* no temporary file that a signal forgets */
	c.dst = mkstemp(tmp);
	if (c.dst >= 0)
		pending_tmp = tmp;
	block_signals(false);
	if (c.dst < 0) {
		tool_fail_errno(dst, errno, "cannot create a file beside it");
		free(tmp);
		tmp = NULL;
		goto out;
	}
	/* mkstemp made it 0600: SRC's permissions, as cp gives them. */
	mask = umask(0);
	umask(mask);
	if (fchmod(c.dst, st.st_mode & 0777 & ~mask) < 0) {
		tool_fail_errno(dst, errno, "cannot set its mode");
		goto out;
	}
	err = copy_file(&c, opts);
	if (c.shown)
		fputc('\n', stderr);
	if (err < 0) {
		char what[4200];

		snprintf(what, sizeof(what), "copying it to %s failed, which is left as it was", dst);
		tool_fail_errno(src, err, what);
		goto out;
	}
	err = close(c.dst);
	c.dst = -1;
	if (err < 0) {
		tool_fail_errno(dst, errno, "cannot write");
		goto out;
	}
	block_signals(true);
	err = rename(tmp, dst) < 0 ? errno : 0;
	if (err == 0) {
		pending_tmp = NULL;
		free(tmp);
		tmp = NULL;
	}
	block_signals(false);
	if (err) {
		tool_fail_errno(dst, err, "cannot put the copy in place");
		goto out;
	}
	rc = 0;
out:
	if (c.dst >= 0)
		close(c.dst);
	if (tmp) {
		block_signals(true);
		unlink(tmp);
		pending_tmp = NULL;
		block_signals(false);
		free(tmp);
	}
	if (c.src >= 0)
		close(c.src);
	free(c.buf);
	return rc;
}

int tool_cp(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'P' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ "backend", required_argument, NULL, 'b' },
		{ "sync", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_map_opts opts = { SPARSE_MAP_BACKEND_AUTO, 0 };
	int opt, rc, progress = -1, status = TOOL_OK, nsrc;
	const char *dst;
	struct stat st;
	bool into;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			progress = 1;
			break;
		case 'P':
			progress = 0;
			break;
		case 'h':
			usage(stdout);
			return TOOL_OK;
		default:
			rc = tool_map_option("cp", opt, optarg, &opts);
			if (rc < 0)
				return TOOL_USAGE;
			if (rc == 0)
				return tool_bad_option("cp", argv);
		}
	}
	nsrc = argc - optind - 1;
	if (nsrc < 1)
		return tool_usage_error("cp", "give SRC and DST");
	if (progress < 0 && !isatty(STDERR_FILENO))
		progress = 0;
	dst = argv[argc - 1];
	catch_ending_signals();
	into = stat(dst, &st) == 0 && S_ISDIR(st.st_mode);
	if (nsrc > 1 && !into)
		return tool_usage_error("cp", "%s is not a directory, and there are %d SRCs", dst,
					nsrc);
	for (int i = optind; i < argc - 1; i++) {
		char *path = NULL, *copy;

		if (into) {
			copy = strdup(argv[i]);
			if (!copy || asprintf(&path, "%s/%s", dst, basename(copy)) < 0) {
				free(copy);
				tool_fail_errno(argv[i], ENOMEM, NULL);
				status = TOOL_FAILED;
				continue;
			}
			free(copy);
		}
		if (cp_one(argv[i], path ? path : dst, &opts, progress) < 0)
			status = TOOL_FAILED;
		free(path);
	}
	return status;
}
