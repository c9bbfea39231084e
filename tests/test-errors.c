/* SPDX-License-Identifier: MIT */
/*
 * Contract point 8: bad arguments and files the library cannot map get a
 * clear negative errno from sparse_map_open(), and *mapp is left NULL.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "check-run.h"
#include "helpers.h"

static char path[4096];

/* open must fail with want and leave *mapp NULL. */
static void expect_open_error(int fd, enum sparse_map_backend b, unsigned int flags, int want,
			      const char *what)
{
	struct sparse_map *map = (struct sparse_map *)&map;	/* not NULL: must be reset */
	int r = sparse_map_open(fd, b, flags, &map);

	ck_assert_msg(r == want, "%s: expected %d (%s), got %d (%s)", what, want,
		      strerror(-want), r, strerror(-r));
	ck_assert_msg(map == NULL, "%s: *mapp not NULL after failure", what);
}

static int regular_file(int oflags)
{
	int fd = th_create(NULL, path, sizeof(path));

	th_fill(fd, 0, 8192);
	th_truncate(fd, 65536);
	close(fd);
	fd = open(path, oflags);
	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(test_bad_arguments_are_einval)
{
	int fd = regular_file(O_RDONLY);

	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, NULL), -EINVAL);
	expect_open_error(fd, (enum sparse_map_backend)6, 0, -EINVAL, "backend 6");
	/* RANGES is Windows': elsewhere there is no call for it to make. */
	expect_open_error(fd, SPARSE_MAP_BACKEND_RANGES, 0, -EOPNOTSUPP, "RANGES off Windows");
	expect_open_error(fd, (enum sparse_map_backend)-1, 0, -EINVAL, "backend -1");
	/* Bits 5 and 6 are SPARSE_MAP_SPLIT_FLAGS and SPARSE_MAP_ANY_OFFSET
	 * (1.2); the first bit not given out is 7. */
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 1u << 7, -EINVAL, "flag bit 7");
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 1u << 31, -EINVAL, "flag bit 31");
	/* SPARSE_MAP_NO_READ and what only reading can do. */
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_NO_READ | SPARSE_MAP_VERIFY,
			  -EINVAL, "NO_READ with VERIFY");
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_NO_READ | SPARSE_MAP_ZEROES,
			  -EINVAL, "NO_READ with ZEROES");
	expect_open_error(fd, SPARSE_MAP_BACKEND_SCAN, SPARSE_MAP_NO_READ, -EINVAL,
			  "NO_READ with SCAN forced");
	ck_assert_int_eq(sparse_map_next(NULL, NULL), -EINVAL);
	ck_assert_int_eq(sparse_map_seek(NULL, 0), -EINVAL);
	close(fd);
	unlink(path);
}
END_TEST

/* sparse_map_open_with() must fail with want and leave *mapp NULL. */
static void expect_open_with_error(int fd, const struct sparse_map_options *o, int want,
				   const char *what)
{
	struct sparse_map *map = (struct sparse_map *)&map;	/* not NULL: must be reset */
	int r = sparse_map_open_with(fd, o, &map);

	ck_assert_msg(r == want, "%s: expected %d (%s), got %d (%s)", what, want,
		      strerror(-want), r, strerror(-r));
	ck_assert_msg(map == NULL, "%s: *mapp not NULL after failure", what);
}

/* sparse_map_open_with() checks every word of its options: what it does
 * not know is -EINVAL (so that a later release may give reserved words a
 * meaning), a start past the size -ENXIO. */
START_TEST(test_open_with_rejects_bad_options)
{
	const struct sparse_map_options init = SPARSE_MAP_OPTIONS_INIT;
	struct sparse_map_options o;
	int fd = regular_file(O_RDONLY);	/* 65536 bytes */
	char what[64];

	ck_assert_int_eq(sparse_map_open_with(fd, &init, NULL), -EINVAL);
	expect_open_with_error(fd, NULL, -EINVAL, "NULL options");
	o = init, o.start = -1;
	expect_open_with_error(fd, &o, -EINVAL, "start -1");
	o = init, o.start = INT64_MIN;
	expect_open_with_error(fd, &o, -EINVAL, "start INT64_MIN");
	o = init, o.size = -2;
	expect_open_with_error(fd, &o, -EINVAL, "size -2");
	o = init, o.size = INT64_MIN;
	expect_open_with_error(fd, &o, -EINVAL, "size INT64_MIN");
	for (size_t i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); i++) {
		o = init, o.reserved[i] = 1;
		snprintf(what, sizeof(what), "reserved[%zu] = 1", i);
		expect_open_with_error(fd, &o, -EINVAL, what);
	}
	o = init, o.flags = 1u << 7;
	expect_open_with_error(fd, &o, -EINVAL, "flag bit 7");
	o = init, o.backend = (enum sparse_map_backend)6;
	expect_open_with_error(fd, &o, -EINVAL, "backend 6");
	o = init, o.backend = (enum sparse_map_backend)-1;
	expect_open_with_error(fd, &o, -EINVAL, "backend -1");
	o = init, o.flags = SPARSE_MAP_NO_READ | SPARSE_MAP_VERIFY;
	expect_open_with_error(fd, &o, -EINVAL, "NO_READ with VERIFY");
	o = init, o.backend = SPARSE_MAP_BACKEND_SCAN, o.flags = SPARSE_MAP_NO_READ;
	expect_open_with_error(fd, &o, -EINVAL, "NO_READ with SCAN forced");
	/* Past the size: fstat's, or the caller's. */
	o = init, o.start = 65537;
	expect_open_with_error(fd, &o, -ENXIO, "start past fstat's size");
	o = init, o.start = 4097, o.size = 4096;
	expect_open_with_error(fd, &o, -ENXIO, "start past the given size");
	o = init, o.start = INT64_MAX, o.size = 0;
	expect_open_with_error(fd, &o, -ENXIO, "start INT64_MAX, size 0");
	/* Bad options are found before the fd is looked at. */
	o = init, o.reserved[3] = 1;
	expect_open_with_error(-1, &o, -EINVAL, "fd -1 and a reserved word set");
	expect_open_with_error(-1, &init, -EBADF, "fd -1");
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_bad_fds_are_ebadf)
{
	int fd = regular_file(O_RDONLY);

	close(fd);
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 0, -EBADF, "closed fd");
	expect_open_error(-1, SPARSE_MAP_BACKEND_AUTO, 0, -EBADF, "fd -1");
	expect_open_error(1 << 20, SPARSE_MAP_BACKEND_AUTO, 0, -EBADF, "fd never opened");
	fd = open(path, O_PATH);
	ck_assert_int_ge(fd, 0);
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 0, -EBADF, "O_PATH fd");
	close(fd);
	unlink(path);
}
END_TEST

/* A backend that must read, on an fd that cannot: -EBADF at open. */
START_TEST(test_reading_needs_a_readable_fd)
{
	struct sparse_map *map;
	int fd = regular_file(O_WRONLY);

	expect_open_error(fd, SPARSE_MAP_BACKEND_SCAN, 0, -EBADF, "SCAN on O_WRONLY");
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY, -EBADF, "VERIFY on O_WRONLY");
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES, -EBADF, "ZEROES on O_WRONLY");
#if defined(SM_HAVE_SEEK) || defined(SM_HAVE_FIEMAP)
	/* Without reading, a write-only fd maps fine. */
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map), 0);
	ck_assert_int_ne(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_SCAN);
	sparse_map_close(map);
#else
	/* With only SCAN built, nothing reports holes without reading:
	 * every byte is data, which is no error. */
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, 0, &map), 0);
	ck_assert_int_eq(sparse_map_get_backend(map), SPARSE_MAP_BACKEND_NONE);
	sparse_map_close(map);
#endif
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_directory_is_eisdir)
{
	int fd = open(th_dir(), O_RDONLY | O_DIRECTORY);

	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 0, -EISDIR, "directory");
	expect_open_error(fd, SPARSE_MAP_BACKEND_SCAN, 0, -EISDIR, "directory, SCAN");
	close(fd);
}
END_TEST

START_TEST(test_streams_and_devices_are_espipe)
{
	int sv[2], fd;

	snprintf(path, sizeof(path), "%s/sm-test-fifo-%d", th_dir(), (int)getpid());
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	fd = open(path, O_RDWR | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	expect_open_error(fd, SPARSE_MAP_BACKEND_AUTO, 0, -ESPIPE, "FIFO");
	close(fd);
	unlink(path);

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	expect_open_error(sv[0], SPARSE_MAP_BACKEND_AUTO, 0, -ESPIPE, "socket");
	close(sv[0]);
	close(sv[1]);

	fd = open("/dev/null", O_RDONLY);
	expect_open_error(fd, SPARSE_MAP_BACKEND_SEEK, 0, -ESPIPE, "/dev/null");
	close(fd);
	fd = open("/dev/zero", O_RDONLY);
	expect_open_error(fd, SPARSE_MAP_BACKEND_SCAN, 0, -ESPIPE, "/dev/zero");
	close(fd);
}
END_TEST

/* A forced backend the file system cannot serve: tmpfs has no FIEMAP. */
/* The backend AUTO settles on for fd with these flags (-errno if none). */
static int auto_backend(int fd, unsigned int flags)
{
	struct sparse_map *map;
	int r = sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, flags, &map);

	if (r < 0)
		return r;
	r = sparse_map_get_backend(map);
	sparse_map_close(map);
	return r;
}

/* A backend the caller names that cannot serve fails; one the environment
 * names gives way to AUTO's choice; SPARSE_MAP_NO_ENV ignores it. */
START_TEST(test_unservable_backend_is_eopnotsupp)
{
	struct statfs sfs;
	char p[4096];
	int fd;

	if (statfs("/dev/shm", &sfs) != 0 || sfs.f_type != TMPFS_MAGIC || access("/dev/shm", W_OK)) {
		fprintf(stderr, "no writable tmpfs at /dev/shm: FIEMAP refusal not tested here\n");
		return;
	}
	fd = th_create("/dev/shm", p, sizeof(p));
	th_fill(fd, 0, 100);
	expect_open_error(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, -EOPNOTSUPP, "FIEMAP on tmpfs");
#ifndef SM_HAVE_SEEK
	close(fd);
	unlink(p);
	return;		/* what follows takes SEEK for AUTO's choice on tmpfs */
#endif
	ck_assert_int_eq(auto_backend(fd, 0), SPARSE_MAP_BACKEND_SEEK);
	/* The environment cannot break a program: what it names gives way. */
	setenv("SPARSE_MAP_BACKEND", "fiemap", 1);
	ck_assert_int_eq(auto_backend(fd, 0), SPARSE_MAP_BACKEND_SEEK);
	/* What it names and can serve is used, unless SPARSE_MAP_NO_ENV. */
	setenv("SPARSE_MAP_BACKEND", "scan", 1);
	ck_assert_int_eq(auto_backend(fd, 0), SPARSE_MAP_BACKEND_SCAN);
	ck_assert_int_eq(auto_backend(fd, SPARSE_MAP_NO_ENV), SPARSE_MAP_BACKEND_SEEK);
	/* SCAN reads, which SPARSE_MAP_NO_READ forbids: it gives way too. */
	ck_assert_int_eq(auto_backend(fd, SPARSE_MAP_NO_READ), SPARSE_MAP_BACKEND_SEEK);
	unsetenv("SPARSE_MAP_BACKEND");
	close(fd);
	unlink(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("open");

	unsetenv("SPARSE_MAP_BACKEND");
	tcase_add_test(tc, test_bad_arguments_are_einval);
	tcase_add_test(tc, test_open_with_rejects_bad_options);
	tcase_add_test(tc, test_bad_fds_are_ebadf);
	tcase_add_test(tc, test_reading_needs_a_readable_fd);
	tcase_add_test(tc, test_directory_is_eisdir);
	tcase_add_test(tc, test_streams_and_devices_are_espipe);
	tcase_add_test(tc, test_unservable_backend_is_eopnotsupp);
	suite_add_tcase(s, tc);
	return th_run_suite(s);
}
