/* SPDX-License-Identifier: MIT */
/*
 * The iterator.  A backend says what the bytes at one offset are; this file
 * turns what it says into the contract: ranges cut at the size taken at
 * open, holes read back under SPARSE_MAP_VERIFY, zero blocks found under
 * SPARSE_MAP_ZEROES, and neighbours of one kind (and, under
 * SPARSE_MAP_SPLIT_FLAGS, of the same flags) merged into one range.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse-map-private.h"

static int64_t clamp_blksize(const struct stat *st)
{
	int64_t bs = sm_sys_st_blksize(st);

	if (bs < 512)
		return 512;
	if (bs > SM_MAX_BLKSIZE)
		return SM_MAX_BLKSIZE;
	return bs;
}

static void map_free(struct sparse_map *map)
{
	if (map->backend && map->backend_state)
		map->backend->fini(map);
	sm_readbuf_free(map);
	if (map->offset_moved)
		(void)sm_sys_lseek(map->fd, map->saved_offset, SEEK_SET);
	sm_sys_free(map);
}

/* Check fd and fill in what the backends need to know about the file:
 * from the caller's fstat where it gave one of a struct stat laid out as
 * the library's (a caller built with other _FILE_OFFSET_BITS or _TIME_BITS
 * has another), else from fstat. */
static int map_describe(struct sparse_map *map, const struct sparse_map_options *o)
{
	struct stat st;
	int r;

	if (o->st && o->st_len == sizeof(struct stat)) {
		st = *o->st;
	} else {
		r = sm_sys_fstat(map->fd, &st);
		if (r < 0)
			return r;
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode)) {
		/* The offset to put back at close, taken before a disk is
		 * sized, since sizing one may seek (sys-posix.c).  A FIFO or
		 * socket says -ESPIPE here.  A regular file's is asked only
		 * if something moves it (sm_map_lseek()). */
		map->saved_offset = sm_sys_lseek(map->fd, 0, SEEK_CUR);
		if (map->saved_offset < 0)
			return (int)map->saved_offset;
		/* A disk is what the system says it is (sys-<system>.c):
		 * Linux's are block devices, FreeBSD's character devices. */
		map->offset_moved = true;
		r = sm_sys_disk(map->fd, &st, &map->st_size);
		if (r < 0)
			return r;
		if (r == 0)
			return -ESPIPE;
		map->is_blockdev = true;
	}
	map->dev = st.st_dev;
	map->blksize = clamp_blksize(&st);
	map->st_blocks = sm_sys_st_blocks(&st);
	if (!map->is_blockdev)
		map->st_size = (int64_t)st.st_size;
	map->blocks_short = !map->is_blockdev && !sm_blocks_cover(map->st_blocks, map->st_size);
	return 0;
}

/* The caller's options, checked: 0 or -EINVAL. */
static int check_options(const struct sparse_map_options *o)
{
	if ((unsigned int)o->backend > SM_BACKEND_MAX || (o->flags & ~SM_OPEN_FLAGS))
		return -EINVAL;
	if (o->start < 0 || (o->size < 0 && o->size != SPARSE_MAP_SIZE_FSTAT))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return -EINVAL;
	/* NO_READ forbids what only reading can do. */
	if ((o->flags & SPARSE_MAP_NO_READ) &&
	    ((o->flags & (SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES)) ||
	     o->backend == SPARSE_MAP_BACKEND_SCAN))
		return -EINVAL;
	return 0;
}

SM_EXPORT int sparse_map_open_with(int fd, const struct sparse_map_options *opts,
				   struct sparse_map **mapp)
{
	struct sparse_map *map;
	int r;

	if (!mapp)
		return -EINVAL;
	*mapp = NULL;
	if (!opts)
		return -EINVAL;
	r = check_options(opts);
	if (r < 0)
		return r;
	if (fd < 0)
		return -EBADF;

	map = sm_sys_malloc(sizeof(*map));
	if (!map)
		return -ENOMEM;
	memset(map, 0, sizeof(*map));
	map->fd = fd;
	map->flags = opts->flags;

	r = map_describe(map, opts);
	if (r < 0)
		goto fail;
	map->size = opts->size == SPARSE_MAP_SIZE_FSTAT ? map->st_size : opts->size;
	if (opts->start > map->size) {
		r = -ENXIO;
		goto fail;
	}
	map->pos = opts->start;
	if (map->flags & (SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES)) {
		r = sm_map_access(map);
		if (r == 0 && !map->readable)
			r = -EBADF;
		if (r < 0)
			goto fail;
	}
	if (map->flags & SPARSE_MAP_SYNC) {
		r = sm_sys_fdatasync(fd);
		/* EINVAL and EROFS: this file cannot be synced, so it has
		 * nothing dirty that a sync would make visible. */
		if (r < 0 && r != -EINVAL && r != -EROFS)
			goto fail;
	}
	r = sm_choose_backend(map, opts->backend);
	if (r < 0)
		goto fail;
	/* The probe may have set the backend up already, with its answer. */
	r = map->backend_state ? 0 : map->backend->init(map);
	if (r < 0)
		goto fail;
	*mapp = map;
	return 0;
fail:
	map_free(map);
	return r;
}

SM_EXPORT int sparse_map_open(int fd, enum sparse_map_backend backend, unsigned int flags,
			      struct sparse_map **mapp)
{
	struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;

	o.backend = backend;
	o.flags = flags;
	return sparse_map_open_with(fd, &o, mapp);
}

SM_EXPORT void sparse_map_close(struct sparse_map *map)
{
	if (map)
		map_free(map);
}

bool sm_blocks_cover(int64_t st_blocks, int64_t size)
{
	/* st_blocks * 512 >= size, without overflowing for any st_blocks a
	 * file system reports. */
	return st_blocks >= size / 512 + (size % 512 != 0);
}

/*
 * Where the answers of the kernel's hole information stop being believed.
 * Linux's page-cache walk (mapping_seek_hole_data(), tmpfs's SEEK and what
 * other file systems use for unwritten extents) computes the end of a folio that reaches
 * offset 2^63 as a negative number: SEEK_DATA says "no more data" for
 * data in that folio, and SEEK_HOLE answers INT64_MIN or the offset
 * itself (6.18, tests/test-mounts.c shows both).  A folio is at most a
 * PMD (2 MiB with 4 KiB pages; the page size squared over 8 in general).
 * So of a file larger than 2^63 less that, the last that many bytes are
 * data unless the bytes themselves were read (SCAN): every answer about
 * them, the map's and sparse_map_lseek()'s, says so, and none contradicts
 * another.  Returns size for every other file.
 */
int64_t sm_trusted_end(int64_t size)
{
	long page;
	int64_t zone, start;

	/* Below the largest zone (pages of 1 MiB: 2^37 bytes), without asking
	 * the page size: sparse_map_lseek() asks this every call. */
	if (size <= INT64_MAX - ((int64_t)1 << 37))
		return size;
	page = sm_sys_page_size();
	zone = page > 0 && page <= (1L << 20) ? (int64_t)page * page / 8 : 0;
	if (zone < (2 << 20))
		zone = 2 << 20;
	start = INT64_MAX - zone + 1;	/* 2^63 - zone, aligned to it */
	return size > start ? start : size;
}

/* One piece of a backend range as VERIFY or ZEROES sees it after reading. */
static int refine_piece(struct sparse_map *map, struct sparse_map_range *piece)
{
	struct sm_refine *rf = &map->refine;
	int64_t end;
	bool zero;
	int r;

	r = sm_zero_run(map, rf->pos, rf->lo, rf->end, &zero, &end);
	if (r < 0)
		return r;
	piece->offset = rf->pos;
	piece->length = end - rf->pos;
	if (rf->kind == SPARSE_MAP_HOLE) {
		/* VERIFY: what does not read back as zeroes is data. */
		piece->kind = zero ? SPARSE_MAP_HOLE : SPARSE_MAP_DATA;
		piece->flags = zero ? rf->flags : 0;
	} else {
		/* ZEROES: what reads back as zeroes is a hole after all. */
		piece->kind = zero ? SPARSE_MAP_HOLE : SPARSE_MAP_DATA;
		piece->flags = zero ? SPARSE_MAP_RANGE_ZEROES : rf->flags;
	}
	rf->pos = end;
	rf->active = end < rf->end;
	return 1;
}

static bool needs_reading(const struct sparse_map *map, enum sparse_map_kind kind)
{
	if (map->backend->reads_data)
		return false;	/* SCAN has read it already */
	if (kind == SPARSE_MAP_HOLE)
		return map->flags & SPARSE_MAP_VERIFY;
	return map->flags & SPARSE_MAP_ZEROES;
}

/* The next piece from map->pos, not merged with its neighbours: 1, 0 at the end, or -errno. */
int sm_next_piece(struct sparse_map *map, struct sparse_map_range *piece)
{
	struct sm_piece p;
	int64_t pos = map->pos, trusted;
	int r;

	if (map->refine.active)
		return refine_piece(map, piece);
	if (pos >= map->size)
		return 0;
	trusted = sm_trusted_end(map->size);
	for (;;) {
		if (!map->backend->reads_data && pos >= trusted) {
			/* No system call answers truly here: data. */
			p = (struct sm_piece){ .end = map->size, .kind = SPARSE_MAP_DATA };
			break;
		}
		r = map->backend->next(map, pos, &p);
		if (r == 0 && (p.end <= pos ||
			       (p.kind != SPARSE_MAP_DATA && p.kind != SPARSE_MAP_HOLE)))
			r = -EIO;	/* a backend that does not move forward is broken */
		if (r == 0)
			break;
		/* Under AUTO, a source of hole information that fails
		 * gives way to the next one, from pos on. */
		r = sm_fall_back(map, pos, r);
		if (r < 0)
			return r;
	}
	if (p.end > map->size)
		p.end = map->size;
	if (p.kind == SPARSE_MAP_HOLE && !map->backend->reads_data && p.end > trusted)
		p.end = trusted;
	map->pos = p.end;

	if (needs_reading(map, p.kind)) {
		/* Read afresh: bytes buffered for an earlier piece (a block of
		 * st_blksize may span several) may predate this answer. */
		sm_readbuf_reset(map);
		map->refine = (struct sm_refine){
			.lo = pos, .pos = pos, .end = p.end,
			.kind = p.kind, .flags = p.flags, .active = true,
		};
		return refine_piece(map, piece);
	}
	piece->offset = pos;
	piece->length = p.end - pos;
	piece->kind = p.kind;
	piece->flags = p.flags;
	return 1;
}

SM_EXPORT int sparse_map_next(struct sparse_map *map, struct sparse_map_range *range)
{
	struct sparse_map_range cur, nxt;
	int r;

	if (!map || !range)
		return -EINVAL;
	if (map->lookahead.full) {
		cur = map->lookahead.range;
		map->lookahead.full = false;
	} else {
		r = sm_next_piece(map, &cur);
		if (r <= 0)
			return r;
	}
	/* Ranges are maximal: take pieces while they are of the same kind.
	 * A flag stays only if it holds for every piece, so a flagged piece
	 * beside an unflagged one of its kind loses its flag; callers that
	 * act on flags (punching stored zeroes, freeing preallocation) ask
	 * SPARSE_MAP_SPLIT_FLAGS, which merges only pieces of equal flags.
	 * The default stays 1.0's: data and holes alternate. */
	for (;;) {
		r = sm_next_piece(map, &nxt);
		if (r < 0) {
			/* Keep what we have; the next call goes on from here. */
			map->lookahead.range = cur;
			map->lookahead.full = true;
			return r;
		}
		if (r == 0)
			break;
		if (nxt.kind != cur.kind ||
		    ((map->flags & SPARSE_MAP_SPLIT_FLAGS) && nxt.flags != cur.flags)) {
			map->lookahead.range = nxt;
			map->lookahead.full = true;
			break;
		}
		cur.length += nxt.length;
		cur.flags &= nxt.flags;
	}
	*range = cur;
	return 1;
}

SM_EXPORT int sparse_map_seek(struct sparse_map *map, int64_t offset)
{
	if (!map || offset < 0)
		return -EINVAL;
	if (offset > map->size)
		return -ENXIO;
	map->pos = offset;
	map->refine.active = false;
	map->lookahead.full = false;
	map->backend->reset(map);
	sm_readbuf_reset(map);
	return 0;
}

SM_EXPORT enum sparse_map_backend sparse_map_get_backend(const struct sparse_map *map)
{
	return map ? map->backend->id : SPARSE_MAP_BACKEND_AUTO;
}

SM_EXPORT int64_t sparse_map_size(const struct sparse_map *map)
{
	return map ? map->size : -EINVAL;
}
