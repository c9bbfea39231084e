/* SPDX-License-Identifier: MIT */
/*
 * portable [DIR...]: the unit tests' contract check without Check, for
 * builds that have no Check library (-m32 and musl, in .ci/stages/): every
 * layout through every backend and flag set must keep the contract, and the
 * 16 GiB layout must be mapped right past 4 GiB, which proves large-file
 * offsets in a 32-bit build.  Also run by make check on the build dir.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "helpers.h"

#define GiB (1LL << 30)
#define TMPFS_MAGIC_NUMBER 0x01021994

static int failures, maps;
static char path[4096];

#define EXPECT(cond, ...) do { \
	if (!(cond)) { \
		failures++; \
		fprintf(stderr, "FAIL: " __VA_ARGS__); \
		fputc('\n', stderr); \
	} \
} while (0)

static const enum sparse_map_backend backends[] = {
	SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK,
	SPARSE_MAP_BACKEND_FIEMAP, SPARSE_MAP_BACKEND_SCAN,
};
static const unsigned int flag_sets[] = { 0, SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES, SPARSE_MAP_SYNC };

static bool on_tmpfs(const char *dir)
{
	struct statfs sfs;

	return statfs(dir, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_NUMBER;
}

/* Data where l_past_4g (tests/helpers.c) wrote it, on both sides of 4 GiB. */
static void check_past_4g(int fd, const struct th_map *m, int64_t blk, const char *what)
{
	const int64_t data_at[] = { 4 * GiB - 2 * blk, 4 * GiB + blk, 8 * GiB + 1, 16 * GiB - 1 };
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t off;

	EXPECT(m->size == 16 * GiB, "%s: size %lld", what, (long long)m->size);
	for (int i = 0; i < 4; i++)
		EXPECT(th_kind_at(m, data_at[i]) == SPARSE_MAP_DATA, "%s: byte %lld not data: %s", what,
		       (long long)data_at[i], th_describe(m));
	off = sparse_map_lseek(fd, 5 * GiB, SPARSE_MAP_SEEK_DATA);
	EXPECT(off > 4 * GiB + 2 * blk - 1 && off <= 8 * GiB + 1, "%s: SEEK_DATA(5 GiB) = %lld", what,
	       (long long)off);
	off = sparse_map_lseek(fd, 8 * GiB + 1, SPARSE_MAP_SEEK_HOLE);
	EXPECT(off >= 8 * GiB + 11 && off <= 16 * GiB - blk, "%s: SEEK_HOLE(8 GiB + 1) = %lld", what,
	       (long long)off);
	EXPECT(lseek(fd, 0, SEEK_CUR) == off, "%s: file offset not at SEEK_HOLE's result", what);
	if (sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map) == 0) {
		EXPECT(sparse_map_seek(map, 12 * GiB) == 0, "%s: seek to 12 GiB", what);
		EXPECT(sparse_map_next(map, &r) == 1 && r.offset == 12 * GiB &&
		       r.offset + r.length <= 16 * GiB - blk + 1,
		       "%s: range after seek to 12 GiB: [%lld,+%lld)", what, (long long)r.offset,
		       (long long)r.length);
		sparse_map_close(map);
	}
}

static void check_dir(const char *dir)
{
	bool tmpfs = on_tmpfs(dir);

	for (size_t li = 0; li < th_nlayouts; li++) {
		const struct th_layout *l = &th_layouts[li];
		bool big = strcmp(l->name, "past-4g") == 0;
		int fd = th_create(dir, path, sizeof(path));
		int64_t blk = th_blksize(fd);

		l->build(fd, blk);
		for (int b = 0; b < 4; b++) {
			for (int f = 0; f < 3; f++) {
				char what[256];
				struct th_map m;
				const char *why;
				int rc;

				/* Reading 16 GiB: once, and where holes read fast. */
				if (big && (flag_sets[f] & SPARSE_MAP_VERIFY))
					continue;
				if (big && backends[b] == SPARSE_MAP_BACKEND_SCAN && (!tmpfs || flag_sets[f]))
					continue;
				snprintf(what, sizeof(what), "%s in %s, %s, flags %#x", l->name, dir,
					 sparse_map_backend_name(backends[b]), flag_sets[f]);
				rc = th_collect(fd, backends[b], flag_sets[f], 0, &m);
				if (rc == -EOPNOTSUPP && (backends[b] == SPARSE_MAP_BACKEND_SEEK ||
							  backends[b] == SPARSE_MAP_BACKEND_FIEMAP))
					continue;
				maps++;
				EXPECT(rc == 0, "%s: %s", what, strerror(-rc));
				if (rc < 0)
					continue;
				why = th_check_contract(fd, &m, 0);
				EXPECT(!why, "%s: %s", what, why);
				if (big)
					check_past_4g(fd, &m, blk, what);
				th_map_free(&m);
			}
		}
		close(fd);
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	if (sizeof(off_t) < 8) {
		fprintf(stderr, "FAIL: off_t has %zu bytes: no large-file support\n", sizeof(off_t));
		return 1;
	}
	if (argc < 2)
		check_dir(th_dir());
	for (int i = 1; i < argc; i++)
		check_dir(argv[i]);
#ifdef __GLIBC__
	const char *libc = "glibc";
#else
	const char *libc = "not glibc";
#endif

	printf("portable: %d maps checked (libc: %s, long: %zu bytes, off_t: %zu, pointer: %zu): %s\n",
	       maps, libc, sizeof(long), sizeof(off_t), sizeof(void *),
	       failures ? "FAILURES above" : "all kept the contract");
	return failures ? 1 : 0;
}
