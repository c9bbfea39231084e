/* SPDX-License-Identifier: MIT */
/*
 * fuse-nolseek BACKING MOUNTPOINT: a pass-through FUSE file system over the
 * directory BACKING (flat: no subdirectories) that implements no lseek, so
 * the kernel answers SEEK_DATA/SEEK_HOLE with its generic stub (all data),
 * and no FIEMAP.  st_blocks passes through, so the library's probe can see
 * that files are sparse.  Runs in the foreground until unmounted.
 */
#define FUSE_USE_VERSION 31
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int backing = -1;

/* "/name" to "name" relative to the backing directory; "." for the root. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int nl_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r = fi ? fstat((int)fi->fh, st) : fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW);

	return r < 0 ? -errno : 0;
}

static int nl_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
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

static int nl_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(backing, rel(path), fi->flags & ~O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int nl_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(backing, rel(path), fi->flags | O_CREAT, mode);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int nl_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	ssize_t r = pread((int)fi->fh, buf, len, off);

	(void)path;
	return r < 0 ? -errno : (int)r;
}

static int nl_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t r = pwrite((int)fi->fh, buf, len, off);

	(void)path;
	return r < 0 ? -errno : (int)r;
}

static int nl_truncate(const char *path, off_t size, struct fuse_file_info *fi)
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

static int nl_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)path;
	return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

static int nl_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? -errno : 0;
}

static int nl_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int nl_unlink(const char *path)
{
	return unlinkat(backing, rel(path), 0) < 0 ? -errno : 0;
}

static int nl_rename(const char *from, const char *to, unsigned int flags)
{
	if (flags)
		return -EINVAL;
	return renameat(backing, rel(from), backing, rel(to)) < 0 ? -errno : 0;
}

static void *nl_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* Ask getattr with the open file, so st_blocks is the file's now. */
	cfg->nullpath_ok = 0;
	cfg->attr_timeout = 0;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = nl_init,
	.getattr = nl_getattr,
	.readdir = nl_readdir,
	.open = nl_open,
	.create = nl_create,
	.read = nl_read,
	.write = nl_write,
	.truncate = nl_truncate,
	.fallocate = nl_fallocate,
	.fsync = nl_fsync,
	.release = nl_release,
	.unlink = nl_unlink,
	.rename = nl_rename,
	/* no .lseek: that is the point */
};

int main(int argc, char **argv)
{
	/* Foreground, one thread: the matrix makes one request at a time. */
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
	return fuse_main(6, fargv, &ops, NULL);
}
