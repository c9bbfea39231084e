/* SPDX-License-Identifier: MIT */
/*
 * NONE: no source of hole information, so every byte is data.  AUTO ends
 * here under SPARSE_MAP_NO_READ where only reading could find holes, and
 * when every source it tried failed part way on a descriptor it may not
 * read.  It makes no system call.
 */
#include "config.h"

#include "sparse-map-private.h"

static int none_usable(struct sparse_map *map)
{
	(void)map;
	return 0;
}

static int none_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	(void)pos;
	piece->end = map->size;
	piece->kind = SPARSE_MAP_DATA;
	piece->flags = 0;
	return 0;
}

static int none_init(struct sparse_map *map)
{
	(void)map;
	return 0;
}

static void none_reset(struct sparse_map *map)
{
	(void)map;
}

const struct sm_backend sm_backend_none = {
	.id = SPARSE_MAP_BACKEND_NONE,
	.name = "none",
	.reads_data = false,
	.usable = none_usable,
	.init = none_init,
	.next = none_next,
	.reset = none_reset,
	.fini = none_reset,
};
