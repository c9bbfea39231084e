# Rules for tests/bench/, included by the top-level Makefile.am.
#
# The benchmark (issue 6).  `make check` builds it, so it cannot rot, but
# runs nothing; `make bench` runs the full benchmark (several minutes; as
# root it mounts its own file systems), `make bench BENCH_FLAGS=--small` a
# version of seconds.  The table goes to stdout and tests/bench/last-run.md.
check_PROGRAMS += tests/bench/bench
tests_bench_bench_SOURCES = tests/bench/bench.c
tests_bench_bench_LDADD = lib/libsparse-map.la
EXTRA_DIST += tests/bench/run.sh
CLEANFILES += tests/bench/last-run.md

BENCH_FLAGS =
# $(bin_PROGRAMS): the sparse-map command, where it is built (tool/local.mk),
# whose cp and bmap the benchmark times too (issue 29).
bench: tests/bench/bench $(bin_PROGRAMS)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		bash '$(abs_top_srcdir)/tests/bench/run.sh' $(BENCH_FLAGS)
.PHONY: bench
