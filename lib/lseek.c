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
#ifdef SM_HAVE_SEEK
#include <pthread.h>
#endif
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sparse-map-private.h"

#define SM_ASK_AGAIN (-1)	/* not an errno: the kernel's answer is not final */
#define SM_MAX_READ (1 << 30)	/* above any read buffer (zeroes.c caps reads) */

/*
 * The map that this thread's SEEK_DATA/SEEK_HOLE loop walks, kept open
 * between calls where it reads the file (SCAN: a file system that answers
 * with the stub, such as ramfs, FUSE without lseek, NFSv3 or 9p).  Opening
 * a map there costs a probe and, on ramfs, a count of the whole file's
 * pages; walking it from scratch re-reads what the last call read.  So a
 * call on the same fd goes on with the map while fstat says the file is
 * the one it was: same device, inode, size, st_blocks, mtime and ctime,
 * to the nanosecond.  Anything else (a write, truncate, punch, another
 * file behind the fd) opens a fresh map, and so does a walk that fails.
 *
 * What a call takes from the calls before it is only what cannot turn a
 * byte of data into a hole: the probe's choice, the blocks read as data
 * (calling bytes data is never wrong), and on ramfs the blocks seen
 * without a page, which a write could fill only by adding a page, and so
 * changing st_blocks.  Blocks read as zeroes are read again: a write may
 * fill them and leave every field of fstat as it was (Linux stamps the
 * times when a write begins, before it copies anything, so one that
 * stalls faulting in its buffer lands later unstamped; a write through a
 * shared mapping to a page already written that way stamps nothing).
 * Blocks seen without a page are believed only where the file's ctime was
 * older than the call that saw them by a tick of the coarsest clock: two
 * changes within one tick of a coarse clock (ramfs: a jiffy; FAT: two
 * seconds) leave the same ctime, and a truncation and a write within it
 * could leave st_blocks as it was too.  (Git's "racily clean" index
 * entries, the same problem.)
 *
 * One map a thread, closed when a call reaches the end of the file (no
 * data left, or the hole at EOF), where loops end, or when a call asks
 * about another fd: memory stays that of one map (and its 256 KiB read
 * buffer) per thread in a loop.
 */
#define SM_TICK_NS 2000000000LL		/* FAT's mtime, the coarsest clock seen */

/* Where the system has SEEK_DATA and SEEK_HOLE (not Windows, where every
 * call walks a fresh map). */
#ifdef SM_HAVE_SEEK
static SM_THREAD_LOCAL struct {
	struct sparse_map *map;
	int fd;
	struct stat st;		/* what fstat said when the map opened */
	int64_t began;		/* when the last call began, ns since the epoch */
	int64_t gap;		/* the last SEEK_DATA's way to data, and a block; 0: none */
	char env[32];		/* SPARSE_MAP_BACKEND then, which chose the backend */
} walk = { NULL, -1, { 0 }, 0, 0, "" };

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

#if defined(__APPLE__)
#define SM_MTIME(st) (&(st)->st_mtimespec)
#define SM_CTIME(st) (&(st)->st_ctimespec)
#else
#define SM_MTIME(st) (&(st)->st_mtim)
#define SM_CTIME(st) (&(st)->st_ctim)
#endif

static int64_t realtime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return INT64_MIN;	/* trust nothing read before */
	return ns_of(&ts);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       sm_sys_st_blocks(a) == sm_sys_st_blocks(b) && a->st_mode == b->st_mode &&
	       ns_of(SM_MTIME(a)) == ns_of(SM_MTIME(b)) && ns_of(SM_CTIME(a)) == ns_of(SM_CTIME(b));
}

/* Whether SPARSE_MAP_BACKEND is what it was when the map opened (a
 * program may set it between calls, as tests/matrix does): else the map
 * may not be the one a fresh call would walk.  With env not NULL, records
 * it there; false where it is too long to record. */
static bool env_same(char *env)
{
	const char *v = getenv("SPARSE_MAP_BACKEND");

	if (!v)
		v = "";
	if (strlen(v) >= sizeof(walk.env))
		return false;
	if (env) {
		strcpy(env, v);
		return true;
	}
	return strcmp(v, walk.env) == 0;
}

/*
 * A thread that ends in the middle of a loop (an error, a file it gave up
 * on) leaves its kept map to a thread-specific key, whose destructor closes
 * it: threads that come and go leave nothing behind.  A map is kept only
 * where the key holds it.  The library is linked never to be unloaded
 * (-z nodelete, Makefile.am), so the destructor outlives every thread and
 * repeated dlopen/dlclose find the same key; where the linker cannot say
 * so, unloading deletes the key (no thread exit calls into code that is
 * gone) and frees the unloading thread's map, and other threads' kept maps
 * are lost with the library.
 */
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static pthread_key_t kept_key;
static bool kept_key_made;

static void kept_map_free(void *map)
{
	/* The fd may be another file's by now: leave its offset alone. */
	((struct sparse_map *)map)->offset_moved = false;
	sparse_map_close(map);
}

/* The thread ends: a destructor of another key that runs after this one
 * may still call sparse_map_lseek(), which must not find the map. */
static void kept_map_thread_end(void *map)
{
	walk.map = NULL;
	walk.fd = -1;
	kept_map_free(map);
}

static void kept_key_make(void)
{
	kept_key_made = pthread_key_create(&kept_key, kept_map_thread_end) == 0;
}

__attribute__((destructor)) static void kept_key_delete(void)
{
	if (!kept_key_made)
		return;
	(void)pthread_key_delete(kept_key);
	kept_key_made = false;
	if (walk.map)
		kept_map_thread_end(walk.map);
}

/* Whether this thread may keep map: the key holds it from now on. */
static bool keep_map(struct sparse_map *map)
{
	return pthread_once(&kept_once, kept_key_make) == 0 && kept_key_made &&
	       pthread_setspecific(kept_key, map) == 0;
}

static void walk_close(void)
{
	if (walk.map) {
		if (kept_key_made)
			(void)pthread_setspecific(kept_key, NULL);
		kept_map_free(walk.map);
	}
	walk.map = NULL;
	walk.fd = -1;
}

/* A map that stays open between calls puts the offset back after each
 * walk, not at close, by when fd may be another file's: 0, or -errno. */
static int put_offset_back(struct sparse_map *map)
{
	int64_t back;

	if (!map->offset_moved)
		return 0;
	map->offset_moved = false;
	back = sm_sys_lseek(map->fd, map->saved_offset, SEEK_SET);
	return back < 0 ? (int)back : 0;
}
#endif

/* From offset to the first piece of the kind asked for: the answer, or -errno. */
static int64_t walk_map(struct sparse_map *map, int64_t offset, enum sparse_map_kind want)
{
	struct sparse_map_range piece;
	int r;

	if (offset >= map->size)
		return -ENXIO;
	while ((r = sm_next_piece(map, &piece)) == 1 && piece.kind != want)
		;
	if (r == 1)
		return piece.offset;
	if (r == 0)
		/* No piece of that kind: no data left, or the virtual hole at EOF. */
		return want == SPARSE_MAP_DATA ? -ENXIO : map->size;
	return r;
}

#ifdef SM_HAVE_SEEK
/*
 * How much a call's first read asks for.  Each call reads the zeroes it
 * calls a hole itself, and a read that runs on past the data it finds
 * reads zeroes the next call reads again; a read that stops short costs
 * another read, which on FUSE or NFS is a round trip.  So SEEK_DATA's
 * first read is as long as the last SEEK_DATA's way to its data and one
 * block (a file written in a pattern has holes alike); it doubles from
 * there.  SEEK_HOLE's first is one block: the data it walks over was
 * mostly read, and kept, by the SEEK_DATA before it.
 */
static int64_t first_read(const struct sparse_map *map, enum sparse_map_kind want)
{
	return want == SPARSE_MAP_DATA && walk.gap > 0 ? walk.gap : map->blksize;
}

/* After a walk with the kept map: note SEEK_DATA's way to the data, and
 * close the map where the loop has ended. */
static int64_t walk_done(int64_t offset, int64_t r, enum sparse_map_kind want)
{
	if (!walk.map)
		return r;
	if (want == SPARSE_MAP_DATA && r >= offset) {
		int64_t bs = walk.map->blksize, from = offset - offset % bs;

		/* Whole blocks (a read that ends inside one is read again),
		 * and no more than a read ever asks for. */
		walk.gap = r - from < SM_MAX_READ ? (r - from) / bs * bs + bs : SM_MAX_READ;
	}
	if (r == -ENXIO || (want == SPARSE_MAP_HOLE && r == walk.map->size))
		walk_close();
	return r;
}
#endif

/* The walk with the kept map, where fd is still its file: the answer, or
 * SM_ASK_AGAIN.  It leaves the offset as it was. */
static int64_t walk_kept(int fd, int64_t offset, enum sparse_map_kind want)
{
#ifdef SM_HAVE_SEEK
	struct sparse_map *map = walk.map;
	struct stat st;
	int64_t began, r;
	bool keep;

	if (!map)
		return SM_ASK_AGAIN;
	if (walk.fd != fd || !env_same(NULL) || sm_sys_fstat(fd, &st) < 0 ||
	    !same_file(&st, &walk.st)) {
		walk_close();
		return SM_ASK_AGAIN;
	}
	began = realtime_ns();
	keep = walk.began != INT64_MIN && ns_of(SM_CTIME(&st)) < walk.began - SM_TICK_NS;
	walk.began = began;
	map->pos = offset;
	map->refine.active = false;
	map->lookahead.full = false;
	map->read_len = first_read(map, want);
	/* Blocks once read as data stay data; zeroes are read again. */
	sm_readbuf_keep_data(map, offset);
	/* ramfs: pages seen a moment ago are asked about again (what was
	 * seen lay after the last offset, not necessarily after this one);
	 * blocks seen without a page are believed while st_blocks is as it
	 * was, which a page added since would have changed, and only where
	 * the clock rule above holds. */
	map->present_to = 0;
	if (!keep)
		map->absent_from = map->absent_to = 0;
	r = walk_map(map, offset, want);
	if (put_offset_back(map) < 0 || (r < 0 && r != -ENXIO)) {
		/* A fresh map, and the kernel, have their say again. */
		walk_close();
		return SM_ASK_AGAIN;
	}
	return walk_done(offset, r, want);
#else
	(void)fd; (void)offset; (void)want;
	return SM_ASK_AGAIN;
#endif
}

/* The walk with a fresh map: the answer, or -errno; *opened says whether
 * the map opened, i.e. fd is a file the library can map.  It leaves the
 * offset as it was, and keeps the map where it reads the file. */
static int64_t find(int fd, int64_t offset, enum sparse_map_kind want, bool *opened)
{
	struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;
	struct sparse_map *map;
	struct stat st;
	int64_t result;
	int r;

#ifdef SM_HAVE_SEEK
	int64_t began = realtime_ns();

	walk_close();
#endif
	*opened = false;
	o.start = offset;
	r = sm_sys_fstat(fd, &st);
	if (r < 0)
		return r;	/* as the map's own fstat would have failed */
	o.st = &st;
	r = sparse_map_open_with(fd, &o, &map);
	if (r < 0)
		return r;
	*opened = true;
	map->for_lseek = true;
	map->read_len = map->blksize;
	result = walk_map(map, offset, want);
#ifdef SM_HAVE_SEEK
	if (map->backend == &sm_backend_scan && !map->is_blockdev && S_ISREG(st.st_mode) &&
	    (result >= 0 || result == -ENXIO) && env_same(walk.env)) {
		/* The probe may have moved the offset. */
		r = put_offset_back(map);
		if (r < 0) {
			sparse_map_close(map);
			return r;
		}
		if (keep_map(map)) {
			walk.map = map;
			walk.fd = fd;
			walk.st = st;
			walk.began = began;
			walk.gap = 0;
			return walk_done(offset, result, want);
		}
	}
#endif
	sparse_map_close(map);	/* puts the offset back; the caller's lseek moves it */
	return result;
}


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
	bool own_seek;		/* the file system's SEEK is its own (sm_fs_seeks_natively()) */
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
	a->own_seek = false;
#ifdef SM_HAVE_SEEK
	int whence = want == SPARSE_MAP_DATA ? SEEK_DATA : SEEK_HOLE;
	bool proven = fd == proof.fd && offset == proof.at && want == proof.next;
	bool native = proven && proof.native, dense = false;
	int64_t size = proven ? proof.size : -1;
	int64_t type = proven ? proof.type : 0, r;
	int64_t trusted;	/* sm_trusted_end() of the file's size */
	bool huge;
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
		dense = sm_blocks_cover(sm_sys_st_blocks(&st), size);
		if (sm_sys_fs_type(fd, &type) < 0)
			type = 0;
		/* A file system whose SEEK is its own answers finally, so
		 * the offset needs no keeping: no walk follows.  But for a
		 * file that reaches the last folio below 2^63, where no
		 * kernel answer is final (map.c, sm_trusted_end()). */
		native = sm_fs_seeks_natively(type) && sm_trusted_end(size) == size;
		if (!native) {
			a->before = sm_sys_lseek(fd, 0, SEEK_CUR);
			if (a->before < 0)
				return a->before;
		}
	}
	a->own_seek = sm_fs_seeks_natively(type);
	if (want == SPARSE_MAP_HOLE && file_size(fd, &size) >= 0 && offset >= size)
		return -ENXIO;
	/* Of a file that reaches the last folio below 2^63, the map answers
	 * for that folio and for every answer that lands in it. */
	trusted = file_size(fd, &size) >= 0 ? sm_trusted_end(size) : INT64_MAX;
	huge = trusted < size;
	if (huge && offset >= trusted && offset < size)
		return SM_ASK_AGAIN;
	r = sm_sys_lseek(fd, offset, whence);
	if (r >= 0)
		a->native = r;
	if (r == -ENXIO && want == SPARSE_MAP_DATA) {
		/* At or past EOF, or no data after offset: final. */
		if (file_size(fd, &size) >= 0 && (offset >= size || !huge))
			return -ENXIO;
		return SM_ASK_AGAIN;
	}
	if (r < offset)
		return SM_ASK_AGAIN;	/* an error, or an answer breaking the contract */
	if (huge && r >= trusted)
		return SM_ASK_AGAIN;
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

/*
 * After "no data at or beyond offset": whether the file holds more than its
 * size says.  procfs files say 0 bytes and sysfs attributes 4096, and read
 * what they read; the map covers [0, size), and a read past it may still
 * return bytes.  Where one does, at max(offset, size), the answer is not
 * "no data": it is what lseek(2) says where lseek refuses the file (EINVAL
 * on procfs' seq files), else data there, up to where reads end (counted
 * up to 1 MiB a call, so that a file that never ends costs a bounded
 * call).  Not asked on a file system whose SEEK is its own: none of those
 * holds bytes past its size.
 */
static int64_t beyond_size(int fd, int64_t offset, enum sparse_map_kind want)
{
	char buf[4096];
	struct stat st;
	int64_t from, end;
	ssize_t n;

	if (sm_sys_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENXIO;
	from = offset > (int64_t)st.st_size ? offset : (int64_t)st.st_size;
	if (from > offset && want == SPARSE_MAP_HOLE)
		return -ENXIO;	/* no hole before EOF is ENXIO: not ours to change */
	n = sm_sys_pread(fd, buf, 1, from);
	if (n <= 0)
		return -ENXIO;
#ifdef SM_HAVE_SEEK
	{
		int64_t k = sm_sys_lseek(fd, offset, want == SPARSE_MAP_DATA ? SEEK_DATA : SEEK_HOLE);

		if (k < 0 && k != -ENXIO)
			return k;	/* the offset has not moved */
	}
#endif
	if (want == SPARSE_MAP_DATA)
		return from;
	for (end = from; end - from < (1 << 20);) {
		n = sm_sys_pread(fd, buf, sizeof(buf), end);
		if (n <= 0)
			break;
		end += n;
	}
	return end;
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
		/* lseek's order: a bad descriptor or a pipe before the offset. */
		r = sm_sys_lseek(fd, 0, SEEK_CUR);
		r = r < 0 ? r : -ENXIO;
	} else {
		a.native = a.before = -1;
		a.own_seek = false;
		r = walk_kept(fd, offset, want);
		if (r >= 0)
			r = sm_sys_lseek(fd, r, SEEK_SET);
		else if (r == SM_ASK_AGAIN)
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
		if (r == -ENXIO && !a.own_seek) {
			r = beyond_size(fd, offset, want);
			if (r >= 0)
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
