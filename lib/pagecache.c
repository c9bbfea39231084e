/* SPDX-License-Identifier: MIT */
/*
 * What the page cache knows about a file, asked with cachestat(2) so that
 * no page is touched.  Two uses, both for the readers in zeroes.c:
 *
 *  - On ramfs the page cache is the storage: a page that is not there is a
 *    hole, and reading it would store a page of zeroes (the file would
 *    grow dense and pin memory).  So there, blocks without a page are
 *    holes found without reading, and only blocks with pages are read.
 *    This is believed only after one check per map: the pages counted
 *    over the whole file must be exactly what st_blocks says is stored.
 *    cachestat either answers truly or fails (EPERM for a caller that may
 *    neither write nor own the file).  Before Linux 6.5 (ENOSYS) mincore
 *    of a mapping never touched counts instead; for such a caller it says
 *    every page is there, which the check does not believe.  Then the
 *    probe takes SEEK's all-data answer (probe.c).
 *
 *  - Elsewhere, a chunk that was not all in the page cache before it was
 *    read is dropped again after (POSIX_FADV_DONTNEED), so a scan of a
 *    file larger than memory does not push the caller's cache out.
 *    Chunks that were cached whole stay cached, unless our own readahead
 *    cached them: what follows a dropped chunk is dropped too.  A walk of
 *    sparse_map_lseek() drops long reads that were all zeroes, cached
 *    before or not, and keeps the rest: its caller reads next the data it
 *    found, and never the holes (zeroes.c).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sparse-map-private.h"

/* Whether the file lives on ramfs, whose page cache is its storage. */
bool sm_pagecache_is_ramfs(struct sparse_map *map)
{
	/* fs_type is in Linux's numbers, and 0 on other systems. */
	return !map->is_blockdev && sm_map_fs_type(map) == 0x858458f6;	/* RAMFS_MAGIC */
}

static int64_t present(struct sparse_map *map, int64_t off, int64_t len);

/* Sets pages_are_storage: whether a block without a page is a hole here,
 * checked against st_blocks. */
static int check(struct sparse_map *map)
{
	struct stat st;
	long page = sm_sys_page_size();
	const char *how;
	int64_t n, blocks;
	int r;

	map->pages_are_storage = false;
	if (!sm_pagecache_is_ramfs(map))
		return 0;
	r = sm_map_access(map);
	if (r < 0)
		return r;
	if (!map->readable || map->st_size == 0 || page <= 0 || map->blksize != page)
		return 0;
	n = present(map, 0, map->st_size);
	how = map->use_mincore ? "mincore" : "cachestat";
	if (n < 0) {
		/* EPERM: a caller who may neither write nor own the file. */
		sm_debug(map, "ramfs, but %s cannot say which pages exist (%s)", how,
			 strerror((int)-n));
		return 0;
	}
	r = sm_sys_fstat(map->fd, &st);
	if (r < 0)
		return r;
	blocks = sm_sys_st_blocks(&st);
	if (n * (page / 512) != blocks) {
		sm_debug(map, "ramfs, but %s counts %lld pages where st_blocks says %lld: "
			 "not trusted", how, (long long)n, (long long)blocks);
		return 0;
	}
	sm_debug(map, "ramfs: its %lld pages (%s) are the storage; a block without one is a hole",
		 (long long)n, how);
	map->pages_are_storage = true;
	return 0;
}

int sm_pagecache_check(struct sparse_map *map)
{
	int r;

	/* Asked by a backend SPARSE_MAP_BACKEND names and again by AUTO's
	 * probe where that backend gives way: a ramfs file's pages are
	 * counted once a map. */
	if (map->pagecache_checked)
		return 0;
	r = check(map);
	map->pagecache_checked = r == 0;
	return r;
}

/* Pages of [off, off + len) in the page cache, or -errno. */
static int64_t cached(const struct sparse_map *map, int64_t off, int64_t len)
{
	struct sm_cachestat cs;
	int r = sm_sys_cachestat(map->fd, off, len, &cs);

	return r < 0 ? r : cs.nr_cache;
}

/* The same, for the ramfs questions: before Linux 6.5, which has no
 * cachestat, mincore(2) of an untouched mapping answers.  For a caller who
 * may neither write nor own the file mincore says every page is there
 * (Linux 5.0 and later) — false, yet only ever "data", and the st_blocks
 * check in sm_pagecache_check() does not believe it. */
static int64_t present(struct sparse_map *map, int64_t off, int64_t len)
{
	if (!map->use_mincore) {
		int64_t n = cached(map, off, len);

		if (n != -ENOSYS)
			return n;
		map->use_mincore = true;
	}
	return sm_sys_resident_pages(map->fd, off, len);
}

#define SM_PRESENT_WINDOW (4 << 20)

/*
 * From pos, whose first known bytes (a block at least) have pages (has =
 * true) or have none: the length of the run of blocks alike, up to lim
 * (> 0, whole blocks or the rest up to hi), or -errno.  Galloping: lengths double until one is no longer
 * all alike, then halve between the two, so a run of k blocks costs about
 * 2 log2(k) cachestat calls however far lim is: a loop of short data runs
 * and holes pays for what it meets, not for the window it may look at.
 */
static int64_t run_of(struct sparse_map *map, int64_t pos, int64_t lim, int64_t known, bool has)
{
	int64_t bs = map->blksize, good = known, bad = 0, n;

	if (lim <= known)
		return lim;
	while (!bad) {
		int64_t next = lim - good > good ? 2 * good : lim;

		n = present(map, pos, next);
		if (n < 0)
			return n;
		if (has ? n * bs >= next : n == 0) {
			good = next;
			if (good == lim)
				return good;
		} else {
			bad = next;
		}
	}
	while (bad - good > bs) {
		int64_t mid = good + (bad - good + bs - 1) / bs / 2 * bs;

		n = present(map, pos, mid);
		if (n < 0)
			return n;
		if (has ? n * bs >= mid : n == 0)
			good = mid;
		else
			bad = mid;
	}
	return good;
}

/*
 * Where pages_are_storage, from block-aligned pos (< hi): 1 if its block has
 * no page, with *end the end of the run of such blocks; 0 if it has one,
 * with *end where reading must stop, by at most max bytes, before the
 * first block without.  One call where a window has every page.
 */
int sm_pagecache_extent(struct sparse_map *map, int64_t pos, int64_t hi, int64_t max,
			int64_t *end)
{
	int64_t bs = map->blksize;
	int64_t len = hi - pos < max ? hi - pos : max;
	int64_t win = hi - pos < SM_PRESENT_WINDOW ? hi - pos : SM_PRESENT_WINDOW;
	int64_t n, run, known;

	if (pos < map->present_to) {
		/* Seen with every page a moment ago. */
		*end = map->present_to - pos < len ? map->present_to : pos + len;
		return 0;
	}
	if (pos >= map->absent_from && pos < map->absent_to) {
		/* Seen without a page a moment ago (a SEEK_HOLE that ends in
		 * this hole, then a SEEK_DATA from it, ask about it twice). */
		*end = map->absent_to < hi ? map->absent_to : hi;
		return 1;
	}
	/* A window of several chunks first, unless the last run found was
	 * short (a fragmented file, where the window never comes out whole):
	 * a dense file then costs one cachestat per window, not one per
	 * chunk, and a long hole a few. */
	if (map->runs_short) {
		n = present(map, pos, bs);
		known = bs;
	} else {
		n = present(map, pos, win);
		known = win;
	}
	if (n < 0)
		return (int)n;
	if (!map->runs_short && n * bs >= win) {
		map->present_to = pos + win;
		*end = pos + len;
		return 0;
	}
	if (n > 0 && known > bs) {
		n = present(map, pos, bs);
		if (n < 0)
			return (int)n;
		known = bs;
	}
	if (n == 0) {
		/* No page in [pos, pos + known): how far none goes. */
		run = run_of(map, pos, hi - pos, known, false);
		if (run < 0)
			return (int)run;
		*end = pos + run;
		map->absent_from = pos;
		map->absent_to = pos + run;
		map->runs_short = run < win;
		return 1;
	}
	/* pos's block has its page; read up to the first block without. */
	run = run_of(map, pos, len, bs, true);
	if (run < 0)
		return (int)run;
	*end = pos + run;
	map->runs_short = run < len;
	return 0;
}

/*
 * Before reading [off, off + len): whether the pages the read brings in
 * may be dropped after.  Yes if some of it is not cached; and yes where it
 * goes straight on from a chunk dropped before, since the kernel's
 * readahead for that read is what cached this one.  A chunk the cache held
 * whole, and not because of us, stays cached.
 */
bool sm_pagecache_droppable(struct sparse_map *map, int64_t off, int64_t len)
{
	long page = sm_sys_page_size();
	int64_t win = map->size - off < SM_PRESENT_WINDOW ? map->size - off : SM_PRESENT_WINDOW;
	int64_t n;

	if (map->pages_are_storage || map->no_cachestat || page <= 0)
		return false;
	if (off == map->dropped_to && off > 0)
		return true;
	if (off >= map->cached_from && off + len <= map->cached_to)
		return false;
	/* One question for a window of several chunks where it is all
	 * cached, as a file read again usually is. */
	if (win < len)
		win = len;
	n = cached(map, off, win);
	if (n >= 0 && n * page >= win) {
		map->cached_from = off;
		map->cached_to = off + win;
		return false;
	}
	if (n > 0)
		n = cached(map, off, len);
	if (n < 0)
		map->no_cachestat = true;	/* ENOSYS, EPERM: not for this map */
	return n >= 0 && n < (len + page - 1) / page;
}

/*
 * After reading [off, off + len), which was droppable: drop it, unless it
 * holds dirty pages (dropping those would start their writeback, a flush
 * nobody asked for).  The kernel drops only folios that lie wholly inside
 * the range, and readahead builds folios larger than a chunk, so the range
 * reaches back SM_DROP_BEHIND into the run of chunks dropped before.
 */
#define SM_DROP_BEHIND (8 << 20)

void sm_pagecache_drop(struct sparse_map *map, int64_t off, int64_t len)
{
	struct sm_cachestat cs;
	int64_t lo = off;

	if (off == map->dropped_to && off > 0)
		lo = off - map->drop_from > SM_DROP_BEHIND ? off - SM_DROP_BEHIND : map->drop_from;
	else
		map->drop_from = off;
	if (sm_sys_cachestat(map->fd, lo, off + len - lo, &cs) == 0 && cs.nr_dirty == 0 &&
	    cs.nr_writeback == 0 && sm_sys_drop_cache(map->fd, lo, off + len - lo) == 0)
		map->dropped_to = off + len;
}
