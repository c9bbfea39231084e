/* SPDX-License-Identifier: MIT */
/*
 * The zero test shared by the SCAN backend, SPARSE_MAP_VERIFY and
 * SPARSE_MAP_ZEROES.  The file is cut into aligned blocks of map->blksize
 * (the last, partial block counts as one); a caller asks about the part of
 * each block that lies inside [lo, hi).  A block that a read did not
 * return whole is data: bytes a read never returned are not known to be
 * zeroes (a sysfs file says st_size 4096 and reads less; a file may shrink
 * while it is mapped), and the caller's own read meets the end there.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sparse-map-private.h"

/* Large enough to amortise the system call, small enough to stay in cache
 * while the zero test runs over what pread just copied.  (Reads for
 * sparse_map_lseek() start at one block and grow to it: map->read_len.) */
#define SM_READ_CHUNK (256 * 1024)
/* The shortest read of zeroes a sparse_map_lseek() walk drops again. */
#define SM_LSEEK_DROP_MIN (64 * 1024)

#if defined(__GNUC__)
/* 16 bytes at a time, in whatever vector registers the target has (or
 * scalar code where none); may_alias, since the buffer holds bytes. */
typedef uint64_t sm_vec __attribute__((vector_size(16), may_alias));

static bool all_zero(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && ((uintptr_t)(p + i) & 15))
		if (p[i++])
			return false;
	/* OR 256 bytes together, then test: the loads run at cache speed,
	 * and data (which is rarely zero for long) leaves early. */
	for (; i + 256 <= n; i += 256) {
		const sm_vec *v = (const sm_vec *)(const void *)(p + i);
		sm_vec acc = v[0] | v[1] | v[2] | v[3] | v[4] | v[5] | v[6] | v[7] |
			     v[8] | v[9] | v[10] | v[11] | v[12] | v[13] | v[14] | v[15];

		if (acc[0] | acc[1])
			return false;
	}
	for (; i < n; i++)
		if (p[i])
			return false;
	return true;
}
#else
static bool all_zero(const unsigned char *p, size_t n)
{
	/* memcmp (vectorised in C libraries) against itself shifted. */
	size_t head = n < 16 ? n : 16;

	for (size_t i = 0; i < head; i++)
		if (p[i])
			return false;
	return n == head || memcmp(p, p + head, n - head) == 0;
}
#endif

void sm_readbuf_reset(struct sparse_map *map)
{
	map->buf.valid = false;
	/* What pagecache.c saw may have changed too. */
	map->present_to = 0;
	map->absent_from = map->absent_to = 0;
}

void sm_readbuf_keep_data(struct sparse_map *map, int64_t from)
{
	struct sm_readbuf *b = &map->buf;
	int64_t bs = map->blksize, end, block;

	if (!b->valid || from < b->off || from >= b->off + (int64_t)b->len) {
		b->valid = false;
		return;
	}
	end = b->off + (int64_t)b->len;
	for (block = from - (from - b->off) % bs; block < end; block += bs) {
		int64_t to = end - block > bs ? block + bs : end;

		if (all_zero(b->data + (block - b->off), (size_t)(to - block)))
			break;
	}
	if (block < end) {
		/* What lies past the first zero block is read again; so is
		 * what the read did not return, which the next read decides. */
		b->len = (size_t)(block - b->off);
		b->asked = b->len;
		b->valid = b->len > 0;
	}
}

void sm_readbuf_free(struct sparse_map *map)
{
	sm_sys_free(map->buf.data);
	map->buf.data = NULL;
	map->buf.valid = false;
}

/* The read buffer's size: whole blocks, about SM_READ_CHUNK. */
static size_t readbuf_size(const struct sparse_map *map)
{
	size_t bs = (size_t)map->blksize;

	return SM_READ_CHUNK < bs ? bs : SM_READ_CHUNK / bs * bs;
}

static int readbuf_alloc(struct sparse_map *map)
{
	size_t size = readbuf_size(map);

	map->buf.data = sm_sys_aligned_alloc(4096, size);
	if (!map->buf.data)
		return -ENOMEM;
	map->buf.size = size;
	map->buf.valid = false;
	return 0;
}

/* Load the buffer with the file from block-aligned off, no further than
 * needed to cover hi: buf.asked bytes were asked for, buf.len came. */
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
	if (map->for_lseek) {
		if (map->read_len < bs)
			map->read_len = bs;
		if (want > map->read_len)
			want = map->read_len;
		if (map->read_len <= (int64_t)map->buf.size / 2)
			map->read_len *= 2;
	}
	map->buf.valid = false;
	drop = !map->for_lseek && sm_pagecache_droppable(map, off, want);
	got = sm_sys_pread(map->fd, map->buf.data, (size_t)want, off);
	if (got < 0)
		return (int)got;
	/* A sparse_map_lseek() walk keeps what holds data cached, for its
	 * caller's read, and drops long reads of zeroes, which its caller
	 * never reads, whoever cached them (where pages are not the storage).
	 * A short one is the block after data, where the next call starts:
	 * dropped, it would be fetched again (on FUSE or NFS a round trip). */
	if (map->for_lseek && !map->pages_are_storage && got >= SM_LSEEK_DROP_MIN &&
	    all_zero(map->buf.data, (size_t)got))
		drop = true;
	if (drop)
		sm_pagecache_drop(map, off, want);
	map->buf.off = off;
	map->buf.len = (size_t)got;
	map->buf.asked = (size_t)want;
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

		if (b->valid && from >= b->off && to > b->off + (int64_t)b->len &&
		    to <= b->off + (int64_t)b->asked) {
			/* The read ended before this block did: data, and so
			 * is the rest, which no read returned either. */
			if (first)
				kind = false;
			if (!kind)
				*run_end = hi;
			break;
		}
		if (!b->valid || from < b->off || to > b->off + (int64_t)b->len) {
			/* Stop at the buffer's end rather than read again: the
			 * caller merges runs, and one read per call bounds the
			 * time a call takes. */
			if (!first)
				break;
			int64_t stop = hi;
			int r;

			if (map->pages_are_storage) {
				/* Read no block without a page: reading would
				 * store one.  Those are zeroes, found unread. */
				r = sm_pagecache_extent(map, block, hi,
							(int64_t)readbuf_size(map), &stop);
				if (r == -ENOMEM)
					return r;
				if (r == 1) {
					*zero = true;
					*run_end = stop;
					return 0;
				}
				/* A page, or no word from the page cache (which
				 * answered at open): data, unread, under
				 * SPARSE_MAP_NO_READ or where the cache is silent. */
				if (r < 0 || (map->flags & SPARSE_MAP_NO_READ)) {
					*zero = false;
					*run_end = r < 0 ? hi : stop;
					return 0;
				}
			}
			r = readbuf_load(map, block, stop);
			if (r < 0)
				return r;
			/* Again, with what the read returned: it may have
			 * ended before this block did. */
			continue;
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
