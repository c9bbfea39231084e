/* SPDX-License-Identifier: MIT */
/*
 * The fuzz target: its input is a list of operations on one file (write
 * data or zeroes, truncate, punch, preallocate) and calls of the API on it
 * (map with any backend, flags and start; sparse_map_lseek; seek in the
 * middle of a map).  After each call the answer is checked against the
 * file's bytes: ranges tile and are maximal, holes read as zeroes, SEEK_DATA
 * skips no data.  A broken rule aborts, which libFuzzer reports as a crash.
 *
 * Built with clang -fsanitize=fuzzer by .ci/stages/32-fuzz.sh; fuzz-replay.c
 * runs the corpus through it in every make check.  SM_FUZZ_DIR says where
 * the file lives (default: the test directory).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "helpers.h"

#define MAX_OPS 48
#define SPAN (4 << 20)		/* offsets stay below 4 MiB */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t left;
};

static unsigned int byte(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static int64_t offset(struct input *in)
{
	unsigned int hi = byte(in), lo = byte(in), fine = byte(in);

	/* Mostly block-aligned, sometimes not. */
	return ((int64_t)(hi << 8 | lo) * 512 + (fine & 1 ? fine : 0)) % SPAN;
}

static __attribute__((noreturn)) void broken(const char *what, const char *why)
{
	fprintf(stderr, "fuzz-ops: %s: %s\n", what, why);
	abort();
}

static int64_t file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		broken("fstat", strerror(errno));
	return st.st_size;
}

static bool forced_unavailable(int rc, enum sparse_map_backend b)
{
	return rc == -EOPNOTSUPP && (b == SPARSE_MAP_BACKEND_SEEK || b == SPARSE_MAP_BACKEND_FIEMAP);
}

static void map_and_check(int fd, struct input *in)
{
	unsigned int how = byte(in);
	enum sparse_map_backend b = (enum sparse_map_backend)(how % 4);
	unsigned int flags = (how >> 2) % 8;
	int64_t size = file_size(fd), start = offset(in);
	struct th_map m;
	const char *why;
	int rc;

	if (start > size)
		start = size;
	rc = th_collect(fd, b, flags, start, &m);
	if (forced_unavailable(rc, b))
		return;
	if (rc < 0)
		broken("map", strerror(-rc));
	why = th_check_contract(fd, &m, start);
	if (why)
		broken("map", why);
	th_map_free(&m);
}

/* Stop part-way, seek elsewhere, go on: what follows tiles from there. */
static void seek_midway(int fd, struct input *in)
{
	unsigned int how = byte(in), steps = byte(in) % 8;
	enum sparse_map_backend b = (enum sparse_map_backend)(how % 4);
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t to = offset(in), at;
	int rc = sparse_map_open(fd, b, (how >> 2) % 8, &map);

	if (forced_unavailable(rc, b))
		return;
	if (rc < 0)
		broken("open", strerror(-rc));
	for (unsigned int i = 0; i < steps && sparse_map_next(map, &r) == 1; i++)
		;
	if (to > sparse_map_size(map))
		to = sparse_map_size(map);
	if (sparse_map_seek(map, to) != 0)
		broken("seek", "refused an offset within the size");
	at = to;
	while ((rc = sparse_map_next(map, &r)) == 1) {
		if (r.offset != at || r.length <= 0)
			broken("seek", "ranges after it do not tile");
		if (r.kind == SPARSE_MAP_HOLE && rel_has_data(fd, r.offset, r.offset + r.length))
			broken("seek", "DATA LOSS: data in a hole");
		at += r.length;
	}
	if (rc < 0)
		broken("next after seek", strerror(-rc));
	if (at != sparse_map_size(map))
		broken("seek", "ranges end before the size");
	sparse_map_close(map);
}

static void lseek_and_check(int fd, struct input *in)
{
	bool want_data = byte(in) & 1;
	int64_t size = file_size(fd), off = offset(in);
	int64_t r;

	if (byte(in) & 1)
		off = size - (off % 4096);	/* near EOF, before or after it */
	errno = 0;
	r = sparse_map_lseek(fd, off, want_data ? SPARSE_MAP_SEEK_DATA : SPARSE_MAP_SEEK_HOLE);
	if (off < 0 || off >= size) {
		if (r != -1 || errno != ENXIO)
			broken("lseek", "not ENXIO at or past EOF");
		return;
	}
	if (r < 0 && !(want_data && errno == ENXIO))
		broken("lseek", strerror(errno));
	if (want_data) {
		/* Nothing but zeroes may be skipped. */
		if (rel_has_data(fd, off, r < 0 ? size : r))
			broken("SEEK_DATA", "DATA LOSS: skipped data");
		if (r >= 0 && (r < off || r >= size))
			broken("SEEK_DATA", "result outside [offset, size)");
	} else if (r < off || r > size) {
		broken("SEEK_HOLE", "result outside [offset, size]");
	} else if (r < size && rel_has_data(fd, r, r + 1)) {
		broken("SEEK_HOLE", "DATA LOSS: a hole that holds data");
	}
	if (r >= 0 && lseek(fd, 0, SEEK_CUR) != r)
		broken("lseek", "file offset is not the result");
}

static int the_file(void)
{
	static int fd = -1;
	static char path[4096];
	const char *dir = getenv("SM_FUZZ_DIR");

	if (fd < 0) {
		fd = th_create(dir && *dir ? dir : NULL, path, sizeof(path));
		unlink(path);
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	int fd = the_file();

	th_truncate(fd, 0);
	for (int op = 0; op < MAX_OPS && in.left; op++) {
		unsigned int code = byte(&in);
		int64_t off = offset(&in), len = 1 + (int64_t)byte(&in) * 257;

		switch (code % 9) {
		case 0:
			th_fill(fd, off, len);
			break;
		case 1:
			th_zero_fill(fd, off, len);
			break;
		case 2:
			th_truncate(fd, off);
			break;
		case 3:
			(void)fallocate(fd, 0x02 | 0x01 /* PUNCH_HOLE | KEEP_SIZE */, off, len);
			break;
		case 4:
			(void)fallocate(fd, code & 0x10 ? 0x01 /* KEEP_SIZE */ : 0, off, len * 16);
			break;
		case 5:
		case 6:
			map_and_check(fd, &in);
			break;
		case 7:
			lseek_and_check(fd, &in);
			break;
		case 8:
			seek_midway(fd, &in);
			break;
		}
	}
	return 0;
}
