/* SPDX-License-Identifier: MIT */
/*
 * Every system call and allocation of the library goes through here, so that
 * EINTR is retried in one place, errors become -errno in one place, and the
 * tests have one seam at which to inject faults.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#ifdef HAVE_SYS_IOCTL_H
#include <sys/ioctl.h>
#endif
#ifdef HAVE_MINCORE
#include <sys/mman.h>
#endif
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#if defined(SM_HAVE_FIEMAP) && defined(HAVE_LINUX_FS_H)
#include <linux/fs.h>
#include <linux/fiemap.h>
#endif

#include "sparse-map-private.h"
#include "sys-calls.h"

/* The C library's calls, with one fixed signature each (ioctl and fcntl
 * differ between C libraries), or the system layer's where it has its own
 * (Windows has no pread or fcntl). */
static int libc_fstat(int fd, struct stat *st) { return fstat(fd, st); }
static int libc_getfl(int fd)
{
	if (sm_os.getfl)
		return sm_os.getfl(fd);
#ifdef HAVE_FCNTL
	return fcntl(fd, F_GETFL);
#else
	errno = ENOSYS;
	return -1;
#endif
}
static off_t libc_lseek(int fd, off_t off, int whence) { return lseek(fd, off, whence); }
static ssize_t libc_pread(int fd, void *buf, size_t len, off_t off)
{
	if (sm_os.pread)
		return sm_os.pread(fd, buf, len, (int64_t)off);
#ifdef HAVE_PREAD
	return pread(fd, buf, len, off);
#else
	errno = ENOSYS;
	return -1;
#endif
}
static int libc_fdatasync(int fd) { return sm_os.fdatasync(fd); }
static int libc_ioctl(int fd, unsigned long req, void *arg)
{
#ifdef HAVE_SYS_IOCTL_H
	return ioctl(fd, req, arg);
#else
	(void)fd; (void)req; (void)arg;
	errno = ENOTTY;
	return -1;
#endif
}
static int libc_allocated_ranges(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
				 size_t max, size_t *n)
{
	if (sm_os.allocated_ranges)
		return sm_os.allocated_ranges(fd, off, len, out, max, n);
	errno = EOPNOTSUPP;
	return -1;
}
static int libc_fstatfs(int fd, int64_t *type)
{
	if (sm_os.fs_type)
		return sm_os.fs_type(fd, type);
	*type = 0;
	return 0;
}
static int libc_uname(char *buf, size_t len)
{
	if (sm_os.kernel_release)
		return sm_os.kernel_release(buf, len);
	errno = ENOSYS;
	return -1;
}
static int libc_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	if (sm_os.cachestat)
		return sm_os.cachestat(fd, off, len, cs);
	errno = ENOSYS;
	return -1;
}
static int libc_fadvise(int fd, off_t off, off_t len, int advice)
{
#ifdef HAVE_POSIX_FADVISE
	int r = posix_fadvise(fd, off, len, advice);

	if (r != 0) {
		errno = r;
		return -1;
	}
	return 0;
#else
	(void)fd; (void)off; (void)len; (void)advice;
	errno = ENOSYS;
	return -1;
#endif
}
static int libc_mincore(int fd, off_t off, size_t len, unsigned char *vec)
{
#ifdef HAVE_MINCORE
	/* Mapped, never touched: no page is read, faulted in or stored. */
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	int r, e;

	if (p == MAP_FAILED)
		return -1;
	r = mincore(p, len, (void *)vec);
	e = errno;
	munmap(p, len);
	errno = e;
	return r;
#else
	(void)fd; (void)off; (void)len; (void)vec;
	errno = ENOSYS;
	return -1;
#endif
}
static void *libc_malloc(size_t size) { return malloc(size); }
static int libc_posix_memalign(void **p, size_t align, size_t size)
{
#ifdef HAVE_POSIX_MEMALIGN
	return posix_memalign(p, align, size);
#else
	/* Alignment is only for speed here: malloc's, so that free() frees it. */
	(void)align;
	*p = malloc(size);
	return *p ? 0 : ENOMEM;
#endif
}
static void libc_free(void *p) { free(p); }

/* -errno after a call that failed; -EIO if it failed without saying why
 * (a C runtime that leaves errno 0). */
static int sm_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

#ifdef SM_FAULT_INJECTION
struct sm_sys_table sm_sys_table = {
	.fstat = libc_fstat,
	.getfl = libc_getfl,
	.lseek = libc_lseek,
	.pread = libc_pread,
	.fdatasync = libc_fdatasync,
	.ioctl = libc_ioctl,
	.allocated_ranges = libc_allocated_ranges,
	.fstatfs = libc_fstatfs,
	.uname = libc_uname,
	.cachestat = libc_cachestat,
	.fadvise = libc_fadvise,
	.mincore = libc_mincore,
	.malloc = libc_malloc,
	.posix_memalign = libc_posix_memalign,
	.free = libc_free,
};
#endif

int sm_sys_fstat(int fd, struct stat *st)
{
	int r;

	do
		r = SM_CALL(fstat)(fd, st);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : 0;
}

int64_t sm_sys_st_blocks(const struct stat *st)
{
#ifdef HAVE_STRUCT_STAT_ST_BLOCKS
	return (int64_t)st->st_blocks;
#else
	int64_t size = (int64_t)st->st_size;

	return size / 512 + (size % 512 != 0);
#endif
}

int64_t sm_sys_st_blksize(const struct stat *st)
{
#ifdef HAVE_STRUCT_STAT_ST_BLKSIZE
	return (int64_t)st->st_blksize;
#else
	(void)st;
	return 4096;
#endif
}

long sm_sys_page_size(void)
{
#if defined(HAVE_SYSCONF) && defined(_SC_PAGESIZE)
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? page : 0;
#else
	return 0;
#endif
}

int sm_sys_getfl(int fd)
{
	int r;

	do
		r = SM_CALL(getfl)(fd);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : r;
}

/* Whether v survives the trip through off_t (32 bits in a build without
 * large-file support, where truncating would name the wrong bytes). */
static bool fits_off_t(int64_t v)
{
	off_t o = (off_t)v;

	return (int64_t)o == v;
}

int64_t sm_sys_lseek(int fd, int64_t offset, int whence)
{
	off_t r;

	if (!fits_off_t(offset))
		return -EOVERFLOW;
	do
		r = SM_CALL(lseek)(fd, (off_t)offset, whence);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return sm_errno();
	return (int64_t)r;
}

/* Reads until len bytes are in or the file ends; returns the byte count. */
ssize_t sm_sys_pread(int fd, void *buf, size_t len, int64_t offset)
{
	size_t done = 0;

	if (offset < 0 || (int64_t)len > INT64_MAX - offset ||
	    !fits_off_t(offset + (int64_t)len))
		return -EOVERFLOW;
	while (done < len) {
		ssize_t r = SM_CALL(pread)(fd, (char *)buf + done, len - done,
					   (off_t)(offset + (int64_t)done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return sm_errno();	/* never 0: that would read as EOF */
		}
		if (r == 0)
			break;
		if ((size_t)r > len - done)
			return -EIO;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int sm_sys_fdatasync(int fd)
{
	int r;

	do
		r = SM_CALL(fdatasync)(fd);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : 0;
}

int sm_sys_ioctl(int fd, unsigned long request, void *arg)
{
	int r;

#if defined(SM_HAVE_FIEMAP) && defined(FS_IOC_FIEMAP)
	if (request == FS_IOC_FIEMAP) {
		struct fiemap *fm = arg;

		/* The kernel fills in fm_mapped_extents of these, but valgrind
		 * (3.19) does not know it and calls every later use of them
		 * uninitialised.  Cheap beside the ioctl, which syncs. */
		memset(fm->fm_extents, 0, fm->fm_extent_count * sizeof(fm->fm_extents[0]));
	}
#endif

	do
		r = SM_CALL(ioctl)(fd, request, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : r;
}

int sm_sys_allocated_ranges(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
			    size_t max, size_t *n)
{
	int r;

	*n = 0;
	if (off < 0 || len <= 0 || len > INT64_MAX - off || max == 0)
		return -EINVAL;
	do
		r = SM_CALL(allocated_ranges)(fd, off, len, out, max, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return sm_errno();
	if (*n > max)
		return -EIO;
	return r > 0;
}

int sm_sys_fs_type(int fd, int64_t *type)
{
	int r;

	do
		r = SM_CALL(fstatfs)(fd, type);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : 0;
}

int sm_sys_kernel_release(char *buf, size_t len)
{
	int r;

	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	do
		r = SM_CALL(uname)(buf, len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return sm_errno();
	/* Cut to what fits: a release is a few dozen bytes. */
	if (!memchr(buf, '\0', len))
		buf[len - 1] = '\0';
	return 0;
}

int sm_sys_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	int r;

	if (off < 0 || len <= 0)
		return -EINVAL;	/* len 0 would mean "to EOF" to the kernel */
	do
		r = SM_CALL(cachestat)(fd, off, len, cs);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : 0;
}

/* Pages mapped at a time to ask mincore: a 16 KiB vector on the stack. */
#define SM_MINCORE_PAGES 16384

int64_t sm_sys_resident_pages(int fd, int64_t off, int64_t len)
{
	unsigned char vec[SM_MINCORE_PAGES];
	long page = sm_sys_page_size();
	int64_t count = 0, end;

	if (page <= 0 || off < 0 || len <= 0 || len > INT64_MAX - off)
		return -EINVAL;
	end = off + len;
	off -= off % page;	/* mmap wants a page-aligned offset */
	while (off < end) {
		int64_t n = (end - off + page - 1) / page;
		int r;

		if (n > SM_MINCORE_PAGES)
			n = SM_MINCORE_PAGES;
		if (!fits_off_t(off))
			return -EOVERFLOW;
		do
			r = SM_CALL(mincore)(fd, (off_t)off, (size_t)(n * page), vec);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return sm_errno();
		for (int64_t i = 0; i < n; i++)
			count += vec[i] & 1;
		off += n * page;
	}
	return count;
}

/* Where there is no posix_fadvise, libc_fadvise says ENOSYS of any advice. */
#ifndef POSIX_FADV_DONTNEED
#define POSIX_FADV_DONTNEED 0
#endif

int sm_sys_drop_cache(int fd, int64_t off, int64_t len)
{
	int r;

	if (!fits_off_t(off) || !fits_off_t(len))
		return -EOVERFLOW;
	do
		r = SM_CALL(fadvise)(fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
	while (r < 0 && errno == EINTR);
	return r < 0 ? sm_errno() : 0;
}

bool sm_sys_unsupported(int err)
{
#if defined(ENOTSUP) && ENOTSUP != EOPNOTSUPP
	if (err == -ENOTSUP)
		return true;	/* macOS 45 and illumos 48, beside EOPNOTSUPP */
#endif
	return err == -EINVAL || err == -EOPNOTSUPP || err == -ENOTTY || err == -ENOSYS;
}

bool sm_sys_no_answer(int err)
{
	return err != -ENOMEM && err != -EBADF;
}

long sm_sys_min_hole_size(int fd)
{
#ifdef _PC_MIN_HOLE_SIZE
	long r;

	errno = 0;	/* -1 with errno unchanged: no limit, say nothing */
	r = fpathconf(fd, _PC_MIN_HOLE_SIZE);
	if (r < 0 && errno == 0)
		return -EOPNOTSUPP;
	if (r < 0)
		return errno == EINVAL ? 0 : -errno;
	return r;
#else
	(void)fd;
	return -EOPNOTSUPP;
#endif
}

int sm_sys_disk(int fd, const struct stat *st, int64_t *size)
{
	return sm_os.disk(fd, st, size);
}

int sm_sys_size_by_seeking(int fd, int64_t *size)
{
	int64_t here, end, back;

	here = sm_sys_lseek(fd, 0, SEEK_CUR);
	if (here < 0)
		return (int)here;
	end = sm_sys_lseek(fd, 0, SEEK_END);
	back = sm_sys_lseek(fd, here, SEEK_SET);
	if (end < 0)
		return (int)end;
	if (back < 0)
		return (int)back;
	if (end == 0) {
		/* Some systems (NetBSD, OpenBSD) seek every device's end to 0:
		 * it is empty only if its first byte is the end. */
		char byte;
		ssize_t r = sm_sys_pread(fd, &byte, 1, 0);

		if (r < 0)
			return (int)r;
		if (r > 0)
			return -EOPNOTSUPP;
	}
	*size = end;
	return 1;
}

void *sm_sys_malloc(size_t size)
{
	return SM_CALL(malloc)(size);
}

void *sm_sys_aligned_alloc(size_t align, size_t size)
{
	void *p = NULL;

	if (SM_CALL(posix_memalign)(&p, align, size) != 0)
		return NULL;
	return p;
}

void sm_sys_free(void *ptr)
{
	SM_CALL(free)(ptr);
}
