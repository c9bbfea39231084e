#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the linker takes no version script (Apple's), the library exports
# what lib/libsparse-map.exp lists, made from lib/libsparse-map.sym by a
# rule of Makefile.am.  That list must name exactly the functions this
# build exports through the version script, each with the leading
# underscore Mach-O gives C names.  And the library itself exports
# exactly those functions (check-exports.sh, as the CI stages run it on
# their builds).
set -euo pipefail
build=${top_builddir:?run this test through make check}
lib=$build/lib/.libs/libsparse-map.so
command -v nm >/dev/null || { echo "SKIP: nm is not installed"; exit 77; }
[ -e "$lib" ] || { echo "SKIP: no shared library at $lib"; exit 77; }

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -s -C "$build" lib/libsparse-map.exp
got=$(sort "$build/lib/libsparse-map.exp")
want=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print "_" $3 }' | sort)
if [ "$got" != "$want" ]; then
	diff -u <(echo "$want") <(echo "$got") || true
	echo "FAIL: lib/libsparse-map.exp does not list what the library exports"
	exit 1
fi
echo "PASS: lib/libsparse-map.exp lists the $(echo "$got" | wc -l) exported functions"
"$(dirname "$0")/check-exports.sh" "$lib" "$top_srcdir/lib/libsparse-map.sym"
