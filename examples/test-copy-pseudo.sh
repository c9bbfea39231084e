#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files that hold more, or less, than their size says: procfs files say 0
# bytes and read what they read, sysfs attributes say 4096 and read a few.
# sparse-cp and the copier of sparse_map(3) ADOPTING must write what cat
# writes, byte for byte, for every readable regular file of a stopped
# process's /proc/PID, of /proc/sys, and for a few hundred sysfs files.
# (Not /proc/self: each reader would see itself.)  A file that cat reads
# differently before and after the copies changes on its own (or with the
# files the copies make) and is left out, as is one cat cannot
# read or that reads more than 1 MiB (pagemap reads the whole address
# space); the counts are printed.  Skips where /proc or /sys is absent.
set -euo pipefail
# shellcheck source=test-lib.sh
. "${top_srcdir:?run this test through make check}/examples/test-lib.sh"

adopt=$top_builddir/man/examples/sparse_map-adopt-copy
if [ ! -r /proc/self/status ] || [ ! -d /proc/sys ]; then
	echo "SKIP: no procfs here"
	exit 77
fi
[ -x "$adopt" ] || ex_fail "$adopt is not built"
ex_scratch
work=$EX_SCRATCH

(exec sleep 600) &
pid=$!
# A stopped process ignores ex_cleanup's SIGTERM until continued.
trap 'kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; ex_cleanup' EXIT
kill -STOP "$pid"

compared=0 changing=0 unreadable=0 failed=0
# attempt FILE: cat it, copy it both ways, cat it again.  Status 0 if both
# copies are what cat read, 1 if not (the reason in $why), 2 if the two
# cats differ: the file changes on its own.
attempt() {
	local f=$1
	timeout 5 cat "$f" >"$work/a" 2>/dev/null || return 2
	rm -f "$work/cp" "$work/ad"
	timeout 10 "$ex_cp" "$f" "$work/cp" 2>"$work/cp-err" || true
	timeout 10 "$adopt" "$f" "$work/ad" >/dev/null 2>"$work/ad-err" || true
	timeout 5 cat "$f" >"$work/b" 2>/dev/null && cmp -s "$work/a" "$work/b" || return 2
	why=
	if [ -s "$work/cp-err" ] || [ ! -f "$work/cp" ]; then
		why="sparse-cp: $(cat "$work/cp-err")"
	elif ! cmp -s "$work/a" "$work/cp"; then
		why="sparse-cp wrote $(stat -c %s "$work/cp") bytes, cat $(stat -c %s "$work/a"), or other bytes"
	elif [ -s "$work/ad-err" ] || [ ! -f "$work/ad" ]; then
		why="sparse_map(3)'s copier: $(cat "$work/ad-err")"
	elif ! cmp -s "$work/a" "$work/ad"; then
		why="sparse_map(3)'s copier wrote $(stat -c %s "$work/ad") bytes, cat $(stat -c %s "$work/a"), or other bytes"
	fi
	[ -z "$why" ]
}

# one FILE: up to three attempts, since some files change between reads
# without the two cats around a copy seeing it (a process's Pss, which
# others' mappings change; the clock in /proc/PID/sched).
one() {
	local f=$1 n i rc
	[ -f "$f" ] && [ -r "$f" ] || return 0
	case $f in
	# Counts of the system's inodes, dentries and open files: a copier
	# changes them while it copies (its new file, its descriptors).
	/proc/sys/fs/inode-nr | /proc/sys/fs/inode-state | /proc/sys/fs/dentry-state | /proc/sys/fs/file-nr)
		changing=$((changing + 1))
		return 0 ;;
	esac
	n=$(timeout 5 head -c $((1 << 20 | 1)) "$f" 2>/dev/null | wc -c) || n=-1
	if [ "$n" -lt 0 ] || [ "$n" -gt $((1 << 20)) ] || ! timeout 5 cat "$f" >/dev/null 2>&1; then
		unreadable=$((unreadable + 1))
		return 0
	fi
	for i in 1 2 3; do
		rc=0
		attempt "$f" || rc=$?
		[ "$rc" -eq 1 ] || break
	done
	case $rc in
	0) compared=$((compared + 1)) ;;
	1) echo "FAIL: $f: $why"; failed=$((failed + 1)); compared=$((compared + 1)) ;;
	2) changing=$((changing + 1)) ;;
	esac
}

# group NAME FILE...: one line of counts for the group.
group() {
	local name=$1 c0=$compared x0=$changing u0=$unreadable f
	shift
	for f in "$@"; do
		one "$f"
	done
	echo "$name: $((compared - c0)) compared, $((changing - x0)) changing on their own, $((unreadable - u0)) not readable by cat"
}

mapfile -t procs < <(find "/proc/$pid" -maxdepth 1 -type f | sort)
group "/proc/$pid" "${procs[@]}"
mapfile -t sys < <(find /proc/sys -type f | sort)
group /proc/sys "${sys[@]}"
if [ -d /sys/kernel ]; then
	mapfile -t sysfs < <(find /sys/kernel /sys/devices/system /sys/devices/virtual -xdev -type f 2>/dev/null |
		sort | head -n 400)
	group /sys "${sysfs[@]}"
fi

[ "$failed" -eq 0 ] || ex_fail "$failed copies differ from cat's"
[ "$compared" -ge 20 ] || ex_fail "only $compared files could be compared"
echo "PASS: $compared files copied as cat copies them"
