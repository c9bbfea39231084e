/* SPDX-License-Identifier: MIT */
/*
 * fuse-badseek BACKING MOUNTPOINT: the pass-through FUSE file system of
 * fuse-pass.c with an lseek that answers SEEK_DATA and SEEK_HOLE badly on
 * purpose, as each file's name says, so that one mount serves every case:
 *
 *   MODE-WHENCE-K, e.g. EIO-hole-3 or beyond-data-1
 *
 *   MODE    ENOENT, EBADFD, EIO, EINVAL, ENXIO or EOPNOTSUPP: fail with it;
 *           beyond: answer 1 MiB past the end of the file;
 *           before: answer the offset asked minus one (at offset 0, where
 *             the kernel would turn any answer below into EINVAL, the truth);
 *           flip: inside a hole, SEEK_DATA answers the offset itself, data
 *             where SEEK_HOLE says hole (only with WHENCE data).
 *   WHENCE  data, hole or both: the calls that answer badly.
 *   K       the first of those calls, counted per open file, to do so;
 *           every later one does too: a source that breaks in the middle
 *           of a map stays broken.
 *
 * The good answers, and every answer for any other name, are the backing
 * file's own (tmpfs, in the tests).  ENOSYS is no mode: the kernel would
 * take it to mean that this file system has no lseek, for every file.
 * Runs in the foreground until unmounted.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse-pass.h"

enum bad_mode { HONEST, FAIL, BEYOND, BEFORE, FLIP };

/* How the file open on one backing descriptor answers. */
struct bad {
	enum bad_mode mode;
	int err;		/* FAIL: the errno */
	bool data, hole;	/* which whence answers badly */
	long k;			/* from the k-th such call on */
	long calls;		/* such calls so far */
};

/* One request at a time (fp_main), so a table by descriptor serves. */
#define MAX_FD 4096
static struct bad bad[MAX_FD];

static const struct { const char *name; int err; } errnos[] = {
	{ "ENOENT", ENOENT }, { "EBADFD", EBADFD }, { "EIO", EIO },
	{ "EINVAL", EINVAL }, { "ENXIO", ENXIO }, { "EOPNOTSUPP", EOPNOTSUPP },
};

/* What the name "/MODE-WHENCE-K" asks for; HONEST for any other name. */
static struct bad parse(const char *path)
{
	struct bad b = { .mode = HONEST };
	char mode[32], whence[8];
	long k;

	if (sscanf(path, "/%31[^-]-%7[^-]-%ld", mode, whence, &k) != 3 || k < 1)
		return b;
	b.data = strcmp(whence, "data") == 0 || strcmp(whence, "both") == 0;
	b.hole = strcmp(whence, "hole") == 0 || strcmp(whence, "both") == 0;
	b.k = k;
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (strcmp(mode, errnos[i].name) == 0) {
			b.mode = FAIL;
			b.err = errnos[i].err;
		}
	if (strcmp(mode, "beyond") == 0)
		b.mode = BEYOND;
	else if (strcmp(mode, "before") == 0)
		b.mode = BEFORE;
	else if (strcmp(mode, "flip") == 0 && !b.hole)
		b.mode = FLIP;
	if (!b.data && !b.hole)
		b.mode = HONEST;
	return b;
}

static void track(const char *path, struct fuse_file_info *fi)
{
	if (fi->fh < MAX_FD)
		bad[fi->fh] = parse(path);
}

static int bs_open(const char *path, struct fuse_file_info *fi)
{
	int r = fp_pass_ops.open(path, fi);

	if (r == 0)
		track(path, fi);
	return r;
}

static int bs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fp_pass_ops.create(path, mode, fi);

	if (r == 0)
		track(path, fi);
	return r;
}

static int bs_release(const char *path, struct fuse_file_info *fi)
{
	if (fi->fh < MAX_FD)
		bad[fi->fh] = (struct bad){ .mode = HONEST };
	return fp_pass_ops.release(path, fi);
}

static off_t bs_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi)
{
	int fd = (int)fi->fh;
	off_t real = lseek(fd, off, whence);
	int real_err = real < 0 ? errno : 0;
	struct bad *b = fi->fh < MAX_FD ? &bad[fi->fh] : NULL;
	struct stat st;

	(void)path;
	if (!b || b->mode == HONEST || (whence != SEEK_DATA && whence != SEEK_HOLE) ||
	    !(whence == SEEK_DATA ? b->data : b->hole) || ++b->calls < b->k)
		return real < 0 ? -real_err : real;
	switch (b->mode) {
	case FAIL:
		return -b->err;
	case BEYOND:
		if (fstat(fd, &st) < 0)
			return -errno;
		return st.st_size + (1 << 20);
	case BEFORE:
		if (off > 0)
			return off - 1;
		break;
	case FLIP:
		/* In a hole, or past the last data before EOF. */
		if (real > off || (real_err == ENXIO && fstat(fd, &st) == 0 && off < st.st_size))
			return off;
		break;
	case HONEST:
		break;
	}
	return real < 0 ? -real_err : real;
}

int main(int argc, char **argv)
{
	struct fuse_operations ops = fp_pass_ops;

	ops.open = bs_open;
	ops.create = bs_create;
	ops.release = bs_release;
	ops.lseek = bs_lseek;
	return fp_main(argc, argv, &ops);
}
