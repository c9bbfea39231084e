/* SPDX-License-Identifier: MIT */
/*
 * The iterator's contract on the file system the tests run on (SM_TEST_DIR,
 * else the build directory): every layout through every backend, with and
 * without VERIFY and ZEROES; the backends against each other; restarts with
 * sparse_map_seek(); the file offset; a file that changes while it is mapped;
 * maps used from several threads at once.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "check-run.h"
#include "helpers.h"

static const enum sparse_map_backend backends[] = {
	SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK,
	SPARSE_MAP_BACKEND_FIEMAP, SPARSE_MAP_BACKEND_SCAN,
};
#define NBACKENDS 4
static const unsigned int flag_sets[] = { 0, SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES, SPARSE_MAP_SYNC };
#define NFLAGSETS 3

static char path[4096];

/*
 * Reading a fresh 16 GiB hole on ext4 fills the page cache with zeroes at
 * 1-3 GB/s; tmpfs reads holes from the zero page at 25 GB/s.  So the tests
 * that read all of past-4g (SCAN) make it on tmpfs when there is one.
 */
static const char *dir_for(const struct th_layout *l, enum sparse_map_backend b)
{
	struct statfs sfs;

	if (strcmp(l->name, "past-4g") == 0 && b == SPARSE_MAP_BACKEND_SCAN &&
	    statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return NULL;
}

static int make_file_in(const struct th_layout *l, const char *dir)
{
	int fd = th_create(dir, path, sizeof(path));

	l->build(fd, th_blksize(fd));
	return fd;
}

static int make_file(const struct th_layout *l)
{
	return make_file_in(l, NULL);
}

static void drop_file(int fd)
{
	close(fd);
	unlink(path);
}

/* Map fd, or say why the backend cannot (only "not here" is allowed). */
static bool collect_or_skip(int fd, enum sparse_map_backend b, unsigned int flags,
			    int64_t start, struct th_map *m)
{
	int r = th_collect(fd, b, flags, start, m);

	if (r == -EOPNOTSUPP && b != SPARSE_MAP_BACKEND_AUTO && b != SPARSE_MAP_BACKEND_SCAN)
		return false;
	ck_assert_msg(r == 0, "mapping with %s, flags %#x: expected 0, got %d (%s)",
		      sparse_map_backend_name(b), flags, r, strerror(-r));
	return true;
}

/* Contract points 1 and 2, for each layout, backend and set of flags. */
START_TEST(test_layout_keeps_contract)
{
	const struct th_layout *l = &th_layouts[_i / (NBACKENDS * NFLAGSETS)];
	enum sparse_map_backend b = backends[_i / NFLAGSETS % NBACKENDS];
	unsigned int flags = flag_sets[_i % NFLAGSETS];
	struct th_map m;
	int fd;

	bool big = strcmp(l->name, "past-4g") == 0;

	if (big && flags != 0)
		return;	/* reading 16 GiB of hole takes seconds: once per backend */
	fd = make_file_in(l, dir_for(l, b));
	if (collect_or_skip(fd, b, flags, 0, &m)) {
		const char *err = th_check_contract(fd, &m, 0);

		ck_assert_msg(err == NULL, "layout %s, backend %s, flags %#x: %s", l->name,
			      sparse_map_backend_name(b), flags, err);
		if (big) {
			const int64_t g = 1LL << 30, blk = th_blksize(fd);
			const int64_t written[] = { 4 * g - 2 * blk, 4 * g, 4 * g + 2 * blk - 1,
						    8 * g + 1, 8 * g + 10, 16 * g - 1 };

			for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++)
				ck_assert_msg(th_kind_at(&m, written[i]) == SPARSE_MAP_DATA,
					      "%s: written byte %lld is not data: %s",
					      sparse_map_backend_name(b), (long long)written[i],
					      th_describe(&m));
		}
		ck_assert_msg(m.backend != SPARSE_MAP_BACKEND_AUTO, "get_backend said auto");
		if (m.size == 0)
			ck_assert_msg(m.n == 0, "an empty file gave %zu ranges", m.n);
		th_map_free(&m);
	}
	drop_file(fd);
}
END_TEST

/* Without preallocation the three backends agree, block for block; SCAN
 * calls written zeroes holes, so it is matched with the others' ZEROES. */
START_TEST(test_backends_agree)
{
	const struct th_layout *l = &th_layouts[_i];
	struct th_map seek, fiemap, scan, seekz;
	int64_t blk;
	bool have_seek, have_fiemap;
	const char *err;
	int fd;

	if (l->prealloc)
		return;
	fd = make_file_in(l, dir_for(l, SPARSE_MAP_BACKEND_SCAN));
	blk = th_blksize(fd);
	ck_assert(collect_or_skip(fd, SPARSE_MAP_BACKEND_SCAN, 0, 0, &scan));
	have_seek = collect_or_skip(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0, &seek);
	have_fiemap = collect_or_skip(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, 0, &fiemap);
	if (have_seek && have_fiemap) {
		err = th_compare_blocks(&seek, &fiemap, blk);
		ck_assert_msg(err == NULL, "layout %s: %s", l->name, err);
	}
	if (have_seek) {
		ck_assert(collect_or_skip(fd, SPARSE_MAP_BACKEND_SEEK, SPARSE_MAP_ZEROES, 0, &seekz));
		err = th_compare_blocks(&seekz, &scan, blk);
		ck_assert_msg(err == NULL, "layout %s: %s", l->name, err);
		th_map_free(&seekz);
		th_map_free(&seek);
	}
	if (have_fiemap)
		th_map_free(&fiemap);
	th_map_free(&scan);
	drop_file(fd);
}
END_TEST

/* Points 2 and 3: data written into preallocated space, not synced, is data;
 * the rest of the preallocated space is a hole, marked UNWRITTEN by FIEMAP. */
START_TEST(test_prealloc_unsynced_writes_are_data)
{
	enum sparse_map_backend b = backends[_i];
	struct th_map m;
	int64_t blk;
	int fd = th_create(NULL, path, sizeof(path));

	blk = th_blksize(fd);
	if (!th_fallocate(fd, 0, 0, 64 * blk)) {
		drop_file(fd);
		return;
	}
	th_fill(fd, 8 * blk, 2 * blk);		/* dirty, in the page cache only */
	th_fill(fd, 40 * blk + 17, 100);
	if (collect_or_skip(fd, b, 0, 0, &m)) {
		const char *err = th_check_contract(fd, &m, 0);

		ck_assert_msg(err == NULL, "%s", err);
		ck_assert_msg(th_kind_at(&m, 8 * blk) == SPARSE_MAP_DATA &&
			      th_kind_at(&m, 10 * blk - 1) == SPARSE_MAP_DATA &&
			      th_kind_at(&m, 40 * blk + 17) == SPARSE_MAP_DATA,
			      "written blocks not data: %s", th_describe(&m));
		ck_assert_msg(th_kind_at(&m, 20 * blk) == SPARSE_MAP_HOLE &&
			      th_kind_at(&m, 63 * blk) == SPARSE_MAP_HOLE,
			      "preallocated space not a hole: %s", th_describe(&m));
		if (m.backend == SPARSE_MAP_BACKEND_FIEMAP) {
			for (size_t i = 0; i < m.n; i++)
				if (m.r[i].kind == SPARSE_MAP_HOLE)
					ck_assert_msg(m.r[i].flags & SPARSE_MAP_RANGE_UNWRITTEN,
						      "FIEMAP hole without UNWRITTEN: %s", th_describe(&m));
		}
		th_map_free(&m);
	}
	drop_file(fd);
}
END_TEST

/* ZEROES turns written zero blocks into holes flagged ZEROES, and only those. */
START_TEST(test_zeroes_flag_marks_written_zeroes)
{
	enum sparse_map_backend b = backends[_i];
	struct th_map m;
	int fd = th_create(NULL, path, sizeof(path));
	int64_t blk = th_blksize(fd);

	th_fill(fd, 0, 2 * blk);
	th_zero_fill(fd, 2 * blk, 8 * blk);
	th_fill(fd, 10 * blk, blk);
	th_truncate(fd, 16 * blk);
	if (collect_or_skip(fd, b, SPARSE_MAP_ZEROES, 0, &m)) {
		const char *err = th_check_contract(fd, &m, 0);

		ck_assert_msg(err == NULL, "%s", err);
		ck_assert_msg(m.n == 4 && m.r[1].offset == 2 * blk && m.r[1].length == 8 * blk &&
			      m.r[1].kind == SPARSE_MAP_HOLE,
			      "expected D H D H with the hole at block 2..10: %s", th_describe(&m));
		if (m.backend != SPARSE_MAP_BACKEND_SCAN)
			ck_assert_msg(m.r[1].flags == SPARSE_MAP_RANGE_ZEROES,
				      "written zeroes without RANGE_ZEROES: %s", th_describe(&m));
		th_map_free(&m);
	}
	drop_file(fd);
}
END_TEST

/* sparse_map_seek(): the map from any offset is the full map cut at it. */
START_TEST(test_seek_restarts_at_offset)
{
	enum sparse_map_backend b = backends[_i];
	struct th_map full, part;
	int fd = make_file(&th_layouts[7]);	/* hole-data-hole-data */

	ck_assert_str_eq(th_layouts[7].name, "hole-data-hole-data");
	if (!collect_or_skip(fd, b, 0, 0, &full)) {
		drop_file(fd);
		return;
	}
	for (size_t i = 0; i <= full.n; i++) {
		int64_t edge = i < full.n ? full.r[i].offset : full.size;

		for (int64_t start = edge - 1; start <= edge + 1; start++) {
			if (start < 0 || start > full.size)
				continue;
			ck_assert(collect_or_skip(fd, b, 0, start, &part));
			const char *err = th_check_contract(fd, &part, start);
			ck_assert_msg(err == NULL, "from %lld: %s", (long long)start, err);
			for (size_t j = 0; j < part.n; j++) {
				int64_t o = part.r[j].offset;
				ck_assert_msg(th_kind_at(&full, o) == part.r[j].kind &&
					      th_kind_at(&full, o + part.r[j].length - 1) == part.r[j].kind,
					      "from %lld the map differs: %s", (long long)start,
					      th_describe(&part));
			}
			th_map_free(&part);
		}
	}
	th_map_free(&full);
	drop_file(fd);
}
END_TEST

START_TEST(test_seek_bounds)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int fd = make_file(&th_layouts[5]);	/* hole-data */
	int64_t size;

	int rc = sparse_map_open(fd, backends[_i], 0, &map);

	if (rc == -EOPNOTSUPP && backends[_i] != SPARSE_MAP_BACKEND_AUTO) {
		drop_file(fd);
		return;	/* not built here, or not on this file system */
	}
	ck_assert_int_eq(rc, 0);
	size = sparse_map_size(map);
	ck_assert_int_eq(sparse_map_seek(map, -1), -EINVAL);
	ck_assert_int_eq(sparse_map_seek(map, INT64_MIN), -EINVAL);
	ck_assert_int_eq(sparse_map_seek(map, size + 1), -ENXIO);
	ck_assert_int_eq(sparse_map_seek(map, INT64_MAX), -ENXIO);
	ck_assert_int_eq(sparse_map_seek(map, size), 0);
	ck_assert_int_eq(sparse_map_next(map, &r), 0);
	ck_assert_int_eq(sparse_map_seek(map, size - 1), 0);
	ck_assert_int_eq(sparse_map_next(map, &r), 1);
	ck_assert_int_eq(r.offset, size - 1);
	ck_assert_int_eq(r.length, 1);
	ck_assert_int_eq(r.kind, SPARSE_MAP_DATA);
	ck_assert_int_eq(sparse_map_next(map, &r), 0);
	ck_assert_int_eq(sparse_map_next(map, &r), 0);	/* stays at the end */
	sparse_map_close(map);
	drop_file(fd);
}
END_TEST

/* The middle of the first range of kind k longer than a byte, or -1. */
static int64_t middle_of(const struct th_map *m, enum sparse_map_kind k)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->r[i].kind == k && m->r[i].length >= 2)
			return m->r[i].offset + m->r[i].length / 2;
	return -1;
}

/*
 * sparse_map_open_with(): the ranges tile [start, size) exactly and
 * sparse_map_size() is that size, for a size below the file's (aligned to a
 * block or not), fstat's, and one past EOF, from 0, the middle of data and
 * the middle of a hole.  With fstat's size the ranges are exactly what
 * sparse_map_open() and sparse_map_seek() give; with another, they agree
 * with those up to where both reach, except SCAN, whose last block
 * differs by design; past EOF, SEEK and FIEMAP say hole.  start == size
 * gives no range, start > size -ENXIO.
 */
START_TEST(test_open_with_tiles_start_to_size)
{
	const struct th_layout *l = &th_layouts[_i / NBACKENDS];
	enum sparse_map_backend b = backends[_i % NBACKENDS];
	struct th_map full, m, ref;
	int64_t blk, st_size, eof_block;
	int fd, rc;

	if (b == SPARSE_MAP_BACKEND_SCAN && strcmp(l->name, "past-4g") == 0)
		return;	/* 16 GiB read a dozen times: test_layout_keeps_contract reads it once */
	fd = make_file(l);
	blk = th_blksize(fd);
	if (!collect_or_skip(fd, b, 0, 0, &full)) {
		drop_file(fd);
		return;
	}
	if (full.backend == SPARSE_MAP_BACKEND_SCAN && strcmp(l->name, "past-4g") == 0) {
		/* The same where AUTO scans (built without SEEK and FIEMAP). */
		th_map_free(&full);
		drop_file(fd);
		return;
	}
	st_size = full.size;
	const int64_t sizes[] = { SPARSE_MAP_SIZE_FSTAT, st_size / 2, st_size / 2 / blk * blk,
				  st_size + 5 * blk + 3 };
	const int64_t starts[] = { 0, middle_of(&full, SPARSE_MAP_DATA),
				   middle_of(&full, SPARSE_MAP_HOLE) };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int64_t size = sizes[i] == SPARSE_MAP_SIZE_FSTAT ? st_size : sizes[i];
		struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;
		char what[200];

		o.backend = b;
		o.size = sizes[i];
		for (size_t j = 0; j < sizeof(starts) / sizeof(starts[0]) + 2; j++) {
			/* The starts above, then size itself and size + 1. */
			o.start = j < 3 ? starts[j] : size + (int64_t)j - 3;
			if (o.start < 0)
				continue;
			snprintf(what, sizeof(what), "layout %s, %s, start %lld, size %lld (file %lld)",
				 l->name, sparse_map_backend_name(b), (long long)o.start,
				 (long long)size, (long long)st_size);
			rc = th_collect_with(fd, &o, &m);
			if (o.start > size) {
				ck_assert_msg(rc == -ENXIO, "%s: expected -ENXIO, got %d", what, rc);
				continue;
			}
			ck_assert_msg(rc == 0, "%s: expected 0, got %d (%s)", what, rc, strerror(-rc));
			ck_assert_msg(m.size == size, "%s: sparse_map_size() is %lld", what,
				      (long long)m.size);
			/* Before the contract check reads the holes: on ext4 a
			 * read of preallocated space makes SEEK call it data. */
			ck_assert_int_eq(th_collect(fd, b, 0, o.start < st_size ? o.start : st_size,
						    &ref), 0);
			const char *err = th_check_contract(fd, &m, o.start);
			ck_assert_msg(err == NULL, "%s: %s", what, err);
			ck_assert_msg(o.start < size || m.n == 0, "%s: %zu ranges, expected none",
				      what, m.n);
			if (sizes[i] == SPARSE_MAP_SIZE_FSTAT && (m.n != ref.n || (m.n > 0 &&
				memcmp(m.r, ref.r, m.n * sizeof(*m.r)) != 0))) {
				char got[2048];

				snprintf(got, sizeof(got), "%s", th_describe(&m));
				ck_assert_msg(0, "%s: expected what open and seek give, %s; got %s",
					      what, th_describe(&ref), got);
			} else if (m.backend != SPARSE_MAP_BACKEND_SCAN &&
				   (err = th_same_kinds(&m, &ref, o.start, size < st_size ? size : st_size))) {
				ck_assert_msg(0, "%s: open_with, then open and seek: %s", what, err);
			}
			/* FIEMAP's last extent may end at its block's end. */
			eof_block = (st_size + blk - 1) / blk * blk;
			if (size > st_size && o.start < size && m.backend != SPARSE_MAP_BACKEND_SCAN)
				ck_assert_msg(th_kind_at(&m, size - 1) == SPARSE_MAP_HOLE &&
					      th_kind_at(&m, o.start > eof_block ? o.start : eof_block) ==
					      SPARSE_MAP_HOLE,
					      "%s: the bytes past EOF are not a hole: %s", what,
					      th_describe(&m));
			th_map_free(&ref);
			th_map_free(&m);
		}
	}
	th_map_free(&full);
	drop_file(fd);
}
END_TEST

/* Point 6: close puts the file offset back where open found it. */
START_TEST(test_close_restores_file_offset)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int fd = make_file(&th_layouts[7]);

	ck_assert_int_eq(lseek(fd, 12345, SEEK_SET), 12345);
	int rc = sparse_map_open(fd, backends[_i], 0, &map);
	if (rc == -EOPNOTSUPP) {
		drop_file(fd);
		return;
	}
	ck_assert_int_eq(rc, 0);
	while (sparse_map_next(map, &r) == 1)
		;
	sparse_map_close(map);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 12345);
	drop_file(fd);
}
END_TEST

START_TEST(test_getters)
{
	struct sparse_map *map;
	int fd = make_file(&th_layouts[6]);	/* data-hole */
	struct stat st;

	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_AUTO), "auto");
	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_SEEK), "seek");
	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_FIEMAP), "fiemap");
	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_SCAN), "scan");
	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_RANGES), "ranges");
	ck_assert_str_eq(sparse_map_backend_name(SPARSE_MAP_BACKEND_NONE), "none");
	ck_assert_ptr_null(sparse_map_backend_name((enum sparse_map_backend)6));
	ck_assert_ptr_null(sparse_map_backend_name((enum sparse_map_backend)-1));
	ck_assert_int_eq(sparse_map_size(NULL), -EINVAL);
	ck_assert_int_eq(sparse_map_get_backend(NULL), SPARSE_MAP_BACKEND_AUTO);
	sparse_map_close(NULL);

	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_SCAN, 0, &map), 0);
	ck_assert_int_eq(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_SCAN);
	th_fill(fd, st.st_size, 4096);	/* grows after open: the snapshot stays */
	ck_assert_int_eq(sparse_map_size(map), st.st_size);
	sparse_map_close(map);
	drop_file(fd);
}
END_TEST

/* Point 9: the file shrinks, grows or gets a hole punched while mapped. */
START_TEST(test_file_changes_during_iteration)
{
	enum sparse_map_backend b = backends[_i];
	struct sparse_map *map;
	struct sparse_map_range r;
	int fd = th_create(NULL, path, sizeof(path));
	int64_t blk = th_blksize(fd), at = 0, size;
	int n = 0, rc;

	for (int i = 0; i < 64; i++)
		th_fill(fd, i * 4 * blk, 2 * blk);
	rc = sparse_map_open(fd, b, 0, &map);
	if (rc == -EOPNOTSUPP) {
		drop_file(fd);
		return;
	}
	ck_assert_int_eq(rc, 0);
	size = sparse_map_size(map);
	while ((rc = sparse_map_next(map, &r)) == 1) {
		ck_assert_msg(r.offset == at && r.length > 0, "range [%lld,+%lld) after %lld",
			      (long long)r.offset, (long long)r.length, (long long)at);
		at = r.offset + r.length;
		if (++n == 3)
			th_truncate(fd, size / 2);		/* shrink */
		if (n == 5)
			th_fill(fd, size + blk, blk);		/* grow */
		if (n == 7)
			th_fallocate(fd, 0x03, at, 8 * blk);	/* punch ahead */
		if (r.kind == SPARSE_MAP_DATA || r.offset + r.length <= size / 2)
			continue;
		/* A hole reported past the new EOF is right: those bytes are gone. */
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(at, size);
	sparse_map_close(map);
	drop_file(fd);
}
END_TEST

/* SCAN reads a file that is truncated between two sparse_map_next()
 * calls: the bytes past the new end, which no read returned, are data, not
 * hole (the caller's own read meets the end there). */
START_TEST(test_scan_calls_bytes_past_a_truncation_data)
{
	const int64_t mib = 1 << 20;
	struct sparse_map *map;
	struct sparse_map_range r;
	int fd = th_create(NULL, path, sizeof(path));
	int64_t at = 0;
	int rc;

	for (int i = 0; i < 8; i++)
		th_fill(fd, i * mib, 4096);
	th_truncate(fd, 8 * mib);
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_SCAN, 0, &map), 0);
	while ((rc = sparse_map_next(map, &r)) == 1) {
		ck_assert_msg(r.offset == at, "range at %lld, expected %lld", (long long)r.offset,
			      (long long)at);
		if (at == 0)
			th_truncate(fd, 2 * mib);	/* after the first range */
		else
			ck_assert_msg(r.kind == SPARSE_MAP_DATA || r.offset + r.length <= 2 * mib,
				      "truncated to 2 MiB: expected data past it, got hole [%lld,+%lld)",
				      (long long)r.offset, (long long)r.length);
		at = r.offset + r.length;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(at, 8 * mib);
	sparse_map_close(map);
	drop_file(fd);
}
END_TEST

/*
 * Files whose reads end before the size fstat gives (sysfs: 4096, and a
 * few bytes or none), and procfs files that give a size: under AUTO, with
 * and without NO_READ, every byte is data, SEEK_DATA(0) is 0 and
 * SEEK_HOLE(0) is the size.  Those that exist here are tried.
 */
START_TEST(test_short_read_files_are_data)
{
	static const char *const files[] = {
		"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/cpu/online",
		"/sys/power/state", "/sys/kernel/address_bits", "/sys/kernel/cpu_byteorder",
		"/sys/class/firmware/timeout", "/proc/cmdline", "/proc/config.gz",
	};
	int tried = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		static char buf[1 << 20];
		struct stat st;
		struct th_map m;
		ssize_t got;
		int fd = open(files[i], O_RDONLY);

		if (fd < 0)
			continue;
		got = read(fd, buf, sizeof(buf));
		if (fstat(fd, &st) < 0 || st.st_size <= 0 || got < 0 ||
		    (strncmp(files[i], "/sys/", 5) == 0 && got >= st.st_size)) {
			close(fd);
			continue;	/* no size, or reads as much as it says */
		}
		ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
		for (unsigned int flags = 0; flags <= SPARSE_MAP_NO_READ; flags += SPARSE_MAP_NO_READ) {
			ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, flags, 0, &m), 0);
			ck_assert_msg(m.size == st.st_size && m.n == 1 && m.r[0].kind == SPARSE_MAP_DATA,
				      "%s (size %lld, %zd bytes read), flags %#x: expected all data, got %s",
				      files[i], (long long)st.st_size, got, flags, th_describe(&m));
			th_map_free(&m);
		}
		ck_assert_msg(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA) == 0 &&
			      sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE) == st.st_size,
			      "%s: expected SEEK_DATA(0) 0 and SEEK_HOLE(0) %lld, got %lld and %lld",
			      files[i], (long long)st.st_size,
			      (long long)sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA),
			      (long long)sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE));
		close(fd);
		tried++;
	}
	if (tried == 0)
		fprintf(stderr, "no sysfs or procfs file here reads less than its size: not tested\n");
}
END_TEST

/* Point 10: distinct maps on distinct threads at once. */
struct worker {
	int fd;
	enum sparse_map_backend backend;
	const struct th_map *expect;
	int failures;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 50; i++) {
		struct th_map m;

		if (th_collect(w->fd, w->backend, 0, 0, &m) != 0) {
			w->failures++;
			continue;
		}
		if (m.n != w->expect->n ||
		    memcmp(m.r, w->expect->r, m.n * sizeof(*m.r)) != 0)
			w->failures++;
		th_map_free(&m);
	}
	return NULL;
}

START_TEST(test_threads_map_independently)
{
	struct worker w[4];
	pthread_t t[4];
	struct th_map expect[4];
	char paths[4][4096];

	for (int i = 0; i < 4; i++) {
		int fd = th_create(NULL, paths[i], sizeof(paths[i]));
		int64_t blk = th_blksize(fd);

		for (int j = 0; j < 40; j++)
			th_fill(fd, (int64_t)j * (i + 2) * blk, blk);
		w[i].fd = open(paths[i], O_RDONLY);	/* an fd of its own: offsets apart */
		close(fd);
		w[i].backend = i == 3 ? SPARSE_MAP_BACKEND_SCAN : SPARSE_MAP_BACKEND_AUTO;
		ck_assert_int_eq(th_collect(w[i].fd, w[i].backend, 0, 0, &expect[i]), 0);
		w[i].expect = &expect[i];
		w[i].failures = 0;
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(w[i].failures == 0, "thread %d: %d maps differed", i, w[i].failures);
		th_map_free(&expect[i]);
		close(w[i].fd);
		unlink(paths[i]);
	}
}
END_TEST

/* Map fd under AUTO with flags, stderr going to a file meanwhile: the
 * backend the map used, and in text what was printed. */
static enum sparse_map_backend map_logged(int fd, unsigned int flags, char *text, size_t len)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	enum sparse_map_backend b;
	char log[4096];
	int logfd = th_create(NULL, log, sizeof(log)), saved = dup(2), rc;
	ssize_t n;

	fflush(stderr);
	dup2(logfd, 2);
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, flags, &map);
	while (rc == 0 && (rc = sparse_map_next(map, &r)) == 1)
		rc = 0;
	b = rc == 0 ? sparse_map_get_backend(map) : SPARSE_MAP_BACKEND_AUTO;
	sparse_map_close(map);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(logfd, text, len - 1, 0);
	text[n > 0 ? n : 0] = '\0';
	close(logfd);
	unlink(log);
	ck_assert_msg(rc == 0, "AUTO, flags %#x: expected 0, got %d (%s)", flags, rc, strerror(-rc));
	return b;
}

/* Point 5: the environment overrides AUTO only, and DEBUG explains. */
START_TEST(test_env_overrides_auto)
{
	struct sparse_map *map;
	int fd = make_file(&th_layouts[5]);
	char text[4096];
	enum sparse_map_backend b;

	setenv("SPARSE_MAP_BACKEND", "scan", 1);
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map), 0);
	ck_assert_int_eq(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_SCAN);
	sparse_map_close(map);
#if defined(SM_HAVE_SEEK) || defined(SM_HAVE_FIEMAP)
	/* A caller's explicit choice wins over the environment (where a
	 * backend other than SCAN is built to choose). */
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_SEEK, 0, &map) == 0 ||
			 sparse_map_open(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, &map) == 0, 1);
	ck_assert_int_ne(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_SCAN);
	sparse_map_close(map);
#endif
	setenv("SPARSE_MAP_BACKEND", "bogus", 1);
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map), 0);
	ck_assert_int_ne(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_AUTO);
	sparse_map_close(map);

	/* SPARSE_MAP_DEBUG=1 prints the probe's reasoning on stderr. */
	unsetenv("SPARSE_MAP_BACKEND");
	setenv("SPARSE_MAP_DEBUG", "1", 1);
	b = map_logged(fd, 0, text, sizeof(text));
	ck_assert_msg(strstr(text, "sparse_map: fd ") && strstr(text, sparse_map_backend_name(b)),
		      "debug output lacks the choice: %s", text);
	unsetenv("SPARSE_MAP_DEBUG");
	drop_file(fd);
}
END_TEST

/* SPARSE_MAP_NO_ENV: with SPARSE_MAP_BACKEND=scan and SPARSE_MAP_DEBUG=1
 * set, the map uses the backend AUTO takes without them and prints
 * nothing; without the flag, SCAN maps and the reasoning is printed. */
START_TEST(test_no_env_ignores_backend_and_debug)
{
	int fd = make_file(&th_layouts[7]);	/* hole-data-hole-data */
	char text[4096];
	enum sparse_map_backend plain, b;

	unsetenv("SPARSE_MAP_DEBUG");
	plain = map_logged(fd, 0, text, sizeof(text));
	setenv("SPARSE_MAP_BACKEND", "scan", 1);
	setenv("SPARSE_MAP_DEBUG", "1", 1);
	b = map_logged(fd, SPARSE_MAP_NO_ENV, text, sizeof(text));
	ck_assert_msg(b == plain, "NO_ENV: expected AUTO's own %s, got %s",
		      sparse_map_backend_name(plain), sparse_map_backend_name(b));
	ck_assert_msg(text[0] == '\0', "NO_ENV: expected nothing on stderr, got: %s", text);
	b = map_logged(fd, 0, text, sizeof(text));
	ck_assert_msg(b == SPARSE_MAP_BACKEND_SCAN, "without NO_ENV: expected scan, got %s",
		      sparse_map_backend_name(b));
	ck_assert_msg(strstr(text, "sparse_map: fd ") != NULL,
		      "without NO_ENV: expected debug lines on stderr, got: \"%s\"", text);
	unsetenv("SPARSE_MAP_BACKEND");
	unsetenv("SPARSE_MAP_DEBUG");
	drop_file(fd);
}
END_TEST

static Suite *map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("contract");

	tcase_set_timeout(tc, 600);
	tcase_add_checked_fixture(tc, th_lseek_forget, NULL);
	tcase_add_loop_test(tc, test_layout_keeps_contract, 0,
			    (int)(th_nlayouts * NBACKENDS * NFLAGSETS));
	tcase_add_loop_test(tc, test_backends_agree, 0, (int)th_nlayouts);
	tcase_add_loop_test(tc, test_prealloc_unsynced_writes_are_data, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_zeroes_flag_marks_written_zeroes, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_seek_restarts_at_offset, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_seek_bounds, 0, NBACKENDS);
	tcase_add_loop_test(tc, test_open_with_tiles_start_to_size, 0,
			    (int)th_nlayouts * NBACKENDS);
	tcase_add_loop_test(tc, test_close_restores_file_offset, 0, NBACKENDS);
	tcase_add_test(tc, test_getters);
	tcase_add_loop_test(tc, test_file_changes_during_iteration, 0, NBACKENDS);
	tcase_add_test(tc, test_short_read_files_are_data);
	tcase_add_test(tc, test_scan_calls_bytes_past_a_truncation_data);	/* known failure */
	tcase_add_test(tc, test_threads_map_independently);
	tcase_add_test(tc, test_env_overrides_auto);
	tcase_add_test(tc, test_no_env_ignores_backend_and_debug);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	unsetenv("SPARSE_MAP_BACKEND");
	return th_run_suite(map_suite());
}
