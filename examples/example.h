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

#include <stdio.h>
#include <string.h>

#include <sparse_map.h>

/* --backend=NAME: 0 with *out set, or -1 after saying what is wrong. */
static inline int example_backend(const char *prog, const char *name,
				  enum sparse_map_backend *out)
{
	for (int b = SPARSE_MAP_BACKEND_AUTO; b <= SPARSE_MAP_BACKEND_SCAN; b++) {
		if (strcmp(name, sparse_map_backend_name(b)) == 0) {
			*out = b;
			return 0;
		}
	}
	fprintf(stderr, "%s: unknown backend '%s' (auto, seek, fiemap or scan)\n", prog, name);
	return -1;
}

#endif
