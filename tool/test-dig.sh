#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-map dig: a file written dense (data, 1 MiB of stored zeroes, data,
# 2 MiB of zeroes) reads the same after dig (cmp against a copy), and its
# blocks drop by the zeroes; --dry-run changes nothing; a second process
# holding the file open makes dig refuse it (status 1, one line, nothing
# punched) unless --force; a lease broken during the dig stops it.  As root
# on ext4, XFS, Btrfs and tmpfs; otherwise in the build tree, where the
# file system may grant no lease (then dig must say so and refuse).
set -euo pipefail
# shellcheck source=../tests/mounts.sh
. "${top_srcdir:?run this test through make check}/tests/mounts.sh"
# shellcheck source=../examples/test-lib.sh
. "$top_srcdir/examples/test-lib.sh"
tool=$top_builddir/tool/sparse-map

# dense FILE: 64 KiB of data, 1 MiB of zeroes, 64 KiB of data, 2 MiB of zeroes.
dense() {
	{
		head -c 65536 /dev/urandom
		head -c 1048576 /dev/zero
		head -c 65536 /dev/urandom
		head -c 2097152 /dev/zero
	} >"$1"
	sync "$1"
}

dig_check() {
	local dir=$1 f=$1/dense.img b0 b1 rc out pid
	dense "$f"
	cp "$f" "$dir/ref"
	b0=$(stat -c %b "$f")
	"$tool" dig --dry-run "$f" | grep -qE ": (up to )?3145728 bytes of zeroes could be punched" ||
		ex_fail "$dir: --dry-run: $("$tool" dig --dry-run "$f")"
	[ "$(stat -c %b "$f")" = "$b0" ] || ex_fail "$dir: --dry-run changed the blocks"

	# Held open by another process: refused, nothing punched.
	sleep 60 <"$f" &
	pid=$!
	EX_PIDS+=("$pid")
	set +e
	"$tool" dig "$f" >/dev/null 2>"$dir/err"
	rc=$?
	set -e
	[ "$rc" = 1 ] || ex_fail "$dir: dig of a file open elsewhere: status $rc"
	grep -qE "^sparse-map: $f: another process has it open: no write lease \(.*--force.*\)$" "$dir/err" ||
		ex_fail "$dir: dig of a file open elsewhere said: $(cat "$dir/err")"
	[ "$(stat -c %b "$f")" = "$b0" ] || ex_fail "$dir: a refused dig punched"
	kill "$pid"
	wait "$pid" 2>/dev/null || true

	out=$("$tool" dig "$f") || ex_fail "$dir: dig failed"
	echo "$out"
	cmp "$f" "$dir/ref" || ex_fail "$dir: dig changed what the file reads"
	sync "$f"
	b1=$(stat -c %b "$f")
	# 3 MiB of zeroes is 6144 blocks of 512; the file system may keep a
	# little of it (a partly zero block, metadata): most must go.
	[ $((b0 - b1)) -ge 5120 ] || ex_fail "$dir: blocks $b0 -> $b1 after dig"
	echo "$out" | grep -qE ": [0-9]+ bytes reclaimed" || ex_fail "$dir: dig's report: $out"
	rm -f "$f" "$dir/ref" "$dir/err"
}

# dig_stops DIR: an open while dig runs breaks its lease, and dig stops
# before its next punch (status 1, "another process opened it"), and the
# file reads the same.  strace delays each punch by 0.3 s, so that the open
# lands in the middle of the dig.
dig_stops() {
	local dir=$1 f=$1/many.img rc dpid
	if ! command -v strace >/dev/null; then
		echo "$dir: no strace here: a lease broken during a dig not tested"
		return 0
	fi
	for _ in $(seq 16); do
		head -c 4096 /dev/urandom
		head -c 1048576 /dev/zero
	done >"$f"
	cp "$f" "$dir/ref"
	sync "$f"
	# (LeakSanitizer cannot work under ptrace: off for this one run.)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -o /dev/null -e trace=fallocate -e inject=fallocate:delay_enter=300000 \
		"$tool" dig "$f" >"$dir/out" 2>"$dir/err" &
	dpid=$!
	EX_PIDS+=("$dpid")
	for _ in $(seq 500); do
		grep -q "LEASE.*WRITE" /proc/locks 2>/dev/null && break
		sleep 0.01
	done
	sleep 0.5	# a punch or two
	cat "$f" >/dev/null	# waits until dig gives the lease back
	set +e
	wait "$dpid"
	rc=$?
	set -e
	cmp "$f" "$dir/ref" || ex_fail "$dir: an interrupted dig changed what the file reads"
	[ "$rc" = 1 ] || ex_fail "$dir: dig went on after the lease broke: status $rc, $(cat "$dir/out")"
	grep -qE "another process opened it: stopped after [0-9]+ bytes" "$dir/err" ||
		ex_fail "$dir: an interrupted dig said: $(cat "$dir/err")"
	echo "$dir: dig stopped at the lease break: $(cat "$dir/err")"
	rm -f "$f" "$dir/ref" "$dir/out" "$dir/err"
}

if ! sm_can_mount; then
	ex_scratch
	dense "$EX_SCRATCH/f"
	set +e
	"$tool" dig "$EX_SCRATCH/f" 2>"$EX_SCRATCH/err"
	rc=$?
	set -e
	if [ "$rc" != 0 ]; then
		grep -q "no write lease\|grants no leases\|cannot punch" "$EX_SCRATCH/err" ||
			ex_fail "dig in the build tree: $(cat "$EX_SCRATCH/err")"
		echo "SKIP: the build tree gives no lease or punch: $(cat "$EX_SCRATCH/err")"
		exit 77
	fi
	exit 0
fi
sm_mounts_init
ex_traps
for fs in ext4 xfs btrfs tmpfs; do
	if ! sm_mount "$fs" "dig-$fs"; then
		[ "$fs" = tmpfs ] && ex_fail "tmpfs cannot be mounted"
		echo "$fs cannot be mounted here: not tested"
		continue
	fi
	dig_check "$SM_DIR"
	dig_stops "$SM_DIR"
	echo "$fs: dig reclaims the zeroes, refuses a file open elsewhere, keeps the content"
done
