/* SPDX-License-Identifier: MIT */
/*
 * FreeBSD's part of the system layer (see sparse-map-private.h,
 * "sys-<system>.c").  Written to FreeBSD's documented interfaces; not
 * compiled by this project's CI, which runs on Linux.
 * Disks are character devices there (there are no block devices): a
 * character device that answers DIOCGMEDIASIZE (<sys/disk.h>) is a disk
 * of that many bytes; any other is not a file to map.  statfs's f_type
 * numbers are not Linux's, so the probe is told none.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/disk.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse-map-private.h"

static int os_fdatasync(int fd)
{
	return fdatasync(fd);
}

static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	off_t bytes = 0;
	int r;

	if (!S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode))
		return 0;
	r = sm_sys_ioctl(fd, DIOCGMEDIASIZE, &bytes);
	if (sm_sys_unsupported(r))
		return 0;	/* a terminal, /dev/null, ...: not a disk */
	if (r < 0)
		return r;
	if (bytes < 0)
		return -EIO;
	*size = (int64_t)bytes;
	return 1;
}

/* No f_type the probe knows, no cachestat. */
const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
	.disk = os_disk,
};
