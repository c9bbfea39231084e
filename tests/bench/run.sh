#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmark of issue 6, run by `make bench`: makes its files on each file
# system, has tests/bench/bench measure them, and prints one Markdown table
# (also kept in $top_builddir/tests/bench/last-run.md).  With the sparse-map
# command built (tool/, needs nettle), also its cp and bmap against cp and
# bmaptool (issue 29).
#
#   run.sh [--small] [--fs "ext4 xfs btrfs tmpfs ramfs fuse"]
#
# As root every file system is a fresh mount of its own (tests/mounts.sh);
# otherwise everything happens in the build directory.  --small is the
# version of seconds that CI runs.  SM_IMAGE_SIZE sets the loop images' size.
# The numbers are measurements: a missed target is marked in the table, and
# the run fails only when something cannot be measured.
set -euo pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$PWD}"
export top_srcdir top_builddir

# As root, re-runs this script in a mount namespace of its own.
# shellcheck source=tests/mounts.sh
. "$top_srcdir/tests/mounts.sh"

small=0
fs_list="ext4 xfs btrfs tmpfs ramfs fuse"
while [ $# -gt 0 ]; do
	case $1 in
	--small) small=1 ;;
	--fs) fs_list=$2; shift ;;
	*) echo "usage: $0 [--small] [--fs \"ext4 xfs btrfs tmpfs ramfs fuse\"]" >&2; exit 2 ;;
	esac
	shift
done

bench=$top_builddir/tests/bench/bench
copier=$top_builddir/examples/sparse-cp
smtool=$top_builddir/tool/sparse-map
fuse_fs=$top_builddir/tests/matrix/fuse-nolseek
out=$top_builddir/tests/bench/last-run.md
# With a shared library libtool builds the real program under .libs/ behind
# a wrapper script, whose start-up (a shell) would be timed with each copy.
libs_path=0
if [ -x "$top_builddir/examples/.libs/sparse-cp" ]; then
	copier=$top_builddir/examples/.libs/sparse-cp
	libs_path=1
fi
if [ -x "$top_builddir/tool/.libs/sparse-map" ]; then
	smtool=$top_builddir/tool/.libs/sparse-map
	libs_path=1
fi
if [ "$libs_path" = 1 ]; then
	export LD_LIBRARY_PATH=$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
[ -x "$bench" ] || { echo "$bench is not built: run make first" >&2; exit 1; }

if [ "$small" = 1 ]; then
	frag_runs=(1000 10000)
	frag_reps=(5 5)
	scan_size=64M scan_data=2M scan_reps=3
	copy_size=256M copy_data=4M copy_reps=1
	small_files=2000 small_reps=5
	stub_runs=(1000 5000) stub_reps=3
	tool_size=256M tool_runs=10000 tool_reps=3
	bmap_size=256M bmap_runs=500 bmap_reps=3
	image_size=${SM_IMAGE_SIZE:-2G}
	ds_runs=10000 ds_files=1000 ds_reps=3
else
	frag_runs=(100000 1000000)
	frag_reps=(15 7)
	scan_size=2G scan_data=64M scan_reps=7
	copy_size=16G copy_data=256M copy_reps=3
	small_files=20000 small_reps=9
	stub_runs=(1000 20000 100000) stub_reps=3
	tool_size=1G tool_runs=100000 tool_reps=5
	bmap_size=1G bmap_runs=2000 bmap_reps=7
	image_size=${SM_IMAGE_SIZE:-12G}
	ds_runs=100000 ds_files=5000 ds_reps=7
fi
export SM_IMAGE_SIZE=$image_size
scan_runs=$(( $("$bench" size "$scan_data") / 4096 ))

say() { printf 'bench: %s\n' "$*" >&2; }
have_copier() { [ -x "$copier" ]; }
have_tool() { [ -x "$smtool" ]; }
mem_done=0

# The fragmented files on one file system: the map rows, and the memory rows
# on the first file system that gets this far.
frag_rows() {
	local fs=$1 dir=$2 i n
	for i in "${!frag_runs[@]}"; do
		n=${frag_runs[i]}
		say "$fs: writing $n runs of 4 KiB, one every 64 KiB"
		"$bench" mkfrag "$dir/frag-$n" "$n"
		say "$fs: mapping $n runs, ${frag_reps[i]} times"
		"$bench" map "$fs" "$dir/frag-$n" "$n" "${frag_reps[i]}"
	done
	if [ "$mem_done" = 0 ]; then
		say "$fs: peak memory"
		"$bench" memory "$fs" "$dir/frag-${frag_runs[0]}" "$dir/frag-${frag_runs[1]}" \
			"${frag_runs[0]}" "${frag_runs[1]}"
		mem_done=1
	fi
}

# Many small files: what a map costs a backup per file.
files_rows() {
	local fs=$1 dir=$2
	say "$fs: $small_files small files, $small_reps times"
	mkdir -p "$dir/files"
	"$bench" files "$fs" "$dir/files" "$small_files" "$small_reps"
	rm -rf "$dir/files"
}

# GNU cp and GNU tar with lseek made sparse_map_lseek, against themselves
# as they are (issue 28): the builds `make check-downstream` keeps in
# $SM_DOWNSTREAM_DIR (tests/downstream/run.sh).
downstream_rows() {
	local fs=$1 dir=$2 cu=${SM_DOWNSTREAM_DIR:-}/coreutils tar=${SM_DOWNSTREAM_DIR:-}/tar
	local how="GNU cp --sparse=auto --reflink=never, on the library against as it is"
	if [ -z "${SM_DOWNSTREAM_DIR:-}" ] || [ ! -x "$cu/patched/src/cp" ] || [ ! -x "$tar/patched/src/tar" ]; then
		"$bench" note "$fs" "GNU cp and tar on the library: not run: no builds in SM_DOWNSTREAM_DIR (make check-downstream SM_DOWNSTREAM_DIR=DIR keeps them)"
		return 0
	fi
	say "$fs: GNU cp and tar, patched against plain, $ds_reps times"
	"$bench" mkfrag "$dir/ds-runs" "$ds_runs"
	"$bench" pair "$fs" "$how" "$ds_runs runs of 4 KiB, one every 64 KiB" "$ds_reps" "$dir/ds-copy" \
		-- "$cu/patched/src/cp" --sparse=auto --reflink=never "$dir/ds-runs" "$dir/ds-copy" \
		-- "$cu/plain/src/cp" --sparse=auto --reflink=never "$dir/ds-runs" "$dir/ds-copy"
	rm -f "$dir/ds-runs"
	"$bench" mktree "$dir/ds-tree" "$ds_files"
	"$bench" pair "$fs" "${how/cp/cp -r}" "$ds_files sparse 64 KiB files, 2 data runs each" "$ds_reps" "$dir/ds-copy" \
		-- "$cu/patched/src/cp" -r --sparse=auto --reflink=never "$dir/ds-tree" "$dir/ds-copy" \
		-- "$cu/plain/src/cp" -r --sparse=auto --reflink=never "$dir/ds-tree" "$dir/ds-copy"
	"$bench" pair "$fs" "GNU tar -cS, on the library against as it is" "$ds_files sparse 64 KiB files, 2 data runs each" "$ds_reps" "$dir/ds.tar" \
		-- "$tar/patched/src/tar" -cSf "$dir/ds.tar" -C "$dir" ds-tree \
		-- "$tar/plain/src/tar" -cSf "$dir/ds.tar" -C "$dir" ds-tree
	rm -rf "$dir/ds-tree"
}

# The copier against cp, on the fragmented files and on a big sparse file.
copy_rows() {
	local fs=$1 dir=$2 n
	if ! have_copier; then
		"$bench" note "$fs" "copy: not run: no copier ($copier is not built)"
		return 0
	fi
	for n in "${frag_runs[@]}"; do
		say "$fs: copying $n runs"
		"$bench" copy "$fs" "$dir/frag-$n" "$copy_reps" "$copier"
	done
	say "$fs: copying a $copy_size file with $copy_data of data"
	"$bench" mkzero "$dir/sparse-big" "$copy_size" "$copy_data" sparse
	"$bench" copy "$fs" "$dir/sparse-big" "$copy_reps" "$copier"
	rm -f "$dir/sparse-big"
}

# The sparse-map command's cp against cp --sparse=always --reflink=never
# (issue 29): on a file of $tool_size with 3 data runs of 4 KiB, and on the
# fragmented file of $tool_runs runs (frag_rows's, when it made one).  On
# ramfs (ramfs as the third argument) only the first, made again before
# each copy, since cp's reading stores the source's holes there.
tool_cp_rows() {
	local fs=$1 dir=$2 made=0
	if ! have_tool; then
		"$bench" note "$fs" "sparse-map cp: not run: $smtool is not built (it needs nettle)"
		return 0
	fi
	if [ "${3:-}" = ramfs ]; then
		say "$fs: sparse-map cp of a $tool_size file with 3 data runs, made again for each copy, $tool_reps times"
		"$bench" toolcp "$fs" "$dir/tool-3" 3 "$tool_reps" "$smtool" "$tool_size" 12K
		rm -f "$dir/tool-3"
		return 0
	fi
	say "$fs: sparse-map cp of a $tool_size file with 3 data runs, $tool_reps times"
	"$bench" mkzero "$dir/tool-3" "$tool_size" 12K sparse
	"$bench" toolcp "$fs" "$dir/tool-3" 3 "$tool_reps" "$smtool"
	rm -f "$dir/tool-3"
	if [ ! -e "$dir/frag-$tool_runs" ]; then
		say "$fs: writing $tool_runs runs of 4 KiB, one every 64 KiB"
		"$bench" mkfrag "$dir/frag-$tool_runs" "$tool_runs"
		made=1
	fi
	say "$fs: sparse-map cp of $tool_runs runs, $tool_reps times"
	"$bench" toolcp "$fs" "$dir/frag-$tool_runs" "$tool_runs" "$tool_reps" "$smtool"
	[ "$made" = 0 ] || rm -f "$dir/frag-$tool_runs"
}

# The sparse-map command's bmap against bmaptool create (issue 29), on an
# image of $bmap_size with $bmap_runs data runs of 4 KiB.
bmap_rows() {
	local fs=$1 dir=$2
	if ! have_tool; then
		"$bench" note "$fs" "sparse-map bmap: not run: $smtool is not built (it needs nettle)"
		return 0
	fi
	if ! command -v bmaptool >/dev/null 2>&1; then
		"$bench" note "$fs" "sparse-map bmap: not run: no bmaptool (Debian package bmap-tools)"
		return 0
	fi
	say "$fs: sparse-map bmap of a $bmap_size image with $bmap_runs data runs, $bmap_reps times"
	"$bench" mkzero "$dir/bmap-image" "$bmap_size" "$((bmap_runs * 4))K" sparse
	"$bench" bmap "$fs" "$dir/bmap-image" "$bmap_runs" "$bmap_reps" "$smtool"
	rm -f "$dir/bmap-image"
}

# Where SEEK is the stub (ramfs, FUSE without lseek): sparse_map_lseek
# loops over fragmented files of several sizes, in one run of bench so that
# the cost per run of each is compared with the first's.
stub_rows() {
	local fs=$1 dir=$2 n args=()
	for n in "${stub_runs[@]}"; do
		say "$fs: writing $n runs of 4 KiB, one every 64 KiB"
		"$bench" mkfrag "$dir/stub-$n" "$n"
		args+=("$dir/stub-$n" "$n")
	done
	# On ramfs a loop believes the holes an earlier call saw without a
	# page only in a file whose ctime is two seconds old (lib/lseek.c):
	# as a file is that is not being written.
	sleep 2
	say "$fs: sparse_map_lseek loops, $stub_reps times"
	"$bench" stub "$fs" "$stub_reps" "${args[@]}"
	[ "${3:-}" = keep ] || rm -f "$dir"/stub-*
}

# The pass-through of tests/matrix without an lseek handler, over tmpfs:
# the kernel answers SEEK with the stub.  With the kernel's attribute cache
# off (attr_timeout 0, as the tests mount it: every fstat asks the daemon)
# and at libfuse's default of 1 s.
fuse_rows() {
	local label=$1 timeout=$2 n
	if [ ! -x "$fuse_fs" ] || [ ! -c /dev/fuse ]; then
		"$bench" note "$label" "not run: no $fuse_fs or no /dev/fuse"
		return 0
	fi
	if ! sm_mount tmpfs "bench-$label-back" 2>"$SM_MOUNT_ROOT/err" ||
	   ! FP_ATTR_TIMEOUT=$timeout sm_mount_fuse "$fuse_fs" "$SM_DIR" "bench-$label" \
		>/dev/null 2>>"$SM_MOUNT_ROOT/err"; then
		"$bench" note "$label" "not run: cannot mount ($(tr '\n' ' ' <"$SM_MOUNT_ROOT/err"))"
		return 0
	fi
	stub_rows "$label" "$SM_DIR" keep
	if have_copier; then
		for n in "${stub_runs[@]}"; do
			say "$label: copying $n runs"
			"$bench" copy "$label" "$SM_DIR/stub-$n" "$stub_reps" "$copier"
		done
	fi
	rm -f "$SM_DIR"/stub-*
}

scan_rows() {
	local fs=$1 dir=$2
	say "$fs: SCAN of a $scan_size sparse file with $scan_data of data"
	"$bench" mkzero "$dir/scan" "$scan_size" "$scan_data" sparse
	"$bench" scan "$fs" "$dir/scan" "$scan_runs" "$scan_reps" scan
	rm -f "$dir/scan"
}

zeroes_rows() {
	local fs=$1 dir=$2
	say "$fs: SEEK + ZEROES on a written $scan_size file with $scan_data of data"
	"$bench" mkzero "$dir/zeroes" "$scan_size" "$scan_data" full
	"$bench" scan "$fs" "$dir/zeroes" "$scan_runs" "$scan_reps" seek zeroes
	rm -f "$dir/zeroes"
}

run_all() {
	local fs dir
	"$bench" header
	if ! sm_can_mount; then
		work_dir=$(mktemp -d "$top_builddir/tests/bench/work.XXXXXX")
		trap 'rm -rf "$work_dir"' EXIT
		dir=$work_dir
		fs="build dir ($(stat -f -c %T "$dir"))"
		frag_rows "$fs" "$dir"
		files_rows "$fs" "$dir"
		copy_rows "$fs" "$dir"
		tool_cp_rows "$fs" "$dir"
		rm -f "$dir"/frag-*
		bmap_rows "$fs" "$dir"
		# cp skips the holes this file system reports, SCAN is told not to.
		"$bench" note "$fs" "SCAN: not run: needs a file system without hole reporting (ramfs, as root)"
		"$bench" note "$fs" "sparse-map cp on ramfs: not run: needs root"
		zeroes_rows "$fs" "$dir"
		return 0
	fi
	sm_mounts_init
	for fs in $fs_list; do
		if [ "$fs" = fuse ]; then
			fuse_rows fuse-nolseek 0
			fuse_rows fuse-nolseek-attr1s 1
			continue
		fi
		if ! sm_mount "$fs" "bench-$fs" 2>"$SM_MOUNT_ROOT/err"; then
			"$bench" note "$fs" "not run: cannot mount ($(tr '\n' ' ' <"$SM_MOUNT_ROOT/err"))"
			continue
		fi
		dir=$SM_DIR
		case $fs in
		ramfs)
			"$bench" note "$fs" "map: not run: ramfs reports no holes (SEEK is the all-data stub, no FIEMAP)"
			stub_rows "$fs" "$dir"
			scan_rows "$fs" "$dir"
			tool_cp_rows "$fs" "$dir" ramfs
			;;
		tmpfs)
			frag_rows "$fs" "$dir"
			files_rows "$fs" "$dir"
			copy_rows "$fs" "$dir"
			tool_cp_rows "$fs" "$dir"
			rm -f "$dir"/frag-*
			bmap_rows "$fs" "$dir"
			zeroes_rows "$fs" "$dir"
			downstream_rows "$fs" "$dir"
			;;
		ext4)
			frag_rows "$fs" "$dir"
			files_rows "$fs" "$dir"
			tool_cp_rows "$fs" "$dir"
			rm -f "$dir"/frag-*
			bmap_rows "$fs" "$dir"
			zeroes_rows "$fs" "$dir"
			downstream_rows "$fs" "$dir"
			;;
		*)
			frag_rows "$fs" "$dir"
			files_rows "$fs" "$dir"
			rm -f "$dir"/frag-*
			;;
		esac
	done
}

# Rows appear as they are measured; the table is kept only from a run that
# went to the end.
exec 3>&1
exec > >(tee "$out.tmp")
tee_pid=$!
printf '# libsparse-map benchmark\n\n'
# shellcheck disable=SC2016 # the backquotes are Markdown
printf 'Command: `make bench%s`; %s; kernel %s; %s CPUs (%s); %s.\n\n' \
	"$([ "$small" = 1 ] && echo ' BENCH_FLAGS=--small')" "$(date -u +%Y-%m-%d)" \
	"$(uname -r)" "$(nproc)" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	"$(cp --version | head -n 1)"
run_all
exec >&3 3>&-
# (Not $!: the FUSE daemon, started since, is the last background job.)
wait "$tee_pid"
mv "$out.tmp" "$out"
