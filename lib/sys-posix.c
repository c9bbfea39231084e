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

/* lseek(SEEK_END) on a block device gives its size on the systems that
 * have them; the offset is put back at once. */
static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	int64_t here, end, back;

	if (!S_ISBLK(st->st_mode))
		return 0;
	here = sm_sys_lseek(fd, 0, SEEK_CUR);
	if (here < 0)
		return (int)here;
	end = sm_sys_lseek(fd, 0, SEEK_END);
	back = sm_sys_lseek(fd, here, SEEK_SET);
	if (end < 0)
		return (int)end;
	if (back < 0)
		return (int)back;
	*size = end;
	return 1;
}

/* No f_type the probe knows, no cachestat. */
const struct sm_os sm_os = {
	.name = "POSIX",
	.fdatasync = os_fdatasync,
	.disk = os_disk,
};
