# SPDX-License-Identifier: MIT
# Sourced by the example tests (after tests/mounts.sh, if they mount): the
# programs under test, a scratch directory in the build tree, and one
# cleanup for everything a test started.
# shellcheck shell=bash

: "${top_builddir:?run this test through make check}" "${top_srcdir:?}"
# shellcheck disable=SC2034 # used by the tests that source this
ex_ls=$top_builddir/examples/sparse-ls
# shellcheck disable=SC2034
ex_cp=$top_builddir/examples/sparse-cp
# shellcheck disable=SC2034
ex_tool=$top_builddir/examples/layout-tool
EX_SCRATCH=
EX_PIDS=()

ex_cleanup() {
	local pid
	for pid in "${EX_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	EX_PIDS=()
	[ -n "$EX_SCRATCH" ] && rm -rf "$EX_SCRATCH"
	EX_SCRATCH=
	if declare -F sm_mounts_cleanup >/dev/null; then
		sm_mounts_cleanup
	fi
}
trap ex_cleanup EXIT
trap 'ex_cleanup; exit 130' INT TERM HUP

# Call after sm_mounts_init, whose traps these replace (ex_cleanup calls its cleanup).
ex_traps() {
	trap ex_cleanup EXIT
	trap 'ex_cleanup; exit 130' INT TERM HUP
}

# ex_unwrap VAR: where the program named by the variable VAR is a libtool
# wrapper script, point VAR at the program it runs and put the build's
# library on LD_LIBRARY_PATH.  For tests that run a program thousands of
# times: the wrapper costs ten times the program (0.3 s a run on a busy
# machine).
ex_unwrap() {
	local -n ex_prog=$1
	local dir=${ex_prog%/*} base=${ex_prog##*/} real
	[ "$(head -c 2 "$ex_prog")" = "#!" ] || return 0
	for real in "$dir/.libs/$base" "$dir/.libs/lt-$base"; do
		if [ -x "$real" ] && [ "$(head -c 4 "$real")" = $'\x7fELF' ]; then
			export LD_LIBRARY_PATH="$top_builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			ex_prog=$real
			return 0
		fi
	done
}

ex_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# A new directory in the build tree; removed at exit.
ex_scratch() {
	EX_SCRATCH=$(mktemp -d "$top_builddir/examples/scratch.XXXXXX")
}

# True if files in directory $1 can have holes: a 1 MiB file with one
# written block holds fewer than 1 MiB.
ex_fs_has_holes() {
	local f=$1/.holes-probe blocks
	truncate -s 1M "$f"
	printf x | dd of="$f" conv=notrunc status=none
	sync "$f" 2>/dev/null || true
	blocks=$(stat -c %b "$f")
	rm -f "$f"
	[ "$((blocks * 512))" -lt 1048576 ]
}

# mkdata FILE OFFSET_MIB LENGTH_MIB: write non-zero bytes there, in place.
ex_mkdata() {
	dd if=/dev/zero bs=1M count="$3" status=none | tr '\0' 'd' |
		dd of="$1" bs=1M seek="$2" conv=notrunc iflag=fullblock status=none
}
