/* SPDX-License-Identifier: MIT */
/*
 * The program of abi/test-archive-in-shared-lib.sh, linked against
 * libwrap.so only (abi/archive-wrap.c): it prints what libwrap.so's copy
 * of libsparse-map says of FILE.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

/* As abi/archive-wrap.c defines it. */
long long wrap_data_bytes(const char *path, long long *hole);

int main(int argc, char **argv)
{
	long long data, hole = -1;

	if (argc != 2) {
		fprintf(stderr, "usage: archive-wrap-main FILE\n");
		return 2;
	}
	data = wrap_data_bytes(argv[1], &hole);
	if (data < 0) {
		fprintf(stderr, "wrap_data_bytes(%s): %s\n", argv[1], strerror((int)-data));
		return 1;
	}
	printf("data %lld\nhole %lld\n", data, hole);
	return 0;
}
