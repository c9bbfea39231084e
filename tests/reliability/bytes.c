/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <unistd.h>

#include "bytes.h"

bool rel_has_data(int fd, int64_t off, int64_t end)
{
	static unsigned char buf[65536];

	while (off < end) {
		size_t want = end - off < (int64_t)sizeof(buf) ? (size_t)(end - off) : sizeof(buf);
		ssize_t got = pread(fd, buf, want, off);

		if (got <= 0)
			return false;
		for (ssize_t i = 0; i < got; i++)
			if (buf[i])
				return true;
		off += got;
	}
	return false;
}
