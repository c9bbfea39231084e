#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-map cp: for the layouts of tests/helpers.c, the copy holds the
# source's bytes (cmp) and takes no more blocks than the source written on
# the copy's own file system; procfs files copy as cat reads them; a copy
# into a directory takes SRC's name; a failed copy leaves nothing behind.
# As root on ext4, XFS, Btrfs, tmpfs, ramfs (the source's st_blocks stay as
# they were: cp would fill its holes) and FUSE without lseek, and from
# tmpfs to ext4 (copy_file_range gives way to pread/pwrite).
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=../examples/test-lib.sh
. "$top_srcdir/examples/test-lib.sh"
tool=$top_builddir/tool/sparse-map
fuse=$top_builddir/tests/matrix/fuse-nolseek
layouts="one-byte block+1 hole-data data-hole hole-data-hole-data fragmented prealloc-keep-size
	punched written-zeroes"

# blocks FILE: its allocated 512-byte blocks.  On XFS the data fork's, as
# xfs_bmap counts them: st_blocks there also counts the copy-on-write
# reservation XFS makes for blocks a copy shares with its source, until
# the inode leaves memory (a remount shows the same file 4 KiB smaller).
blocks() {
	if [ "$(stat -f -c %T "$1")" = xfs ] && command -v xfs_bmap >/dev/null; then
		xfs_bmap -l "$1" | awk 'NR > 1 && $3 != "hole" { n += $(NF - 1) } END { print n + 0 }'
	else
		stat -c %b "$1"
	fi
}

# copy_check SRCDIR DSTDIR LAYOUT
copy_check() {
	local sdir=$1 ddir=$2 layout=$3 src dst ref sb0 sb1 db rb
	src=$sdir/src-$layout
	dst=$ddir/dst-$layout
	"$ex_tool" make "$layout" "$src"
	sb0=$(stat -c %b "$src")
	"$tool" cp --no-progress "$src" "$dst" || ex_fail "$sdir: $layout: sparse-map cp failed"
	# Blocks before cmp, which reads the holes (on ramfs that adds pages).
	# Where writeback runs (not on tmpfs and ramfs), it may add extent
	# blocks to the unsynced source at any moment: not a change cp made.
	sb1=$(stat -c %b "$src")
	case $(stat -f -c %T "$src") in
	tmpfs | ramfs)
		[ "$sb1" = "$sb0" ] || ex_fail "$sdir: $layout: the source went from $sb0 to $sb1 blocks" ;;
	esac
	ref=$ddir/ref-$layout
	"$ex_tool" make "$layout" "$ref"
	sync "$ref" "$dst" 2>/dev/null || true
	rb=$(blocks "$ref")
	db=$(blocks "$dst")
	[ "$db" -le "$rb" ] || ex_fail "$ddir: $layout: the copy takes $db blocks, the layout $rb"
	cmp "$src" "$dst" || ex_fail "$sdir -> $ddir: $layout: the copy differs"
	rm -f "$src" "$dst" "$ref"
}

copy_all() {
	local layout
	for layout in $layouts; do copy_check "$1" "$2" "$layout"; done
	echo "$1 -> $2: $(echo $layouts | wc -w) layouts copied"
}

ex_scratch
# procfs: what cat reads (st_size 0; the map is empty).
for f in /proc/version /proc/filesystems /proc/sys/kernel/ostype /proc/sys/kernel/osrelease; do
	[ -r "$f" ] || continue
	"$tool" cp --no-progress "$f" "$EX_SCRATCH/proc"
	cat "$f" >"$EX_SCRATCH/cat"
	[ -s "$EX_SCRATCH/cat" ] || ex_fail "$f: cat reads nothing"
	cmp "$EX_SCRATCH/proc" "$EX_SCRATCH/cat" || ex_fail "$f: the copy differs from cat's"
done
# Into a directory, under SRC's name; two SRCs need a directory.
mkdir "$EX_SCRATCH/into"
printf abc >"$EX_SCRATCH/named"
"$tool" cp --no-progress "$EX_SCRATCH/named" "$EX_SCRATCH/into"
cmp "$EX_SCRATCH/named" "$EX_SCRATCH/into/named" || ex_fail "a copy into a directory"
set +e
"$tool" cp "$EX_SCRATCH/named" "$EX_SCRATCH/named" "$EX_SCRATCH/not-a-dir" 2>/dev/null
rc=$?
"$tool" cp "$EX_SCRATCH/named" "$EX_SCRATCH/named" 2>"$EX_SCRATCH/err"
rc2=$?
"$tool" cp "$EX_SCRATCH/missing" "$EX_SCRATCH/dst" 2>/dev/null
rc3=$?
set -e
[ "$rc" = 2 ] || ex_fail "two SRCs and no directory: status $rc"
[ "$rc2" = 1 ] && grep -q "is the same file" "$EX_SCRATCH/err" || ex_fail "a copy onto itself"
[ "$(cat "$EX_SCRATCH/named")" = abc ] || ex_fail "a copy onto itself changed it"
[ "$rc3" = 1 ] && [ ! -e "$EX_SCRATCH/dst" ] || ex_fail "a missing SRC: status $rc3, or DST made"
[ -z "$(find "$EX_SCRATCH" -name '*.sparse-map-*')" ] || ex_fail "a temporary file left behind"
# --progress draws on stderr even off a terminal; --no-progress never.
"$ex_tool" make hole-data "$EX_SCRATCH/p"
"$tool" cp --progress "$EX_SCRATCH/p" "$EX_SCRATCH/p2" 2>&1 | grep -q "100%" || ex_fail "--progress"
[ -z "$("$tool" cp --no-progress "$EX_SCRATCH/p" "$EX_SCRATCH/p3" 2>&1)" ] || ex_fail "--no-progress"

if ! sm_can_mount; then
	copy_all "$EX_SCRATCH" "$EX_SCRATCH"
	exit 0
fi
sm_mounts_init
ex_traps
ext4=
for fs in ext4 xfs btrfs tmpfs ramfs; do
	if ! sm_mount "$fs" "cp-$fs"; then
		[ "$fs" = ramfs ] || [ "$fs" = tmpfs ] && ex_fail "$fs cannot be mounted"
		echo "$fs cannot be mounted here: not tested"
		continue
	fi
	[ "$fs" = ext4 ] && ext4=$SM_DIR
	[ "$fs" = tmpfs ] && tmp=$SM_DIR
	copy_all "$SM_DIR" "$SM_DIR"
done
[ -n "$ext4" ] && copy_all "$tmp" "$ext4"
if [ -x "$fuse" ] && [ -c /dev/fuse ] && sm_mount tmpfs cp-fuse-back &&
	sm_mount_fuse "$fuse" "$SM_DIR" cp-fuse; then
	copy_all "$SM_DIR" "$tmp"
else
	echo "FUSE without lseek: cannot be mounted here: not tested"
fi
echo "sparse-map cp: every copy identical, no copy larger than its layout"
