/* SPDX-License-Identifier: MIT */
/*
 * The zero test shared by the SCAN backend, SPARSE_MAP_VERIFY and
 * SPARSE_MAP_ZEROES.  The file is cut into aligned blocks of map->blksize
 * (the last, partial block counts as one); a caller asks about the part of
 * each block that lies inside [lo, hi).  Bytes past the end of the file, when
 * the file shrank after open, read as zeroes: they are hole.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sparse-map-private.h"

/* Large enough to amortise the system call, small enough to stay in cache
 * while the zero test runs over what pread just copied. */
#define SM_READ_CHUNK (256 * 1024)

static bool all_zero(const unsigned char *p, size_t n)
{
	/* Test a short head by hand, then let memcmp (vectorised in every
	 * C library) compare the rest with itself shifted by the head. */
	size_t head = n < 16 ? n : 16;

	for (size_t i = 0; i < head; i++)
		if (p[i])
			return false;
	return n == head || memcmp(p, p + head, n - head) == 0;
}

void sm_readbuf_reset(struct sparse_map *map)
{
	map->buf.valid = false;
}

void sm_readbuf_free(struct sparse_map *map)
{
	sm_sys_free(map->buf.data);
	map->buf.data = NULL;
	map->buf.valid = false;
}

static int readbuf_alloc(struct sparse_map *map)
{
	size_t bs = (size_t)map->blksize;
	size_t size = SM_READ_CHUNK < bs ? bs : SM_READ_CHUNK / bs * bs;

	map->buf.data = sm_sys_aligned_alloc(4096, size);
	if (!map->buf.data)
		return -ENOMEM;
	map->buf.size = size;
	map->buf.valid = false;
	return 0;
}

/* Load the buffer with the file from block-aligned off, no further than
 * needed to cover hi; buf.len says how much of it was covered. */
static int readbuf_load(struct sparse_map *map, int64_t off, int64_t hi)
{
	int64_t bs = map->blksize;
	int64_t want = hi - off;
	ssize_t got;
	bool drop;

	/* Whole blocks, unless that would reach past INT64_MAX. */
	if (want % bs && INT64_MAX - off - want >= bs - want % bs)
		want += bs - want % bs;

	if (!map->buf.data) {
		int r = readbuf_alloc(map);
		if (r < 0)
			return r;
	}
	if (want > (int64_t)map->buf.size)
		want = (int64_t)map->buf.size;
	if (map->pages_are_storage) {
		/* Read no block that has no page: reading would store one. */
		int64_t end;
		int r = sm_pagecache_present(map, off, want, &end);

		if (r < 0)
			return r;
		want = end - off;
	}
	map->buf.valid = false;
	drop = sm_pagecache_droppable(map, off, want);
	got = sm_sys_pread(map->fd, map->buf.data, (size_t)want, off);
	if (got < 0)
		return (int)got;
	if (drop)
		sm_pagecache_drop(map, off, want);
	/* What the file no longer has is hole: make it read as zeroes. */
	memset(map->buf.data + got, 0, (size_t)(want - got));
	map->buf.off = off;
	map->buf.len = (size_t)want;
	map->buf.valid = true;
	return 0;
}

int sm_zero_run(struct sparse_map *map, int64_t pos, int64_t lo, int64_t hi,
		bool *zero, int64_t *run_end)
{
	int64_t bs = map->blksize;
	int64_t block = pos - pos % bs;
	bool first = true;
	bool kind = false;

	if (pos < lo || pos >= hi)
		return -EINVAL;
	for (;;) {
		int64_t from = block > lo ? block : lo;
		/* Written so that nothing overflows next to INT64_MAX. */
		int64_t to = hi - block > bs ? block + bs : hi;
		struct sm_readbuf *b = &map->buf;
		bool z;

		if (!b->valid || from < b->off || to > b->off + (int64_t)b->len) {
			/* Stop at the buffer's end rather than read again: the
			 * caller merges runs, and one read per call bounds the
			 * time a call takes. */
			if (!first)
				break;
			if (map->pages_are_storage) {
				int64_t end;
				int r = sm_pagecache_absent(map, block, hi, &end);

				if (r < 0)
					return r;
				if (r == 1) {
					/* No page, so zeroes, found without reading. */
					*zero = true;
					*run_end = end;
					return 0;
				}
			}
			int r = readbuf_load(map, block, hi);
			if (r < 0)
				return r;
		}
		z = all_zero(b->data + (from - b->off), (size_t)(to - from));
		if (first) {
			kind = z;
			first = false;
		} else if (z != kind) {
			break;
		}
		*run_end = to;
		if (to == hi)
			break;
		block += bs;
	}
	*zero = kind;
	return 0;
}
