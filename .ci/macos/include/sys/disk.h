/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for macOS's <sys/disk.h>, for .ci/stages/38-macos.sh alone:
 * the Zig toolchain that stage cross-builds with bundles Apple's libc
 * headers but not this one.  It gives the two requests lib/sys-darwin.c
 * asks, with the numbers Apple's header documents; never installed, and
 * never seen by a build against a real macOS SDK, whose own header the
 * first branch below takes where one is on the include path.
 */
#ifndef SM_STAND_IN_SYS_DISK_H
#define SM_STAND_IN_SYS_DISK_H

#if defined(__has_include_next) && __has_include_next(<sys/disk.h>)
#include_next <sys/disk.h>
#else
#include <stdint.h>
#include <sys/ioccom.h>

/* Bytes per block, and the number of blocks, of a disk device. */
#define DKIOCGETBLOCKSIZE _IOR('d', 24, uint32_t)
#define DKIOCGETBLOCKCOUNT _IOR('d', 25, uint64_t)
#endif

#endif
