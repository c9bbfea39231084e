/* SPDX-License-Identifier: MIT */
/*
 * macOS's part of the system layer (see sparse-map-private.h,
 * "sys-<system>.c").  Written to Apple's documented interfaces; CI
 * cross-builds and links it (.ci/stages/38-macos.sh) but cannot run it.
 *  - No fdatasync(2) is declared: fsync(2) writes the data out, which is
 *    what SPARSE_MAP_SYNC needs (not F_FULLFSYNC, which also empties the
 *    drive's cache: a flush nobody asked for).
 *  - Disks are /dev/diskN (block) and /dev/rdiskN (character) devices:
 *    DKIOCGETBLOCKCOUNT blocks of DKIOCGETBLOCKSIZE bytes (<sys/disk.h>).
 *  - statfs's f_type numbers are not Linux's, so the probe is told none.
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
	return fsync(fd);
}

static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	uint64_t count = 0;
	uint32_t block = 0;
	int r;

	if (!S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode))
		return 0;
	r = sm_sys_ioctl(fd, DKIOCGETBLOCKCOUNT, &count);
	if (sm_sys_unsupported(r))
		return 0;	/* a terminal, /dev/null, ...: not a disk */
	if (r < 0)
		return r;
	r = sm_sys_ioctl(fd, DKIOCGETBLOCKSIZE, &block);
	if (r < 0)
		return r;
	if (block == 0 || count > (uint64_t)INT64_MAX / block)
		return -EOVERFLOW;
	*size = (int64_t)(count * block);
	return 1;
}

/* No f_type the probe knows, no cachestat. */
const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
	.disk = os_disk,
};
