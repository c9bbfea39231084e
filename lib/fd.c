/* SPDX-License-Identifier: MIT */
/*
 * The descriptor being mapped: what the library asks of it once and keeps
 * in the map (its file system's type, its access mode, its offset to put
 * back at close), each asked only where an answer needs it, and the debug
 * channel, SPARSE_MAP_DEBUG's lines about it.  Every file above may call
 * these; they call only sys.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "sparse-map-private.h"

void sm_debug(const struct sparse_map *map, const char *fmt, ...)
{
	va_list ap;

	if (!map->debug)
		return;
	fprintf(stderr, "sparse_map: fd %d: ", map->fd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int64_t sm_map_lseek(struct sparse_map *map, int64_t offset, int whence)
{
	if (!map->offset_moved && !(map->flags & SPARSE_MAP_ANY_OFFSET)) {
		/* Asked only now: most maps never move the offset. */
		map->saved_offset = sm_sys_lseek(map->fd, 0, SEEK_CUR);
		if (map->saved_offset < 0)
			return map->saved_offset;
		map->offset_moved = true;
	}
	return sm_sys_lseek(map->fd, offset, whence);
}

int sm_map_access(struct sparse_map *map)
{
	int fl;

	if (map->access_known)
		return 0;
	fl = sm_sys_getfl(map->fd);
	if (fl < 0)
		return fl;
#ifdef O_PATH
	if (fl & O_PATH)
		return -EBADF;	/* no reads, seeks or ioctls on it */
#endif
	map->readable = (fl & O_ACCMODE) != O_WRONLY;
	map->access_known = true;
	return 0;
}

/* The file system's type, asked once (0: unknown, and on systems without
 * it).  It only ever enables a shortcut, never a belief that something is
 * a hole. */
int64_t sm_map_fs_type(struct sparse_map *map)
{
	if (!map->fs_type_known && !map->is_blockdev &&
	    sm_sys_fs_type(map->fd, &map->fs_type) < 0)
		map->fs_type = 0;
	map->fs_type_known = true;
	return map->fs_type;
}
