#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A build with musl (musl-gcc) running tests/reliability/portable.  musl's
# headers have no linux/ directory, so the kernel's (linux/fs.h,
# linux/fiemap.h) come from a directory of links to them: without them the
# build would drop FIEMAP and the block device size.  No Check for musl
# either: the stage runs the test program that needs none.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-musl
apt-get install -y -q musl-tools linux-libc-dev >/dev/null

rm -rf "$build"
mkdir -p "$build/kernel-headers"
cd "$build"
arch_inc=/usr/include/$(gcc -dumpmachine)
ln -s /usr/include/linux /usr/include/asm-generic kernel-headers/
ln -s "$arch_inc/asm" kernel-headers/asm
"$src/configure" -q CC=musl-gcc CPPFLAGS="-idirafter $build/kernel-headers" \
	--disable-shared --enable-static \
	CHECK_CFLAGS=" " CHECK_LIBS=" " FUSE3_CFLAGS=" " FUSE3_LIBS=" "
grep -q 'define SM_HAVE_FIEMAP 1' config.h || { echo "musl build lost FIEMAP"; exit 1; }
make -j2 tests/reliability/portable >/dev/null
dirs=(.)
if [ -w /dev/shm ]; then dirs+=(/dev/shm); fi
./tests/reliability/portable "${dirs[@]}" | tee portable.out
grep -q 'libc: not glibc' portable.out || { echo "not a musl build"; exit 1; }
cd / && rm -rf "$build"
