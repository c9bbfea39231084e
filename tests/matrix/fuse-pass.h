/* SPDX-License-Identifier: MIT */
/*
 * The pass-through FUSE file system the test file systems share: the flat
 * directory BACKING (no subdirectories) served at MOUNTPOINT, with each
 * file's attributes as the backing file has them, st_blocks too, so the
 * library's probe can see that a file is sparse.  fi->fh is the backing
 * file's descriptor.  It has no lseek and no FIEMAP: a file system built
 * on it adds what it is about.
 */
#ifndef SM_FUSE_PASS_H
#define SM_FUSE_PASS_H

#define FUSE_USE_VERSION 31
#include <fuse.h>

extern const struct fuse_operations fp_pass_ops;

/* argv is PROGRAM BACKING MOUNTPOINT: serve ops in the foreground, one
 * request at a time, until unmounted; the exit status for main(). */
int fp_main(int argc, char **argv, const struct fuse_operations *ops);

#endif
