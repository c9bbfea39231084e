#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AUTO's FIEMAP without sync on every file system it must be right on:
# ext4, ext4 mounted nodelalloc and data=journal, ext4 made with
# inline_data, bigalloc (64 KiB clusters) or 1 KiB blocks, XFS, XFS with
# 1 KiB or 16 KiB blocks or made with reflink=1, Btrfs, Btrfs with
# compress-force or nodatacow, each a fresh loop mount (tests/mounts.sh),
# each running
# tests/test-fiemap-unsynced.  The "fact:" lines it prints are what
# FIEMAP without sync reported there; sparse_map(3) quotes them.  Needs
# root; a variant the machine cannot make or mount is reported (with
# mkfs's or mount's reason) and left out.
# SM_UNSYNCED_VARIANTS picks some of the variants (CI's later builds run
# ext4 and xfs only: the full list has run once by then).
set -euo pipefail
: "${top_srcdir:?make check sets it}" "${top_builddir:?make check sets it}"
. "$top_srcdir/tests/mounts.sh"
sm_mounts_require_root
sm_mounts_init

prog=$top_builddir/tests/test-fiemap-unsynced
ran=0 failed=0
all_variants="ext4 ext4-nodelalloc ext4-journal ext4-inline ext4-bigalloc ext4-1k"
all_variants+=" xfs xfs-1k xfs-16k xfs-reflink btrfs btrfs-compress btrfs-nodatacow"
for variant in ${SM_UNSYNCED_VARIANTS:-$all_variants}; do
	case " $all_variants " in
	*" $variant "*) ;;
	*) echo "SM_UNSYNCED_VARIANTS: no variant $variant (there are: $all_variants)"; exit 1 ;;
	esac
	type=${variant%%-*} opts='' mkfs=''
	case $variant in
	ext4-nodelalloc) opts=nodelalloc ;;
	ext4-journal) opts=data=journal ;;
	ext4-inline) mkfs="-O inline_data" ;;
	ext4-bigalloc) mkfs="-O bigalloc -C 65536" ;;
	ext4-1k) mkfs="-b 1024" ;;
	xfs-1k) mkfs="-b size=1024" ;;
	xfs-16k) mkfs="-b size=16384" ;;
	xfs-reflink) mkfs="-m reflink=1" ;;
	btrfs-compress) opts=compress-force=zstd ;;
	btrfs-nodatacow) opts=nodatacow ;;
	esac
	# The mkfs variants share the plain ones' code paths: fewer rounds
	# of the slowest case (test_clean_pages_prove_the_extents).
	rounds=${SM_CLEAN_PROOF_ROUNDS:-}
	[ -n "$mkfs" ] && rounds=${rounds:-50}
	if ! SM_MKFS_OPTS=$mkfs SM_MOUNT_OPTS=$opts sm_mount "$type" "unsynced-$variant"; then
		echo "$variant: cannot be made or mounted here (the reason is above); not tried"
		continue
	fi
	rc=0
	SM_TEST_DIR=$SM_DIR SM_FS=$variant SM_CLEAN_PROOF_ROUNDS=$rounds "$prog" || rc=$?
	case $rc in
	0) ran=$((ran + 1)) ;;
	77) exit 77 ;;	# the program says why (no cachestat, FIEMAP or SEEK)
	*) echo "$variant: FAILED (rc $rc)"; failed=1 ;;
	esac
done
[ "$failed" = 0 ] || exit 1
if [ "$ran" = 0 ]; then
	echo "SKIP: no file system could be mounted"
	exit 77
fi
