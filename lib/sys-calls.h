/* SPDX-License-Identifier: MIT */
/*
 * SM_CALL(name) is the C library's function (libc_name in sys.c) in a release build.  The test
 * build (SM_FAULT_INJECTION) routes each call through a table that the tests
 * may change, so a release library pays nothing for fault injection.
 */
#ifndef SPARSE_MAP_SYS_CALLS_H
#define SPARSE_MAP_SYS_CALLS_H

#ifdef SM_FAULT_INJECTION
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct sm_cachestat;
struct sm_alloc_range;

struct sm_sys_table {
	int (*fstat)(int fd, struct stat *st);
	int (*getfl)(int fd);
	off_t (*lseek)(int fd, off_t offset, int whence);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t offset);
	int (*fdatasync)(int fd);
	int (*ioctl)(int fd, unsigned long request, void *arg);
	/* Returns as struct sm_os's allocated_ranges: 0, 1 (more), or -1 and errno. */
	int (*allocated_ranges)(int fd, int64_t off, int64_t len, struct sm_alloc_range *out,
				size_t max, size_t *n);
	int (*fstatfs)(int fd, int64_t *type);
	/* uname(2)'s release into buf (struct sm_os's kernel_release). */
	int (*uname)(char *buf, size_t len);
	int (*cachestat)(int fd, int64_t off, int64_t len, struct sm_cachestat *cs);
	int (*fadvise)(int fd, off_t off, off_t len, int advice);
	/* mmap [off, off + len) of fd, mincore(2) it into vec, munmap. */
	int (*mincore)(int fd, off_t off, size_t len, unsigned char *vec);
	void *(*malloc)(size_t size);
	int (*posix_memalign)(void **p, size_t align, size_t size);
	void (*free)(void *p);
};

/* Starts as the C library's functions; the tests (tests/test-internal.c,
 * tests/reliability/test-faults.c) swap entries.  An entry left NULL means
 * the C library's, so a test names only the calls it is about. */
extern struct sm_sys_table sm_sys_table;
#define SM_CALL(name) (sm_sys_table.name ? sm_sys_table.name : libc_##name)
#else
#define SM_CALL(name) libc_##name
#endif

#endif /* SPARSE_MAP_SYS_CALLS_H */
