/* SPDX-License-Identifier: MIT */
/*
 * RANGES: Windows' FSCTL_QUERY_ALLOCATED_RANGES, a batch of ranges per call
 * (sm_sys_allocated_ranges(), made by sys-windows.c).
 *
 * The call lists the ranges of a file that may hold data: everything
 * allocated, preallocated space too, which is therefore data here.  A file
 * without the sparse attribute answers with the whole range asked about.
 * When the answer does not fit, the call says so (ERROR_MORE_DATA) and the
 * caller asks again from the end of the last range it got.  So:
 *  - a gap is a hole only between two ranges of one answer, or after the
 *    last range of an answer that said it was complete and did not fill
 *    the array;
 *  - ranges out of order are sorted when the answer is complete, and an
 *    error when it is not (a gap could then be a range left out);
 *    overlapping or touching ranges are merged;
 *  - a range that is negative or runs past INT64_MAX, or a partial answer
 *    that ends at or before the offset asked about, is an error, never a
 *    hole; an empty range is left out;
 *  - a call that refuses answers that do not fit (ENOBUFS, as Samba's
 *    does) is not used: a file with many ranges could not be mapped.
 * The backend is built on every system, so that the tests can drive it
 * through the system-call seam; where the call does not exist, usable()
 * says -EOPNOTSUPP and AUTO never takes it.
 */
#include "config.h"

#include <errno.h>

#include "sparse-map-private.h"

#define SM_RANGES_BATCH 256

struct ranges_state {
	int64_t batch_start;	/* the batch describes [batch_start, batch_end) */
	int64_t batch_end;
	bool valid;
	size_t nruns;
	size_t cursor;		/* runs before it end at or before the last pos */
	/* What the call answered, then, in place, the sorted, disjoint data
	 * runs inside [batch_start, batch_end), as offset and length. */
	struct sm_alloc_range runs[SM_RANGES_BATCH];
};

static int64_t end_of(const struct sm_alloc_range *r)
{
	return r->offset + r->length;
}

static int ranges_usable(struct sparse_map *map)
{
	struct sm_alloc_range one;
	size_t n;
	int r;

	if (map->size == 0)
		return 0;
	r = sm_sys_allocated_ranges(map->fd, 0, map->size, &one, 1, &n);
	if (r >= 0)
		return 0;
	/* ENOBUFS: a call that fails where the answer does not fit, rather
	 * than say ERROR_MORE_DATA (Samba), cannot map a file in batches. */
	if (sm_sys_unsupported(r) || r == -ENOBUFS)
		return -EOPNOTSUPP;
	return r;
}

static void sort_runs(struct sm_alloc_range *a, size_t n)
{
	/* Insertion sort: answers come sorted, and a batch is small. */
	for (size_t i = 1; i < n; i++) {
		struct sm_alloc_range v = a[i];
		size_t j = i;

		for (; j > 0 && a[j - 1].offset > v.offset; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* One call from pos: the batch of runs it describes. */
static int ask(struct sparse_map *map, struct ranges_state *st, int64_t pos)
{
	struct sm_alloc_range *run = st->runs;
	int64_t reach = pos;	/* how far the answer goes */
	bool more, sorted = true;
	size_t n, k = 0;
	int r;

	st->valid = false;
	r = sm_sys_allocated_ranges(map->fd, pos, map->size - pos, run, SM_RANGES_BATCH, &n);
	if (r < 0)
		return r;
	/* A full array may have been cut short even if the call says not. */
	more = r == 1 || n == SM_RANGES_BATCH;
	for (size_t i = 0; i < n; i++) {
		if (run[i].offset < 0 || run[i].length < 0 ||
		    run[i].length > INT64_MAX - run[i].offset)
			return -EIO;
		if (i > 0 && run[i].offset < run[i - 1].offset)
			sorted = false;
		/* An empty range says nothing of where the answer ends. */
		if (run[i].length > 0 && end_of(&run[i]) > reach)
			reach = end_of(&run[i]);
	}
	if (more && (!sorted || reach <= pos))
		return -EIO;	/* gaps that may be ranges left out; or no progress */
	if (!sorted)
		sort_runs(run, n);

	/* Cut to [pos, size), merge, and keep in place (k <= i). */
	for (size_t i = 0; i < n; i++) {
		int64_t start = run[i].offset, end = end_of(&run[i]);

		if (start < pos)
			start = pos;
		if (end > map->size)
			end = map->size;
		if (end <= start)
			continue;
		if (k > 0 && start <= end_of(&run[k - 1])) {
			if (end > end_of(&run[k - 1]))
				run[k - 1].length = end - run[k - 1].offset;
			continue;
		}
		run[k].offset = start;
		run[k].length = end - start;
		k++;
	}
	st->nruns = k;
	st->cursor = 0;
	st->batch_start = pos;
	st->batch_end = more && reach < map->size ? reach : map->size;
	st->valid = true;
	return 0;
}

static int ranges_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	struct ranges_state *st = map->backend_state;
	const struct sm_alloc_range *run;

	if (!st->valid || pos < st->batch_start || pos >= st->batch_end) {
		int r = ask(map, st, pos);

		if (r < 0)
			return r;
	}
	while (st->cursor < st->nruns && end_of(&st->runs[st->cursor]) <= pos)
		st->cursor++;
	run = st->cursor < st->nruns ? &st->runs[st->cursor] : NULL;
	piece->flags = 0;
	if (!run || run->offset > pos) {
		piece->kind = SPARSE_MAP_HOLE;
		piece->end = run ? run->offset : st->batch_end;
	} else {
		piece->kind = SPARSE_MAP_DATA;
		piece->end = end_of(run);
	}
	return 0;
}

static int ranges_init(struct sparse_map *map)
{
	struct ranges_state *st = sm_sys_malloc(sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->valid = false;
	map->backend_state = st;
	return 0;
}

static void ranges_reset(struct sparse_map *map)
{
	struct ranges_state *st = map->backend_state;

	st->valid = false;
}

static void ranges_fini(struct sparse_map *map)
{
	sm_sys_free(map->backend_state);
	map->backend_state = NULL;
}

const struct sm_backend sm_backend_ranges = {
	.id = SPARSE_MAP_BACKEND_RANGES,
	.name = "ranges",
	.reads_data = false,
	.usable = ranges_usable,
	.init = ranges_init,
	.next = ranges_next,
	.reset = ranges_reset,
	.fini = ranges_fini,
};
