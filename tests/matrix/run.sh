#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The file-system matrix: mount each file system (ext4, XFS, Btrfs, tmpfs,
# ramfs, ext2, overlayfs over ext4, squashfs, a FUSE file system without
# lseek, a loop block device), and the configurations of those whose
# layouts differ (ext4 with inline_data, bigalloc or 1 KiB blocks; XFS with
# 1 KiB or 16 KiB blocks, and with reflinked files written over; Btrfs
# nodatacow; tmpfs huge=always), and run tests/matrix/matrix on each.  Prints the
# table (also into tests/matrix/matrix-table.txt in the build tree, for the
# CI log) and fails if any row has failures.  A file system that cannot be
# mounted here gets a "skipped" row.
#
#   SM_MATRIX_SEEDS     random layouts per file system (default 32; about
#                       a minute here, and 0.8 s more per seed)
#   SM_MATRIX_CONFIG_SEEDS  random layouts per configuration row (default
#                       SM_MATRIX_SEEDS / 4, at least 4: the rows share the
#                       plain rows' code paths and add their layouts)
#   SM_MATRIX_SEED      first seed (default: from the clock; the table says which)
#   SM_MATRIX_SCAN_MAX  forced SCAN reads files up to this size (default 1 GiB)
#   SM_MATRIX_ROWS      run only the rows named (e.g. "ext4-inline xfs-16k")
#   SM_MATRIX_CONFIGS=none  leave the configuration rows out (CI does, in
#                       the builds after the first make check: they test
#                       the kernel's layouts, which other builds do not change)
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$PWD}
# shellcheck source-path=SCRIPTDIR/../..
# shellcheck source=tests/mounts.sh
. "$top_srcdir/tests/mounts.sh"
sm_mounts_require_root

matrix=$top_builddir/tests/matrix/matrix
fuse=$top_builddir/tests/matrix/fuse-nolseek
table=$top_builddir/tests/matrix/matrix-table.txt
export SM_MATRIX_SEEDS=${SM_MATRIX_SEEDS:-32}
export SM_MATRIX_SEED=${SM_MATRIX_SEED:-$(( $(date +%s) % 1000000 * 1000 ))}
config_seeds=${SM_MATRIX_CONFIG_SEEDS:-$((SM_MATRIX_SEEDS / 4 > 4 ? SM_MATRIX_SEEDS / 4 : 4))}
# Where reading a hole pins memory (ramfs) or goes through a daemon or a
# device (FUSE, loop, squashfs), files stay small.
small=$((256 << 20))
# The rows whose files are all made first (overlay's lower layer, squashfs)
# keep every file at once, on an image or in memory: at most this many.
build_seeds=$((SM_MATRIX_SEEDS < 32 ? SM_MATRIX_SEEDS : 32))

sm_mounts_init

failed=0
durations=()
: >"$table"
{
	echo "file-system matrix: $SM_MATRIX_SEEDS random layouts per file system ($config_seeds per configuration) from seed $SM_MATRIX_SEED (replay: SM_MATRIX_SEED=$SM_MATRIX_SEED)"
	"$matrix" --header
} >>"$table"

# want LABEL: whether SM_MATRIX_ROWS, if set, names the row.
want() {
	[ -z "${SM_MATRIX_ROWS:-}" ] || [[ " $SM_MATRIX_ROWS " == *" $1 "* ]]
}

skip_row() {
	printf '%-16s %-8s skipped: %s\n' "$1" "all" "$2" >>"$table"
}

# run_matrix LABEL ARGS...: one matrix run, its rows into the table.
run_matrix() {
	local label=$1 rc=0 t0=$SECONDS
	shift
	"$matrix" --label "$label" "$@" >>"$table" || rc=$?
	durations+=("$label $((SECONDS - t0))s")
	case $rc in
	0) ;;
	77) skip_row "$label" "not possible here (see the log)" ;;
	*) echo "$label: the matrix found failures (rc $rc)" >&2; failed=1 ;;
	esac
}

# The plain file systems, each on a fresh mount.
for fs in ext4 xfs btrfs ext2 tmpfs ramfs; do
	want "$fs" || continue
	args=()
	case $fs in
	tmpfs) args=(--scan-max $((1 << 40))) ;;	# holes read from the zero page
	ramfs) args=(--max-size "$small") ;;
	esac
	if sm_mount "$fs"; then
		run_matrix "$fs" "${args[@]}" "$SM_DIR"
	else
		skip_row "$fs" "cannot mount $fs here"
	fi
done

# Configurations: what changes the layouts the kernel makes, one row each,
# as LABEL:TYPE:MKFS-OPTIONS:MOUNT-OPTIONS:MATRIX-OPTIONS.  mkfs options the
# installed tools do not know, or a kernel that will not mount the result,
# give a "skipped" row with the reason.
#   ext4-inline     inline_data: small files live in the inode (the
#                   grown-inline layout grows one past it without sync)
#   ext4-bigalloc   64 KiB clusters: allocation and holes in 64 KiB units
#   ext4-1k, xfs-1k 1 KiB blocks, below the page size
#   xfs-16k         16 KiB blocks, above the page size (Linux 6.12)
#   xfs-reflink     each layout fsynced and cloned, the clone written over
#                   without sync: dirty copy-on-write over shared extents
#   btrfs-nodatacow written in place, without checksums or compression
#   tmpfs-huge      huge=always: 2 MiB folios, st_blksize 2 MiB (the
#                   layouts keep 4 KiB units: 1500 of 2 MiB are 3 GiB of RAM)
configs=(
	"ext4-inline:ext4:-O inline_data::"
	"ext4-bigalloc:ext4:-O bigalloc -C 65536::"
	"ext4-1k:ext4:-b 1024::"
	"xfs-1k:xfs:-b size=1024::"
	"xfs-16k:xfs:-b size=16384::"
	"xfs-reflink:xfs:-m reflink=1::--clone"
	"btrfs-nodatacow:btrfs::nodatacow:"
	"tmpfs-huge:tmpfs::huge=always:--scan-max $((1 << 40)) --layout-block 4096"
)
for c in "${configs[@]}"; do
	IFS=: read -r label type mkfs_opts mount_opts matrix_opts <<<"$c"
	want "$label" || continue
	if [ "${SM_MATRIX_CONFIGS:-}" = none ]; then
		skip_row "$label" "SM_MATRIX_CONFIGS=none"
		continue
	fi
	if SM_MKFS_OPTS=$mkfs_opts SM_MOUNT_OPTS=$mount_opts sm_mount "$type" "$label" \
		2>"$SM_MOUNT_ROOT/why"; then
		# shellcheck disable=SC2086 # a list of words
		run_matrix "$label" --seeds "$config_seeds" $matrix_opts "$SM_DIR"
	else
		reason=$(tr '\n' ' ' <"$SM_MOUNT_ROOT/why")
		echo "$label: not run: ${reason:-cannot mount it here}" >&2
		skip_row "$label" "${reason:-cannot mount it here}"
	fi
done

# overlayfs, upper and lower on one ext4: new files (in the upper layer),
# and files made in the lower layer before the mount, read through it.
if ! want overlay; then
	:
elif SM_IMAGE_SIZE=2G sm_mount ext4 ovl-base; then
	base=$SM_DIR
	mkdir -p "$base/lower" "$base/upper" "$base/work" "$base/merged"
	if ! "$matrix" --build --seeds "$build_seeds" "$base/lower" >/dev/null; then
		echo "overlay: could not make the lower layer's files" >&2
		failed=1
	elif mount -t overlay overlay -o "lowerdir=$base/lower,upperdir=$base/upper,workdir=$base/work" \
		"$base/merged"; then
		sm_track_mount "$base/merged"
		run_matrix overlay "$base/merged"
		run_matrix overlay-lower --existing "$base/merged"
	else
		skip_row overlay "cannot mount overlayfs here"
	fi
else
	skip_row overlay "cannot mount its ext4 here"
fi

# squashfs: read-only, so the files are made first (on tmpfs), packed, and
# each file in the image is checked, its SCAN map against the original's.
if ! want squashfs; then
	:
elif ! command -v mksquashfs >/dev/null 2>&1; then
	skip_row squashfs "mksquashfs (squashfs-tools) is not installed"
elif sm_mount tmpfs sqsrc; then
	src=$SM_DIR
	mnt=$SM_MOUNT_ROOT/squashfs
	mkdir -p "$mnt"
	if ! "$matrix" --build --seeds "$build_seeds" --max-size "$small" "$src" >/dev/null; then
		echo "squashfs: could not make its files" >&2
		failed=1
	elif mksquashfs "$src" "$SM_MOUNT_ROOT/sq.img" -noappend -quiet -no-progress >/dev/null &&
		mount -t squashfs -o loop,ro "$SM_MOUNT_ROOT/sq.img" "$mnt"; then
		sm_track_mount "$mnt"
		run_matrix squashfs --existing --max-size "$small" --reference "$src" "$mnt"
	else
		skip_row squashfs "cannot make or mount a squashfs image here"
	fi
else
	skip_row squashfs "cannot mount tmpfs for its source files"
fi

# FUSE without lseek, passing through to a tmpfs.
if ! want fuse-nolseek; then
	:
elif [ ! -x "$fuse" ]; then
	skip_row fuse "built without libfuse3"
elif [ ! -c /dev/fuse ]; then
	skip_row fuse "no /dev/fuse"
elif ! sm_mount tmpfs fuse-back; then
	skip_row fuse-nolseek "cannot mount tmpfs for its backing directory"
elif sm_mount_fuse "$fuse" "$SM_DIR" fuse; then
	run_matrix fuse-nolseek --max-size "$small" "$SM_DIR"
else
	skip_row fuse-nolseek "the FUSE file system did not mount"
fi

# A read-only loop block device over each layout (the files on tmpfs).
if ! want loop; then
	:
elif sm_mount tmpfs loopsrc; then
	run_matrix loop --loop --max-size "$small" "$SM_DIR"
else
	skip_row loop "cannot mount tmpfs for its backing files"
fi

echo "seconds per file system (mkfs and mount not counted): ${durations[*]}; all: ${SECONDS}s" >>"$table"
cat "$table"
if [ "$failed" != 0 ]; then
	echo "FAIL: the matrix found failures; the log above has each with its seed, layout and replay command"
	exit 1
fi
