#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-cp while another process appends to the source: every copy must be
# a state the source had.  The writer only appends non-zero bytes, so each
# copy must be at least the size the source started with and equal the
# source's first bytes up to its own size; a byte of data copied as a zero
# (a hole invented past the map, a short read taken for a hole) fails cmp.
# Runs with the default backend, with scan (which reads as it maps) and
# with --zeroes; as root on tmpfs and ext4, otherwise in the build tree.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=test-lib.sh
. "$top_srcdir/examples/test-lib.sh"

COPIES=45
GROW=$((48 << 20))	# the writer stops after this many bytes

race() {
	local dir=$1 src=$1/src dst=$1/dst start size i opts sizes=()
	"$ex_tool" make hole-data-hole-data "$src"
	start=$(stat -c %s "$src")
	"$ex_tool" append "$src" $((start + GROW)) &
	EX_PIDS+=($!)
	for ((i = 0; i < COPIES; i++)); do
		case $((i % 3)) in
		0) opts=() ;;
		1) opts=(--backend=scan) ;;
		2) opts=(--zeroes) ;;
		esac
		"$ex_cp" "${opts[@]}" "$src" "$dst" || ex_fail "sparse-cp ${opts[*]} failed on a growing file"
		size=$(stat -c %s "$dst")
		[ "$size" -ge "$start" ] || ex_fail "the copy has $size bytes, the source started with $start"
		# Bytes below $size never change again: the writer only appends.
		cmp -n "$size" "$dst" "$src" || ex_fail "copy ${opts[*]} of $size bytes is not the source's first $size bytes"
		sizes+=("$size")
	done
	kill "${EX_PIDS[-1]}" 2>/dev/null || true
	wait "${EX_PIDS[-1]}" 2>/dev/null || true
	unset 'EX_PIDS[-1]'
	# Not a check (no timing assertions): how much racing there was.
	echo "$(stat -f -c %T "$dir"): $COPIES copies, $(printf '%s\n' "${sizes[@]}" | sort -u | wc -l) different sizes, from $start to $(stat -c %s "$src") bytes"
	rm -f "$src" "$dst"
}

if sm_can_mount; then
	sm_mounts_init
	ex_traps
	sm_mount tmpfs || ex_fail "cannot mount tmpfs"
	race "$SM_DIR"
	sm_mount ext4 || ex_fail "cannot mount ext4"
	race "$SM_DIR"
else
	ex_scratch
	race "$EX_SCRATCH"
fi
echo "PASS: sparse-cp on a growing source"
