/* SPDX-License-Identifier: MIT */
/*
 * Windows' part of the system layer (see sparse-map-private.h,
 * "sys-<system>.c"), for the C runtime's file descriptors (mingw-w64): each
 * call works on the descriptor's handle, from _get_osfhandle().
 *  - pread: ReadFile at an offset.  On a handle opened for synchronous I/O,
 *    as the C runtime's are, that also moves the file pointer, so the
 *    pointer is read before and put back after: the caller's offset stays.
 *    Another thread that moves the same descriptor's file pointer while a
 *    read is under way may find it put back.
 *  - getfl: whether the handle may read, found by reading 0 bytes.
 *  - allocated_ranges: FSCTL_QUERY_ALLOCATED_RANGES, asked only on NTFS
 *    and ReFS, Microsoft's own file systems, and never of a file whose
 *    data may live elsewhere (offline, recalled on access, a reparse
 *    point such as a cloud placeholder): such a file can read as data
 *    where nothing is allocated.  Elsewhere it answers EOPNOTSUPP, and
 *    AUTO reads the file instead.
 *  - fdatasync: FlushFileBuffers, as _commit() does; that needs write
 *    access, so a read-only descriptor flushes through a second handle
 *    opened for writing (ReOpenFile).
 * No disks: a volume or physical drive is not mapped (-ESPIPE, as for a
 * pipe); no f_type and no page-cache questions.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <sys/stat.h>
#include <wchar.h>
#include <windows.h>
#include <winioctl.h>

#include "sparse-map-private.h"

#ifndef FILE_ATTRIBUTE_RECALL_ON_OPEN
#define FILE_ATTRIBUTE_RECALL_ON_OPEN 0x00040000
#endif
#ifndef FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS
#define FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS 0x00400000
#endif

_Static_assert(sizeof(struct sm_alloc_range) == sizeof(FILE_ALLOCATED_RANGE_BUFFER) &&
	       offsetof(struct sm_alloc_range, length) ==
	       offsetof(FILE_ALLOCATED_RANGE_BUFFER, Length),
	       "struct sm_alloc_range is laid out as FILE_ALLOCATED_RANGE_BUFFER");

/* The errno for a Windows error code. */
static int errno_of(DWORD err)
{
	switch (err) {
	case ERROR_INVALID_HANDLE:
		return EBADF;
	case ERROR_ACCESS_DENIED:
		return EACCES;
	case ERROR_INVALID_FUNCTION:	/* FAT and others: no such control code */
	case ERROR_NOT_SUPPORTED:	/* wine */
		return EOPNOTSUPP;
	case ERROR_INVALID_PARAMETER:
		return EINVAL;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ENOMEM;
	case ERROR_INSUFFICIENT_BUFFER:	/* Samba and others, instead of ERROR_MORE_DATA */
		return ENOBUFS;
	case ERROR_LOCK_VIOLATION:
		return EAGAIN;
	case ERROR_NEGATIVE_SEEK:
		return EINVAL;
	default:
		return EIO;
	}
}

/* The descriptor's handle, or INVALID_HANDLE_VALUE with errno EBADF (also
 * for -2, a standard stream with no handle). */
static HANDLE handle_of(int fd)
{
	intptr_t h = _get_osfhandle(fd);

	if (h == -1 || h == -2) {
		errno = EBADF;
		return INVALID_HANDLE_VALUE;
	}
	return (HANDLE)h;
}

static int fail(DWORD err)
{
	errno = errno_of(err);
	return -1;
}

static int os_fdatasync(int fd)
{
	HANDLE h = handle_of(fd), w;
	DWORD err;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	if (FlushFileBuffers(h))
		return 0;
	err = GetLastError();
	if (err != ERROR_ACCESS_DENIED)
		return fail(err);
	/* Read-only: flush through a handle that may write. */
	w = ReOpenFile(h, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
		       0);
	if (w == INVALID_HANDLE_VALUE)
		return fail(GetLastError());
	err = FlushFileBuffers(w) ? 0 : GetLastError();
	CloseHandle(w);
	return err ? fail(err) : 0;
}

static ssize_t os_pread(int fd, void *buf, size_t len, int64_t off)
{
	HANDLE h = handle_of(fd);
	LARGE_INTEGER zero = { .QuadPart = 0 }, here, back;
	OVERLAPPED ov = { 0 };
	DWORD got = 0, want = len > (1u << 30) ? (1u << 30) : (DWORD)len;
	DWORD err = 0;
	BOOL ok;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	if (!SetFilePointerEx(h, zero, &here, FILE_CURRENT))
		return fail(GetLastError());
	ov.Offset = (DWORD)((uint64_t)off & 0xffffffffu);
	ov.OffsetHigh = (DWORD)((uint64_t)off >> 32);
	ok = ReadFile(h, buf, want, &got, &ov);
	if (!ok) {
		err = GetLastError();
		if (err == ERROR_IO_PENDING) {
			/* A handle opened for overlapped I/O: wait for it. */
			ok = GetOverlappedResult(h, &ov, &got, TRUE);
			err = ok ? 0 : GetLastError();
		}
	}
	back = here;
	if (!SetFilePointerEx(h, back, NULL, FILE_BEGIN) && err == 0)
		err = GetLastError();
	if (err == ERROR_HANDLE_EOF)
		return 0;	/* at or past the end */
	if (err)
		return fail(err);
	return (ssize_t)got;
}

/* Reading 0 bytes where the file pointer is reads nothing and moves
 * nothing, but is refused on a handle without read access. */
static int os_getfl(int fd)
{
	HANDLE h = handle_of(fd);
	DWORD got = 0;
	char byte;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	if (ReadFile(h, &byte, 0, &got, NULL))
		return O_RDWR;
	if (GetLastError() == ERROR_ACCESS_DENIED)
		return O_WRONLY;
	return fail(GetLastError());
}

/* Whether the allocated ranges of h's file tell where its data is. */
static bool ranges_trusted(HANDLE h)
{
	const DWORD elsewhere = FILE_ATTRIBUTE_OFFLINE | FILE_ATTRIBUTE_REPARSE_POINT |
				FILE_ATTRIBUTE_RECALL_ON_OPEN | FILE_ATTRIBUTE_RECALL_ON_DATA_ACCESS;
	BY_HANDLE_FILE_INFORMATION info;
	WCHAR fs[MAX_PATH + 1];

	if (!GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & elsewhere))
		return false;
	if (!GetVolumeInformationByHandleW(h, NULL, 0, NULL, NULL, NULL, fs, MAX_PATH + 1))
		return false;
	return wcscmp(fs, L"NTFS") == 0 || wcscmp(fs, L"ReFS") == 0;
}

static int os_allocated_ranges(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
			       size_t max, size_t *n)
{
	HANDLE h = handle_of(fd);
	FILE_ALLOCATED_RANGE_BUFFER q;
	DWORD got = 0, size;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	if (!ranges_trusted(h)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (max > 4096)
		max = 4096;
	size = (DWORD)(max * sizeof(*out));
	q.FileOffset.QuadPart = off;
	q.Length.QuadPart = len;
	if (DeviceIoControl(h, FSCTL_QUERY_ALLOCATED_RANGES, &q, sizeof(q), out, size, &got,
			    NULL)) {
		*n = got / sizeof(*out);
		return 0;
	}
	if (GetLastError() == ERROR_MORE_DATA) {
		*n = got / sizeof(*out);
		return 1;
	}
	return fail(GetLastError());
}

/* Regular files only. */
static int os_disk(int fd, const struct stat *st, int64_t *size)
{
	(void)fd; (void)st; (void)size;
	return 0;
}

const struct sm_os sm_os = {
	.fdatasync = os_fdatasync,
	.disk = os_disk,
	.pread = os_pread,
	.getfl = os_getfl,
	.allocated_ranges = os_allocated_ranges,
};
