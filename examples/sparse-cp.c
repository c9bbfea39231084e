/* SPDX-License-Identifier: MIT */
/*
 * sparse-cp: copy SRC to DST and keep its holes.
 *
 *   sparse-cp [--backend=auto|seek|fiemap|scan|ranges|none] [--sync] [--zeroes]
 *             SRC DST
 *
 * Only the data ranges libsparse-map reports are copied (with
 * copy_file_range where the kernel can, else pread/pwrite); the holes are
 * made by setting the size at the end.  --zeroes also leaves out blocks of
 * data that hold only zeroes, like cp --sparse=always.
 *
 * The copy goes to a new file beside DST that replaces DST only once it is
 * complete, so a failed copy never leaves a DST that looks finished.
 *
 * The map covers SRC's size as fstat gave it.  Past it, SRC is read on to
 * its end and the bytes copied as data: files of procfs say 0 bytes and
 * hold more, and SRC may grow while it is copied.  A read that ends early
 * ends the copy (a sysfs attribute says 4096 bytes and reads 23, or SRC
 * shrank).  So DST holds every byte a plain read of SRC returns, as cat
 * would write them, and SRC's holes where the map found them.
 */
#include "example.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* copy_file_range(2): Linux 4.5, declared by glibc from 2.27. */
#if defined(__linux__) && (!defined(__GLIBC__) || __GLIBC__ > 2 || \
			   (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 27))
#define HAVE_COPY_RANGE 1
#endif

#define BUF_SIZE (1 << 20)

static const char *prog = "sparse-cp";

struct copy {
	int src, dst;
	bool copy_range;	/* still worth trying copy_file_range */
	unsigned char *buf;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [OPTION]... SRC DST\n"
		"Copy SRC to DST, writing only its data ranges, so DST keeps SRC's holes.\n"
		"\n"
		"  --backend=NAME  how to map SRC: auto (default), seek, fiemap, scan, ranges\n"
		"                  or none (no hole information: a dense copy)\n"
		"  --sync          flush SRC's dirty data before mapping it\n"
		"  --zeroes        also turn blocks of zeroes into holes\n"
		"  --help          print this help and exit\n"
		"\n"
		"Exit status: 0 on success, 1 if the copy failed (DST is then left as\n"
		"it was), 2 on bad usage.\n",
		prog);
}

static int write_all(int fd, const unsigned char *buf, size_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = example_pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

#ifdef HAVE_COPY_RANGE
/* Errors after which copy_file_range will not work for this pair of files,
 * while pread/pwrite may: other file systems, old kernels, special files. */
static bool copy_range_unsupported(int err)
{
	return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP ||
	       err == ENOTSUP;
}
#endif

/*
 * Copy [off, off + len) of SRC to the same place in DST.  Returns how many
 * bytes were copied, fewer than len only where SRC now ends, or -errno.
 */
static int64_t copy_data(struct copy *c, int64_t off, int64_t len)
{
	int64_t done = 0;

	while (done < len) {
		int64_t want = len - done;
		ssize_t n = 0;
		int r;

#ifdef HAVE_COPY_RANGE
		if (c->copy_range) {
			off_t in = (off_t)(off + done), out = in;

			n = copy_file_range(c->src, &in, c->dst, &out,
					    (size_t)(want < (1 << 30) ? want : (1 << 30)), 0);
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
				continue;
			}
			/* 0: the end of SRC, or a file system that copies
			 * nothing; only a read can tell them apart. */
		}
#endif
		n = example_pread(c->src, c->buf, (size_t)(want < BUF_SIZE ? want : BUF_SIZE),
				 off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;	/* SRC shrank while we copied */
		c->copy_range = false;	/* it said 0 where there were bytes */
		r = write_all(c->dst, c->buf, (size_t)n, off + done);
		if (r < 0)
			return r;
		done += n;
	}
	return done;
}

/*
 * Copy every data range of SRC into c->dst, then what SRC holds past the
 * map, and set DST's size: 0 or -errno.  Holes are never written;
 * ftruncate makes them.
 */
static int copy_file(struct copy *c, enum sparse_map_backend backend, unsigned int flags)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t size;
	int rc;

	bool ended = false;	/* a read found SRC's end before the map's */
	int64_t n;

	rc = sparse_map_open(c->src, backend, flags, &map);
	if (rc < 0)
		return rc;
	size = sparse_map_size(map);
	while ((rc = sparse_map_next(map, &r)) == 1) {
		if (r.kind != SPARSE_MAP_DATA)
			continue;
		n = copy_data(c, r.offset, r.length);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n < r.length) {
			/* SRC ends here, as a read sees it now. */
			size = r.offset + n;
			ended = true;
			break;
		}
	}
	sparse_map_close(map);
	if (rc < 0)
		return rc;
	if (!ended) {
		/* What SRC holds past the size the map was taken at. */
		n = copy_data(c, size, INT64_MAX - size);
		if (n < 0)
			return (int)n;
		size += n;
	}
	if (example_ftruncate(c->dst, size) < 0)
		return -errno;
	return 0;
}

static void fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "%s: %s%s%s: %s\n", prog, what, *what ? " " : "", path, strerror(err));
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "sync", no_argument, NULL, 's' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum sparse_map_backend backend = SPARSE_MAP_BACKEND_AUTO;
	unsigned int flags = 0;
	struct copy c = { -1, -1, true, NULL };
	const char *src, *dst;
	char *tmp = NULL;
	struct stat st;
	mode_t mask;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (example_backend(prog, optarg, &backend) < 0)
				return 2;
			break;
		case 's':
			flags |= SPARSE_MAP_SYNC;
			break;
		case 'z':
			flags |= SPARSE_MAP_ZEROES;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "%s: need SRC and DST (try --help)\n", prog);
		return 2;
	}
	src = argv[optind];
	dst = argv[optind + 1];

	/* O_NONBLOCK: a FIFO must not hang the open; the map refuses it. */
	c.src = open(src, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | O_BINARY);
	if (c.src < 0 || fstat(c.src, &st) < 0) {
		fail("", src, errno);
		goto out;
	}
	c.buf = malloc(BUF_SIZE);
	tmp = malloc(strlen(dst) + sizeof(".sparse-cp-XXXXXX"));
	if (!c.buf || !tmp) {
		fail("", src, ENOMEM);
		goto out;
	}
	sprintf(tmp, "%s.sparse-cp-XXXXXX", dst);
	c.dst = mkstemp(tmp);
	if (c.dst < 0) {
		fail("creating a file beside", dst, errno);
		free(tmp);
		tmp = NULL;	/* nothing to remove */
		goto out;
	}
	/* mkstemp made it 0600; give it SRC's permissions, as cp does. */
	mask = umask(0);
	umask(mask);
	example_prepare_copy(c.dst);
	if (example_fchmod(c.dst, st.st_mode & 0777 & ~mask) < 0) {
		fail("setting the mode of", tmp, errno);
		goto out;
	}

	rc = copy_file(&c, backend, flags);
	if (rc < 0) {
		fprintf(stderr, "%s: copying %s to %s: %s\n", prog, src, dst, strerror(-rc));
		goto out;
	}
	rc = close(c.dst);
	c.dst = -1;
	if (rc < 0) {
		fail("writing", dst, errno);
		goto out;
	}
	if (example_rename(tmp, dst) < 0) {
		fail("", dst, errno);
		goto out;
	}
	free(tmp);
	free(c.buf);
	close(c.src);
	return 0;

out:
	if (c.dst >= 0)
		close(c.dst);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (c.src >= 0)
		close(c.src);
	free(c.buf);
	return 1;
}
