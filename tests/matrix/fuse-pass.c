/* SPDX-License-Identifier: MIT */
/* The pass-through part of the test file systems: see fuse-pass.h. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse-pass.h"

static int backing = -1;

/* "/name" to "name" relative to the backing directory; "." for the root. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int fp_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r = fi ? fstat((int)fi->fh, st) : fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW);

	return r < 0 ? -errno : 0;
}

static int fp_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY);
	DIR *d;
	struct dirent *e;

	(void)off;
	(void)fi;
	(void)flags;
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (fill(buf, e->d_name, NULL, 0, 0))
			break;
	closedir(d);
	return 0;
}

static int fp_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(backing, rel(path), fi->flags & ~O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int fp_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(backing, rel(path), fi->flags | O_CREAT, mode);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int fp_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	ssize_t r = pread((int)fi->fh, buf, len, off);

	(void)path;
	return r < 0 ? -errno : (int)r;
}

static int fp_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t r = pwrite((int)fi->fh, buf, len, off);

	(void)path;
	return r < 0 ? -errno : (int)r;
}

static int fp_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int r;

	if (fi) {
		r = ftruncate((int)fi->fh, size);
	} else {
		int fd = openat(backing, rel(path), O_WRONLY);

		if (fd < 0)
			return -errno;
		r = ftruncate(fd, size);
		close(fd);
	}
	return r < 0 ? -errno : 0;
}

static int fp_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)path;
	return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

static int fp_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? -errno : 0;
}

static int fp_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int fp_unlink(const char *path)
{
	return unlinkat(backing, rel(path), 0) < 0 ? -errno : 0;
}

/* For copiers that give the copy the source's mode (examples/sparse-cp). */
static int fp_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi ? fchmod((int)fi->fh, mode) : fchmodat(backing, rel(path), mode, 0);

	return r < 0 ? -errno : 0;
}

static int fp_rename(const char *from, const char *to, unsigned int flags)
{
	if (flags)
		return -EINVAL;
	return renameat(backing, rel(from), backing, rel(to)) < 0 ? -errno : 0;
}

static void *fp_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	const char *timeout = getenv("FP_ATTR_TIMEOUT");

	(void)conn;
	/* Ask getattr with the open file, so st_blocks is the file's now.
	 * FP_ATTR_TIMEOUT (seconds) lets the kernel cache attributes as a
	 * file system does by default (libfuse: 1 s), for tests/bench. */
	cfg->nullpath_ok = 0;
	cfg->attr_timeout = timeout ? atof(timeout) : 0;
	return NULL;
}

const struct fuse_operations fp_pass_ops = {
	.init = fp_init,
	.getattr = fp_getattr,
	.readdir = fp_readdir,
	.open = fp_open,
	.create = fp_create,
	.read = fp_read,
	.write = fp_write,
	.truncate = fp_truncate,
	.fallocate = fp_fallocate,
	.fsync = fp_fsync,
	.release = fp_release,
	.unlink = fp_unlink,
	.rename = fp_rename,
	.chmod = fp_chmod,
};

int fp_main(int argc, char **argv, const struct fuse_operations *ops)
{
	/* Foreground, one thread: the tests make one request at a time. */
	char *fargv[] = { argv[0], "-f", "-s", "-o", "default_permissions", NULL, NULL };

	if (argc != 3) {
		fprintf(stderr, "usage: %s BACKING MOUNTPOINT\n", argv[0]);
		return 2;
	}
	backing = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (backing < 0) {
		perror(argv[1]);
		return 1;
	}
	fargv[5] = argv[2];
	return fuse_main(6, fargv, ops, NULL);
}
