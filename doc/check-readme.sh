#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README as a newcomer uses it: its C snippet compiles against the
# header as it is (warnings are errors), and the doc/ pages it links exist.
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
build=${top_builddir:-.}
readme=$src/README.md
fail=0
work=$(mktemp -d "${TMPDIR:-/tmp}/sm-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT

sed -n '/^```c$/,/^```$/p' "$readme" | sed '1d;$d' > "$work/snippet.c"
if [ ! -s "$work/snippet.c" ]; then
	echo "FAIL: README.md has no C snippet"
	fail=1
elif ! out=$(${CC:-cc} -Wall -Wextra -Werror -I"$src/include" -I"$build/include" \
		-c "$work/snippet.c" -o "$work/snippet.o" 2>&1); then
	printf 'FAIL: the README snippet does not compile:\n%s\n' "$out"
	fail=1
else
	echo "PASS: the README snippet compiles"
fi

for link in $(grep -o '](doc/[^)]*)' "$readme" | sed 's/^](//; s/)$//' | sort -u); do
	if [ -f "$src/$link" ]; then
		echo "PASS: README links $link"
	else
		echo "FAIL: README links $link, which is not in the sources"
		fail=1
	fi
done
exit "$fail"
