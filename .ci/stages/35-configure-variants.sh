#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds that stand in for other platforms:
#  - without FIEMAP (--disable-fiemap), without SEEK_DATA/SEEK_HOLE
#    (--disable-seek), and without both: at -O2 the whole test suite but
#    the tests of the example copier's and the sparse-map command's output
#    through each backend by name (README command 2 and the other stages
#    run those; here a backend not built only skips its cases), at
#    -O0, where no dead code is dropped and so a reference to a backend
#    that is not built fails to link, the library, every test program, and
#    the unit tests.  AUTO must fall back, forced backends say EOPNOTSUPP.
#  - (the generic system layer: 35-configure-posix.sh, in the other lane)
#  - no Check (as in a cross build): everything else builds, and make check
#    says the unit tests were skipped.
set -euo pipefail
. "$(dirname "$0")/../variant.sh"
unit_tests="tests/test-map tests/test-lseek tests/test-errors tests/test-internal
	tests/reliability/test-faults tests/reliability/test-hostile tests/platform-source.sh"
by_name="examples/test-sparse-cp.sh examples/test-sparse-cp-append.sh tool/test-cp.sh
	tool/test-dig.sh tool/test-bmap.sh"

for opt in O2 O0; do
	for without in fiemap seek fiemap-seek; do
		args=()
		for backend in ${without//-/ }; do args+=("--disable-$backend"); done
		if [ "$opt" = O2 ]; then tests="all-but $by_name"; else tests=$unit_tests; fi
		variant "no-$without-$opt" "-g -$opt" "$tests" "${args[@]}"
	done
done

empty=$(mktemp -d)
variant no-check "-g -O2" "tests/no-check.sh tests/platform-source.sh examples/test-sparse-ls.sh" \
	PKG_CONFIG_LIBDIR="$empty" PKG_CONFIG_PATH=
rmdir "$empty"
