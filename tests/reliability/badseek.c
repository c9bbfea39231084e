/* SPDX-License-Identifier: MIT */
/*
 * badseek DIR: DIR is a mount of tests/matrix/fuse-badseek, whose files'
 * SEEK_DATA/SEEK_HOLE answer as their names say (errors, answers past
 * EOF, before the offset asked, data where SEEK_HOLE said hole), from the
 * first or the third such call on.  For each way of answering badly, one
 * file with three runs of data is written and then:
 *   - AUTO, on a descriptor open for reading and writing and on one open
 *     for writing only (where SEEK is built), maps it: the map opens,
 *     ends within a bounded number of sparse_map_next() calls, tiles
 *     [0, size), and every byte written is in a data range (lack of hole
 *     information is no error);
 *   - a forced SEEK (where built) returns the injected errno (EINVAL and
 *     EOPNOTSUPP may be -EOPNOTSUPP at open); after ENXIO or a wrong
 *     answer it may fail with -ENXIO or -EIO, or map with every written
 *     byte as data;
 *   - sparse_map_lseek(SEEK_DATA/SEEK_HOLE) from offsets in data, in
 *     holes and at the edges answers, never past written data and never
 *     with a hole inside it; ENXIO only for SEEK_DATA with no data left;
 *     a call that fails leaves the file offset where it was.
 * Every failure is printed with the file's name; exit 0 when all held.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define SIZE (1 << 20)
#define SENTINEL 4242	/* the file offset before a sparse_map_lseek */

/* What each file holds: these runs of data, holes around them. */
static const struct { int64_t off, len; } runs[] = {
	{ 64 << 10, 12 << 10 }, { 256 << 10, 5000 }, { 600 << 10, 100 << 10 },
};
#define NRUNS (sizeof(runs) / sizeof(runs[0]))

static const char *const errno_modes[] = { "ENOENT", "EBADFD", "EIO", "EINVAL", "ENXIO", "EOPNOTSUPP" };
static const int errno_values[] = { ENOENT, EBADFD, EIO, EINVAL, ENXIO, EOPNOTSUPP };
#define NERRNOS (sizeof(errno_values) / sizeof(errno_values[0]))
static const char *const wrong_modes[] = { "beyond", "before", "flip" };
static const char *const whences[] = { "data", "hole", "both" };
static const int ks[] = { 1, 3 };

static const char *dir;
static int failures, checks;
static bool seek_built = true;	/* a forced SEEK opens (not --disable-seek) */

static void fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(const char *name, const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int open_case(const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags | O_CREAT, 0644);
	if (fd < 0) {
		perror(path);
		exit(99);
	}
	return fd;
}

/* The first written byte at or after off, or -1. */
static int64_t written_from(int64_t off)
{
	for (size_t i = 0; i < NRUNS; i++)
		if (runs[i].off + runs[i].len > off)
			return off > runs[i].off ? off : runs[i].off;
	return -1;
}

static bool written(int64_t off)
{
	return written_from(off) == off;
}

/* A map collected with at most max calls of sparse_map_next: 0, or -errno
 * from open (*at_open) or next. */
static int collect(int fd, enum sparse_map_backend b, struct th_map *m, bool *at_open,
		   const char *name)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	const long max = SIZE / 512 + 2;
	long calls = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	*at_open = true;
	alarm(20);	/* a hang inside one call fails the whole test */
	rc = sparse_map_open(fd, b, 0, &map);
	if (rc < 0) {
		alarm(0);
		return rc;
	}
	*at_open = false;
	m->size = sparse_map_size(map);
	m->backend = sparse_map_get_backend(map);
	m->r = calloc((size_t)max, sizeof(*m->r));
	if (!m->r) {
		perror("calloc");
		exit(99);
	}
	while ((rc = sparse_map_next(map, &r)) == 1 && ++calls < max)
		m->r[m->n++] = r;
	sparse_map_close(map);
	alarm(0);
	if (rc == 1) {
		fail(name, "%s: the map did not end after %ld ranges",
		     sparse_map_backend_name(b), max);
		return 0;
	}
	return rc;
}

/* AUTO keeps every written byte as data, whatever SEEK answers. */
static void check_auto(const char *name, int flags)
{
	int fd = open_case(name, flags), rfd = open_case(name, O_RDONLY);
	const char *mode = flags == O_WRONLY ? "auto, write-only fd" : "auto";
	struct th_map m;
	bool at_open;
	int rc = collect(fd, SPARSE_MAP_BACKEND_AUTO, &m, &at_open, name);
	const char *why;

	checks++;
	if (rc < 0)
		fail(name, "%s: %s failed: %s", mode, at_open ? "sparse_map_open" : "sparse_map_next",
		     strerror(-rc));
	else if (m.size != SIZE)
		fail(name, "%s: size %lld, written %d", mode, (long long)m.size, SIZE);
	else if ((why = th_check_contract(rfd, &m, 0)))
		fail(name, "%s (%s): %s", mode, sparse_map_backend_name(m.backend), why);
	else if (m.n == 0 || m.r[m.n - 1].offset + m.r[m.n - 1].length != SIZE)
		fail(name, "%s: the ranges end before the size: %s", mode, th_describe(&m));
	th_map_free(&m);
	close(rfd);
	close(fd);
}

/* A forced SEEK returns the error; after ENXIO or a wrong answer it may also map soundly. */
static void check_forced_seek(const char *name, int err)
{
	int fd = open_case(name, O_RDWR);
	struct th_map m;
	bool at_open;
	int rc = collect(fd, SPARSE_MAP_BACKEND_SEEK, &m, &at_open, name);
	const char *why = rc < 0 ? NULL : th_check_contract(fd, &m, 0);
	bool unsupported = at_open && rc == -EOPNOTSUPP && (err == EINVAL || err == EOPNOTSUPP);

	checks++;
	if (err && err != ENXIO) {
		if (rc != -err && !unsupported)
			fail(name, "seek: expected %s, got %s", strerror(err),
			     rc < 0 ? strerror(-rc) : "a map");
	} else if (rc < 0 && rc != -EIO && rc != -ENXIO) {
		fail(name, "seek: failed with %s, not EIO or ENXIO", strerror(-rc));
	} else if (why) {
		fail(name, "seek: %s", why);
	}
	th_map_free(&m);
	close(fd);
}

/* One sparse_map_lseek on a descriptor of its own; a message if it is wrong. */
static const char *lseek_wrong(const char *name, int64_t off, int whence, char *buf, size_t len)
{
	int fd = open_case(name, O_RDWR);
	int64_t first = written_from(off), got, now;
	int err;

	(void)lseek(fd, SENTINEL, SEEK_SET);
	errno = 0;
	alarm(20);
	got = sparse_map_lseek(fd, off, whence);
	alarm(0);
	err = errno;
	now = lseek(fd, 0, SEEK_CUR);
	close(fd);
	if (got < 0 && now != SENTINEL)
		snprintf(buf, len, "failed (%s) and moved the offset to %lld", strerror(err), (long long)now);
	else if (got < 0 && !(whence == SPARSE_MAP_SEEK_DATA && err == ENXIO && first < 0))
		snprintf(buf, len, "failed: %s", strerror(err));
	else if (got >= 0 && now != got)
		snprintf(buf, len, "answered %lld, offset left at %lld", (long long)got, (long long)now);
	else if (got >= 0 && (got < off || got > SIZE))
		snprintf(buf, len, "answered %lld, outside [offset, size]", (long long)got);
	else if (got >= 0 && whence == SPARSE_MAP_SEEK_DATA && first >= 0 && got > first)
		snprintf(buf, len, "answered %lld, past data written at %lld", (long long)got,
			 (long long)first);
	else if (got >= 0 && whence == SPARSE_MAP_SEEK_HOLE && got < SIZE && written(got))
		snprintf(buf, len, "answered %lld, which is written data", (long long)got);
	else
		return NULL;
	return buf;
}

static void check_lseek(const char *name)
{
	const int64_t offsets[] = {
		0, (64 << 10) + 100, 100 << 10, (256 << 10) + 4999, 650 << 10, 800 << 10, SIZE - 1,
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		for (int w = 0; w < 2; w++) {
			int whence = w ? SPARSE_MAP_SEEK_HOLE : SPARSE_MAP_SEEK_DATA;
			const char *why = lseek_wrong(name, offsets[i], whence, buf, sizeof(buf));

			checks++;
			if (why)
				fail(name, "sparse_map_lseek(%lld, %s) %s", (long long)offsets[i],
				     w ? "SEEK_HOLE" : "SEEK_DATA", why);
		}
	}
}

static void write_case(const char *name)
{
	int fd = open_case(name, O_RDWR | O_TRUNC);

	for (size_t i = 0; i < NRUNS; i++)
		th_fill(fd, runs[i].off, runs[i].len);
	th_truncate(fd, SIZE);
	close(fd);
}

/* One file: write it, then every check.  err: the injected errno, 0 for a wrong answer. */
static void one_case(const char *name, int err)
{
	write_case(name);
	check_auto(name, O_RDWR);
	/* Without SEEK built, nothing says anything of a file that cannot
	 * be read: AUTO refuses it (-EBADF), as documented. */
	if (seek_built)
		check_auto(name, O_WRONLY);
	if (seek_built)
		check_forced_seek(name, err);
	check_lseek(name);
}

int main(int argc, char **argv)
{
	char name[64];
	int cases = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: badseek DIR (a mount of fuse-badseek)\n");
		return 2;
	}
	dir = argv[1];
	write_case("honest");	/* the control: answers the backing file's own */
	{
		int fd = open_case("honest", O_RDONLY);
		struct sparse_map *map;

		if (sparse_map_open(fd, SPARSE_MAP_BACKEND_SEEK, 0, &map) == -EOPNOTSUPP) {
			printf("badseek: SEEK is not built: no forced SEEK, no write-only map\n");
			seek_built = false;
		} else {
			sparse_map_close(map);
		}
		close(fd);
	}
	one_case("honest", 0);
	cases++;
	for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
		for (size_t w = 0; w < 3; w++) {
			for (size_t e = 0; e < NERRNOS; e++) {
				/* SEEK_DATA's ENXIO is its answer for a trailing
				 * hole: the library believes it (sparse_map(3)). */
				if (errno_values[e] == ENXIO && w != 1)
					continue;
				snprintf(name, sizeof(name), "%s-%s-%d", errno_modes[e], whences[w], ks[k]);
				one_case(name, errno_values[e]);
				cases++;
			}
			for (size_t m = 0; m < 3; m++) {
				if (strcmp(wrong_modes[m], "flip") == 0 && w != 0)
					continue;	/* flip: SEEK_DATA only */
				snprintf(name, sizeof(name), "%s-%s-%d", wrong_modes[m], whences[w], ks[k]);
				one_case(name, 0);
				cases++;
			}
		}
	}
	printf("badseek: %d files answering SEEK_DATA/SEEK_HOLE badly, %d checks: %s\n", cases, checks,
	       failures ? "FAILURES above" : "every written byte stayed data, every map ended");
	if (failures)
		printf("badseek: %d checks failed\n", failures);
	return failures ? 1 : 0;
}
