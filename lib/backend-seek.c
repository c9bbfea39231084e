/* SPDX-License-Identifier: MIT */
/*
 * SEEK: lseek(2) SEEK_DATA and SEEK_HOLE.  Two system calls per data range:
 * the SEEK_DATA that ends a hole also says where the next data starts, and
 * that answer is kept so the data range needs only its SEEK_HOLE.
 *
 * Where the file system has no hole information the kernel answers "all
 * data, hole at EOF": true, if coarse, so this backend is safe everywhere
 * it runs; probe.c decides whether it is also useful.
 */
#include "config.h"

#include <errno.h>

#include "sparse-map-private.h"

struct seek_state {
	int64_t data_at;	/* where the last SEEK_DATA found data, or -1 */
	int64_t first_hole;	/* the probe's SEEK_HOLE(0), if data came first; else 0 */
};

/* Where SEEK's answers contradict each other or the file (a writer racing
 * the map, or a file system that answers wrongly): call the block at pos
 * data and go on.  That is never wrong, and it always moves forward. */
static int one_block_of_data(const struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	int64_t rest = map->blksize - pos % map->blksize;

	piece->end = pos > INT64_MAX - rest ? INT64_MAX : pos + rest;
	piece->kind = SPARSE_MAP_DATA;
	piece->flags = 0;
	return 0;
}

/* Whether off lies past the file's end as it is now: an answer there from
 * SEEK_DATA, or SEEK_HOLE's ENXIO before it, is true only of a file that
 * shrank meanwhile (a FUSE daemon may say either of any file). */
static bool past_eof_now(struct sparse_map *map, int64_t off)
{
	struct stat st;

	return sm_sys_fstat(map->fd, &st) == 0 && off >= (int64_t)st.st_size;
}

static int seek_usable(struct sparse_map *map)
{
	int64_t r;

	if (map->size == 0)
		return 0;
	r = sm_map_lseek(map, 0, SEEK_HOLE);
	map->probe_hole = r > 0 ? r : 0;
	if (r >= 0 || r == -ENXIO)	/* ENXIO: the file shrank to 0 meanwhile */
		return 0;
	if (sm_sys_unsupported((int)r))
		return -EOPNOTSUPP;
	return (int)r;
}

int sm_seek_piece(struct sparse_map *map, int64_t *data_at, int64_t pos, struct sm_piece *piece)
{
	int64_t data = *data_at;
	int64_t hole;

	*data_at = -1;
	if (data != pos) {
		data = sm_map_lseek(map, pos, SEEK_DATA);
		if (data == -ENXIO) {
			/* No data from pos to the end of the file as it is now
			 * (map.c keeps the last folio below 2^63 data). */
			piece->end = map->size;
			piece->kind = SPARSE_MAP_HOLE;
			piece->flags = 0;
			return 0;
		}
		if (data < 0)
			return (int)data;
		if (data >= map->size && past_eof_now(map, data))
			return one_block_of_data(map, pos, piece);	/* what came before it? */
		if (data > pos) {
			*data_at = data;
			piece->end = data;
			piece->kind = SPARSE_MAP_HOLE;
			piece->flags = 0;
			return 0;
		}
		/* data < pos breaks the lseek contract: believe only that
		 * there may be data at pos. */
	}

	piece->kind = SPARSE_MAP_DATA;
	piece->flags = 0;
	hole = sm_map_lseek(map, pos, SEEK_HOLE);
	if (hole == -ENXIO) {
		/* The file now ends at or before pos: what is past EOF is hole.
		 * Of a file that does not, the answer is wrong. */
		if (!past_eof_now(map, pos))
			return one_block_of_data(map, pos, piece);
		piece->end = map->size;
		piece->kind = SPARSE_MAP_HOLE;
		return 0;
	}
	if (hole < 0)
		return (int)hole;
	if (hole <= pos)
		/* Data a moment ago, a hole now: the file changed under us, or
		 * the kernel contradicts itself. */
		return one_block_of_data(map, pos, piece);
	piece->end = hole;
	return 0;
}

static int seek_next(struct sparse_map *map, int64_t pos, struct sm_piece *piece)
{
	struct seek_state *st = map->backend_state;

	if (pos == 0 && st->first_hole > 0) {
		/* The probe asked this very question a moment ago. */
		piece->end = st->first_hole;
		piece->kind = SPARSE_MAP_DATA;
		piece->flags = 0;
		st->first_hole = 0;
		return 0;
	}
	return sm_seek_piece(map, &st->data_at, pos, piece);
}

static int seek_init(struct sparse_map *map)
{
	struct seek_state *st = sm_sys_malloc(sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->data_at = -1;
	st->first_hole = map->probe_hole;
	map->backend_state = st;
	return 0;
}

static void seek_reset(struct sparse_map *map)
{
	struct seek_state *st = map->backend_state;

	st->data_at = -1;
	st->first_hole = 0;
}

static void seek_fini(struct sparse_map *map)
{
	sm_sys_free(map->backend_state);
	map->backend_state = NULL;
}

const struct sm_backend sm_backend_seek = {
	.id = SPARSE_MAP_BACKEND_SEEK,
	.name = "seek",
	.reads_data = false,
	.usable = seek_usable,
	.init = seek_init,
	.next = seek_next,
	.reset = seek_reset,
	.fini = seek_fini,
};
