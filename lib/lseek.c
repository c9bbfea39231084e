/* SPDX-License-Identifier: MIT */
/*
 * sparse_map_lseek(): SEEK_DATA and SEEK_HOLE as illumos and POSIX.1-2024
 * define them, on any file system, by walking a map from the offset.  It
 * stops at the first piece of the kind asked for, so it never reads or asks
 * further than it must.
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "sparse-map-private.h"

static int64_t find(int fd, int64_t offset, enum sparse_map_kind want)
{
	struct sparse_map *map;
	struct sparse_map_range piece;
	int64_t result;
	int r;

	r = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
	if (r < 0)
		return r;
	if (offset >= map->size) {
		sparse_map_close(map);
		return -ENXIO;
	}
	r = sparse_map_seek(map, offset);
	while (r == 0 && (r = sm_next_piece(map, &piece)) == 1 && piece.kind != want)
		r = 0;
	if (r == 1)
		result = piece.offset;
	else if (r == 0)
		/* No piece of that kind: no data left, or the virtual hole at EOF. */
		result = want == SPARSE_MAP_DATA ? -ENXIO : map->size;
	else
		result = r;
	sparse_map_close(map);	/* puts the offset back; the caller's lseek moves it */
	return result;
}

SM_EXPORT int64_t sparse_map_lseek(int fd, int64_t offset, int whence)
{
	int64_t r;

	if (whence != SPARSE_MAP_SEEK_DATA && whence != SPARSE_MAP_SEEK_HOLE) {
		errno = EINVAL;
		return -1;
	}
	if (offset < 0) {
		errno = ENXIO;
		return -1;
	}
	r = find(fd, offset, whence == SPARSE_MAP_SEEK_DATA ? SPARSE_MAP_DATA : SPARSE_MAP_HOLE);
	if (r >= 0)
		r = sm_sys_lseek(fd, r, SEEK_SET);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
