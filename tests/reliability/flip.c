/* SPDX-License-Identifier: MIT */
/*
 * flip DIR SECONDS [NAME]: one thread turns two ranges of a file in DIR
 * from hole to data and back, again and again (pwrite, then
 * fallocate(PUNCH_HOLE)), as a program appending to a journal and
 * punching its head does; a copier met exactly this once and looped
 * forever.  Meanwhile the main thread maps the file with AUTO, SEEK and
 * FIEMAP and walks it with sparse_map_lseek(SEEK_DATA/SEEK_HOLE).  Every
 * map must end within a bounded number of system calls (counted at the
 * system-call seam) and of ranges, tile [0, size), and call data every
 * byte of the "stable" runs, written and synced before the writer started
 * and never punched; one of them borders a flipping range.  Every
 * sparse_map_lseek must end within the same bound, never skip a stable
 * byte and never answer a hole inside one.  Exit 0 when all held, 1
 * otherwise.  Run by concurrent.sh on each file system.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "sys-calls.h"

#define KIB 1024
#define MIB (1024 * KIB)
#define SIZE (4 * MIB)

struct run { int64_t off, len; };

/* Written before the writer starts, never touched again. */
static const struct run stable[] = {
	{ 0, 128 * KIB }, { 2 * MIB, 128 * KIB }, { SIZE - 64 * KIB, 64 * KIB },
};
/* Data, then a hole, then data ...: the second borders stable[1]. */
static const struct run flipping[] = {
	{ MIB, 256 * KIB }, { 2 * MIB + 128 * KIB, 64 * KIB },
};
#define NSTABLE (sizeof(stable) / sizeof(stable[0]))
#define NFLIPPING (sizeof(flipping) / sizeof(flipping[0]))

static atomic_bool stop;
static atomic_long flips;
static const char *name;
static int64_t max_calls, max_ranges;	/* the bounds, from the block size */

/* System calls the library made, counted at the seam (main thread only). */
static struct sm_sys_table libc_calls;
static long calls, most_calls;

static int c_fstat(int fd, struct stat *st) { calls++; return libc_calls.fstat(fd, st); }
static int c_getfl(int fd) { calls++; return libc_calls.getfl(fd); }
static off_t c_lseek(int fd, off_t off, int whence) { calls++; return libc_calls.lseek(fd, off, whence); }
static int c_fdatasync(int fd) { calls++; return libc_calls.fdatasync(fd); }
static int c_ioctl(int fd, unsigned long req, void *arg) { calls++; return libc_calls.ioctl(fd, req, arg); }
static int c_fstatfs(int fd, int64_t *type) { calls++; return libc_calls.fstatfs(fd, type); }

static ssize_t c_pread(int fd, void *buf, size_t len, off_t off)
{
	calls++;
	return libc_calls.pread(fd, buf, len, off);
}

static int c_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	calls++;
	return libc_calls.cachestat(fd, off, len, cs);
}

static int c_fadvise(int fd, off_t off, off_t len, int advice)
{
	calls++;
	return libc_calls.fadvise(fd, off, len, advice);
}

static int c_mincore(int fd, off_t off, size_t len, unsigned char *vec)
{
	calls++;
	return libc_calls.mincore(fd, off, len, vec);
}

static void *writer(void *arg)
{
	int fd = *(int *)arg;

	while (!atomic_load(&stop)) {
		for (size_t i = 0; i < NFLIPPING; i++)
			th_fill(fd, flipping[i].off, flipping[i].len);
		if (atomic_load(&flips) % 8 == 0)
			(void)fdatasync(fd);	/* now and then, extents on disk too */
		for (size_t i = 0; i < NFLIPPING; i++)
			(void)fallocate(fd, 0x02 | 0x01 /* PUNCH_HOLE | KEEP_SIZE */,
					flipping[i].off, flipping[i].len);
		atomic_fetch_add(&flips, 1);
	}
	return NULL;
}

static int fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "flip on %s, %s: ", name, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* The stable byte in [lo, hi) with the lowest offset, or -1. */
static int64_t stable_in(int64_t lo, int64_t hi)
{
	for (size_t i = 0; i < NSTABLE; i++) {
		int64_t s = stable[i].off > lo ? stable[i].off : lo;

		if (s < stable[i].off + stable[i].len && s < hi)
			return s;
	}
	return -1;
}

/* The system calls since the last check: 0, or 1 after saying they were too many. */
static int count_ok(const char *what)
{
	long n = calls;

	calls = 0;
	if (n > most_calls)
		most_calls = n;
	if (n > max_calls)
		return fail(what, "%ld system calls, more than the bound %lld", n, (long long)max_calls);
	return 0;
}

static int map_once(int fd, enum sparse_map_backend b, unsigned int flags, const char *what)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t at = 0, n = 0, s;
	enum sparse_map_kind prev = 0;
	int rc;

	calls = 0;
	rc = sparse_map_open(fd, b, flags, &map);
	if (rc == -EOPNOTSUPP && b != SPARSE_MAP_BACKEND_AUTO)
		return 0;	/* this backend cannot serve this file system */
	if (rc < 0)
		return fail(what, "open failed: %s", strerror(-rc));
	while ((rc = sparse_map_next(map, &r)) == 1) {
		if (++n > max_ranges) {
			sparse_map_close(map);
			return fail(what, "more than %lld ranges: the map does not end",
				    (long long)max_ranges);
		}
		if (r.offset != at || r.length <= 0 || r.kind == prev)
			return fail(what, "ranges do not tile at %lld (%lld bytes after %lld)",
				    (long long)r.offset, (long long)r.length, (long long)at);
		if (r.kind == SPARSE_MAP_HOLE && (s = stable_in(r.offset, r.offset + r.length)) >= 0)
			return fail(what, "DATA LOSS: stable byte %lld in the hole [%lld,+%lld)",
				    (long long)s, (long long)r.offset, (long long)r.length);
		at = r.offset + r.length;
		prev = r.kind;
	}
	sparse_map_close(map);
	if (rc < 0)
		return fail(what, "next failed at %lld: %s", (long long)at, strerror(-rc));
	if (at != SIZE)
		return fail(what, "the ranges end at %lld, not at the size %d", (long long)at, SIZE);
	return count_ok(what);
}

/* A SEEK_DATA/SEEK_HOLE walk, as a copier makes it. */
static int lseek_walk(int fd)
{
	int64_t off = 0, data, hole, s, steps = 0;

	while (off < SIZE) {
		if (++steps > max_ranges)
			return fail("sparse_map_lseek", "more than %lld steps from 0 to %lld",
				    (long long)max_ranges, (long long)off);
		calls = 0;
		data = sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_DATA);
		if (count_ok("sparse_map_lseek(SEEK_DATA)"))
			return 1;
		if (data < 0) {
			if (errno != ENXIO)
				return fail("sparse_map_lseek(SEEK_DATA)", "failed at %lld: %s",
					    (long long)off, strerror(errno));
			data = SIZE;
		}
		if (data < off)
			return fail("sparse_map_lseek(SEEK_DATA)", "answered %lld for %lld",
				    (long long)data, (long long)off);
		if ((s = stable_in(off, data)) >= 0)
			return fail("sparse_map_lseek(SEEK_DATA)", "DATA LOSS: skipped stable byte %lld, "
				    "answering %lld", (long long)s, (long long)data);
		if (data >= SIZE)
			break;
		hole = sparse_map_lseek(fd, data, SPARSE_MAP_SEEK_HOLE);
		if (count_ok("sparse_map_lseek(SEEK_HOLE)"))
			return 1;
		if (hole < data || hole > SIZE)
			return fail("sparse_map_lseek(SEEK_HOLE)", "answered %lld for %lld",
				    (long long)hole, (long long)data);
		if (hole < SIZE && stable_in(hole, hole + 1) >= 0)
			return fail("sparse_map_lseek(SEEK_HOLE)", "DATA LOSS: a hole at stable byte %lld "
				    "(asked at %lld)", (long long)hole, (long long)data);
		/* Punched since SEEK_DATA: a copier moves on by a byte. */
		off = hole > data ? hole : data + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	pthread_t tid;
	int fd, wfd, bad = 0;
	long maps = 0, walks = 0;
	int64_t blk;
	time_t end;

	if (argc < 3) {
		fprintf(stderr, "usage: flip DIR SECONDS [NAME]\n");
		return 2;
	}
	name = argc > 3 ? argv[3] : argv[1];
	libc_calls = sm_sys_table;
	sm_sys_table.fstat = c_fstat;
	sm_sys_table.getfl = c_getfl;
	sm_sys_table.lseek = c_lseek;
	sm_sys_table.pread = c_pread;
	sm_sys_table.fdatasync = c_fdatasync;
	sm_sys_table.ioctl = c_ioctl;
	sm_sys_table.fstatfs = c_fstatfs;
	sm_sys_table.cachestat = c_cachestat;
	sm_sys_table.fadvise = c_fadvise;
	sm_sys_table.mincore = c_mincore;

	fd = th_create(argv[1], path, sizeof(path));
	blk = th_blksize(fd);
	/* Even a backend that says "data" one block at a time, with two
	 * calls a block, stays within these; a loop does not. */
	max_ranges = SIZE / blk + 2;
	max_calls = 4 * (SIZE / blk) + 64;
	th_truncate(fd, SIZE);
	if (!th_fallocate(fd, 0x02 | 0x01, flipping[0].off, blk)) {
		printf("flip on %s: no PUNCH_HOLE here; not tried\n", name);
		close(fd);
		unlink(path);
		return TH_SKIP;
	}
	for (size_t i = 0; i < NSTABLE; i++)
		th_fill(fd, stable[i].off, stable[i].len);
	if (fsync(fd) < 0) {
		perror("fsync");
		return 1;
	}
	wfd = open(path, O_RDWR);
	if (wfd < 0) {
		perror(path);
		return 1;
	}
	alarm((unsigned int)atoi(argv[2]) + 60);	/* a hang fails too */
	if (pthread_create(&tid, NULL, writer, &wfd) != 0)
		return 1;
	end = time(NULL) + atoi(argv[2]);
	for (unsigned int i = 0; !bad && time(NULL) < end; i++) {
		switch (i % 5) {
		case 0:
			bad = map_once(fd, SPARSE_MAP_BACKEND_AUTO, 0, "auto");
			break;
		case 1:
			bad = map_once(fd, SPARSE_MAP_BACKEND_SEEK, 0, "seek");
			break;
		case 2:
			bad = map_once(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, "fiemap");
			break;
		case 3:
			bad = map_once(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY, "auto, verify");
			break;
		case 4:
			bad = lseek_walk(fd);
			walks++;
			continue;
		}
		maps++;
	}
	atomic_store(&stop, true);
	pthread_join(tid, NULL);
	close(wfd);
	close(fd);
	unlink(path);
	printf("flip on %s: %ld maps and %ld sparse_map_lseek walks while two ranges flipped %ld "
	       "times; at most %ld system calls a map or call (bound %lld): %s\n", name, maps, walks,
	       atomic_load(&flips), most_calls, (long long)max_calls,
	       bad ? "FAILED" : "every map ended and tiled, no stable byte called a hole");
	return bad;
}
