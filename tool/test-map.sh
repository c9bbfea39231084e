#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-map map: the text, JSON and bar views of make demo's file say its
# layout (64 KiB of data at 0 and at 1 MiB, holes to 4 MiB), the JSON has
# qemu-img map's fields, colour only when asked or on a terminal and never
# under NO_COLOR, and failures are one line each with the right status.
# As root, on ext4 the bar shows preallocated space and stored zeroes.
# shellcheck disable=SC2016 # jq filters name jq variables
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=../examples/test-lib.sh
. "$top_srcdir/examples/test-lib.sh"
tool=$top_builddir/tool/sparse-map

ex_scratch
demo=$EX_SCRATCH/demo.img
sh "$top_srcdir/examples/make-demo.sh" "$demo"

"$tool" --version | grep -q "^sparse-map (libsparse-map) [0-9]" || ex_fail "--version"
"$tool" --help | grep -q "^  dig " || ex_fail "--help lists no dig"
for verb in map bmap cp dig; do
	"$tool" "$verb" --help | grep -q "^Usage: sparse-map $verb" || ex_fail "$verb --help"
done

if ! ex_fs_has_holes "$EX_SCRATCH"; then
	echo "SKIP: the build tree's file system keeps no holes: the demo's layout not checked"
	exit 77
fi

# Text: four ranges, then the summary.
out=$("$tool" map "$demo")
echo "$out"
[ "$(echo "$out" | grep -cE '^ +[0-9]+ +[0-9]+  (data|hole)')" = 4 ] || ex_fail "text: not 4 ranges"
echo "$out" | grep -qE '^ +1048576 +65536  data' || ex_fail "text: no data at 1 MiB"
echo "$out" | grep -q ": 131072 bytes of data in 2 runs" || ex_fail "text: summary"

# JSON: qemu-img map's fields, tiling [0, 4 MiB).
"$tool" map --output=json "$demo" | jq -e '
	length == 4 and
	(map(.length) | add) == 4194304 and
	([.[] | select(.data)] | map([.start, .length, .offset, .zero])) ==
		[[0, 65536, 0, false], [1048576, 65536, 1048576, false]] and
	([.[] | select(.data | not)] | all(.zero and .present and .depth == 0 and .kind == "hole")) and
	(. as $r | [range(1; length)] | all($r[.].start == $r[. - 1].start + $r[. - 1].length))
' >/dev/null || ex_fail "JSON: $("$tool" map --output=json "$demo")"
# Several files: one array each, one after the other.
[ "$("$tool" map --output=json "$demo" "$demo" | jq -s 'length')" = 2 ] || ex_fail "JSON: two files"

# The bar: 64 cells of 64 KiB; data in cells 0 and 16.
want="#...............#..............................................."
bar=$("$tool" map --bar --width=64 "$demo" | sed -n 2p)
[ "$bar" = "$want" ] || ex_fail "bar: '$bar', expected '$want'"
# No colour off a terminal, always with --color=always, never under NO_COLOR.
"$tool" map --bar --width=64 "$demo" | grep -q $'\033' && ex_fail "bar: colour on a pipe"
"$tool" map --bar --width=64 --color=always "$demo" | grep -q $'\033\[32m' ||
	ex_fail "bar: --color=always has no colour"
# On a terminal (script(1) makes one): colour, unless NO_COLOR is set.
# Where script gives no output (no terminal to copy from, as under some
# CI runners), that is not checked, and said.
if command -v script >/dev/null &&
	out=$(script -qec "'$tool' map --bar --width=64 '$demo'" /dev/null </dev/null 2>&1) &&
	echo "$out" | grep -q "runs, "; then
	echo "$out" | grep -q $'\033\[32m' || ex_fail "bar: no colour on a terminal: $out"
	NO_COLOR=1 script -qec "'$tool' map --bar --width=64 '$demo'" /dev/null </dev/null |
		grep -q $'\033\[' && ex_fail "bar: colour on a terminal under NO_COLOR"
else
	echo "script(1) made no terminal here: colour on a terminal not checked"
fi
# Cells of a size the width does not divide: 100 bytes of data in 80
# cells is all '#' (each cell's bytes counted against its own width).
head -c 100 /dev/urandom >"$EX_SCRATCH/hundred"
bar=$("$tool" map --bar --width=80 "$EX_SCRATCH/hundred" | sed -n 2p)
[ "$bar" = "$(printf '#%.0s' $(seq 80))" ] || ex_fail "bar of 100 bytes in 80 cells: '$bar'"
# A 1-byte file gets a 1-cell bar; an empty one says so.
printf x >"$EX_SCRATCH/one"
[ "$("$tool" map --bar --width=64 "$EX_SCRATCH/one" | sed -n 2p)" = "#" ] || ex_fail "bar: 1 byte"
: >"$EX_SCRATCH/empty"
"$tool" map --bar "$EX_SCRATCH/empty" | grep -q ": empty$" || ex_fail "bar: empty file"

# Failures: one line, "sparse-map: FILE: what (hint)", status 1; the good
# files are still mapped.  Bad usage: status 2.
set +e
out=$("$tool" map "$EX_SCRATCH/missing" "$demo" 2>"$EX_SCRATCH/err")
rc=$?
set -e
[ "$rc" = 1 ] || ex_fail "a missing file: status $rc"
[ "$(wc -l <"$EX_SCRATCH/err")" = 1 ] || ex_fail "a missing file: $(cat "$EX_SCRATCH/err")"
grep -qE "^sparse-map: $EX_SCRATCH/missing: No such file or directory \(.+\)$" "$EX_SCRATCH/err" ||
	ex_fail "a missing file: $(cat "$EX_SCRATCH/err")"
echo "$out" | grep -q "bytes of data in 2 runs" || ex_fail "the good file after a bad one"
for args in "" "map" "frob x" "map --output=xml x" "map --backend=magic x" "map --width=0 --bar x" \
	"map --width=4294967297 --bar x" "map --frob x" "map --output" "map -q x" \
	"map --no-read --zeroes x" "bmap" "cp x" "dig"; do
	set +e
	# shellcheck disable=SC2086 # each is a list of words
	"$tool" $args >/dev/null 2>"$EX_SCRATCH/err"
	rc=$?
	set -e
	[ "$rc" = 2 ] || ex_fail "'sparse-map $args': status $rc, expected 2"
	[ "$(wc -l <"$EX_SCRATCH/err")" = 1 ] && grep -q "(try sparse-map.*--help)$" "$EX_SCRATCH/err" ||
		ex_fail "'sparse-map $args': $(cat "$EX_SCRATCH/err")"
done
[ "$("$tool" map /proc/self/status 2>&1 >/dev/null | wc -l)" = 0 ] || ex_fail "a procfs file"

# As root: on ext4, preallocated space and stored zeroes in the bar.
if sm_can_mount; then
	sm_mounts_init
	ex_traps
	if sm_mount ext4 tool-map; then
		f=$SM_DIR/flags.img
		truncate -s 4M "$f"
		fallocate -o 0 -l 1M -n "$f"
		dd if=/dev/zero of="$f" bs=1M seek=2 count=1 conv=notrunc status=none
		printf data | dd of="$f" bs=1M seek=3 conv=notrunc status=none
		out=$("$tool" map --bar --width=4 --zeroes "$f")
		bar=$(echo "$out" | sed -n 2p)
		# Only FIEMAP tells preallocated space; SCAN (a build without
		# SEEK and FIEMAP) cannot tell stored zeroes from a hole.
		case $(echo "$out" | sed -n '1s/.*, //p') in
		fiemap) want='u.z+' ;;
		seek) want='..z+' ;;
		*) want='...+' ;;
		esac
		[ "$bar" = "$want" ] || ex_fail "ext4 bar with flags: '$bar', expected '$want': $out"
		if [ "$want" != '...+' ]; then
			"$tool" map --output=json --zeroes "$f" |
				jq -e '[.[] | select(.flags == ["zeroes"])] | .[0] |
					.start == 2097152 and .length == 1048576 and .data and .zero' \
				>/dev/null || ex_fail "ext4 JSON: stored zeroes"
		fi
	else
		echo "ext4 cannot be mounted here: the flags in the bar not checked"
	fi
fi
echo "sparse-map map: text, JSON, bar and errors as documented"
