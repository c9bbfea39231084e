#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds that stand in for other platforms:
#  - without FIEMAP (--disable-fiemap), without SEEK_DATA/SEEK_HOLE
#    (--disable-seek), and without both: at -O2 the whole test suite; at
#    -O0, where no dead code is dropped and so a reference to a backend
#    that is not built fails to link, the library, every test program, and
#    the unit tests.  AUTO must fall back, forced backends say EOPNOTSUPP.
#  - the generic system layer (--with-platform=posix, lib/sys-posix.c) on
#    Linux: the whole suite, less what only Linux's layer can do (ramfs,
#    cachestat, unsynced FIEMAP), which those tests skip.
#  - no Check (as in a cross build): everything else builds, and make check
#    says the unit tests were skipped.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
export SM_MATRIX_SEEDS=${SM_MATRIX_SEEDS:-2}
unit_tests="tests/test-map tests/test-lseek tests/test-errors tests/test-internal
	tests/reliability/test-faults tests/reliability/test-hostile tests/platform-source.sh"

# variant NAME CFLAGS TESTS CONFIGURE-ARGS...: TESTS "all" runs make check.
variant() {
	local name=$1 cflags=$2 tests=$3 build
	shift 3
	build=${TMPDIR:-/tmp}/sm-stage-variant-$name
	echo "--- $name: configure $* CFLAGS='$cflags'"
	rm -rf "$build"
	mkdir -p "$build"
	cd "$build"
	"$src/configure" -q CFLAGS="$cflags" "$@"
	if [ "$name" = no-check ] && ! grep -q '^S\["HAVE_CHECK_TRUE"\]="#"' config.status; then
		echo "FAIL: the no-check variant found Check after all"
		exit 1
	fi
	make -j2 >/dev/null
	if [ "$tests" = all ]; then
		make -j2 check || { cat test-suite.log; exit 1; }
	else
		# shellcheck disable=SC2086
		make -j2 check TESTS="$(echo $tests)" || { cat test-suite.log; exit 1; }
	fi
	grep -E '^# (PASS|SKIP|FAIL):' test-suite.log | tr '\n' ' '
	echo
	cd / && rm -rf "$build"
}

for opt in O2 O0; do
	for without in fiemap seek fiemap-seek; do
		args=()
		for backend in ${without//-/ }; do args+=("--disable-$backend"); done
		if [ "$opt" = O2 ]; then tests=all; else tests=$unit_tests; fi
		variant "no-$without-$opt" "-g -$opt" "$tests" "${args[@]}"
	done
done

variant posix "-g -O2" all --with-platform=posix

empty=$(mktemp -d)
variant no-check "-g -O2" "tests/no-check.sh tests/platform-source.sh examples/test-sparse-ls.sh" \
	PKG_CONFIG_LIBDIR="$empty" PKG_CONFIG_PATH=
rmdir "$empty"
