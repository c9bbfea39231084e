# Rules for man/, included by the top-level Makefile.am.
#
# The section 3 pages are hand-written troff, installed under
# $(mandir)/man3.  A function documented on another function's page has a
# short page of its own (NAME, SYNOPSIS, the page to read), not a `.so`
# link: man -l resolves `.so man3/PAGE.3` from the current directory, so a
# link page read from the source tree fails.
dist_man_MANS = \
	man/sparse_map.3 \
	man/sparse_map_open.3 \
	man/sparse_map_open_with.3 \
	man/sparse_map_close.3 \
	man/sparse_map_next.3 \
	man/sparse_map_seek.3 \
	man/sparse_map_get_backend.3 \
	man/sparse_map_size.3 \
	man/sparse_map_backend_name.3 \
	man/sparse_map_lseek.3

EXTRA_DIST += man/extract-example.sh
dist_check_SCRIPTS += man/check-pages.sh man/check-render.sh man/run-examples.sh man/check-installed.sh
TESTS += man/check-pages.sh man/check-render.sh man/run-examples.sh man/check-installed.sh

# The EXAMPLES program of each page is taken from the page itself, so the
# code a reader copies is the code that make check compiles (warnings are
# errors) and runs.  man/examples/PAGE-NAME.c is the program that PAGE.3
# marks `.\" program: NAME` (sparse_map(3)'s ADOPTING section has three,
# sparse_map_next(3)'s EXAMPLES a second one).
MAN_EXAMPLE_CFLAGS = $(AM_CFLAGS) -Werror
man_example_sources = \
	man/examples/sparse_map.c \
	man/examples/sparse_map-adopt-lseek.c \
	man/examples/sparse_map-adopt-copy.c \
	man/examples/sparse_map-checksum.c \
	man/examples/sparse_map_open.c \
	man/examples/sparse_map_open_with.c \
	man/examples/sparse_map_next.c \
	man/examples/sparse_map_next-dig-holes.c \
	man/examples/sparse_map_get_backend.c \
	man/examples/sparse_map_lseek.c
CLEANFILES += $(man_example_sources)

check_PROGRAMS += \
	man/examples/sparse_map \
	man/examples/sparse_map-adopt-lseek \
	man/examples/sparse_map-adopt-copy \
	man/examples/sparse_map-checksum \
	man/examples/sparse_map_open \
	man/examples/sparse_map_open_with \
	man/examples/sparse_map_next \
	man/examples/sparse_map_next-dig-holes \
	man/examples/sparse_map_get_backend \
	man/examples/sparse_map_lseek
nodist_man_examples_sparse_map_SOURCES = man/examples/sparse_map.c
man_examples_sparse_map_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_adopt_lseek_SOURCES = man/examples/sparse_map-adopt-lseek.c
man_examples_sparse_map_adopt_lseek_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_adopt_lseek_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_adopt_copy_SOURCES = man/examples/sparse_map-adopt-copy.c
man_examples_sparse_map_adopt_copy_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_adopt_copy_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_checksum_SOURCES = man/examples/sparse_map-checksum.c
man_examples_sparse_map_checksum_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_checksum_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_open_SOURCES = man/examples/sparse_map_open.c
man_examples_sparse_map_open_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_open_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_open_with_SOURCES = man/examples/sparse_map_open_with.c
man_examples_sparse_map_open_with_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_open_with_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_next_SOURCES = man/examples/sparse_map_next.c
man_examples_sparse_map_next_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_next_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_next_dig_holes_SOURCES = man/examples/sparse_map_next-dig-holes.c
man_examples_sparse_map_next_dig_holes_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_next_dig_holes_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_get_backend_SOURCES = man/examples/sparse_map_get_backend.c
man_examples_sparse_map_get_backend_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_get_backend_LDADD = lib/libsparse-map.la
nodist_man_examples_sparse_map_lseek_SOURCES = man/examples/sparse_map_lseek.c
man_examples_sparse_map_lseek_CFLAGS = $(MAN_EXAMPLE_CFLAGS)
man_examples_sparse_map_lseek_LDADD = lib/libsparse-map.la

man/examples/sparse_map.c: $(srcdir)/man/sparse_map.3
man/examples/sparse_map-adopt-lseek.c: $(srcdir)/man/sparse_map.3
man/examples/sparse_map-adopt-copy.c: $(srcdir)/man/sparse_map.3
man/examples/sparse_map-checksum.c: $(srcdir)/man/sparse_map.3
man/examples/sparse_map_open.c: $(srcdir)/man/sparse_map_open.3
man/examples/sparse_map_open_with.c: $(srcdir)/man/sparse_map_open_with.3
man/examples/sparse_map_next.c: $(srcdir)/man/sparse_map_next.3
man/examples/sparse_map_next-dig-holes.c: $(srcdir)/man/sparse_map_next.3
man/examples/sparse_map_get_backend.c: $(srcdir)/man/sparse_map_get_backend.3
man/examples/sparse_map_lseek.c: $(srcdir)/man/sparse_map_lseek.3
$(man_example_sources): $(srcdir)/man/extract-example.sh
	$(AM_V_GEN)$(MKDIR_P) man/examples && \
	base=`basename $@ .c` && page=`echo $$base | sed 's/-.*//'` && \
	name=`echo $$base | sed -n 's/^[^-]*-//p'` && \
	$(SHELL) $(srcdir)/man/extract-example.sh \
		$(srcdir)/man/$$page.3 $$name > $@-t && mv -f $@-t $@

# After `make install` (and in make distcheck): man 3 NAME from the install.
installcheck-local: installcheck-man
installcheck-man:
	$(SHELL) $(srcdir)/man/check-installed.sh '$(DESTDIR)$(mandir)'
.PHONY: installcheck-man
