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

/* The walk: 1 with *result, or -errno; *opened says whether the map
 * opened, i.e. fd is a file the library can map. */
static int64_t find(int fd, int64_t offset, enum sparse_map_kind want, bool *opened)
{
	struct sparse_map *map;
	struct sparse_map_range piece;
	int64_t result;
	int r;

	*opened = false;
	r = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
	if (r < 0)
		return r;
	*opened = true;
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

#define SM_ASK_AGAIN (-1)	/* not an errno: the kernel's answer is not final */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SM_THREAD_LOCAL _Thread_local
#else
#define SM_THREAD_LOCAL __thread
#endif

/*
 * The data this thread's last call found beyond its offset, and on which
 * fd: proof that the file system of fd reports holes.  A walk asks
 * SEEK_HOLE right there next, and that answer is then final without the
 * fstat that tells a hole before EOF from a stub's hole at EOF, so the walk
 * costs what it costs with lseek.  It serves that one call only.  Were fd
 * closed and reopened on another file in between, the answer would still
 * be the kernel's, a true one (never data called a hole), if perhaps a
 * coarser one than a walk would give.
 */
#ifdef SM_HAVE_SEEK
static SM_THREAD_LOCAL struct {
	int fd;
	int64_t data;
} last_data = { -1, -1 };
#endif

/*
 * The kernel's own answer where it is final (the file offset is then at
 * it), or -ENXIO where that is final; else SM_ASK_AGAIN, with *native the
 * kernel's answer (-1 if it had none), at which the file offset now is.
 */
static int64_t ask_kernel(int fd, int64_t offset, enum sparse_map_kind want, int64_t *native)
{
	*native = -1;
#ifdef SM_HAVE_SEEK
	struct stat st;
	int64_t r;

	if (sm_env_names_backend())
		return SM_ASK_AGAIN;	/* the walk uses the backend it names */
	if (want == SPARSE_MAP_HOLE && fd == last_data.fd && offset == last_data.data) {
		last_data.fd = -1;
		r = sm_sys_lseek(fd, offset, SEEK_HOLE);
		if (r < offset)
			return SM_ASK_AGAIN;
		*native = r;
		return r;
	}
	last_data.fd = -1;
	if (want == SPARSE_MAP_HOLE) {
		/* The size first: a hole is final if it is before EOF, and
		 * only a regular file's offset is worth moving. */
		if (sm_sys_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			return SM_ASK_AGAIN;
		if (offset >= (int64_t)st.st_size)
			return -ENXIO;
		r = sm_sys_lseek(fd, offset, SEEK_HOLE);
		if (r < offset)
			return SM_ASK_AGAIN;	/* an error, or an answer breaking the contract */
		*native = r;
		return r < (int64_t)st.st_size ? r : SM_ASK_AGAIN;
	}
	r = sm_sys_lseek(fd, offset, SEEK_DATA);
	if (r == -ENXIO) {
		/* At or past EOF, or no data after offset: final, but for
		 * the last MiB below 2^63, where backend-seek.c distrusts
		 * "no more data" (tmpfs). */
		if (sm_sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    (offset >= (int64_t)st.st_size ||
		     (int64_t)st.st_size <= INT64_MAX - SM_MAX_BLKSIZE))
			return -ENXIO;
		return SM_ASK_AGAIN;
	}
	if (r < offset)
		return SM_ASK_AGAIN;
	*native = r;
	/* Data beyond offset: no stub says that, so it comes from a file
	 * system that knows its holes.  (A character device whose lseek
	 * answers its file position could say it too: the one answer
	 * trusted without fstat, to keep a walk at the kernel's cost.) */
	if (r == offset)
		return SM_ASK_AGAIN;
	last_data.fd = fd;
	last_data.data = r;
	return r;
#else
	(void)fd; (void)offset; (void)want;
	return SM_ASK_AGAIN;
#endif
}

SM_EXPORT int64_t sparse_map_lseek(int fd, int64_t offset, int whence)
{
	enum sparse_map_kind want = whence == SPARSE_MAP_SEEK_DATA ? SPARSE_MAP_DATA : SPARSE_MAP_HOLE;
	int64_t r, native;
	bool opened;

	if (whence != SPARSE_MAP_SEEK_DATA && whence != SPARSE_MAP_SEEK_HOLE) {
		errno = EINVAL;
		return -1;
	}
	if (offset < 0) {
		errno = ENXIO;
		return -1;
	}
	r = ask_kernel(fd, offset, want, &native);
	if (r == SM_ASK_AGAIN) {
		r = find(fd, offset, want, &opened);
		if (r < 0 && r != -ENXIO && opened && native >= 0)
			/* The walk failed part way (EIO, ENOMEM), but the
			 * kernel had answered, truly if coarsely: data at
			 * offset, or the hole at EOF.  Better that than an
			 * error; and the offset is already there. */
			r = native;
		else if (r >= 0)
			r = sm_sys_lseek(fd, r, SEEK_SET);
	}
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
