/* SPDX-License-Identifier: MIT */
/*
 * sparse-map, the command: what its verbs share.  The tool uses the
 * library's public API only (<sparse_map.h>), as any other program would.
 */
#ifndef SM_TOOL_H
#define SM_TOOL_H

#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sparse_map.h>

/* Exit statuses: every file done; a file failed (the others still done);
 * bad usage (nothing done). */
enum { TOOL_OK = 0, TOOL_FAILED = 1, TOOL_USAGE = 2 };

/* How a verb opens its maps: --backend= and the open flags. */
struct tool_map_opts {
	enum sparse_map_backend backend;
	unsigned int flags;
};

/* One failure, one line on stderr: "sparse-map: FILE: what (hint)".  The
 * hint says what to do; NULL leaves it out.  printf-style what. */
void tool_fail(const char *file, const char *hint, const char *what, ...)
	__attribute__((format(printf, 3, 4)));
/* tool_fail() for an error value (negative errno), with a hint for it. */
void tool_fail_errno(const char *file, int err, const char *doing);
/* Bad usage: "sparse-map VERB: what (try sparse-map VERB --help)". */
int tool_usage_error(const char *verb, const char *what, ...)
	__attribute__((format(printf, 2, 3)));

/* The options of how a verb maps, the same in every verb that has them,
 * under these getopt_long() values: --backend= 'b', --zeroes 'z',
 * --verify 'v', --no-read 'n', --sync 's'.  Returns 1 when opt was one of
 * them (opts updated), 0 when it is the verb's own, or -1 after saying
 * what is wrong (bad usage). */
int tool_map_option(const char *verb, int opt, const char *arg, struct tool_map_opts *opts);
/* After the options: -1 after saying so where --no-read meets an option
 * that reads, else 0. */
int tool_map_opts_check(const char *verb, const struct tool_map_opts *opts);
/* A byte count as people read it: "1.5 GiB", "4.0 KiB", "512 B". */
const char *tool_human(int64_t bytes, char buf[32]);
/* Open path to read it: -1 with errno on failure.  O_NONBLOCK, so that a
 * FIFO cannot hang the open (the map refuses it); where that meets a
 * lease another process holds (sparse-map dig's), the open waits for the
 * lease to be given back instead of breaking it and failing. */
int tool_open_read(const char *path);
/* Bad usage after getopt_long() said '?' or ':': names the option. */
int tool_bad_option(const char *verb, char **argv);

/* Open the map of fd as opts say (the tool always splits flags). */
int tool_map_open(int fd, const struct tool_map_opts *opts, struct sparse_map **mapp);
/* pread all of len bytes, or fewer only at the end of the file: the count,
 * or -errno. */
int64_t tool_pread(int fd, void *buf, size_t len, int64_t off);
/* Write all of len bytes at off: 0 or -errno. */
int tool_pwrite(int fd, const void *buf, size_t len, int64_t off);

/* The verbs: argv[0] is the verb's name; they return an exit status. */
int tool_map(int argc, char **argv);
int tool_bmap(int argc, char **argv);
int tool_cp(int argc, char **argv);
int tool_dig(int argc, char **argv);

#endif
