/* SPDX-License-Identifier: MIT */
/*
 * AUTO never calls written data a hole and never flushes (issue 11): on
 * ext4, XFS and Btrfs it maps with FIEMAP without FIEMAP_FLAG_SYNC (and
 * on Btrfs asks SEEK of every gap), so each way that unsynced data can
 * hide from FIEMAP is a case here, written and then mapped without any
 * sync:
 *   prealloc-write      writes into fallocated (unwritten) space
 *   prealloc-past-eof   fallocate KEEP_SIZE, then writes that extend into it
 *   delalloc            buffered writes into holes
 *   writeback           both, then sync_file_range(SYNC_FILE_RANGE_WRITE)
 *   truncate-up         fsynced data, truncated up, written past the old end
 *   synced-then-dirty   a fsynced fragmented file, then dirty writes in it
 *   reflink             FICLONE of a fsynced file, then writes into the clone
 *   compressible        1 MiB of one byte (compressed under compress-force)
 *   writeback-race      64 times: write, start writeback, map at once
 *   concurrent          a thread writes while maps run; stable blocks stay data
 *   cow-fork            XFS: a write next to a block copied on write
 *   grown-inline        ext4 inline_data: 40 bytes fsynced (in the inode),
 *                       3000 more unsynced; the kernel's SEEK fails there
 *   clean               a fsynced file: AUTO takes FIEMAP where it may,
 *                       asks cachestat once and SEEK never; a dense file
 *                       never asks cachestat
 *   recorded-during     Btrfs's case: a thread writes into holes (or
 *                       fallocated space), starts writeback, fsyncs and
 *                       reflinks, so ordered extents complete while raw
 *                       FIEMAP calls and maps run; what was written before
 *                       a call began must be data in its answer
 * Each case is mapped by AUTO, by AUTO with cachestat failing (ENOSYS as
 * before Linux 6.5, EPERM as for another user), by AUTO told the kernel is
 * Linux 6.8 (on Btrfs: SEEK in every gap, as there), and by the unsynced
 * FIEMAP mode forced on (the test build of the library is told "ext4" for
 * the f_type, so Btrfs runs the ext4 and XFS way too, trusting cachestat,
 * for its facts), then
 * checked: every written byte (all non-zero) lies in a data range and every
 * hole reads back as zeroes; no fdatasync and no FIEMAP_FLAG_SYNC were
 * asked; pages dirty before the map are dirty after it.  Each case also
 * prints one "fact:" line, what raw FIEMAP without sync said about the
 * written blocks, for the notes in sparse_map(3).  On Btrfs, where the
 * running kernel holds the range locked over FIEMAP (probe.c), AUTO asks
 * no SEEK at all, and raw FIEMAP must never show a written block in a gap
 * or an UNWRITTEN extent: every case asserts that.
 *
 * Run by tests/fiemap-unsynced.sh, which mounts each file system and sets
 * SM_TEST_DIR and SM_FS; without them it skips.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "check-run.h"
#include "helpers.h"
#include "../lib/sparse-map-private.h"
#include "../lib/sys-calls.h"

#define KiB 1024LL
#define MiB (1024 * KiB)
#define EXT4_MAGIC 0xEF53

static const char *fs;		/* SM_FS: a variant of fiemap-unsynced.sh (ext4, xfs-16k, ...) */
static bool locked;		/* Btrfs, on a kernel whose FIEMAP AUTO trusts about holes */
static char kernel[128];	/* the running kernel's release */
static char path[4096];

/* What the library asked of the kernel during one map. */
static struct {
	int fdatasync, fiemap, fiemap_sync, cachestat, seek;
	bool fake_ext4;		/* fstatfs says ext4 */
	const char *release;	/* uname(2) says this; NULL: the real one */
	enum { CS_REAL, CS_ENOSYS, CS_EPERM } cs;
} seen;

static int c_fdatasync(int fd)
{
	seen.fdatasync++;
	return fdatasync(fd);
}

static int c_ioctl(int fd, unsigned long req, void *arg)
{
	if (req == FS_IOC_FIEMAP) {
		seen.fiemap++;
		if (((struct fiemap *)arg)->fm_flags & FIEMAP_FLAG_SYNC)
			seen.fiemap_sync++;
	}
	return ioctl(fd, req, arg);
}

static off_t c_lseek(int fd, off_t off, int whence)
{
	if (whence == SEEK_DATA || whence == SEEK_HOLE)
		seen.seek++;
	return lseek(fd, off, whence);
}

static int c_fstatfs(int fd, int64_t *type)
{
	(void)fd;
	if (!seen.fake_ext4)
		abort();	/* only installed for the forced mode */
	*type = EXT4_MAGIC;
	return 0;
}

static int c_uname(char *buf, size_t len)
{
	snprintf(buf, len, "%s", seen.release ? seen.release : kernel);
	return 0;
}

/* cachestat(2) as the kernel lays it out (Linux 6.5). */
struct k_range {
	uint64_t off, len;
};
struct k_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static long real_cachestat(int fd, struct k_range *r, struct k_cachestat *cs)
{
	return syscall(451, (unsigned int)fd, r, cs, 0u);
}

static int c_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	struct k_range r = { (uint64_t)off, (uint64_t)len };
	struct k_cachestat k;

	seen.cachestat++;
	switch (seen.cs) {
	case CS_ENOSYS:
		errno = ENOSYS;
		return -1;
	case CS_EPERM:
		errno = EPERM;
		return -1;
	case CS_REAL:
		break;
	}
	if (real_cachestat(fd, &r, &k) < 0)
		return -1;
	cs->nr_cache = (int64_t)k.nr_cache;
	cs->nr_dirty = (int64_t)k.nr_dirty;
	cs->nr_writeback = (int64_t)k.nr_writeback;
	return 0;
}

/* Pages of fd dirty (and, with writeback, under writeback too), or -1
 * where cachestat is missing. */
static long long pages(int fd, bool writeback)
{
	struct k_range r = { 0, 0 };
	struct k_cachestat cs;

	if (real_cachestat(fd, &r, &cs) < 0)
		return -1;
	return (long long)(cs.nr_dirty + (writeback ? cs.nr_writeback : 0));
}

static long long busy_pages(int fd)
{
	return pages(fd, true);
}

static long long dirty_pages(int fd)
{
	return pages(fd, false);
}

static bool cachestat_works(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	bool ok = fd >= 0 && busy_pages(fd) >= 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

enum mode { M_AUTO, M_UNSYNCED, M_NO_CACHESTAT, M_CACHESTAT_EPERM, M_LINUX_6_8, NMODES };
static const char *const mode_names[NMODES] = {
	"AUTO", "unsynced FIEMAP forced on", "AUTO, cachestat ENOSYS", "AUTO, cachestat EPERM",
	"AUTO, told Linux 6.8"
};

static void install(enum mode mode)
{
	memset(&seen, 0, sizeof(seen));
	sm_sys_table = (struct sm_sys_table){
		.fdatasync = c_fdatasync, .ioctl = c_ioctl, .cachestat = c_cachestat,
		.lseek = c_lseek, .uname = c_uname,
	};
	if (mode == M_UNSYNCED) {
		seen.fake_ext4 = true;
		sm_sys_table.fstatfs = c_fstatfs;
	} else if (mode == M_NO_CACHESTAT) {
		seen.cs = CS_ENOSYS;
	} else if (mode == M_CACHESTAT_EPERM) {
		seen.cs = CS_EPERM;
	} else if (mode == M_LINUX_6_8) {
		seen.release = "6.8.12";
	}
}

static size_t holes_in(const struct th_map *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->r[i].kind == SPARSE_MAP_HOLE;
	return n;
}

/* Where AUTO believes clean pages: ext4 and XFS (any mkfs or mount). */
static bool allow_listed(void)
{
	return strncmp(fs, "ext4", 4) == 0 || strncmp(fs, "xfs", 3) == 0;
}

static bool btrfs(void)
{
	return strncmp(fs, "btrfs", 5) == 0;
}

/* Btrfs: AUTO's FIEMAP there never asks cachestat; it asks SEEK of every
 * gap unless the kernel answers FIEMAP with the range locked. */
static bool gaps_to_seek(enum mode mode)
{
	return btrfs() && (!locked || mode == M_LINUX_6_8);
}

/* Btrfs, where AUTO believes FIEMAP's gaps: no SEEK, no cachestat. */
static bool gaps_trusted(enum mode mode)
{
	return btrfs() && locked && mode != M_UNSYNCED && mode != M_LINUX_6_8;
}

/* Map fd in one mode and check all the rules; the map for the caller. */
static void map_and_check(int fd, enum mode mode, const char *what, struct th_map *out)
{
	long long before = dirty_pages(fd), after;
	struct th_map m;
	const char *err;
	int rc;

	install(mode);
	rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
	sm_sys_table = (struct sm_sys_table){ 0 };
	after = dirty_pages(fd);
	ck_assert_msg(rc == 0, "%s on %s, %s: map failed: %s", what, fs, mode_names[mode],
		      strerror(-rc));
	ck_assert_msg(seen.fdatasync == 0 && seen.fiemap_sync == 0,
		      "%s on %s, %s: the map flushed (%d fdatasync, %d FIEMAP_FLAG_SYNC)", what,
		      fs, mode_names[mode], seen.fdatasync, seen.fiemap_sync);
	if (mode == M_UNSYNCED || allow_listed() || btrfs())
		ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_FIEMAP && seen.fiemap > 0,
			      "%s on %s, %s: mapped with %s, not unsynced FIEMAP", what, fs,
			      mode_names[mode], sparse_map_backend_name(m.backend));
	else
		ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_SEEK,
			      "%s on %s, %s: AUTO mapped with %s, not SEEK", what, fs,
			      mode_names[mode], sparse_map_backend_name(m.backend));
	/* Without cachestat's word no gap is believed: each hole is SEEK's,
	 * but where Btrfs's FIEMAP says it itself. */
	if ((mode == M_NO_CACHESTAT || mode == M_CACHESTAT_EPERM || gaps_to_seek(mode)) &&
	    !gaps_trusted(mode) && holes_in(&m) > 0)
		ck_assert_msg(seen.seek > 0, "%s on %s, %s: holes found, SEEK never asked", what,
			      fs, mode_names[mode]);
	if (gaps_trusted(mode))
		ck_assert_msg(seen.seek == 0, "%s on %s (Linux %s), %s: SEEK asked %d times", what,
			      fs, kernel, mode_names[mode], seen.seek);
	if (mode != M_UNSYNCED && btrfs())
		ck_assert_msg(seen.cachestat == 0, "%s on %s, %s: cachestat asked %d times", what,
			      fs, mode_names[mode], seen.cachestat);
	/* Only writeback cleans a dirty page, and the kernel's flusher
	 * leaves pages younger than 30 s alone: dirty before and clean
	 * after would be the map's doing. */
	ck_assert_msg(!(before > 0 && after == 0),
		      "%s on %s, %s: %lld pages were dirty before the map, none after it",
		      what, fs, mode_names[mode], before);
	err = th_check_contract(fd, &m, 0);
	if (err && mode == M_UNSYNCED && !allow_listed()) {
		/* Not a failure where AUTO never takes this mode: the fact
		 * that keeps the file system off the allow-list. */
		printf("fact: %s: %s: unsynced FIEMAP forced on called written data a hole: %s\n",
		       fs, what, err);
		err = NULL;
	}
	ck_assert_msg(err == NULL, "%s on %s, %s (backend %s): %s\n  map: %s", what, fs,
		      mode_names[mode], sparse_map_backend_name(m.backend), err, th_describe(&m));
	if (out)
		*out = m;
	else
		th_map_free(&m);
}

/* What raw FIEMAP without sync says about the written (non-zero) blocks. */
struct fact {
	long long written, gap, unwritten, delalloc, data;
};

static struct fact raw_fiemap(int fd, const char *what, long long busy, bool print)
{
	enum { N = 1024 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	int64_t blk = th_blksize(fd), size = lseek(fd, 0, SEEK_END);
	unsigned char *buf = malloc((size_t)blk);
	struct fact f = { 0, 0, 0, 0, 0 };

	ck_assert(fm && buf);
	fm->fm_start = 0;
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_extent_count = N;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
		printf("fact: %s: %s: raw FIEMAP failed: %s\n", fs, what, strerror(errno));
		goto out;
	}
	ck_assert_msg(fm->fm_mapped_extents < N, "%s: more extents than the test can see", what);
	for (int64_t off = 0; off < size; off += blk) {
		ssize_t n = pread(fd, buf, (size_t)blk, off);
		bool nonzero = false;
		uint32_t flags = 0;
		bool found = false;

		for (ssize_t i = 0; i < n && !nonzero; i++)
			nonzero = buf[i] != 0;
		if (!nonzero)
			continue;
		f.written++;
		for (unsigned int i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			if ((uint64_t)off < e->fe_logical + e->fe_length &&
			    e->fe_logical < (uint64_t)(off + blk)) {
				flags |= e->fe_flags;
				found = true;
			}
		}
		if (!found)
			f.gap++;
		else if (flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN))
			f.delalloc++;
		else if (flags & FIEMAP_EXTENT_UNWRITTEN)
			f.unwritten++;
		else
			f.data++;
	}
	if (print)
		printf("fact: %s: %s: %lld written blocks, %lld pages dirty/writeback; unsynced FIEMAP "
	       "calls %lld of them written extents, %lld DELALLOC/UNKNOWN, %lld UNWRITTEN, "
	       "%lld in no extent%s\n", fs, what, f.written, busy, f.data, f.delalloc,
	       f.unwritten, f.gap, f.unwritten + f.gap ? " (a hole to FIEMAP alone)" : "");
	/* What AUTO stands on there: written before the call, never a hole. */
	ck_assert_msg(!locked || f.gap + f.unwritten == 0, "%s on %s (Linux %s): unsynced FIEMAP "
		      "calls %lld written blocks holes (%lld in no extent, %lld UNWRITTEN)", what,
		      fs, kernel, f.gap + f.unwritten, f.gap, f.unwritten);
out:
	free(fm);
	free(buf);
	return f;
}

static void raw_fact(int fd, const char *what, long long busy)
{
	(void)raw_fiemap(fd, what, busy, true);
}

/* The case's file, mapped in every mode, with its fact line first. */
static void check_all_modes(int fd, const char *what)
{
	raw_fact(fd, what, busy_pages(fd));
	for (int m = 0; m < NMODES; m++)
		map_and_check(fd, (enum mode)m, what, NULL);
}

static int new_file(void)
{
	return th_create(NULL, path, sizeof(path));
}

static void drop(int fd)
{
	close(fd);
	unlink(path);
}

START_TEST(test_writes_into_fallocated_space_stay_data)
{
	int fd = new_file();

	if (!th_fallocate(fd, 0, 0, 2 * MiB)) {
		drop(fd);
		return;
	}
	th_fill(fd, 256 * KiB, 64 * KiB);
	th_fill(fd, 1 * MiB + 100, 10);
	th_fill(fd, 2 * MiB - 1, 1);
	check_all_modes(fd, "prealloc-write");
	drop(fd);
}
END_TEST

START_TEST(test_writes_into_space_fallocated_past_eof_stay_data)
{
	int fd = new_file();

	th_fill(fd, 0, 8 * KiB);
	fsync(fd);
	if (!th_fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4 * MiB)) {
		drop(fd);
		return;
	}
	th_fill(fd, 8 * KiB, 8 * KiB);
	th_fill(fd, 3 * MiB, 4 * KiB);
	check_all_modes(fd, "prealloc-past-eof");
	drop(fd);
}
END_TEST

START_TEST(test_buffered_writes_into_holes_stay_data)
{
	int fd = new_file();

	th_truncate(fd, 4 * MiB);
	th_fill(fd, 100 * KiB, 4 * KiB);
	th_fill(fd, 1 * MiB + 3, 5000);
	th_fill(fd, 4 * MiB - 1, 1);
	check_all_modes(fd, "delalloc");
	drop(fd);
}
END_TEST

START_TEST(test_writes_under_writeback_stay_data)
{
	int fd = new_file();

	th_truncate(fd, 4 * MiB);
	th_fill(fd, 64 * KiB, 64 * KiB);
	if (th_fallocate(fd, FALLOC_FL_KEEP_SIZE, 2 * MiB, 1 * MiB))
		th_fill(fd, 2 * MiB + 4 * KiB, 128 * KiB);
	ck_assert_int_eq(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE), 0);
	check_all_modes(fd, "writeback");
	drop(fd);
}
END_TEST

START_TEST(test_writes_past_an_old_end_stay_data)
{
	int fd = new_file();

	th_fill(fd, 0, 10 * KiB);
	fsync(fd);
	th_truncate(fd, 2 * MiB);
	th_fill(fd, 10 * KiB + 1, 3 * KiB);
	th_fill(fd, 1536 * KiB, 16 * KiB);
	check_all_modes(fd, "truncate-up");
	drop(fd);
}
END_TEST

START_TEST(test_dirty_writes_into_a_synced_file_stay_data)
{
	int fd = new_file();
	int64_t blk = th_blksize(fd);

	th_truncate(fd, 600 * 16 * KiB);
	for (int i = 0; i < 600; i++)
		th_fill(fd, i * 16 * KiB, blk);
	fsync(fd);
	for (int i = 0; i < 600; i += 7)
		th_fill(fd, i * 16 * KiB + 8 * KiB, 100);
	if (th_fallocate(fd, FALLOC_FL_KEEP_SIZE, 300 * 16 * KiB + 4 * KiB, 8 * KiB))
		th_fill(fd, 300 * 16 * KiB + 4 * KiB, 10);
	check_all_modes(fd, "synced-then-dirty");
	drop(fd);
}
END_TEST

START_TEST(test_writes_into_a_reflinked_file_stay_data)
{
	char src_path[4096];
	int src = th_create(NULL, src_path, sizeof(src_path));
	int fd = new_file();

	th_truncate(src, 2 * MiB);
	th_fill(src, 0, 256 * KiB);
	th_fill(src, 1 * MiB, 256 * KiB);
	fsync(src);
	if (ioctl(fd, FICLONE, src) < 0) {
		printf("fact: %s: reflink: FICLONE: %s; not tested\n", fs, strerror(errno));
		close(src);
		unlink(src_path);
		drop(fd);
		return;
	}
	close(src);
	unlink(src_path);
	th_fill(fd, 64 * KiB, 4 * KiB);		/* over a shared extent */
	th_fill(fd, 512 * KiB, 4 * KiB);	/* into a hole */
	check_all_modes(fd, "reflink");
	drop(fd);
}
END_TEST

START_TEST(test_compressible_writes_stay_data)
{
	static unsigned char buf[1 << 20];
	int fd = new_file();

	memset(buf, 'a', sizeof(buf));
	th_truncate(fd, 8 * MiB);
	ck_assert_int_eq(pwrite(fd, buf, sizeof(buf), 3 * MiB), (ssize_t)sizeof(buf));
	check_all_modes(fd, "compressible");
	ck_assert_int_eq(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE), 0);
	check_all_modes(fd, "compressible, writeback started");
	drop(fd);
}
END_TEST

/* Races writeback: each write is mapped the moment its writeback starts. */
START_TEST(test_writes_mapped_as_writeback_starts_stay_data)
{
	int fd = new_file();
	bool prealloc = th_fallocate(fd, 0, 0, 16 * MiB);

	if (!prealloc)
		th_truncate(fd, 16 * MiB);
	for (int i = 0; i < 64; i++) {
		int64_t off = (int64_t)((i * 7919) % 4000) * 4 * KiB;

		th_fill(fd, off, 4 * KiB);
		ck_assert_int_eq(sync_file_range(fd, off, 4 * KiB, SYNC_FILE_RANGE_WRITE), 0);
		map_and_check(fd, (enum mode)(i % 2 ? M_UNSYNCED : M_AUTO), "writeback-race", NULL);
	}
	raw_fact(fd, "writeback-race", busy_pages(fd));
	drop(fd);
}
END_TEST

/*
 * The argument of lib/backend-fiemap.c in one test: once cachestat finds
 * no page dirty or under writeback, unsynced FIEMAP has every written
 * block in a written (or delalloc) extent.  Each write's writeback is
 * started and waited for (SYNC_FILE_RANGE_WAIT_AFTER returns when the pages
 * leave writeback, which is all cachestat can see), then FIEMAP asked at
 * once.  Asserted on ext4 and XFS; elsewhere counted, as the fact that
 * keeps the file system off the allow-list.  200 writes each way, or
 * $SM_CLEAN_PROOF_ROUNDS (fiemap-unsynced.sh gives the mkfs variants 50:
 * each write waits for its writeback, the most of the variant's time).
 */
START_TEST(test_clean_pages_prove_the_extents)
{
	const unsigned int how = SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
	int fd = new_file();
	bool prealloc = _i == 1;
	int tries = 0, lost = 0, rounds = 200;
	const char *env = getenv("SM_CLEAN_PROOF_ROUNDS");

	if (env && atoi(env) > 0)
		rounds = atoi(env);

	if (!prealloc) {
		th_truncate(fd, 16 * MiB);
	} else if (!th_fallocate(fd, 0, 0, 16 * MiB)) {
		drop(fd);
		return;
	}
	for (int i = 0; i < rounds; i++) {
		int64_t off = (int64_t)((i * 7919) % 4000) * 4 * KiB;
		struct fact f;

		th_fill(fd, off, 4 * KiB);
		ck_assert_int_eq(sync_file_range(fd, off, 4 * KiB, how), 0);
		/* The argument needs clean pages; Btrfs's locked answer needs
		 * nothing, and raw_fiemap() asserts it at once, in flight or not. */
		if (busy_pages(fd) != 0 && !locked)
			continue;
		tries++;
		f = raw_fiemap(fd, "clean-proof", 0, false);
		if (f.gap + f.unwritten > 0) {
			lost++;
			ck_assert_msg(!allow_listed(), "%s, %s: cachestat found nothing dirty, yet "
				      "unsynced FIEMAP calls %lld written blocks holes", fs,
				      prealloc ? "fallocated" : "holes", f.gap + f.unwritten);
		}
	}
	printf("fact: %s: clean-proof (%s): %d times %s, unsynced FIEMAP missed written blocks "
	       "%d times\n", fs, prealloc ? "into fallocated space" : "into holes", tries,
	       locked ? "asked as soon as writeback was waited for" :
	       "pages clean after writeback", lost);
	drop(fd);
}
END_TEST

#define STABLE 64
static atomic_bool stop;
static int64_t wblk;

static void *writer(void *arg)
{
	int fd = *(int *)arg;
	unsigned int s = 1;

	while (!atomic_load(&stop)) {
		int64_t b = STABLE + (s = s * 1103515245u + 12345u) % 512;

		switch (s >> 16 & 3) {
		case 0: th_fill(fd, b * wblk, wblk); break;
		case 1: (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, b * wblk, 4 * wblk); break;
		case 2: (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, b * wblk, wblk); break;
		case 3: (void)sync_file_range(fd, b * wblk, 8 * wblk, SYNC_FILE_RANGE_WRITE); break;
		}
	}
	return NULL;
}

/* Stable blocks are written (not synced) before the writer starts, and it
 * never touches them: every map must call them data. */
START_TEST(test_stable_data_survives_a_concurrent_writer)
{
	int fd = new_file();
	pthread_t t;
	time_t end;
	int maps = 0;

	wblk = th_blksize(fd);
	th_truncate(fd, (STABLE + 600) * wblk);
	/* Stable blocks written into unwritten space too, where it can be had. */
	(void)th_fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, STABLE * wblk);
	for (int b = 0; b < STABLE; b += 2)
		th_fill(fd, b * wblk, wblk);
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&t, NULL, writer, &fd), 0);
	end = time(NULL) + 2;
	while (time(NULL) < end) {
		enum mode mode = maps % 2 ? M_UNSYNCED : M_AUTO;
		struct th_map m;
		int rc;

		install(mode);
		rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
		sm_sys_table = (struct sm_sys_table){ 0 };
		ck_assert_msg(rc == 0, "concurrent on %s: %s", fs, strerror(-rc));
		ck_assert_int_eq(seen.fdatasync + seen.fiemap_sync, 0);
		for (int b = 0; b < STABLE; b += 2)
			ck_assert_msg(th_kind_at(&m, b * wblk) == SPARSE_MAP_DATA &&
					      th_kind_at(&m, (b + 1) * wblk - 1) == SPARSE_MAP_DATA,
				      "concurrent on %s, %s (%s): stable block %d called a hole: %s",
				      fs, mode_names[mode], sparse_map_backend_name(m.backend), b,
				      th_describe(&m));
		th_map_free(&m);
		maps++;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("fact: %s: concurrent: %d maps while a thread wrote, stable data always data\n",
	       fs, maps);
	drop(fd);
}
END_TEST

/*
 * Ordered extents completing while FIEMAP runs (Btrfs's window: a page's
 * writeback ends before its file extent item is in place).  A thread
 * writes blocks into holes (or fallocated space), starts their writeback
 * at once, now and then fdatasyncs the file or reflinks a block in from
 * another file; it marks a block written once the call returns.  Each
 * round notes the blocks marked so far, then asks raw FIEMAP without sync,
 * AUTO, or AUTO told Linux 6.8: each noted block must be data.  Raw
 * FIEMAP is asserted on Btrfs where AUTO trusts it (elsewhere its misses
 * are counted, a fact); the maps everywhere.
 */
#define RD_BLOCKS 8192
static _Atomic bool rd_written[RD_BLOCKS];
static int rd_src = -1;		/* a fsynced file of data to reflink from, or -1 */

static void *recorder(void *arg)
{
	int fd = *(int *)arg;
	unsigned int s = 7, n = 0, count = 0;

	while (!atomic_load(&stop)) {
		int64_t b = (s = s * 1103515245u + 12345u) >> 8 & (RD_BLOCKS - 1);
		bool cloned = false;

		/* New blocks while there are many; then overwrites, which Btrfs
		 * copies on write into new ordered extents as well. */
		for (unsigned int k = 0; count < RD_BLOCKS * 7 / 8 && atomic_load(&rd_written[b]) &&
		     k < RD_BLOCKS; k++)
			b = (b + 1) & (RD_BLOCKS - 1);
		if (rd_src >= 0 && n % 5 == 4) {
			struct file_clone_range r = { .src_fd = rd_src, .src_offset = 0,
						      .src_length = (uint64_t)wblk,
						      .dest_offset = (uint64_t)(b * wblk) };

			cloned = ioctl(fd, FICLONERANGE, &r) == 0;
		}
		if (!cloned)
			th_fill(fd, b * wblk, wblk);
		if (!atomic_exchange(&rd_written[b], true))
			count++;
		if (n % 8 == 7)
			(void)fdatasync(fd);
		else
			(void)sync_file_range(fd, b * wblk, wblk, SYNC_FILE_RANGE_WRITE);
		n++;
	}
	return NULL;
}

/* Of the noted blocks, how many raw FIEMAP without sync, asked now, does
 * not put in a DELALLOC, UNKNOWN or written extent. */
static long long raw_misses(int fd, const bool *noted)
{
	enum { N = 2 * RD_BLOCKS + 16 };
	static unsigned char mem[sizeof(struct fiemap) + N * sizeof(struct fiemap_extent)];
	struct fiemap *fm = (struct fiemap *)mem;
	long long missed = 0;
	unsigned int i = 0;

	memset(fm, 0, sizeof(*fm));
	fm->fm_length = FIEMAP_MAX_OFFSET;
	fm->fm_extent_count = N;
	ck_assert_msg(ioctl(fd, FS_IOC_FIEMAP, fm) == 0, "recorded-during on %s: FIEMAP: %s", fs,
		      strerror(errno));
	ck_assert(fm->fm_mapped_extents < N);
	for (int64_t b = 0; b < RD_BLOCKS; b++) {
		uint64_t lo = (uint64_t)(b * wblk), hi = lo + (uint64_t)wblk;
		uint64_t at = lo;

		if (!noted[b])
			continue;
		/* The extents are in order; [lo, hi) must be covered by ones
		 * that are not UNWRITTEN alone. */
		while (i > 0 && fm->fm_extents[i - 1].fe_logical + fm->fm_extents[i - 1].fe_length > lo)
			i--;
		for (unsigned int j = i; j < fm->fm_mapped_extents && at < hi; j++) {
			const struct fiemap_extent *e = &fm->fm_extents[j];
			bool data = !(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN) ||
				    (e->fe_flags & (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN));

			if (e->fe_logical > at)
				break;
			if (e->fe_logical + e->fe_length > at && data)
				at = e->fe_logical + e->fe_length;
			if (e->fe_logical + e->fe_length <= lo)
				i = j + 1;
		}
		missed += at < hi;
	}
	return missed;
}

START_TEST(test_data_recorded_during_the_map_stays_data)
{
	static bool noted[RD_BLOCKS];
	char src_path[4096];
	bool prealloc = _i == 1;
	int fd = new_file();
	long long raw = 0, raw_missed = 0, maps = 0, handed = 0;
	pthread_t t;
	time_t end;

	wblk = th_blksize(fd);
	if (!prealloc)
		th_truncate(fd, RD_BLOCKS * wblk);
	else if (!th_fallocate(fd, 0, 0, RD_BLOCKS * wblk)) {
		drop(fd);
		return;
	}
	rd_src = th_create(NULL, src_path, sizeof(src_path));
	th_fill(rd_src, 0, wblk);
	fsync(rd_src);
	{
		struct file_clone_range r = { .src_fd = rd_src, .src_length = (uint64_t)wblk };

		/* Can this file system reflink? Into block 0, noted as written. */
		r.dest_offset = 0;
		if (ioctl(fd, FICLONERANGE, &r) < 0) {
			close(rd_src);
			unlink(src_path);
			rd_src = -1;
			th_fill(fd, 0, wblk);
		}
	}
	for (int b = 0; b < RD_BLOCKS; b++)
		atomic_store(&rd_written[b], b == 0);
	atomic_store(&stop, false);
	ck_assert_int_eq(pthread_create(&t, NULL, recorder, &fd), 0);
	end = time(NULL) + 3;
	for (unsigned int round = 0; time(NULL) < end; round++) {
		/* Raw FIEMAP three rounds in five: it is the fast one. */
		enum mode mode = round % 5 == 3 ? M_AUTO : M_LINUX_6_8;
		struct th_map m;
		int rc;

		for (int b = 0; b < RD_BLOCKS; b++)
			noted[b] = atomic_load(&rd_written[b]);
		if (round % 5 < 3) {
			long long missed = raw_misses(fd, noted);

			raw++;
			raw_missed += missed > 0;
			ck_assert_msg(!locked || missed == 0, "recorded-during on %s (Linux %s), %s: "
				      "unsynced FIEMAP calls %lld blocks written before it holes", fs,
				      kernel, prealloc ? "fallocated" : "holes", missed);
			continue;
		}
		install(mode);
		rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
		sm_sys_table = (struct sm_sys_table){ 0 };
		ck_assert_msg(rc == 0, "recorded-during on %s: %s", fs, strerror(-rc));
		ck_assert_int_eq(seen.fdatasync + seen.fiemap_sync, 0);
		/* Believed gaps want no SEEK, but where a full batch came out of
		 * order (Btrfs, dirty pages in preallocated space): SEEK then
		 * maps the rest, and the map says so. */
		handed += m.backend == SPARSE_MAP_BACKEND_SEEK;
		ck_assert_msg(!gaps_trusted(mode) || seen.seek == 0 ||
			      m.backend == SPARSE_MAP_BACKEND_SEEK, "recorded-during on %s, %s: "
			      "%d SEEK, map ended with %s", fs, mode_names[mode], seen.seek,
			      sparse_map_backend_name(m.backend));
		for (int b = 0; b < RD_BLOCKS; b++)
			ck_assert_msg(!noted[b] || (th_kind_at(&m, b * wblk) == SPARSE_MAP_DATA &&
						    th_kind_at(&m, (b + 1) * wblk - 1) == SPARSE_MAP_DATA),
				      "recorded-during on %s, %s (%s), %s: block %d, written before "
				      "the map, called a hole", fs, mode_names[mode],
				      sparse_map_backend_name(m.backend),
				      prealloc ? "fallocated" : "holes", b);
		th_map_free(&m);
		maps++;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("fact: %s: recorded-during (%s%s): %lld raw FIEMAP calls while a thread wrote, "
	       "started writeback and fsynced, %lld of them called written blocks holes; %lld "
	       "maps (%lld of them ended with SEEK), written data always data\n", fs,
	       prealloc ? "into fallocated space" : "into holes", rd_src >= 0 ? ", and reflinked" :
	       "", raw, raw_missed, maps, handed);
	if (rd_src >= 0) {
		close(rd_src);
		unlink(src_path);
		rd_src = -1;
	}
	drop(fd);
}
END_TEST

/* A fsynced file: AUTO takes FIEMAP without sync on ext4, XFS and Btrfs. */
START_TEST(test_clean_file_gets_unsynced_fiemap_where_allowed)
{
	int fd = new_file();
	struct th_map a, s;
	const char *err;

	th_truncate(fd, 1000 * 64 * KiB);
	for (int i = 0; i < 1000; i++)
		th_fill(fd, i * 64 * KiB, 4 * KiB);
	fsync(fd);
	raw_fact(fd, "clean", busy_pages(fd));
	map_and_check(fd, M_AUTO, "clean", &a);
	ck_assert_msg(a.backend == (allow_listed() || btrfs() ? SPARSE_MAP_BACKEND_FIEMAP :
				    SPARSE_MAP_BACKEND_SEEK),
		      "clean on %s: AUTO picked %s", fs, sparse_map_backend_name(a.backend));
	/* Where st_blocks says there are holes: cachestat first, then one
	 * FIEMAP a batch of 512 extents, the first being the probe's question
	 * too (two for these 1,000 runs).  Where it does not (bigalloc's
	 * clusters hold the holes): the probe's FIEMAP, the first batch again
	 * after cachestat, then the second: four.  No SEEK at all. */
	if (allow_listed()) {
		struct stat st;
		int want;

		ck_assert_int_eq(fstat(fd, &st), 0);
		want = st.st_blocks < st.st_size / 512 ? 2 : 4;
		ck_assert_msg(seen.fiemap == want && seen.cachestat == 1 && seen.seek == 0,
			      "clean on %s: %d FIEMAP calls, %d cachestat, %d SEEK; expected %d "
			      "FIEMAP", fs, seen.fiemap, seen.cachestat, seen.seek, want);
	}
	/* Btrfs: where the kernel answers FIEMAP with the range locked, no
	 * SEEK at all; elsewhere (and told Linux 6.8) one SEEK_DATA a gap
	 * (999 between the runs, and the tail), none for the data that the
	 * extents prove. */
	if (btrfs())
		ck_assert_msg(seen.fiemap >= 2 && seen.cachestat == 0 &&
			      seen.seek == (gaps_to_seek(M_AUTO) ? 1000 : 0),
			      "clean on %s (Linux %s): %d FIEMAP calls, %d cachestat, %d SEEK", fs,
			      kernel, seen.fiemap, seen.cachestat, seen.seek);
	if (btrfs()) {
		struct th_map o;

		map_and_check(fd, M_LINUX_6_8, "clean", &o);
		ck_assert_msg(seen.fiemap >= 2 && seen.cachestat == 0 && seen.seek == 1000,
			      "clean on %s, told Linux 6.8: %d FIEMAP calls, %d cachestat, %d SEEK",
			      fs, seen.fiemap, seen.cachestat, seen.seek);
		err = th_compare_blocks(&o, &a, th_blksize(fd));
		ck_assert_msg(err == NULL, "clean on %s: AUTO told 6.8 and AUTO differ: %s", fs, err);
		th_map_free(&o);
	}
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0, &s), 0);
	err = th_compare_blocks(&s, &a, th_blksize(fd));
	ck_assert_msg(err == NULL, "clean on %s: AUTO and SEEK differ: %s", fs, err);
	ck_assert_int_eq(a.n, 2000);
	th_map_free(&a);
	th_map_free(&s);
	drop(fd);
}
END_TEST

/* A file without a hole: the extents prove it all, cachestat is not
 * asked (its cost grows with the cached pages), nor SEEK. */
START_TEST(test_dense_file_asks_no_cachestat)
{
	int fd = new_file();
	struct th_map a;

	th_fill(fd, 0, 8 * MiB);
	fsync(fd);
	th_fill(fd, 8 * MiB, 1 * MiB);	/* dirty, past the fsynced part */
	map_and_check(fd, M_AUTO, "dense", &a);
	if (allow_listed() || btrfs())
		ck_assert_msg(seen.cachestat == 0 && seen.seek <= 2 && holes_in(&a) == 0,
			      "dense on %s: %d cachestat, %d SEEK, %zu holes: %s", fs,
			      seen.cachestat, seen.seek, holes_in(&a), th_describe(&a));
	th_map_free(&a);
	drop(fd);
}
END_TEST

/*
 * XFS copies a shared block on write into a copy-on-write fork, reserving
 * space around it (the cowextsize hint, 32 blocks by default); a later
 * write into a hole of the data fork inside that reservation goes into the
 * COW fork too, where FIEMAP, which reports the data fork, does not show
 * it: a gap with dirty data in it.  cachestat sees the dirty page, so SEEK
 * decides the gap.  Elsewhere the same steps are one more reflink case.
 */
START_TEST(test_writes_next_to_a_cow_block_stay_data)
{
	char src_path[4096];
	int src = th_create(NULL, src_path, sizeof(src_path));
	int fd = new_file();
	int64_t blk = th_blksize(fd);

	th_truncate(src, 2 * MiB);
	th_fill(src, 0, 50 * blk);	/* ends inside a 32-block-aligned span */
	fsync(src);
	if (ioctl(fd, FICLONE, src) < 0) {
		printf("fact: %s: cow-fork: FICLONE: %s; not tested\n", fs, strerror(errno));
		close(src);
		unlink(src_path);
		drop(fd);
		return;
	}
	close(src);
	unlink(src_path);
	th_fill(fd, 49 * blk, blk);	/* over a shared block: copied on write */
	th_fill(fd, 56 * blk, blk);	/* into the hole next to it */
	/* sparse_map(3) says so of XFS: the block in the hole is in no
	 * extent FIEMAP shows until it is written back.  Not with 1 KiB
	 * blocks, where it is a DELALLOC extent (Linux 6.18; its fact line
	 * says so). */
	if (strncmp(fs, "xfs", 3) == 0 && strcmp(fs, "xfs-1k") != 0) {
		struct fact f = raw_fiemap(fd, "cow-fork", 0, false);

		ck_assert_msg(f.gap >= 1, "cow-fork on %s: unsynced FIEMAP shows the block written "
			      "next to a copied-on-write one (%lld blocks in no extent, %lld written, "
			      "%lld delalloc): the note in sparse_map(3) is out of date", fs, f.gap,
			      f.data, f.delalloc);
	}
	check_all_modes(fd, "cow-fork");
	drop(fd);
}
END_TEST

/*
 * ext4 with inline_data keeps a small file in its inode.  Grown past it
 * without sync, the data is in the page cache only, and Linux 6.18's
 * lseek(SEEK_HOLE or SEEK_DATA) fails there with ENOENT until writeback (an
 * ext4 bug).  AUTO must map the file anyway, every written byte data, and
 * sparse_map_lseek() must answer; a forced SEEK may fail as the kernel
 * does.  Elsewhere this is one more small file.
 */
START_TEST(test_file_grown_out_of_its_inode_stays_data)
{
	int fd = new_file();
	off_t hole, data;
	int hole_err, data_err;
	struct th_map m;
	int rc;

	th_fill(fd, 0, 40);
	ck_assert_int_eq(fsync(fd), 0);
	th_fill(fd, 40, 3000);
	errno = 0;
	hole = lseek(fd, 0, SEEK_HOLE);
	hole_err = errno;
	errno = 0;
	data = lseek(fd, 0, SEEK_DATA);
	data_err = errno;
	printf("fact: %s: grown-inline: the kernel's lseek(0, SEEK_HOLE) = %lld%s%s, "
	       "lseek(0, SEEK_DATA) = %lld%s%s\n", fs, (long long)hole, hole < 0 ? " " : "",
	       hole < 0 ? strerror(hole_err) : "", (long long)data, data < 0 ? " " : "",
	       data < 0 ? strerror(data_err) : "");
	raw_fact(fd, "grown-inline", busy_pages(fd));
	for (int mode = 0; mode < NMODES; mode++) {
		const char *err;

		install((enum mode)mode);
		rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
		sm_sys_table = (struct sm_sys_table){ 0 };
		ck_assert_msg(rc == 0, "grown-inline on %s, %s: map failed: %s", fs,
			      mode_names[mode], strerror(-rc));
		ck_assert_msg(seen.fdatasync == 0 && seen.fiemap_sync == 0,
			      "grown-inline on %s, %s: the map flushed (%d fdatasync, %d "
			      "FIEMAP_FLAG_SYNC)", fs, mode_names[mode], seen.fdatasync,
			      seen.fiemap_sync);
		err = th_check_contract(fd, &m, 0);
		ck_assert_msg(err == NULL && holes_in(&m) == 0, "grown-inline on %s, %s (backend "
			      "%s): %s\n  map: %s", fs, mode_names[mode],
			      sparse_map_backend_name(m.backend), err ? err : "a hole in written data",
			      th_describe(&m));
		th_map_free(&m);
	}
	errno = 0;
	ck_assert_msg(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE) == 3040,
		      "grown-inline on %s: sparse_map_lseek(0, SEEK_HOLE) is not 3040 (EOF): %s", fs,
		      strerror(errno));
	errno = 0;
	ck_assert_msg(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA) == 0,
		      "grown-inline on %s: sparse_map_lseek(0, SEEK_DATA) is not 0: %s", fs,
		      strerror(errno));
	/* A caller who names SEEK gets SEEK's answer: right, or the kernel's error. */
	rc = th_collect(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0, &m);
	if (rc < 0) {
		ck_assert_msg((hole < 0 && -rc == hole_err) || (data < 0 && -rc == data_err),
			      "grown-inline on %s: forced SEEK failed with %s, the kernel's lseek "
			      "did not", fs, strerror(-rc));
	} else {
		const char *err = th_check_contract(fd, &m, 0);

		ck_assert_msg(err == NULL, "grown-inline on %s, forced SEEK: %s\n  map: %s", fs, err,
			      th_describe(&m));
		th_map_free(&m);
	}
	drop(fd);
}
END_TEST

/* Whether a FIEMAP batch of fd, asked without sync batch after batch
 * from where the last one's extents end, lists an extent before the one
 * ahead of it. */
static bool batch_out_of_order(int fd, int64_t len)
{
	enum { N = 512 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + N * sizeof(struct fiemap_extent));
	uint64_t at = 0;
	bool bent = false, more = true;

	ck_assert_ptr_nonnull(fm);
	while (more && !bent && at < (uint64_t)len) {
		uint64_t end = at;

		memset(fm, 0, sizeof(*fm));
		fm->fm_start = at;
		fm->fm_length = (uint64_t)len - at;
		fm->fm_extent_count = N;
		ck_assert_int_eq(ioctl(fd, FS_IOC_FIEMAP, fm), 0);
		for (unsigned int i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			bent |= i > 0 && e->fe_logical < fm->fm_extents[i - 1].fe_logical;
			if (e->fe_logical + e->fe_length > end)
				end = e->fe_logical + e->fe_length;
		}
		more = fm->fm_mapped_extents == N && end > at;
		at = end;
	}
	free(fm);
	return bent;
}

/*
 * Every other block written, unsynced, into fsynced preallocated space:
 * more extents than one batch holds.  Btrfs (Linux 6.18) then answers a
 * full batch out of order, listing the preallocated extent again from its
 * start after each 128 extents.  AUTO must neither believe such a batch
 * nor flush: SEEK goes on.  (Whether the pages stay dirty is not asked
 * here: on a file system as small as these images, Btrfs writes back
 * this many small delalloc extents itself, to reserve metadata space.)
 */
START_TEST(test_out_of_order_batch_flushes_nothing)
{
	int fd = new_file();
	int64_t blk = th_blksize(fd), len = 2048 * blk;
	struct th_map m;
	const char *err;
	bool bent;
	int rc;

	if (!th_fallocate(fd, 0, 0, 2 * len)) {
		drop(fd);
		return;
	}
	ck_assert_int_eq(fsync(fd), 0);
	for (int64_t b = 0; b < 2048; b += 2)
		th_fill(fd, b * blk, blk);
	bent = batch_out_of_order(fd, 2 * len);
	install(M_AUTO);
	rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
	sm_sys_table = (struct sm_sys_table){ 0 };
	printf("fact: %s: Linux %s: a full FIEMAP batch of 1,024 dirty blocks in preallocated "
	       "space %s; AUTO ended with %s\n", fs, kernel,
	       bent ? "came out of order" : "was in order", sparse_map_backend_name(m.backend));
	ck_assert_msg(rc == 0, "prealloc-every-other on %s: map failed: %s", fs, strerror(-rc));
	ck_assert_msg(seen.fdatasync == 0 && seen.fiemap_sync == 0,
		      "prealloc-every-other on %s: the map flushed (%d fdatasync, %d "
		      "FIEMAP_FLAG_SYNC), batch %s", fs, seen.fdatasync, seen.fiemap_sync,
		      bent ? "out of order" : "in order");
	err = th_check_contract(fd, &m, 0);
	ck_assert_msg(err == NULL, "prealloc-every-other on %s: %s", fs, err);
	th_map_free(&m);
	drop(fd);
}
END_TEST

/* A file with dirty pages: no mode flushes them. */
START_TEST(test_dirty_file_is_not_flushed)
{
	int fd = new_file();
	long long before;

	th_truncate(fd, 8 * MiB);
	th_fill(fd, 1 * MiB, 1 * MiB);
	before = busy_pages(fd);
	ck_assert_msg(before > 0, "%s: no dirty pages after a write (%lld)", fs, before);
	map_and_check(fd, M_AUTO, "dirty", NULL);
	map_and_check(fd, M_UNSYNCED, "dirty", NULL);
	ck_assert_msg(busy_pages(fd) > 0, "%s: the dirty pages were flushed", fs);
	drop(fd);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	fs = getenv("SM_FS");
	if (!fs || !getenv("SM_TEST_DIR")) {
		printf("SKIP: test-fiemap-unsynced is run by tests/fiemap-unsynced.sh, on its mounts\n");
		return TH_SKIP;
	}
#if !defined(SM_HAVE_FIEMAP) || !defined(SM_HAVE_SEEK)
	printf("SKIP: built without FIEMAP or SEEK: AUTO maps %s with FIEMAP without sync "
	       "only where both are built, the other tests cover the rest\n", fs);
	return TH_SKIP;
#endif
#ifndef SM_PLATFORM_LINUX
	printf("SKIP: built with another system's layer, which knows no file system type: "
	       "AUTO never maps %s with FIEMAP without sync\n", fs);
	return TH_SKIP;
#endif
	if (!cachestat_works()) {
		printf("SKIP: no cachestat(2) here (Linux 6.5): AUTO never maps with FIEMAP, "
		       "the other tests cover SEEK\n");
		return TH_SKIP;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("SPARSE_MAP_BACKEND");
	{
		struct utsname u;

		snprintf(kernel, sizeof(kernel), "%s", uname(&u) == 0 ? u.release : "unknown");
	}
	locked = btrfs() && sm_btrfs_fiemap_holds_lock(kernel);
	printf("fact: %s: Linux %s: AUTO %s\n", fs, kernel, !btrfs() ? "trusts cachestat" :
	       locked ? "trusts Btrfs's FIEMAP about holes: no SEEK" : "asks SEEK of every gap");
	s = suite_create("fiemap-unsynced");
	tc = tcase_create(fs);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_writes_into_fallocated_space_stay_data);
	tcase_add_test(tc, test_writes_into_space_fallocated_past_eof_stay_data);
	tcase_add_test(tc, test_buffered_writes_into_holes_stay_data);
	tcase_add_test(tc, test_writes_under_writeback_stay_data);
	tcase_add_test(tc, test_writes_past_an_old_end_stay_data);
	tcase_add_test(tc, test_dirty_writes_into_a_synced_file_stay_data);
	tcase_add_test(tc, test_writes_into_a_reflinked_file_stay_data);
	tcase_add_test(tc, test_compressible_writes_stay_data);
	tcase_add_test(tc, test_writes_mapped_as_writeback_starts_stay_data);
	tcase_add_loop_test(tc, test_clean_pages_prove_the_extents, 0, 2);
	tcase_add_test(tc, test_stable_data_survives_a_concurrent_writer);
	tcase_add_loop_test(tc, test_data_recorded_during_the_map_stays_data, 0, 2);
	tcase_add_test(tc, test_clean_file_gets_unsynced_fiemap_where_allowed);
	tcase_add_test(tc, test_out_of_order_batch_flushes_nothing);
	tcase_add_test(tc, test_dirty_file_is_not_flushed);
	tcase_add_test(tc, test_dense_file_asks_no_cachestat);
	tcase_add_test(tc, test_writes_next_to_a_cow_block_stay_data);
	tcase_add_test(tc, test_file_grown_out_of_its_inode_stays_data);
	suite_add_tcase(s, tc);
	return th_run_suite(s);
}
