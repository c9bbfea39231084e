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
 *      answer rather than read, since reading a ramfs hole stores it;
 *   5. under SPARSE_MAP_NO_READ, where only reading would find holes:
 *      SEEK's all-data answer, or NONE (all data, no system call).
 * A source that fails says only that it has no answer (sm_sys_no_answer()): AUTO
 * asks the next, at open and, through sm_fall_back(), in the middle of a
 * map, where FIEMAP with its sync, then SCAN, then NONE go on from there.
 * Before 1, FIEMAP without FIEMAP_FLAG_SYNC on any file (fiemap_first()):
 * written extents over every byte map a dense file with that one call; and
 * on ext4 (ext2 and ext3 share its f_type), XFS and Btrfs the map goes on
 * with it: a batch of extents a call instead of two lseeks a data range,
 * and SEEK asked only where the extents prove nothing (backend-fiemap.c;
 * on Btrfs that depends on the kernel, sm_btrfs_fiemap_holds_lock()).
 * SPARSE_MAP_BACKEND=seek|fiemap|scan|ranges|none stands in for a forced
 * backend where the caller asked for AUTO, and gives way to AUTO where it
 * cannot serve; SPARSE_MAP_DEBUG=1 prints the reasoning.  SPARSE_MAP_NO_ENV
 * reads neither.
 */
#include "config.h"

#include <errno.h>
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
	[SPARSE_MAP_BACKEND_NONE] = &sm_backend_none,
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

SM_EXPORT const char *sparse_map_backend_name(enum sparse_map_backend backend)
{
	switch (backend) {
	case SPARSE_MAP_BACKEND_AUTO:
		return "auto";
	case SPARSE_MAP_BACKEND_SEEK:
		return "seek";
	case SPARSE_MAP_BACKEND_FIEMAP:
		return "fiemap";
	case SPARSE_MAP_BACKEND_SCAN:
		return "scan";
	case SPARSE_MAP_BACKEND_RANGES:
		return "ranges";
	case SPARSE_MAP_BACKEND_NONE:
		return "none";
	}
	return NULL;
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

	/* Where no system call would find out, a descriptor that allows
	 * none (O_PATH) is refused all the same. */
	if (!b || id == SPARSE_MAP_BACKEND_NONE) {
		r = sm_map_access(map);
		if (r < 0)
			return r;
	}
	if (!b) {
		sm_debug(map, "%s: not built for this platform", sparse_map_backend_name(id));
		return -EOPNOTSUPP;
	}
	/* Reading on ramfs reads only blocks with pages. */
	if (b->reads_data || (map->flags & (SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES))) {
		r = sm_pagecache_check(map);
		if (r < 0)
			return r;
	}
	if (b->reads_data && (map->flags & SPARSE_MAP_NO_READ)) {
		sm_debug(map, "%s: reads the file, and SPARSE_MAP_NO_READ forbids that", b->name);
		return -EINVAL;
	}
	if (b->reads_data && (r = sm_map_access(map)) < 0)
		return r;
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
	sm_debug(map, "SPARSE_MAP_BACKEND=%s is not auto, seek, fiemap, scan, ranges or none; ignored", v);
	return SPARSE_MAP_BACKEND_AUTO;
}

bool sm_env_names_backend(void)
{
	const char *v = env("SPARSE_MAP_BACKEND");

	return v && *v && strcmp(v, "auto") != 0;
}

bool sm_fs_seeks_natively(int64_t type)
{
	return type == 0xEF53 /* ext2, ext3, ext4 */ || type == 0x58465342 /* XFS */ ||
	       type == 0x9123683E /* Btrfs */ || type == 0x01021994 /* tmpfs */;
}

/*
 * Whether the kernel named by release (uname(2)'s, "6.12.8-arch1" and the
 * like) holds Btrfs's io-tree lock over a whole FIEMAP call.  Linux 6.1
 * made btrfs_find_delalloc_in_range() what FIEMAP and SEEK share (6.1 to
 * 6.5 find written, unrecorded ranges by their extent maps, 6.6 on by
 * their ordered extents).  Commit b0ad381fa769 (v6.8-rc7, CVE-2024-35784,
 * a deadlock fix) stopped holding the lock across the call, and FIEMAP
 * could then call a hole what a write completing during the call had just
 * recorded; 978b63f7464a (v6.9-rc1, CVE-2024-27080) took the lock again.
 * Stable trees carried the first from 6.7.9 and into 6.6.y, and the second
 * from 6.6.26, so 6.6 before 6.6.26, 6.7 and 6.8 are refused whole, as are
 * kernels before 6.1 and a release that does not parse.  The number is
 * upstream's: a distribution kernel that took b0ad381fa769 and not its
 * repair is not known by it.
 */
bool sm_btrfs_fiemap_holds_lock(const char *release)
{
	unsigned long v[3] = { 0, 0, 0 };
	const char *p = release;
	int n = 0;

	while (n < 3 && *p >= '0' && *p <= '9') {
		unsigned long x = 0;

		for (; *p >= '0' && *p <= '9'; p++) {
			if (x > 100000)
				return false;
			x = x * 10 + (unsigned long)(*p - '0');
		}
		v[n++] = x;
		if (*p != '.')
			break;
		p++;
	}
	if (n < 2)
		return false;
	if (v[0] != 6)
		return v[0] > 6;
	if (v[1] == 6)
		return v[2] >= 26;
	return (v[1] >= 1 && v[1] <= 5) || v[1] >= 9;
}

#if defined(SM_HAVE_FIEMAP) && defined(SM_HAVE_SEEK)
/*
 * The file systems on which FIEMAP without sync, with backend-fiemap.c's
 * checks, never calls written data a hole (tests/fiemap-unsynced.sh shows
 * it case by case).  What proves a gap between extents a hole differs:
 *  - ext4 and XFS end a page's writeback only once its extent is written,
 *    so pages that are neither dirty nor under writeback prove their
 *    extents (SM_GAPS_CLEAN_PAGES);
 *  - Btrfs ends page writeback before the ordered extent puts the file
 *    extent item in place, so clean pages prove nothing there.  But its
 *    FIEMAP looks for holes as its SEEK_DATA does, with
 *    btrfs_find_delalloc_in_range(), which sees dirty ranges not yet
 *    written and ranges written but not yet recorded (ordered extents),
 *    and reports both as DELALLOC extents; and it holds the inode's
 *    io-tree lock over the range it answers for, which an ordered extent
 *    needs to insert its file extent item, and drops the ordered extent
 *    only after that.  So no gap in its answer covers bytes written
 *    before the call: the gaps are holes, and a DELALLOC extent is data
 *    (SM_GAPS_LOCKED).  sm_btrfs_fiemap_holds_lock() says on which kernels;
 *    elsewhere SEEK decides every gap (SM_GAPS_SEEK).
 * Without SEEK built, nothing could decide what the extents leave open,
 * and AUTO goes on as below.
 * unsynced_fiemap() sets the map's mode and says whether to take it.
 */
static bool fiemap_file_system(struct sparse_map *map)
{
	int64_t type = sm_map_fs_type(map);

	return type == 0x9123683E /* BTRFS_SUPER_MAGIC */ || type == 0xEF53 /* EXT4_SUPER_MAGIC */ ||
	       type == 0x58465342 /* XFS_SUPER_MAGIC */;
}

/* What proves a gap a hole on Btrfs: its FIEMAP itself where the kernel
 * holds the lock, else SEEK. */
static enum sm_fiemap_gaps btrfs_gaps(struct sparse_map *map)
{
	char release[128];
	int r = sm_sys_kernel_release(release, sizeof(release));

	if (r < 0) {
		sm_debug(map, "btrfs: the kernel release is unknown (%s): SEEK decides the gaps",
			 strerror(-r));
		return SM_GAPS_SEEK;
	}
	if (!sm_btrfs_fiemap_holds_lock(release)) {
		sm_debug(map, "btrfs: Linux %s may answer FIEMAP without its range locked, "
			 "or is not known: SEEK decides the gaps", release);
		return SM_GAPS_SEEK;
	}
	sm_debug(map, "btrfs: Linux %s answers FIEMAP with the range locked: its gaps are holes",
		 release);
	return SM_GAPS_LOCKED;
}

/* What proves a gap a hole on a file system fiemap_file_system() names. */
static enum sm_fiemap_gaps fs_gaps(struct sparse_map *map)
{
	return sm_map_fs_type(map) == 0x9123683E ? btrfs_gaps(map) : SM_GAPS_CLEAN_PAGES;
}

/* known: the map's mode was set by the file system before the first
 * answer, which was read by it. */
static bool unsynced_fiemap(struct sparse_map *map, int answer, bool known)
{
	if (!fiemap_file_system(map))
		return false;
	/* As below: no extent at all is believed only of a file with no blocks. */
	if (answer < 0 || (answer == 0 && map->st_blocks != 0))
		return false;
	if (known)
		return true;
	map->fiemap_gaps = fs_gaps(map);
	/* The first answer was read as SM_GAPS_SEEK reads it: the backend
	 * reads it again, or asks again where cachestat must come first. */
	if (map->fiemap_gaps != SM_GAPS_SEEK && map->backend_state)
		sm_backend_fiemap.reset(map);
	return true;
}

/* The device of the last file this thread found without FIEMAP (tmpfs,
 * ramfs, ...): the next file there is not asked first.  Only the order of
 * the questions depends on it, never an answer. */
static SM_THREAD_LOCAL struct {
	dev_t dev;
	bool valid;
} no_fiemap;
#endif

/*
 * FIEMAP first, without sync, whatever the file system: written extents
 * over every byte say all there is to say, since calling bytes data is
 * never wrong (only a hole needs a source that can be trusted).  So a
 * dense file costs this one question.  Else, on ext4, XFS and Btrfs the
 * map goes on with it (unsynced_fiemap()), and elsewhere the answer
 * is dropped.  A file with fewer blocks than bytes (blocks_short) most
 * likely has a hole, which only the file system's own rule can call one:
 * its type is asked first, so that the first FIEMAP is read by that rule
 * and is the map's answer too (on ext4 and XFS backend-fiemap.c asks
 * cachestat just before it), and tmpfs, which has SEEK_DATA and no
 * FIEMAP, is not asked at all.  1 if FIEMAP maps the file, 0 if not,
 * -errno.
 */
static int fiemap_first(struct sparse_map *map)
{
#if defined(SM_HAVE_FIEMAP) && defined(SM_HAVE_SEEK)
	bool known = map->blocks_short && fiemap_file_system(map);
	int r;

	if (map->blocks_short && sm_map_fs_type(map) == 0x01021994 /* TMPFS_MAGIC */) {
		no_fiemap.valid = true;
		no_fiemap.dev = map->dev;
		return 0;
	}
	/* No FIEMAP on this device's file system last time.  Skipping it
	 * only reorders the questions, so the device's number is not checked
	 * against its file system again at the cost of an fstatfs a file (a
	 * number can be reused after an unmount): a file with fewer blocks
	 * than bytes there asks anyway, and puts the record right. */
	if (!known && no_fiemap.valid && no_fiemap.dev == map->dev)
		return 0;
	map->fiemap_unsynced = true;
	/* Until the file system is known, SEEK decides every gap. */
	map->fiemap_gaps = known ? fs_gaps(map) : SM_GAPS_SEEK;
	r = sm_backend_fiemap.usable(map);
	/* Remembered only of a file system known to have no FIEMAP: where
	 * one fails now and then, the next file is asked again. */
	no_fiemap.valid = r == -EOPNOTSUPP && sm_map_fs_type(map) != 0 && !fiemap_file_system(map);
	no_fiemap.dev = map->dev;
	if (r == 2) {
		use(map, SPARSE_MAP_BACKEND_FIEMAP,
		    "FIEMAP without sync: written extents cover every byte");
		return 1;
	}
	if (r >= 0 && unsynced_fiemap(map, r, known)) {
		use(map, SPARSE_MAP_BACKEND_FIEMAP,
		    map->fiemap_gaps == SM_GAPS_SEEK ?
		    "Btrfs: FIEMAP without sync, SEEK for every gap and unsure extent" :
		    map->fiemap_gaps == SM_GAPS_LOCKED ?
		    "Btrfs: FIEMAP without sync, its gaps holes and its DELALLOC extents data" :
		    "ext4 or XFS: FIEMAP without sync, SEEK where the extents prove nothing");
		return 1;
	}
	if (map->backend_state)
		sm_backend_fiemap.fini(map);
	map->fiemap_unsynced = false;
	map->fiemap_gaps = SM_GAPS_SEEK;
	if (!sm_sys_no_answer(r))
		return r;
#else
	(void)map;
#endif
	return 0;
}

/* Whether FIEMAP (with its sync) answers and agrees with st_blocks: 1 to
 * take it, 0 not to, or -errno. */
static int fiemap_trusted(struct sparse_map *map)
{
#ifdef SM_HAVE_FIEMAP
	int r = sm_backend_fiemap.usable(map);

	if (r > 0 || (r == 0 && map->st_blocks == 0))
		return 1;
	if (r == 0)
		sm_debug(map, "fiemap: no extent, yet st_blocks is %lld: not trusted",
			 (long long)map->st_blocks);
	else if (r == -EOPNOTSUPP)
		sm_debug(map, "fiemap: unsupported here");
	else if (sm_sys_no_answer(r))
		sm_debug(map, "fiemap: %s: not trusted", strerror(-r));
	else
		return r;
#else
	(void)map;
#endif
	return 0;
}

/* Where nothing reports holes: SCAN, if it may read, and reading stores
 * nothing (ramfs holes are read only where pages show them, pagecache.c);
 * under SPARSE_MAP_NO_READ, ramfs's pages say it without a read. */
static bool scan_may_serve(struct sparse_map *map)
{
	if (!map->readable)
		return false;
	if (sm_pagecache_is_ramfs(map))
		return map->pages_are_storage;
	return !(map->flags & SPARSE_MAP_NO_READ);
}

static int probe(struct sparse_map *map)
{
	bool seek_says_all_data = false;
	int r;

	if (map->st_size == 0 && !map->is_blockdev) {
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
		r = sm_map_access(map);
		if (r < 0)
			return r;
		if (map->flags & SPARSE_MAP_NO_READ)
			return use(map, SPARSE_MAP_BACKEND_NONE,
				   "a block device, whose zeroes only reading finds: SPARSE_MAP_NO_READ");
		if (map->readable)
			return use(map, SPARSE_MAP_BACKEND_SCAN,
				   "a block device: only its bytes say where zeroes are");
		sm_debug(map, "a block device not open for reading: nothing can map it");
		return -EBADF;
	}

	r = fiemap_first(map);
	if (r != 0)
		return r < 0 ? r : 0;
	/* Whether ramfs's pages are its storage matters where the map may
	 * read; a file whose st_blocks covers every byte is settled by
	 * SEEK_HOLE below unless SEEK is the stub, and is asked after. */
	if (map->blocks_short || (map->flags & (SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES))) {
		r = sm_pagecache_check(map);
		if (r < 0)
			return r;
	}
#ifdef SM_HAVE_SEEK
	{
		int64_t hole = sm_map_lseek(map, 0, SEEK_HOLE);
		bool allocated = !map->blocks_short;

		map->probe_hole = hole > 0 ? hole : 0;
		if (hole >= 0 && hole < map->st_size)
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
				 (long long)map->st_size);
		} else if (sm_sys_unsupported((int)hole) || hole == -ENXIO) {
			sm_debug(map, "seek: unsupported here (%s)", strerror((int)-hole));
		} else if (sm_sys_no_answer((int)hole)) {
			sm_debug(map, "seek: SEEK_HOLE(0) fails (%s): not trusted", strerror((int)-hole));
		} else {
			return (int)hole;
		}
	}
#endif
	r = sm_pagecache_check(map);
	if (r < 0)
		return r;
	r = fiemap_trusted(map);
	if (r < 0)
		return r;
	if (r > 0)
		return use(map, SPARSE_MAP_BACKEND_FIEMAP, "FIEMAP answers, and agrees with st_blocks");

	/* What is left depends on whether fd may be read. */
	r = sm_map_access(map);
	if (r < 0)
		return r;
	if (map->readable) {
		/* Windows (sys-windows.c), which asks for read access; elsewhere
		 * it answers -EOPNOTSUPP at once. */
		r = sm_backend_ranges.usable(map);
		if (r == 0)
			return use(map, SPARSE_MAP_BACKEND_RANGES,
				   "FSCTL_QUERY_ALLOCATED_RANGES answers");
		if (r != -EOPNOTSUPP && !sm_sys_no_answer(r))
			return r;
	}

	if (scan_may_serve(map))
		return use(map, SPARSE_MAP_BACKEND_SCAN, !map->pages_are_storage ?
			   "no backend reports holes here: read the file" :
			   (map->flags & SPARSE_MAP_NO_READ) ?
			   "ramfs: a block without a page is a hole, one with a page data, unread" :
			   "no backend reports holes here: skip the blocks without pages, read the rest");
	/* Reading a ramfs hole stores it.  Where its holes cannot be seen
	 * without reading, SEEK's answer (all data) leaves the file as it is. */
	if (seek_says_all_data)
		return use(map, SPARSE_MAP_BACKEND_SEEK, sm_pagecache_is_ramfs(map) ?
			   "ramfs, whose holes only reading could find, and reading would "
			   "store them: SEEK's answer, all data, leaves the file as it is" :
			   map->readable ? "SPARSE_MAP_NO_READ: SEEK's answer, all data" :
			   "cannot read the fd: SEEK's answer, all data, is safe");
	/* Lack of hole information is no error: every byte is data. */
	return use(map, SPARSE_MAP_BACKEND_NONE, (map->flags & SPARSE_MAP_NO_READ) ?
		   "SPARSE_MAP_NO_READ, and no source of hole information answers: all data" :
		   "not open for reading, and no source of hole information answers: all data");
}

int sm_fall_back(struct sparse_map *map, int64_t pos, int err)
{
	const struct sm_backend *from = map->backend;
	bool fiemap = from->id == SPARSE_MAP_BACKEND_FIEMAP;
	bool synced_fiemap = fiemap && !map->fiemap_unsynced;
	enum sparse_map_backend to;
	int r;

	/* A backend the caller named keeps its errors; SCAN's are read errors. */
	if (!map->auto_mode || from->reads_data || from->id == SPARSE_MAP_BACKEND_NONE ||
	    !sm_sys_no_answer(err))
		return err;
	sm_debug(map, "%s: fails at %lld (%s): the next source of hole information goes on",
		 from->name, (long long)pos, strerror(-err));
	/* FIEMAP without sync is AUTO's only on ext4, XFS and Btrfs, whose
	 * SEEK_DATA/SEEK_HOLE are their own: SEEK goes on, and neither it nor
	 * any source after it flushes what that FIEMAP promised to leave
	 * dirty.  (Btrfs, for one, answers a full batch out of order where a
	 * preallocated extent holds dirty pages: backend-fiemap.c.) */
	if (fiemap && map->fiemap_unsynced)
		map->no_flush = true;
	map->fiemap_unsynced = false;
	map->fiemap_gaps = SM_GAPS_SEEK;
	if (fiemap && map->no_flush && backends[SPARSE_MAP_BACKEND_SEEK]) {
		to = SPARSE_MAP_BACKEND_SEEK;	/* reads nothing: no access check */
	} else {
		r = synced_fiemap || map->no_flush ? 0 : fiemap_trusted(map);
		if (r == 0)
			r = sm_map_access(map);
		if (r < 0)
			return r;
		if (r > 0)
			to = SPARSE_MAP_BACKEND_FIEMAP;
		else if (scan_may_serve(map))
			to = SPARSE_MAP_BACKEND_SCAN;
		else
			to = SPARSE_MAP_BACKEND_NONE;
	}
	map->probe_hole = 0;	/* SEEK's first answer is asked again */
	from->fini(map);
	sm_readbuf_reset(map);
	use(map, to, "goes on from there");
	r = map->backend->init(map);
	if (r < 0)
		map->backend = &sm_backend_none;	/* no state to lose, and never wrong */
	return r;
}

int sm_choose_backend(struct sparse_map *map, enum sparse_map_backend requested)
{
	bool use_env = !(map->flags & SPARSE_MAP_NO_ENV);
	const char *dbg = use_env ? env("SPARSE_MAP_DEBUG") : NULL;
	int r;

	map->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
	if (requested != SPARSE_MAP_BACKEND_AUTO)
		return force(map, requested);
	map->auto_mode = true;
	if (use_env) {
		/* A backend the environment names gives way to AUTO where it
		 * cannot serve: a user debugging one program must not break
		 * every other program that runs with it. */
		requested = backend_from_env(map);
		if (requested != SPARSE_MAP_BACKEND_AUTO) {
			sm_debug(map, "SPARSE_MAP_BACKEND=%s", sparse_map_backend_name(requested));
			r = force(map, requested);
			if (r == 0)
				return 0;
			sm_debug(map, "SPARSE_MAP_BACKEND=%s cannot map this file (%s): AUTO chooses",
				 sparse_map_backend_name(requested), strerror(-r));
		}
	}
	return probe(map);
}
