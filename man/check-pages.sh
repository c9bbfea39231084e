#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages as a reader meets them:
#  - every public function (lib/libsparse-map.sym) answers to `man 3 NAME`:
#    a page of its own, or a short page (NAME, SYNOPSIS, a pointer) to the
#    page whose NAME line lists it, with the same prototype; no page uses
#    `.so`, which man -l resolves from the current directory and fails;
#  - every full page has the sections, the #include and the pkg-config line
#    a reader looks for, and names lseek(2), ioctl_fiemap(2), fallocate(2);
#  - every page names the release configure.ac gives, and sparse_map(3)
#    shows that release's SPARSE_MAP_VERSION_* values;
#  - mandoc -Tlint (and groff -ww, where groff is installed) find nothing to
#    warn about in any page.
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
man=$src/man
fail=0
bad() { echo "FAIL: $*"; fail=1; }
release=$(sed -n 's/^m4_define(\[sm_\(major\|minor\|micro\)\], \[\([0-9]*\)\]).*/\2/p' "$src/configure.ac" | paste -sd.)
[[ $release =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: no release number in configure.ac"; exit 1; }

if ! command -v mandoc >/dev/null 2>&1; then
	echo "SKIP: mandoc is not installed (the README's first command installs it)"
	exit 77
fi

# Pages are linted from the root of a man tree, as man(1) reads them.
tree=$(mktemp -d "${TMPDIR:-/tmp}/sm-man.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/man3"
cp "$man"/*.3 "$tree/man3/"

# A short page names the page that describes its function in full.
full_page_of() { sed -n 's/^\.\\" function is described in full in its page: \([a-z_]*\)$/\1/p' "$1"; }
is_short() { [ -n "$(full_page_of "$1")" ]; }
# The SYNOPSIS line that declares function $2 in page $1.
prototype() { sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$1" | grep -F " $2(" ; }
for page in "$man"/*.3; do
	! grep -q '^\.so ' "$page" || bad "$(basename "$page"): uses .so, which man -l cannot follow outside a man tree"
done

symbols=$(sed -n 's/^[[:space:]]*\(sparse_map_[a-z_]*\);.*/\1/p' "$src/lib/libsparse-map.sym")
[ -n "$symbols" ] || bad "no symbols found in lib/libsparse-map.sym"
for sym in $symbols; do
	page=$man/$sym.3
	if [ ! -f "$page" ]; then
		bad "$sym: no page man/$sym.3"
		continue
	fi
	if is_short "$page"; then
		target=$(full_page_of "$page")
		if [ ! -f "$man/$target.3" ] || is_short "$man/$target.3"; then
			bad "$sym.3: points to $target.3, which is not a full page"
		elif ! sed -n '/^\.SH NAME/,/^\.SH/p' "$man/$target.3" | grep -qw "$sym"; then
			bad "$sym.3: $target.3 does not list $sym in its NAME section"
		elif [ "$(prototype "$page" "$sym")" != "$(prototype "$man/$target.3" "$sym")" ]; then
			bad "$sym.3: its SYNOPSIS declares $sym otherwise than $target.3 does"
		fi
		grep -q "^\.BR $target (3)" "$page" || bad "$sym.3: does not name $target(3)"
		sed -n '/^\.SH NAME/,/^\.SH/p' "$page" | grep -q "^$sym " || bad "$sym.3: NAME does not name $sym"
	fi
done

for page in "$man"/*.3; do
	name=$(basename "$page")
	th=$(sed -n 's/^\.TH \([^ ]*\) 3 .*/\1/p' "$page")
	[ "$th" = "$(basename "$name" .3 | tr '[:lower:]' '[:upper:]')" ] || bad "$name: .TH names '$th'"
	th_release=$(sed -n 's/^\.TH [^ ]* 3 [^ ]* "libsparse-map \([^"]*\)".*/\1/p' "$page")
	[ "$th_release" = "$release" ] || bad "$name: .TH says release '$th_release', configure.ac $release"
	is_short "$page" && continue
	for section in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"; do
		[ "$name" = sparse_map.3 ] && case $section in "RETURN VALUE" | ERRORS) continue ;; esac
		grep -q "^\.SH \"\?$section\"\?\$" "$page" || bad "$name: no $section section"
	done
	grep -q '^\.B #include <sparse_map.h>$' "$page" || bad "$name: SYNOPSIS lacks #include <sparse_map.h>"
	sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page" |
		grep -qF 'pkg-config \-\-cflags \-\-libs \%libsparse-map' || bad "$name: SYNOPSIS lacks the pkg-config line"
	for ref in lseek ioctl_fiemap fallocate; do
		sed -n '/^\.SH "\?SEE ALSO/,$p' "$page" | grep -q "^\.BR $ref (2)" ||
			bad "$name: SEE ALSO lacks $ref(2)"
	done
done
for part in MAJOR:1 MINOR:2 MICRO:3; do
	n=$(echo "$release" | cut -d. -f"${part#*:}")
	grep -q "^\.B #define SPARSE_MAP_VERSION_${part%:*}  $n\$" "$man/sparse_map.3" ||
		bad "sparse_map.3: SYNOPSIS does not give SPARSE_MAP_VERSION_${part%:*} as $n"
done
grep -qF "SPARSE_MAP_VERSION_STRING \(dq$release\(dq" "$man/sparse_map.3" ||
	bad "sparse_map.3: SYNOPSIS does not give SPARSE_MAP_VERSION_STRING as \"$release\""

# The structs a SYNOPSIS shows are the header's, member for member.
# members FILE STRUCT: each member as "type name", in order, comments and
# troff quoting left out.
members() {
	sed -n "/^\(\.B \)\{0,1\}struct $2 {/,/};/p" "$1" | sed '1d;$d' |
		sed -e 's|/\*.*\*/||g' -e 's/^\.BR\{0,1\} *//' -e 's/"//g' -e 's/;.*//' \
			-e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' -e 's/ $//' -e 's/\\-/-/g'
}
for s in sparse_map_range sparse_map_options; do
	want=$(members "$src/include/sparse_map.h" "$s")
	[ -n "$want" ] || bad "no struct $s in include/sparse_map.h"
	for page in "$man"/*.3; do
		grep -q "^\.B struct $s {" "$page" || continue
		got=$(members "$page" "$s")
		[ "$got" = "$want" ] ||
			bad "$(basename "$page"): struct $s in SYNOPSIS is not the header's:
$got
--- include/sparse_map.h:
$want"
	done
done

cd "$tree"
for page in man3/*.3; do
	if { ! out=$(mandoc -Tlint -W warning "$page" 2>&1) || [ -n "$out" ]; }; then
		bad "mandoc -Tlint $page:"
		printf '%s\n' "$out"
	fi
	if command -v groff >/dev/null 2>&1; then
		out=$(groff -man -ww -z "$page" 2>&1)
		[ -z "$out" ] || { bad "groff -man -ww $page:"; printf '%s\n' "$out"; }
	fi
done

pages=("$man"/*.3)
[ "$fail" = 0 ] && echo "PASS: ${#pages[@]} pages, $(echo "$symbols" | wc -w) public functions"
exit "$fail"
