#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-cp: for every layout of tests/helpers.c and every backend that can
# map the file system, the copy holds the same bytes as the source (cmp,
# and a hole-skipping compare for the 16 GiB layout) and takes no more
# blocks.  --zeroes turns written zero blocks into holes; without it they
# stay data.  A failed copy exits 1 with one line and leaves DST alone.
# As root: on tmpfs, on a loop-mounted ext4, and from tmpfs to ext4 (where
# copy_file_range gives way to pread/pwrite); otherwise in the build tree.
# shellcheck disable=SC2016 # jq filters name jq variables
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=test-lib.sh
. "$top_srcdir/examples/test-lib.sh"

# copy_check SRCDIR DSTDIR LAYOUT BACKEND: a fresh source (its writes not
# yet synced), copied, then compared.  Across file systems the copy's
# blocks are held against the same layout written on its own file system
# (ext4 counts extent tree blocks, tmpfs has none).
copy_check() {
	local sdir=$1 ddir=$2 layout=$3 backend=$4 src dst ref sb db
	src=$sdir/src
	dst=$ddir/dst
	ref=$src
	if [ "$backend" = scan ] && [ "$layout" = past-4g ]; then
		return 0	# scan reads all 16 GiB: 40 s on ext4, for nothing sparse-cp does
	fi
	"$ex_tool" make "$layout" "$src"
	"$ex_cp" --backend="$backend" "$src" "$dst" ||
		ex_fail "$layout/$backend: sparse-cp $src $dst failed"
	"$ex_tool" same "$src" "$dst" || ex_fail "$layout/$backend: the copy differs"
	if [ "$(stat -c %s "$src")" -le $((1 << 30)) ]; then
		cmp "$src" "$dst" || ex_fail "$layout/$backend: cmp says the copy differs"
	fi
	if [ "$sdir" != "$ddir" ]; then
		ref=$ddir/ref
		"$ex_tool" make "$layout" "$ref"
	fi
	sync "$ref" "$dst"
	sb=$(stat -c %b "$ref")
	db=$(stat -c %b "$dst")
	[ "$db" -le "$sb" ] || ex_fail "$layout/$backend: the copy takes $db blocks, the source $sb"
	rm -f "$src" "$dst" "$ref"
}

# The byte range [a, b) of FILE is a range of KIND in sparse-ls --json, or
# the backend is scan (which calls any zero block a hole).
map_has() {
	local file=$1 kind=$2 a=$3 b=$4
	"$ex_ls" --json "$file" | jq -e --arg k "$kind" --argjson a "$a" --argjson b "$b" \
		'.files[0] | .backend == "scan" or any(.ranges[]; .kind == $k and .offset <= $a and .offset + .length >= $b)' \
		>/dev/null
}

# --zeroes: written-zeroes is data [0,2b), zeroes [2b,10b), data [10b,11b).
zeroes_check() {
	local dir=$1 holes=$2 blk sb db
	"$ex_tool" make written-zeroes "$dir/src"
	blk=$(stat -c %o "$dir/src")
	"$ex_cp" "$dir/src" "$dir/dst"
	"$ex_cp" --zeroes "$dir/src" "$dir/dst-z"
	cmp "$dir/src" "$dir/dst" || ex_fail "--zeroes: the plain copy differs"
	cmp "$dir/src" "$dir/dst-z" || ex_fail "--zeroes: the copy differs"
	map_has "$dir/dst" data 0 $((11 * blk)) || ex_fail "without --zeroes, written zeroes did not stay data"
	if [ "$holes" = yes ]; then
		sync "$dir/src" "$dir/dst-z"
		sb=$(stat -c %b "$dir/src")
		db=$(stat -c %b "$dir/dst-z")
		[ "$db" -lt "$sb" ] || ex_fail "--zeroes: the copy takes $db blocks, the source $sb"
		map_has "$dir/dst-z" hole $((2 * blk)) $((10 * blk)) ||
			ex_fail "--zeroes: no hole where zeroes were written: $("$ex_ls" "$dir/dst-z")"
	fi
	rm -f "$dir/src" "$dir/dst" "$dir/dst-z"
}

# Failures: one line, exit 1, DST untouched, no scratch file left beside it.
errors_check() {
	local dir=$1 rc
	echo old >"$dir/dst"
	mkfifo "$dir/fifo"
	mkdir "$dir/dir"
	for src in "$dir/missing" "$dir/fifo" "$dir/dir"; do
		rc=0
		"$ex_cp" "$src" "$dir/dst" 2>"$dir/err" || rc=$?
		[ "$rc" = 1 ] || ex_fail "sparse-cp $src: exit status $rc, expected 1"
		if [ "$(wc -l <"$dir/err")" != 1 ] || ! grep -q "^sparse-cp: .*$src" "$dir/err"; then
			ex_fail "sparse-cp $src: expected one line naming it, got: $(cat "$dir/err")"
		fi
		[ "$(cat "$dir/dst")" = old ] || ex_fail "sparse-cp $src: a failed copy changed DST"
	done
	rc=0
	"$ex_cp" "$dir/dst" "$dir/no/such/dir/dst" 2>"$dir/err" || rc=$?
	[ "$rc" = 1 ] || ex_fail "sparse-cp into a missing directory: exit status $rc"
	if compgen -G "$dir/*.sparse-cp-*" >/dev/null; then
		ex_fail "a failed copy left its scratch file: $(ls "$dir")"
	fi
	# The mode comes along.
	chmod 0640 "$dir/dst"
	"$ex_cp" "$dir/dst" "$dir/dst2"
	[ "$(stat -c %a "$dir/dst2")" = 640 ] || ex_fail "mode 0640 became $(stat -c %a "$dir/dst2")"
	rc=0; "$ex_cp" --backend=nonesuch "$dir/dst" "$dir/dst2" 2>/dev/null || rc=$?
	[ "$rc" = 2 ] || ex_fail "--backend=nonesuch: exit status $rc, expected 2"
	rc=0; "$ex_cp" "$dir/dst" 2>/dev/null || rc=$?
	[ "$rc" = 2 ] || ex_fail "one argument: exit status $rc, expected 2"
	"$ex_cp" --help | grep -q '^Usage: sparse-cp' || ex_fail "--help"
	rm -rf "$dir/dst" "$dir/dst2" "$dir/fifo" "$dir/dir" "$dir/err"
}

# --backend=none: no hole information, so the copy has every byte, as data.
none_check() {
	local dir=$1
	truncate -s 3M "$dir/src"
	ex_mkdata "$dir/src" 1 1
	"$ex_cp" --backend=none "$dir/src" "$dir/dst" || ex_fail "sparse-cp --backend=none failed"
	cmp "$dir/src" "$dir/dst" || ex_fail "sparse-cp --backend=none: the copy differs"
	rm -f "$dir/src" "$dir/dst"
}

# Files whose reads end before the size fstat gives (sysfs: 4096, and a
# few bytes): the copy holds what cat reads, no more, no zeroes after.
# Those of the list that exist here and read less than their size.
short_read_check() {
	local dir=$1 f n=0
	for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/devices/system/cpu/online \
		/sys/power/state /sys/kernel/address_bits /sys/kernel/cpu_byteorder /sys/class/firmware/timeout; do
		[ -r "$f" ] || continue
		cat "$f" >"$dir/cat" 2>/dev/null || continue
		if [ "$(stat -c %s "$f")" -le "$(stat -c %s "$dir/cat")" ]; then
			continue
		fi
		"$ex_cp" "$f" "$dir/copy" || ex_fail "sparse-cp $f failed"
		cmp -s "$dir/cat" "$dir/copy" ||
			ex_fail "sparse-cp $f: expected what cat reads ($(stat -c %s "$dir/cat") bytes), got $(stat -c %s "$dir/copy") bytes that differ"
		n=$((n + 1))
	done
	rm -f "$dir/cat" "$dir/copy"
	echo "ok: $n files that read less than their size copied as cat reads them"
}

# run_all SRCDIR DSTDIR BACKENDS... : every layout with every backend.
run_all() {
	local sdir=$1 ddir=$2 layout backend
	local -a usable=()
	shift 2
	# A build without a backend (configure --disable-seek/--disable-fiemap)
	# refuses it with EOPNOTSUPP: copy with the others.
	: >"$sdir/probe"
	for backend in "$@"; do
		if "$ex_ls" --backend="$backend" "$sdir/probe" >/dev/null 2>&1; then
			usable+=("$backend")
		else
			echo "skip: backend $backend is not available here"
		fi
	done
	rm -f "$sdir/probe"
	for layout in $("$ex_tool" names); do
		for backend in "${usable[@]}"; do
			copy_check "$sdir" "$ddir" "$layout" "$backend"
		done
	done
	echo "ok: $(stat -f -c %T "$sdir") to $(stat -f -c %T "$ddir"), backends: ${usable[*]}"
}

if sm_can_mount; then
	sm_mounts_init
	ex_traps
	sm_mount tmpfs || ex_fail "cannot mount tmpfs"
	tmp=$SM_DIR
	sm_mount ext4 || ex_fail "cannot mount ext4"
	ext=$SM_DIR
	run_all "$tmp" "$tmp" auto seek scan
	run_all "$ext" "$ext" auto seek fiemap scan
	run_all "$tmp" "$ext" auto
	zeroes_check "$tmp" yes
	zeroes_check "$ext" yes
	none_check "$ext"
	errors_check "$ext"
	short_read_check "$ext"
else
	echo "not root: tmpfs and ext4 left out; copying in the build tree"
	ex_scratch
	run_all "$EX_SCRATCH" "$EX_SCRATCH" auto scan
	holes=no
	ex_fs_has_holes "$EX_SCRATCH" && holes=yes
	zeroes_check "$EX_SCRATCH" "$holes"
	none_check "$EX_SCRATCH"
	errors_check "$EX_SCRATCH"
	short_read_check "$EX_SCRATCH"
fi
echo "PASS: sparse-cp"
