# Rules for tests/reliability/, included by the top-level Makefile.am:
# faults injected at the system-call seam, hostile input, files changed
# while they are mapped, the fuzz target's replay, and a test program that
# needs no Check (for the -m32 and musl builds in .ci/stages/).

REL_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests -I$(top_srcdir)/lib
rel_bytes = tests/reliability/bytes.c tests/reliability/bytes.h

# The test build of the library: every system call through sm_sys_table.
if HAVE_CHECK
check_PROGRAMS += tests/reliability/test-faults
tests_reliability_test_faults_SOURCES = tests/reliability/test-faults.c $(rel_bytes)
tests_reliability_test_faults_CPPFLAGS = $(REL_CPPFLAGS) -DSM_FAULT_INJECTION
tests_reliability_test_faults_CFLAGS = $(TEST_CFLAGS)
tests_reliability_test_faults_LDADD = tests/libhelpers.la lib/libsparse-map-fi.la $(CHECK_LIBS)
tests_reliability_test_faults_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/reliability/test-faults

check_PROGRAMS += tests/reliability/test-hostile
tests_reliability_test_hostile_SOURCES = tests/reliability/test-hostile.c
tests_reliability_test_hostile_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_test_hostile_CFLAGS = $(TEST_CFLAGS)
tests_reliability_test_hostile_LDADD = $(TEST_LIBS)
tests_reliability_test_hostile_LDFLAGS = $(TEST_LINK_FLAGS)
TESTS += tests/reliability/test-hostile
endif

# Files changed while they are mapped, on each file system (root: mounts).
check_PROGRAMS += tests/reliability/churn
tests_reliability_churn_SOURCES = tests/reliability/churn.c
tests_reliability_churn_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_churn_CFLAGS = $(AM_CFLAGS) -pthread
tests_reliability_churn_LDADD = tests/libhelpers.la lib/libsparse-map.la
tests_reliability_churn_LDFLAGS = -pthread
# A range flipped between hole and data while it is mapped; built on the
# test library, whose system calls it counts.
check_PROGRAMS += tests/reliability/flip
tests_reliability_flip_SOURCES = tests/reliability/flip.c
tests_reliability_flip_CPPFLAGS = $(REL_CPPFLAGS) -DSM_FAULT_INJECTION
tests_reliability_flip_CFLAGS = $(AM_CFLAGS) -pthread
tests_reliability_flip_LDADD = tests/libhelpers.la lib/libsparse-map-fi.la
tests_reliability_flip_LDFLAGS = -pthread
dist_check_SCRIPTS += tests/reliability/concurrent.sh
TESTS += tests/reliability/concurrent.sh

# A FUSE file system that answers SEEK_DATA/SEEK_HOLE badly on purpose
# (tests/matrix/fuse-badseek.c); badseek.sh mounts it (root) and runs badseek.
check_PROGRAMS += tests/reliability/badseek
tests_reliability_badseek_SOURCES = tests/reliability/badseek.c
tests_reliability_badseek_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_badseek_CFLAGS = $(AM_CFLAGS)
tests_reliability_badseek_LDADD = tests/libhelpers.la lib/libsparse-map.la
dist_check_SCRIPTS += tests/reliability/badseek.sh
TESTS += tests/reliability/badseek.sh

# The fuzz target's corpus (seeds and every crash found), replayed without
# libFuzzer; .ci/stages/32-fuzz.sh builds the real fuzzer with clang.
check_PROGRAMS += tests/reliability/fuzz-replay
tests_reliability_fuzz_replay_SOURCES = tests/reliability/fuzz-replay.c tests/reliability/fuzz-ops.c $(rel_bytes)
tests_reliability_fuzz_replay_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_fuzz_replay_CFLAGS = $(AM_CFLAGS)
tests_reliability_fuzz_replay_LDADD = tests/libhelpers.la lib/libsparse-map.la
TESTS += tests/reliability/fuzz-replay
EXTRA_DIST += tests/reliability/corpus

# The contract for every layout without Check: what the -m32 and musl
# stages run, since Check is not built for them.
check_PROGRAMS += tests/reliability/portable
tests_reliability_portable_SOURCES = tests/reliability/portable.c
tests_reliability_portable_CPPFLAGS = $(REL_CPPFLAGS)
tests_reliability_portable_CFLAGS = $(AM_CFLAGS)
tests_reliability_portable_LDADD = tests/libhelpers.la lib/libsparse-map.la
TESTS += tests/reliability/portable

# The CI stages this area adds (sanitizers, valgrind, fuzzing, -m32 and
# what it shares with the s390x stage, musl, configure variants); .ci/run
# runs them from a clone, the tarball keeps them.
EXTRA_DIST += .ci/stages/30-sanitizers.sh .ci/stages/31-valgrind.sh .ci/stages/32-fuzz.sh \
	.ci/stages/33-m32.sh .ci/emulated.sh .ci/stages/34-musl.sh \
	.ci/stages/35-configure-variants.sh
