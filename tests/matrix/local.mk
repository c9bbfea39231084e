# Rules for tests/matrix/, included by the top-level Makefile.am.
#
# run.sh mounts each file system (as root) and runs the matrix program on
# it; the table it prints also goes to tests/matrix/matrix-table.txt, which
# .ci/stages/10-matrix-table.sh prints into the CI log.

check_PROGRAMS += tests/matrix/matrix
tests_matrix_matrix_SOURCES = tests/matrix/matrix.c
tests_matrix_matrix_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
tests_matrix_matrix_LDADD = tests/libhelpers.la lib/libsparse-map.la

fuse_pass = tests/matrix/fuse-pass.c tests/matrix/fuse-pass.h
if HAVE_FUSE3
# A pass-through FUSE file system with no lseek: the kernel falls back to
# the generic SEEK_DATA/SEEK_HOLE stub on it.
check_PROGRAMS += tests/matrix/fuse-nolseek
tests_matrix_fuse_nolseek_SOURCES = tests/matrix/fuse-nolseek.c $(fuse_pass)
tests_matrix_fuse_nolseek_CFLAGS = $(AM_CFLAGS) $(FUSE3_CFLAGS)
tests_matrix_fuse_nolseek_LDADD = $(FUSE3_LIBS)

# The same, with an lseek that answers badly on purpose, as each file's name
# says (tests/reliability/badseek.sh).
check_PROGRAMS += tests/matrix/fuse-badseek
tests_matrix_fuse_badseek_SOURCES = tests/matrix/fuse-badseek.c $(fuse_pass)
tests_matrix_fuse_badseek_CFLAGS = $(AM_CFLAGS) $(FUSE3_CFLAGS)
tests_matrix_fuse_badseek_LDADD = $(FUSE3_LIBS)
endif

dist_check_SCRIPTS += tests/matrix/run.sh
TESTS += tests/matrix/run.sh
CLEANFILES += tests/matrix/matrix-table.txt
EXTRA_DIST += .ci/stages/10-matrix-table.sh
