/* SPDX-License-Identifier: MIT */
/* Shared by the test programs: files of known layout, and the contract checker. */
#ifndef SM_TEST_HELPERS_H
#define SM_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sparse_map.h"

#define TH_SKIP 77	/* what automake calls a skipped test */

/* A collected map: every range sparse_map_next() gave, in order. */
struct th_map {
	struct sparse_map_range *r;
	size_t n;
	int64_t size;
	enum sparse_map_backend backend;	/* in use at the end: under AUTO, the
						 * one that took over from a failed one */
	unsigned int open_flags;		/* what the map was opened with */
};

/* A file layout: build() writes it into an empty file; blk is st_blksize. */
struct th_layout {
	const char *name;
	void (*build)(int fd, int64_t blk);
	bool prealloc;		/* uses fallocate: backends may differ there */
};
extern const struct th_layout th_layouts[];
extern const size_t th_nlayouts;

/* The directory test files go in: $SM_TEST_DIR, else the current directory. */
const char *th_dir(void);
/* A new empty file in dir (th_dir() if NULL), opened O_RDWR; its path in path. */
int th_create(const char *dir, char *path, size_t pathlen);
/* pwrite len bytes of a non-zero pattern at off; aborts on failure. */
void th_fill(int fd, int64_t off, int64_t len);
void th_zero_fill(int fd, int64_t off, int64_t len);
void th_truncate(int fd, int64_t size);
/* fallocate; returns false (and does nothing) where the file system lacks it. */
bool th_fallocate(int fd, int mode, int64_t off, int64_t len);
int64_t th_blksize(int fd);
/* Close the map this thread's sparse_map_lseek() loop keeps (a call about
 * another fd does), so that a test starts as a fresh process would: under
 * valgrind (CK_FORK=no) the tests share one. */
void th_lseek_forget(void);

/* Map fd from offset start with the given backend and flags: 0 or -errno. */
int th_collect(int fd, enum sparse_map_backend backend, unsigned int flags,
	       int64_t start, struct th_map *out);
/* The same through sparse_map_open_with(): the ranges of [start, size). */
int th_collect_with(int fd, const struct sparse_map_options *opts, struct th_map *out);
void th_map_free(struct th_map *m);
/* The map a SEEK_DATA/SEEK_HOLE loop of sparse_map_lseek() gives, from 0
 * (backend AUTO, no flags): NULL, or what went wrong (an answer out of
 * order, or the file offset not at the answer). */
const char *th_collect_lseek(int fd, struct th_map *out);
/* NULL when that loop finds what a fresh AUTO map finds, and keeps the
 * contract; otherwise what differs. */
const char *th_lseek_loop_matches_auto(int fd);
/* Whether sparse_map_lseek()'s answers form one consistent function of the
 * file: SEEK_DATA(x) = d gives d >= x and SEEK_HOLE(d) > d; SEEK_HOLE(x) =
 * h < size gives SEEK_DATA(h) > h or ENXIO; both agree with the AUTO map,
 * at its boundaries and at samples random offsets; and sparse_map(3)'s
 * loop ends within (data runs + 1) SEEK_DATA calls.  NULL, or what broke. */
const char *th_lseek_consistent(int fd, uint64_t seed, int samples);

/* NULL when the map keeps the contract for the file as it is now: ranges tile
 * [start, size) in order, are maximal (under SPARSE_MAP_SPLIT_FLAGS, two
 * neighbours differ in kind or flags), every hole reads back as zeroes and
 * every non-zero byte lies in a data range.  Otherwise what is wrong. */
const char *th_check_contract(int fd, const struct th_map *m, int64_t start);

/* NULL when a and b call the same blocks data (a block is data if any of its
 * bytes is in a data range); otherwise the first block they disagree on. */
const char *th_compare_blocks(const struct th_map *a, const struct th_map *b, int64_t blk);

/* NULL when a and b give every byte of [lo, hi) the same kind; otherwise
 * the first byte they disagree on (a byte neither map holds is kind 0). */
const char *th_same_kinds(const struct th_map *a, const struct th_map *b, int64_t lo, int64_t hi);

/* Kind of the byte at off in m, or 0 if no range holds it. */
enum sparse_map_kind th_kind_at(const struct th_map *m, int64_t off);

/* What SEEK_DATA (data) or SEEK_HOLE must answer at off, by the definition,
 * for a file mapped as m: the offset, or -1 with *err set. */
int64_t th_seek_expected(const struct th_map *m, int64_t off, bool data, int *err);

/* NULL when sparse_map_lseek() answers as a fresh map of fd by backend
 * (flags 0) says, at every range boundary and a byte either side, for
 * both kinds, in a SEEK_DATA/SEEK_HOLE loop's order; else what differs. */
const char *th_lseek_agrees(int fd, enum sparse_map_backend backend);

/* Changes fd (16 blocks of blk, some data) between sparse_map_lseek()
 * calls: a write into a hole the last call read, zeroes over data, one
 * byte, truncate down and back up, a punched hole, growth.  NULL when each
 * time the next calls answer as a fresh map by backend does; else what
 * differs.  With settle, it first waits until the file's ctime is older
 * than the two seconds after which a kept map believes the ramfs holes an
 * earlier call saw without a page, and makes only the changes that add or
 * remove pages (a write into a hole, truncate, growth); without, every
 * change falls within that window. */
const char *th_lseek_after_changes(int fd, enum sparse_map_backend backend, int64_t blk,
				   bool settle);

/* The map as text, for failure messages. */
const char *th_describe(const struct th_map *m);

bool th_is_root(void);

#endif
