#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every page renders as a reader of the source tree renders it, `man -l
# PAGE` from some other directory, at 80 columns, without a warning; with
# groff installed, also `groff -man -Tutf8 -ww`, which turns on every
# warning.  (check-pages.sh lints the pages from the root of a man tree;
# this catches what only breaks outside one, such as a .so request, and
# what only shows once lines are filled and adjusted.)
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
have_man=no have_groff=no
command -v man >/dev/null 2>&1 && have_man=yes
command -v groff >/dev/null 2>&1 && have_groff=yes
if [ "$have_man" = no ] && [ "$have_groff" = no ]; then
	echo "SKIP: neither man(1) nor groff(1) is installed"
	exit 77
fi

elsewhere=$(mktemp -d "${TMPDIR:-/tmp}/sm-man-render.XXXXXX")
trap 'rm -rf "$elsewhere"' EXIT
cd "$elsewhere"
fail=0
n=0
for page in "$src"/man/*.3 "$src"/man/*.1; do
	name=${page##*/}
	n=$((n + 1))
	if [ "$have_man" = yes ]; then
		# --warnings=w: all of groff's warnings, as -ww gives them.
		if ! out=$(MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings=w -P cat -l "$page" 2>&1 >"$elsewhere/out") ||
		   [ -n "$out" ] || ! grep -q '^NAME' "$elsewhere/out"; then
			printf 'FAIL: man -l %s (from %s):\n%s\n' "$name" "$elsewhere" "$out"
			fail=1
			continue
		fi
	fi
	if [ "$have_groff" = yes ]; then
		if ! out=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || [ -n "$out" ]; then
			printf 'FAIL: groff -man -Tutf8 -ww %s:\n%s\n' "$name" "$out"
			fail=1
			continue
		fi
	fi
	echo "PASS: $name"
done
[ "$n" -gt 0 ] || { echo "FAIL: no pages in $src/man"; exit 1; }
exit "$fail"
