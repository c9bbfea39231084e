/* SPDX-License-Identifier: MIT */
/*
 * churn DIR SECONDS [NAME]: one thread grows, shrinks, punches, preallocates
 * and rewrites a file in DIR while the main thread maps it again and again,
 * with every backend and flag.  Every map must end, tile [0, its size) with
 * maximal ranges, and call data every "stable" block: blocks written and
 * synced before the writer started, which it never touches.  Exit 0 when
 * all held, 1 otherwise.  Run by concurrent.sh on each file system.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define STABLE_REGION 128	/* blocks; the file never gets shorter */
#define STABLE_EVERY 4		/* every 4th of them is stable */
#define WILD_REGION 256		/* blocks past it that come and go */

static int64_t blk;
static char path[4096];
static atomic_bool stop;
static atomic_long writer_ops;

static bool stable(int64_t block)
{
	return block < STABLE_REGION && block % STABLE_EVERY == 0;
}

static uint32_t next_rand(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* A block the writer may touch: any block but a stable one. */
static int64_t wild_block(uint32_t *s)
{
	int64_t b;

	do
		b = next_rand(s) % (STABLE_REGION + WILD_REGION);
	while (stable(b));
	return b;
}

static void *writer(void *arg)
{
	int fd = *(int *)arg;
	uint32_t s = 12345;

	while (!atomic_load(&stop)) {
		int64_t b = wild_block(&s), len = 1 + next_rand(&s) % blk;
		int64_t size = (STABLE_REGION + next_rand(&s) % WILD_REGION) * blk;

		switch (next_rand(&s) % 7) {
		case 0:
		case 1:
			th_fill(fd, b * blk, len);	/* within the block */
			break;
		case 2:
			th_zero_fill(fd, b * blk, blk);
			break;
		case 3:
			(void)fallocate(fd, 0x02 | 0x01 /* PUNCH_HOLE | KEEP_SIZE */, b * blk, blk);
			break;
		case 4:
			(void)fallocate(fd, 0x01 /* KEEP_SIZE */, b * blk, blk);
			break;
		case 5:
			th_truncate(fd, size);		/* grow or shrink */
			break;
		case 6:
			if (next_rand(&s) % 8 == 0)
				(void)fdatasync(fd);
			break;
		}
		atomic_fetch_add(&writer_ops, 1);
	}
	return NULL;
}

static const enum sparse_map_backend backends[] = {
	SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK,
	SPARSE_MAP_BACKEND_FIEMAP, SPARSE_MAP_BACKEND_SCAN,
};
static const unsigned int flag_sets[] = {
	0, SPARSE_MAP_VERIFY, SPARSE_MAP_ZEROES, SPARSE_MAP_SYNC,
};

static int fail(const char *name, enum sparse_map_backend b, unsigned int flags, const char *fmt,
		const char *detail)
{
	fprintf(stderr, "churn on %s, %s, flags %#x: %s%s\n", name, sparse_map_backend_name(b), flags,
		fmt, detail ? detail : "");
	return 1;
}

/* One map while the writer runs: 0, or 1 after saying what went wrong. */
static int map_once(int fd, const char *name, enum sparse_map_backend b, unsigned int flags,
		    long *ranges)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t at = 0;
	enum sparse_map_kind prev = 0;
	char msg[256];
	int rc = sparse_map_open(fd, b, flags, &map);

	if (rc == -EOPNOTSUPP && b != SPARSE_MAP_BACKEND_AUTO && b != SPARSE_MAP_BACKEND_SCAN)
		return 0;	/* this backend cannot serve this file system */
	if (rc < 0)
		return fail(name, b, flags, "open: ", strerror(-rc));
	if (sparse_map_size(map) < STABLE_REGION * blk)
		return fail(name, b, flags, "size below the stable region", NULL);
	while ((rc = sparse_map_next(map, &r)) == 1) {
		(*ranges)++;
		snprintf(msg, sizeof(msg), "[%lld,+%lld) %s after %lld", (long long)r.offset,
			 (long long)r.length, r.kind == SPARSE_MAP_DATA ? "data" : "hole", (long long)at);
		if (r.offset != at || r.length <= 0 || r.kind == prev ||
		    (r.kind != SPARSE_MAP_DATA && r.kind != SPARSE_MAP_HOLE))
			return fail(name, b, flags, "ranges do not tile: ", msg);
		if (r.kind == SPARSE_MAP_DATA && r.flags)
			return fail(name, b, flags, "a data range with flags: ", msg);
		if (r.kind == SPARSE_MAP_HOLE) {
			/* The first stable block that ends after the hole starts. */
			int64_t sb = (r.offset / blk + STABLE_EVERY - 1) / STABLE_EVERY * STABLE_EVERY;

			if (sb < STABLE_REGION && sb * blk < r.offset + r.length)
				return fail(name, b, flags, "DATA LOSS: a stable block reported as hole: ", msg);
		}
		at = r.offset + r.length;
		prev = r.kind;
	}
	if (rc < 0)
		return fail(name, b, flags, "next: ", strerror(-rc));
	if (at != sparse_map_size(map))
		return fail(name, b, flags, "ranges end before the size", NULL);
	sparse_map_close(map);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 3 ? argv[3] : argc > 1 ? argv[1] : "";
	pthread_t tid;
	int fd, wfd, bad = 0;
	long maps = 0, ranges = 0;
	time_t end;

	if (argc < 3) {
		fprintf(stderr, "usage: churn DIR SECONDS [NAME]\n");
		return 2;
	}
	fd = th_create(argv[1], path, sizeof(path));
	blk = th_blksize(fd);
	for (int64_t b = 0; b < STABLE_REGION; b += STABLE_EVERY)
		th_fill(fd, b * blk, blk);
	th_truncate(fd, (STABLE_REGION + WILD_REGION) * blk);
	if (fsync(fd) < 0) {
		perror("fsync");
		return 1;
	}
	wfd = open(path, O_RDWR);
	if (wfd < 0) {
		perror(path);
		return 1;
	}
	/* A hang is a failure too: no map may take this long. */
	alarm((unsigned int)atoi(argv[2]) + 60);
	if (pthread_create(&tid, NULL, writer, &wfd) != 0)
		return 1;
	end = time(NULL) + atoi(argv[2]);
	for (unsigned int i = 0; !bad && time(NULL) < end; i++) {
		bad = map_once(fd, name, backends[i % 4], flag_sets[(i / 4) % 4], &ranges);
		maps++;
	}
	atomic_store(&stop, true);
	pthread_join(tid, NULL);
	close(wfd);
	close(fd);
	unlink(path);
	printf("churn on %s: %ld maps (%ld ranges) while the writer made %ld changes: %s\n", name,
	       maps, ranges, atomic_load(&writer_ops),
	       bad ? "FAILED" : "every map ended and tiled, no stable block called a hole");
	return bad;
}
