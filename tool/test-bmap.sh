#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-map bmap: Debian's bmaptool (bmap-tools) does the verifying.  For
# an image written and not synced, on ext4, XFS, Btrfs, tmpfs, ramfs and a
# FUSE file system without lseek: `bmaptool copy --bmap` of the image with
# our bmap succeeds (it checks the bmap's own checksum and every range's),
# the copy is byte-identical and takes no more blocks than the image's
# data; the image's st_blocks are as they were (on ramfs, reading a hole
# would have added pages).  After a byte of data changes, bmaptool copy
# rejects the old bmap.  On ramfs bmaptool create itself refuses the image
# (SEEK is the kernel's stub there); that is checked too, as the reason
# this verb exists.
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=../examples/test-lib.sh
. "$top_srcdir/examples/test-lib.sh"
tool=$top_builddir/tool/sparse-map
fuse=$top_builddir/tests/matrix/fuse-nolseek

if ! command -v bmaptool >/dev/null; then
	[ -n "${CI:-}" ] && ex_fail "no bmaptool in CI (.ci/packages installs bmap-tools)"
	echo "SKIP: no bmaptool here (Debian: apt-get install bmap-tools)"
	exit 77
fi

# image FILE: 8 MiB; 1 byte at 0, 64 KiB at 1 MiB, 5000 bytes across the
# block boundary at 3 MiB - 100, 3 bytes ending the file.  Not synced.
image() {
	truncate -s 8M "$1"
	printf 'x' | dd of="$1" conv=notrunc status=none
	head -c 65536 /dev/urandom | dd of="$1" bs=1M seek=1 conv=notrunc status=none
	head -c 5000 /dev/urandom | dd of="$1" bs=1 seek=$((3 * 1048576 - 100)) conv=notrunc status=none
	printf 'end' | dd of="$1" bs=1 seek=$((8 * 1048576 - 3)) conv=notrunc status=none
}

# bmap_check DIR TARGETDIR NAME
bmap_check() {
	local dir=$1 tdir=$2 name=$3 img=$1/image.img bm=$1/image.bmap dst=$2/copy.img b0 b1 db
	image "$img"
	b0=$(stat -c %b "$img")
	"$tool" bmap "$img" -o "$bm" || ex_fail "$name: sparse-map bmap failed"
	b1=$(stat -c %b "$img")
	[ "$b1" = "$b0" ] || ex_fail "$name: the image went from $b0 to $b1 blocks"
	grep -q "<MappedBlocksCount> [1-9][0-9]* </MappedBlocksCount>" "$bm" || ex_fail "$name: no mapped blocks"
	rm -f "$dst"
	bmaptool copy --bmap "$bm" "$img" "$dst" 2>"$dir/log" ||
		ex_fail "$name: bmaptool copy refused our bmap: $(cat "$dir/log")"
	cmp "$img" "$dst" || ex_fail "$name: bmaptool's copy differs"
	sync "$dst"
	db=$(stat -c %b "$dst")
	# 1 + 16 + 2 + 1 blocks of 4 KiB hold the data: 160 sectors, and some
	# slack for the target's metadata.
	[ "$db" -le 256 ] || ex_fail "$name: bmaptool's copy takes $db blocks of 512, not as sparse"
	# Changed data: bmaptool must reject the old bmap.  Eight bytes, not
	# one, which the random data already holds once in 256 images.
	printf 'CHANGED!' | dd of="$img" bs=1 seek=$((1048576 + 10)) conv=notrunc status=none
	rm -f "$dst"
	if bmaptool copy --bmap "$bm" "$img" "$dst" 2>"$dir/log"; then
		ex_fail "$name: bmaptool copied an image that no longer matches the bmap"
	fi
	grep -qi "checksum mismatch" "$dir/log" || ex_fail "$name: bmaptool said: $(cat "$dir/log")"
	echo "$name: bmaptool copy verified our bmap, and rejected it after a byte changed"
	rm -f "$img" "$bm" "$dst" "$dir/log"
}

ex_scratch
# A bmap of make demo's file and the same file read back: bmaptool's own
# parse of the header (blocks, mapped count) agrees with what we wrote.
sh "$top_srcdir/examples/make-demo.sh" "$EX_SCRATCH/demo.img"
"$tool" bmap "$EX_SCRATCH/demo.img" >"$EX_SCRATCH/demo.bmap"
grep -q "<BlocksCount> 1024 </BlocksCount>" "$EX_SCRATCH/demo.bmap" || ex_fail "demo: BlocksCount"
if ex_fs_has_holes "$EX_SCRATCH"; then
	grep -q "<MappedBlocksCount> 32 </MappedBlocksCount>" "$EX_SCRATCH/demo.bmap" ||
		ex_fail "demo: MappedBlocksCount"
fi
if ! sm_can_mount; then
	bmap_check "$EX_SCRATCH" "$EX_SCRATCH" "build tree"
	exit 0
fi
sm_mounts_init
ex_traps
sm_mount tmpfs bmap-target || ex_fail "tmpfs cannot be mounted"
target=$SM_DIR
for fs in ext4 xfs btrfs tmpfs ramfs; do
	if ! sm_mount "$fs" "bmap-$fs"; then
		[ "$fs" = ramfs ] && ex_fail "ramfs cannot be mounted"
		echo "$fs cannot be mounted here: not tested"
		continue
	fi
	bmap_check "$SM_DIR" "$target" "$fs"
	if [ "$fs" = tmpfs ]; then
		# The largest file: 2^63 - 1 bytes, "end" in its last bytes.
		# Its block count does not overflow, and the last range is cut
		# at the size (the library calls the last 2 MiB folio data).
		f=$SM_DIR/huge.img
		truncate -s 9223372036854775807 "$f"
		printf 'end' | dd of="$f" bs=1 seek=9223372036854775804 conv=notrunc status=none
		if "$tool" map --no-read "$f" | head -1 | grep -q "backend none$"; then
			echo "tmpfs: this build maps tmpfs only by reading: no 2^63 - 1 byte image"
			rm -f "$f"
			continue
		fi
		"$tool" bmap "$f" -o "$SM_DIR/huge.bmap" || ex_fail "tmpfs: bmap of a 2^63 - 1 byte file"
		grep -q "<BlocksCount> 2251799813685248 </BlocksCount>" "$SM_DIR/huge.bmap" ||
			ex_fail "tmpfs: 2^63 - 1 bytes: $(grep BlocksCount "$SM_DIR/huge.bmap")"
		grep -qE "> [0-9]+-2251799813685247 </Range>" "$SM_DIR/huge.bmap" ||
			ex_fail "tmpfs: 2^63 - 1 bytes: the last block is not mapped"
		rm -f "$f" "$SM_DIR/huge.bmap"
	fi
	if [ "$fs" = ramfs ]; then
		image "$SM_DIR/r.img"
		if bmaptool create "$SM_DIR/r.img" >/dev/null 2>&1; then
			echo "ramfs: bmaptool create maps ramfs here now"
		else
			echo "ramfs: bmaptool create refuses the image, sparse-map bmap maps it"
		fi
		rm -f "$SM_DIR/r.img"
	fi
done
if [ -x "$fuse" ] && [ -c /dev/fuse ] && sm_mount tmpfs bmap-fuse-back &&
	sm_mount_fuse "$fuse" "$SM_DIR" bmap-fuse; then
	bmap_check "$SM_DIR" "$target" "FUSE without lseek"
else
	echo "FUSE without lseek: cannot be mounted here: not tested"
fi
