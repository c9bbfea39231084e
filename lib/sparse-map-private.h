/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the files of lib/.  Who owns what:
 *   map.c            the public iterator and its contract (tiling, merging, VERIFY/ZEROES)
 *   probe.c          which backend serves an fd (AUTO, SPARSE_MAP_BACKEND, SPARSE_MAP_DEBUG)
 *   backend-seek.c   lseek SEEK_DATA / SEEK_HOLE
 *   backend-fiemap.c Linux FS_IOC_FIEMAP
 *   backend-ranges.c Windows FSCTL_QUERY_ALLOCATED_RANGES
 *   backend-scan.c   reading the file
 *   backend-none.c   no hole information: every byte is data
 *   zeroes.c         the block-by-block zero test used by SCAN, VERIFY and ZEROES
 *   pagecache.c      what the page cache says: ramfs holes without reading, pages to drop
 *   fd.c             the descriptor: its file system, access mode and offset, asked
 *                    once each; the debug channel
 *   lseek.c          sparse_map_lseek()
 *   sys.c            every system call and allocation the library makes
 *   sys-<system>.c   what differs between systems (struct sm_os, below)
 * Each calls only those below it in this order: lseek.c, map.c, probe.c,
 * backend-*.c, zeroes.c, pagecache.c, fd.c, sys.c, sys-<system>.c.
 */
#ifndef SPARSE_MAP_PRIVATE_H
#define SPARSE_MAP_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sparse_map.h"

/* What the shared library exports: a DLL's export table on Windows, else
 * what -fvisibility=hidden leaves visible.  libtool defines DLL_EXPORT for
 * the DLL's objects only: the static library's mark nothing, so that a
 * program or DLL linking them does not export the library's functions. */
#if defined(_WIN32) && defined(DLL_EXPORT)
#define SM_EXPORT __declspec(dllexport)
#elif defined(_WIN32)
#define SM_EXPORT
#else
#define SM_EXPORT __attribute__((visibility("default")))
#endif

/* The highest enum sparse_map_backend. */
#define SM_BACKEND_MAX SPARSE_MAP_BACKEND_NONE

#define SM_OPEN_FLAGS (SPARSE_MAP_SYNC | SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES | \
		       SPARSE_MAP_NO_READ | SPARSE_MAP_NO_ENV | SPARSE_MAP_SPLIT_FLAGS | \
		       SPARSE_MAP_ANY_OFFSET)

/* Per-thread state (lseek.c's loop record, probe.c's FIEMAP hint). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SM_THREAD_LOCAL _Thread_local
#else
#define SM_THREAD_LOCAL __thread
#endif

/* What a backend says about the bytes from one offset on: [offset, end). */
struct sm_piece {
	int64_t end;
	enum sparse_map_kind kind;
	uint32_t flags;
};

/*
 * A backend.  next() describes the bytes that start at pos (0 <= pos < size):
 * it must return a piece with end > pos, and it may say "data" whenever it is
 * unsure.  Pieces need not be maximal, and they may run past size (map.c cuts
 * them).  Errors are -errno.
 */
struct sm_backend {
	enum sparse_map_backend id;
	const char *name;
	bool reads_data;	/* needs an fd open for reading */
	/* 0 if this backend can map the file, -EOPNOTSUPP if it cannot, -errno on failure. */
	int (*usable)(struct sparse_map *map);
	int (*init)(struct sparse_map *map);
	int (*next)(struct sparse_map *map, int64_t pos, struct sm_piece *piece);
	/* Forget what is cached: the file may have changed since. */
	void (*reset)(struct sparse_map *map);
	void (*fini)(struct sparse_map *map);
};

extern const struct sm_backend sm_backend_seek;
extern const struct sm_backend sm_backend_fiemap;
extern const struct sm_backend sm_backend_scan;
extern const struct sm_backend sm_backend_ranges;
extern const struct sm_backend sm_backend_none;

/* What VERIFY or ZEROES is in the middle of re-reading: [pos, end) of a backend piece. */
struct sm_refine {
	int64_t lo;		/* where the backend piece began */
	int64_t pos;
	int64_t end;
	enum sparse_map_kind kind;
	uint32_t flags;
	bool active;
};

/* The buffer of file bytes that zeroes.c reads into: [off, off + len) of the file. */
struct sm_readbuf {
	unsigned char *data;
	size_t size;		/* allocated, a multiple of blksize */
	int64_t off;
	size_t len;		/* bytes read */
	size_t asked;		/* bytes asked for: past len the read ended early */
	bool valid;
};

/*
 * Unsynced FIEMAP (backend-fiemap.c): what makes a gap between extents a
 * hole.  probe.c picks one by file system and, on Btrfs, kernel release.
 */
enum sm_fiemap_gaps {
	SM_GAPS_SEEK,		/* nothing: SEEK decides every gap and unsure extent */
	SM_GAPS_CLEAN_PAGES,	/* ext4, XFS: cachestat found no page busy, asked first */
	SM_GAPS_LOCKED,		/* Btrfs: its FIEMAP decides holes under the range's lock */
};

struct sparse_map {
	int fd;
	unsigned int flags;
	const struct sm_backend *backend;
	void *backend_state;
	/* The caller asked for AUTO: a source of hole information that
	 * fails gives way to the next (sm_fall_back()). */
	bool auto_mode;

	int64_t size;		/* ranges end here: fstat's size at open, or the caller's */
	int64_t st_size;	/* fstat's size at open (a block device's size) */
	dev_t dev;		/* st_dev */
	int64_t blksize;	/* st_blksize, clamped to [512, SM_MAX_BLKSIZE] */
	int64_t st_blocks;
	/* st_blocks * 512 < st_size: a hole, most likely (or compression).
	 * It orders the probe's questions, never an answer. */
	bool blocks_short;
	int64_t fs_type;	/* sm_map_fs_type(): the regular file's f_type, else 0 */
	bool fs_type_known;
	/* Set by probe.c when AUTO maps with FIEMAP on a file system where it
	 * may do so without FIEMAP_FLAG_SYNC: see backend-fiemap.c. */
	bool fiemap_unsynced;
	enum sm_fiemap_gaps fiemap_gaps;	/* unsynced: who says a gap is a hole */
	/* AUTO began with FIEMAP without sync, which promises to leave dirty
	 * pages dirty: no source it falls back to may flush (sm_fall_back()). */
	bool no_flush;
	/* Where the probe's SEEK_HOLE(0) found the first hole, if it found
	 * data before it (0 otherwise): the SEEK backend's first answer. */
	int64_t probe_hole;
	bool is_blockdev;
	bool readable;		/* valid once access_known (sm_map_access()) */
	bool access_known;
	bool pages_are_storage;	/* ramfs, checked: a block without a page is a hole */
	bool pagecache_checked;	/* sm_pagecache_check() has answered */
	bool no_cachestat;	/* cachestat failed once: do not ask again */
	bool use_mincore;	/* no cachestat (Linux < 6.5): ask mincore instead */
	int64_t present_to;	/* ramfs: [.., present_to) was seen to have every page */
	int64_t absent_from;	/* ramfs: [absent_from, absent_to) was seen */
	int64_t absent_to;	/* to have no page */
	bool runs_short;	/* ramfs: the last run of pages or holes was short */
	int64_t cached_from;	/* elsewhere: [cached_from, cached_to) was seen */
	int64_t cached_to;	/* all in the page cache */
	int64_t drop_from;	/* the chunks read in [drop_from, dropped_to) were */
	int64_t dropped_to;	/* dropped from the page cache again */
	/* sparse_map_lseek()'s walk (lseek.c): a read asks for read_len
	 * bytes, one block at first and twice as many each read after, so a
	 * call reads little more than its answer needs; and what it reads
	 * stays in the page cache, where the caller's own read finds it. */
	bool for_lseek;
	int64_t read_len;

	/* The file offset at open, put back at close if anything moved it. */
	int64_t saved_offset;
	bool offset_moved;

	/* Iteration state: the next raw piece starts at pos. */
	int64_t pos;
	struct sm_refine refine;
	struct sm_range_slot {
		struct sparse_map_range range;
		bool full;
	} lookahead;

	struct sm_readbuf buf;
	bool debug;
};

#define SM_MAX_BLKSIZE (1 << 20)

/* map.c */
int sm_next_piece(struct sparse_map *map, struct sparse_map_range *piece);
/* Whether st_blocks (512-byte units) is enough to store every byte of size:
 * no hole, unless preallocated space makes up for one. */
bool sm_blocks_cover(int64_t st_blocks, int64_t size);
/* Of a file of that size, where the bytes no system call describes truly
 * begin (the last folio below 2^63): size itself for any smaller file. */
int64_t sm_trusted_end(int64_t size);

/* probe.c */
int sm_choose_backend(struct sparse_map *map, enum sparse_map_backend requested);
/* Whether SPARSE_MAP_BACKEND names a backend (valid or not) for AUTO to use. */
bool sm_env_names_backend(void);
/* Whether a file system (f_type, in Linux's numbers) has SEEK_DATA and
 * SEEK_HOLE of its own, which the kernel's generic stub never answers for:
 * ext4, XFS, Btrfs and tmpfs. */
bool sm_fs_seeks_natively(int64_t type);
/* Whether the kernel of that uname(2) release keeps Btrfs's FIEMAP from
 * calling a hole what a write recorded during the call (probe.c says which
 * kernels, and why). */
bool sm_btrfs_fiemap_holds_lock(const char *release);
/* Under AUTO, after the backend failed with -err at pos: the next source of
 * hole information that can be trusted takes over from pos (0), or -err
 * stays the answer. */
int sm_fall_back(struct sparse_map *map, int64_t pos, int err);
/* backend-seek.c: what SEEK_DATA/SEEK_HOLE say of the bytes from pos, the
 * SEEK backend's next(); *data_at remembers where the last SEEK_DATA found
 * data (-1: nothing).  backend-fiemap.c asks it where extents prove nothing. */
int sm_seek_piece(struct sparse_map *map, int64_t *data_at, int64_t pos, struct sm_piece *piece);

/* zeroes.c: from pos, the run of blocks that are all zero (or all not), within [lo, hi). */
int sm_zero_run(struct sparse_map *map, int64_t pos, int64_t lo, int64_t hi,
		bool *zero, int64_t *run_end);
void sm_readbuf_reset(struct sparse_map *map);
/* sparse_map_lseek()'s next call on a kept map (lseek.c): of what the last
 * calls read, keep only the blocks from `from` on that held data, up to the
 * first that read as zeroes.  Bytes once read as data may be called data
 * later whatever happened since; zeroes must be read again, since a write
 * may have filled them without any change fstat could show. */
void sm_readbuf_keep_data(struct sparse_map *map, int64_t from);
/* pagecache.c */
bool sm_pagecache_is_ramfs(struct sparse_map *map);
int sm_pagecache_check(struct sparse_map *map);
int sm_pagecache_extent(struct sparse_map *map, int64_t pos, int64_t hi, int64_t max,
			int64_t *end);
bool sm_pagecache_droppable(struct sparse_map *map, int64_t off, int64_t len);
void sm_pagecache_drop(struct sparse_map *map, int64_t off, int64_t len);

void sm_readbuf_free(struct sparse_map *map);

/* fd.c */
/* A line on stderr under SPARSE_MAP_DEBUG. */
void sm_debug(const struct sparse_map *map, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* lseek on the map's fd, remembering that the file offset must be put back
 * (unless SPARSE_MAP_ANY_OFFSET says it need not be). */
int64_t sm_map_lseek(struct sparse_map *map, int64_t offset, int whence);
/* fstatfs f_type of the regular file's file system, asked once; 0 if unknown. */
int64_t sm_map_fs_type(struct sparse_map *map);
/* Asks the fd's access mode once, for map->readable: 0, or -errno (-EBADF
 * for an O_PATH descriptor). */
int sm_map_access(struct sparse_map *map);

/* sys.c: each returns -errno on failure and retries EINTR. */
int sm_sys_fstat(int fd, struct stat *st);
/* st_blocks and st_blksize where struct stat has them (not Windows):
 * without st_blocks, every byte counts as stored, which only ever makes the
 * probe believe "no hole"; without st_blksize, 4096. */
int64_t sm_sys_st_blocks(const struct stat *st);
int64_t sm_sys_st_blksize(const struct stat *st);
/* The page size, or 0 where the system does not say (no sysconf). */
long sm_sys_page_size(void);
int sm_sys_getfl(int fd);
int64_t sm_sys_lseek(int fd, int64_t offset, int whence);
ssize_t sm_sys_pread(int fd, void *buf, size_t len, int64_t offset);
int sm_sys_fdatasync(int fd);
int sm_sys_ioctl(int fd, unsigned long request, void *arg);
/* The file system's f_type from fstatfs (0 where the platform has none). */
int sm_sys_fs_type(int fd, int64_t *type);
/* The running kernel's release (uname(2)'s, NUL-terminated in buf, len > 0):
 * 0, or -errno; -ENOSYS where the system layer has none to give. */
int sm_sys_kernel_release(char *buf, size_t len);
/* Linux cachestat(2) over [off, off + len), len > 0: pages in the page
 * cache, and of those dirty and under writeback.  -ENOSYS without it,
 * -EPERM where the kernel will not tell this caller. */
struct sm_cachestat {
	int64_t nr_cache;
	int64_t nr_dirty;
	int64_t nr_writeback;
};
int sm_sys_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs);
/* The pages of [off, off + len) that mincore(2) says are in the page cache
 * (mapping them untouched), for kernels without cachestat. */
int64_t sm_sys_resident_pages(int fd, int64_t off, int64_t len);
/* posix_fadvise(POSIX_FADV_DONTNEED): let the kernel drop clean cached pages. */
int sm_sys_drop_cache(int fd, int64_t off, int64_t len);
/* Whether fd (st from fstat) is a disk this system can map: 1 and its size
 * in bytes, 0 if it is no disk, or -errno. */
int sm_sys_disk(int fd, const struct stat *st, int64_t *size);
/* A device's size as lseek(SEEK_END) finds it, the offset put back: 1 and
 * *size, or -errno; -EOPNOTSUPP where that says 0 yet a byte can be read,
 * as on systems that say 0 of every device. */
int sm_sys_size_by_seeking(int fd, int64_t *size);
/* fpathconf(_PC_MIN_HOLE_SIZE): > 0 where the file system reports holes, 0
 * where it does not, -EOPNOTSUPP where the system cannot say (Linux). */
long sm_sys_min_hole_size(int fd);
void *sm_sys_malloc(size_t size);
void *sm_sys_aligned_alloc(size_t align, size_t size);
void sm_sys_free(void *ptr);

/*
 * Windows' FSCTL_QUERY_ALLOCATED_RANGES over [off, off + len), len > 0: the
 * ranges that may hold data, in out[0..*n), max > 0.  0 if that is all
 * of them, 1 if more follow the last (ERROR_MORE_DATA: ask again from its
 * end), -errno: -EOPNOTSUPP and the like where there is no such call.
 * struct sm_alloc_range is laid out as FILE_ALLOCATED_RANGE_BUFFER.
 */
struct sm_alloc_range {
	int64_t offset;
	int64_t length;
};
int sm_sys_allocated_ranges(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
			    size_t max, size_t *n);

/* Whether -err from lseek or ioctl means "not available here" (EINVAL,
 * EOPNOTSUPP, ENOTSUP where it differs, as on macOS and illumos, ENOTTY,
 * ENOSYS). */
bool sm_sys_unsupported(int err);
/*
 * Whether -err from a source of hole information (SEEK_DATA/SEEK_HOLE,
 * FIEMAP, FSCTL_QUERY_ALLOCATED_RANGES, cachestat) says only that it has
 * no answer here, so that AUTO asks the next one: every error but those
 * that reading the file would meet as well (ENOMEM, EBADF).  ext4 with
 * inline_data answers SEEK_HOLE with ENOENT, GlusterFS SEEK_DATA with
 * EBADFD, a FUSE daemon what it likes.
 */
bool sm_sys_no_answer(int err);

/*
 * sys-<system>.c: what differs between systems, one file and one table per
 * system (configure builds the host's, or --with-platform's): sys.c calls
 * these, and nothing else does.  The calls return as the C library does
 * (-1 and errno), so that sys.c retries EINTR and the test table can stand
 * in for them; disk() returns as sm_sys_disk().  NULL: the system has none,
 * or for pread and getfl, POSIX's pread(2) and fcntl(F_GETFL) serve.
 */
struct sm_os {
	int (*fdatasync)(int fd);		/* flush the file's data; required */
	int (*fs_type)(int fd, int64_t *type);	/* statfs f_type, in Linux's numbers */
	int (*cachestat)(int fd, int64_t off, int64_t len, struct sm_cachestat *cs);
	int (*disk)(int fd, const struct stat *st, int64_t *size);	/* required */
	/* Read at an offset without moving the file offset. */
	ssize_t (*pread)(int fd, void *buf, size_t len, int64_t off);
	/* The access mode, as fcntl(F_GETFL) & O_ACCMODE says it. */
	int (*getfl)(int fd);
	/* As sm_sys_allocated_ranges(), but -1 and errno on failure. */
	int (*allocated_ranges)(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
				size_t max, size_t *n);
	/* The running kernel's release, as uname(2) names it ("6.18.4-..."),
	 * NUL-terminated in buf; where a file system's answers differ by
	 * kernel version (Btrfs's FIEMAP, probe.c). */
	int (*kernel_release)(char *buf, size_t len);
};
extern const struct sm_os sm_os;

#endif /* SPARSE_MAP_PRIVATE_H */
