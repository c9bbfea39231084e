# Rules for examples/, included by the top-level Makefile.am.
#
# The examples are built by plain `make` (so `make demo` and the README's
# first command work) and tested by `make check`.

noinst_PROGRAMS += examples/sparse-ls examples/sparse-cp
examples_sparse_ls_SOURCES = examples/sparse-ls.c examples/example.h
examples_sparse_ls_LDADD = lib/libsparse-map.la
examples_sparse_cp_SOURCES = examples/sparse-cp.c examples/example.h
examples_sparse_cp_LDADD = lib/libsparse-map.la

# Makes the layouts of tests/helpers.c for the shell tests, and compares
# 16 GiB sparse files without reading their holes.
check_PROGRAMS += examples/layout-tool
examples_layout_tool_SOURCES = examples/layout-tool.c
examples_layout_tool_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
examples_layout_tool_LDADD = tests/libhelpers.la lib/libsparse-map.la

EXAMPLE_TESTS = \
	examples/test-sparse-ls.sh \
	examples/test-sparse-cp.sh \
	examples/test-sparse-cp-append.sh \
	examples/test-copy-pseudo.sh \
	examples/test-downstream.sh
TESTS += $(EXAMPLE_TESTS)
dist_check_SCRIPTS += $(EXAMPLE_TESTS)
EXTRA_DIST += \
	examples/test-lib.sh \
	examples/downstream/Makefile \
	examples/downstream/map-file.c
# test-downstream.sh installs the build into a scratch DESTDIR with this make.
AM_TESTS_ENVIRONMENT += MAKE='$(MAKE)'; export MAKE;

# `make demo`: a small sparse file (data, a hole, data, a trailing hole)
# and its map.  The man pages' examples are run on the same layout.
DEMO_FILE = examples/demo.img
CLEANFILES += $(DEMO_FILE)
EXTRA_DIST += examples/make-demo.sh
# And, where it is built, the sparse-map command's picture of it.
demo: examples/sparse-ls$(EXEEXT) $(DEMO_TOOL)
	$(AM_V_GEN)$(SHELL) $(srcdir)/examples/make-demo.sh $(DEMO_FILE)
	@echo '$$ examples/sparse-ls $(DEMO_FILE)'
	@examples/sparse-ls $(DEMO_FILE)
	@if test -n '$(DEMO_TOOL)'; then \
		echo '$$ sparse-map map --bar --width=64 $(DEMO_FILE)'; \
		$(DEMO_TOOL) map --bar --width=64 $(DEMO_FILE); \
	fi
.PHONY: demo
