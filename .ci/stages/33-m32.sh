#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A 32-bit build (gcc -m32, large-file support from configure's
# AC_SYS_LARGEFILE) running tests/reliability/portable on disk and on tmpfs:
# every layout, including one of 16 GiB with data past 4 GiB.  Check has no
# i386 build installed here (adding the i386 architecture would change the
# machine's apt set-up for every later job), so the stage runs the test
# program that needs no Check; configure is told Check is there to skip
# its pkg-config look-up of the 64-bit one.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-m32
apt-get install -y -q gcc-multilib >/dev/null

rm -rf "$build"
mkdir -p "$build"
cd "$build"
"$src/configure" -q CC="gcc -m32" CHECK_CFLAGS=" " CHECK_LIBS=" " FUSE3_CFLAGS=" " FUSE3_LIBS=" "
make -j2 tests/reliability/portable >/dev/null
dirs=(.)
if [ -w /dev/shm ]; then dirs+=(/dev/shm); fi
./tests/reliability/portable "${dirs[@]}" | tee portable.out
grep -q 'pointer: 4)' portable.out || { echo "not a 32-bit build"; exit 1; }
cd / && rm -rf "$build"
