/* SPDX-License-Identifier: MIT */
/*
 * Linux's part of the system layer (see sparse-map-private.h, "sys-<system>.c"):
 * fstatfs's f_type, which the probe knows by Linux's magic numbers;
 * cachestat(2); block devices sized by BLKGETSIZE64; the kernel's release,
 * by which probe.c knows how far Btrfs's FIEMAP can be trusted.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef HAVE_LINUX_FS_H
#include <linux/fs.h>
#endif
#ifdef HAVE_SYS_VFS_H
#include <sys/vfs.h>
#endif

#include "sparse-map-private.h"

static int os_fdatasync(int fd)
{
	return fdatasync(fd);
}

#if defined(HAVE_SYS_VFS_H) && defined(HAVE_FSTATFS)
static int os_fs_type(int fd, int64_t *type)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return -1;
	/* A 32-bit f_type is signed: ramfs's and Btrfs's magic numbers
	 * would come out negative. */
	*type = sizeof(sf.f_type) == 4 ? (int64_t)(uint32_t)sf.f_type : (int64_t)sf.f_type;
	return 0;
}
#endif

/*
 * cachestat(2), Linux 6.5.  C libraries and older kernel headers may not
 * name it; its number is 451 on every architecture but alpha (561), which
 * the syscall table of 6.5 gave all new calls alike.
 */
#if !defined(__NR_cachestat) && !defined(__alpha__)
#define __NR_cachestat 451
#endif
#ifdef __NR_cachestat
static int os_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	struct { uint64_t off, len; } range = { (uint64_t)off, (uint64_t)len };
	struct { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted; } k;

	if (syscall(__NR_cachestat, fd, &range, &k, 0) < 0)
		return -1;
	cs->nr_cache = (int64_t)k.nr_cache;
	cs->nr_dirty = (int64_t)k.nr_dirty;
	cs->nr_writeback = (int64_t)k.nr_writeback;
	return 0;
}
#endif

static int os_kernel_release(char *buf, size_t len)
{
	struct utsname u;
	size_t n;

	if (uname(&u) < 0)
		return -1;
	n = strnlen(u.release, sizeof(u.release));
	if (n >= len)
		n = len - 1;
	memcpy(buf, u.release, n);
	buf[n] = '\0';
	return 0;
}

/* Disks are block devices; fstat says 0 bytes, BLKGETSIZE64 the size (or,
 * built without kernel headers, seeking to the end). */
static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	if (!S_ISBLK(st->st_mode))
		return 0;
#ifdef BLKGETSIZE64
	uint64_t bytes = 0;
	int r = sm_sys_ioctl(fd, BLKGETSIZE64, &bytes);

	if (r < 0)
		return r;
	if (bytes > (uint64_t)INT64_MAX)
		return -EOVERFLOW;
	*size = (int64_t)bytes;
	return 1;
#else
	return sm_sys_size_by_seeking(fd, size);
#endif
}

/* Without fstatfs or a cachestat number (alpha), sys.c answers as for a
 * system that has none. */
const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
#if defined(HAVE_SYS_VFS_H) && defined(HAVE_FSTATFS)
	.fs_type = os_fs_type,
#endif
#ifdef __NR_cachestat
	.cachestat = os_cachestat,
#endif
	.disk = os_disk,
	.kernel_release = os_kernel_release,
};
