/* SPDX-License-Identifier: MIT */
/*
 * What the example tests need that the shell does not do well; built for
 * `make check` only.
 *
 *   layout-tool names              the layouts of tests/helpers.c, one a line
 *   layout-tool make NAME FILE     write layout NAME into a new FILE
 *   layout-tool same A B           exit 0 if A and B hold the same bytes
 *   layout-tool append FILE MAX    append non-zero bytes to FILE until it
 *                                  holds MAX bytes (a writer to race with)
 *
 * `same` reads only where either file has data by the kernel's own
 * SEEK_DATA: cmp would read all 16 GiB of the largest layout (a minute on
 * ext4), and this comparison does not go through the library under test.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static int die(const char *what, const char *path)
{
	fprintf(stderr, "layout-tool: %s %s: %s\n", what, path, strerror(errno));
	return 2;
}

static int make(const char *name, const char *path)
{
	for (size_t i = 0; i < th_nlayouts; i++) {
		int fd;

		if (strcmp(th_layouts[i].name, name) != 0)
			continue;
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return die("creating", path);
		th_layouts[i].build(fd, th_blksize(fd));
		if (close(fd) < 0)
			return die("closing", path);
		return 0;
	}
	fprintf(stderr, "layout-tool: no layout named %s\n", name);
	return 2;
}

/* Where the next data at or after off is in fd, or size if there is none;
 * a file system without SEEK_DATA calls everything data. */
static off_t next_data(int fd, off_t off, off_t size)
{
	off_t r = lseek(fd, off, SEEK_DATA);

	if (r >= 0)
		return r < size ? r : size;
	return errno == ENXIO ? size : off;
}

static off_t next_hole(int fd, off_t off, off_t size)
{
	off_t r = lseek(fd, off, SEEK_HOLE);

	return r >= 0 && r < size ? r : size;
}

static int differ(const char *a, const char *b, off_t off, const char *why)
{
	printf("%s %s differ: %s at byte %lld\n", a, b, why, (long long)off);
	return 1;
}

static int same(const char *pa, const char *pb)
{
	static unsigned char ba[1 << 17], bb[1 << 17];
	int fa = open(pa, O_RDONLY), fb = open(pb, O_RDONLY);
	struct stat sa, sb;
	off_t pos = 0;

	if (fa < 0 || fstat(fa, &sa) < 0)
		return die("opening", pa);
	if (fb < 0 || fstat(fb, &sb) < 0)
		return die("opening", pb);
	if (sa.st_size != sb.st_size)
		return differ(pa, pb, sa.st_size < sb.st_size ? sa.st_size : sb.st_size, "size");
	while (pos < sa.st_size) {
		off_t da = next_data(fa, pos, sa.st_size), db = next_data(fb, pos, sa.st_size);
		off_t start = da < db ? da : db, end, ha, hb;

		if (start >= sa.st_size)
			break;
		/* Compare up to where both have a hole. */
		ha = next_hole(fa, start, sa.st_size);
		hb = next_hole(fb, start, sa.st_size);
		end = ha > hb ? ha : hb;
		for (pos = start; pos < end;) {
			size_t want = end - pos < (off_t)sizeof(ba) ? (size_t)(end - pos) : sizeof(ba);
			ssize_t na = pread(fa, ba, want, pos), nb = pread(fb, bb, want, pos);

			if (na < 0 || nb < 0)
				return die("reading", na < 0 ? pa : pb);
			if (na != nb || na == 0)
				return differ(pa, pb, pos, "short read");
			if (memcmp(ba, bb, (size_t)na) != 0) {
				for (ssize_t i = 0; i < na; i++)
					if (ba[i] != bb[i])
						return differ(pa, pb, pos + i, "content");
			}
			pos += na;
		}
	}
	close(fa);
	close(fb);
	return 0;
}

static int append(const char *path, long long max)
{
	unsigned char buf[1000];
	int fd = open(path, O_WRONLY | O_APPEND);
	struct stat st;

	if (fd < 0)
		return die("opening", path);
	memset(buf, 'w', sizeof(buf));
	/* 1000 bytes at a time, so appends end inside blocks; the pause gives
	 * the copier many chances to run in the middle of the growth. */
	while (fstat(fd, &st) == 0 && st.st_size < max) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return die("appending to", path);
		usleep(50);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "names") == 0) {
		for (size_t i = 0; i < th_nlayouts; i++)
			printf("%s\n", th_layouts[i].name);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "make") == 0)
		return make(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "same") == 0)
		return same(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "append") == 0)
		return append(argv[2], atoll(argv[3]));
	fprintf(stderr, "usage: layout-tool names | make NAME FILE | same A B | append FILE MAX\n");
	return 2;
}
