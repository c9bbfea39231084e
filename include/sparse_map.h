/* SPDX-License-Identifier: MIT */
/*
 * libsparse-map: which byte ranges of a file hold data, and which are holes.
 *
 * Every function but sparse_map_lseek() returns a negative errno value on
 * failure; errno is not part of their answer (system calls inside may set it).  The man pages (man 3 sparse_map) hold the
 * full contract; each declaration here says it in a line or two.
 */
#ifndef SPARSE_MAP_H
#define SPARSE_MAP_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "sparse_map_version.h"	/* SPARSE_MAP_VERSION_* of this release */

#ifdef __cplusplus
extern "C" {
#endif

/* One iteration over one open file; opaque. */
struct sparse_map;

enum sparse_map_backend {
	SPARSE_MAP_BACKEND_AUTO   = 0,	/* probe the fd and pick */
	SPARSE_MAP_BACKEND_SEEK   = 1,	/* lseek SEEK_DATA / SEEK_HOLE */
	SPARSE_MAP_BACKEND_FIEMAP = 2,	/* Linux FS_IOC_FIEMAP */
	SPARSE_MAP_BACKEND_SCAN   = 3,	/* read the file and test blocks for zeroes */
	SPARSE_MAP_BACKEND_RANGES = 4,	/* Windows FSCTL_QUERY_ALLOCATED_RANGES */
	SPARSE_MAP_BACKEND_NONE   = 5,	/* no hole information: every byte is data (1.1) */
};

enum sparse_map_kind { SPARSE_MAP_DATA = 1, SPARSE_MAP_HOLE = 2 };

/* Flags for sparse_map_open(). */
#define SPARSE_MAP_SYNC    (1u << 0)	/* flush the file's dirty data before mapping */
#define SPARSE_MAP_VERIFY  (1u << 1)	/* read back every hole; non-zero blocks become data */
#define SPARSE_MAP_ZEROES  (1u << 2)	/* also report all-zero blocks inside data as holes */
#define SPARSE_MAP_NO_READ (1u << 3)	/* read no file data: where only reading finds holes, data (1.1) */
#define SPARSE_MAP_NO_ENV  (1u << 4)	/* ignore SPARSE_MAP_BACKEND and SPARSE_MAP_DEBUG (1.1) */
/* Merge neighbours only where kind and flags are the same, so that every
 * flagged run comes whole; two neighbours may then be of one kind (1.2). */
#define SPARSE_MAP_SPLIT_FLAGS (1u << 5)
/* The map may leave fd's file offset where its questions left it:
 * sparse_map_close() does not put it back, which spares two lseek calls a
 * map where SEEK_DATA/SEEK_HOLE answer.  For a program that reads with
 * pread(2), or seeks before each read (1.2). */
#define SPARSE_MAP_ANY_OFFSET (1u << 6)

/* Flags in struct sparse_map_range; a flag holds for every byte of the range.
 * Without SPARSE_MAP_SPLIT_FLAGS, a flagged run that touches an unflagged
 * one of its kind is merged into it and its flag is lost. */
#define SPARSE_MAP_RANGE_UNWRITTEN (1u << 0)	/* preallocated/unwritten space, reads as zeroes */
#define SPARSE_MAP_RANGE_ZEROES    (1u << 1)	/* allocated space found to hold only zeroes */

struct sparse_map_range {
	int64_t offset;
	int64_t length;
	enum sparse_map_kind kind;
	uint32_t flags;			/* SPARSE_MAP_RANGE_* */
};

/* The whence values for sparse_map_lseek(): the platform's own where it has
 * them (Linux, illumos and FreeBSD use 3 and 4, macOS 4 and 3), else 3 and 4. */
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
#define SPARSE_MAP_SEEK_DATA SEEK_DATA
#define SPARSE_MAP_SEEK_HOLE SEEK_HOLE
#elif defined(__APPLE__)
#define SPARSE_MAP_SEEK_DATA 4
#define SPARSE_MAP_SEEK_HOLE 3
#else
#define SPARSE_MAP_SEEK_DATA 3
#define SPARSE_MAP_SEEK_HOLE 4
#endif

/* What sparse_map_open_with() takes (1.1).  Start from
 * SPARSE_MAP_OPTIONS_INIT; the reserved words must stay zero. */
struct sparse_map_options {
	enum sparse_map_backend backend;
	unsigned int flags;		/* SYNC, VERIFY, ZEROES, NO_READ, NO_ENV, SPLIT_FLAGS, ANY_OFFSET */
	int64_t start;			/* the first range starts here, 0 <= start <= size */
	int64_t size;			/* ranges tile [start, size); SPARSE_MAP_SIZE_FSTAT: fstat's */
	const struct stat *st;		/* the caller's fstat(fd) of a moment ago, or NULL */
	size_t st_len;			/* sizeof(struct stat) as the caller knows it */
	uint64_t reserved[4];
};
#define SPARSE_MAP_SIZE_FSTAT (-1)
#define SPARSE_MAP_OPTIONS_INIT \
	{ SPARSE_MAP_BACKEND_AUTO, 0, 0, SPARSE_MAP_SIZE_FSTAT, 0, sizeof(struct stat), \
	  { 0, 0, 0, 0 } }

/* Start mapping fd (a regular file or block device) from offset 0; on success
 * *mapp is the new map and 0 is returned.  flags: SPARSE_MAP_SYNC, VERIFY,
 * ZEROES, NO_READ, NO_ENV, SPLIT_FLAGS, ANY_OFFSET.  Under AUTO no error means "no hole
 * information". */
int sparse_map_open(int fd, enum sparse_map_backend backend, unsigned int flags,
		    struct sparse_map **mapp);

/* sparse_map_open() with a start offset, the size the ranges tile up to, and
 * the caller's own fstat's answer, which spares the library asking (1.1). */
int sparse_map_open_with(int fd, const struct sparse_map_options *opts,
			 struct sparse_map **mapp);

/* The next range: 1 with *range filled, 0 at the end, or -errno.  Ranges tile
 * [start, size) in order, and adjacent ranges differ in kind (under
 * SPARSE_MAP_SPLIT_FLAGS, in kind or flags). */
int sparse_map_next(struct sparse_map *map, struct sparse_map_range *range);

/* Restart the iteration at offset (0 <= offset <= size). */
int sparse_map_seek(struct sparse_map *map, int64_t offset);

/* The backend serving map; SPARSE_MAP_BACKEND_AUTO only for a NULL map. */
enum sparse_map_backend sparse_map_get_backend(const struct sparse_map *map);

/* Where the ranges end: the size fstat gave at open, or the one given to
 * sparse_map_open_with(). */
int64_t sparse_map_size(const struct sparse_map *map);

/* "auto", "seek", "fiemap", "scan", "ranges" or "none"; NULL for a value outside the enum. */
const char *sparse_map_backend_name(enum sparse_map_backend backend);

/* Free the map and put fd back at the file offset it had at open; NULL is a no-op. */
void sparse_map_close(struct sparse_map *map);

/* lseek(2) with SPARSE_MAP_SEEK_DATA or SPARSE_MAP_SEEK_HOLE on any file
 * system: the new file offset, or -1 with errno set (and the offset left
 * where it was).  Any other whence is lseek(2)'s own (since 1.1). */
int64_t sparse_map_lseek(int fd, int64_t offset, int whence);

#ifdef __cplusplus
}
#endif

#endif /* SPARSE_MAP_H */
