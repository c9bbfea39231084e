# Rules for abi/, included by the top-level Makefile.am: what keeps the
# released interface released.
#
# libsparse-map.abi is the ABI of release 1.0 as abidw (libabigail) sees
# it; check-abi.sh compares the built library with it on every make check.
# `make abi-baseline` rewrites it from the build, which is done only when a
# release adds a version node (HACKING: changing the API).
EXTRA_DIST += abi/libsparse-map.abi
dist_check_SCRIPTS += abi/check-abi.sh
TESTS += abi/check-abi.sh
# ...and that check must fail on a removed symbol or an edited node.
dist_check_SCRIPTS += abi/test-check-abi.sh
TESTS += abi/test-check-abi.sh

abi-baseline: lib/libsparse-map.la
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		bash '$(abs_top_srcdir)/abi/check-abi.sh' --write '$(abs_top_srcdir)/abi/libsparse-map.abi'
.PHONY: abi-baseline

# The version macros of <sparse_map.h> are configure's version.
check_PROGRAMS += abi/test-version
abi_test_version_SOURCES = abi/test-version.c
abi_test_version_CPPFLAGS = $(AM_CPPFLAGS) -DSM_CONFIGURE_VERSION='"$(PACKAGE_VERSION)"'
abi_test_version_CFLAGS = $(AM_CFLAGS) -Werror
TESTS += abi/test-version

# Apple's linker takes a list of exports, made from the version script;
# check-exports.sh reads any build's library (the CI stages run it on the
# cross builds too).
dist_check_SCRIPTS += abi/test-exports.sh abi/check-exports.sh
TESTS += abi/test-exports.sh

# The static archive, which no version script reaches, defines the public
# functions and hidden sm_* internals only.
dist_check_SCRIPTS += abi/test-archive-symbols.sh
TESTS += abi/test-archive-symbols.sh

# ...and a shared library of another project can take the archive whole
# (its objects are PIC): the program and library it builds from these,
# with the build's compiler flags (under names no other test's make reads).
AM_TESTS_ENVIRONMENT += build_cflags='$(CFLAGS)'; build_ldflags='$(LDFLAGS)'; \
	export build_cflags build_ldflags;
dist_check_SCRIPTS += abi/test-archive-in-shared-lib.sh
TESTS += abi/test-archive-in-shared-lib.sh
EXTRA_DIST += abi/archive-wrap.c abi/archive-wrap-main.c
