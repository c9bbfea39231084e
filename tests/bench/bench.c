/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's measuring half: tests/bench/run.sh decides which file
 * systems and sizes, this program makes the files, times the library
 * against the bare system calls and the tools people use, and prints rows
 * of one Markdown table.
 *
 * Every figure is the median of several repetitions, and every ratio is the
 * median of ratios taken side by side within one repetition, the order of
 * the contestants turning round each time so that neither always runs on a
 * warmer cache.  A ratio that misses its target is marked, never fatal: the
 * program fails only when it cannot measure (a map error, a tool that fails,
 * a copy that is not identical to its source).
 *
 *   bench header
 *   bench mkfrag FILE RUNS           4 KiB of data every 64 KiB (pwrite), then fsync
 *   bench mkzero FILE SIZE DATA sparse|full
 *                                    DATA bytes in 4 KiB runs spread evenly,
 *                                    the rest holes or written zeroes
 *   bench map FS FILE RUNS REPS      library against the bare SEEK / FIEMAP loop, AUTO
 *                                    against the bare SEEK loop, and
 *                                    a sparse_map_lseek loop against an lseek loop
 *   bench scan FS FILE RUNS REPS BACKEND [zeroes]
 *                                    a reading map against cat and cp --sparse=always
 *   bench copy FS FILE REPS COPIER   COPIER against cp --sparse=auto|always
 *   bench toolcp FS FILE RUNS REPS TOOL [SIZE DATA]
 *                                    `TOOL cp` (the sparse-map command) against
 *                                    cp --sparse=always --reflink=never; with SIZE
 *                                    DATA, FILE made again (mkzero) before each copy
 *                                    and its st_blocks after each reported (ramfs)
 *   bench bmap FS IMAGE RUNS REPS TOOL
 *                                    `TOOL bmap` against bmaptool create
 *   bench stub FS REPS FILE RUNS [FILE RUNS]...
 *                                    where SEEK is the stub (ramfs, FUSE without
 *                                    lseek): a sparse_map_lseek loop against an AUTO
 *                                    map, against cat, and against its own cost per
 *                                    run on the first file; what the loop reads; and
 *                                    a copy made with the loop against cp
 *   bench files FS DIR NFILES REPS   per file: an AUTO map of a dense 8 KiB file against
 *                                    open + fstat + close, and a sparse_map_lseek loop
 *                                    over a small sparse file against an lseek loop
 *   bench memory FS SMALL BIG NSMALL NBIG
 *                                    peak RSS mapping each of two fragmented files
 *   bench rss FILE BACKEND           (the child memory runs) map, print VmHWM
 *   bench mktree DIR NFILES          NFILES sparse 64 KiB files, two 4 KiB data runs each
 *                                    (at 0 and 32 KiB), written back
 *   bench pair FS WHAT FILE REPS DEST -- A... -- B...
 *                                    command A against command B, taking turns, DEST
 *                                    removed (untimed) before each; a row, no target
 *   bench note FS TEXT               a row that only says something
 *   bench size N[K|M|G]              N in bytes, for run.sh
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef SM_HAVE_FIEMAP
#include <linux/fs.h>
#include <linux/fiemap.h>
#endif

#include "sparse_map.h"

extern char **environ;

#define RUN_LEN 4096
#define FRAG_STRIDE (64 * 1024)
/* lib/backend-fiemap.c asks for this many extents per call. */
#define FIEMAP_BATCH 512
#define MAX_REPS 64

static const char *prog = "bench";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_REPS];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static long long parse_num(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		die("not a number: %s", s);
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	}
	if (*end)
		die("not a number: %s", s);
	return v;
}

static int parse_reps(const char *s)
{
	long long r = parse_num(s);

	if (r < 1 || r > MAX_REPS)
		die("repetitions must be 1..%d", MAX_REPS);
	return (int)r;
}

/* 12,345,678 */
static const char *grouped(long long v, char *buf, size_t len)
{
	char raw[32];
	size_t n, o = 0;

	snprintf(raw, sizeof(raw), "%lld", v);
	n = strlen(raw);
	for (size_t i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *human_size(long long v, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v / 1024;
	int u = 0;

	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	if (x == (double)(long long)x)
		snprintf(buf, len, "%.0f %s", x, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", x, unit[u]);
	return buf;
}

static const char *seconds(double t, char *buf, size_t len)
{
	if (t < 1e-3)
		snprintf(buf, len, "%.0f us", t * 1e6);
	else if (t < 1)
		snprintf(buf, len, "%.1f ms", t * 1e3);
	else
		snprintf(buf, len, "%.2f s", t);
	return buf;
}

/* One row of the table.  limit < 0: no target, only a measurement.  A
 * note follows the verdict ("met; identical"), or stands alone. */
static void row(const char *fs, const char *what, const char *file, const char *mine,
		const char *base, double ratio, double limit, bool strict, const char *note)
{
	char target[32] = "none", verdict[256];
	const char *mark = note ? note : "";

	if (limit >= 0) {
		/* Judged as printed, so that a row never reads "1.00 <= 1.00 MISS". */
		double shown = (double)(long long)(ratio * 100 + 0.5) / 100;
		bool ok = strict ? shown < limit : shown <= limit;

		snprintf(target, sizeof(target), "%s %.2f", strict ? "<" : "<=", limit);
		snprintf(verdict, sizeof(verdict), "%s%s%s", ok ? "met" : "**MISS**",
			 note ? "; " : "", note ? note : "");
		mark = verdict;
	}
	printf("| %s | %s | %s | %s | %s | %.2f | %s | %s |\n",
	       fs, what, file, mine, base, ratio, target, mark);
	fflush(stdout);
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	return fd;
}

static void pwrite_all(int fd, const void *buf, size_t len, off_t off, const char *path)
{
	while (len > 0) {
		ssize_t w = pwrite(fd, buf, len, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("%s: write: %s", path, w < 0 ? strerror(errno) : "short");
		buf = (const char *)buf + w;
		len -= (size_t)w;
		off += w;
	}
}

static void fill_run(unsigned char *buf, long long i)
{
	for (size_t j = 0; j < RUN_LEN; j++)
		buf[j] = (unsigned char)(0x5a ^ (i * 31 + (long long)j) % 251) | 1;
}

static void finish_file(int fd, const char *path)
{
	if (fsync(fd) < 0)
		die("%s: fsync: %s", path, strerror(errno));
	close(fd);
}

static void cmd_mkfrag(const char *path, long long runs)
{
	unsigned char buf[RUN_LEN];
	int fd = open_or_die(path, O_RDWR | O_CREAT | O_TRUNC);

	/* The size first, so that no write extends the file: XFS meets
	 * extending writes with speculative preallocation, which would fill
	 * the holes with unwritten extents (and the image with them). */
	if (runs > 0 && ftruncate(fd, (off_t)((runs - 1) * FRAG_STRIDE + RUN_LEN)) < 0)
		die("%s: truncate: %s", path, strerror(errno));
	for (long long i = 0; i < runs; i++) {
		fill_run(buf, i);
		pwrite_all(fd, buf, sizeof(buf), (off_t)(i * FRAG_STRIDE), path);
	}
	finish_file(fd, path);
}

/* DATA bytes in 4 KiB runs spread evenly through SIZE; with full, the
 * bytes between them are written zeroes instead of holes. */
static void cmd_mkzero(const char *path, long long size, long long data, bool full)
{
	long long runs = data / RUN_LEN;
	long long stride;
	int fd = open_or_die(path, O_RDWR | O_CREAT | O_TRUNC);

	if (runs < 1 || size % RUN_LEN || size / runs < RUN_LEN)
		die("mkzero: %lld bytes of data do not fit %lld", data, size);
	stride = size / runs / RUN_LEN * RUN_LEN;
	if (full) {
		size_t chunk = 1 << 20;
		unsigned char *buf = calloc(1, chunk);

		if (!buf)
			die("out of memory");
		for (long long off = 0; off < size; off += (long long)chunk) {
			size_t len = size - off < (long long)chunk ? (size_t)(size - off) : chunk;

			memset(buf, 0, len);
			for (long long i = (off + stride - 1) / stride; i < runs && i * stride < off + (long long)len; i++)
				fill_run(buf + (i * stride - off), i);
			pwrite_all(fd, buf, len, (off_t)off, path);
		}
		free(buf);
	} else {
		unsigned char buf[RUN_LEN];

		if (ftruncate(fd, (off_t)size) < 0)
			die("%s: truncate: %s", path, strerror(errno));
		for (long long i = 0; i < runs; i++) {
			fill_run(buf, i);
			pwrite_all(fd, buf, sizeof(buf), (off_t)(i * stride), path);
		}
	}
	finish_file(fd, path);
}

static enum sparse_map_backend backend_id(const char *name)
{
	for (int id = SPARSE_MAP_BACKEND_AUTO; id <= SPARSE_MAP_BACKEND_SCAN; id++)
		if (strcmp(name, sparse_map_backend_name(id)) == 0)
			return id;
	die("no backend %s", name);
}

struct count {
	long long ranges;
	long long data_ranges;
	long long data_bytes;
};

/* The whole file through the library; any error is fatal. */
static struct count lib_map(int fd, enum sparse_map_backend backend, unsigned int flags)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	struct count c = { 0, 0, 0 };
	int rc = sparse_map_open(fd, backend, flags, &map);

	if (rc < 0)
		die("sparse_map_open(%s): %s", sparse_map_backend_name(backend), strerror(-rc));
	while ((rc = sparse_map_next(map, &r)) == 1) {
		c.ranges++;
		if (r.kind == SPARSE_MAP_DATA) {
			c.data_ranges++;
			c.data_bytes += r.length;
		}
	}
	sparse_map_close(map);
	if (rc < 0)
		die("sparse_map_next(%s): %s", sparse_map_backend_name(backend), strerror(-rc));
	return c;
}

#ifdef SM_HAVE_SEEK
static int64_t native_lseek(int fd, int64_t off, int whence)
{
	return lseek(fd, (off_t)off, whence);
}

/* The least a program can do to map a file with lseek: two calls a data
 * range, made with seek (lseek, or sparse_map_lseek as a program that
 * swapped one for the other would). */
static struct count seek_loop(int fd, off_t size, int64_t (*seek)(int, int64_t, int))
{
	struct count c = { 0, 0, 0 };
	off_t pos = 0;

	while (pos < size) {
		off_t data = seek(fd, pos, SEEK_DATA);
		off_t hole;

		if (data < 0 && errno == ENXIO) {
			c.ranges++;	/* a hole to the end */
			break;
		}
		if (data < 0)
			die("SEEK_DATA: %s", strerror(errno));
		if (data > pos)
			c.ranges++;
		hole = seek(fd, data, SEEK_HOLE);
		if (hole < 0)
			die("SEEK_HOLE: %s", strerror(errno));
		c.ranges++;
		c.data_ranges++;
		c.data_bytes += (hole < size ? hole : size) - data;
		pos = hole;
	}
	return c;
}
#endif

#ifdef SM_HAVE_FIEMAP
#define FIEMAP_BUFSIZE (sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent))

/* What lib/backend-fiemap.c still calls a hole among the flags of an
 * unwritten extent. */
#define HOLE_SAFE_FLAGS (FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN | \
			 FIEMAP_EXTENT_MERGED | FIEMAP_EXTENT_SHARED)

/* The least a program can do with FIEMAP and get the library's answer:
 * batches as large as the library's, FIEMAP_FLAG_SYNC on every call as the
 * library asks, unwritten extents are holes (XFS makes them from its
 * speculative preallocation even without fallocate), touching extents one
 * range. */
static int bare_fiemap(int fd, off_t size, struct fiemap *fm, struct count *c)
{
	uint64_t pos = 0, data_end = 0;

	*c = (struct count){ 0, 0, 0 };
	while (pos < (uint64_t)size) {
		struct fiemap_extent *e = fm->fm_extents;
		unsigned int n;

		memset(fm, 0, sizeof(*fm));
		fm->fm_start = pos;
		fm->fm_length = (uint64_t)size - pos;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
			return -errno;
		n = fm->fm_mapped_extents;
		for (unsigned int i = 0; i < n; i++) {
			uint64_t lo = e[i].fe_logical, hi = lo + e[i].fe_length;

			if ((e[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) &&
			    !(e[i].fe_flags & ~(uint32_t)HOLE_SAFE_FLAGS))
				continue;
			if (hi > (uint64_t)size)
				hi = (uint64_t)size;
			if (c->data_ranges && lo <= data_end) {
				if (hi > data_end) {
					c->data_bytes += (long long)(hi - data_end);
					data_end = hi;
				}
				continue;
			}
			if (lo > data_end)
				c->ranges++;	/* the hole before it */
			c->ranges++;
			c->data_ranges++;
			c->data_bytes += (long long)(hi - lo);
			data_end = hi;
		}
		if (n == 0 || (e[n - 1].fe_flags & FIEMAP_EXTENT_LAST))
			break;
		pos = e[n - 1].fe_logical + e[n - 1].fe_length;
	}
	if (data_end < (uint64_t)size)
		c->ranges++;
	return 0;
}
#endif

static off_t file_size(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	return st.st_size;
}

static void check_same(const char *what, const struct count *lib, const struct count *bare)
{
	if (lib->ranges != bare->ranges || lib->data_bytes != bare->data_bytes)
		die("%s: the library found %lld ranges (%lld data bytes), the bare loop %lld (%lld)",
		    what, lib->ranges, lib->data_bytes, bare->ranges, bare->data_bytes);
}

/* Library against bare loop for one backend; nothing printed if the file
 * system cannot do it (then a note row). */
static void map_rows(const char *fs, const char *path, long long runs, int reps,
		     enum sparse_map_backend backend)
{
	/* AUTO is measured against the bare SEEK loop, the default it beats
	 * on ext4, XFS and Btrfs (elsewhere it is SEEK, and held to SEEK's).
	 * On Btrfs it asks no SEEK where the kernel locks FIEMAP's range
	 * (issue 23): 0.20 there; older kernels' SEEK in every gap misses it. */
	bool auto_map = backend == SPARSE_MAP_BACKEND_AUTO;
	bool btrfs = strcmp(fs, "btrfs") == 0;
	bool beats_seek = auto_map && (strcmp(fs, "ext4") == 0 || strcmp(fs, "xfs") == 0 || btrfs);
	const char *name = sparse_map_backend_name(backend);
	int fd = open_or_die(path, O_RDONLY);
	off_t size = file_size(fd, path);
	double tl[MAX_REPS], tb[MAX_REPS], ratio[MAX_REPS];
	struct count lc, bc = { 0, 0, 0 };
	char what[64], file[64], mine[64], base[96], n[32], m[32];
	struct sparse_map *probe;
	int rc;
#ifdef SM_HAVE_FIEMAP
	struct fiemap *fm = calloc(1, FIEMAP_BUFSIZE);

	if (!fm)
		die("out of memory");
#endif
	snprintf(what, sizeof(what), "map, %s", name);
	snprintf(file, sizeof(file), "%s runs", grouped(runs, n, sizeof(n)));

	rc = sparse_map_open(fd, backend, 0, &probe);
	if (rc < 0) {
		snprintf(mine, sizeof(mine), "not run: %s", strerror(-rc));
		printf("| %s | %s | %s | %s | | | | n/a |\n", fs, what, file, mine);
		goto out;
	}
	if (auto_map)
		snprintf(what, sizeof(what), "map, auto (%s)",
			 sparse_map_backend_name(sparse_map_get_backend(probe)));
	sparse_map_close(probe);

	/* One untimed pass each, so both start from the same warm caches. */
	for (int r = -1; r < reps; r++) {
		double t0, t1, t2;
		bool lib_first = r % 2 == 0;

		for (int turn = 0; turn < 2; turn++) {
			t0 = now();
			if (lib_first == (turn == 0)) {
				lc = lib_map(fd, backend, 0);
				t1 = now();
				if (r >= 0)
					tl[r] = t1 - t0;
				continue;
			}
#ifdef SM_HAVE_SEEK
			if (backend == SPARSE_MAP_BACKEND_SEEK || auto_map)
				bc = seek_loop(fd, size, native_lseek);
#endif
#ifdef SM_HAVE_FIEMAP
			if (backend == SPARSE_MAP_BACKEND_FIEMAP && (rc = bare_fiemap(fd, size, fm, &bc)) < 0)
				die("FIEMAP: %s", strerror(-rc));
#endif
			t2 = now();
			if (r >= 0)
				tb[r] = t2 - t0;
		}
		if (r >= 0)
			ratio[r] = tl[r] / tb[r];
	}
	check_same(what, &lc, &bc);
	snprintf(mine, sizeof(mine), "%.0f ns/range", median(tl, reps) / (double)lc.ranges * 1e9);
	snprintf(base, sizeof(base), "%.0f ns/range (bare %s loop)",
		 median(tb, reps) / (double)bc.ranges * 1e9,
		 backend == SPARSE_MAP_BACKEND_FIEMAP ? "FIEMAP" : "lseek");
	snprintf(file, sizeof(file), "%s runs, %s ranges", grouped(runs, n, sizeof(n)),
		 grouped(lc.ranges, m, sizeof(m)));
	row(fs, what, file, mine, base, median(ratio, reps),
	    beats_seek ? (btrfs ? 0.20 : 0.55) : 1.10, false, NULL);
out:
#ifdef SM_HAVE_FIEMAP
	free(fm);
#endif
	close(fd);
}

#ifdef SM_HAVE_SEEK
/* A SEEK_DATA/SEEK_HOLE loop with sparse_map_lseek against the same loop
 * with lseek: what a program pays for swapping one for the other. */
static void lseek_row(const char *fs, const char *path, long long runs, int reps)
{
	int fd = open_or_die(path, O_RDONLY);
	off_t size = file_size(fd, path);
	double tl[MAX_REPS], tb[MAX_REPS], ratio[MAX_REPS];
	struct count lc = { 0, 0, 0 }, bc = { 0, 0, 0 };
	char file[64], mine[64], base[96], n[32];

	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 2; turn++) {
			bool lib = (r % 2 == 0) == (turn == 0);
			double t0 = now(), t;

			if (lib)
				lc = seek_loop(fd, size, sparse_map_lseek);
			else
				bc = seek_loop(fd, size, native_lseek);
			t = now() - t0;
			if (r >= 0)
				*(lib ? &tl[r] : &tb[r]) = t;
		}
		if (r >= 0)
			ratio[r] = tl[r] / tb[r];
	}
	check_same("sparse_map_lseek loop", &lc, &bc);
	snprintf(file, sizeof(file), "%s runs", grouped(runs, n, sizeof(n)));
	snprintf(mine, sizeof(mine), "%.0f ns/data range", median(tl, reps) / (double)lc.data_ranges * 1e9);
	snprintf(base, sizeof(base), "%.0f ns/data range (the loop with lseek)",
		 median(tb, reps) / (double)bc.data_ranges * 1e9);
	row(fs, "sparse_map_lseek loop", file, mine, base, median(ratio, reps), 1.10, false, NULL);
	close(fd);
}
#endif

static void cmd_map(const char *fs, const char *path, long long runs, int reps)
{
#ifdef SM_HAVE_SEEK
	map_rows(fs, path, runs, reps, SPARSE_MAP_BACKEND_SEEK);
	lseek_row(fs, path, runs, reps);
#endif
#ifdef SM_HAVE_FIEMAP
	map_rows(fs, path, runs, reps, SPARSE_MAP_BACKEND_FIEMAP);
#endif
#ifdef SM_HAVE_SEEK
	map_rows(fs, path, runs, reps, SPARSE_MAP_BACKEND_AUTO);
#endif
}

/* What cp and tar pay for a file whose st_blocks says it is all stored. */
static long long per_file_fstat(const char *path)
{
	int fd = open_or_die(path, O_RDONLY);
	struct stat st;

	if (fstat(fd, &st) < 0)
		die("%s: fstat: %s", path, strerror(errno));
	close(fd);
	return (long long)st.st_size;
}

/* The same, with an AUTO map of the whole file in between, as an archiver
 * makes it: its own fstat handed to the library, neither reading nor the
 * environment allowed, and (any_offset) the file offset left where the
 * map moved it, as for a program that reads with pread. */
static long long map_file(const char *path, bool any_offset)
{
	struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;
	int fd = open_or_die(path, O_RDONLY);
	struct sparse_map *map;
	struct sparse_map_range r;
	struct stat st;
	long long data = 0;
	int rc;

	if (fstat(fd, &st) < 0)
		die("%s: fstat: %s", path, strerror(errno));
	o.st = &st;
	o.flags = SPARSE_MAP_NO_READ | SPARSE_MAP_NO_ENV | (any_offset ? SPARSE_MAP_ANY_OFFSET : 0);
	rc = sparse_map_open_with(fd, &o, &map);
	if (rc < 0)
		die("%s: sparse_map_open_with: %s", path, strerror(-rc));
	while ((rc = sparse_map_next(map, &r)) == 1)
		if (r.kind == SPARSE_MAP_DATA)
			data += r.length;
	sparse_map_close(map);
	if (rc < 0)
		die("%s: sparse_map_next: %s", path, strerror(-rc));
	close(fd);
	return data;
}
static long long per_file_map(const char *path) { return map_file(path, true); }
#ifdef SM_HAVE_SEEK
static long long per_file_map_offset_kept(const char *path) { return map_file(path, false); }
#endif

#ifdef SM_HAVE_SEEK
static long long per_file_loop(const char *path, int64_t (*seek)(int, int64_t, int))
{
	int fd = open_or_die(path, O_RDONLY);
	struct count c = seek_loop(fd, file_size(fd, path), seek);

	close(fd);
	return c.data_bytes;
}
static long long per_file_lseek(const char *path) { return per_file_loop(path, native_lseek); }
static long long per_file_sm_lseek(const char *path) { return per_file_loop(path, sparse_map_lseek); }
#endif

/* Time each of two per-file costs over n files named by name(i), taking
 * turns; a row of their ratio. */
static void files_row(const char *fs, const char *what, const char *file, const char *base_what,
		      const char *dir, const char *prefix, long long n, int reps, double limit,
		      long long (*mine)(const char *), long long (*base)(const char *))
{
	double tm[MAX_REPS], tb[MAX_REPS], ratio[MAX_REPS];
	char path[4096], m[64], b[128];

	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 2; turn++) {
			bool lib = (r % 2 == 0) == (turn == 0);
			long long sum = 0, want = 0;
			double t0 = now(), t;

			for (long long i = 0; i < n; i++) {
				snprintf(path, sizeof(path), "%s/%s%lld", dir, prefix, i);
				sum += (lib ? mine : base)(path);
			}
			t = now() - t0;
			/* The two must agree on the data: recount with the baseline. */
			if (lib && r < 0) {
				for (long long i = 0; i < n; i++) {
					snprintf(path, sizeof(path), "%s/%s%lld", dir, prefix, i);
					want += base(path);
				}
				if (sum != want)
					die("%s: %s counts %lld data bytes, the baseline %lld", fs,
					    what, sum, want);
			}
			if (r >= 0)
				*(lib ? &tm[r] : &tb[r]) = t;
		}
		if (r >= 0)
			ratio[r] = tm[r] / tb[r];
	}
	snprintf(m, sizeof(m), "%.0f ns/file", median(tm, reps) / (double)n * 1e9);
	snprintf(b, sizeof(b), "%.0f ns/file (%s)", median(tb, reps) / (double)n * 1e9, base_what);
	row(fs, what, file, m, b, median(ratio, reps), limit, false, NULL);
}

/* A small file, the i-th: 8 KiB of data, or (sparse) 64 KiB with two data
 * runs of 4 KiB, at 0 and 32 KiB. */
static void write_small_file(const char *path, long long i, bool sparse)
{
	unsigned char buf[8192];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	fill_run(buf, i);
	fill_run(buf + 4096, i + 1);
	if (sparse) {
		pwrite_all(fd, buf, 4096, 0, path);
		pwrite_all(fd, buf + 4096, 4096, 32768, path);
		if (ftruncate(fd, 65536) < 0)
			die("%s: ftruncate: %s", path, strerror(errno));
	} else {
		pwrite_all(fd, buf, sizeof(buf), 0, path);
	}
	close(fd);
}

/* Everything written into dir's file system, written back. */
static void sync_dir(const char *dir)
{
	int fd = open_or_die(dir, O_RDONLY);

	if (syncfs(fd) < 0)
		die("%s: syncfs: %s", dir, strerror(errno));
	close(fd);
}

/*
 * Many small files, as a backup or an archiver meets them: NFILES dense
 * files of 8 KiB, and a quarter as many sparse ones of 64 KiB with two data
 * runs of 4 KiB (at 0 and 32 KiB), all written back.  The dense files'
 * map may cost one system call more than open + fstat + close (1.50, and
 * 1.60 on Btrfs, whose FIEMAP costs more than the rest); the sparse files'
 * map no more than the SEEK_DATA/SEEK_HOLE loop it replaces (1.00).
 */
static void cmd_files(const char *fs, const char *dir, long long n, int reps)
{
	double dense_limit = strcmp(fs, "btrfs") == 0 ? 1.60 : 1.50;
	long long nsparse = n / 4 > 0 ? n / 4 : 1;
	char path[4096], file[96], cnt[32];

	for (long long i = 0; i < n + nsparse; i++) {
		bool sparse = i >= n;

		snprintf(path, sizeof(path), "%s/%s%lld", dir, sparse ? "s" : "d", sparse ? i - n : i);
		write_small_file(path, i, sparse);
	}
	sync_dir(dir);

	snprintf(file, sizeof(file), "%s dense 8 KiB files", grouped(n, cnt, sizeof(cnt)));
	files_row(fs, "small files, map (auto, ANY_OFFSET)", file, "open + fstat + close", dir, "d",
		  n, reps, dense_limit, per_file_map, per_file_fstat);
#ifdef SM_HAVE_SEEK
	snprintf(file, sizeof(file), "%s sparse 64 KiB files, 2 data runs",
		 grouped(nsparse, cnt, sizeof(cnt)));
	files_row(fs, "small sparse files, map (auto, ANY_OFFSET)", file, "the loop with lseek",
		  dir, "s", nsparse, reps, 1.00, per_file_map, per_file_lseek);
	files_row(fs, "small sparse files, map (auto, offset put back)", file,
		  "the loop with lseek", dir, "s", nsparse, reps, 1.00, per_file_map_offset_kept,
		  per_file_lseek);
	files_row(fs, "small files, sparse_map_lseek loop", file, "the loop with lseek", dir, "s",
		  nsparse, reps, strcmp(fs, "ext4") == 0 || strcmp(fs, "xfs") == 0 ? 1.25 : 1.50,
		  per_file_sm_lseek, per_file_lseek);
#endif
	for (long long i = 0; i < n + nsparse; i++) {
		snprintf(path, sizeof(path), "%s/%s%lld", dir, i >= n ? "s" : "d", i >= n ? i - n : i);
		unlink(path);
	}
}

/* The sparse files of cmd_files(), in a directory of their own. */
static void cmd_mktree(const char *dir, long long n)
{
	char path[4096];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("%s: %s", dir, strerror(errno));
	for (long long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/s%lld", dir, i);
		write_small_file(path, i, true);
	}
	sync_dir(dir);
}

static double run_tool(char *const argv[]);
static void usage(void) __attribute__((noreturn));

/*
 * Two programs doing the same job, one on the library (A) and one without
 * it (B), e.g. GNU cp built both ways (tests/downstream/run.sh): median
 * times of REPS turns each, the order swapped every turn, after one untimed
 * turn each; DEST (what they write) is removed before every run.
 */
static void cmd_pair(const char *fs, const char *what, const char *file, int reps,
		     const char *dest, char **a, char **b)
{
	char *rm[] = { "rm", "-rf", (char *)dest, NULL };
	double t[2][MAX_REPS], ratio[MAX_REPS];
	char mine[64], base[64], x[32];

	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 2; turn++) {
			int who = (turn + (r < 0 ? 0 : r)) % 2;
			double d;

			run_tool(rm);
			d = run_tool(who == 0 ? a : b);
			if (r >= 0)
				t[who][r] = d;
		}
		if (r >= 0)
			ratio[r] = t[0][r] / t[1][r];
	}
	run_tool(rm);
	snprintf(mine, sizeof(mine), "%s", seconds(median(t[0], reps), x, sizeof(x)));
	snprintf(base, sizeof(base), "%s", seconds(median(t[1], reps), x, sizeof(x)));
	row(fs, what, file, mine, base, median(ratio, reps), -1, false, NULL);
}

/* argv[from] up to the next "--" (or the end), as a NULL-ended list; *next
 * is the index after it. */
static char **until_dashes(int argc, char **argv, int from, int *next)
{
	int i = from;

	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	if (i == from)
		usage();
	*next = i + 1;
	argv[i < argc ? i : argc] = NULL;
	return argv + from;
}

/* Run argv with stdout on /dev/null; the time it took, or die if it failed. */
static double run_tool(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status, rc;
	double t0, t1;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	t0 = now();
	rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		die("%s: %s", argv[0], strerror(rc));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	t1 = now();
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: failed:", prog);
		for (int i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		die(" (status %#x)", (unsigned int)status);
	}
	return t1 - t0;
}

static void unlink_if_there(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		die("%s: %s", path, strerror(errno));
}

/* A copy by a tool to dest, timed, and removed again. */
static double run_copy(char *const argv[], const char *dest)
{
	double d;

	unlink_if_there(dest);
	d = run_tool(argv);
	unlink_if_there(dest);
	return d;
}

/* The least a program can do to read a file: pread into a 1 MiB buffer,
 * ignoring the bytes.  Returns the bytes read. */
static long long bare_read(int fd)
{
	static unsigned char buf[1 << 20];
	long long off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), (off_t)off)) > 0)
		off += n;
	if (n < 0)
		die("pread: %s", strerror(errno));
	return off;
}

/* A reading map (SCAN, or a backend with SPARSE_MAP_ZEROES) against the
 * read bandwidth (a bare pread loop, and cat) and cp --sparse=always. */
static void cmd_scan(const char *fs, const char *path, long long runs, int reps,
		     const char *backend_name, bool zeroes)
{
	enum sparse_map_backend backend = backend_id(backend_name);
	unsigned int flags = zeroes ? SPARSE_MAP_ZEROES : 0;
	char dest[PATH_MAX];
	char *cat_argv[] = { "cat", (char *)path, NULL };
	char *cp_argv[] = { "cp", "--sparse=always", (char *)path, dest, NULL };
	double t[4][MAX_REPS], rcat[MAX_REPS], rcp[MAX_REPS], rread[MAX_REPS];
	struct count c = { 0, 0, 0 };
	char what[64], file[96], mine[64], base[96], a[32], b[32];
	int fd = open_or_die(path, O_RDONLY);
	off_t size = file_size(fd, path);

	snprintf(dest, sizeof(dest), "%s.cp", path);

	/* The first pass (untimed) fills the page cache, or on ramfs gives
	 * the never written pages their zeroed memory: after it every
	 * contestant reads the same cached pages. */
	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 4; turn++) {
			int who = (turn + (r < 0 ? 0 : r)) % 4;
			double d, t0 = now();

			if (who == 0) {
				c = lib_map(fd, backend, flags);
				d = now() - t0;
			} else if (who == 3) {
				if (bare_read(fd) != size)
					die("%s: pread read other than %lld bytes", path, (long long)size);
				d = now() - t0;
			} else if (who == 1) {
				d = run_tool(cat_argv);
			} else {
				d = run_copy(cp_argv, dest);
			}
			if (r >= 0)
				t[who][r] = d;
		}
		if (r >= 0) {
			rcat[r] = t[0][r] / t[1][r];
			rcp[r] = t[0][r] / t[2][r];
			rread[r] = t[0][r] / t[3][r];
		}
	}
	close(fd);
	if (c.data_ranges != runs || c.data_bytes < runs * RUN_LEN)
		die("%s: %s found %lld data ranges, %lld bytes; the file has %lld runs",
		    path, backend_name, c.data_ranges, c.data_bytes, runs);

	snprintf(what, sizeof(what), "%s%s", zeroes ? backend_name : "SCAN", zeroes ? " + ZEROES" : "");
	snprintf(file, sizeof(file), "%s %s, %s data", human_size(size, a, sizeof(a)),
		 zeroes ? "written" : "sparse", human_size(runs * RUN_LEN, b, sizeof(b)));
	snprintf(mine, sizeof(mine), "%s, %.1f GB/s", seconds(median(t[0], reps), a, sizeof(a)),
		 (double)size / median(t[0], reps) / 1e9);
	/* Bandwidth at least 0.90x the bare loop's: time at most 1/0.90. */
	snprintf(base, sizeof(base), "%s, %.1f GB/s (bare pread loop, 1 MiB; bandwidth %.2fx)",
		 seconds(median(t[3], reps), b, sizeof(b)), (double)size / median(t[3], reps) / 1e9,
		 1 / median(rread, reps));
	row(fs, what, file, mine, base, median(rread, reps), 1.11, false, NULL);
	snprintf(base, sizeof(base), "%s, %.1f GB/s (cat > /dev/null)",
		 seconds(median(t[1], reps), b, sizeof(b)), (double)size / median(t[1], reps) / 1e9);
	row(fs, what, file, mine, base, median(rcat, reps), 1.0, false, NULL);
	snprintf(base, sizeof(base), "%s (cp --sparse=always)", seconds(median(t[2], reps), b, sizeof(b)));
	row(fs, what, file, mine, base, median(rcp, reps), 1.0, true, NULL);
}

/* Data and holes of a file as SEEK_DATA / SEEK_HOLE see them, appended to *v. */
struct extents {
	off_t *v;
	size_t n, cap;
};

static void seek_extents(int fd, off_t size, struct extents *x)
{
	off_t pos = 0;

	x->n = 0;
	while (pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA), hole;

		if (data < 0)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			die("SEEK_HOLE: %s", strerror(errno));
		if (x->n + 2 > x->cap) {
			x->cap = x->cap ? 2 * x->cap : 1024;
			x->v = realloc(x->v, x->cap * sizeof(*x->v));
			if (!x->v)
				die("out of memory");
		}
		x->v[x->n++] = data;
		x->v[x->n++] = hole;
		pos = hole;
	}
}

static bool same_bytes(int a, int b, off_t from, off_t to)
{
	static unsigned char ba[1 << 20], bb[1 << 20];

	while (from < to) {
		size_t want = to - from < (off_t)sizeof(ba) ? (size_t)(to - from) : sizeof(ba);
		ssize_t ga = pread(a, ba, want, from), gb = pread(b, bb, want, from);

		if (ga < 0 || gb < 0)
			die("compare: read: %s", strerror(errno));
		if (ga != gb || memcmp(ba, bb, (size_t)ga) != 0)
			return false;
		if (ga == 0)
			break;
		from += ga;
	}
	return true;
}

/* Whether two files hold the same bytes, as cmp(1) would say.  When the
 * kernel reports the same holes in both, only the data ranges need reading
 * (a reported hole reads as zeroes); otherwise every byte is compared. */
static bool same_file(const char *pa, const char *pb)
{
	static struct extents xa, xb;
	int a = open_or_die(pa, O_RDONLY), b = open_or_die(pb, O_RDONLY);
	off_t size = file_size(a, pa);
	bool same = size == file_size(b, pb);

	if (same) {
		seek_extents(a, size, &xa);
		seek_extents(b, size, &xb);
		if (xa.n == xb.n && memcmp(xa.v, xb.v, xa.n * sizeof(*xa.v)) == 0) {
			for (size_t i = 0; same && i < xa.n; i += 2)
				same = same_bytes(a, b, xa.v[i], xa.v[i + 1]);
		} else {
			same = same_bytes(a, b, 0, size);
		}
	}
	close(a);
	close(b);
	return same;
}

static long long blocks_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		die("%s: %s", path, strerror(errno));
	return (long long)st.st_blocks;
}

/* COPIER SRC DEST against both cp modes.  Each copy must be identical;
 * one that allocates more than the source lost holes, which is marked. */
static void cmd_copy(const char *fs, const char *path, int reps, const char *copier)
{
	char dest[PATH_MAX], what[64], file[96], mine[64], base[96], a[32], b[32], note[64];
	char *argv[3][5] = {
		{ (char *)copier, (char *)path, dest, NULL, NULL },
		{ "cp", "--sparse=auto", (char *)path, dest, NULL },
		{ "cp", "--sparse=always", (char *)path, dest, NULL },
	};
	const char *base_name[3] = { NULL, "cp --sparse=auto", "cp --sparse=always" };
	double t[3][MAX_REPS], ratio[3][MAX_REPS];
	long long src_blocks = blocks_of(path), dst_blocks[3] = { 0, 0, 0 };
	int fd = open_or_die(path, O_RDONLY);
	off_t size = file_size(fd, path);

	close(fd);
	snprintf(dest, sizeof(dest), "%s.copy", path);
	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 3; turn++) {
			int who = (turn + (r < 0 ? 0 : r)) % 3;
			double d;

			unlink_if_there(dest);
			d = run_tool(argv[who]);
			if (r < 0) {
				/* Checked once, untimed: the copy is the source. */
				if (!same_file(path, dest))
					die("%s: the copy by %s differs from %s", dest, argv[who][0], path);
				dst_blocks[who] = blocks_of(dest);
			} else {
				t[who][r] = d;
			}
			unlink_if_there(dest);
		}
		for (int who = 1; r >= 0 && who < 3; who++)
			ratio[who][r] = t[0][r] / t[who][r];
	}
	snprintf(what, sizeof(what), "copy, %s", strrchr(copier, '/') ? strrchr(copier, '/') + 1 : copier);
	snprintf(file, sizeof(file), "%s, %s stored", human_size(size, a, sizeof(a)),
		 human_size(src_blocks * 512, b, sizeof(b)));
	snprintf(mine, sizeof(mine), "%s, %s stored", seconds(median(t[0], reps), a, sizeof(a)),
		 human_size(dst_blocks[0] * 512, b, sizeof(b)));
	for (int who = 1; who < 3; who++) {
		bool kept = dst_blocks[0] <= src_blocks + src_blocks / 100 + 8;
		char c[32];

		snprintf(base, sizeof(base), "%s, %s stored (%s)", seconds(median(t[who], reps), b, sizeof(b)),
			 human_size(dst_blocks[who] * 512, c, sizeof(c)), base_name[who]);
		snprintf(note, sizeof(note), "identical; %s", kept ? "holes kept" : "**HOLES LOST**");
		/* Where SEEK is the stub (FUSE without lseek), issue 23 holds
		 * the copier to twice what cp --sparse=always takes. */
		row(fs, what, file, mine, base, median(ratio[who], reps),
		    who == 2 && strncmp(fs, "fuse", 4) == 0 ? 2.0 : -1, false, note);
	}
}

/*
 * The sparse-map command (issue 29), TOOL being its path.  `TOOL cp SRC
 * DEST` against cp --sparse=always --reflink=never: cp may then neither
 * share blocks nor hand the copy to copy_file_range, which the tool tries
 * first.  Target 1.05.  Every copy of the first, untimed round is checked
 * to be the source (data ranges only where both report holes).  With SIZE
 * and DATA the source is made again (mkzero ... sparse) before every copy,
 * untimed: on ramfs cp reads the holes, which stores them, and the next
 * copy would start from a dense file; the source's st_blocks after each
 * copy is then printed beside that copy's time, the worst of all rounds.
 */
static void cmd_toolcp(const char *fs, const char *path, long long runs, int reps,
		       const char *tool, const char *remake_size, const char *remake_data)
{
	char dest[PATH_MAX], file[96], mine[128], base[160], note[96], a[32], b[32], c[32], n[32];
	char *argv[2][6] = {
		{ (char *)tool, "cp", "--no-progress", (char *)path, dest, NULL },
		{ "cp", "--sparse=always", "--reflink=never", (char *)path, dest, NULL },
	};
	bool remake = remake_size != NULL;
	long long size = remake ? parse_num(remake_size) : 0, data = remake ? parse_num(remake_data) : 0;
	long long src_blocks, src_after[2] = { 0, 0 }, dst_blocks[2] = { 0, 0 };
	double t[2][MAX_REPS], ratio[MAX_REPS];
	bool kept;
	int fd;

	if (remake)
		cmd_mkzero(path, size, data, false);
	src_blocks = blocks_of(path);
	fd = open_or_die(path, O_RDONLY);
	size = file_size(fd, path);
	close(fd);
	snprintf(dest, sizeof(dest), "%s.copy", path);
	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 2; turn++) {
			int who = (turn + (r < 0 ? 0 : r)) % 2;
			long long after;
			double d;

			if (remake && (r >= 0 || turn > 0))
				cmd_mkzero(path, size, data, false);
			unlink_if_there(dest);
			d = run_tool(argv[who]);
			after = blocks_of(path);
			src_after[who] = after > src_after[who] ? after : src_after[who];
			if (r < 0) {
				/* Checked once, untimed (and after the source's
				 * blocks are counted: on ramfs the check reads
				 * its holes too). */
				dst_blocks[who] = blocks_of(dest);
				if (!same_file(path, dest))
					die("%s: the copy by %s differs from %s", dest,
					    who ? "cp" : tool, path);
			} else {
				t[who][r] = d;
			}
			unlink_if_there(dest);
		}
		if (r >= 0)
			ratio[r] = t[0][r] / t[1][r];
	}
	kept = dst_blocks[0] <= src_blocks + src_blocks / 100 + 8;
	snprintf(file, sizeof(file), "%s, %s data runs, %s stored", human_size(size, a, sizeof(a)),
		 grouped(runs, n, sizeof(n)), human_size(src_blocks * 512, b, sizeof(b)));
	if (remake) {
		snprintf(mine, sizeof(mine), "%s, %s stored; source after: %s stored",
			 seconds(median(t[0], reps), a, sizeof(a)),
			 human_size(dst_blocks[0] * 512, b, sizeof(b)),
			 human_size(src_after[0] * 512, c, sizeof(c)));
		snprintf(base, sizeof(base),
			 "%s, %s stored; source after: %s stored (cp --sparse=always --reflink=never)",
			 seconds(median(t[1], reps), a, sizeof(a)),
			 human_size(dst_blocks[1] * 512, b, sizeof(b)),
			 human_size(src_after[1] * 512, c, sizeof(c)));
	} else {
		snprintf(mine, sizeof(mine), "%s, %s stored", seconds(median(t[0], reps), a, sizeof(a)),
			 human_size(dst_blocks[0] * 512, b, sizeof(b)));
		snprintf(base, sizeof(base), "%s, %s stored (cp --sparse=always --reflink=never)",
			 seconds(median(t[1], reps), a, sizeof(a)),
			 human_size(dst_blocks[1] * 512, b, sizeof(b)));
	}
	snprintf(note, sizeof(note), "identical; %s%s", kept ? "holes kept" : "**HOLES LOST**",
		 !remake ? "" : src_after[0] == src_blocks ? "; source as it was" : "; **SOURCE CHANGED**");
	row(fs, "copy, sparse-map cp", file, mine, base, median(ratio, reps), 1.05, false, note);
}

/* What a bmap file maps, whatever its comments and layout: its lines of
 * sizes, checksum type and ranges (with their checksums), without spaces.
 * *ranges is the count of ranges. */
static char *bmap_key(const char *path, long long *ranges)
{
	static const char *const tags[] = {
		"<ImageSize>", "<BlockSize>", "<BlocksCount>", "<MappedBlocksCount>",
		"<ChecksumType>", "<Range ",
	};
	const size_t ntags = sizeof(tags) / sizeof(*tags);
	FILE *f = fopen(path, "r");
	char *line = NULL, *key;
	size_t cap = 0, klen = 0, kcap = 4096;
	ssize_t len;

	if (!f)
		die("%s: %s", path, strerror(errno));
	key = malloc(kcap);
	if (!key)
		die("out of memory");
	*ranges = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *p = line + strspn(line, " \t");
		size_t i = 0;

		while (i < ntags && strncmp(p, tags[i], strlen(tags[i])) != 0)
			i++;
		if (i == ntags)
			continue;
		if (i == ntags - 1)
			(*ranges)++;
		if (klen + (size_t)len + 2 > kcap) {
			kcap = 2 * (klen + (size_t)len + 2);
			key = realloc(key, kcap);
			if (!key)
				die("out of memory");
		}
		for (; *p; p++)
			if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
				key[klen++] = *p;
		key[klen++] = '\n';
	}
	key[klen] = '\0';
	free(line);
	fclose(f);
	return key;
}

/*
 * `TOOL bmap IMAGE -o OUT` against `bmaptool create -o OUT IMAGE` (issue
 * 29), target 0.5.  bmaptool flushes the image before it maps it (fsync,
 * and FIEMAP_FLAG_SYNC), the tool does not: the image is flushed once here
 * first, so that both start from an image without dirty pages.  The two
 * bmap files of the first, untimed round must map the same ranges with the
 * same checksums, one range a run of the image.
 */
static void cmd_bmap(const char *fs, const char *image, long long runs, int reps, const char *tool)
{
	char out[2][PATH_MAX], file[96], mine[64], base[96], a[32], b[32], n[32];
	char *argv[2][6] = {
		{ (char *)tool, "bmap", (char *)image, "-o", out[0], NULL },
		{ "bmaptool", "create", "-o", out[1], (char *)image, NULL },
	};
	double t[2][MAX_REPS], ratio[MAX_REPS];
	long long stored = blocks_of(image), ranges[2];
	int fd = open_or_die(image, O_RDONLY);
	off_t size = file_size(fd, image);

	if (fsync(fd) < 0)
		die("%s: fsync: %s", image, strerror(errno));
	close(fd);
	snprintf(out[0], sizeof(out[0]), "%s.sparse-map.bmap", image);
	snprintf(out[1], sizeof(out[1]), "%s.bmaptool.bmap", image);
	for (int r = -1; r < reps; r++) {
		for (int turn = 0; turn < 2; turn++) {
			int who = (turn + (r < 0 ? 0 : r)) % 2;
			double d;

			unlink_if_there(out[who]);
			d = run_tool(argv[who]);
			if (r >= 0)
				t[who][r] = d;
		}
		if (r < 0) {
			char *k0 = bmap_key(out[0], &ranges[0]), *k1 = bmap_key(out[1], &ranges[1]);

			if (strcmp(k0, k1) != 0)
				die("%s and %s map other blocks, or give them other checksums",
				    out[0], out[1]);
			if (ranges[0] != runs)
				die("%s: %lld ranges; the image has %lld runs", out[0], ranges[0], runs);
			free(k0);
			free(k1);
		} else {
			ratio[r] = t[0][r] / t[1][r];
		}
	}
	unlink_if_there(out[0]);
	unlink_if_there(out[1]);
	snprintf(file, sizeof(file), "%s, %s data runs, %s stored", human_size(size, a, sizeof(a)),
		 grouped(runs, n, sizeof(n)), human_size(stored * 512, b, sizeof(b)));
	snprintf(mine, sizeof(mine), "%s", seconds(median(t[0], reps), a, sizeof(a)));
	snprintf(base, sizeof(base), "%s (bmaptool create)", seconds(median(t[1], reps), b, sizeof(b)));
	row(fs, "bmap, sparse-map bmap", file, mine, base, median(ratio, reps), 0.5, false,
	    "same ranges and checksums; image synced before both");
}

#ifdef SM_HAVE_SEEK
/* Bytes this process has read with read(2) and pread(2) so far
 * (/proc/self/io rchar), or -1 where the system does not say. */
static long long bytes_read(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* What a sparse copier does with sparse_map_lseek: copy each data range
 * (pread, pwrite), then set the size.  Returns the data bytes copied. */
static long long lseek_copy(const char *src, const char *dst)
{
	static unsigned char buf[1 << 20];
	int in = open_or_die(src, O_RDONLY), out = open_or_die(dst, O_WRONLY | O_CREAT | O_TRUNC);
	off_t size = file_size(in, src), pos = 0;
	long long copied = 0;

	while (pos < size) {
		off_t data = sparse_map_lseek(in, pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			die("%s: SEEK_DATA: %s", src, strerror(errno));
		hole = sparse_map_lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			die("%s: SEEK_HOLE: %s", src, strerror(errno));
		for (off_t at = data; at < hole;) {
			size_t want = hole - at < (off_t)sizeof(buf) ? (size_t)(hole - at) : sizeof(buf);
			ssize_t got = pread(in, buf, want, at);

			if (got <= 0)
				die("%s: read: %s", src, got < 0 ? strerror(errno) : "short");
			pwrite_all(out, buf, (size_t)got, at, dst);
			at += got;
			copied += got;
		}
		pos = hole;
	}
	if (ftruncate(out, size) < 0)
		die("%s: truncate: %s", dst, strerror(errno));
	close(in);
	close(out);
	return copied;
}

/*
 * Where the kernel's SEEK is the stub and sparse_map_lseek() finds the
 * holes itself: per file, a loop with it against an AUTO map of the same
 * file (per data range against per range, target 3 on ramfs, where a map
 * reads no more than the loop), against cat (1.5),
 * against its own cost per run on the first file (flat: 1.5), the bytes
 * it reads against the file's size (1.1), and a copy made with it against
 * cp --sparse=always (2).  Not on ramfs against cat and cp, which read the
 * holes and so store them: the file would be dense from then on.
 */
static void cmd_stub(const char *fs, int reps, int nfiles, char **args)
{
	int contestants = strcmp(fs, "ramfs") == 0 ? 2 : 5;
	double first_per_run = 0;
	char dest[PATH_MAX];

	for (int f = 0; f < nfiles; f++) {
		const char *path = args[2 * f];
		long long runs = parse_num(args[2 * f + 1]), read = 0, ranges = 0;
		char *cat_argv[] = { "cat", (char *)path, NULL };
		char *cp_argv[] = { "cp", "--sparse=always", (char *)path, dest, NULL };
		double t[5][MAX_REPS], rmap[MAX_REPS], rcat[MAX_REPS], rcp[MAX_REPS], per_run;
		char file[64], mine[96], base[128], n[32], a[32], b[32];
		struct count lc = { 0, 0, 0 };
		int fd = open_or_die(path, O_RDONLY);
		off_t size = file_size(fd, path);

		snprintf(dest, sizeof(dest), "%s.copy", path);
		for (int r = -1; r < reps; r++) {
			for (int turn = 0; turn < contestants; turn++) {
				int who = (turn + (r < 0 ? 0 : r)) % contestants;
				long long before = bytes_read();
				double t0 = now(), d;

				if (who == 0) {
					lc = seek_loop(fd, size, sparse_map_lseek);
					d = now() - t0;
					read = bytes_read() - before;
				} else if (who == 1) {
					ranges = lib_map(fd, SPARSE_MAP_BACKEND_AUTO, 0).ranges;
					d = now() - t0;
				} else if (who == 2) {
					d = run_tool(cat_argv);
				} else if (who == 3) {
					unlink_if_there(dest);
					if (lseek_copy(path, dest) != lc.data_bytes && r >= 0)
						die("%s: the copy with sparse_map_lseek copied other bytes", path);
					d = now() - t0;
					if (r < 0 && !same_file(path, dest))
						die("%s: the copy with sparse_map_lseek differs", dest);
					unlink_if_there(dest);
				} else {
					d = run_copy(cp_argv, dest);
				}
				if (r >= 0)
					t[who][r] = d;
			}
			if (r >= 0)
				rmap[r] = (t[0][r] / (double)lc.data_ranges) / (t[1][r] / (double)ranges);
			if (r >= 0 && contestants == 5) {
				rcat[r] = t[0][r] / t[2][r];
				rcp[r] = t[3][r] / t[4][r];
			}
		}
		close(fd);
		if (lc.data_ranges != runs)
			die("%s: the sparse_map_lseek loop found %lld data ranges; the file has %lld runs",
			    path, lc.data_ranges, runs);
		per_run = median(t[0], reps) / (double)runs;
		snprintf(file, sizeof(file), "%s runs", grouped(runs, n, sizeof(n)));
		snprintf(mine, sizeof(mine), "%.0f ns/data range", per_run * 1e9);
		snprintf(base, sizeof(base), "%.0f ns/range (map, auto)", median(t[1], reps) / (double)ranges * 1e9);
		row(fs, "sparse_map_lseek loop", file, mine, base, median(rmap, reps),
		    contestants < 5 ? 3.0 : -1, false, NULL);
		if (f == 0) {
			first_per_run = per_run;
		} else {
			snprintf(base, sizeof(base), "%.0f ns/data range (the same loop, %s runs)",
				 first_per_run * 1e9, args[1]);
			row(fs, "sparse_map_lseek loop, per run", file, mine, base,
			    per_run / first_per_run, 1.5, false, NULL);
		}
		if (read >= 0) {
			snprintf(mine, sizeof(mine), "%s read", human_size(read, a, sizeof(a)));
			snprintf(base, sizeof(base), "%s (the file's size)", human_size(size, b, sizeof(b)));
			row(fs, "sparse_map_lseek loop, bytes read", file, mine, base,
			    (double)read / (double)size, 1.1, false, NULL);
		}
		if (contestants < 5)
			continue;
		snprintf(mine, sizeof(mine), "%s", seconds(median(t[0], reps), a, sizeof(a)));
		snprintf(base, sizeof(base), "%s (cat > /dev/null, %s)", seconds(median(t[2], reps), b, sizeof(b)),
			 human_size(size, n, sizeof(n)));
		row(fs, "sparse_map_lseek loop", file, mine, base, median(rcat, reps), 1.5, false, NULL);
		snprintf(mine, sizeof(mine), "%s", seconds(median(t[3], reps), a, sizeof(a)));
		snprintf(base, sizeof(base), "%s (cp --sparse=always)", seconds(median(t[4], reps), b, sizeof(b)));
		row(fs, "copy with a sparse_map_lseek loop", file, mine, base, median(rcp, reps), 2.0,
		    false, NULL);
	}
}
#endif

/* A "Key:  123 kB" line of /proc/self/status, or -1. */
static long long status_kib(const char *key)
{
	long long kib = -1;
	size_t len = strlen(key);
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, len) == 0 && sscanf(line + len, " %lld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* In a child of its own: map the file and print the peak resident set,
 * and the resident set just before mapping. */
static void cmd_rss(const char *path, const char *backend_name)
{
	int fd = open_or_die(path, O_RDONLY);
	long long before = status_kib("VmRSS:"), peak;

	(void)lib_map(fd, backend_id(backend_name), 0);
	close(fd);
	peak = status_kib("VmHWM:");
	if (peak < 0) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		peak = ru.ru_maxrss;	/* KiB on Linux and the BSDs */
		before = peak;
	}
	printf("%lld %lld\n", peak, before);
}

/* The least peak of three fresh processes (it varies by a few pages with
 * what the loader happens to map), and the least growth while mapping. */
static void child_rss(const char *self, const char *path, const char *backend,
		      long long *peak, long long *growth)
{
	char *argv[] = { (char *)self, "rss", (char *)path, (char *)backend, NULL };

	*peak = *growth = LLONG_MAX;
	for (int r = 0; r < 3; r++) {
		posix_spawn_file_actions_t fa;
		long long p, b;
		int pipefd[2], status;
		char out[64];
		ssize_t got;
		pid_t pid;

		if (pipe(pipefd) < 0)
			die("pipe: %s", strerror(errno));
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
		posix_spawn_file_actions_addclose(&fa, pipefd[0]);
		if (posix_spawn(&pid, self, &fa, NULL, argv, environ) != 0)
			die("%s: cannot run itself", self);
		posix_spawn_file_actions_destroy(&fa);
		close(pipefd[1]);
		got = read(pipefd[0], out, sizeof(out) - 1);
		close(pipefd[0]);
		waitpid(pid, &status, 0);
		if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			die("mapping %s with %s in a child failed", path, backend);
		out[got] = '\0';
		if (sscanf(out, "%lld %lld", &p, &b) != 2)
			die("mapping %s with %s in a child: no figures", path, backend);
		*peak = p < *peak ? p : *peak;
		*growth = p - b < *growth ? p - b : *growth;
	}
}

static void cmd_memory(const char *fs, const char *small, const char *big, long long nsmall,
		       long long nbig)
{
	static const char *const backends[] = {
#ifdef SM_HAVE_SEEK
		"seek",
#endif
#ifdef SM_HAVE_FIEMAP
		"fiemap",
#endif
		"auto",
	};
	char self[PATH_MAX], what[64], file[96], mine[64], base[96], a[32], b[32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		die("cannot find my own program: %s", strerror(errno));
	self[n] = '\0';
	for (size_t i = 0; i < sizeof(backends) / sizeof(*backends); i++) {
		struct sparse_map *map;
		int fd = open_or_die(big, O_RDONLY);
		int rc = sparse_map_open(fd, backend_id(backends[i]), 0, &map);
		long long ks, kb, gs, gb;

		sparse_map_close(map);
		close(fd);
		if (rc < 0)
			continue;	/* the map rows say why */
		child_rss(self, small, backends[i], &ks, &gs);
		child_rss(self, big, backends[i], &kb, &gb);
		/* The peak of a fresh process moves by ~100 KiB with what the
		 * loader happens to fault in; what mapping adds to it does not. */
		snprintf(what, sizeof(what), "peak RSS, %s", backends[i]);
		snprintf(file, sizeof(file), "%s runs against %s", grouped(nbig, a, sizeof(a)),
			 grouped(nsmall, b, sizeof(b)));
		snprintf(mine, sizeof(mine), "+%lld KiB while mapping (peak %lld KiB)", gb, kb);
		snprintf(base, sizeof(base), "+%lld KiB while mapping (peak %lld KiB)", gs, ks);
		row(fs, what, file, mine, base, (double)gb / (double)(gs > 0 ? gs : 1), 1.10, false, NULL);
	}
}

static void cmd_header(void)
{
	printf("| fs | measurement | file | libsparse-map | baseline | ratio | target | |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
}

static void usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of tests/bench/bench.c\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (strcmp(cmd, "header") == 0 && argc == 2)
		cmd_header();
	else if (strcmp(cmd, "mkfrag") == 0 && argc == 4)
		cmd_mkfrag(argv[2], parse_num(argv[3]));
	else if (strcmp(cmd, "mkzero") == 0 && argc == 6)
		cmd_mkzero(argv[2], parse_num(argv[3]), parse_num(argv[4]),
			   strcmp(argv[5], "full") == 0);
	else if (strcmp(cmd, "map") == 0 && argc == 6)
		cmd_map(argv[2], argv[3], parse_num(argv[4]), parse_reps(argv[5]));
	else if (strcmp(cmd, "scan") == 0 && (argc == 7 || argc == 8))
		cmd_scan(argv[2], argv[3], parse_num(argv[4]), parse_reps(argv[5]), argv[6],
			 argc == 8 && strcmp(argv[7], "zeroes") == 0);
	else if (strcmp(cmd, "copy") == 0 && argc == 6)
		cmd_copy(argv[2], argv[3], parse_reps(argv[4]), argv[5]);
	else if (strcmp(cmd, "toolcp") == 0 && (argc == 7 || argc == 9))
		cmd_toolcp(argv[2], argv[3], parse_num(argv[4]), parse_reps(argv[5]), argv[6],
			   argc == 9 ? argv[7] : NULL, argc == 9 ? argv[8] : NULL);
	else if (strcmp(cmd, "bmap") == 0 && argc == 7)
		cmd_bmap(argv[2], argv[3], parse_num(argv[4]), parse_reps(argv[5]), argv[6]);
#ifdef SM_HAVE_SEEK
	else if (strcmp(cmd, "stub") == 0 && argc >= 6 && argc % 2 == 0)
		cmd_stub(argv[2], parse_reps(argv[3]), (argc - 4) / 2, argv + 4);
#endif
	else if (strcmp(cmd, "files") == 0 && argc == 6)
		cmd_files(argv[2], argv[3], parse_num(argv[4]), parse_reps(argv[5]));
	else if (strcmp(cmd, "memory") == 0 && argc == 7)
		cmd_memory(argv[2], argv[3], argv[4], parse_num(argv[5]), parse_num(argv[6]));
	else if (strcmp(cmd, "rss") == 0 && argc == 4)
		cmd_rss(argv[2], argv[3]);
	else if (strcmp(cmd, "size") == 0 && argc == 3)
		printf("%lld\n", parse_num(argv[2]));
	else if (strcmp(cmd, "mktree") == 0 && argc == 4)
		cmd_mktree(argv[2], parse_num(argv[3]));
	else if (strcmp(cmd, "pair") == 0 && argc >= 12 && strcmp(argv[7], "--") == 0) {
		int next;
		char **a = until_dashes(argc, argv, 8, &next);
		char **b = until_dashes(argc, argv, next, &next);

		cmd_pair(argv[2], argv[3], argv[4], parse_reps(argv[5]), argv[6], a, b);
	} else if (strcmp(cmd, "note") == 0 && argc == 4)
		printf("| %s | %s | | | | | | |\n", argv[2], argv[3]);
	else
		usage();
	return 0;
}
