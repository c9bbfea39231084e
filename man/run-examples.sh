#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the EXAMPLES program of each man page (built by make check from the
# page itself, see man/local.mk) on the demo file the pages describe, and
# checks it prints what the page says: 3 MiB with 64 KiB of data at 0 and
# 64 KiB at 2 MiB.
set -euo pipefail

build=${top_builddir:-.}
ex=$build/man/examples

# tmpfs reports holes page by page, whatever the build directory is on.
dir=$build
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	dir=/dev/shm
fi
work=$(mktemp -d "$dir/sm-man-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
demo=$work/demo
head -c 65536 /dev/zero | tr '\0' y > "$work/chunk"
truncate -s 3M "$demo"
dd if="$work/chunk" of="$demo" conv=notrunc status=none
dd if="$work/chunk" of="$demo" bs=1M seek=2 conv=notrunc status=none

unset SPARSE_MAP_BACKEND SPARSE_MAP_DEBUG
fail=0
# The examples that map with SPARSE_MAP_NO_READ find tmpfs's holes through
# SEEK; a build without it (configure --disable-seek) has only reading
# for them, which NO_READ forbids, so there every byte is data.
seek_built=yes
grep -q '^#define SM_HAVE_SEEK 1' "$build/config.h" 2>/dev/null || seek_built=no
# expect NAME EXPECTED ARGS...: the program's output (less lines starting
# with #, which name the backend) must be EXPECTED, and its status 0.
expect() {
	local name=$1 want=$2 got
	shift 2
	if ! got=$("$ex/$name" "$@" 2>"$work/stderr" | grep -v '^#'); then
		echo "FAIL: $name $*: exit status not 0: $(cat "$work/stderr")"
		fail=1
	elif [ "$got" != "$want" ]; then
		printf 'FAIL: %s %s:\n--- expected\n%s\n--- got\n%s\n' "$name" "$*" "$want" "$got"
		fail=1
	else
		echo "PASS: $name $*"
	fi
}

map='data 0 65536
hole 65536 2031616
data 2097152 65536
hole 2162688 983040'
expect sparse_map "$map" "$demo"

# sparse_map(3), ADOPTING: the lseek loop with the macro, and the copier.
expect sparse_map-adopt-lseek 'data 0 65536
data 2097152 65536
size 3145728' "$demo"
if [ "$seek_built" = yes ]; then
	expect sparse_map-adopt-copy 'copied 131072 of 3145728 bytes' "$demo" "$work/copy"
else
	expect sparse_map-adopt-copy 'copied 3145728 of 3145728 bytes' "$demo" "$work/copy"
fi
if ! cmp -s "$demo" "$work/copy"; then
	echo "FAIL: sparse_map-adopt-copy: the copy differs"
	fail=1
elif [ "$seek_built" = yes ] && [ "$(stat -c %b "$work/copy")" -gt "$(stat -c %b "$demo")" ]; then
	echo "FAIL: sparse_map-adopt-copy: the copy takes more blocks than its source"
	fail=1
fi

for b in auto seek fiemap scan ranges; do
	out=$("$ex/sparse_map_open" "$b" "$demo" 2>/dev/null) || { echo "FAIL: sparse_map_open $b"; fail=1; continue; }
	case $out in
	*": 131072 data, 3014656 hole") echo "PASS: sparse_map_open $b: $out" ;;
	*) echo "FAIL: sparse_map_open $b: $out"; fail=1 ;;
	esac
done
# NONE knows no hole: every byte is data.
out=$("$ex/sparse_map_open" none "$demo" 2>&1) || true
if [ "$out" = "none: 3145728 data, 0 hole" ]; then
	echo "PASS: sparse_map_open none: $out"
else
	echo "FAIL: sparse_map_open none: $out"
	fail=1
fi

expect sparse_map_next 'hole 100000 1997152
data 2097152 65536
hole 2162688 983040
2 data ranges in all' "$demo" 100000
if "$ex/sparse_map_next" "$demo" 3145729 >/dev/null 2>&1; then
	echo "FAIL: sparse_map_next past the end did not fail"
	fail=1
fi

# One line per backend name; this system has no FSCTL_QUERY_ALLOCATED_RANGES.
out=$("$ex/sparse_map_get_backend" "$demo")
if grep -qx 'scan: scan, 3145728 bytes' <<<"$out" &&
   grep -qE '^auto: (seek|fiemap|scan), 3145728 bytes$' <<<"$out" &&
   grep -qx 'ranges: Operation not supported' <<<"$out" &&
   grep -qx 'none: none, 3145728 bytes' <<<"$out" &&
   [ "$(wc -l <<<"$out")" = 6 ]; then
	echo "PASS: sparse_map_get_backend"
else
	printf 'FAIL: sparse_map_get_backend:\n%s\n' "$out"
	fail=1
fi

expect sparse_map_lseek 'data 0 65536
data 2097152 65536' "$demo"

# The archiver's list ends at its own size, and SPARSE_MAP_NO_ENV keeps the
# environment out: no debug line, and no scan where SEEK answers.
list='size 3145728
data 0 65536
data 2097152 65536'
[ "$seek_built" = yes ] || list='size 3145728
data 0 3145728'
expect sparse_map_open_with "$list" "$demo"
if ! out=$(SPARSE_MAP_BACKEND=scan SPARSE_MAP_DEBUG=1 "$ex/sparse_map_open_with" "$demo" 2>&1); then
	echo "FAIL: sparse_map_open_with with SPARSE_MAP_BACKEND=scan: $out"
	fail=1
elif grep -q -e '^sparse_map:' -e 'backend scan' <<<"$out"; then
	printf 'FAIL: sparse_map_open_with read the environment:\n%s\n' "$out"
	fail=1
else
	echo "PASS: sparse_map_open_with ignores SPARSE_MAP_BACKEND and SPARSE_MAP_DEBUG"
fi

exit "$fail"
