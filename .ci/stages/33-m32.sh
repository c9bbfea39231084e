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
# Some kernels run no 32-bit programs (no IA32 emulation): there the build
# is a cross build, compiled and linked (which finds what does not build
# for 32 bits) but not run.
echo 'int main(void) { return 0; }' >probe.c
gcc -m32 probe.c -o probe
if ! ./probe 2>/dev/null; then
	"$src/configure" -q --host=i686-linux-gnu CC="gcc -m32" CHECK_CFLAGS=" " CHECK_LIBS=" " \
		FUSE3_CFLAGS=" " FUSE3_LIBS=" "
	make -j2 tests/reliability/portable >/dev/null
	# ELF class, byte 4 of the header: 1 is 32-bit (libtool may have put
	# the program under .libs/, behind a wrapper script).
	bin=tests/reliability/portable
	[ -f tests/reliability/.libs/portable ] && bin=tests/reliability/.libs/portable
	[ "$(od -An -tx1 -j4 -N1 "$bin" | tr -d ' ')" = 01 ] || { echo "not a 32-bit build"; exit 1; }
	echo "m32: built and linked; not run: this kernel runs no 32-bit programs"
	cd / && rm -rf "$build"
	exit 0
fi
"$src/configure" -q CC="gcc -m32" CHECK_CFLAGS=" " CHECK_LIBS=" " FUSE3_CFLAGS=" " FUSE3_LIBS=" "
make -j2 tests/reliability/portable >/dev/null
dirs=(.)
if [ -w /dev/shm ]; then dirs+=(/dev/shm); fi
./tests/reliability/portable "${dirs[@]}" | tee portable.out
grep -q 'pointer: 4)' portable.out || { echo "not a 32-bit build"; exit 1; }
cd / && rm -rf "$build"
