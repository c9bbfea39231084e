/* SPDX-License-Identifier: MIT */
/*
 * sparse_map_lseek() (contract point 7): at every range boundary, one byte
 * either side, at EOF, EOF+1 and negative offsets, its answer must be the
 * one illumos and POSIX.1-2024 define, computed from the map; where the file
 * system has a real SEEK_DATA (the tests' own), it must also equal the
 * kernel's answer.  The file offset moves to the result, and not on error.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-run.h"
#include "helpers.h"

static char path[4096];

static void check_at(int fd, const struct th_map *m, int64_t off, bool data, bool kernel_too)
{
	int whence = data ? SPARSE_MAP_SEEK_DATA : SPARSE_MAP_SEEK_HOLE;
	const char *name = data ? "SEEK_DATA" : "SEEK_HOLE";
	int err, got_err;
	int64_t want = th_seek_expected(m, off, data, &err), got;

	ck_assert_int_eq(lseek(fd, 777, SEEK_SET), 777);
	errno = 0;
	got = sparse_map_lseek(fd, off, whence);
	got_err = got < 0 ? errno : 0;
	ck_assert_msg(got == want && got_err == err,
		      "%s(%lld): expected %lld (%s), got %lld (%s); %s", name, (long long)off,
		      (long long)want, strerror(err), (long long)got, strerror(got_err),
		      th_describe(m));
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), got < 0 ? 777 : got);

	if (kernel_too) {
		off_t k = lseek(fd, off, data ? SEEK_DATA : SEEK_HOLE);
		int kerr = k < 0 ? errno : 0;

		ck_assert_msg(k == got && kerr == got_err,
			      "%s(%lld): the kernel says %lld (%s), the library %lld (%s); %s", name,
			      (long long)off, (long long)k, strerror(kerr), (long long)got,
			      strerror(got_err), th_describe(m));
	}
}

#if defined(SM_HAVE_SEEK) || defined(SM_HAVE_FIEMAP)
/* Whether this directory's file system answers SEEK_HOLE for real. */
static bool kernel_reports_holes(const char *dir)
{
	char p[4096];
	int fd = th_create(dir, p, sizeof(p));
	bool yes;

	th_truncate(fd, 1 << 20);
	th_fill(fd, 0, 4096);
	yes = lseek(fd, 0, SEEK_HOLE) < (1 << 20);
	close(fd);
	unlink(p);
	return yes;
}
#endif

START_TEST(test_lseek_at_every_boundary)
{
	const struct th_layout *l = &th_layouts[_i];
	struct th_map m;
	/* With only SCAN built, written zeroes are holes to the library, and
	 * the kernel's answer is no reference. */
#if defined(SM_HAVE_SEEK) || defined(SM_HAVE_FIEMAP)
	bool kernel = kernel_reports_holes(NULL);
#else
	bool kernel = false;
#endif
	int fd = th_create(NULL, path, sizeof(path));

	l->build(fd, th_blksize(fd));
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	for (size_t i = 0; i <= m.n; i++) {
		int64_t edge = i < m.n ? m.r[i].offset : m.size;

		for (int64_t off = edge - 1; off <= edge + 1; off++) {
			check_at(fd, &m, off, true, kernel);
			check_at(fd, &m, off, false, kernel);
		}
	}
	check_at(fd, &m, -1, true, kernel);
	check_at(fd, &m, -1, false, kernel);
	check_at(fd, &m, INT64_MIN, true, false);
	check_at(fd, &m, INT64_MAX, false, false);
	th_map_free(&m);
	close(fd);
	unlink(path);
}
END_TEST

/* A SEEK_DATA/SEEK_HOLE loop, as cp and tar run it (each call goes on
 * from the last answer), finds what a fresh AUTO map finds, and leaves
 * the offset at each answer. */
START_TEST(test_lseek_loop_matches_the_map)
{
	const struct th_layout *l = &th_layouts[_i];
	const char *err;
	int fd = th_create(NULL, path, sizeof(path));

	l->build(fd, th_blksize(fd));
	err = th_lseek_loop_matches_auto(fd);
	ck_assert_msg(err == NULL, "layout %s: the lseek loop, then AUTO: %s", l->name, err);
	close(fd);
	unlink(path);
}
END_TEST

/* Where the library walks a map that reads the file (here SCAN, named by
 * SPARSE_MAP_BACKEND; on ramfs, FUSE without lseek, NFSv3, AUTO), a loop's
 * calls share one map and what it read: a change of the file between two
 * calls must give the answer a fresh map gives, also where the walk had
 * read the bytes changed.  Not after the two seconds that let a kept map
 * believe the holes it saw without a page: only ramfs has those, and
 * test-mounts.c runs it there both ways. */
START_TEST(test_lseek_loop_sees_every_change)
{
	int fd = th_create(NULL, path, sizeof(path));
	const char *bad;

	setenv("SPARSE_MAP_BACKEND", "scan", 1);
	bad = th_lseek_after_changes(fd, SPARSE_MAP_BACKEND_SCAN, th_blksize(fd), false);
	ck_assert_msg(!bad, "%s", bad ? bad : "");
	/* The environment changes, the file does not: the next call walks
	 * what it names now (the file's written zeroes are data to AUTO). */
	(void)sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA);
	unsetenv("SPARSE_MAP_BACKEND");
	bad = th_lseek_agrees(fd, SPARSE_MAP_BACKEND_AUTO);
	ck_assert_msg(!bad, "%s (after SPARSE_MAP_BACKEND=scan was unset)", bad ? bad : "");
	close(fd);
	unlink(path);
}
END_TEST

/* Every other whence is lseek(2)'s own: the same result, errno and file
 * offset, so that a program may call sparse_map_lseek() for every lseek. */
START_TEST(test_lseek_passes_other_whence_through)
{
	int fd = th_create(NULL, path, sizeof(path));
	const struct { int64_t off; int whence; } calls[] = {
		{ 10, SEEK_SET }, { 5, SEEK_CUR }, { -3, SEEK_CUR }, { 0, SEEK_END },
		{ -40, SEEK_END }, { 1000, SEEK_END }, { -1, SEEK_SET }, { -200, SEEK_CUR },
		{ 0, 5 }, { 0, -1 }, { 7, 1000 },
	};

	th_fill(fd, 0, 100);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int64_t before = lseek(fd, 0, SEEK_CUR), want, got, want_at;
		int want_errno, got_errno;

		errno = 0;
		want = lseek(fd, calls[i].off, calls[i].whence);
		want_errno = errno;
		want_at = lseek(fd, 0, SEEK_CUR);
		ck_assert_int_eq(lseek(fd, before, SEEK_SET), before);
		errno = 0;
		got = sparse_map_lseek(fd, calls[i].off, calls[i].whence);
		got_errno = errno;
		ck_assert_msg(got == want && got_errno == want_errno &&
			      lseek(fd, 0, SEEK_CUR) == want_at,
			      "lseek(%lld, whence %d): lseek gave %lld (%s), offset %lld; "
			      "sparse_map_lseek %lld (%s), offset %lld", (long long)calls[i].off,
			      calls[i].whence, (long long)want, strerror(want_errno),
			      (long long)want_at, (long long)got, strerror(got_errno),
			      (long long)lseek(fd, 0, SEEK_CUR));
	}
	/* A descriptor that is not open: lseek's EBADF. */
	errno = 0;
	ck_assert_int_eq(sparse_map_lseek(-1, 0, SEEK_SET), -1);
	ck_assert_int_eq(errno, EBADF);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_lseek_passes_open_errors)
{
	int fd = th_create(NULL, path, sizeof(path));
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	int pipefd[2];

	close(fd);
	unlink(path);
	errno = 0;
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA), -1);
	ck_assert_int_eq(errno, EBADF);
	errno = 0;
	ck_assert_int_eq(sparse_map_lseek(dir, 0, SPARSE_MAP_SEEK_HOLE), -1);
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(pipe(pipefd), 0);
	errno = 0;
	ck_assert_int_eq(sparse_map_lseek(pipefd[0], 0, SPARSE_MAP_SEEK_DATA), -1);
	ck_assert_int_eq(errno, ESPIPE);
	close(pipefd[0]);
	close(pipefd[1]);
	close(dir);
}
END_TEST

/* A negative offset: lseek's errors come first, in lseek's order (a
 * descriptor that is not open, a pipe), and ENXIO only after them. */
START_TEST(test_lseek_negative_offset_errors_in_order)
{
	int fd = th_create(NULL, path, sizeof(path));
	int pipefd[2], closed;

	ck_assert_int_eq(pipe(pipefd), 0);
	closed = dup(fd);
	ck_assert_int_ge(closed, 0);
	close(closed);
	const int fds[] = { closed, pipefd[0], fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		for (int d = 0; d < 2; d++) {
			int whence = d ? SPARSE_MAP_SEEK_DATA : SPARSE_MAP_SEEK_HOLE;
			int want, got;

			errno = 0;
			ck_assert_int_eq(lseek(fds[i], -1, whence), -1);
			want = errno;
			errno = 0;
			ck_assert_int_eq(sparse_map_lseek(fds[i], -1, whence), -1);
			got = errno;
			ck_assert_msg(got == want, "fd %d, whence %d, offset -1: lseek says %s, "
				      "sparse_map_lseek %s", fds[i], whence, strerror(want),
				      strerror(got));
		}
	close(pipefd[0]);
	close(pipefd[1]);
	close(fd);
	unlink(path);
}
END_TEST

#ifdef __linux__
/*
 * procfs files say 0 bytes and read more.  Where the kernel's lseek refuses
 * SEEK_DATA and SEEK_HOLE (seq files: EINVAL), sparse_map_lseek() answers
 * the same; where it does not (/proc/sys), it never says "no data" where
 * reads return data, and sparse_map(3)'s loop reads all that cat reads.
 */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap && (r = pread(fd, buf + n, cap - n, (off_t)n)) > 0)
		n += (size_t)r;
	return n;
}

static void check_proc_file(const char *file, bool *refused, bool *answered)
{
	static char plain[65536], looped[65536];
	int fd = open(file, O_RDONLY);
	int64_t off = 0, d, h;
	size_t n, m = 0;
	int kerr;

	if (fd < 0)
		return;
	n = read_all(fd, plain, sizeof(plain));
	errno = 0;
	kerr = lseek(fd, 0, SEEK_DATA) < 0 ? errno : 0;
	lseek(fd, 0, SEEK_SET);
	if (n == 0 || n == sizeof(plain)) {
		close(fd);
		return;
	}
	errno = 0;
	d = sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA);
	if (kerr != 0 && kerr != ENXIO) {
#ifndef SM_HAVE_SEEK
		/* Built without SEEK_DATA, the library does not ask the
		 * kernel's lseek, so it cannot mirror its refusal: it must
		 * still never say "no data" where reads return some. */
		ck_assert_msg(d == 0, "%s: lseek says %s, sparse_map_lseek %lld (%s)", file,
			      strerror(kerr), (long long)d, strerror(errno));
		*refused = true;
		close(fd);
		return;
#endif
		ck_assert_msg(d == -1 && errno == kerr, "%s: lseek says %s, sparse_map_lseek %lld (%s)",
			      file, strerror(kerr), (long long)d, strerror(errno));
		*refused = true;
		close(fd);
		return;
	}
	ck_assert_msg(d == 0, "%s reads %zu bytes, but SEEK_DATA(0) gives %lld (%s)", file, n,
		      (long long)d, strerror(errno));
	/* The loop, reading each data run as a copier would. */
	for (int runs = 0; runs < 100; runs++) {
		d = sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_DATA);
		if (d < 0)
			break;
		h = sparse_map_lseek(fd, d, SPARSE_MAP_SEEK_HOLE);
		ck_assert_msg(h > d, "%s: SEEK_HOLE(%lld) = %lld", file, (long long)d, (long long)h);
		while (d < h && m < sizeof(looped)) {
			ssize_t r = pread(fd, looped + m, (size_t)(h - d), (off_t)d);

			if (r <= 0)
				break;
			ck_assert_int_eq((int64_t)m, d);
			m += (size_t)r;
			d += r;
		}
		off = h;
	}
	ck_assert_msg(d == -1 && errno == ENXIO, "%s: the loop ends with %s", file, strerror(errno));
	ck_assert_msg(m == n && memcmp(plain, looped, n) == 0,
		      "%s: cat reads %zu bytes, the SEEK_DATA/SEEK_HOLE loop %zu", file, n, m);
	*answered = true;
	close(fd);
}

START_TEST(test_lseek_on_procfs_files)
{
	const char *const files[] = {
		"/proc/self/status", "/proc/cpuinfo", "/proc/self/cmdline",
		"/proc/sys/kernel/ostype", "/proc/sys/kernel/osrelease", "/proc/sys/fs/file-max",
	};
	bool refused = false, answered = false;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		check_proc_file(files[i], &refused, &answered);
	if (access("/proc/sys/kernel/ostype", R_OK) != 0) {
		printf("no procfs here: not tested\n");
		return;
	}
	/* Both kinds must have been seen, or the test tested less. */
	ck_assert_msg(refused && answered, "refused %d, answered %d", refused, answered);
}
END_TEST
#endif

START_TEST(test_seek_constants_match_platform)
{
	ck_assert_int_eq(SPARSE_MAP_SEEK_DATA, SEEK_DATA);
	ck_assert_int_eq(SPARSE_MAP_SEEK_HOLE, SEEK_HOLE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lseek");
	TCase *tc = tcase_create("lseek");

	unsetenv("SPARSE_MAP_BACKEND");
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, th_lseek_forget, NULL);
	tcase_add_loop_test(tc, test_lseek_at_every_boundary, 0, (int)th_nlayouts);
	tcase_add_loop_test(tc, test_lseek_loop_matches_the_map, 0, (int)th_nlayouts);
	tcase_add_test(tc, test_lseek_loop_sees_every_change);
	tcase_add_test(tc, test_lseek_passes_other_whence_through);
	tcase_add_test(tc, test_lseek_passes_open_errors);
	tcase_add_test(tc, test_lseek_negative_offset_errors_in_order);
#ifdef __linux__
	tcase_add_test(tc, test_lseek_on_procfs_files);
#endif
	tcase_add_test(tc, test_seek_constants_match_platform);
	suite_add_tcase(s, tc);
	return th_run_suite(s);
}
