# Rules for tests/, included by the top-level Makefile.am.
#
# Each test program uses Check and the helpers; a program that exits 77 was
# skipped (it needs root to mount, or a feature the machine lacks).

check_LTLIBRARIES += tests/libhelpers.la
tests_libhelpers_la_SOURCES = tests/helpers.c tests/helpers.h

TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
TEST_LIBS = tests/libhelpers.la lib/libsparse-map.la $(CHECK_LIBS)
TEST_LINK_FLAGS = -pthread

check_PROGRAMS += tests/test-map
tests_test_map_SOURCES = tests/test-map.c
tests_test_map_CFLAGS = $(TEST_CFLAGS)
tests_test_map_LDADD = $(TEST_LIBS)
tests_test_map_LDFLAGS = $(TEST_LINK_FLAGS)

TESTS += tests/test-map
