/* SPDX-License-Identifier: MIT */
/*
 * sparse-map dig: punch holes, in place, where a file stores blocks of
 * zeroes.  The map under SPARSE_MAP_ZEROES | SPARSE_MAP_SPLIT_FLAGS names
 * every run of stored zeroes with its exact bounds; each is punched with
 * FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, which leaves the content as
 * it reads.
 *
 * A block read as zeroes and punched later must not have been written in
 * between.  So dig first takes a write lease on the file (F_SETLEASE
 * F_WRLCK): the kernel grants it only while no other descriptor of the
 * file is open anywhere, and makes any later open wait until the holder
 * gives it up (at most /proc/sys/fs/lease-break-time seconds).  Without a
 * lease dig refuses the file, unless --force says the caller knows that no
 * one writes it.  When an open breaks the lease (SIGIO), dig stops at once,
 * before the next punch, and gives the lease back.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t lease_broken;

static void on_lease_break(int sig)
{
	(void)sig;
	lease_broken = 1;
}

struct dig_cmd {
	struct tool_map_opts opts;
	bool force, dry_run, unwritten;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sparse-map dig [OPTION]... FILE...\n"
		"Punch holes in place where FILE stores blocks of zeroes; what it reads\n"
		"stays the same.  FILE is held under a write lease while it is dug, so\n"
		"that no one can open it meanwhile; where no lease can be had (another\n"
		"process has it open, or the file system has no leases) it is refused.\n"
		"\n"
		"  --force         dig without a lease: you know that no one writes FILE\n"
		"  --unwritten     free preallocated space too (fallocate's)\n"
		"  --dry-run       only say how much would be reclaimed\n"
		"  --backend=NAME  auto (default), seek, fiemap or scan\n"
		"  --help          print this help and exit\n"
		"\n"
		"Each FILE's line says how many bytes its blocks shrank by.\n");
}

/* Take the lease: 1 held, 0 none but --force, or -1 after saying why
 * there is none. */
static int take_lease(int fd, const char *path, bool force)
{
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0)
		return 1;
	if (force)
		return 0;
	if (errno == EAGAIN || errno == EBUSY)
		tool_fail(path, "close it everywhere first, or give --force if no one writes it",
			  "another process has it open: no write lease");
	else if (errno == EINVAL || errno == ENOLCK || errno == EOPNOTSUPP)
		tool_fail(path, "give --force if you know that no one writes it",
			  "its file system grants no leases");
	else if (errno == EACCES || errno == EPERM)
		tool_fail(path, "run as its owner, or give --force if no one writes it",
			  "no write lease: %s", strerror(errno));
	else
		tool_fail_errno(path, errno, "no write lease");
	return -1;
}

/* Whether the lease is being broken or gone (then said): the SIGIO of a
 * break, or the kernel's own word, which does not rest on the signal. */
static bool lost_lease(int fd, const char *path, int64_t punched)
{
	if (!lease_broken && fcntl(fd, F_GETLEASE) == F_WRLCK)
		return false;
	tool_fail(path, "run again once the other process has closed it",
		  "another process opened it: stopped after %lld bytes", (long long)punched);
	return true;
}

static int punch(int fd, int64_t off, int64_t len)
{
	int r;

	do
		r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Dig one file: 0, or -1 after saying why. */
static int dig_one(const struct dig_cmd *cmd, const char *path)
{
	struct sparse_map *map = NULL;
	struct sparse_map_range r;
	struct stat before, after;
	int64_t punched = 0;
	bool scanned;
	int fd, rc = -1, err, leased = 0;
	char h1[32], h2[32];

	lease_broken = 0;
	fd = open(path, (cmd->dry_run ? O_RDONLY : O_RDWR) | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EWOULDBLOCK) {
		tool_fail(path, "run again once it has given the lease back",
			  "another process holds a lease on it");
		goto out;
	}
	if (fd < 0 || fstat(fd, &before) < 0) {
		tool_fail_errno(path, errno, NULL);
		goto out;
	}
	if (!S_ISREG(before.st_mode)) {
		tool_fail(path, "give a regular file", "is not a regular file");
		goto out;
	}
	if (!cmd->dry_run && (leased = take_lease(fd, path, cmd->force)) < 0)
		goto out;
	err = tool_map_open(fd, &cmd->opts, &map);
	if (err < 0) {
		tool_fail_errno(path, err, "cannot map it");
		goto out;
	}
	/* SCAN reads every block and calls each all-zero one a hole, stored
	 * or not, unflagged: each of its holes is worth a punch. */
	scanned = sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_SCAN;
	while ((err = sparse_map_next(map, &r)) == 1) {
		bool zeroes = scanned || (r.flags & SPARSE_MAP_RANGE_ZEROES);
		bool unwritten = cmd->unwritten && (r.flags & SPARSE_MAP_RANGE_UNWRITTEN);

		if (leased && lost_lease(fd, path, punched))
			goto out;
		if (r.kind != SPARSE_MAP_HOLE || !(zeroes || unwritten))
			continue;
		if (!cmd->dry_run && punch(fd, r.offset, r.length) < 0) {
			if (errno == EOPNOTSUPP)
				tool_fail(path, "nothing was changed where it could not punch",
					  "its file system cannot punch holes");
			else
				tool_fail_errno(path, errno, "cannot punch a hole");
			goto out;
		}
		punched += r.length;
	}
	if (err < 0) {
		tool_fail_errno(path, err, "mapping stopped");
		goto out;
	}
	if (leased && lost_lease(fd, path, punched))
		goto out;
	if (cmd->dry_run) {
		/* SCAN's holes may be unallocated already: then "up to". */
		printf("%s: %s%lld bytes of zeroes could be punched (%s)\n", path,
		       scanned ? "up to " : "", (long long)punched, tool_human(punched, h1));
		rc = 0;
		goto out;
	}
	if (fstat(fd, &after) < 0) {
		tool_fail_errno(path, errno, NULL);
		goto out;
	}
	printf("%s: %lld bytes reclaimed (%s; %s allocated now), %lld punched\n", path,
	       (long long)((before.st_blocks - after.st_blocks) * 512),
	       tool_human((before.st_blocks - after.st_blocks) * 512, h1),
	       tool_human(after.st_blocks * 512, h2), (long long)punched);
	rc = 0;
out:
	if (map)
		sparse_map_close(map);
	if (fd >= 0) {
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
		close(fd);
	}
	return rc;
}

int tool_dig(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "unwritten", no_argument, NULL, 'u' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dig_cmd cmd = { { SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES }, false, false, false };
	struct sigaction sa;
	sigset_t unblock;
	int opt, rc, status = TOOL_OK;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			cmd.force = true;
			break;
		case 'u':
			cmd.unwritten = true;
			break;
		case 'd':
			cmd.dry_run = true;
			break;
		case 'h':
			usage(stdout);
			return TOOL_OK;
		default:
			rc = tool_map_option("dig", opt, optarg, &cmd.opts);
			if (rc < 0)
				return TOOL_USAGE;
			if (rc == 0)
				return tool_bad_option("dig", argv);
		}
	}
	if (optind >= argc)
		return tool_usage_error("dig", "no FILE given");
	/* A lease break is told with SIGIO, whose default ends the process. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_lease_break;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&unblock);
	sigaddset(&unblock, SIGIO);
	/* Blocked by whoever started us, SIGIO would never say the lease broke
	 * (lost_lease() asks the kernel too). */
	if (sigaction(SIGIO, &sa, NULL) < 0 || sigprocmask(SIG_UNBLOCK, &unblock, NULL) < 0) {
		tool_fail_errno("sparse-map dig", errno, "cannot catch SIGIO");
		return TOOL_FAILED;
	}
	for (int i = optind; i < argc; i++)
		if (dig_one(&cmd, argv[i]) < 0)
			status = TOOL_FAILED;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		tool_fail_errno("standard output", errno ? errno : EIO, "cannot write");
		return TOOL_FAILED;
	}
	return status;
}
