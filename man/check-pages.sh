#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages as a reader meets them:
#  - every public function (lib/libsparse-map.sym) answers to `man 3 NAME`:
#    a page of its own, or a link page `.so man3/PAGE.3` to a page whose
#    NAME line lists it;
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

# Link pages are resolved from the root of a man tree, as man(1) does it.
tree=$(mktemp -d "${TMPDIR:-/tmp}/sm-man.XXXXXX")
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/man3"
cp "$man"/*.3 "$tree/man3/"

is_link() { grep -q '^\.so ' "$1"; }

symbols=$(sed -n 's/^[[:space:]]*\(sparse_map_[a-z_]*\);.*/\1/p' "$src/lib/libsparse-map.sym")
[ -n "$symbols" ] || bad "no symbols found in lib/libsparse-map.sym"
for sym in $symbols; do
	page=$man/$sym.3
	if [ ! -f "$page" ]; then
		bad "$sym: no page man/$sym.3"
		continue
	fi
	if is_link "$page"; then
		target=$(sed -n 's|^\.so man3/\(.*\)\.3$|\1|p' "$page")
		if [ "$(wc -l < "$page")" -ne 1 ] || [ -z "$target" ]; then
			bad "$sym.3: a link page is one line, .so man3/PAGE.3"
		elif [ ! -f "$man/$target.3" ] || is_link "$man/$target.3"; then
			bad "$sym.3: links to $target.3, which is not a full page"
		elif ! sed -n '/^\.SH NAME/,/^\.SH/p' "$man/$target.3" | grep -qw "$sym"; then
			bad "$sym.3: $target.3 does not list $sym in its NAME section"
		fi
	fi
done

for page in "$man"/*.3; do
	name=$(basename "$page")
	is_link "$page" && continue
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
	th=$(sed -n 's/^\.TH \([^ ]*\) 3 .*/\1/p' "$page")
	[ "$th" = "$(basename "$name" .3 | tr '[:lower:]' '[:upper:]')" ] || bad "$name: .TH names '$th'"
	th_release=$(sed -n 's/^\.TH [^ ]* 3 [^ ]* "libsparse-map \([^"]*\)".*/\1/p' "$page")
	[ "$th_release" = "$release" ] || bad "$name: .TH says release '$th_release', configure.ac $release"
done
for part in MAJOR:1 MINOR:2 MICRO:3; do
	n=$(echo "$release" | cut -d. -f"${part#*:}")
	grep -q "^\.B #define SPARSE_MAP_VERSION_${part%:*}  $n\$" "$man/sparse_map.3" ||
		bad "sparse_map.3: SYNOPSIS does not give SPARSE_MAP_VERSION_${part%:*} as $n"
done
grep -qF "SPARSE_MAP_VERSION_STRING \(dq$release\(dq" "$man/sparse_map.3" ||
	bad "sparse_map.3: SYNOPSIS does not give SPARSE_MAP_VERSION_STRING as \"$release\""

# mandoc calls every .so fragile; the link pages were checked above, and
# their targets are linted as pages of their own.
cd "$tree"
for page in man3/*.3; do
	if ! is_link "$page" && { ! out=$(mandoc -Tlint -W warning "$page" 2>&1) || [ -n "$out" ]; }; then
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
