/* SPDX-License-Identifier: MIT */
/*
 * The system layer for a system without a file of its own (see
 * sparse-map-private.h, "sys-<system>.c"): POSIX calls only.  No file
 * system type, no cachestat; a block device is sized by seeking to its
 * end.  configure --with-platform=posix builds it on Linux too, so that
 * it is compiled and tested here.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse-map-private.h"

static int os_fdatasync(int fd)
{
	return fdatasync(fd);
}

/* Block devices, sized by seeking to their end (the offset put back). */
static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	return S_ISBLK(st->st_mode) ? sm_sys_size_by_seeking(fd, size) : 0;
}

/* No f_type the probe knows, no cachestat. */
const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
	.disk = os_disk,
};
