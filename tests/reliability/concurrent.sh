#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files changed while they are mapped (tests/reliability/churn.c), for two
# seconds on each file system: ext4, XFS, Btrfs (loop-mounted images) and
# tmpfs.  Needs root to mount; a type the machine cannot mount is reported
# and left out, and the test fails only if a map breaks the rules.
set -euo pipefail
: "${top_srcdir:?make check sets it}" "${top_builddir:?make check sets it}"
. "$top_srcdir/tests/mounts.sh"
sm_mounts_require_root
sm_mounts_init

churn=$top_builddir/tests/reliability/churn
ran=0
for type in ext4 xfs btrfs tmpfs; do
	if sm_mount "$type" "churn-$type"; then
		"$churn" "$SM_DIR" 2 "$type"
		ran=$((ran + 1))
	else
		echo "$type: cannot be mounted here; not tried"
	fi
done
if [ "$ran" = 0 ]; then
	echo "SKIP: no file system could be mounted"
	exit 77
fi
