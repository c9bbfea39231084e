/* SPDX-License-Identifier: MIT */
/*
 * fuse-nolseek BACKING MOUNTPOINT: the pass-through FUSE file system of
 * fuse-pass.c and nothing more.  Without an lseek of its own, the kernel
 * answers SEEK_DATA/SEEK_HOLE with its generic stub (all data), and there
 * is no FIEMAP.  Runs in the foreground until unmounted.
 */
#include "config.h"

#include "fuse-pass.h"

int main(int argc, char **argv)
{
	return fp_main(argc, argv, &fp_pass_ops);
}
