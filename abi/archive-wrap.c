/* SPDX-License-Identifier: MIT */
/*
 * libwrap.so of abi/test-archive-in-shared-lib.sh: a project's shared
 * library with libsparse-map.a linked into it whole, as libarchive links
 * the libraries it lists.  Its one function goes through both files of the
 * library that keep per-thread state: AUTO's probe (probe.c) and
 * sparse_map_lseek() (lseek.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <sparse_map.h>

long long wrap_data_bytes(const char *path, long long *hole);

/* The bytes of path that hold data (all-zero blocks count as holes), or
 * -errno; *hole is where sparse_map_lseek() finds the first hole from 0. */
long long wrap_data_bytes(const char *path, long long *hole)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	long long data = 0;
	int fd, rc;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES | SPARSE_MAP_NO_ENV, &map);
	if (rc == 0) {
		while ((rc = sparse_map_next(map, &r)) == 1)
			if (r.kind == SPARSE_MAP_DATA)
				data += r.length;
		sparse_map_close(map);
	}
	if (rc == 0) {
		*hole = sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE);
		if (*hole < 0)
			rc = -errno;
	}
	close(fd);
	return rc < 0 ? rc : data;
}
