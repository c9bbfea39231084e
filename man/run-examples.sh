#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the EXAMPLES program of each man page (built by make check from the
# page itself, see man/local.mk) on the demo file of `make demo`
# (examples/make-demo.sh: 4 MiB, 64 KiB of data at 0 and 64 KiB at 1 MiB),
# and checks that it prints what the page shows.
#
# What a page shows is taken from the page, not restated here.  A display
# that follows the comment `.\" output: PROGRAM` holds command lines
# (`$ \fB./NAME ARGS\fP`, run as man/examples/PROGRAM ARGS; any other
# command word is run as itself) each followed by what it prints; an inline
# quote on the line after `.\" output line: PROGRAM ARGS` must be one whole
# line of what PROGRAM prints.  In both, /dev/shm/demo stands for the demo
# file, and the commands run in a scratch directory.  The pages show tmpfs
# with SEEK built; elsewhere the shown outputs are not compared, and the
# checks further down, which allow for the backend, still run.
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
build=${top_builddir:-.}
ex=$(cd "$build/man/examples" && pwd)

# tmpfs reports holes page by page, whatever the build directory is on.
dir=$build
on_tmpfs=no
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	dir=/dev/shm
	on_tmpfs=yes
fi
work=$(mktemp -d "$dir/sm-man-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT
demo=$work/demo
sh "$src/examples/make-demo.sh" "$demo"

unset SPARSE_MAP_BACKEND SPARSE_MAP_DEBUG
fail=0
# The examples that map with SPARSE_MAP_NO_READ find tmpfs's holes through
# SEEK; a build without it (configure --disable-seek) has only reading
# for them, which NO_READ forbids, so there every byte is data.
seek_built=yes
grep -q '^#define SM_HAVE_SEEK 1' "$build/config.h" 2>/dev/null || seek_built=no

# shown PAGE: every output the page shows, as records: `run PROGRAM`,
# `arg WORD`... then `out LINE`... for a display; `line PROGRAM`, `arg
# WORD`... then `has TEXT` for an inline quote.  Troff escapes are undone.
shown() {
	awk '
	function plain(s) {
		gsub(/\\f[BIRP]/, "", s); gsub(/\\-/, "-", s); gsub(/\\e/, "\\", s)
		gsub(/\\ /, " ", s); gsub(/\\&/, "", s)
		return s
	}
	function args(s,    w, i, n) {
		n = split(s, w, " ")
		for (i = 1; i <= n; i++) print "arg " w[i]
	}
	/^\.\\" output: / { prog = $3; want = 1; next }
	/^\.\\" output line: / { print "line " $4; $1 = $2 = $3 = $4 = ""; args($0); inline = 1; next }
	inline { inline = 0; if (match($0, /"[^"]*"/)) print "has " plain(substr($0, RSTART + 1, RLENGTH - 2)); else print "has-none " $0; next }
	want && /^\.nf/ { want = 0; disp = 1; next }
	disp && /^\.fi/ { disp = 0; next }
	disp && /^\$ / {
		cmd = plain(substr($0, 3))
		split(cmd, w, " ")
		if (w[1] ~ /^\.\//) { print "run " prog; sub(/^[^ ]+ */, "", cmd) } else print "run -"
		args(cmd)
		next
	}
	disp { print "out " plain($0) }
	' "$1"
}
# compare PAGE: run what PAGE shows and compare.
compare() {
	local page=${1##*/} kind= prog= want= line n=0
	local -a argv=()
	finish() {
		[ -n "$kind" ] || return 0
		local got what
		n=$((n + 1))
		if [ "$prog" = - ]; then what=${argv[*]}; else what="$prog ${argv[*]}"; fi
		what=${what//"$demo"//dev/shm/demo}
		if [ "$prog" = - ]; then
			got=$(cd "$work" && "${argv[@]}" 2>&1) || { echo "FAIL: $page: $what: exit status not 0: $got"; fail=1; return 0; }
		else
			got=$(cd "$work" && "$ex/$prog" "${argv[@]}" 2>&1) || { echo "FAIL: $page: $what: exit status not 0: $got"; fail=1; return 0; }
		fi
		got=${got//"$demo"//dev/shm/demo}
		if [ "$kind" = run ] && [ "$got" != "$want" ]; then
			printf 'FAIL: %s shows for %s:\n%s\n--- but it prints\n%s\n' "$page" "$what" "$want" "$got"
			fail=1
		elif [ "$kind" = line ] && ! grep -qxF -- "$want" <<<"$got"; then
			printf 'FAIL: %s says %s prints "%s"; it prints\n%s\n' "$page" "$what" "$want" "$got"
			fail=1
		else
			echo "PASS: $page shows what $what prints"
		fi
		kind=
	}
	while IFS= read -r line; do
		case $line in
		"run "* | "line "*)
			finish
			kind=${line%% *} prog=${line#* } want= argv=() ;;
		"arg "*)
			local a=${line#arg }
			[ "$a" = /dev/shm/demo ] && a=$demo
			argv+=("$a") ;;
		"out "*) want=${want:+$want$'\n'}${line#out } ;;
		"has "*) want=${line#has } ;;
		"has-none "*) echo "FAIL: $page: no quoted output after an output line comment: ${line#has-none }"; fail=1 ;;
		esac
	done < <(shown "$1")
	finish
	total_shown=$((total_shown + n))
}
total_shown=0
if [ "$on_tmpfs" = yes ] && [ "$seek_built" = yes ]; then
	for page in "$src"/man/*.3; do
		compare "$page"
	done
	# A page whose example prints something must show it.
	[ "$total_shown" -ge 8 ] || { echo "FAIL: only $total_shown shown outputs found in the pages"; fail=1; }
else
	echo "SKIP: the shown outputs are for tmpfs with SEEK built (here: tmpfs $on_tmpfs, SEEK $seek_built)"
fi
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
hole 65536 983040
data 1048576 65536
hole 1114112 3080192'
expect sparse_map "$map" "$demo"

# sparse_map(3), ADOPTING: the lseek loop with the macro, and the copier.
expect sparse_map-adopt-lseek 'data 0 65536
data 1048576 65536
size 4194304' "$demo"
if [ "$seek_built" = yes ]; then
	expect sparse_map-adopt-copy 'copied 131072 of 4194304 bytes' "$demo" "$work/copy"
else
	expect sparse_map-adopt-copy 'copied 4194304 of 4194304 bytes' "$demo" "$work/copy"
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
	*": 131072 data, 4063232 hole") echo "PASS: sparse_map_open $b: $out" ;;
	*) echo "FAIL: sparse_map_open $b: $out"; fail=1 ;;
	esac
done
# NONE knows no hole: every byte is data.
out=$("$ex/sparse_map_open" none "$demo" 2>&1) || true
if [ "$out" = "none: 4194304 data, 0 hole" ]; then
	echo "PASS: sparse_map_open none: $out"
else
	echo "FAIL: sparse_map_open none: $out"
	fail=1
fi

expect sparse_map_next 'hole 100000 948576
data 1048576 65536
hole 1114112 3080192
2 data ranges in all' "$demo" 100000
if "$ex/sparse_map_next" "$demo" 4194305 >/dev/null 2>&1; then
	echo "FAIL: sparse_map_next past the end did not fail"
	fail=1
fi

# sparse_map_next(3)'s second program punches the stored zeroes of its
# file: those touching a hole too (SPARSE_MAP_SPLIT_FLAGS), and nothing
# else.  Where the map reads the file (a build without SEEK), holes carry
# no flag and it punches nothing.
dig=$work/dig
head -c 65536 /dev/zero | tr '\0' y >"$work/chunk"
truncate -s 256K "$dig"
dd if="$work/chunk" of="$dig" conv=notrunc status=none
head -c 65536 /dev/zero | dd of="$dig" bs=64K seek=1 conv=notrunc status=none
dd if="$work/chunk" of="$dig" bs=64K seek=3 conv=notrunc status=none
cp "$dig" "$work/dig-before"
blocks_before=$(stat -c %b "$dig")
if [ "$seek_built" = yes ]; then
	expect sparse_map_next-dig-holes 'zeroes 65536 65536
65536 bytes punched' "$dig"
	if ! [ "$(stat -c %b "$dig")" -lt "$blocks_before" ]; then
		echo "FAIL: sparse_map_next-dig-holes: the file stores as much as before"
		fail=1
	fi
	expect sparse_map_next-dig-holes '0 bytes punched' "$dig"
else
	expect sparse_map_next-dig-holes '0 bytes punched' "$dig"
fi
if ! cmp -s "$dig" "$work/dig-before"; then
	echo "FAIL: sparse_map_next-dig-holes changed what the file reads"
	fail=1
fi

# One line per backend name; this system has no FSCTL_QUERY_ALLOCATED_RANGES.
out=$("$ex/sparse_map_get_backend" "$demo")
if grep -qx 'scan: scan, 4194304 bytes' <<<"$out" &&
   grep -qE '^auto: (seek|fiemap|scan), 4194304 bytes$' <<<"$out" &&
   grep -qx 'ranges: Operation not supported' <<<"$out" &&
   grep -qx 'none: none, 4194304 bytes' <<<"$out" &&
   [ "$(wc -l <<<"$out")" = 6 ]; then
	echo "PASS: sparse_map_get_backend"
else
	printf 'FAIL: sparse_map_get_backend:\n%s\n' "$out"
	fail=1
fi

expect sparse_map_lseek 'data 0 65536
data 1048576 65536' "$demo"

# The archiver's list ends at its own size, and SPARSE_MAP_NO_ENV keeps the
# environment out: no debug line, and no scan where SEEK answers.
list='size 4194304
data 0 65536
data 1048576 65536'
[ "$seek_built" = yes ] || list='size 4194304
data 0 4194304'
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

# sparse_map(3)'s checksum hashes the holes without reading them, and must
# agree with cksum(1) whatever the backend, on a file that ends in data too.
head -c 70000 /dev/urandom > "$work/tail"
cp "$demo" "$work/mixed"
dd if="$work/tail" of="$work/mixed" bs=1 seek=4194304 conv=notrunc status=none
for f in "$demo" "$work/mixed"; do
	got=$("$ex/sparse_map-checksum" "$f" 2>&1) || true
	want=$(cksum "$f")
	if [ "$got" = "$want" ]; then
		echo "PASS: sparse_map-checksum ${f##*/}: $got"
	else
		printf 'FAIL: sparse_map-checksum %s: it prints\n%s\n--- cksum prints\n%s\n' "${f##*/}" "$got" "$want"
		fail=1
	fi
done

exit "$fail"
