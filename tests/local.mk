# Rules for tests/, included by the top-level Makefile.am.
#
# Each test program uses Check and the helpers; a program that exits 77 was
# skipped (it needs root to mount, or a feature the machine lacks).

check_LTLIBRARIES += tests/libhelpers.la
tests_libhelpers_la_SOURCES = tests/helpers.c tests/helpers.h tests/check-run.h

TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
TEST_LIBS = tests/libhelpers.la lib/libsparse-map.la $(CHECK_LIBS)
TEST_LINK_FLAGS = -pthread

# The programs built on Check, when configure found it; else one note that
# they were not built (a skipped test, so that it shows in the summary).
if HAVE_CHECK
check_PROGRAMS += tests/test-map
tests_test_map_SOURCES = tests/test-map.c
tests_test_map_CFLAGS = $(TEST_CFLAGS)
tests_test_map_LDADD = $(TEST_LIBS)
tests_test_map_LDFLAGS = $(TEST_LINK_FLAGS)

TESTS += tests/test-map

check_PROGRAMS += tests/test-lseek
tests_test_lseek_SOURCES = tests/test-lseek.c
tests_test_lseek_CFLAGS = $(TEST_CFLAGS)
tests_test_lseek_LDADD = $(TEST_LIBS)
tests_test_lseek_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/test-lseek

check_PROGRAMS += tests/test-errors
tests_test_errors_SOURCES = tests/test-errors.c
tests_test_errors_CFLAGS = $(TEST_CFLAGS)
tests_test_errors_LDADD = $(TEST_LIBS)
tests_test_errors_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/test-errors

# Linked with the test build of the library, whose system calls the test can count and fail.
check_LTLIBRARIES += tests/libhelpers-fi.la
tests_libhelpers_fi_la_SOURCES = tests/helpers.c tests/helpers.h

check_PROGRAMS += tests/test-internal
tests_test_internal_SOURCES = tests/test-internal.c
tests_test_internal_CFLAGS = $(TEST_CFLAGS)
tests_test_internal_CPPFLAGS = $(AM_CPPFLAGS) -DSM_FAULT_INJECTION
tests_test_internal_LDADD = tests/libhelpers-fi.la lib/libsparse-map-fi.la $(CHECK_LIBS)
tests_test_internal_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/test-internal

# Also the test build: its ramfs cases run once more with cachestat gone.
check_PROGRAMS += tests/test-mounts
tests_test_mounts_SOURCES = tests/test-mounts.c
tests_test_mounts_CFLAGS = $(TEST_CFLAGS)
tests_test_mounts_CPPFLAGS = $(AM_CPPFLAGS) -DSM_FAULT_INJECTION
tests_test_mounts_LDADD = tests/libhelpers-fi.la lib/libsparse-map-fi.la $(CHECK_LIBS)
tests_test_mounts_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/test-mounts

# AUTO's FIEMAP without sync (issue 11), on ext4 (also nodelalloc), XFS and
# Btrfs (also compress-force): fiemap-unsynced.sh mounts them (root) and
# runs the program, built on the test library to count what it asks.
check_PROGRAMS += tests/test-fiemap-unsynced
tests_test_fiemap_unsynced_SOURCES = tests/test-fiemap-unsynced.c
tests_test_fiemap_unsynced_CFLAGS = $(TEST_CFLAGS)
tests_test_fiemap_unsynced_CPPFLAGS = $(AM_CPPFLAGS) -DSM_FAULT_INJECTION
tests_test_fiemap_unsynced_LDADD = tests/libhelpers-fi.la lib/libsparse-map-fi.la $(CHECK_LIBS)
tests_test_fiemap_unsynced_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/fiemap-unsynced.sh
else
TESTS += tests/no-check.sh
endif
dist_check_SCRIPTS += tests/fiemap-unsynced.sh tests/no-check.sh

# Without Check, so that the Windows build runs it too (under wine, in
# .ci/stages/37-windows.sh): RANGES through the seam, SCAN and lseek on a
# real file, and on Windows what wine does.
check_PROGRAMS += tests/test-anywhere
tests_test_anywhere_SOURCES = tests/test-anywhere.c
tests_test_anywhere_CPPFLAGS = $(AM_CPPFLAGS) -DSM_FAULT_INJECTION
tests_test_anywhere_LDADD = lib/libsparse-map-fi.la
TESTS += tests/test-anywhere

# Only lib/sys-<system>.c names what some systems lack (issue 13).
dist_check_SCRIPTS += tests/platform-source.sh
TESTS += tests/platform-source.sh
