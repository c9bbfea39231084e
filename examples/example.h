/* SPDX-License-Identifier: MIT */
/*
 * What the example programs share.  Include it first: it chooses the
 * feature macros the system headers read.
 */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#ifdef HAVE_CONFIG_H
#include "config.h"	/* large files and GNU extensions, as configure chose */
#else
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <sparse_map.h>

#ifdef _WIN32
/*
 * Windows (mingw-w64): the C runtime has no pread, pwrite or fchmod, its
 * rename() will not replace a file, its open() translates line ends unless
 * told O_BINARY, its ftruncate() refuses a size beyond the free space (it
 * cannot know the file is sparse), and a file keeps holes only once marked
 * sparse.  These stand in, for a tool that uses each descriptor from one
 * thread.
 */
#include <io.h>
#include <windows.h>
#include <winioctl.h>

#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif
#ifndef O_NONBLOCK
#define O_NONBLOCK 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static inline ssize_t example_pread(int fd, void *buf, size_t len, int64_t off)
{
	if (_lseeki64(fd, off, SEEK_SET) < 0)
		return -1;
	return read(fd, buf, (unsigned int)(len > (1u << 30) ? (1u << 30) : len));
}

static inline ssize_t example_pwrite(int fd, const void *buf, size_t len, int64_t off)
{
	if (_lseeki64(fd, off, SEEK_SET) < 0)
		return -1;
	return write(fd, buf, (unsigned int)(len > (1u << 30) ? (1u << 30) : len));
}

/* Permission bits beyond read-only mean nothing there. */
static inline int example_fchmod(int fd, int mode)
{
	(void)fd; (void)mode;
	return 0;
}

static inline int example_errno(DWORD err)
{
	switch (err) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return ENOENT;
	case ERROR_NOT_SAME_DEVICE:
		return EXDEV;
	case ERROR_DISK_FULL:
		return ENOSPC;
	default:
		return EACCES;
	}
}

static inline int example_rename(const char *from, const char *to)
{
	if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING))
		return 0;
	errno = example_errno(GetLastError());
	return -1;
}

/* The end of file moved to size; in a sparse file that allocates nothing. */
static inline int example_ftruncate(int fd, int64_t size)
{
	FILE_END_OF_FILE_INFO eof;

	eof.EndOfFile.QuadPart = size;
	if (SetFileInformationByHandle((HANDLE)_get_osfhandle(fd), FileEndOfFileInfo, &eof,
				       sizeof(eof)))
		return 0;
	errno = example_errno(GetLastError());
	return -1;
}

/* Binary, and sparse where the file system can be (NTFS; wine ignores it). */
static inline void example_prepare_copy(int fd)
{
	DWORD got;

	_setmode(fd, _O_BINARY);
	DeviceIoControl((HANDLE)_get_osfhandle(fd), FSCTL_SET_SPARSE, NULL, 0, NULL, 0, &got,
			NULL);
}
#else
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_BINARY
#define O_BINARY 0
#endif
#define example_pread pread
#define example_pwrite pwrite
#define example_fchmod fchmod
#define example_rename rename
#define example_ftruncate(fd, size) ftruncate((fd), (off_t)(size))
static inline void example_prepare_copy(int fd) { (void)fd; }
#endif

/* --backend=NAME: 0 with *out set, or -1 after saying what is wrong. */
static inline int example_backend(const char *prog, const char *name,
				  enum sparse_map_backend *out)
{
	const char *s;

	/* Every name the library knows, up to the first value it does not. */
	for (int b = SPARSE_MAP_BACKEND_AUTO; (s = sparse_map_backend_name(b)) != NULL; b++) {
		if (strcmp(name, s) == 0) {
			*out = b;
			return 0;
		}
	}
	fprintf(stderr, "%s: unknown backend '%s' (auto, seek, fiemap, scan, ranges or none)\n",
		prog, name);
	return -1;
}

#endif
