/* SPDX-License-Identifier: MIT */
/*
 * test-anywhere: tests without Check, for every system the library builds
 * for.  make check runs it on Linux; the Windows build (mingw-w64) runs it
 * under wine (.ci/stages/37-windows.sh).  Linked with the test build of the
 * library (lib/sys-calls.h), so that it can answer for the system:
 *  - RANGES (backend-ranges.c) driven through the seam with answers shaped
 *    as Windows documents FSCTL_QUERY_ALLOCATED_RANGES's: a file without
 *    the sparse attribute is one range, ERROR_MORE_DATA cuts an answer
 *    short, ranges may reach outside the request;
 *  - a real file mapped by SCAN and sparse_map_lseek(), and the file
 *    offset left where the caller had it (Windows reads with ReadFile at
 *    an offset, which moves the file pointer unless put back);
 *  - on Windows, the descriptor's access mode (no fcntl there), a file
 *    opened in text mode, and under wine, what wine 8.0 does: sparse
 *    files accepted and ignored, FSCTL_QUERY_ALLOCATED_RANGES refused, so
 *    AUTO takes SCAN.
 * Exit status 0 when all passed, 1 otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _WIN32
#include <io.h>
#include <windows.h>
#include <winioctl.h>
#endif

#include "sparse_map.h"
#include "../lib/sparse-map-private.h"
#include "../lib/sys-calls.h"

#ifndef O_BINARY
#define O_BINARY 0
#endif

#define KiB 1024LL
#define MiB (1024 * KiB)

static int failures, checks;
static char dir[1024];

#define EXPECT(cond, ...) do { \
	checks++; \
	if (!(cond)) { \
		failures++; \
		fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} \
} while (0)

struct want {
	int64_t offset, length;
	enum sparse_map_kind kind;
};

/* Whether the map of fd by backend is exactly want[0..n). */
static void expect_map(int fd, enum sparse_map_backend backend, unsigned int flags,
		       const struct want *want, size_t n, const char *what)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	size_t i = 0;
	int rc = sparse_map_open(fd, backend, flags, &map);

	EXPECT(rc == 0, "%s: open: %s", what, strerror(-rc));
	if (rc < 0)
		return;
	EXPECT(sparse_map_get_backend(map) == backend || backend == SPARSE_MAP_BACKEND_AUTO,
	       "%s: backend %s", what, sparse_map_backend_name(sparse_map_get_backend(map)));
	while ((rc = sparse_map_next(map, &r)) == 1) {
		EXPECT(i < n && r.offset == want[i].offset && r.length == want[i].length &&
		       r.kind == want[i].kind && r.flags == 0,
		       "%s: range %zu is %s [%lld, +%lld) flags %#x", what, i,
		       r.kind == SPARSE_MAP_DATA ? "data" : "hole", (long long)r.offset,
		       (long long)r.length, (unsigned)r.flags);
		i++;
	}
	EXPECT(rc == 0, "%s: next: %s", what, strerror(-rc));
	EXPECT(i == n, "%s: %zu ranges, not %zu", what, i, n);
	sparse_map_close(map);
}

/* A file of size bytes with data in [at[k], at[k] + len[k]), holes
 * elsewhere where the file system keeps them.  The data is 0x1a, where a
 * read through the C runtime in Windows' text mode would stop. */
static int make_file(const char *name, int64_t size, const int64_t *at, const int64_t *len,
		     size_t n, char *path, size_t pathlen)
{
	static unsigned char buf[64 * KiB];
	int fd;

	snprintf(path, pathlen, "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_BINARY, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror(path);
		exit(1);
	}
	memset(buf, 0x1a, sizeof(buf));
	for (size_t k = 0; k < n; k++) {
		for (int64_t done = 0; done < len[k];) {
			int64_t chunk = len[k] - done < (int64_t)sizeof(buf) ? len[k] - done
									     : (int64_t)sizeof(buf);

			if (lseek(fd, (off_t)(at[k] + done), SEEK_SET) < 0 ||
			    write(fd, buf, (unsigned int)chunk) != chunk) {
				perror(path);
				exit(1);
			}
			done += chunk;
		}
	}
	return fd;
}

/* ---- RANGES through the seam ---------------------------------------- */

/*
 * A file as Windows would describe it: its allocated ranges (sorted), and
 * how it answers.  Each answer holds at most per_call ranges, then says
 * ERROR_MORE_DATA, as a full output buffer does.
 */
static struct fake {
	const struct sm_alloc_range *alloc;
	size_t nalloc;
	bool not_sparse;	/* no sparse attribute: the whole request */
	bool unclipped;		/* ranges as allocated, not cut to the request */
	bool reverse;		/* the answer's ranges backwards */
	bool raw;		/* alloc as it is, whatever is asked */
	bool raw_more;		/* ... and say ERROR_MORE_DATA */
	bool lie_complete;	/* a full answer that says it is all */
	bool nobufs;		/* fail (ENOBUFS) where the answer does not fit */
	const struct sm_alloc_range *second;	/* the second call's answer, partial */
	size_t nsecond;
	size_t per_call;	/* 0: as many as fit */
	int fail_errno;		/* answer -1 with this errno */
	int fail_from, fail_to;	/* ... in calls [fail_from, fail_to) (0: the first) */
	bool more_empty;	/* say ERROR_MORE_DATA with no range */
	int calls;
	int64_t asked[64];	/* the offsets asked about */
} fake;

static int fake_ranges(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
		       size_t max, size_t *n)
{
	size_t k = 0, limit = fake.per_call && fake.per_call < max ? fake.per_call : max;
	bool more = false;

	(void)fd;
	if (fake.calls < 64)
		fake.asked[fake.calls] = off;
	fake.calls++;
	if (fake.fail_errno && fake.calls > fake.fail_from && fake.calls <= fake.fail_to) {
		errno = fake.fail_errno;
		return -1;
	}
	*n = 0;
	if (fake.more_empty)
		return 1;
	if (fake.second && fake.calls == 2) {
		*n = fake.nsecond < max ? fake.nsecond : max;
		memcpy(out, fake.second, *n * sizeof(*out));
		return 1;
	}
	if (fake.raw) {
		*n = fake.nalloc < max ? fake.nalloc : max;
		memcpy(out, fake.alloc, *n * sizeof(*out));
		return fake.raw_more || *n < fake.nalloc;
	}
	if (fake.not_sparse) {
		out[0] = (struct sm_alloc_range){ off, len };
		*n = 1;
		return 0;
	}
	for (size_t i = 0; i < fake.nalloc; i++) {
		int64_t s = fake.alloc[i].offset, e = s + fake.alloc[i].length;

		if (e <= off || s >= off + len)
			continue;
		if (k == limit) {
			if (fake.nobufs) {
				errno = ENOBUFS;
				return -1;
			}
			more = !fake.lie_complete;
			break;
		}
		if (!fake.unclipped) {
			s = s < off ? off : s;
			e = e > off + len ? off + len : e;
		}
		out[k++] = (struct sm_alloc_range){ s, e - s };
	}
	if (fake.reverse) {
		for (size_t i = 0; i < k / 2; i++) {
			struct sm_alloc_range t = out[i];

			out[i] = out[k - 1 - i];
			out[k - 1 - i] = t;
		}
	}
	*n = k;
	return more;
}

/* The seam answers for a file of n allocated ranges, in every other way
 * as Windows would. */
static void fake_reset(const struct sm_alloc_range *alloc, size_t n)
{
	memset(&fake, 0, sizeof(fake));
	fake.alloc = alloc;
	fake.nalloc = n;
	sm_sys_table.allocated_ranges = fake_ranges;
}

static int sized_file(int64_t size)
{
	char path[1100];

	return make_file("seam", size, NULL, NULL, 0, path, sizeof(path));
}

static const struct sm_alloc_range three[] = {
	{ 0, 64 * KiB }, { 1 * MiB, 128 * KiB }, { 3 * MiB, 64 * KiB },
};
static const struct want three_map[] = {
	{ 0, 64 * KiB, SPARSE_MAP_DATA },
	{ 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
	{ 1 * MiB, 128 * KiB, SPARSE_MAP_DATA },
	{ 1 * MiB + 128 * KiB, 2 * MiB - 128 * KiB, SPARSE_MAP_HOLE },
	{ 3 * MiB, 64 * KiB, SPARSE_MAP_DATA },
	{ 3 * MiB + 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
};

static void test_ranges_answers(void)
{
	int fd = sized_file(4 * MiB);
	static const struct want all[] = { { 0, 4 * MiB, SPARSE_MAP_DATA } };

	fake_reset(NULL, 0);
	fake.not_sparse = true;
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, all, 1, "not sparse: the whole request");

	fake_reset(three, 3);
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, three_map, 6, "three ranges, one answer");
	/* usable() once, then one call for the whole file. */
	EXPECT(fake.calls == 2, "one answer took %d calls", fake.calls);

	fake_reset(three, 3);
	fake.per_call = 1;
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, three_map, 6, "ERROR_MORE_DATA each time");
	/* Asked again from each last range's end, 64 KiB and 1 MiB + 128 KiB;
	 * the third answer holds the last range, and says it is complete. */
	EXPECT(fake.calls == 4 && fake.asked[1] == 0 && fake.asked[2] == 64 * KiB &&
	       fake.asked[3] == 1 * MiB + 128 * KiB,
	       "more-data calls: %d, at %lld %lld %lld", fake.calls, (long long)fake.asked[1],
	       (long long)fake.asked[2], (long long)fake.asked[3]);

	fake_reset(three, 3);
	fake.reverse = true;
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, three_map, 6, "a complete answer out of order");

	fake_reset(three, 3);
	fake.unclipped = true;
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, three_map, 6, "ranges not cut to the request");

	/* From the middle of a range: a partial answer whose first range
	 * starts before the offset asked about. */
	{
		struct sparse_map *map;
		struct sparse_map_range r;

		fake_reset(three, 3);
		fake.unclipped = true;
		fake.per_call = 1;
		EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
		EXPECT(sparse_map_seek(map, 1 * MiB + 64 * KiB) == 0, "seek");
		for (int i = 3; i < 6; i++) {
			int64_t from = i == 3 ? 1 * MiB + 64 * KiB : three_map[i - 1].offset;
			int64_t to = three_map[i - 1].offset + three_map[i - 1].length;

			if (i == 3) {
				EXPECT(sparse_map_next(map, &r) == 1 && r.offset == from &&
				       r.offset + r.length == to && r.kind == SPARSE_MAP_DATA,
				       "after seek: [%lld, +%lld)", (long long)r.offset,
				       (long long)r.length);
			}
			EXPECT(sparse_map_next(map, &r) == 1 && r.offset == three_map[i].offset &&
			       r.length == three_map[i].length && r.kind == three_map[i].kind,
			       "after seek, range %d: [%lld, +%lld)", i, (long long)r.offset,
			       (long long)r.length);
		}
		EXPECT(sparse_map_next(map, &r) == 0, "after seek: the end");
		sparse_map_close(map);
	}
	close(fd);

	/* Overlapping and touching ranges, and one past EOF: merged and cut. */
	{
		static const struct sm_alloc_range odd[] = {
			{ 0, 32 * KiB }, { 16 * KiB, 48 * KiB }, { 64 * KiB, 64 * KiB },
			{ 1 * MiB, 4 * MiB },
		};
		static const struct want odd_map[] = {
			{ 0, 128 * KiB, SPARSE_MAP_DATA },
			{ 128 * KiB, 1 * MiB - 128 * KiB, SPARSE_MAP_HOLE },
			{ 1 * MiB, 1 * MiB, SPARSE_MAP_DATA },
		};

		fd = sized_file(2 * MiB);
		fake_reset(odd, 4);
		fake.unclipped = true;
		expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, odd_map, 3, "overlaps and EOF");
		close(fd);
	}
}

/* RANGES's map of fd: how many ranges, and how many data bytes. */
static void count_map(int fd, int64_t *pieces, int64_t *data)
{
	struct sparse_map *map;
	struct sparse_map_range r;

	*pieces = *data = 0;
	EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
	while (sparse_map_next(map, &r) == 1) {
		(*pieces)++;
		if (r.kind == SPARSE_MAP_DATA)
			*data += r.length;
	}
	sparse_map_close(map);
}

/* Many ranges: a batch per call, not a call per range. */
static void test_ranges_batches(void)
{
	enum { N = 1000 };
	static struct sm_alloc_range many[N];
	int64_t data, pieces;
	int fd = sized_file(N * 128 * KiB);

	for (int i = 0; i < N; i++)
		many[i] = (struct sm_alloc_range){ i * 128 * KiB, 64 * KiB };
	fake_reset(many, N);
	count_map(fd, &pieces, &data);
	EXPECT(pieces == 2 * N && data == N * 64 * KiB, "%lld ranges, %lld data bytes",
	       (long long)pieces, (long long)data);
	/* 1000 ranges in answers of up to 256: 4, and usable() asked once. */
	EXPECT(fake.calls == 5, "%d calls for %d ranges", fake.calls, N);

	/* A full answer that says it is complete may still have been cut
	 * short: the rest of the file is asked about, not called a hole. */
	fake_reset(many, N);
	fake.lie_complete = true;
	count_map(fd, &pieces, &data);
	EXPECT(pieces == 2 * N && data == N * 64 * KiB,
	       "full answers called complete: %lld ranges, %lld data bytes", (long long)pieces,
	       (long long)data);
	close(fd);
}

/* What RANGES must never believe: an error, not a hole. */
static void test_ranges_distrust(void)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int fd = sized_file(4 * MiB), rc;

	/* ERROR_MORE_DATA out of order: a gap may be a range left out. */
	fake_reset(three, 3);
	fake.per_call = 2;
	fake.reverse = true;
	EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
	rc = sparse_map_next(map, &r);
	EXPECT(rc == -EIO, "partial answer out of order: %d", rc);
	sparse_map_close(map);

	/* ERROR_MORE_DATA with nothing in it: no progress. */
	fake_reset(NULL, 0);
	fake.more_empty = true;
	EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
	rc = sparse_map_next(map, &r);
	EXPECT(rc == -EIO, "empty partial answer: %d", rc);
	sparse_map_close(map);

	/* A range that is negative or runs past INT64_MAX. */
	{
		static const struct sm_alloc_range bad[][1] = {
			{ { 0, -1 } }, { { -4096, 8192 } }, { { 4096, INT64_MAX } },
		};

		for (int i = 0; i < 3; i++) {
			fake_reset(bad[i], 1);
			fake.raw = true;
			EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
			rc = sparse_map_next(map, &r);
			EXPECT(rc == -EIO, "bad range %d: %d", i, rc);
			sparse_map_close(map);
		}
	}

	/* The call failing once after the first answer: the error, then
	 * the map goes on from where it was, and nothing is lost. */
	fake_reset(three, 3);
	fake.per_call = 1;
	fake.fail_errno = EIO;
	fake.fail_from = 2;	/* usable(), the first batch, then one EIO */
	fake.fail_to = 3;
	EXPECT(sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map) == 0, "open");
	rc = sparse_map_next(map, &r);
	EXPECT(rc == -EIO, "the failure: %d", rc);
	for (int i = 0; i < 6; i++) {
		rc = sparse_map_next(map, &r);
		EXPECT(rc == 1 && r.offset == three_map[i].offset &&
		       r.length == three_map[i].length && r.kind == three_map[i].kind,
		       "range %d after the failure: %d [%lld, +%lld)", i, rc, (long long)r.offset,
		       (long long)r.length);
	}
	EXPECT(sparse_map_next(map, &r) == 0, "the end after the failure");
	sparse_map_close(map);

	/* An empty range in a partial answer says nothing of where it ends:
	 * the next answer, from the end of the last range that has bytes,
	 * finds the data at 512 KiB. */
	{
		static const struct sm_alloc_range file[] = {
			{ 0, 4 * KiB }, { 512 * KiB, 4 * KiB }, { 1 * MiB, 4 * KiB },
		};
		static const struct sm_alloc_range cut[] = { { 0, 4 * KiB }, { 1 * MiB, 0 } };
		static const struct want file_map[] = {
			{ 0, 4 * KiB, SPARSE_MAP_DATA },
			{ 4 * KiB, 508 * KiB, SPARSE_MAP_HOLE },
			{ 512 * KiB, 4 * KiB, SPARSE_MAP_DATA },
			{ 516 * KiB, 508 * KiB, SPARSE_MAP_HOLE },
			{ 1 * MiB, 4 * KiB, SPARSE_MAP_DATA },
			{ 1 * MiB + 4 * KiB, 3 * MiB - 4 * KiB, SPARSE_MAP_HOLE },
		};

		fake_reset(file, 3);
		fake.second = cut;
		fake.nsecond = 2;
		expect_map(fd, SPARSE_MAP_BACKEND_RANGES, 0, file_map, 6,
			   "an empty range ending a partial answer");
	}

	/* A call that fails where the answer does not fit (Samba) cannot map
	 * a file in batches: not used. */
	fake_reset(three, 3);
	fake.nobufs = true;
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map);
	EXPECT(rc == -EOPNOTSUPP && !map, "ENOBUFS, forced: %d", rc);

	/* Not supported (FAT, wine): forcing it says so; refused: the error. */
	fake_reset(NULL, 0);
	fake.fail_errno = EOPNOTSUPP;
	fake.fail_to = 1000;
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map);
	EXPECT(rc == -EOPNOTSUPP && !map, "unsupported, forced: %d", rc);
	fake_reset(NULL, 0);
	fake.fail_errno = EACCES;
	fake.fail_to = 1000;
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map);
	EXPECT(rc == -EACCES && !map, "refused, forced: %d", rc);
	close(fd);
}

/* VERIFY reads RANGES's holes back: a hole that is not zeroes is data. */
static void test_ranges_verify(void)
{
	static const int64_t at[] = { 0, 1 * MiB };
	static const int64_t len[] = { 64 * KiB, 64 * KiB };
	static const struct sm_alloc_range only_first[] = { { 0, 64 * KiB } };
	static const struct want lied[] = {
		{ 0, 64 * KiB, SPARSE_MAP_DATA },
		{ 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
		{ 1 * MiB, 64 * KiB, SPARSE_MAP_DATA },
		{ 1 * MiB + 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
	};
	char path[1100];
	int fd = make_file("verify", 2 * MiB, at, len, 2, path, sizeof(path));

	fake_reset(only_first, 1);
	expect_map(fd, SPARSE_MAP_BACKEND_RANGES, SPARSE_MAP_VERIFY, lied, 4,
		   "VERIFY over a range the call left out");
	close(fd);
	unlink(path);
}

/* ---- A real file --------------------------------------------------- */

static const int64_t layout_at[] = { 0, 1 * MiB };
static const int64_t layout_len[] = { 64 * KiB, 64 * KiB };
static const struct want layout_map[] = {
	{ 0, 64 * KiB, SPARSE_MAP_DATA },
	{ 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
	{ 1 * MiB, 64 * KiB, SPARSE_MAP_DATA },
	{ 1 * MiB + 64 * KiB, 1 * MiB - 64 * KiB, SPARSE_MAP_HOLE },
};

static void test_scan_file(void)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	char path[1100];
	int fd = make_file("layout", 2 * MiB, layout_at, layout_len, 2, path, sizeof(path));
	int wr, rc;

	sm_sys_table.allocated_ranges = NULL;
	expect_map(fd, SPARSE_MAP_BACKEND_SCAN, 0, layout_map, 4, "SCAN");
	expect_map(fd, SPARSE_MAP_BACKEND_SCAN, SPARSE_MAP_SYNC, layout_map, 4, "SCAN, SYNC");

	/* The caller's file offset stays put, also between calls. */
	EXPECT(lseek(fd, 12345, SEEK_SET) == 12345, "lseek");
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_SCAN, 0, &map);
	EXPECT(rc == 0, "open: %s", strerror(-rc));
	if (rc == 0) {
		EXPECT(sparse_map_next(map, &r) == 1 && sparse_map_next(map, &r) == 1 &&
		       r.kind == SPARSE_MAP_HOLE, "two ranges");
		EXPECT(lseek(fd, 0, SEEK_CUR) == 12345, "offset moved by reading to %lld",
		       (long long)lseek(fd, 0, SEEK_CUR));
		sparse_map_close(map);
	}
	EXPECT(lseek(fd, 0, SEEK_CUR) == 12345, "offset after close: %lld",
	       (long long)lseek(fd, 0, SEEK_CUR));

	/* sparse_map_lseek: the same answers, the offset at each. */
	EXPECT(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE) == 64 * KiB, "SEEK_HOLE(0)");
	EXPECT(lseek(fd, 0, SEEK_CUR) == 64 * KiB, "offset at the hole");
	EXPECT(sparse_map_lseek(fd, 64 * KiB, SPARSE_MAP_SEEK_DATA) == 1 * MiB, "SEEK_DATA(64K)");
	EXPECT(sparse_map_lseek(fd, 1 * MiB + 1, SPARSE_MAP_SEEK_HOLE) == 1 * MiB + 64 * KiB,
	       "SEEK_HOLE(1M + 1)");
	errno = 0;
	EXPECT(sparse_map_lseek(fd, 1 * MiB + 64 * KiB, SPARSE_MAP_SEEK_DATA) == -1 &&
	       errno == ENXIO, "SEEK_DATA past the last data: errno %d", errno);
	errno = 0;
	EXPECT(sparse_map_lseek(fd, 2 * MiB, SPARSE_MAP_SEEK_HOLE) == -1 && errno == ENXIO,
	       "SEEK_HOLE at EOF: errno %d", errno);
	close(fd);

	/* SYNC on a descriptor that may not write (Windows flushes through
	 * a second handle). */
	fd = open(path, O_RDONLY | O_BINARY);
	EXPECT(fd >= 0, "open O_RDONLY");
	expect_map(fd, SPARSE_MAP_BACKEND_SCAN, SPARSE_MAP_SYNC, layout_map, 4, "SCAN, SYNC, read-only");
	close(fd);

	/* Not open for reading: SCAN and VERIFY refuse at open. */
	wr = open(path, O_WRONLY | O_BINARY);
	EXPECT(wr >= 0, "open O_WRONLY");
	rc = sparse_map_open(wr, SPARSE_MAP_BACKEND_SCAN, 0, &map);
	EXPECT(rc == -EBADF, "SCAN on O_WRONLY: %d", rc);
	rc = sparse_map_open(wr, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY, &map);
	EXPECT(rc == -EBADF, "VERIFY on O_WRONLY: %d", rc);
#ifdef _WIN32
	/* No SEEK there, and RANGES needs read access: nothing reports
	 * holes, so every byte is data (NONE), which is no error. */
	rc = sparse_map_open(wr, SPARSE_MAP_BACKEND_AUTO, 0, &map);
	EXPECT(rc == 0, "AUTO on O_WRONLY: %d", rc);
	if (rc == 0) {
		EXPECT(sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_NONE,
		       "AUTO on O_WRONLY: backend %d", (int)sparse_map_get_backend(map));
		sparse_map_close(map);
	}
#endif
	close(wr);

#ifdef _WIN32
	/* Text mode changes what read() returns, not the map. */
	fd = open(path, O_RDONLY | O_TEXT);
	EXPECT(fd >= 0, "open O_TEXT");
	expect_map(fd, SPARSE_MAP_BACKEND_SCAN, 0, layout_map, 4, "SCAN, text mode");
	close(fd);
#endif
	unlink(path);
}

#ifdef _WIN32
/* ---- Windows, and what wine does ------------------------------------ */

static bool under_wine(void)
{
	HMODULE ntdll = GetModuleHandleA("ntdll.dll");

	return ntdll && GetProcAddress(ntdll, "wine_get_version");
}

static void test_windows(void)
{
	struct sparse_map *map;
	char path[1100];
	int fd = make_file("windows", 2 * MiB, layout_at, layout_len, 2, path, sizeof(path));
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	FILE_ALLOCATED_RANGE_BUFFER q = { .FileOffset.QuadPart = 0, .Length.QuadPart = 2 * MiB };
	FILE_ALLOCATED_RANGE_BUFFER out[8];
	DWORD got = 0;
	BOOL ok;
	int rc;

	sm_sys_table.allocated_ranges = NULL;
	ok = DeviceIoControl(h, FSCTL_SET_SPARSE, NULL, 0, NULL, 0, &got, NULL);
	EXPECT(ok, "FSCTL_SET_SPARSE: error %lu", GetLastError());
	ok = DeviceIoControl(h, FSCTL_QUERY_ALLOCATED_RANGES, &q, sizeof(q), out, sizeof(out),
			     &got, NULL);
	if (under_wine()) {
		/* wine 8.0: refused.  Were it to answer, AUTO would take
		 * RANGES, and the expectations below would change. */
		EXPECT(!ok && GetLastError() == ERROR_NOT_SUPPORTED,
		       "wine answers FSCTL_QUERY_ALLOCATED_RANGES: %d, error %lu", ok,
		       GetLastError());
		rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_RANGES, 0, &map);
		EXPECT(rc == -EOPNOTSUPP, "RANGES forced under wine: %d", rc);
		rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
		EXPECT(rc == 0 && sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_SCAN,
		       "AUTO under wine: %d, %s", rc,
		       rc == 0 ? sparse_map_backend_name(sparse_map_get_backend(map)) : "-");
		if (rc == 0)
			sparse_map_close(map);
		expect_map(fd, SPARSE_MAP_BACKEND_AUTO, 0, layout_map, 4, "AUTO under wine");
		/* The environment is read without getuid (Windows has none);
		 * what it names gives way to AUTO where it cannot serve. */
		_putenv("SPARSE_MAP_BACKEND=none");
		rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
		EXPECT(rc == 0 && sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_NONE,
		       "SPARSE_MAP_BACKEND=none under wine: %d", rc);
		if (rc == 0)
			sparse_map_close(map);
		_putenv("SPARSE_MAP_BACKEND=ranges");
		rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
		EXPECT(rc == 0 && sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_SCAN,
		       "SPARSE_MAP_BACKEND=ranges under wine gives way to AUTO: %d", rc);
		if (rc == 0)
			sparse_map_close(map);
		_putenv("SPARSE_MAP_BACKEND=");
	} else {
		/* NTFS and ReFS answer; the map must tile the file either way. */
		EXPECT(ok || GetLastError() == ERROR_INVALID_FUNCTION,
		       "FSCTL_QUERY_ALLOCATED_RANGES: error %lu", GetLastError());
	}

	/* AUTO takes RANGES where the call answers (here, the seam's). */
	fake_reset(three, 1);
	rc = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map);
	EXPECT(rc == 0 && sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_RANGES,
	       "AUTO where the call answers: %d", rc);
	if (rc == 0)
		sparse_map_close(map);
	sm_sys_table.allocated_ranges = NULL;
	close(fd);
	unlink(path);
}
#endif

int main(int argc, char **argv)
{
	const char *tmp = argc > 1 ? argv[1] : getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s", tmp && *tmp ? tmp : ".");
	test_ranges_answers();
	test_ranges_batches();
	test_ranges_distrust();
	test_ranges_verify();
	test_scan_file();
#ifdef _WIN32
	test_windows();
	printf("windows%s: ", under_wine() ? " (wine)" : "");
#endif
	{
		char path[1100];

		snprintf(path, sizeof(path), "%s/seam", dir);
		unlink(path);
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
