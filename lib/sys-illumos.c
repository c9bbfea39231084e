/* SPDX-License-Identifier: MIT */
/*
 * illumos's (and Solaris's) part of the system layer (see
 * sparse-map-private.h, "sys-<system>.c").  Written to the documented
 * interfaces; not compiled by this project's CI, which runs on Linux.
 * Disks are block and raw (character) devices: DKIOCGMEDIAINFO
 * (<sys/dkio.h>) gives dki_capacity blocks of dki_lbsize bytes.
 * statvfs names the file system by string, not by Linux's magic numbers,
 * so the probe is told none.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/dkio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sparse-map-private.h"

static int os_fdatasync(int fd)
{
	return fdatasync(fd);
}

static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	struct dk_minfo mi;
	int r;

	if (!S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode))
		return 0;
	r = sm_sys_ioctl(fd, DKIOCGMEDIAINFO, &mi);
	if (sm_sys_unsupported(r))
		return 0;	/* a terminal, /dev/null, ...: not a disk */
	if (r < 0)
		return r;
	if (mi.dki_lbsize == 0 || mi.dki_capacity > (uint64_t)INT64_MAX / mi.dki_lbsize)
		return -EOVERFLOW;
	*size = (int64_t)(mi.dki_capacity * mi.dki_lbsize);
	return 1;
}

/* No f_type the probe knows, no cachestat. */
const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
	.disk = os_disk,
};
