#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GNU cp and GNU tar on the library, checked by their own test suites
# (issue 28).  `make check-downstream` runs this with the library just
# built installed in a private directory and found by pkg-config; CI's
# stage 45 runs that.
#
#  1. Debian's source packages of coreutils 9.1-1 and tar
#     1.34+dfsg-1.2+deb12u1 (bookworm's) are fetched with `apt-get source`
#     through a deb-src list and apt state of its own, in its work
#     directory: the machine's apt configuration is not touched.
#  2. Each is built as it is ("plain"), then copied and built again with
#     two lines inserted into the one file that finds holes, src/copy.c
#     and src/sparse.c ("patched"):
#         #include <sparse_map.h>
#         #define lseek sparse_map_lseek
#     Only that file recompiles, and only the programs that use it relink.
#     No code or patch of those projects is kept in this repository.
#  3. On a fresh ext4, XFS and Btrfs (loop images), tmpfs and ramfs, each
#     build runs its project's own sparse tests, with the test's working
#     directory on that file system: coreutils' tests/cp/sparse*.sh,
#     copy-FMR.sh and reflink-auto.sh, and tar's autotest groups of the
#     keyword "sparse".  A test must end the same way in both builds (and
#     skip for the same reason).  tar's two largefile groups run on tmpfs
#     alone, with the patched build only, which must pass them: that
#     proves more than "the same as plain", at half the cost.
#  4. Both builds copy (cp --sparse=auto --reflink=never), archive
#     (tar -cS) and extract files of this script's own on each file system:
#     every result must equal its source, and the archives of the two
#     builds must be the same bytes where the plain tar's own SEEK_DATA
#     loop maps the file (everywhere but ramfs, where it reads zeroes).  On
#     ramfs the patched builds must leave the source's st_blocks and the
#     system's unevictable memory as they were, where the plain ones store
#     its holes: the point of the library.
#
# Prints a table (test x file system x build) and exits 1 on any
# difference.  Needs root (mounts), network (the sources), about 14 GiB
# of free memory (tar's largefile groups on tmpfs) and, for the suites,
# perl, python3 (coreutils' SEEK_DATA check) and valgrind; exits 77 without
# root.
# SM_DOWNSTREAM_FS picks file systems (default: ext4 xfs btrfs tmpfs ramfs).
# SM_DOWNSTREAM_DIR names a directory to work in and keep: the downloads
# (not fetched again) and the builds, which `make bench` then times.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../mounts.sh"
sm_mounts_require_root
sm_mounts_init

pkg-config --exists libsparse-map || {
	echo "FAIL: pkg-config finds no libsparse-map (PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-})"
	exit 1
}
sm_cflags=$(pkg-config --cflags libsparse-map)
sm_libs=$(pkg-config --libs libsparse-map)
sm_libdir=$(pkg-config --libs-only-L libsparse-map | sed 's/^ *-L//; s/ .*//')
[ -d "$sm_libdir" ] || { echo "FAIL: no library directory in '$sm_libs'"; exit 1; }
sm_libs="$sm_libs -Wl,-rpath,$sm_libdir"

# The jobs this script starts in the background, stopped (with all they
# started) before the cleanup unmounts what they work in.
bg_pids=()
kill_tree() {
	local child
	for child in $(pgrep -P "$1" 2>/dev/null); do
		kill_tree "$child"
	done
	kill "$1" 2>/dev/null || true
}
stop_jobs() {
	local pid
	for pid in "${bg_pids[@]}"; do
		kill_tree "$pid"
	done
	for pid in "${bg_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	bg_pids=()
}
if [ -n "${SM_DOWNSTREAM_DIR:-}" ]; then
	# Kept: the downloads for the next run, the builds for `make bench`.
	work=$SM_DOWNSTREAM_DIR
	mkdir -p "$work"
	work=$(cd "$work" && pwd)
	rm -rf "${work:?}"/{coreutils,tar,coreutils-src,tar-src,apt,res,logs}
	trap 'stop_jobs; sm_mounts_cleanup' EXIT
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/sm-downstream.XXXXXX")
	trap 'stop_jobs; sm_mounts_cleanup; rm -rf "$work"' EXIT
fi
trap 'exit 130' INT TERM HUP
jobs=$(nproc 2>/dev/null || echo 2)
fs_list=${SM_DOWNSTREAM_FS:-ext4 xfs btrfs tmpfs ramfs}
coreutils=coreutils=9.1-1
tar=tar=1.34+dfsg-1.2+deb12u1
failures=0 notes=
nl=$'\n'
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# --- 1. the sources ----------------------------------------------------------
fetch() {
	local dir=$work/sources apt=$work/apt mirror
	local -a opts
	mkdir -p "$dir" "$apt/state/lists/partial" "$apt/cache/archives/partial"
	opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State=$apt/state" -o "Dir::Cache=$apt/cache" -o Acquire::Check-Valid-Until=false)
	if ! ls "$dir"/coreutils_9.1-1.dsc "$dir"/tar_1.34+dfsg-1.2+deb12u1.dsc >/dev/null 2>&1; then
		# The archive first; should a newer point release replace these
		# versions there, the snapshot of the day bookworm 12.11 came out.
		for mirror in http://deb.debian.org/debian \
			http://snapshot.debian.org/archive/debian/20250517T000000Z; do
			printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s bookworm main\n' \
				"$mirror" >"$apt/sources.list"
			apt-get "${opts[@]}" update >"$work/apt.log" 2>&1 &&
				(cd "$dir" && apt-get "${opts[@]}" source --download-only "$coreutils" "$tar") \
					>>"$work/apt.log" 2>&1 && break
			echo "apt-get source from $mirror failed: $(tail -n 1 "$work/apt.log")"
		done
	fi
	(cd "$work" && dpkg-source -q -x "$dir"/coreutils_9.1-1.dsc coreutils-src &&
		dpkg-source -q -x "$dir"/tar_1.34+dfsg-1.2+deb12u1.dsc tar-src) >"$work/dpkg-source.log" 2>&1 ||
		{ echo "FAIL: no sources of $coreutils and $tar"; exit 1; }
}

# --- 2. the builds ------------------------------------------------------------
# The two lines, after the file's first include of system.h (which brings
# <unistd.h> and so lseek's own declaration first).
patch_in() {
	local file=$1
	grep -q '^#include ["<]system\.h[">]' "$file" || { echo "FAIL: $file includes no system.h"; exit 1; }
	sed -i '0,/^#include ["<]system\.h[">]/s//&\n#include <sparse_map.h>\n#define lseek sparse_map_lseek/' "$file"
	[ "$(grep -c '^#define lseek sparse_map_lseek$' "$file")" = 1 ] ||
		{ echo "FAIL: the lines went wrong into $file"; exit 1; }
}

# build NAME FILE MAKEDIR TARGET...: configure $work/NAME-src as it is in
# $work/NAME/plain and build it with the commands in $work/NAME.make (what
# its tests run), then copy it to $work/NAME/patched, patch FILE and build
# TARGETs in MAKEDIR again, with the library's flags.
build() {
	local name=$1 file=$2 mkdir=$3 t0=$SECONDS cppflags libs rebuilt
	local log=$work/$name-build.log
	shift 3
	mkdir -p "$work/$name"
	mv "$work/$name-src" "$work/$name/plain"
	(cd "$work/$name/plain" && FORCE_UNSAFE_CONFIGURE=1 ./configure -q --disable-nls &&
		eval "$(cat "$work/$name.make")") >"$log" 2>&1 ||
		{ tail -n 30 "$log"; echo "FAIL: $name does not build"; return 1; }
	cp -a "$work/$name/plain" "$work/$name/patched"
	touch "$work/$name.stamp"
	sleep 1	# a second apart: make compares modification times
	patch_in "$work/$name/patched/$file"
	cppflags=$(sed -n 's/^CPPFLAGS = //p' "$work/$name/patched/$mkdir/Makefile")
	libs=$(sed -n 's/^LIBS = //p' "$work/$name/patched/$mkdir/Makefile")
	make -C "$work/$name/patched/$mkdir" -j"$jobs" CPPFLAGS="$cppflags $sm_cflags" \
		LIBS="$libs $sm_libs" "$@" >>"$log" 2>&1 ||
		{ tail -n 30 "$log"; echo "FAIL: patched $name does not build"; return 1; }
	rebuilt=$(cd "$work/$name/patched" && find . -name '*.o' -newer "$work/$name.stamp" | sort | tr '\n' ' ')
	echo "$name: built twice in $((SECONDS - t0)) s; the second build recompiled ${rebuilt:-nothing}"
	[ "$rebuilt" = "./${file%.c}.o " ] ||
		{ echo "FAIL: $name: the patched build recompiled '$rebuilt', not ${file%.c}.o alone"; return 1; }
}

# linked PROGRAM: whether PROGRAM loads the library.
linked() {
	[[ $(ldd "$1") == *libsparse-map.so* ]]
}

fetch
# A value of a Makefile, as `make` would give it: make -f Makefile -f
# $work/print.mk sm-print-NAME.
# shellcheck disable=SC2016 # make's expressions, and the commands' own
printf 'sm-print-%%:\n\t@printf "%%s\\n" "$($*)"\n' >"$work/print.mk"
# What the suites run, and no more: coreutils' cp, mv and install (its
# tests find the other programs in PATH, the system's coreutils), after the
# generated headers; tar and the helpers of its test suite.  Then the
# programs that use the patched file.
cat >"$work/coreutils.make" <<'EOF'
make -j"$jobs" $(make -s -f Makefile -f "$work/print.mk" sm-print-BUILT_SOURCES) &&
	make -j"$jobs" src/cp src/mv src/ginstall
EOF
# shellcheck disable=SC2016 # expanded where build() evaluates it
echo 'make -j"$jobs" && make -C tests genfile checkseekhole ckmtime' >"$work/tar.make"
build coreutils src/copy.c . src/cp src/mv src/ginstall >"$work/coreutils.out" 2>&1 &
cu_pid=$!
build tar src/sparse.c src tar >"$work/tar.out" 2>&1 &
tar_pid=$!
bg_pids=("$cu_pid" "$tar_pid")
wait "$cu_pid" || failures=$((failures + 1))
wait "$tar_pid" || failures=$((failures + 1))
bg_pids=()
cat "$work/coreutils.out" "$work/tar.out"
for b in plain patched; do
	for p in "$work/coreutils/$b/src/cp" "$work/tar/$b/src/tar"; do
		[ -x "$p" ] || continue
		if [ $b = patched ] && ! linked "$p"; then
			fail "$p does not load libsparse-map"
		elif [ $b = plain ] && linked "$p"; then
			fail "$p loads libsparse-map"
		fi
	done
done
[ "$failures" = 0 ] || exit 1

# --- 3. their own tests --------------------------------------------------------
# Each result is a file $work/res/TEST,FS,BUILD holding PASS, FAIL (...) or
# SKIP (reason), so that the two builds can run side by side.
mkdir -p "$work/res" "$work/logs"
put() { printf '%s\n' "$2" >"$work/res/$1"; }
got() { cat "$work/res/$1" 2>/dev/null || echo "not run"; }

cu_tests="sparse.sh sparse-2.sh sparse-extents.sh sparse-extents-2.sh sparse-perf.sh sparse-to-pipe.sh copy-FMR.sh reflink-auto.sh"
# A value of coreutils' Makefile, as `make check` would give it to a test.
cu_var() {
	make -s -C "$work/coreutils/plain" -f Makefile -f "$work/print.mk" "sm-print-$1"
}
cu_built_programs=$(cu_var built_programs)
cu_perl=$(cu_var PERL)

# cu_run BUILD TEST DIR: run coreutils' TEST of BUILD from DIR, as `make
# check` would but for the directory: its tests make theirs in the current one.
cu_run() {
	local b=$1 t=$2 dir=$3/cu-$1 tree=$work/coreutils/$1 log rc=0 reason
	log=$work/logs/$fs-coreutils-$b-$t.log
	mkdir -p "$dir"
	# path_prepend_ ./src, from the test's directory: the build's programs.
	ln -sfn "$tree/src" "$dir/src"
	(cd "$dir" && env LC_ALL=C srcdir="$tree" abs_srcdir="$tree" abs_top_srcdir="$tree" \
		abs_top_builddir="$tree" top_srcdir="$tree" built_programs="$cu_built_programs" \
		VERSION=9.1 PACKAGE_VERSION=9.1 CONFIG_HEADER="$tree/lib/config.h" fail=0 \
		host_os=linux-gnu PERL="$cu_perl" SHELL=/bin/sh EXEEXT= CC=cc MAKE=make \
		RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes \
		PATH="$tree/src:$PATH" timeout --foreground 600 sh "$tree/tests/cp/$t") >"$log" 2>&1 || rc=$?
	case $rc in
	0) put "$t,$fs,$b" PASS ;;
	77)
		reason=$(sed -n 's/.*skipped test: //p' "$log" | head -n 1)
		put "$t,$fs,$b" "SKIP (${reason:-no reason given})"
		;;
	*) put "$t,$fs,$b" "FAIL (status $rc)" ;;
	esac
}

# tar's groups of a keyword list, each a line "NUM NAME".
tar_groups() {
	(cd "$work/tar/plain/tests" && ./testsuite -l -k "$1" |
		sed -n 's/^ *\([0-9]*\): \([^ ]*\)\.at:.*/\1 \2/p')
}
# The groups that store 8 GiB and 20 GiB files (10 GiB of it data) run on
# tmpfs alone, one build at a time: elsewhere they would take minutes a
# file system, and on ramfs pin their holes' memory.
tar_small=$(tar_groups 'sparse,!largefile')
tar_large=$(tar_groups 'sparse,largefile')

# tar_run BUILD DIR small|large: run tar's groups of BUILD from DIR.
tar_run() {
	local b=$1 dir=$2/tar-$1-$3 tree=$work/tar/$1 num name line groups keys
	local log=$work/logs/$fs-tar-$b-$3.log
	keys=$([ "$3" = small ] && echo 'sparse,!largefile' || echo 'sparse,largefile')
	groups=$(tar_groups "$keys")
	mkdir -p "$dir"
	# The test suite reads its settings from ./atconfig and ./atlocal,
	# which name the tree it was configured in (the copy is another).
	sed "s|$work/tar/plain|$tree|g" "$tree/tests/atconfig" >"$dir/atconfig"
	sed "s|$work/tar/plain|$tree|g" "$tree/tests/atlocal" >"$dir/atlocal"
	(cd "$dir" && timeout --foreground 900 "$tree/tests/testsuite" -k "$keys" \
		AUTOTEST_PATH="$tree/src:$tree/rmt:$tree/tests") >"$log" 2>&1 || true
	while read -r num name; do
		line=$(grep -E "^ *$num: " "$log" | tail -n 1 || true)
		case $line in
		*" ok") put "$name,$fs,$b" PASS ;;
		*"expected failure"*) put "$name,$fs,$b" "XFAIL" ;;
		*skipped*) line=${line##*skipped (} && put "$name,$fs,$b" "SKIP (${line%)})" ;;
		*FAILED*) put "$name,$fs,$b" "FAIL (${line##*FAILED })" ;;
		*) put "$name,$fs,$b" "not run" ;;
		esac
	done <<<"$groups"
}

# suites BUILD DIR: both projects' tests of BUILD, from DIR.
suites() {
	local t
	for t in $cu_tests; do
		cu_run "$1" "$t" "$2"
	done
	tar_run "$1" "$2" small
}

# --- 4. files of our own ---------------------------------------------------------
# make_file KIND PATH: one of the layouts, written now and not synced.
make_file() {
	local kind=$1 f=$2
	rm -f "$f"
	case $kind in
	three-runs-1g)	# 1 GiB, three 4 KiB runs
		truncate -s 1G "$f"
		for off in 0 131072 262143; do
			dd if=/dev/urandom of="$f" bs=4096 seek=$off count=1 conv=notrunc status=none
		done
		;;
	runs-100k)	# 100,000 runs of 4 KiB, 4 KiB apart
		# The size first: XFS meets writes that extend a file with
		# speculative preallocation, which would fill the holes.
		truncate -s $((100000 * 8192)) "$f"
		perl -e 'open(my $h, "+<", $ARGV[0]) or die; my $b = "\x5a" x 4096;
			for my $i (0 .. 99999) { sysseek($h, $i * 8192, 0); syswrite($h, $b) == 4096 or die }' "$f"
		;;
	prealloc)	# 4 MiB fallocated in 8 MiB (where fallocate works), then
			# unsynced data in it
		truncate -s 8M "$f"
		fallocate -o 1M -l 4M "$f" 2>/dev/null || true
		for off in 3 300 700 1100; do
			dd if=/dev/urandom of="$f" bs=4096 seek=$off count=5 conv=notrunc status=none
		done
		;;
	unsynced)	# written just now, holes between
		truncate -s 16M "$f"
		for off in 1 100 2000 4095; do
			dd if=/dev/urandom of="$f" bs=4096 seek=$off count=1 conv=notrunc status=none
		done
		;;
	zeroes)		# 1 MiB of written zeroes between data, then a hole
		truncate -s 8M "$f"
		dd if=/dev/urandom of="$f" bs=64K count=1 conv=notrunc status=none
		dd if=/dev/zero of="$f" bs=1M count=1 seek=65536 oflag=seek_bytes conv=notrunc status=none
		dd if=/dev/urandom of="$f" bs=64K count=1 seek=$((65536 + 1048576)) oflag=seek_bytes \
			conv=notrunc status=none
		;;
	esac
	# Else cp and tar would not ask SEEK_DATA at all: they copy and
	# archive a file whose blocks cover its size as dense.
	if [ $(($(stat -c %b "$f") * 512)) -ge "$(stat -c %s "$f")" ]; then
		echo "FAIL: $kind on $fs: st_blocks covers the size; cp and tar would not look for holes"
		return 1
	fi
}
own_files="three-runs-1g runs-100k prealloc unsynced zeroes"

blocks() { stat -c %b "$1"; }
unevictable_kib() { sed -n 's/^Unevictable: *\([0-9]*\) kB/\1/p' /proc/meminfo; }

# own_check DIR KIND BUILD: BUILD's copy and archive of DIR/KIND equal it;
# "" or what is wrong.  It reads the source, holes and all: on XFS that
# makes unwritten extents data for SEEK_DATA (their pages are then in the
# page cache), and on ramfs it stores the holes.
own_check() {
	local dir=$1 kind=$2 b=$3 tar=$work/tar/$3/src/tar what=
	cmp -s "$dir/$kind" "$dir/$b.copy" || what="the copy differs"
	rm -f "$dir/$b.copy"
	mkdir -p "$dir/$b.x"
	(cd "$dir/$b.x" && "$tar" -xSf "$dir/$b.tar") || what="${what:+$what, }tar -x failed"
	[ -n "$what" ] || cmp -s "$dir/$kind" "$dir/$b.x/$kind" || what="the extracted file differs"
	rm -f "$dir/$b.x/$kind"
	printf '%s' "$what"
}

# own_run DIR: copy and archive each file with both builds, the patched
# first, then compare each result with the source (own_check: comparing
# must come after both).  On ramfs the source's blocks and the memory are
# counted around each build's copy and archive, and each build's results
# compared at once, so the plain builds get the file made again.
own_run() {
	local dir=$1/own kind b src cp tar before after mem0 mem1 what
	declare -A err
	mkdir -p "$dir"
	for kind in $own_files; do
		src=$dir/$kind
		if ! make_file "$kind" "$src"; then
			put "own:$kind,$fs,patched" "FAIL (not made)"
			put "own:$kind,$fs,plain" "FAIL (not made)"
			continue
		fi
		for b in patched plain; do
			cp=$work/coreutils/$b/src/cp tar=$work/tar/$b/src/tar
			if [ "$fs" = ramfs ] && [ $b = plain ] && ! make_file "$kind" "$src"; then
				err[$b]="not made"
				continue
			fi
			before=$(blocks "$src") mem0=$(unevictable_kib)
			what=
			"$cp" --sparse=auto --reflink=never "$src" "$dir/$b.copy" || what="cp failed"
			(cd "$dir" && "$tar" -cSf "$dir/$b.tar" "$kind") || what="${what:+$what, }tar -c failed"
			after=$(blocks "$src") mem1=$(unevictable_kib)
			if [ "$fs" = ramfs ]; then
				echo "ramfs: $kind, $b cp and tar -c: source st_blocks $before -> $after," \
					"unevictable memory +$(((mem1 - mem0) / 1024)) MiB"
				if [ $b = patched ] && [ "$after" != "$before" ]; then
					what="${what:+$what, }source st_blocks $before -> $after"
				elif [ $b = patched ] && [ "$kind" = three-runs-1g ] &&
					[ $((mem1 - mem0)) -gt 524288 ]; then
					# Half the holes' size: other work may store
					# some memory meanwhile.  (The other files'
					# copies and archives hold their data in it.)
					what="${what:+$what, }$(((mem1 - mem0) / 1024)) MiB more unevictable memory"
				elif [ $b = plain ] && [ "$kind" = three-runs-1g ] &&
					[ "$after" -lt $((before + 1048576)) ]; then
					# Else the assertions above would prove nothing.
					what="${what:+$what, }the plain builds stored no hole ($before -> $after)"
				fi
				[ -n "$what" ] || what=$(own_check "$dir" "$kind" $b)
			fi
			err[$b]=$what
		done
		if [ "$fs" != ramfs ]; then
			for b in patched plain; do
				[ -n "${err[$b]}" ] || err[$b]=$(own_check "$dir" "$kind" $b)
			done
			# Where the plain tar maps with its own SEEK_DATA loop,
			# the archives must be the same bytes.
			if [ -z "${err[patched]}" ] && ! cmp -s "$dir/plain.tar" "$dir/patched.tar"; then
				err[patched]="its archive differs from the plain tar's"
			fi
		fi
		for b in patched plain; do
			if [ -n "${err[$b]}" ]; then
				put "own:$kind,$fs,$b" "FAIL (${err[$b]})"
			else
				put "own:$kind,$fs,$b" PASS
			fi
		done
		rm -f "$src" "$dir"/*.copy "$dir/plain.tar" "$dir/patched.tar"
	done
}

# --- run, file system by file system ----------------------------------------------
export SM_IMAGE_SIZE=${SM_IMAGE_SIZE:-4G}
# The large groups on a tmpfs of their own, the patched build's alone (it
# must pass them, which says more than "as the plain build does"; each
# build spends about 100 s of CPU writing and reading their 30 GiB),
# beside the rest (mounted here: a subshell's mounts would escape the
# cleanup).  sparse05 stores 10 GiB of data there.
large_pid=
large_note=
avail_kib=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
case " $fs_list " in
*" tmpfs "*)
	if [ "${avail_kib:-0}" -lt $((14 << 20)) ]; then
		large_note="tar's largefile groups not run: $((avail_kib >> 20)) GiB of memory free, 14 needed"
	elif SM_MOUNT_OPTS=size=11G sm_mount tmpfs ds-tmpfs-large; then
		(fs=tmpfs && tar_run patched "$SM_DIR" large) &
		large_pid=$!
		bg_pids+=("$large_pid")
	else
		fail "tmpfs: cannot mount here"
	fi
	;;
esac
ran_fs=
for fs in $fs_list; do
	t0=$SECONDS
	if ! sm_mount "$fs" "ds-$fs"; then
		fail "$fs: cannot mount here"
		continue
	fi
	ran_fs+=" $fs"
	suites plain "$SM_DIR" &
	p1=$!
	suites patched "$SM_DIR" &
	p2=$!
	bg_pids+=("$p1" "$p2")
	wait "$p1" || fail "$fs: the plain build's suites stopped (status $?)"
	wait "$p2" || fail "$fs: the patched build's suites stopped (status $?)"
	own_run "$SM_DIR"
	rm -rf "${SM_DIR:?}"/*
	echo "$fs: done in $((SECONDS - t0)) s"
done
t0=$SECONDS
if [ -n "$large_pid" ]; then
	wait "$large_pid" || fail "tmpfs: tar's largefile groups stopped (status $?)"
	echo "tmpfs: tar's largefile groups done $((SECONDS - t0)) s later"
fi
bg_pids=()

# --- the table -----------------------------------------------------------------------
# Where a harness broke the same way in both builds, the rows would agree:
# so each suite must also pass something on each file system, tar's
# largefile groups must pass where they ran, and "not run" is a failure.
declare -A passes
rows="$cu_tests $(awk '{ print $2 }' <<<"$tar_small$nl$tar_large" | tr '\n' ' ')"
for kind in $own_files; do rows+=" own:$kind"; done
printf '\n| test |'
for fs in $ran_fs; do printf ' %s plain | %s patched |' "$fs" "$fs"; done
printf '\n|---|'
for fs in $ran_fs; do printf -- '---|---|'; done
printf '\n'
for t in $rows; do
	printf '| %s |' "$t"
	for fs in $ran_fs; do
		p=$(got "$t,$fs,plain") q=$(got "$t,$fs,patched")
		case $t in
		sparse03 | sparse05)
			if [ "$fs" != tmpfs ] || [ -n "$large_note" ]; then
				printf ' - | - |'
				continue
			fi
			[ "$q" = PASS ] || notes+="FAIL: $t on tmpfs: $q (it must pass there)$nl"
			[ "$q" = PASS ] || failures=$((failures + 1))
			printf ' - | %s |' "$q"
			continue
			;;
		esac
		printf ' %s | %s |' "$p" "$q"
		case $t in
		own:*)
			if [ "$p" != PASS ] || [ "$q" != PASS ]; then
				notes+="FAIL: $t on $fs: plain $p, patched $q$nl"
				failures=$((failures + 1))
			fi
			;;
		*)
			if [ "$p" != "$q" ] || [ "$p" = "not run" ]; then
				notes+="FAIL: $t on $fs: plain $p, patched $q$nl"
				failures=$((failures + 1))
			fi
			case $p in FAIL*) notes+="note: $t fails on $fs in both builds$nl" ;; esac
			suite=$([ "${t%.sh}" != "$t" ] && echo coreutils || echo tar)
			[ "$p" != PASS ] || passes[$suite,$fs]=1
			;;
		esac
	done
	printf '\n'
done
for fs in $ran_fs; do
	for suite in coreutils tar; do
		if [ -z "${passes[$suite,$fs]:-}" ]; then
			notes+="FAIL: $suite: no test passed on $fs in either build$nl"
			failures=$((failures + 1))
		fi
	done
done
printf '\n%s' "$notes"
[ -z "$large_note" ] || echo "note: $large_note"
if [ "$failures" != 0 ]; then
	echo "$failures failures; the logs of what failed:"
	for f in "$work"/logs/*; do
		grep -q 'FAIL' "$f" 2>/dev/null && { echo "--- $f"; tail -n 40 "$f"; }
	done
	exit 1
fi
echo "every test ends the same way with the library as without it, on$ran_fs"
