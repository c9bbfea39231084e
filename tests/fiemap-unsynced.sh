#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AUTO's FIEMAP without sync on every file system it must be right on:
# ext4, ext4 mounted nodelalloc and data=journal, XFS, Btrfs and Btrfs with
# compress-force, each a fresh loop mount (tests/mounts.sh), each running
# tests/test-fiemap-unsynced.  The "fact:" lines it prints are what
# FIEMAP without sync reported there; sparse_map(3) quotes them.  Needs
# root; a type the machine cannot mount is reported and left out.
# SM_UNSYNCED_VARIANTS picks some of the variants (CI's later builds run
# ext4 and xfs only: the full list has run once by then).
set -euo pipefail
: "${top_srcdir:?make check sets it}" "${top_builddir:?make check sets it}"
. "$top_srcdir/tests/mounts.sh"
sm_mounts_require_root
sm_mounts_init

prog=$top_builddir/tests/test-fiemap-unsynced
ran=0 failed=0
all_variants="ext4 ext4-nodelalloc ext4-journal xfs btrfs btrfs-compress"
for variant in ${SM_UNSYNCED_VARIANTS:-$all_variants}; do
	case " $all_variants " in
	*" $variant "*) ;;
	*) echo "SM_UNSYNCED_VARIANTS: no variant $variant (there are: $all_variants)"; exit 1 ;;
	esac
	type=${variant%%-*} opts=
	case $variant in
	ext4-nodelalloc) opts=nodelalloc ;;
	ext4-journal) opts=data=journal ;;
	btrfs-compress) opts=compress-force=zstd ;;
	esac
	if ! SM_MOUNT_OPTS=$opts sm_mount "$type" "unsynced-$variant"; then
		echo "$variant: cannot be mounted here; not tried"
		continue
	fi
	rc=0
	SM_TEST_DIR=$SM_DIR SM_FS=$variant "$prog" || rc=$?
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
