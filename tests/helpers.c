/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static void die(const char *what)
{
	fprintf(stderr, "test helper: %s: %s\n", what, strerror(errno));
	abort();
}

const char *th_dir(void)
{
	const char *d = getenv("SM_TEST_DIR");

	return d && *d ? d : ".";
}

int th_create(const char *dir, char *path, size_t pathlen)
{
	int fd;

	snprintf(path, pathlen, "%s/sm-test-XXXXXX", dir ? dir : th_dir());
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	return fd;
}

static void put(int fd, int64_t off, int64_t len, bool zero)
{
	static unsigned char buf[1 << 16];

	while (len > 0) {
		size_t n = len < (int64_t)sizeof(buf) ? (size_t)len : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = zero ? 0 : (unsigned char)(1 + (off + (int64_t)i) % 251);
		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			die("pwrite");
		off += (int64_t)n;
		len -= (int64_t)n;
	}
}

void th_fill(int fd, int64_t off, int64_t len)
{
	put(fd, off, len, false);
}

void th_zero_fill(int fd, int64_t off, int64_t len)
{
	put(fd, off, len, true);
}

void th_truncate(int fd, int64_t size)
{
	if (ftruncate(fd, size) < 0)
		die("ftruncate");
}

bool th_fallocate(int fd, int mode, int64_t off, int64_t len)
{
	if (fallocate(fd, mode, off, len) == 0)
		return true;
	if (errno == EOPNOTSUPP || errno == ENOSYS)
		return false;
	die("fallocate");
	return false;
}

void th_lseek_forget(void)
{
	(void)sparse_map_lseek(-1, 0, SPARSE_MAP_SEEK_DATA);
}

int64_t th_blksize(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		die("fstat");
	return st.st_blksize < 512 ? 512 : st.st_blksize;
}

/* Root, and not told to test as another user would (SM_TESTS_NO_ROOT, which
 * tests/mounts.sh honours too). */
bool th_is_root(void)
{
	return geteuid() == 0 && getenv("SM_TESTS_NO_ROOT") == NULL;
}

/* Layouts ------------------------------------------------------------------ */

static void l_empty(int fd, int64_t blk) { (void)fd; (void)blk; }
static void l_one_byte(int fd, int64_t blk) { (void)blk; th_fill(fd, 0, 1); }
static void l_block_minus_1(int fd, int64_t blk) { th_fill(fd, 0, blk - 1); }
static void l_block(int fd, int64_t blk) { th_fill(fd, 0, blk); }
static void l_block_plus_1(int fd, int64_t blk) { th_fill(fd, 0, blk + 1); }

static void l_hole_data(int fd, int64_t blk)
{
	th_fill(fd, 16 * blk, 16 * blk);
}

static void l_data_hole(int fd, int64_t blk)
{
	th_fill(fd, 0, 16 * blk);
	th_truncate(fd, 48 * blk);
}

static void l_hole_data_hole_data(int fd, int64_t blk)
{
	th_fill(fd, 8 * blk, 8 * blk);
	th_fill(fd, 32 * blk, 3 * blk + 100);	/* ends inside a block */
}

/* More than two FIEMAP batches of extents: 1500 runs of one block. */
static void l_fragmented(int fd, int64_t blk)
{
	for (int i = 0; i < 1500; i++)
		th_fill(fd, (int64_t)i * 4 * blk + blk, blk);
	th_truncate(fd, 1500 * 4 * blk + 2 * blk);
}

/* Preallocated space, with writes inside it that are not synced. */
static void l_prealloc_dirty(int fd, int64_t blk)
{
	if (!th_fallocate(fd, 0, 0, 64 * blk)) {
		th_truncate(fd, 64 * blk);
	}
	th_fill(fd, 8 * blk, 2 * blk);
	th_fill(fd, 40 * blk + 17, 100);
}

/* Preallocated past EOF (KEEP_SIZE) behind a hole. */
static void l_prealloc_keep_size(int fd, int64_t blk)
{
	th_fill(fd, 0, 4 * blk);
	th_truncate(fd, 32 * blk);
	th_fallocate(fd, 1 /* FALLOC_FL_KEEP_SIZE */, 16 * blk, 64 * blk);
}

/* 16 GiB logical size, data on both sides of 4 GiB and at the very end. */
static void l_past_4g(int fd, int64_t blk)
{
	const int64_t g = 1LL << 30;

	th_fill(fd, 4 * g - 2 * blk, 4 * blk);
	th_fill(fd, 8 * g + 1, 10);
	th_fill(fd, 16 * g - blk, blk);
}

static void l_punched(int fd, int64_t blk)
{
	th_fill(fd, 0, 64 * blk);
	if (fallocate(fd, 0x02 | 0x01 /* PUNCH_HOLE | KEEP_SIZE */, 16 * blk, 16 * blk) < 0) {
		if (errno != EOPNOTSUPP)
			die("punch");
		th_zero_fill(fd, 16 * blk, 16 * blk);
	}
}

/* Written zeroes: allocated, yet all zero (for SPARSE_MAP_ZEROES). */
static void l_written_zeroes(int fd, int64_t blk)
{
	th_fill(fd, 0, 2 * blk);
	th_zero_fill(fd, 2 * blk, 8 * blk);
	th_fill(fd, 10 * blk, blk);
}

const struct th_layout th_layouts[] = {
	{ "empty", l_empty, false },
	{ "one-byte", l_one_byte, false },
	{ "block-1", l_block_minus_1, false },
	{ "block", l_block, false },
	{ "block+1", l_block_plus_1, false },
	{ "hole-data", l_hole_data, false },
	{ "data-hole", l_data_hole, false },
	{ "hole-data-hole-data", l_hole_data_hole_data, false },
	{ "fragmented", l_fragmented, false },
	{ "prealloc-dirty", l_prealloc_dirty, true },
	{ "prealloc-keep-size", l_prealloc_keep_size, true },
	{ "past-4g", l_past_4g, false },
	{ "punched", l_punched, false },
	{ "written-zeroes", l_written_zeroes, false },
};
const size_t th_nlayouts = sizeof(th_layouts) / sizeof(th_layouts[0]);

/* Maps --------------------------------------------------------------------- */

static char msg[4096];

/* Append [off, off + len) of kind k to m. */
static void add_range(struct th_map *m, size_t *cap, int64_t off, int64_t len,
		      enum sparse_map_kind k)
{
	if (m->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		m->r = realloc(m->r, *cap * sizeof(*m->r));
		if (!m->r)
			die("realloc");
	}
	m->r[m->n++] = (struct sparse_map_range){ off, len, k, 0 };
}

/* Every range of map, from where it stands, into out; rc < 0 (a failed
 * sparse_map_seek) stops before the first.  Closes map. */
static int drain(struct sparse_map *map, int rc, struct th_map *out)
{
	struct sparse_map_range r;
	size_t cap = 0;

	out->size = sparse_map_size(map);
	while (rc >= 0 && (rc = sparse_map_next(map, &r)) == 1) {
		add_range(out, &cap, r.offset, r.length, r.kind);
		out->r[out->n - 1].flags = r.flags;
	}
	out->backend = sparse_map_get_backend(map);
	sparse_map_close(map);
	if (rc < 0)
		th_map_free(out);
	return rc < 0 ? rc : 0;
}

int th_collect(int fd, enum sparse_map_backend backend, unsigned int flags,
	       int64_t start, struct th_map *out)
{
	struct sparse_map *map;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sparse_map_open(fd, backend, flags, &map);
	if (rc < 0)
		return rc;
	out->open_flags = flags;
	return drain(map, start ? sparse_map_seek(map, start) : 0, out);
}

int th_collect_with(int fd, const struct sparse_map_options *opts, struct th_map *out)
{
	struct sparse_map *map;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sparse_map_open_with(fd, opts, &map);
	if (rc < 0)
		return rc;
	out->open_flags = opts->flags;
	return drain(map, 0, out);
}

const char *th_collect_lseek(int fd, struct th_map *out)
{
	static char why[512];
	struct stat st;
	size_t cap = 0;
	int64_t off = 0, data, hole;

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st) < 0)
		die("fstat");
	out->size = (int64_t)st.st_size;
	while (off < out->size) {
		data = sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_DATA);
		if (data < 0 && errno == ENXIO) {
			add_range(out, &cap, off, out->size - off, SPARSE_MAP_HOLE);
			break;
		}
		if (data < off || lseek(fd, 0, SEEK_CUR) != data) {
			snprintf(why, sizeof(why), "SEEK_DATA(%lld) gave %lld (%s), the offset is at %lld",
				 (long long)off, (long long)data, data < 0 ? strerror(errno) : "ok",
				 (long long)lseek(fd, 0, SEEK_CUR));
			return why;
		}
		if (data > off)
			add_range(out, &cap, off, data - off, SPARSE_MAP_HOLE);
		hole = sparse_map_lseek(fd, data, SPARSE_MAP_SEEK_HOLE);
		if (hole <= data || hole > out->size || lseek(fd, 0, SEEK_CUR) != hole) {
			snprintf(why, sizeof(why), "SEEK_HOLE(%lld) gave %lld (%s), the offset is at %lld",
				 (long long)data, (long long)hole, hole < 0 ? strerror(errno) : "ok",
				 (long long)lseek(fd, 0, SEEK_CUR));
			return why;
		}
		add_range(out, &cap, data, hole - data, SPARSE_MAP_DATA);
		off = hole;
	}
	return NULL;
}

const char *th_lseek_loop_matches_auto(int fd)
{
	struct th_map loop, m;
	const char *err = th_collect_lseek(fd, &loop);
	int rc;

	if (err)
		return err;
	rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);
	if (rc < 0) {
		th_map_free(&loop);
		snprintf(msg, sizeof(msg), "the AUTO map failed: %s", strerror(-rc));
		return msg;
	}
	err = th_same_kinds(&loop, &m, 0, m.size);
	if (!err)
		err = th_check_contract(fd, &loop, 0);
	th_map_free(&loop);
	th_map_free(&m);
	return err;
}

/* Whether sparse_map_lseek()'s answers at x hang together (see helpers.h). */
static const char *lseek_consistent_at(int fd, const struct th_map *m, int64_t x)
{
	int64_t d, h, d2, h2, want;
	int err, derr;

	errno = 0;
	d = sparse_map_lseek(fd, x, SPARSE_MAP_SEEK_DATA);
	derr = errno;
	if (d >= 0) {
		h2 = sparse_map_lseek(fd, d, SPARSE_MAP_SEEK_HOLE);
		if (d < x || d >= m->size || h2 <= d) {
			snprintf(msg, sizeof(msg), "SEEK_DATA(%lld) = %lld, then SEEK_HOLE there = %lld",
				 (long long)x, (long long)d, (long long)h2);
			return msg;
		}
	} else if (derr == ENXIO && x >= 0 && x < m->size) {
		h2 = sparse_map_lseek(fd, x, SPARSE_MAP_SEEK_HOLE);
		if (h2 != x) {
			snprintf(msg, sizeof(msg), "SEEK_DATA(%lld): no data, yet SEEK_HOLE there = %lld",
				 (long long)x, (long long)h2);
			return msg;
		}
	}
	want = th_seek_expected(m, x, true, &err);
	if (d != want || (d < 0 && derr != err)) {
		snprintf(msg, sizeof(msg), "SEEK_DATA(%lld) = %lld (%s), the map says %lld",
			 (long long)x, (long long)d, d < 0 ? strerror(derr) : "ok", (long long)want);
		return msg;
	}
	h = sparse_map_lseek(fd, x, SPARSE_MAP_SEEK_HOLE);
	if (h >= 0 && h < m->size) {
		errno = 0;
		d2 = sparse_map_lseek(fd, h, SPARSE_MAP_SEEK_DATA);
		if (h < x || !(d2 > h || (d2 < 0 && errno == ENXIO))) {
			snprintf(msg, sizeof(msg), "SEEK_HOLE(%lld) = %lld, then SEEK_DATA there = %lld",
				 (long long)x, (long long)h, (long long)d2);
			return msg;
		}
	}
	want = th_seek_expected(m, x, false, &err);
	if (h != want) {
		snprintf(msg, sizeof(msg), "SEEK_HOLE(%lld) = %lld, the map says %lld",
			 (long long)x, (long long)h, (long long)want);
		return msg;
	}
	return NULL;
}

const char *th_lseek_consistent(int fd, uint64_t seed, int samples)
{
	struct th_map m;
	int64_t off = 0, d, h, runs = 0, calls = 0;
	uint64_t z = seed * 0x9E3779B97F4A7C15ULL + 1;
	const char *err = NULL;
	int rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m);

	if (rc < 0) {
		snprintf(msg, sizeof(msg), "the AUTO map failed: %s", strerror(-rc));
		return msg;
	}
	for (size_t i = 0; i < m.n; i++)
		runs += m.r[i].kind == SPARSE_MAP_DATA;
	/* The loop of sparse_map(3): one SEEK_DATA a data run, and one more. */
	while (!err && calls <= runs + 1) {
		calls++;
		d = sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_DATA);
		if (d < 0)
			break;
		h = sparse_map_lseek(fd, d, SPARSE_MAP_SEEK_HOLE);
		if (d < off || h <= d) {
			snprintf(msg, sizeof(msg), "the loop: SEEK_DATA(%lld) = %lld, SEEK_HOLE = %lld",
				 (long long)off, (long long)d, (long long)h);
			err = msg;
		}
		off = h;
	}
	if (!err && calls > runs + 1) {
		snprintf(msg, sizeof(msg), "the loop has not ended after %lld SEEK_DATA calls "
			 "(the map has %lld data runs): %s", (long long)calls, (long long)runs,
			 th_describe(&m));
		err = msg;
	}
	/* At every boundary of the map and next to it, at its last bytes, and
	 * at random offsets. */
	for (size_t i = 0; !err && i < m.n && i < 64; i++)
		for (int64_t delta = -1; !err && delta <= 1; delta++)
			err = lseek_consistent_at(fd, &m, m.r[i].offset + delta);
	if (!err)
		err = lseek_consistent_at(fd, &m, m.size - 1);
	for (int i = 0; !err && i < samples && m.size > 0; i++) {
		z ^= z << 13;
		z ^= z >> 7;
		z ^= z << 17;
		/* Half uniform over the file, half within 4 MiB of its end. */
		err = lseek_consistent_at(fd, &m, i % 2 ? (int64_t)(z % (uint64_t)m.size)
						     : m.size - 1 - (int64_t)(z % (4u << 20)) %
							m.size);
	}
	th_map_free(&m);
	return err;
}

void th_map_free(struct th_map *m)
{
	free(m->r);
	m->r = NULL;
	m->n = 0;
}

int64_t th_seek_expected(const struct th_map *m, int64_t off, bool data, int *err)
{
	*err = 0;
	if (off < 0 || off >= m->size) {
		*err = ENXIO;
		return -1;
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct sparse_map_range *r = &m->r[i];

		if (off >= r->offset + r->length)
			continue;
		if ((r->kind == SPARSE_MAP_DATA) == data)
			return off > r->offset ? off : r->offset;
	}
	if (data) {
		*err = ENXIO;
		return -1;
	}
	return m->size;	/* the virtual hole at EOF */
}

const char *th_lseek_agrees(int fd, enum sparse_map_backend backend)
{
	struct th_map m;
	const char *bad = NULL;
	int r = th_collect(fd, backend, 0, 0, &m);

	if (r < 0) {
		snprintf(msg, sizeof(msg), "a fresh map fails: %s", strerror(-r));
		return msg;
	}
	for (size_t i = 0; i <= m.n && !bad; i++) {
		int64_t edge = i < m.n ? m.r[i].offset : m.size;

		for (int64_t off = edge - 1; off <= edge + 1 && !bad; off++) {
			for (int k = 0; k < 2 && !bad; k++) {
				bool data = k == 0;
				int err, got_err;
				int64_t want = th_seek_expected(&m, off, data, &err), got;

				errno = 0;
				got = sparse_map_lseek(fd, off, data ? SPARSE_MAP_SEEK_DATA
								   : SPARSE_MAP_SEEK_HOLE);
				got_err = got < 0 ? errno : 0;
				if (got != want || got_err != err) {
					snprintf(msg, sizeof(msg), "%s(%lld): a fresh map says %lld (%s), "
						 "sparse_map_lseek %lld (%s); the map: %s",
						 data ? "SEEK_DATA" : "SEEK_HOLE", (long long)off,
						 (long long)want, strerror(err), (long long)got,
						 strerror(got_err), th_describe(&m));
					bad = msg;
				}
			}
		}
	}
	th_map_free(&m);
	return bad;
}

const char *th_lseek_after_changes(int fd, enum sparse_map_backend backend, int64_t blk,
				   bool settle)
{
	static const char *const what[] = {
		"one byte written into written zeroes", "data written into a hole",
		"zeroes written over data", "truncated down and back up", "a hole punched", "grown",
	};
	const char *bad;

	th_truncate(fd, 16 * blk);
	th_fill(fd, 0, blk);
	th_zero_fill(fd, blk, 2 * blk);	/* stored, yet zeroes: a hole to SCAN */
	th_fill(fd, 4 * blk, blk);
	th_fill(fd, 8 * blk, blk);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		struct th_map m;
		int64_t want, got;
		int err, got_err, r;

		/* Settled, only the changes that add or remove pages: what a
		 * kept map believes after two seconds is where ramfs had none
		 * (changed bytes of a page are read again either way). */
		if (settle && (i == 0 || i == 2 || i == 4))
			continue;
		if (settle)
			usleep(2100 * 1000);
		/* A loop's first calls: the walk reads from 0 to the first hole
		 * and a little past it. */
		(void)sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA);
		(void)sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE);
		switch (i) {
		case 0: th_fill(fd, blk + 7, 1); break;
		case 1: th_fill(fd, 2 * blk, blk); break;
		case 2: th_zero_fill(fd, 0, blk); break;
		case 3: th_truncate(fd, 3 * blk); th_truncate(fd, 16 * blk); break;
		case 4:
			if (!th_fallocate(fd, 3 /* PUNCH_HOLE | KEEP_SIZE */, 4 * blk, blk))
				th_zero_fill(fd, 4 * blk, blk);
			break;
		default: th_fill(fd, 18 * blk, blk); break;
		}
		/* First where the last call's read lies, then everywhere. */
		r = th_collect(fd, backend, 0, 0, &m);
		if (r < 0) {
			snprintf(msg, sizeof(msg), "a fresh map fails: %s", strerror(-r));
			return msg;
		}
		want = th_seek_expected(&m, blk, true, &err);
		errno = 0;
		got = sparse_map_lseek(fd, blk, SPARSE_MAP_SEEK_DATA);
		got_err = got < 0 ? errno : 0;
		if (got != want || got_err != err)
			snprintf(msg, sizeof(msg), "SEEK_DATA(%lld): a fresh map says %lld (%s), "
				 "sparse_map_lseek %lld (%s); the map: %s", (long long)blk,
				 (long long)want, strerror(err), (long long)got, strerror(got_err),
				 th_describe(&m));
		th_map_free(&m);
		bad = got != want || got_err != err ? msg : th_lseek_agrees(fd, backend);
		if (bad) {
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " (after: %s)", what[i]);
			return msg;
		}
	}
	return NULL;
}

const char *th_describe(const struct th_map *m)
{
	static char text[2048];
	size_t used = 0;

	used += (size_t)snprintf(text, sizeof(text), "%s size %lld:",
				 sparse_map_backend_name(m->backend), (long long)m->size);
	for (size_t i = 0; i < m->n && used < sizeof(text) - 64; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, " %s[%lld,+%lld)%s%s%s",
					 m->r[i].kind == SPARSE_MAP_DATA ? "D" : "H",
					 (long long)m->r[i].offset, (long long)m->r[i].length,
					 m->r[i].flags & SPARSE_MAP_RANGE_UNWRITTEN ? "U" : "",
					 m->r[i].flags & SPARSE_MAP_RANGE_ZEROES ? "Z" : "",
					 m->r[i].flags & ~(SPARSE_MAP_RANGE_UNWRITTEN |
							   SPARSE_MAP_RANGE_ZEROES) ? "*" : "");
	if (used >= sizeof(text) - 64)
		snprintf(text + sizeof(text) - 8, 8, " ...");
	return text;
}

/* Offset of the first non-zero byte in [off, off+len), or -1. */
static int64_t first_nonzero(int fd, int64_t off, int64_t len)
{
	/* Small enough that buffer and zeroes stay in cache: 1 MiB reads of
	 * a hole ran six times slower here than 128 KiB ones. */
	static unsigned char buf[1 << 17];
	static const unsigned char zeroes[1 << 17];

	while (len > 0) {
		size_t want = len < (int64_t)sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t got = pread(fd, buf, want, off);

		if (got < 0)
			die("pread");
		if (got == 0)
			return -1;	/* past EOF reads as zeroes */
		if (memcmp(buf, zeroes, (size_t)got) != 0)
			for (ssize_t i = 0; i < got; i++)
				if (buf[i])
					return off + i;
		off += got;
		len -= got;
	}
	return -1;
}

/*
 * The first non-zero byte in a reported hole, or -1.  A hole up to 64 MiB is
 * read whole.  Reading a larger one would fill the page cache with zeroes
 * (seconds per test), so of it we read the first and last MiB and whatever
 * the kernel's own SEEK_DATA finds inside it; the tests that make such
 * files also check the offsets they wrote.
 */
static int64_t hole_nonzero(int fd, int64_t off, int64_t len)
{
	const int64_t edge = 1 << 20;
	int64_t end = off + len, at, nz;

	if (len <= 64 * edge)
		return first_nonzero(fd, off, len);
	if ((nz = first_nonzero(fd, off, edge)) >= 0 ||
	    (nz = first_nonzero(fd, end - edge, edge)) >= 0)
		return nz;
	for (at = off; at < end;) {
		off_t data = lseek(fd, at, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			return -1;
		if (data < 0)
			return first_nonzero(fd, at, end - at);	/* no SEEK_DATA here */
		if (data >= end)
			return -1;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		if ((nz = first_nonzero(fd, data, hole - data)) >= 0)
			return nz;
		at = hole > data ? hole : data + 1;
	}
	return -1;
}

const char *th_check_contract(int fd, const struct th_map *m, int64_t start)
{
	int64_t at = start;

	for (size_t i = 0; i < m->n; i++) {
		const struct sparse_map_range *r = &m->r[i];

		if (r->offset != at) {
			snprintf(msg, sizeof(msg), "range %zu starts at %lld, expected %lld (gap or overlap): %s",
				 i, (long long)r->offset, (long long)at, th_describe(m));
			return msg;
		}
		if (r->length <= 0) {
			snprintf(msg, sizeof(msg), "range %zu has length %lld: %s", i,
				 (long long)r->length, th_describe(m));
			return msg;
		}
		if (r->kind != SPARSE_MAP_DATA && r->kind != SPARSE_MAP_HOLE) {
			snprintf(msg, sizeof(msg), "range %zu has kind %d", i, (int)r->kind);
			return msg;
		}
		if (i > 0 && m->r[i - 1].kind == r->kind &&
		    (!(m->open_flags & SPARSE_MAP_SPLIT_FLAGS) || m->r[i - 1].flags == r->flags)) {
			snprintf(msg, sizeof(msg), "ranges %zu and %zu are both %s%s: not maximal: %s",
				 i - 1, i, r->kind == SPARSE_MAP_DATA ? "data" : "hole",
				 m->open_flags & SPARSE_MAP_SPLIT_FLAGS ? " with the same flags" : "",
				 th_describe(m));
			return msg;
		}
		if (r->kind == SPARSE_MAP_DATA && r->flags) {
			snprintf(msg, sizeof(msg), "data range %zu has flags %#x", i, r->flags);
			return msg;
		}
		if (r->kind == SPARSE_MAP_HOLE) {
			int64_t nz = hole_nonzero(fd, r->offset, r->length);

			if (nz >= 0) {
				snprintf(msg, sizeof(msg), "DATA LOSS: byte %lld is not zero but lies in hole [%lld,+%lld): %s",
					 (long long)nz, (long long)r->offset, (long long)r->length, th_describe(m));
				return msg;
			}
		}
		at = r->offset + r->length;
	}
	if (at != (start < m->size ? m->size : start)) {
		snprintf(msg, sizeof(msg), "ranges end at %lld, size is %lld: %s", (long long)at,
			 (long long)m->size, th_describe(m));
		return msg;
	}
	return NULL;
}

enum sparse_map_kind th_kind_at(const struct th_map *m, int64_t off)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sparse_map_range *r = &m->r[mid];

		if (off < r->offset)
			hi = mid;
		else if (off >= r->offset + r->length)
			lo = mid + 1;
		else
			return r->kind;
	}
	return 0;
}

static const char *kind_name(enum sparse_map_kind k)
{
	return k == SPARSE_MAP_DATA ? "data" : k == SPARSE_MAP_HOLE ? "hole" : "in no range";
}

const char *th_same_kinds(const struct th_map *a, const struct th_map *b, int64_t lo, int64_t hi)
{
	/* Between two boundaries of either map both are constant: compare
	 * at lo and at every boundary inside [lo, hi). */
	for (int side = 0; side < 2; side++) {
		const struct th_map *m = side ? b : a;

		for (size_t i = 0; i <= m->n; i++) {
			int64_t at = i == 0 ? lo : m->r[i - 1].offset;

			if (at < lo || at >= hi || th_kind_at(a, at) == th_kind_at(b, at))
				continue;
			snprintf(msg, sizeof(msg), "byte %lld: %s in the first map, %s in the second\n  %s\n",
				 (long long)at, kind_name(th_kind_at(a, at)),
				 kind_name(th_kind_at(b, at)), th_describe(a));
			size_t used = strlen(msg);
			snprintf(msg + used, sizeof(msg) - used, "  %s", th_describe(b));
			return msg;
		}
	}
	return NULL;
}

/* Is any byte of [off, off+len) data in m? */
static bool any_data(const struct th_map *m, int64_t off, int64_t len)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct sparse_map_range *r = &m->r[i];

		if (r->kind == SPARSE_MAP_DATA && r->offset < off + len && off < r->offset + r->length)
			return true;
	}
	return false;
}

const char *th_compare_blocks(const struct th_map *a, const struct th_map *b, int64_t blk)
{
	size_t ia = 0, ib = 0;

	if (a->size != b->size) {
		snprintf(msg, sizeof(msg), "sizes differ: %lld and %lld", (long long)a->size,
			 (long long)b->size);
		return msg;
	}
	/* Walk the boundaries of both maps: only blocks that hold one can differ. */
	while (ia < a->n || ib < b->n) {
		int64_t next_a = ia < a->n ? a->r[ia].offset : INT64_MAX;
		int64_t next_b = ib < b->n ? b->r[ib].offset : INT64_MAX;
		int64_t at = next_a < next_b ? next_a : next_b;
		int64_t block = at - at % blk;

		for (int64_t blkoff = block - blk; blkoff <= block; blkoff += blk) {
			if (blkoff < 0)
				continue;
			int64_t len = blkoff + blk > a->size ? a->size - blkoff : blk;
			if (len <= 0)
				continue;
			if (any_data(a, blkoff, len) != any_data(b, blkoff, len)) {
				snprintf(msg, sizeof(msg), "block at %lld: %s calls it %s, %s calls it %s\n  %s\n",
					 (long long)blkoff, sparse_map_backend_name(a->backend),
					 any_data(a, blkoff, len) ? "data" : "hole",
					 sparse_map_backend_name(b->backend),
					 any_data(b, blkoff, len) ? "data" : "hole", th_describe(a));
				size_t used = strlen(msg);
				snprintf(msg + used, sizeof(msg) - used, "  %s", th_describe(b));
				return msg;
			}
		}
		if (next_a == at)
			ia++;
		if (next_b == at)
			ib++;
	}
	return NULL;
}
