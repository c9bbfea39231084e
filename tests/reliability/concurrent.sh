#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files changed while they are mapped, on each file system: ext4, XFS,
# Btrfs (loop-mounted images) and tmpfs.  tests/reliability/churn.c for two
# seconds (grow, shrink, punch, preallocate, rewrite), then
# tests/reliability/flip.c for one (a range punched and rewritten in a
# loop).  Mounting needs root; without it flip runs on the build
# directory's file system and churn is left out.  A type the machine
# cannot mount is reported and left out, and the test fails only if a map
# breaks the rules.
set -euo pipefail
: "${top_srcdir:?make check sets it}" "${top_builddir:?make check sets it}"
. "$top_srcdir/tests/mounts.sh"

churn=$top_builddir/tests/reliability/churn
flip=$top_builddir/tests/reliability/flip
if ! sm_can_mount; then
	echo "churn mounts file systems and needs root: not run"
	"$flip" . 1 "the build directory"
	exit
fi
sm_mounts_init

ran=0
for type in ext4 xfs btrfs tmpfs; do
	if sm_mount "$type" "churn-$type"; then
		"$churn" "$SM_DIR" 2 "$type"
		"$flip" "$SM_DIR" 1 "$type"
		ran=$((ran + 1))
	else
		echo "$type: cannot be mounted here; not tried"
	fi
done
if [ "$ran" = 0 ]; then
	echo "SKIP: no file system could be mounted"
	exit 77
fi
