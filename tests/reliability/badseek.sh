#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A file system that answers SEEK_DATA/SEEK_HOLE badly on purpose
# (tests/matrix/fuse-badseek.c over a tmpfs), and tests/reliability/badseek
# run on it: AUTO and sparse_map_lseek() must keep every written byte as
# data and end; a forced SEEK must return its error.  Needs root (mounts)
# and FUSE; skipped without them.
set -euo pipefail
: "${top_srcdir:?make check sets it}" "${top_builddir:?make check sets it}"
# shellcheck source=tests/mounts.sh
. "$top_srcdir/tests/mounts.sh"
sm_mounts_require_root

fuse=$top_builddir/tests/matrix/fuse-badseek
if [ ! -x "$fuse" ]; then
	echo "SKIP: built without libfuse3"
	exit 77
fi
if [ ! -c /dev/fuse ]; then
	echo "SKIP: no /dev/fuse"
	exit 77
fi

sm_mounts_init
if ! sm_mount tmpfs badseek-back; then
	echo "SKIP: cannot mount tmpfs for the backing files"
	exit 77
fi
if ! sm_mount_fuse "$fuse" "$SM_DIR" badseek; then
	echo "SKIP: the FUSE file system did not mount"
	exit 77
fi
"$top_builddir/tests/reliability/badseek" "$SM_DIR"
