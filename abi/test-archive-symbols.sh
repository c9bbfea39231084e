#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The version script hides the internals of the shared library only; in the
# static archive every function shared between the library's files is a
# global name that a program linking it sees.  So that such names stay in
# the library's own name space, each global symbol the archive defines must
# be one of:
#  - a function of lib/libsparse-map.sym, with default visibility;
#  - an internal sm_* name, hidden (-fvisibility=hidden), so that a shared
#    library built from the archive does not export it either;
#  - a name reserved for the compiler (__* or _X*: PIC thunks, sanitizers).
# And every function of lib/libsparse-map.sym is in the archive.
# Skipped without readelf, for a build without the archive
# (--disable-static), or where the archive is not ELF.
set -euo pipefail
src=${top_srcdir:?run this test through make check}
build=${top_builddir:?run this test through make check}
command -v readelf >/dev/null || { echo "SKIP: readelf is not installed (binutils)"; exit 77; }

# libtool's record of what it built: old_library names the archive.
old=$(sed -n "s/^old_library='\(.*\)'$/\1/p" "$build/lib/libsparse-map.la")
[ -n "$old" ] || { echo "SKIP: no static library in this build (--disable-static)"; exit 77; }
archive=$build/lib/.libs/$old
[ -s "$archive" ] || { echo "FAIL: lib/libsparse-map.la names $old, but there is no $archive"; exit 1; }
readelf -h "$archive" >/dev/null 2>&1 || { echo "SKIP: $old is not an archive of ELF objects"; exit 77; }

public=$(sed -n 's/^[[:space:]]*\(sparse_map_[a-z_]*\);$/\1/p' "$src/lib/libsparse-map.sym" | sort)
# Defined global and weak symbols, one "visibility name" a line.  (The name
# is the last field: on some architectures the visibility has more after it.)
syms=$(mktemp "${TMPDIR:-/tmp}/sm-archive-syms.XXXXXX")
trap 'rm -f "$syms"' EXIT
readelf -sW "$archive" | awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" { print $6, $NF }' |
	sort -u -k2 >"$syms"

bad=0
while read -r vis name; do
	case $name in
	sparse_map_*)
		if ! grep -qx "$name" <<<"$public"; then
			echo "FAIL: $name is global in $old but not a function of lib/libsparse-map.sym"
			bad=1
		elif [ "$vis" != DEFAULT ]; then
			echo "FAIL: the public $name has $vis visibility in $old"
			bad=1
		fi ;;
	sm_*)
		if [ "$vis" != HIDDEN ]; then
			echo "FAIL: the internal $name has $vis visibility in $old (wanted HIDDEN)"
			bad=1
		fi ;;
	__* | _[A-Z]*) ;;
	*)
		echo "FAIL: $name is global in $old: an internal name needs the sm_ prefix, or static"
		bad=1 ;;
	esac
done <"$syms"

defined=$(awk '$1 == "DEFAULT" && $2 ~ /^sparse_map_/ { print $2 }' "$syms" | sort)
if [ "$defined" != "$public" ]; then
	diff -u <(echo "$public") <(echo "$defined") || true
	echo "FAIL: $old does not define the functions of lib/libsparse-map.sym"
	bad=1
fi
[ "$bad" = 0 ] || exit 1
echo "PASS: $old defines the $(wc -l <<<"$public") public functions; its other global names are hidden sm_* ones"
