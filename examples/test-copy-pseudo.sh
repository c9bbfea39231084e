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
# Each copier runs some 1,700 times: not through libtool's wrappers.
ex_unwrap adopt
ex_unwrap ex_cp
ex_scratch
work=$EX_SCRATCH

(exec sleep 600) &
pid=$!
# A stopped process ignores ex_cleanup's SIGTERM until continued.
trap 'kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; ex_cleanup' EXIT
kill -STOP "$pid"

compared=0 failed=0
# group NAME FILE...: copy each file both ways (layout-tool copies: a read
# as cat reads, both copiers, a second read), one line of counts for the
# group, and a line for each copy that differs from what cat read.
group() {
	local name=$1 out rc=0
	shift
	out=$(printf '%s\n' "$@" | "$ex_tool" copies "$name" "$work" "$ex_cp" "$adopt") || rc=$?
	echo "$out"
	[ "$rc" -le 1 ] || ex_fail "layout-tool copies: status $rc"
	[ "$rc" = 0 ] || failed=$((failed + 1))
	compared=$((compared + $(echo "$out" | sed -n "s|^$name: \([0-9]*\) compared.*|\1|p")))
}

# Counts of the system's inodes, dentries and open files: a copier changes
# them while it copies (its new file, its descriptors).
# And the memory a process maps, page by page (smaps, smaps_rollup,
# numa_maps): the memory manager's ageing and reclaim change its counts
# between any two reads, even of a stopped process; under CI's load a
# copy was seen to differ from two cats around it, three times in a row.
# And the scheduler's statistics of it (sched, schedstat): its load
# averages decay whenever they are read, and a CI run saw a copy of sched
# differ from two cats around it.
skip='^/proc/sys/fs/(inode-nr|inode-state|dentry-state|file-nr)$|^/proc/[0-9]+/(smaps|smaps_rollup|numa_maps|sched|schedstat)$'
mapfile -t procs < <(find "/proc/$pid" -maxdepth 1 -type f | grep -Ev "$skip" | sort)
group "/proc/$pid" "${procs[@]}"
mapfile -t sys < <(find /proc/sys -type f | grep -Ev "$skip" | sort)
group /proc/sys "${sys[@]}"
if [ -d /sys/kernel ]; then
	mapfile -t sysfs < <(find /sys/kernel /sys/devices/system /sys/devices/virtual -xdev -type f 2>/dev/null |
		sort | head -n 400)
	group /sys "${sysfs[@]}"
fi

[ "$failed" -eq 0 ] || ex_fail "copies differ from cat's in $failed groups (FAIL lines above)"
[ "$compared" -ge 20 ] || ex_fail "only $compared files could be compared"
echo "PASS: $compared files copied as cat copies them"
