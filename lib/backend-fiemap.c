/* SPDX-License-Identifier: MIT */
/*
 * FIEMAP: the Linux FS_IOC_FIEMAP ioctl, a batch of extents per call.
 *
 * FIEMAP describes where blocks are on disk, which is not quite what is
 * data.  The rules here keep it from ever calling data a hole:
 *  - only an extent that is UNWRITTEN and nothing else odd is a hole; one
 *    flagged DELALLOC, UNKNOWN, ENCODED, INLINE, TAIL, ... is data;
 *  - a gap is a hole only between two extents of one answer, or after the
 *    last extent of an answer that was not cut short by a full array;
 *  - a complete answer out of order is sorted (a full one is an error:
 *    its gaps may be extents left out), and overlapping extents are merged
 *    into one run that is data if any of them is.
 * Those rules hold only for extents that written data has reached.  Two
 * modes make sure of that:
 *  - synced (SPARSE_MAP_BACKEND_FIEMAP forced): every call asks
 *    FIEMAP_FLAG_SYNC, which writes dirty data back first (the 2011 cp bug
 *    was mapping without it);
 *  - unsynced (AUTO, on the file systems probe.c names): nothing is
 *    flushed.  A written extent is data.  SEEK_DATA/SEEK_HOLE, which see
 *    the page cache, decide every UNWRITTEN, DELALLOC or UNKNOWN extent.
 *    A gap is a hole only if cachestat(2), asked before the FIEMAP that
 *    described it, found no page from there to EOF dirty or under
 *    writeback; else SEEK decides it too.  See clean_from() for why.
 *    Where clean pages prove nothing (Btrfs), SEEK decides every gap, and
 *    cachestat is never asked; but on a Btrfs that answers FIEMAP with
 *    the range locked (SM_GAPS_LOCKED, probe.c says why and where), the
 *    answer is as good as SEEK's: a gap is a hole, an UNWRITTEN extent
 *    too, and a DELALLOC or UNKNOWN one is data, dirty or in flight.
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

/* What a run is; where runs overlap, the later kind wins. */
enum run_kind {
	RUN_UNWRITTEN,		/* preallocated: a hole (synced) */
	RUN_UNSURE_UNWRITTEN,	/* preallocated, unsynced: SEEK decides; its holes are UNWRITTEN */
	RUN_UNSURE,		/* unsynced DELALLOC, UNKNOWN: SEEK decides */
	RUN_DATA,
};

struct fiemap_run {
	int64_t start;
	int64_t end;
	enum run_kind kind;
};

struct fiemap_state {
	int64_t batch_start;	/* the batch describes [batch_start, batch_end) */
	int64_t batch_end;
	bool valid;
	unsigned int nruns;
	unsigned int cursor;	/* runs before it end at or before the last pos */
	bool unsynced;		/* no FIEMAP_FLAG_SYNC: see the top of this file */
	enum sm_fiemap_gaps gaps;	/* unsynced: what proves a gap a hole */
	int64_t clean_from;	/* cachestat found [clean_from, EOF) clean; -1: not asked */
	bool clean;
	int64_t seek_data_at;	/* sm_seek_piece()'s record */
	struct fiemap_run runs[SM_FIEMAP_BATCH];
	struct fiemap *fm;	/* the ioctl's buffer, allocated right after */
};

#define SM_FIEMAP_BUFSIZE \
	(sizeof(struct fiemap) + SM_FIEMAP_BATCH * sizeof(struct fiemap_extent))

/* "Not here": the usual answers, and EBADR, Linux's answer to request flags
 * the file system does not know. */
static bool fiemap_unsupported(int r)
{
	return sm_sys_unsupported(r) || r == -EBADR;
}

static int cmp_extent(const void *a, const void *b)
{
	const struct fiemap_extent *x = a, *y = b;

	return x->fe_logical < y->fe_logical ? -1 : x->fe_logical > y->fe_logical;
}

static enum run_kind run_kind(const struct fiemap_state *st, uint32_t flags)
{
	bool unwritten = (flags & FIEMAP_EXTENT_UNWRITTEN) &&
			 !(flags & ~(uint32_t)SM_HOLE_SAFE_FLAGS);

	/* Synced, or Btrfs's locked answer: preallocated space without
	 * dirty or in-flight data in it, which is DELALLOC there. */
	if (!st->unsynced || st->gaps == SM_GAPS_LOCKED)
		return unwritten ? RUN_UNWRITTEN : RUN_DATA;
	/* Unsynced, preallocated space may hold dirty pages, and delayed
	 * allocation may be dirty data or only a reservation (XFS reserves
	 * past what was written). */
	if (unwritten)
		return RUN_UNSURE_UNWRITTEN;
	if (flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN))
		return RUN_UNSURE;
	return RUN_DATA;
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
		enum run_kind kind;

		if (lo >= (uint64_t)to || len == 0)
			continue;
		start = (int64_t)lo;
		end = len > (uint64_t)(to - start) ? to : start + (int64_t)len;
		if (end <= from)
			continue;
		if (start < from)
			start = from;
		kind = run_kind(st, ext[i].fe_flags);

		if (nruns > 0 && start < st->runs[nruns - 1].end) {
			struct fiemap_run *prev = &st->runs[nruns - 1];

			if (end > prev->end)
				prev->end = end;
			if (kind > prev->kind)
				prev->kind = kind;
			continue;
		}
		st->runs[nruns++] = (struct fiemap_run){ start, end, kind };
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

/* One FIEMAP call from pos: the batch of runs it describes. */
static int ask_fiemap(struct sparse_map *map, struct fiemap_state *st, int64_t pos)
{
	const struct fiemap_extent *ext = st->fm->fm_extents;
	unsigned int n;
	bool sorted, last;
	int r;

	st->valid = false;
	memset(st->fm, 0, sizeof(*st->fm));
	st->fm->fm_start = (uint64_t)pos;
	st->fm->fm_length = (uint64_t)(map->size - pos);
	st->fm->fm_flags = st->unsynced ? 0 : FIEMAP_FLAG_SYNC;
	st->fm->fm_extent_count = SM_FIEMAP_BATCH;
	r = sm_sys_ioctl(map->fd, FS_IOC_FIEMAP, st->fm);
	if (r < 0)
		return r;
	n = st->fm->fm_mapped_extents;
	if (n > SM_FIEMAP_BATCH)
		return -EIO;
	sorted = in_order(st->fm);
	/* A full array out of order may have left any extent out, so none of
	 * its gaps can be believed.  Btrfs answers so (Linux 6.18): after
	 * each 128 extents it searches again, and lists a preallocated extent
	 * that holds dirty pages once more from its start.  Under AUTO, SEEK
	 * then goes on from pos (sm_fall_back()), flushing nothing. */
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

/* Whether [pos, batch_end) has a gap between (or after) its runs. */
static bool batch_has_gap(const struct fiemap_state *st, int64_t pos)
{
	int64_t at = pos;

	for (unsigned int i = 0; i < st->nruns; i++) {
		if (st->runs[i].start > at)
			return true;
		at = st->runs[i].end;
	}
	return at < st->batch_end;
}

/*
 * Unsynced: whether cachestat finds no page of [pos, EOF) dirty or under
 * writeback.  It must be asked before the FIEMAP whose gaps it vouches
 * for, never after.  Bytes written before it sit in pages that are dirty,
 * under writeback (then SEEK decides every gap), or written back; and
 * ext4 and XFS end a page's writeback only once its blocks are in the
 * file's extents (unwritten extents converted, XFS's copy-on-write
 * remapped), so every FIEMAP that follows sees them.  Asked the other way
 * round, a page dirty when FIEMAP showed a gap could be written back
 * before cachestat looked, and its data be called a hole.  A buffered
 * write into a hole is a DELALLOC extent from the moment write() returns,
 * so even bytes written after this call are seen in gaps, but for one
 * case: XFS writes next to a block being copied on write into its
 * copy-on-write fork, which FIEMAP does not show.
 */
static bool clean_from(struct sparse_map *map, int64_t pos)
{
	struct sm_cachestat cs;
	int r = sm_sys_cachestat(map->fd, pos, map->size - pos, &cs);

	if (r < 0) {
		sm_debug(map, "fiemap: cachestat from %lld: %s: SEEK decides the gaps",
			 (long long)pos, strerror(-r));
		return false;
	}
	sm_debug(map, "fiemap: cachestat from %lld: %lld pages dirty, %lld under writeback%s",
		 (long long)pos, (long long)cs.nr_dirty, (long long)cs.nr_writeback,
		 cs.nr_dirty || cs.nr_writeback ? ": SEEK decides the gaps" : "");
	return cs.nr_dirty == 0 && cs.nr_writeback == 0;
}

/*
 * The batch from pos.  Unsynced, the first batch with a gap asks
 * cachestat, once a pass, and then FIEMAP again: cachestat's word covers
 * only answers asked after it.  A dense file never asks it.  A file with
 * fewer blocks than bytes (blocks_short) most likely has a gap: there
 * cachestat is asked first, and one FIEMAP after it is the answer.
 */
static int fetch(struct sparse_map *map, struct fiemap_state *st, int64_t pos)
{
	bool vouch = st->unsynced && st->gaps == SM_GAPS_CLEAN_PAGES &&
		     (st->clean_from < 0 || pos < st->clean_from);
	int r;

	if (vouch && map->blocks_short) {
		st->clean = clean_from(map, pos);
		st->clean_from = pos;
		return ask_fiemap(map, st, pos);
	}
	r = ask_fiemap(map, st, pos);
	if (r < 0 || !vouch || !batch_has_gap(st, pos))
		return r;
	st->clean = clean_from(map, pos);
	st->clean_from = pos;
	return st->clean ? ask_fiemap(map, st, pos) : 0;
}

static int fiemap_init(struct sparse_map *map);

/*
 * >= 0 if FIEMAP answers for this file: 1 if it sees an extent, 0 if none.
 * Unsynced, from the start of the map, the question is the first batch
 * itself, kept for the map (map.c then leaves the state as it is), and 2
 * says that written extents cover every byte.  Else one extent is asked for.
 */
static int fiemap_usable(struct sparse_map *map)
{
	/* Ask for one extent rather than a count: counting makes the kernel
	 * walk every extent of the file, which costs as much as the map. */
	union {
		struct fiemap fm;	/* fm_extents[0] lies in the bytes below */
		unsigned char bytes[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} q;
	int r;

	if (map->fiemap_unsynced && map->pos == 0) {
		struct fiemap_state *st;

		r = map->backend_state ? 0 : fiemap_init(map);
		if (r < 0)
			return r;
		st = map->backend_state;
		r = fetch(map, st, 0);
		if (fiemap_unsupported(r))
			return -EOPNOTSUPP;
		if (r < 0)
			return r;
		if (st->batch_end == map->size && st->nruns == 1 && st->runs[0].start == 0 &&
		    st->runs[0].end == map->size && st->runs[0].kind == RUN_DATA)
			return 2;
		return st->fm->fm_mapped_extents > 0;
	}
	memset(&q, 0, sizeof(q));
	q.fm.fm_start = 0;
	q.fm.fm_length = FIEMAP_MAX_OFFSET;
	q.fm.fm_extent_count = 1;
	r = sm_sys_ioctl(map->fd, FS_IOC_FIEMAP, &q.fm);
	if (fiemap_unsupported(r))
		return -EOPNOTSUPP;
	if (r < 0)
		return r;
	return q.fm.fm_mapped_extents > 0;
}

/*
 * Unsynced: what SEEK_DATA/SEEK_HOLE say of the bytes of [pos, end) that
 * no written extent covers.  Where SEEK is not built, or has no answer
 * here after all (ext4 with inline_data fails SEEK_HOLE with ENOENT), they
 * are data: asking FIEMAP with its sync instead would flush what AUTO
 * promises to leave dirty.
 */
static int ask_seek(struct sparse_map *map, struct fiemap_state *st, int64_t pos, int64_t end,
		    struct sm_piece *piece)
{
#ifdef SM_HAVE_SEEK
	int r = sm_seek_piece(map, &st->seek_data_at, pos, piece);

	if (r == 0) {
		if (piece->end > end)
			piece->end = end;
		return 0;
	}
	if (!sm_sys_no_answer(r))
		return r;
	sm_debug(map, "fiemap: SEEK from %lld fails (%s): data up to %lld", (long long)pos,
		 strerror(-r), (long long)end);
#else
	(void)map, (void)st, (void)pos;
#endif
	piece->kind = SPARSE_MAP_DATA;
	piece->flags = 0;
	piece->end = end;
	return 0;
}

static int fiemap_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	struct fiemap_state *st = map->backend_state;
	const struct fiemap_run *run;
	int r;

	if (!st->valid || pos < st->batch_start || pos >= st->batch_end) {
		r = fetch(map, st, pos);
		if (r < 0)
			return r;
	}
	while (st->cursor < st->nruns && st->runs[st->cursor].end <= pos)
		st->cursor++;

	piece->flags = 0;
	run = st->cursor < st->nruns ? &st->runs[st->cursor] : NULL;
	if (!run || run->start > pos) {
		int64_t end = run ? run->start : st->batch_end;

		if (st->unsynced && st->gaps != SM_GAPS_LOCKED && !st->clean)
			return ask_seek(map, st, pos, end, piece);
		piece->kind = SPARSE_MAP_HOLE;
		piece->end = end;
		return 0;
	}
	switch (run->kind) {
	case RUN_UNSURE_UNWRITTEN:
		r = ask_seek(map, st, pos, run->end, piece);
		if (r == 0 && piece->kind == SPARSE_MAP_HOLE)
			piece->flags = SPARSE_MAP_RANGE_UNWRITTEN;
		return r;
	case RUN_UNSURE:
		return ask_seek(map, st, pos, run->end, piece);
	case RUN_UNWRITTEN:
		piece->kind = SPARSE_MAP_HOLE;
		piece->flags = SPARSE_MAP_RANGE_UNWRITTEN;
		break;
	case RUN_DATA:
		piece->kind = SPARSE_MAP_DATA;
		break;
	}
	piece->end = run->end;
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
	st->unsynced = map->fiemap_unsynced;
	st->gaps = map->fiemap_gaps;
	st->clean_from = -1;
	st->clean = false;
	st->seek_data_at = -1;
	map->backend_state = st;
	return 0;
}

static void fiemap_reset(struct sparse_map *map)
{
	struct fiemap_state *st = map->backend_state;

	/* sparse_map_seek() asks afresh.  So does the probe, once it has
	 * learnt the file system after the first batch, where cachestat must
	 * come before the answer it vouches for; but Btrfs's locked answer is
	 * good whenever it was asked: it is read again by the new rule. */
	bool relearnt = st->gaps != map->fiemap_gaps;

	st->gaps = map->fiemap_gaps;
	if (relearnt && st->valid && st->unsynced && st->gaps == SM_GAPS_LOCKED) {
		build_runs(st, st->batch_start, map->size);
		st->cursor = 0;
	} else {
		st->valid = false;
	}
	st->clean_from = -1;
	st->clean = false;
	st->seek_data_at = -1;
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
