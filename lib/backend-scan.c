/* SPDX-License-Identifier: MIT */
/*
 * SCAN: read the file and call every whole, aligned, all-zero block a hole.
 * It trusts nothing but the bytes, so it serves any file it may read, and
 * it never moves the file offset (it reads with pread).
 */
#include "config.h"

#include "sparse-map-private.h"

static int scan_usable(struct sparse_map *map)
{
	(void)map;
	return 0;
}

static int scan_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	bool zero;
	int r = sm_zero_run(map, pos, 0, map->size, &zero, &piece->end);

	if (r < 0)
		return r;
	piece->kind = zero ? SPARSE_MAP_HOLE : SPARSE_MAP_DATA;
	piece->flags = 0;
	return 0;
}

static int scan_init(struct sparse_map *map)
{
	(void)map;
	return 0;
}

static void scan_reset(struct sparse_map *map)
{
	sm_readbuf_reset(map);
}

static void scan_fini(struct sparse_map *map)
{
	(void)map;
}

const struct sm_backend sm_backend_scan = {
	.id = SPARSE_MAP_BACKEND_SCAN,
	.name = "scan",
	.reads_data = true,
	.usable = scan_usable,
	.init = scan_init,
	.next = scan_next,
	.reset = scan_reset,
	.fini = scan_fini,
};
