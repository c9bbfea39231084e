/* SPDX-License-Identifier: MIT */
/*
 * FIEMAP: the Linux FS_IOC_FIEMAP ioctl, a batch of extents per call.
 *
 * FIEMAP describes where blocks are on disk, which is not quite what is
 * data.  The rules here keep it from ever calling data a hole:
 *  - every call asks FIEMAP_FLAG_SYNC, so dirty and delayed-allocation data
 *    reaches its extents first (the 2011 cp bug was mapping without it);
 *  - only an extent that is UNWRITTEN and nothing else odd is a hole; one
 *    flagged DELALLOC, UNKNOWN, ENCODED, INLINE, TAIL, ... is data;
 *  - a gap is a hole only between two extents of one answer, or after the
 *    last extent of an answer that was not cut short by a full array;
 *  - a complete answer out of order is sorted (a full one is an error:
 *    its gaps may be extents left out), and overlapping extents are merged
 *    into one run that is data if any of them is.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <linux/fiemap.h>

#include "sparse-map-private.h"

#define SM_FIEMAP_BATCH 512

/* The extent flags that still let an unwritten extent be called a hole. */
#define SM_HOLE_SAFE_FLAGS (FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN | \
			    FIEMAP_EXTENT_MERGED | FIEMAP_EXTENT_SHARED)

struct fiemap_run {
	int64_t start;
	int64_t end;
	bool unwritten;
};

struct fiemap_state {
	int64_t batch_start;	/* the batch describes [batch_start, batch_end) */
	int64_t batch_end;
	bool valid;
	unsigned int nruns;
	unsigned int cursor;	/* runs before it end at or before the last pos */
	struct fiemap_run runs[SM_FIEMAP_BATCH];
	struct fiemap *fm;	/* the ioctl's buffer, allocated right after */
};

#define SM_FIEMAP_BUFSIZE \
	(sizeof(struct fiemap) + SM_FIEMAP_BATCH * sizeof(struct fiemap_extent))

/* >= 0 if FIEMAP answers for this file: 1 if it sees an extent, 0 if none. */
static int fiemap_usable(struct sparse_map *map)
{
	/* Ask for one extent rather than a count: counting makes the kernel
	 * walk every extent of the file, which costs as much as the map. */
	union {
		struct fiemap fm;	/* fm_extents[0] lies in the bytes below */
		unsigned char bytes[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} q;
	int r;

	memset(&q, 0, sizeof(q));
	q.fm.fm_start = 0;
	q.fm.fm_length = FIEMAP_MAX_OFFSET;
	q.fm.fm_extent_count = 1;
	r = sm_sys_ioctl(map->fd, FS_IOC_FIEMAP, &q.fm);
	if (sm_sys_unsupported(r))
		return -EOPNOTSUPP;
	if (r < 0)
		return r;
	return q.fm.fm_mapped_extents > 0;
}

static int cmp_extent(const void *a, const void *b)
{
	const struct fiemap_extent *x = a, *y = b;

	return x->fe_logical < y->fe_logical ? -1 : x->fe_logical > y->fe_logical;
}

/* Turn the kernel's extents into sorted, disjoint runs inside [from, to). */
static void build_runs(struct fiemap_state *st, int64_t from, int64_t to)
{
	struct fiemap_extent *ext = st->fm->fm_extents;
	unsigned int n = st->fm->fm_mapped_extents;
	unsigned int nruns = 0;

	for (unsigned int i = 1; i < n; i++) {
		if (ext[i].fe_logical < ext[i - 1].fe_logical) {
			qsort(ext, n, sizeof(*ext), cmp_extent);
			break;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		uint64_t lo = ext[i].fe_logical;
		uint64_t len = ext[i].fe_length;
		int64_t start, end;
		bool unwritten;

		if (lo >= (uint64_t)to || len == 0)
			continue;
		start = (int64_t)lo;
		end = len > (uint64_t)(to - start) ? to : start + (int64_t)len;
		if (end <= from)
			continue;
		if (start < from)
			start = from;
		unwritten = (ext[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) &&
			    !(ext[i].fe_flags & ~(uint32_t)SM_HOLE_SAFE_FLAGS);

		if (nruns > 0 && start < st->runs[nruns - 1].end) {
			struct fiemap_run *prev = &st->runs[nruns - 1];

			if (end > prev->end)
				prev->end = end;
			prev->unwritten = prev->unwritten && unwritten;
			continue;
		}
		st->runs[nruns++] = (struct fiemap_run){ start, end, unwritten };
	}
	st->nruns = nruns;
}

static bool in_order(const struct fiemap *fm)
{
	for (unsigned int i = 1; i < fm->fm_mapped_extents; i++)
		if (fm->fm_extents[i].fe_logical < fm->fm_extents[i - 1].fe_logical)
			return false;
	return true;
}

static int fetch(struct sparse_map *map, struct fiemap_state *st, int64_t pos)
{
	const struct fiemap_extent *ext = st->fm->fm_extents;
	unsigned int n;
	bool sorted, last;
	int r;

	st->valid = false;
	memset(st->fm, 0, sizeof(*st->fm));
	st->fm->fm_start = (uint64_t)pos;
	st->fm->fm_length = (uint64_t)(map->size - pos);
	st->fm->fm_flags = FIEMAP_FLAG_SYNC;
	st->fm->fm_extent_count = SM_FIEMAP_BATCH;
	r = sm_sys_ioctl(map->fd, FS_IOC_FIEMAP, st->fm);
	if (r < 0)
		return r;
	n = st->fm->fm_mapped_extents;
	if (n > SM_FIEMAP_BATCH)
		return -EIO;
	sorted = in_order(st->fm);
	/* A full array out of order may have left any extent out, so none of
	 * its gaps can be believed; the kernel never answers so. */
	if (n == SM_FIEMAP_BATCH && !sorted)
		return -EIO;
	/* LAST counts only where the kernel puts it: on its final extent. */
	last = n > 0 && sorted && (ext[n - 1].fe_flags & FIEMAP_EXTENT_LAST);

	build_runs(st, pos, map->size);
	st->batch_start = pos;
	st->cursor = 0;
	if (n < SM_FIEMAP_BATCH || last) {
		/* The kernel said all it had to say about [pos, size). */
		st->batch_end = map->size;
	} else {
		/* A full array: past its last extent nothing is known yet. */
		st->batch_end = st->nruns ? st->runs[st->nruns - 1].end : pos;
		if (st->batch_end <= pos)
			return -EIO;	/* a full answer that does not reach pos */
	}
	st->valid = true;
	return 0;
}

static int fiemap_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	struct fiemap_state *st = map->backend_state;
	const struct fiemap_run *run;

	if (!st->valid || pos < st->batch_start || pos >= st->batch_end) {
		int r = fetch(map, st, pos);
		if (r < 0)
			return r;
	}
	while (st->cursor < st->nruns && st->runs[st->cursor].end <= pos)
		st->cursor++;

	piece->flags = 0;
	if (st->cursor == st->nruns) {
		piece->kind = SPARSE_MAP_HOLE;
		piece->end = st->batch_end;
		return 0;
	}
	run = &st->runs[st->cursor];
	if (run->start > pos) {
		piece->kind = SPARSE_MAP_HOLE;
		piece->end = run->start;
	} else if (run->unwritten) {
		piece->kind = SPARSE_MAP_HOLE;
		piece->flags = SPARSE_MAP_RANGE_UNWRITTEN;
		piece->end = run->end;
	} else {
		piece->kind = SPARSE_MAP_DATA;
		piece->end = run->end;
	}
	return 0;
}

static int fiemap_init(struct sparse_map *map)
{
	/* One allocation: the state, then the ioctl's buffer. */
	struct fiemap_state *st = sm_sys_malloc(sizeof(*st) + SM_FIEMAP_BUFSIZE);

	if (!st)
		return -ENOMEM;
	st->fm = (struct fiemap *)(st + 1);
	st->valid = false;
	map->backend_state = st;
	return 0;
}

static void fiemap_reset(struct sparse_map *map)
{
	struct fiemap_state *st = map->backend_state;

	st->valid = false;
}

static void fiemap_fini(struct sparse_map *map)
{
	sm_sys_free(map->backend_state);
	map->backend_state = NULL;
}

const struct sm_backend sm_backend_fiemap = {
	.id = SPARSE_MAP_BACKEND_FIEMAP,
	.name = "fiemap",
	.reads_data = false,
	.usable = fiemap_usable,
	.init = fiemap_init,
	.next = fiemap_next,
	.reset = fiemap_reset,
	.fini = fiemap_fini,
};
