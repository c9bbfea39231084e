#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A 32-bit x86 build (large-file support from configure's AC_SYS_LARGEFILE),
# run natively where the kernel runs 32-bit programs and else under
# qemu-i386; .ci/emulated.sh says what runs and where.  portable maps every
# layout, including one of 16 GiB with data and holes past 4 GiB.
# Debian's cross compiler gcc-i686-linux-gnu builds it rather than gcc
# -m32: gcc-multilib conflicts with every gcc-*-linux-gnu cross compiler,
# so the s390x stage could not install its own beside it.
. "$(dirname "$0")/../emulated.sh"
emulated_stage i686-linux-gnu i386
grep -q 'pointer: 4)' "$emulated_dir/build/portable.out" || { echo "FAIL: not a 32-bit build"; exit 1; }
