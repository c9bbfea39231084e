/* SPDX-License-Identifier: MIT */
/*
 * Which backend maps an fd.  A forced backend is checked and used; AUTO asks
 * a few cheap questions and reads no file data:
 *   1. SEEK, when SEEK_HOLE finds a hole before EOF, or when it finds none
 *      and st_blocks agrees that every byte is allocated;
 *   2. FIEMAP, when SEEK is missing or answers like the kernel's generic
 *      stub (no hole, yet st_blocks * 512 < size), and FIEMAP answers with
 *      something that agrees with st_blocks;
 *   3. RANGES, where FSCTL_QUERY_ALLOCATED_RANGES answers (Windows; a
 *      file without the sparse attribute is then all data, as it is);
 *   4. SCAN otherwise, or for a block device, which no file system maps;
 *      on ramfs SCAN reads only the blocks that have pages (pagecache.c),
 *      and where that cannot be checked AUTO takes SEEK's all-data
 *      answer rather than read, since reading a ramfs hole stores it.
 * Before 1, on ext4 (ext2 and ext3 share its f_type), XFS and Btrfs:
 * FIEMAP without FIEMAP_FLAG_SYNC, when it answers (unsynced_fiemap()): a
 * batch of extents a call instead of two lseeks a data range, and SEEK
 * asked only where the extents prove nothing (backend-fiemap.c).
 * SPARSE_MAP_BACKEND=seek|fiemap|scan|ranges stands in for a forced backend where
 * the caller asked for AUTO; SPARSE_MAP_DEBUG=1 prints the reasoning.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sparse-map-private.h"

static const struct sm_backend *const backends[] = {
	[SPARSE_MAP_BACKEND_AUTO] = NULL,
#ifdef SM_HAVE_SEEK
	[SPARSE_MAP_BACKEND_SEEK] = &sm_backend_seek,
#endif
#ifdef SM_HAVE_FIEMAP
	[SPARSE_MAP_BACKEND_FIEMAP] = &sm_backend_fiemap,
#endif
	[SPARSE_MAP_BACKEND_SCAN] = &sm_backend_scan,
	[SPARSE_MAP_BACKEND_RANGES] = &sm_backend_ranges,
};

static const char *env(const char *name)
{
#if defined(HAVE_SECURE_GETENV)
	return secure_getenv(name);
#elif defined(HAVE___SECURE_GETENV)
	return __secure_getenv(name);
#elif defined(_WIN32)
	return getenv(name);	/* no set-user-ID programs */
#else
	if (getuid() != geteuid() || getgid() != getegid())
		return NULL;
	return getenv(name);
#endif
}

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

static int use(struct sparse_map *map, enum sparse_map_backend id, const char *why)
{
	map->backend = backends[id];
	sm_debug(map, "%s: %s", map->backend->name, why);
	return 0;
}

static int force(struct sparse_map *map, enum sparse_map_backend id)
{
	const struct sm_backend *b = backends[id];
	int r;

	if (!b) {
		sm_debug(map, "%s: not built for this platform", sparse_map_backend_name(id));
		return -EOPNOTSUPP;
	}
	if (b->reads_data && !map->readable) {
		sm_debug(map, "%s: fd is not open for reading", b->name);
		return -EBADF;
	}
	r = b->usable(map);
	if (r < 0) {
		sm_debug(map, "%s: cannot map this file (%s)", b->name, strerror(-r));
		return r;
	}
	return use(map, id, "forced");
}

/* The backend named by SPARSE_MAP_BACKEND, or AUTO. */
static enum sparse_map_backend backend_from_env(const struct sparse_map *map)
{
	const char *v = env("SPARSE_MAP_BACKEND");

	if (!v || !*v)
		return SPARSE_MAP_BACKEND_AUTO;
	for (int id = SPARSE_MAP_BACKEND_AUTO; id <= SM_BACKEND_MAX; id++)
		if (strcmp(v, sparse_map_backend_name(id)) == 0)
			return id;
	sm_debug(map, "SPARSE_MAP_BACKEND=%s is not auto, seek, fiemap, scan or ranges; ignored", v);
	return SPARSE_MAP_BACKEND_AUTO;
}

bool sm_env_names_backend(void)
{
	const char *v = env("SPARSE_MAP_BACKEND");

	return v && *v && strcmp(v, "auto") != 0;
}

/*
 * The file systems on which FIEMAP without sync, with backend-fiemap.c's
 * checks, never calls written data a hole (tests/fiemap-unsynced.sh shows
 * it case by case): ext4 and XFS end a page's writeback only once its
 * extent is written, so pages that are neither dirty nor under writeback
 * prove their extents.  Btrfs ends page writeback before the ordered
 * extent puts the file extent item in place, which is what its FIEMAP
 * reads, so clean pages there prove nothing: its written extents are
 * still data, but SEEK decides every gap (fiemap_gaps_unproven).
 * Without SEEK built, nothing could decide what the extents leave open,
 * and AUTO goes on as below.
 * Sets the map's mode and says whether to take it.
 */
static bool unsynced_fiemap(struct sparse_map *map)
{
#if defined(SM_HAVE_FIEMAP) && defined(SM_HAVE_SEEK)
	bool btrfs = map->fs_type == 0x9123683E;	/* BTRFS_SUPER_MAGIC */
	int r;

	if (!btrfs && map->fs_type != 0xEF53 /* EXT4_SUPER_MAGIC */ &&
	    map->fs_type != 0x58465342 /* XFS_SUPER_MAGIC */)
		return false;
	/* As below: no extent at all is believed only of a file with no blocks. */
	r = sm_backend_fiemap.usable(map);
	if (r < 0 || (r == 0 && map->st_blocks != 0))
		return false;
	map->fiemap_unsynced = true;
	map->fiemap_gaps_unproven = btrfs;
	return true;
#else
	(void)map;
	return false;
#endif
}

static int probe(struct sparse_map *map)
{
	bool seek_says_all_data = false;

	if (map->size == 0 && !map->is_blockdev) {
		/* Nothing to map: no range either way.  SEEK and SCAN serve
		 * any empty file (FIEMAP may not), so forcing the backend
		 * named here later, as SPARSE_MAP_BACKEND does, works too. */
		return use(map, backends[SPARSE_MAP_BACKEND_SEEK] ? SPARSE_MAP_BACKEND_SEEK
								 : SPARSE_MAP_BACKEND_SCAN, "empty file");
	}
	if (map->is_blockdev) {
		/* No file system describes a device's holes: only its bytes
		 * can.  Linux refuses SEEK_DATA/SEEK_HOLE on devices (EINVAL),
		 * so an fd that cannot be read cannot be mapped at all. */
		if (map->readable)
			return use(map, SPARSE_MAP_BACKEND_SCAN,
				   "a block device: only its bytes say where zeroes are");
		sm_debug(map, "a block device not open for reading: nothing can map it");
		return -EBADF;
	}

	if (unsynced_fiemap(map))
		return use(map, SPARSE_MAP_BACKEND_FIEMAP, map->fiemap_gaps_unproven ?
			   "Btrfs: FIEMAP without sync, SEEK for every gap and unsure extent" :
			   "ext4 or XFS: FIEMAP without sync, SEEK where the extents prove nothing");
#ifdef SM_HAVE_SEEK
	{
		int64_t hole = sm_map_lseek(map, 0, SEEK_HOLE);
		bool allocated = map->st_blocks * 512 >= map->size;

		if (hole >= 0 && hole < map->size)
			return use(map, SPARSE_MAP_BACKEND_SEEK, "SEEK_HOLE finds a hole before EOF");
		if (hole >= 0 && allocated)
			return use(map, SPARSE_MAP_BACKEND_SEEK,
				   "no hole before EOF, and st_blocks says every byte is stored");
		/* Where the system can say so (not Linux), a file system
		 * that reports holes answers SEEK_HOLE for real, even when
		 * compression makes st_blocks small. */
		if (hole >= 0 && sm_sys_min_hole_size(map->fd) > 0)
			return use(map, SPARSE_MAP_BACKEND_SEEK,
				   "no hole before EOF, and _PC_MIN_HOLE_SIZE says the file system reports holes");
		if (hole >= 0) {
			seek_says_all_data = true;
			sm_debug(map, "seek: SEEK_HOLE(0) is EOF but st_blocks * 512 = %lld < size %lld: "
				 "the generic stub?", (long long)map->st_blocks * 512,
				 (long long)map->size);
		} else if (sm_sys_unsupported((int)hole) || hole == -ENXIO) {
			sm_debug(map, "seek: unsupported here (%s)", strerror((int)-hole));
		} else {
			return (int)hole;
		}
	}
#endif

#ifdef SM_HAVE_FIEMAP
	{
		int r = sm_backend_fiemap.usable(map);

		if (r > 0 || (r == 0 && map->st_blocks == 0))
			return use(map, SPARSE_MAP_BACKEND_FIEMAP,
				   "FIEMAP answers, and agrees with st_blocks");
		if (r == 0)
			sm_debug(map, "fiemap: no extent, yet st_blocks is %lld: not trusted",
				 (long long)map->st_blocks);
		else if (r == -EOPNOTSUPP)
			sm_debug(map, "fiemap: unsupported here");
		else
			return r;
	}
#endif

	if (map->readable) {
		/* Windows (sys-windows.c), which asks for read access; elsewhere
		 * it answers -EOPNOTSUPP at once. */
		int r = sm_backend_ranges.usable(map);

		if (r == 0)
			return use(map, SPARSE_MAP_BACKEND_RANGES,
				   "FSCTL_QUERY_ALLOCATED_RANGES answers");
		if (r != -EOPNOTSUPP)
			return r;
	}

	/* Reading a ramfs hole stores it.  Where its holes cannot be seen
	 * without reading, SEEK's answer (all data) leaves the file as it is. */
	if (seek_says_all_data && sm_pagecache_is_ramfs(map) && !map->pages_are_storage)
		return use(map, SPARSE_MAP_BACKEND_SEEK,
			   "ramfs, whose holes only reading could find, and reading would "
			   "store them: SEEK's answer, all data, leaves the file as it is");
	if (map->readable)
		return use(map, SPARSE_MAP_BACKEND_SCAN, map->pages_are_storage ?
			   "no backend reports holes here: skip the blocks without pages, read the rest" :
			   "no backend reports holes here: read the file");
	if (seek_says_all_data)
		return use(map, SPARSE_MAP_BACKEND_SEEK,
			   "cannot read the fd: SEEK's answer, all data, is safe");
	sm_debug(map, "nothing can map this fd without reading it, and it is not open for reading");
	return -EBADF;
}

int sm_choose_backend(struct sparse_map *map, enum sparse_map_backend requested)
{
	const char *dbg = env("SPARSE_MAP_DEBUG");
	int r;

	map->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
	r = sm_pagecache_check(map);
	if (r < 0)
		return r;
	if (requested == SPARSE_MAP_BACKEND_AUTO) {
		requested = backend_from_env(map);
		if (requested != SPARSE_MAP_BACKEND_AUTO)
			sm_debug(map, "SPARSE_MAP_BACKEND=%s", sparse_map_backend_name(requested));
	}
	if (requested != SPARSE_MAP_BACKEND_AUTO)
		return force(map, requested);
	return probe(map);
}
