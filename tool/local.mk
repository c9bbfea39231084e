# Rules for tool/, included by the top-level Makefile.am: the sparse-map
# command, installed, on the library's public API only.

if BUILD_TOOL
bin_PROGRAMS += tool/sparse-map
tool_sparse_map_SOURCES = tool/tool.h tool/main.c tool/map.c tool/bmap.c tool/cp.c tool/dig.c
tool_sparse_map_CFLAGS = $(AM_CFLAGS) $(NETTLE_CFLAGS)
tool_sparse_map_LDADD = lib/libsparse-map.la $(NETTLE_LIBS)
dist_man_MANS += man/sparse-map.1
DEMO_TOOL = tool/sparse-map$(EXEEXT)

TOOL_TESTS = tool/test-map.sh tool/test-cp.sh tool/test-dig.sh tool/test-bmap.sh
TESTS += $(TOOL_TESTS)
else
DEMO_TOOL =
endif
# In every tarball, whether or not this build makes the command.
EXTRA_DIST += tool/test-map.sh tool/test-cp.sh tool/test-dig.sh \
	tool/test-bmap.sh
