/* SPDX-License-Identifier: MIT */
/*
 * sparse_map_lseek(): SEEK_DATA and SEEK_HOLE as illumos and POSIX.1-2024
 * define them, on any file system.
 *
 * The kernel is asked first, and most of its answers are final, because
 * the generic stub of a file system without hole information (all data,
 * hole at EOF) can never give them: data found beyond the offset, a hole
 * at the offset, a hole before EOF.  Only the answers a stub could give
 * (data right at the offset, the hole at EOF) and the failures are worked
 * out again by walking a map from the offset, which stops at the first
 * piece of the kind asked for.  So on a file system with SEEK an lseek
 * costs one system call, or two where a hole has to be compared with EOF.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse-map-private.h"

/* The walk: the answer, or -errno; *opened says whether the map opened,
 * i.e. fd is a file the library can map.  It leaves the offset as it was. */
static int64_t find(int fd, int64_t offset, enum sparse_map_kind want, bool *opened)
{
	struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;
	struct sparse_map *map;
	struct sparse_map_range piece;
	int64_t result;
	int r;

	*opened = false;
	o.start = offset;
	r = sparse_map_open_with(fd, &o, &map);
	if (r < 0)
		return r;
	*opened = true;
	if (offset >= map->size) {
		sparse_map_close(map);
		return -ENXIO;
	}
	while ((r = sm_next_piece(map, &piece)) == 1 && piece.kind != want)
		;
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

#define SM_ASK_AGAIN (-1)	/* not an errno: the kernel's answer is not final */

/*
 * Where this thread's last call left fd's offset, when the kernel's answer
 * there was final: data found beyond the offset asked, a hole before EOF,
 * or any answer of a file system whose SEEK_DATA and SEEK_HOLE are its
 * own (sm_fs_seeks_natively()).  A SEEK_DATA/SEEK_HOLE loop asks from
 * there next, for the other kind, and that answer is then final without
 * the fstat that tells a hole before EOF from a stub's hole at EOF, and
 * without the lseek(SEEK_CUR) that keeps the offset to put back on
 * failure: the loop costs what it costs with lseek.  It serves that one
 * call only.  Were fd closed and reopened on another file in between, the
 * answer would still be the kernel's, a true one (never data called a
 * hole), if perhaps a coarser one than a walk would give.
 */
#ifdef SM_HAVE_SEEK
static SM_THREAD_LOCAL struct {
	int fd;
	int64_t at;
	enum sparse_map_kind next;	/* what the loop asks there next */
	bool native;			/* the file system's SEEK is its own */
	int64_t type;			/* its f_type, 0 if not asked */
	int64_t size;			/* the file's size as last seen, or -1 */
} proof = { -1, -1, SPARSE_MAP_DATA, false, 0, -1 };
#endif

/* What the kernel said, and what a failed call must put back. */
struct ask {
	int64_t native;		/* the kernel's answer, where the offset now is; -1: none */
	int64_t before;		/* the offset before the call, where native >= 0 */
};

#ifdef SM_HAVE_SEEK
/* The file's size, asked once a call (-1 where fd is no regular file). */
static int64_t file_size(int fd, int64_t *size)
{
	struct stat st;

	if (*size < 0 && sm_sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		*size = (int64_t)st.st_size;
	return *size;
}
#endif

/*
 * The kernel's own answer where it is final (the file offset is then at
 * it), or -ENXIO where that is final; else SM_ASK_AGAIN, with a->native
 * the kernel's answer if it moved the offset (-1 if not), or -errno.
 */
static int64_t ask_kernel(int fd, int64_t offset, enum sparse_map_kind want, struct ask *a)
{
	a->native = -1;
	a->before = -1;
#ifdef SM_HAVE_SEEK
	int whence = want == SPARSE_MAP_DATA ? SEEK_DATA : SEEK_HOLE;
	bool proven = fd == proof.fd && offset == proof.at && want == proof.next;
	bool native = proven && proof.native, dense = false;
	int64_t size = proven ? proof.size : -1;
	int64_t type = proven ? proof.type : 0, r;
	struct stat st;

	proof.fd = -1;
	if (sm_env_names_backend())
		return SM_ASK_AGAIN;	/* the walk uses the backend it names */
	if (proven) {
		a->before = offset;	/* where our last call left it */
	} else {
		/* Only a regular file's offset is worth moving; the walk
		 * says what else fd is. */
		if (sm_sys_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			return SM_ASK_AGAIN;
		size = (int64_t)st.st_size;
		dense = sm_sys_st_blocks(&st) * 512 >= size;
		if (sm_sys_fs_type(fd, &type) < 0)
			type = 0;
		/* A file system whose SEEK is its own answers finally, so
		 * the offset needs no keeping: no walk follows. */
		native = sm_fs_seeks_natively(type);
		if (!native) {
			a->before = sm_sys_lseek(fd, 0, SEEK_CUR);
			if (a->before < 0)
				return a->before;
		}
	}
	if (want == SPARSE_MAP_HOLE && file_size(fd, &size) >= 0 && offset >= size)
		return -ENXIO;
	r = sm_sys_lseek(fd, offset, whence);
	if (r >= 0)
		a->native = r;
	if (r == -ENXIO && want == SPARSE_MAP_DATA) {
		/* At or past EOF, or no data after offset: final, but for
		 * the last MiB below 2^63, where backend-seek.c distrusts
		 * "no more data" (tmpfs). */
		if (file_size(fd, &size) >= 0 &&
		    (offset >= size || size <= INT64_MAX - SM_MAX_BLKSIZE))
			return -ENXIO;
		return SM_ASK_AGAIN;
	}
	if (r < offset)
		return SM_ASK_AGAIN;	/* an error, or an answer breaking the contract */
	/* Data found past EOF is no answer: the bytes before it were skipped
	 * (a FUSE daemon may say so; no file system of the kernel's does).
	 * The file may have grown since its size was seen: look again. */
	if (want == SPARSE_MAP_DATA && !native && r >= size) {
		size = -1;
		if (file_size(fd, &size) < 0 || r >= size)
			return SM_ASK_AGAIN;
	}
	if (native || proven || (want == SPARSE_MAP_DATA && r > offset) ||
	    (want == SPARSE_MAP_HOLE && r < size)) {
		/* No stub says data beyond offset or a hole before EOF.  (A
		 * character device whose lseek answers its file position
		 * could say the first: the one answer trusted without fstat,
		 * to keep a walk at the kernel's cost.) */
		proof.fd = fd;
		proof.at = r;
		proof.next = want == SPARSE_MAP_DATA ? SPARSE_MAP_HOLE : SPARSE_MAP_DATA;
		proof.native = native;
		proof.type = type;
		proof.size = size;
		return r;
	}
	/* What a stub would say too: data at offset, the hole at EOF.  True
	 * all the same where every byte of the file is stored, as the probe
	 * believes it. */
	return dense ? r : SM_ASK_AGAIN;
#else
	(void)fd; (void)offset; (void)want;
	return SM_ASK_AGAIN;
#endif
}

SM_EXPORT int64_t sparse_map_lseek(int fd, int64_t offset, int whence)
{
	enum sparse_map_kind want = whence == SPARSE_MAP_SEEK_DATA ? SPARSE_MAP_DATA : SPARSE_MAP_HOLE;
	struct ask a;
	int64_t r;
	bool opened;

	if (whence != SPARSE_MAP_SEEK_DATA && whence != SPARSE_MAP_SEEK_HOLE) {
		/* lseek(2)'s own, so that a program may call this for every
		 * lseek: its result, errno and offset. */
		r = sm_sys_lseek(fd, offset, whence);
	} else if (offset < 0) {
		r = -ENXIO;
	} else {
		r = ask_kernel(fd, offset, want, &a);
		if (r == SM_ASK_AGAIN) {
			r = find(fd, offset, want, &opened);
			if (r < 0 && r != -ENXIO && opened && a.native >= offset)
				/* The walk failed part way (EIO, ENOMEM), but
				 * the kernel had answered, truly if coarsely:
				 * data at offset, or the hole at EOF.  Better
				 * that than an error; the offset is there. */
				r = a.native;
			else if (r >= 0)
				/* Even at the kernel's answer: the walk's
				 * map put the offset back, or failed to. */
				r = sm_sys_lseek(fd, r, SEEK_SET);
		}
		/* A failed call leaves the offset where it was, as lseek does. */
		if (r < 0 && a.native >= 0 && a.before >= 0)
			(void)sm_sys_lseek(fd, a.before, SEEK_SET);
	}
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
