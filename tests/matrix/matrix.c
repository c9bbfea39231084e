/* SPDX-License-Identifier: MIT */
/*
 * The file-system matrix: on one directory (one file system), every fixed
 * layout of tests/helpers.c and a number of seeded random layouts, through
 * every backend the file system supports and AUTO, asserting:
 *   - the contract (th_check_contract: tiling, maximal, every hole reads
 *     back as zeroes, every non-zero byte lies in data);
 *   - SEEK, FIEMAP and SCAN agree block by block, where they have the same
 *     information; a block they disagree on must read back as zeroes, and
 *     then the difference is "allowed" (preallocated space, or zeroes that
 *     were written: SCAN calls both holes, SEEK and FIEMAP may call them
 *     data).  SEEK is not compared where it is the kernel's generic stub
 *     (no hole information at all);
 *   - sparse_map_lseek(SEEK_DATA/SEEK_HOLE) agrees with the iterator of the
 *     same backend (forced through SPARSE_MAP_BACKEND) at every range
 *     boundary, boundary +-1, 0, EOF-1, EOF, EOF+1 and -1, and moves the
 *     file offset only on success;
 *   - xfs_io "seek -a -r 0" and filefrag -e, run on the file after fsync,
 *     agree with the SEEK and FIEMAP maps at block granularity.
 * A forced SEEK may fail where the kernel's own lseek(SEEK_HOLE or
 * SEEK_DATA, 0) fails with the same error (a caller who names a backend
 * gets its errors); the row counts those files.  AUTO may not fail.
 * With --clone each layout is made, fsynced and cloned (FICLONE), and the
 * clone, written over without sync, is what is checked: dirty copy-on-write
 * over shared extents.
 * It prints one table row per backend (see usage()).  A failure prints the
 * seed, the layout's operations and the command that replays it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "helpers.h"

#define GiB (1LL << 30)
#define MiB (1LL << 20)
#define KiB (1LL << 10)

/* Rows of the table ------------------------------------------------------ */

enum reason { R_PREALLOC, R_ZEROES, NREASONS };
static const char *const reason_names[NREASONS] = { "prealloc", "zeroes" };

enum row_id { ROW_AUTO, ROW_SEEK, ROW_FIEMAP, ROW_SCAN, ROW_XFS_IO, ROW_FILEFRAG, NROWS };
static const char *const row_names[NROWS] = { "auto", "seek", "fiemap", "scan", "xfs_io", "filefrag" };
static const enum sparse_map_backend row_backend[4] = {
	SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK,
	SPARSE_MAP_BACKEND_FIEMAP, SPARSE_MAP_BACKEND_SCAN,
};

struct row {
	long files, checks, allowed, failures;
	long reasons[NREASONS];
	long unsupported;	/* files the backend (or tool) could not map */
	long stub;		/* files where SEEK was the generic stub */
	long chose[4];		/* AUTO: which backend it picked */
	long too_big;		/* files not read whole: over --scan-max */
	long kernel_err;	/* SEEK: failed as the kernel's lseek does */
	long near_max;		/* tools: files reaching the last folio below 2^63 */
	int kernel_errno;
};

static struct row rows[NROWS];

/* Options */
static const char *label = "?";
static int64_t max_size = INT64_MAX;
/* Reading a hole on ext4, XFS or Btrfs fills the page cache with zeroes:
 * 4 GB/s for the first GiBs, then 1 GB/s once it must evict (ext2: 0.6);
 * tmpfs reads holes from the zero page at 38 GB/s.  So forced SCAN skips
 * larger files unless told (run.sh lifts the limit on tmpfs, where SCAN
 * gets its files past 4 GiB). */
static int64_t scan_max = 1LL << 30;
static long nseeds = 4;
static uint64_t seed_base;
static const char *only;
static const char *reference;	/* --existing: the directory the files were built in */
static bool tools = true;
static bool verbose;		/* --verbose: each layout and its time */
static bool clone_mode;		/* --clone: check a written-over clone of each layout */
/* --layout-block: the unit of the layouts, instead of st_blksize (which is
 * 2 MiB on tmpfs huge=always, where 1500 blocks would be 3 GiB of RAM). */
static int64_t layout_blk;
static bool have_xfs_io, have_filefrag;

/* Layouts ----------------------------------------------------------------- */

enum op_kind { OP_WRITE, OP_WRITE_ZEROES, OP_TRUNCATE, OP_FALLOC, OP_FALLOC_KEEP,
	       OP_PUNCH, OP_ZERO_RANGE, OP_FSYNC, OP_CLONE };
static const char *const op_names[] = { "write", "write-zeroes", "truncate", "fallocate",
					"fallocate-keep-size", "punch-hole", "zero-range", "fsync",
					"fsync, clone" };

/* A random layout has up to 16; --clone adds a clone and 4 writes. */
#define MAX_OPS 24

struct op {
	enum op_kind kind;
	int64_t off, len;	/* truncate: off is the new size */
	int err;		/* what the file system said: 0 or an errno */
};

struct layout {
	char name[64];
	const struct th_layout *fixed;	/* else random, from seed */
	uint64_t seed;
	int64_t blk;
	struct op ops[MAX_OPS];
	size_t nops;
};

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	/* splitmix64: tiny, and the same sequence on every platform */
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int64_t rnd_below(int64_t n)
{
	return n <= 0 ? 0 : (int64_t)(rnd() % (uint64_t)n);
}

/*
 * A random layout.  Sizes come in classes so that small files, where block
 * boundaries matter, are common and files past 4 GiB, whose holes are
 * expensive to read, are rare (1 in 16).  Half the offsets are aligned.
 */
static void gen_layout(struct layout *l, uint64_t seed, int64_t blk)
{
	int64_t limit, cls;

	memset(l, 0, sizeof(*l));
	l->seed = seed;
	l->blk = blk;
	snprintf(l->name, sizeof(l->name), "random seed %" PRIu64, seed);
	rnd_state = seed;
	cls = rnd_below(16);
	if (cls < 7)
		limit = 64 * blk;
	else if (cls < 12)
		limit = 8 * MiB;
	else if (cls < 15)
		limit = 256 * MiB;
	else
		limit = 4 * GiB + rnd_below(GiB);
	if (limit > max_size)
		limit = max_size;

	size_t n = 1 + (size_t)rnd_below(10);
	if (limit > 4 * GiB) {
		/* Make sure something lands on either side of 4 GiB. */
		l->ops[l->nops++] = (struct op){ OP_WRITE, 4 * GiB - rnd_below(2 * blk) - 1,
						 1 + rnd_below(4 * blk), 0 };
	}
	while (l->nops < n + (limit > 4 * GiB) && l->nops < MAX_OPS - 1) {
		struct op o = { 0, 0, 0, 0 };
		int64_t k = rnd_below(100), maxlen;
		bool aligned = rnd() & 1;

		if (k < 34)
			o.kind = OP_WRITE;
		else if (k < 40)
			o.kind = OP_WRITE_ZEROES;
		else if (k < 50)
			o.kind = OP_TRUNCATE;
		else if (k < 60)
			o.kind = OP_FALLOC;
		else if (k < 68)
			o.kind = OP_FALLOC_KEEP;
		else if (k < 80)
			o.kind = OP_PUNCH;
		else if (k < 88)
			o.kind = OP_ZERO_RANGE;
		else
			o.kind = OP_FSYNC;
		/* Written bytes stay few, so the 512 MiB images never fill. */
		maxlen = o.kind == OP_WRITE || o.kind == OP_WRITE_ZEROES ? 256 * KiB :
			 o.kind == OP_FALLOC || o.kind == OP_FALLOC_KEEP ? 4 * MiB : 16 * MiB;
		if (maxlen > limit)
			maxlen = limit;
		o.off = rnd_below(limit);
		o.len = 1 + rnd_below(maxlen);
		if (aligned) {
			o.off -= o.off % blk;
			o.len = (o.len + blk - 1) / blk * blk;
		}
		if (o.kind == OP_TRUNCATE)
			o.off = aligned ? o.off : rnd_below(limit + 1);
		if (o.off + o.len > max_size)
			o.len = max_size - o.off;
		if (o.len <= 0 && o.kind != OP_TRUNCATE && o.kind != OP_FSYNC)
			continue;
		l->ops[l->nops++] = o;
	}
	if (rnd() & 1)
		l->ops[l->nops++] = (struct op){ OP_FSYNC, 0, 0, 0 };
}

/*
 * Layouts of the matrix's own, after tests/helpers.c's.  grown-inline: 40
 * bytes fsynced, which ext4 with inline_data keeps in the inode, then 3000
 * more without sync; the kernel's lseek(SEEK_HOLE, 0) fails with ENOENT
 * there until writeback (Linux 6.18).  Elsewhere a small file like others.
 */
static void build_grown_inline(int fd, int64_t blk)
{
	(void)blk;
	th_fill(fd, 0, 40);
	if (fsync(fd) < 0)
		abort();
	th_fill(fd, 40, 3000);
}

/* The largest size the file system lets fd be truncated to (and at most
 * --max-size): ext4 16 TiB with 4 KiB blocks, tmpfs, XFS and Btrfs 2^63 - 1. */
static int64_t largest_size(int fd)
{
	int64_t lo = 0, hi = max_size;	/* lo is possible; is hi? */

	if (ftruncate(fd, hi) == 0)
		return hi;
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (ftruncate(fd, mid) == 0)
			lo = mid;
		else
			hi = mid;
	}
	if (ftruncate(fd, lo) < 0)
		abort();
	return lo;
}

/* The extreme sizes: a file of the largest size with no data, and one with
 * a page of data at its very end (where Linux's tmpfs is wrong near 2^63). */
static void build_largest_empty(int fd, int64_t blk)
{
	(void)blk;
	largest_size(fd);
}

static void build_largest_last_page(int fd, int64_t blk)
{
	int64_t size = largest_size(fd), n = size < 4096 ? size : 4096;

	(void)blk;
	th_fill(fd, size - n, n);
}

static const struct th_layout own_layouts[] = {
	{ "grown-inline", build_grown_inline, false },
	{ "largest-empty", build_largest_empty, false },
	{ "largest-last-page", build_largest_last_page, false },
};
#define N_OWN (sizeof(own_layouts) / sizeof(own_layouts[0]))

/* The fixed layouts: tests/helpers.c's, then the matrix's own. */
static size_t n_fixed(void)
{
	return th_nlayouts + N_OWN;
}

static const struct th_layout *fixed_at(size_t i)
{
	return i < th_nlayouts ? &th_layouts[i] : &own_layouts[i - th_nlayouts];
}

static void fixed_layout(struct layout *l, const struct th_layout *t, int64_t blk)
{
	memset(l, 0, sizeof(*l));
	l->fixed = t;
	l->blk = blk;
	snprintf(l->name, sizeof(l->name), "layout %s", t->name);
}

/*
 * --clone: after the layout, fsync, a clone, and 1 to 4 writes into the
 * clone, which the layout's seed (or name) picks.  Half of them start where
 * the source has data (shared extents, copied on write), the rest anywhere
 * (often a hole next to shared blocks: XFS's copy-on-write reservation).
 */
static void add_clone_ops(struct layout *l, int src)
{
	struct stat st;
	size_t n;

	if (fstat(src, &st) < 0)
		abort();
	rnd_state = l->seed ^ 0xc10eULL;
	for (const char *c = l->name; *c; c++)
		rnd_state = rnd_state * 31 + (unsigned char)*c;
	l->ops[l->nops++] = (struct op){ OP_CLONE, 0, 0, 0 };
	n = 1 + (size_t)rnd_below(4);
	for (size_t i = 0; i < n; i++) {
		int64_t off = rnd_below(st.st_size + 1), len = 1 + rnd_below(64 * KiB);

		if (rnd() & 1) {
			off_t d = lseek(src, off, SEEK_DATA);

			if (d >= 0)
				off = d;
		}
		if (rnd() & 1) {
			off -= off % l->blk;
			len = (len + l->blk - 1) / l->blk * l->blk;
		}
		l->ops[l->nops++] = (struct op){ OP_WRITE, off, len, 0 };
	}
}

/* Apply l's operations from the first on to fd (a fixed layout is built
 * first); the clone is clone_and_write()'s, which applies what follows it. */
static void apply_ops(int fd, struct layout *l, size_t first)
{
	if (l->fixed && first == 0)
		l->fixed->build(fd, l->blk);
	for (size_t i = first; i < l->nops; i++) {
		struct op *o = &l->ops[i];
		int r = 0;

		switch (o->kind) {
		case OP_WRITE:
			th_fill(fd, o->off, o->len);
			break;
		case OP_WRITE_ZEROES:
			th_zero_fill(fd, o->off, o->len);
			break;
		case OP_TRUNCATE:
			th_truncate(fd, o->off);
			break;
		case OP_FALLOC:
			r = fallocate(fd, 0, o->off, o->len);
			break;
		case OP_FALLOC_KEEP:
			r = fallocate(fd, FALLOC_FL_KEEP_SIZE, o->off, o->len);
			break;
		case OP_PUNCH:
			r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, o->off, o->len);
			break;
		case OP_ZERO_RANGE:
			r = fallocate(fd, FALLOC_FL_ZERO_RANGE, o->off, o->len);
			break;
		case OP_FSYNC:
			r = fsync(fd);
			break;
		case OP_CLONE:
			break;
		}
		/* A file system without the call (ramfs, ext2, FUSE) or out of
		 * space simply has the file without it; the layout says so. */
		o->err = r < 0 ? errno : 0;
	}
}

static void apply_layout(int fd, struct layout *l)
{
	apply_ops(fd, l, 0);
}

static void print_layout(FILE *f, const struct layout *l)
{
	fprintf(f, "  %s (block %" PRId64 ")\n", l->name, l->blk);
	for (size_t i = 0; i < l->nops; i++) {
		const struct op *o = &l->ops[i];

		fprintf(f, "    %-20s", op_names[o->kind]);
		if (o->kind == OP_TRUNCATE)
			fprintf(f, " size %" PRId64, o->off);
		else if (o->kind != OP_FSYNC && o->kind != OP_CLONE)
			fprintf(f, " [%" PRId64 ", +%" PRId64 ")", o->off, o->len);
		if (o->err)
			fprintf(f, "   (%s)", strerror(o->err));
		fputc('\n', f);
	}
}

/* Does [lo, hi) touch space that fallocate or zero-range went over? */
static bool in_prealloc(const struct layout *l, int64_t lo, int64_t hi)
{
	if (l->fixed)
		return l->fixed->prealloc;
	for (size_t i = 0; i < l->nops; i++) {
		const struct op *o = &l->ops[i];

		if ((o->kind == OP_FALLOC || o->kind == OP_FALLOC_KEEP || o->kind == OP_ZERO_RANGE) &&
		    !o->err && o->off < hi && lo < o->off + o->len)
			return true;
	}
	return false;
}

/* Failures ---------------------------------------------------------------- */

static const char *cur_path;
static const struct layout *cur_layout;
static bool cur_reported;
static const char *mode_flag = "";

static void failf(enum row_id row, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void failf(enum row_id row, const char *fmt, ...)
{
	char cap[96] = "";
	int used = 0;
	va_list ap;

	rows[row].failures++;
	fprintf(stderr, "FAIL %s/%s: ", label, row_names[row]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cur_reported)
		return;
	cur_reported = true;
	fprintf(stderr, "  file %s, layout:\n", cur_path);
	print_layout(stderr, cur_layout);
	/* A file checked with --existing was made by --build: replay its
	 * layout on a writable directory. */
	if (max_size != INT64_MAX)
		used = snprintf(cap, sizeof(cap), "--max-size %" PRId64 " ", max_size);
	if (layout_blk)
		snprintf(cap + used, sizeof(cap) - (size_t)used, "--layout-block %" PRId64 " ",
			 layout_blk);
	if (cur_layout->fixed)
		fprintf(stderr, "  replay: tests/matrix/matrix %s%s--label %s --only f:%s DIR\n",
			mode_flag, cap, label, cur_layout->fixed->name);
	else
		fprintf(stderr, "  replay: tests/matrix/matrix %s%s--label %s --only r:%" PRIu64 " DIR\n",
			mode_flag, cap, label, cur_layout->seed);
}

static void pass(enum row_id row)
{
	rows[row].checks++;
}

/* Maps -------------------------------------------------------------------- */

struct span {
	int64_t lo, hi;
};

/* The blocks a map calls data (a block is data if any byte of it is), merged. */
static size_t data_blocks(const struct th_map *m, int64_t blk, struct span **out)
{
	struct span *s = malloc((m->n + 1) * sizeof(*s));
	size_t n = 0;

	if (!s)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		const struct sparse_map_range *r = &m->r[i];
		int64_t lo, hi;

		if (r->kind != SPARSE_MAP_DATA)
			continue;
		lo = r->offset / blk;
		/* Rounded up without overflow: a range may end at INT64_MAX. */
		hi = (r->offset + r->length) / blk + ((r->offset + r->length) % blk != 0);
		if (n && lo <= s[n - 1].hi) {
			if (hi > s[n - 1].hi)
				s[n - 1].hi = hi;
		} else {
			s[n++] = (struct span){ lo, hi };
		}
	}
	*out = s;
	return n;
}

static bool span_has(const struct span *s, size_t n, int64_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b < s[mid].lo)
			hi = mid;
		else if (b >= s[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* NULL when [lo, hi) reads back as zeroes, else what is not zero: the
 * contract checker's own hole test, on a map of that one hole. */
static const char *not_zero(int fd, int64_t lo, int64_t hi)
{
	struct sparse_map_range r = { lo, hi - lo, SPARSE_MAP_HOLE, 0 };
	struct th_map m = { &r, 1, hi, SPARSE_MAP_BACKEND_SCAN, 0 };

	return th_check_contract(fd, &m, lo);
}

/*
 * Compare two maps of fd block by block.  Where they differ the bytes must
 * be zero: one source saw allocated or preallocated space, the other a hole
 * or zeroes; neither loses data.  Returns 0 when equal, 1 when they differ
 * only that way (the reason counted on both rows), -1 on a real difference.
 */
static int compare(int fd, const struct layout *l, const struct th_map *a, enum row_id ra,
		   const struct th_map *b, enum row_id rb, int64_t blk)
{
	struct span *da, *db;
	size_t na = data_blocks(a, blk, &da), nb = data_blocks(b, blk, &db);
	bool reason[NREASONS] = { false, false };
	int result = 0;
	int64_t cut[4];
	size_t ia = 0, ib = 0;

	if (a->size != b->size) {
		failf(rb, "%s and %s see sizes %" PRId64 " and %" PRId64, row_names[ra],
		      row_names[rb], a->size, b->size);
		free(da);
		free(db);
		return -1;
	}
	/* Walk the edges of both span lists; between two edges both are constant. */
	for (int64_t at = 0;;) {
		int64_t next = INT64_MAX;
		bool in_a, in_b;

		while (ia < na && da[ia].hi <= at)
			ia++;
		while (ib < nb && db[ib].hi <= at)
			ib++;
		cut[0] = ia < na ? (da[ia].lo > at ? da[ia].lo : da[ia].hi) : INT64_MAX;
		cut[1] = ib < nb ? (db[ib].lo > at ? db[ib].lo : db[ib].hi) : INT64_MAX;
		next = cut[0] < cut[1] ? cut[0] : cut[1];
		if (next == INT64_MAX)
			break;
		in_a = span_has(da, na, at);
		in_b = span_has(db, nb, at);
		if (in_a != in_b) {
			/* Cut at the size before multiplying: the last block of
			 * the largest file ends past INT64_MAX. */
			int64_t lo = at * blk, hi = next > a->size / blk ? a->size : next * blk;
			const char *nz;

			if (hi > a->size)
				hi = a->size;
			nz = not_zero(fd, lo, hi);
			if (nz) {
				failf(rb, "%s calls [%" PRId64 ", %" PRId64 ") %s, %s calls it %s, and it is "
				      "not all zero (%.200s)\n  %s: %s", row_names[ra], lo, hi,
				      in_a ? "data" : "hole", row_names[rb], in_b ? "data" : "hole", nz,
				      row_names[ra], th_describe(a));
				fprintf(stderr, "  %s: %s\n", row_names[rb], th_describe(b));
				result = -1;
				break;
			}
			reason[in_prealloc(l, lo, hi) ? R_PREALLOC : R_ZEROES] = true;
			result = 1;
		}
		at = next;
	}
	free(da);
	free(db);
	if (result == 1) {
		for (int i = 0; i < NREASONS; i++) {
			rows[ra].reasons[i] += reason[i];
			rows[rb].reasons[i] += reason[i];
		}
		rows[ra].allowed++;
		rows[rb].allowed++;
	} else if (result == 0) {
		pass(ra);
		pass(rb);
	}
	return result;
}

/* sparse_map_lseek ------------------------------------------------------- */

/* What SEEK_DATA or SEEK_HOLE at off should give, by the map: >= 0, or -ENXIO. */
static int64_t expect_seek(const struct th_map *m, int64_t off, bool data)
{
	if (off < 0 || off >= m->size)
		return -ENXIO;
	for (size_t i = 0; i < m->n; i++) {
		const struct sparse_map_range *r = &m->r[i];
		int64_t end = r->offset + r->length;

		if (off >= end)
			continue;
		if ((r->kind == SPARSE_MAP_DATA) == data)
			return off > r->offset ? off : r->offset;
	}
	return data ? -ENXIO : m->size;	/* the virtual hole at EOF */
}

/* Would answering SEEK_DATA at off make a reading backend read far?  Reading a
 * multi-GiB hole per offset costs seconds; the map over it is checked anyway. */
static bool reads_far(const struct th_map *m, int64_t off)
{
	int64_t d = expect_seek(m, off, true);

	if (off < 0 || off >= m->size)
		return false;
	return (d < 0 ? m->size : d) - off > 64 * MiB;
}

/* Whether [from, to) of fd reads back as zeroes (or past the end). */
static bool reads_as_zeroes(int fd, int64_t from, int64_t to)
{
	unsigned char buf[65536];

	while (from < to) {
		size_t n = to - from < (int64_t)sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t got = pread(fd, buf, n, from);

		if (got <= 0)
			return got == 0;
		for (ssize_t i = 0; i < got; i++)
			if (buf[i])
				return false;
		from += got;
	}
	return true;
}

static void check_one_lseek(int fd, enum row_id row, const struct th_map *m, int64_t off,
			    bool data, bool reads)
{
	/* Where the file offset is before the call: it must stay there on
	 * failure.  Inside the file, since a block device refuses more. */
	int64_t sentinel = m->size < 7 ? 0 : 7;
	int64_t want, got, pos;
	int err;

	if (data && reads && reads_far(m, off))
		return;
	want = expect_seek(m, off, data);
	if (lseek(fd, sentinel, SEEK_SET) != sentinel)
		abort();
	errno = 0;
	got = sparse_map_lseek(fd, off, data ? SPARSE_MAP_SEEK_DATA : SPARSE_MAP_SEEK_HOLE);
	err = errno;
	pos = lseek(fd, 0, SEEK_CUR);
	if (want >= 0 ? got == want && pos == want : got == -1 && err == ENXIO && pos == sentinel) {
		pass(row);
		return;
	}
	/* AUTO's map with FIEMAP without sync may call preallocated blocks
	 * data that the kernel's SEEK, which sparse_map_lseek() trusts on
	 * ext4, XFS and Btrfs, calls a hole: coarser, never wrong, so allowed
	 * where the blocks between the two answers read back as zeroes. */
	if (row == ROW_AUTO && m->backend == SPARSE_MAP_BACKEND_FIEMAP && want >= 0 && got >= 0 &&
	    pos == got && (data ? got > want : got < want) &&
	    reads_as_zeroes(fd, data ? want : got, data ? got : want)) {
		pass(row);
		return;
	}
	failf(row, "sparse_map_lseek(%" PRId64 ", %s) = %" PRId64 " (%s), file offset %" PRId64
	      "; the iterator says %" PRId64 "%s\n  map: %s", off, data ? "SEEK_DATA" : "SEEK_HOLE",
	      got, got < 0 ? strerror(err) : "ok", pos, want, want < 0 ? " (ENXIO)" : "",
	      th_describe(m));
}

static void pin_lseek(enum row_id row, const struct th_map *m)
{
	if (row == ROW_AUTO && m->backend == SPARSE_MAP_BACKEND_FIEMAP)
		unsetenv("SPARSE_MAP_BACKEND");
	else
		setenv("SPARSE_MAP_BACKEND", sparse_map_backend_name(m->backend), 1);
}

static void check_lseek(int fd, enum row_id row, const struct th_map *m, bool reads)
{
	/* m->size + 1 saturates: at INT64_MAX it is asked twice, not overflowed. */
	int64_t fixed[] = { -1, 0, 1, m->size - 1, m->size,
			    m->size < INT64_MAX ? m->size + 1 : INT64_MAX };
	/* A layout of 1500 extents has 3000 boundaries; a sample tells as much. */
	size_t step = m->n > 48 ? m->n / 48 : 1;

	/*
	 * sparse_map_lseek() is pinned to the backend that made the map.  For
	 * AUTO too: its probe may rightly change its mind between two calls
	 * (reading a ramfs hole allocates it, so once SCAN has read the file,
	 * SEEK's "all data" is the truth), and then the two answers come from
	 * different sources.  The probe itself is the one the map went through.
	 * But not where AUTO chose FIEMAP: that is the unsynced way of ext4
	 * and XFS, which asks SEEK inside preallocated extents, where the
	 * kernel's SEEK calls clean cached pages data; forced FIEMAP flushes
	 * and calls them a hole.  AUTO's probe there does not change its mind.
	 */
	pin_lseek(row, m);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		for (int d = 0; d < 2; d++)
			check_one_lseek(fd, row, m, fixed[i], d, reads);
	for (size_t i = 1; i < m->n; i += step)
		for (int64_t delta = -1; delta <= 1; delta++)
			for (int d = 0; d < 2; d++)
				check_one_lseek(fd, row, m, m->r[i].offset + delta, d, reads);
	unsetenv("SPARSE_MAP_BACKEND");
}

/* Independent tools ------------------------------------------------------- */

/* A map from sorted data extents [lo, hi) (may overlap, may pass EOF). */
static void map_from_extents(struct th_map *m, int64_t size, const struct span *e, size_t n)
{
	int64_t at = 0;

	memset(m, 0, sizeof(*m));
	m->size = size;
	m->r = calloc(2 * n + 2, sizeof(*m->r));
	if (!m->r)
		abort();
	for (size_t i = 0; i < n && at < size; i++) {
		int64_t lo = e[i].lo < at ? at : e[i].lo;
		int64_t hi = e[i].hi > size ? size : e[i].hi;

		if (hi <= lo)
			continue;
		if (lo > at)
			m->r[m->n++] = (struct sparse_map_range){ at, lo - at, SPARSE_MAP_HOLE, 0 };
		if (m->n && m->r[m->n - 1].kind == SPARSE_MAP_DATA)
			m->r[m->n - 1].length += hi - at;
		else
			m->r[m->n++] = (struct sparse_map_range){ lo, hi - lo, SPARSE_MAP_DATA, 0 };
		at = hi;
	}
	if (at < size)
		m->r[m->n++] = (struct sparse_map_range){ at, size - at, SPARSE_MAP_HOLE, 0 };
}

/* Run "tool args 'path'" with its output to read; paths here are ours, and quoted. */
static FILE *run_tool(const char *tool, const char *path)
{
	char cmd[8192];

	if (strchr(path, '\''))
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s '%s' 2>&1", tool, path);
	return popen(cmd, "r");
}

/*
 * xfs_io's "seek -a -r 0" prints every DATA and HOLE offset the kernel's
 * SEEK_DATA/SEEK_HOLE give from 0: the same source as the SEEK backend, read
 * by other code.  0 and the map, or -1 when it printed nothing usable.
 */
static int xfs_io_map(const char *path, int64_t size, struct th_map *m)
{
	FILE *p = run_tool("xfs_io -r -c 'seek -a -r 0'", path);
	struct span *e = NULL;
	size_t n = 0, cap = 0;
	char line[256], what[16], val[32];
	int64_t data_at = -1;
	bool header = false;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "Whence", 6) == 0) {
			header = true;
			continue;
		}
		if (sscanf(line, "%15s %31s", what, val) != 2)
			continue;
		int64_t v = strcmp(val, "EOF") == 0 ? size : strtoll(val, NULL, 10);

		if (strcmp(what, "DATA") == 0) {
			data_at = v;
		} else if (strcmp(what, "HOLE") == 0 && data_at >= 0) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				e = realloc(e, cap * sizeof(*e));
				if (!e)
					abort();
			}
			e[n++] = (struct span){ data_at, v };
			data_at = -1;
		}
	}
	if (pclose(p) != 0 || !header) {
		free(e);
		return -1;
	}
	if (data_at >= 0 && data_at < size) {
		/* Data to EOF: xfs_io stops without printing the final hole. */
		e = realloc(e, (n + 1) * sizeof(*e));
		if (!e)
			abort();
		e[n++] = (struct span){ data_at, size };
	}
	map_from_extents(m, size, e, n);
	free(e);
	return 0;
}

/*
 * filefrag -e lists FIEMAP's extents in file-system blocks, by other code
 * than the FIEMAP backend's.  Like the backend we call an unwritten extent a
 * hole and every other extent data.
 */
static int filefrag_map(const char *path, int64_t size, struct th_map *m)
{
	FILE *p = run_tool("filefrag -e", path);
	struct span *e = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	int64_t bs = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		long long lo, hi;
		char *s = strstr(line, " blocks of "), *t = strstr(line, " block of ");

		if (s || t) {
			bs = strtoll(s ? s + 11 : t + 10, NULL, 10);
			continue;
		}
		if (sscanf(line, " %*d: %lld.. %lld:", &lo, &hi) != 2)
			continue;
		if (bs <= 0 || strstr(line, "unwritten"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			e = realloc(e, cap * sizeof(*e));
			if (!e)
				abort();
		}
		/* The largest file's last block ends past INT64_MAX. */
		e[n++] = (struct span){ lo * bs, hi > INT64_MAX / bs - 1 ? INT64_MAX : (hi + 1) * bs };
	}
	if (pclose(p) != 0 || bs <= 0) {
		free(e);
		return -1;
	}
	/* filefrag lists extents in logical order; keep that promise checked. */
	for (size_t i = 1; i < n; i++)
		if (e[i].lo < e[i - 1].lo) {
			free(e);
			return -1;
		}
	map_from_extents(m, size, e, n);
	free(e);
	return 0;
}

static void check_tool(int fd, const char *path, const struct layout *l, enum row_id row,
		       enum sparse_map_backend b, int64_t blk)
{
	struct th_map ours, theirs;
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0)
		abort();
	/* The tools print the kernel's own answers, which are wrong for the
	 * last folio below 2^63 (tmpfs calls data there a hole, when the
	 * page is in a huge folio); the library's answers there are checked
	 * above. */
	{
		int64_t page = sysconf(_SC_PAGESIZE), zone = page * page / 8;

		if (zone < (2 << 20))
			zone = 2 << 20;
		if ((int64_t)st.st_size > INT64_MAX - zone) {
			rows[row].near_max++;
			return;
		}
	}
	r = th_collect(fd, b, 0, 0, &ours);
	if (r == -EOPNOTSUPP) {
		rows[row].unsupported++;
		return;
	}
	if (r < 0) {
		failf(row, "mapping with %s for the tool: %s", sparse_map_backend_name(b), strerror(-r));
		return;
	}
	r = row == ROW_XFS_IO ? xfs_io_map(path, st.st_size, &theirs)
			      : filefrag_map(path, st.st_size, &theirs);
	if (r < 0) {
		failf(row, "%s gave no usable output on %s", row_names[row], path);
	} else {
		rows[row].files++;
		theirs.backend = b;
		compare(fd, l, &ours, row == ROW_XFS_IO ? ROW_SEEK : ROW_FIEMAP, &theirs, row, blk);
		th_map_free(&theirs);
	}
	th_map_free(&ours);
}

/* One file ---------------------------------------------------------------- */

static int64_t st_size_of(int fd)
{
	uint64_t bytes = 0;
	struct stat st;

	if (fstat(fd, &st) < 0)
		abort();
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &bytes) == 0)
		return (int64_t)bytes;
	return st.st_size;
}

static bool seek_is_stub(int fd)
{
	struct stat st;
	off_t h;

	if (fstat(fd, &st) < 0)
		abort();
	h = lseek(fd, 0, SEEK_HOLE);
	return st.st_size > 0 && h == st.st_size && (int64_t)st.st_blocks * 512 < st.st_size;
}

/* Does the kernel's own lseek(SEEK_HOLE or SEEK_DATA, 0) fail with -err? */
static bool seek_fails_as_kernel(int fd, int err)
{
	off_t keep = lseek(fd, 0, SEEK_CUR);
	bool same = (lseek(fd, 0, SEEK_HOLE) < 0 && errno == -err) ||
		    (lseek(fd, 0, SEEK_DATA) < 0 && errno == -err);

	(void)lseek(fd, keep, SEEK_SET);
	return same;
}

static bool is_reading(const struct th_map *m)
{
	return m->backend == SPARSE_MAP_BACKEND_SCAN;
}

/*
 * Every check on one file.  ref, when not NULL, is a map of the same bytes
 * elsewhere (the file a squashfs image or a loop device was made from):
 * its SCAN map must be ours, block for block.
 */
/* Whether AUTO would read fd to map it. */
static bool auto_would_read(int fd)
{
	struct sparse_map *map;
	bool reads;

	if (sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_NO_READ, &map) < 0)
		return false;
	reads = sparse_map_get_backend(map) == SPARSE_MAP_BACKEND_NONE;
	sparse_map_close(map);
	return reads;
}

static void check_file(int fd, const char *path, const struct layout *l, bool blockdev,
		       const struct th_map *ref)
{
	struct th_map maps[4];
	bool have[4] = { false, false, false, false };
	bool stub = seek_is_stub(fd);
	int64_t blk = th_blksize(fd);
	const char *msg;
	struct stat st;
	struct th_map seek_now;	/* SEEK's map right after AUTO's, when AUTO is not SEEK */
	bool have_seek_now = false;

	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cur_path = path;
	cur_layout = l;
	cur_reported = false;
	if (l->blk > blk)
		blk = l->blk;
	if (fstat(fd, &st) < 0)
		abort();

	/*
	 * AUTO first, before anything reads the file: reading a ramfs hole
	 * allocates pages (st_blocks grows, and the probe then rightly takes
	 * SEEK's "all data"), and on ext4 and XFS it turns unwritten extents
	 * with cached pages into data for SEEK.  Each map's lseek check comes
	 * right after the map, before the contract check reads holes.
	 */
	for (int i = ROW_AUTO; i <= ROW_SCAN; i++) {
		enum row_id row = (enum row_id)i;
		enum sparse_map_backend b = row_backend[row];
		int r;

		if (b == SPARSE_MAP_BACKEND_SCAN && st.st_size > scan_max && !blockdev) {
			rows[row].too_big++;
			continue;
		}
		/* So does AUTO where only reading finds holes (a build without
		 * SEEK on tmpfs would read 2^63 bytes): NO_READ asks without
		 * reading, and gives NONE where AUTO would scan. */
		if (row == ROW_AUTO && st.st_size > scan_max && !blockdev &&
		    auto_would_read(fd)) {
			rows[row].too_big++;
			continue;
		}
		r = th_collect(fd, b, 0, 0, &maps[row]);
		if (r == -EOPNOTSUPP && (b == SPARSE_MAP_BACKEND_SEEK || b == SPARSE_MAP_BACKEND_FIEMAP)) {
			rows[row].unsupported++;
			continue;
		}
		if (r < 0 && b == SPARSE_MAP_BACKEND_SEEK && seek_fails_as_kernel(fd, r)) {
			rows[row].kernel_err++;
			rows[row].kernel_errno = -r;
			continue;
		}
		if (r < 0) {
			failf(row, "mapping failed: %s", strerror(-r));
			continue;
		}
		have[row] = true;
		rows[row].files++;
		if (row == ROW_SEEK && stub)
			rows[row].stub++;
		if (row == ROW_AUTO) {
			rows[row].chose[maps[row].backend]++;
			/* An empty device has nothing to map: any backend will do. */
			if (blockdev && st_size_of(fd) > 0 &&
			    maps[row].backend != SPARSE_MAP_BACKEND_SCAN)
				failf(row, "AUTO chose %s for a block device, not scan",
				      sparse_map_backend_name(maps[row].backend));
			/* Before the checks below read holes (see above). */
			if (maps[row].backend == SPARSE_MAP_BACKEND_FIEMAP && !stub)
				have_seek_now = th_collect(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0,
							   &seek_now) == 0;
		}
		if (blockdev) {
			uint64_t bytes = 0;

			if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || (int64_t)bytes != maps[row].size)
				failf(row, "map size %" PRId64 ", BLKGETSIZE64 %" PRIu64,
				      maps[row].size, bytes);
			else
				pass(row);
		}
		check_lseek(fd, row, &maps[row], is_reading(&maps[row]));
		/* sparse_map_lseek() as one consistent function of the file, and
		 * sparse_map(3)'s loop ending: at random offsets, where no
		 * answer reads (a reading backend's are checked above). */
		if (row == ROW_AUTO && !is_reading(&maps[row])) {
			pin_lseek(row, &maps[row]);
			msg = th_lseek_consistent(fd, l->seed + 1, 32);
			unsetenv("SPARSE_MAP_BACKEND");
			if (msg)
				failf(row, "sparse_map_lseek: %s", msg);
			else
				pass(row);
		}
		msg = th_check_contract(fd, &maps[row], 0);
		if (msg)
			failf(row, "contract: %s", msg);
		else
			pass(row);
	}

	/* Where two sources describe the same thing, they must agree. */
	if (have[ROW_SEEK] && !stub) {
		if (have[ROW_FIEMAP])
			compare(fd, l, &maps[ROW_SEEK], ROW_SEEK, &maps[ROW_FIEMAP], ROW_FIEMAP, blk);
		if (have[ROW_SCAN])
			compare(fd, l, &maps[ROW_SEEK], ROW_SEEK, &maps[ROW_SCAN], ROW_SCAN, blk);
	}
	if (have[ROW_FIEMAP] && have[ROW_SCAN])
		compare(fd, l, &maps[ROW_FIEMAP], ROW_FIEMAP, &maps[ROW_SCAN], ROW_SCAN, blk);
	if (have[ROW_AUTO]) {
		enum row_id chosen = (enum row_id)maps[ROW_AUTO].backend;

		if (have[chosen])
			compare(fd, l, &maps[chosen], chosen, &maps[ROW_AUTO], ROW_AUTO, blk);
		/* AUTO's FIEMAP and SEEK, asked one after the other, find the
		 * same data block for block where nothing was preallocated.
		 * (Where it was, SEEK calls data the cached pages of unwritten
		 * extents, and FIEMAP flags the rest UNWRITTEN.) */
		if (have_seek_now && !in_prealloc(l, 0, INT64_MAX) &&
		    compare(fd, l, &seek_now, ROW_SEEK, &maps[ROW_AUTO], ROW_AUTO, blk) == 1) {
			char seek_map[2048];

			snprintf(seek_map, sizeof(seek_map), "%s", th_describe(&seek_now));
			failf(ROW_AUTO, "AUTO (%s) and SEEK differ on a layout without preallocation"
			      "\n  auto: %s\n  seek: %s", sparse_map_backend_name(maps[ROW_AUTO].backend),
			      th_describe(&maps[ROW_AUTO]), seek_map);
		}
	}
	if (have_seek_now)
		th_map_free(&seek_now);
	if (ref && have[ROW_SCAN])
		compare(fd, l, ref, ROW_SCAN, &maps[ROW_SCAN], ROW_SCAN, blk);

	/* The tools see what is on disk, so they run after a sync.  Not on a
	 * block device: neither maps one. */
	if (tools && !blockdev) {
		(void)fsync(fd);
		if (have_xfs_io && have[ROW_SEEK])
			check_tool(fd, path, l, ROW_XFS_IO, SPARSE_MAP_BACKEND_SEEK, blk);
		if (have_filefrag && have[ROW_FIEMAP])
			check_tool(fd, path, l, ROW_FILEFRAG, SPARSE_MAP_BACKEND_FIEMAP, blk);
	}
	for (int i = 0; i < 4; i++)
		if (have[i])
			th_map_free(&maps[i]);
	if (verbose) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fprintf(stderr, "%s: %.2f s, size %" PRId64 "\n", label,
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			st.st_size);
		print_layout(stderr, l);
	}
}

/* Which layouts a run covers ---------------------------------------------- */

struct plan_item {
	const struct th_layout *fixed;
	uint64_t seed;
};

static size_t plan(struct plan_item *items, size_t cap)
{
	size_t n = 0;

	if (only) {
		if (strncmp(only, "r:", 2) == 0) {
			items[n++] = (struct plan_item){ NULL, strtoull(only + 2, NULL, 10) };
			return n;
		}
		for (size_t i = 0; i < n_fixed(); i++)
			if (strncmp(only, "f:", 2) == 0 && strcmp(only + 2, fixed_at(i)->name) == 0)
				items[n++] = (struct plan_item){ fixed_at(i), 0 };
		return n;
	}
	for (size_t i = 0; i < n_fixed() && n < cap; i++) {
		/* 16 GiB of hole cannot be read where reading pins memory
		 * (ramfs) or goes through a daemon: the size cap says so. */
		if ((strcmp(fixed_at(i)->name, "past-4g") == 0 ||
		     strncmp(fixed_at(i)->name, "largest-", 8) == 0) && max_size < 16 * GiB + GiB)
			continue;
		items[n++] = (struct plan_item){ fixed_at(i), 0 };
	}
	for (long s = 0; s < nseeds && n < cap; s++)
		items[n++] = (struct plan_item){ NULL, seed_base + (uint64_t)s };
	return n;
}

static void make_layout(struct layout *l, const struct plan_item *it, int64_t blk)
{
	if (it->fixed)
		fixed_layout(l, it->fixed, blk);
	else
		gen_layout(l, it->seed, blk);
}

/* Names of built files: f-NAME-BLK or r-SEED-BLK, so that a later run can
 * rebuild the layout (for the failure report and the "prealloc" reason). */
static void file_name(char *buf, size_t len, const struct plan_item *it, int64_t blk)
{
	if (it->fixed)
		snprintf(buf, len, "f-%s-%" PRId64, it->fixed->name, blk);
	else
		snprintf(buf, len, "r-%" PRIu64 "-%" PRId64, it->seed, blk);
}

static bool parse_name(const char *name, struct layout *l)
{
	const char *dash = strrchr(name, '-');
	int64_t blk;

	if (!dash || (name[0] != 'f' && name[0] != 'r') || name[1] != '-')
		return false;
	blk = strtoll(dash + 1, NULL, 10);
	if (blk < 512)
		return false;
	if (name[0] == 'r') {
		gen_layout(l, strtoull(name + 2, NULL, 10), blk);
		return true;
	}
	for (size_t i = 0; i < n_fixed(); i++)
		if (strlen(fixed_at(i)->name) == (size_t)(dash - name - 2) &&
		    strncmp(fixed_at(i)->name, name + 2, (size_t)(dash - name - 2)) == 0) {
			fixed_layout(l, fixed_at(i), blk);
			return true;
		}
	return false;
}

/* Modes ------------------------------------------------------------------- */

#define MAX_PLAN 4096

/*
 * --clone: src (at src_path) holds the layout; fsync it, clone it into a
 * new file, write over the clone and check the clone while the source
 * still shares its extents.  Both files are gone after.  -1 where the file
 * system cannot clone (said on stderr).
 */
static int clone_and_write(const char *dir, int src, const char *src_path, struct layout *l)
{
	char path[4096];
	int dst = th_create(dir, path, sizeof(path)), r = 0;

	if (fsync(src) < 0)
		abort();
	if (ioctl(dst, FICLONE, src) < 0) {
		fprintf(stderr, "%s: --clone: FICLONE: %s\n", label, strerror(errno));
		r = -1;
	} else {
		size_t at = l->nops;

		add_clone_ops(l, src);
		apply_ops(dst, l, at + 1);
		check_file(dst, path, l, false, NULL);
	}
	close(dst);
	unlink(path);
	close(src);
	unlink(src_path);
	return r;
}

/* Make each layout in a new file of dir and check it there; 77 where
 * --clone cannot clone. */
static int run_here(const char *dir)
{
	static struct plan_item items[MAX_PLAN];
	size_t n = plan(items, MAX_PLAN);
	char path[4096];

	for (size_t i = 0; i < n; i++) {
		struct layout l;
		int fd = th_create(dir, path, sizeof(path));

		make_layout(&l, &items[i], layout_blk ? layout_blk : th_blksize(fd));
		apply_layout(fd, &l);
		if (clone_mode) {
			if (clone_and_write(dir, fd, path, &l) < 0)
				return 77;
			continue;
		}
		check_file(fd, path, &l, false, NULL);
		close(fd);
		unlink(path);
	}
	return 0;
}

/* Make each layout in a file of dir, to be checked later elsewhere. */
static int build(const char *dir)
{
	static struct plan_item items[MAX_PLAN];
	size_t n = plan(items, MAX_PLAN);
	char path[4096], final[4096], name[128];

	for (size_t i = 0; i < n; i++) {
		struct layout l;
		int fd = th_create(dir, path, sizeof(path));
		int64_t blk = layout_blk ? layout_blk : th_blksize(fd);

		make_layout(&l, &items[i], blk);
		apply_layout(fd, &l);
		close(fd);
		file_name(name, sizeof(name), &items[i], blk);
		snprintf(final, sizeof(final), "%s/%s", dir, name);
		if (rename(path, final) < 0) {
			perror(final);
			return 1;
		}
	}
	return 0;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Check the files a build left in dir (now on a read-only or stacked file
 * system); with --reference, their SCAN maps must match the originals'. */
static int run_existing(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, name_cmp);
	char path[4096], refpath[4096];

	if (n < 0) {
		perror(dir);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct layout l;
		struct th_map ref;
		bool have_ref = false;
		int fd;

		if (!parse_name(ents[i]->d_name, &l)) {
			free(ents[i]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			exit(1);
		}
		if (reference) {
			int rfd;

			snprintf(refpath, sizeof(refpath), "%s/%s", reference, ents[i]->d_name);
			rfd = open(refpath, O_RDONLY);
			if (rfd < 0 || th_collect(rfd, SPARSE_MAP_BACKEND_SCAN, 0, 0, &ref) < 0) {
				perror(refpath);
				exit(1);
			}
			close(rfd);
			have_ref = true;
		}
		check_file(fd, path, &l, false, have_ref ? &ref : NULL);
		if (have_ref)
			th_map_free(&ref);
		close(fd);
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* Attach path read-only to a free loop device that goes away when its last
 * fd closes, so nothing is left behind even if we die.  The fd, or -errno. */
static int loop_attach(const char *path)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int file = open(path, O_RDONLY | O_CLOEXEC);
	int r = -ENODEV;

	if (ctl < 0 || file < 0) {
		r = -errno;
		goto out;
	}
	for (int tries = 0; tries < 10; tries++) {
		struct loop_config cfg;
		char dev[64];
		int n = ioctl(ctl, LOOP_CTL_GET_FREE), fd;

		if (n < 0) {
			r = -errno;
			break;
		}
		snprintf(dev, sizeof(dev), "/dev/loop%d", n);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned int)file;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
		if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0) {
			r = fd;
			break;
		}
		r = -errno;
		close(fd);
		if (r != -EBUSY)
			break;	/* EBUSY: someone took it first; take another */
	}
out:
	if (ctl >= 0)
		close(ctl);
	if (file >= 0)
		close(file);
	return r;
}

/*
 * A loop block device over each layout.  What "mapping a block device"
 * means here: nothing below the device knows which of its blocks were
 * written, so its holes are its all-zero blocks (AUTO must pick SCAN), and
 * its size is BLKGETSIZE64.  Its SCAN map must equal the backing file's.
 */
static int run_loop(const char *dir)
{
	static struct plan_item items[MAX_PLAN];
	size_t n = plan(items, MAX_PLAN);
	char path[4096], dev[4200];

	for (size_t i = 0; i < n; i++) {
		struct layout l;
		struct th_map ref;
		int fd = th_create(dir, path, sizeof(path)), dfd;
		struct stat st;

		make_layout(&l, &items[i], layout_blk ? layout_blk : th_blksize(fd));
		apply_layout(fd, &l);
		/* A loop device ends at the last whole 512-byte sector. */
		if (fstat(fd, &st) < 0)
			abort();
		if (st.st_size % 4096)
			th_truncate(fd, st.st_size + 4096 - st.st_size % 4096);
		if (th_collect(fd, SPARSE_MAP_BACKEND_SCAN, 0, 0, &ref) < 0)
			abort();
		close(fd);
		dfd = loop_attach(path);
		if (dfd < 0) {
			fprintf(stderr, "%s: cannot attach a loop device: %s\n", label, strerror(-dfd));
			unlink(path);
			th_map_free(&ref);
			return 77;
		}
		snprintf(dev, sizeof(dev), "loop device over %s", path);
		check_file(dfd, dev, &l, true, &ref);
		close(dfd);
		unlink(path);
		th_map_free(&ref);
	}
	return 0;
}

/* The table --------------------------------------------------------------- */

static void print_header(void)
{
	printf("%-16s %-8s %6s %8s %-34s %8s  %s\n", "file system", "backend", "files",
	       "checks", "allowed differences", "failures", "notes");
}

static void print_rows(void)
{
	for (int i = 0; i < NROWS; i++) {
		struct row *r = &rows[i];
		char allowed[64], notes[256];
		size_t used = 0;

		if (!r->files && !r->unsupported && !r->failures && !r->kernel_err)
			continue;
		used = (size_t)snprintf(allowed, sizeof(allowed), "%ld", r->allowed);
		if (r->allowed) {
			const char *sep = " (";

			for (int k = 0; k < NREASONS; k++)
				if (r->reasons[k]) {
					used += (size_t)snprintf(allowed + used, sizeof(allowed) - used,
								 "%s%s %ld", sep, reason_names[k], r->reasons[k]);
					sep = ", ";
				}
			snprintf(allowed + used, sizeof(allowed) - used, ")");
		}
		notes[0] = 0;
		used = 0;
		if (i == ROW_AUTO) {
			const char *sep = "chose ";

			for (int b = 1; b < 4; b++)
				if (r->chose[b]) {
					used += (size_t)snprintf(notes + used, sizeof(notes) - used, "%s%s %ld",
								 sep, sparse_map_backend_name(b), r->chose[b]);
					sep = ", ";
				}
		}
		if (r->stub)
			used += (size_t)snprintf(notes + used, sizeof(notes) - used,
						 "generic stub on %ld files: not compared", r->stub);
		if (r->too_big)
			used += (size_t)snprintf(notes + used, sizeof(notes) - used,
						 "%s%ld files over --scan-max %lld not read",
						 used ? "; " : "", r->too_big, (long long)scan_max);
		if (r->kernel_err)
			used += (size_t)snprintf(notes + used, sizeof(notes) - used,
						 "%sfailed on %ld files as the kernel's lseek does (%s)",
						 used ? "; " : "", r->kernel_err, strerror(r->kernel_errno));
		if (r->near_max)
			used += (size_t)snprintf(notes + used, sizeof(notes) - used,
						 "%s%ld files reaching 2^63 not compared (the kernel's "
						 "answers there are wrong)",
						 used ? "; " : "", r->near_max);
		if (r->unsupported && !r->files)
			snprintf(notes + used, sizeof(notes) - used, "not supported here");
		else if (r->unsupported)
			snprintf(notes + used, sizeof(notes) - used, "%sunsupported on %ld files",
				 used ? "; " : "", r->unsupported);
		printf("%-16s %-8s %6ld %8ld %-34s %8ld  %s\n", label, row_names[i], r->files,
		       r->checks, allowed, r->failures, notes);
	}
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: matrix [options] DIR\n"
		"  Checks every layout on the file system of DIR and prints one table row\n"
		"  per backend: files tried, checks passed, differences allowed (with the\n"
		"  reason), failures.  Exit 0, 1 on any failure, 2 on bad usage.\n"
		"  --label NAME      the file system's name in the table\n"
		"  --seeds N         random layouts besides the fixed ones (default $SM_MATRIX_SEEDS or 4)\n"
		"  --seed S          the first seed (default $SM_MATRIX_SEED, else from the clock)\n"
		"  --max-size BYTES  keep files below this size (and skip past-4g under 17 GiB)\n"
		"  --scan-max BYTES  forced SCAN skips larger files (default 1 GiB, $SM_MATRIX_SCAN_MAX)\n"
		"  --layout-block BYTES  the layouts' unit (default st_blksize; a multiple of 512)\n"
		"  --only r:SEED | f:LAYOUT   replay one layout\n"
		"  --no-tools        do not run xfs_io and filefrag\n"
		"  --verbose         print each layout and how long its checks took\n"
		"  --header          print the table header and exit\n"
		"  --build           only make the files in DIR (f-NAME-BLK, r-SEED-BLK)\n"
		"  --existing        check the files a --build made, found in DIR\n"
		"  --reference DIR2  with --existing: the directory they were built in\n"
		"  --loop            check each layout through a read-only loop device\n"
		"  --clone           check a clone of each layout, written over without sync\n");
}

static bool have_tool(const char *name)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

int main(int argc, char **argv)
{
	enum { HERE, BUILD, EXISTING, LOOP } mode = HERE;
	const char *env_seeds = getenv("SM_MATRIX_SEEDS"), *env_seed = getenv("SM_MATRIX_SEED");
	const char *dir = NULL;
	int rc = 0;

	if (env_seeds && *env_seeds)
		nseeds = strtol(env_seeds, NULL, 10);
	if (getenv("SM_MATRIX_SCAN_MAX") && *getenv("SM_MATRIX_SCAN_MAX"))
		scan_max = strtoll(getenv("SM_MATRIX_SCAN_MAX"), NULL, 10);
	seed_base = env_seed && *env_seed ? strtoull(env_seed, NULL, 10)
					  : (uint64_t)time(NULL) % 1000000 * 1000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (strcmp(a, "--label") == 0 && more)
			label = argv[++i];
		else if (strcmp(a, "--seeds") == 0 && more)
			nseeds = strtol(argv[++i], NULL, 10);
		else if (strcmp(a, "--seed") == 0 && more)
			seed_base = strtoull(argv[++i], NULL, 10);
		else if (strcmp(a, "--max-size") == 0 && more)
			max_size = strtoll(argv[++i], NULL, 10);
		else if (strcmp(a, "--layout-block") == 0 && more)
			layout_blk = strtoll(argv[++i], NULL, 10);
		else if (strcmp(a, "--scan-max") == 0 && more)
			scan_max = strtoll(argv[++i], NULL, 10);
		else if (strcmp(a, "--only") == 0 && more)
			only = argv[++i];
		else if (strcmp(a, "--reference") == 0 && more)
			reference = argv[++i];
		else if (strcmp(a, "--verbose") == 0)
			verbose = true;
		else if (strcmp(a, "--no-tools") == 0)
			tools = false;
		else if (strcmp(a, "--header") == 0) {
			print_header();
			return 0;
		} else if (strcmp(a, "--build") == 0)
			mode = BUILD;
		else if (strcmp(a, "--existing") == 0) {
			mode = EXISTING;
		}
		else if (strcmp(a, "--clone") == 0) {
			clone_mode = true;
			mode_flag = "--clone ";
		}
		else if (strcmp(a, "--loop") == 0) {
			mode = LOOP;
			mode_flag = "--loop ";
		}
		else if (a[0] != '-' && !dir)
			dir = a;
		else {
			usage();
			return 2;
		}
	}
	if (!dir || nseeds < 0 || max_size <= 0 || layout_blk < 0 || layout_blk % 512) {
		usage();
		return 2;
	}
	if (tools) {
		have_xfs_io = have_tool("xfs_io");
		have_filefrag = have_tool("filefrag");
	}
	unsetenv("SPARSE_MAP_BACKEND");
	fprintf(stderr, "%s: %ld random layouts from seed %" PRIu64 "%s\n", label, nseeds, seed_base,
		only ? " (replay)" : "");

	switch (mode) {
	case BUILD:
		return build(dir);
	case EXISTING:
		rc = run_existing(dir);
		break;
	case LOOP:
		rc = run_loop(dir);
		break;
	case HERE:
		rc = run_here(dir);
		break;
	}
	if (rc)
		return rc;
	print_rows();
	for (int i = 0; i < NROWS; i++)
		if (rows[i].failures)
			return 1;
	return 0;
}
