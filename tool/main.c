/* SPDX-License-Identifier: MIT */
/*
 * sparse-map: the command.  Dispatches to a verb, and holds what the verbs
 * share: one-line errors with a hint, option parsing, sizes for people.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} verbs[] = {
	{ "map", tool_map, "show the data and holes of files (text, JSON, or a bar)" },
	{ "bmap", tool_bmap, "write a bmap file of an image, for bmaptool copy" },
	{ "cp", tool_cp, "copy a file and keep its holes" },
	{ "dig", tool_dig, "punch holes where a file stores only zeroes, in place" },
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

void tool_fail(const char *file, const char *hint, const char *what, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "sparse-map: %s: ", file);
	va_start(ap, what);
	vfprintf(stderr, what, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (%s)", hint);
	fputc('\n', stderr);
}

/* What a person can do about an error, where there is something. */
static const char *hint_for(int err)
{
	switch (err) {
	case ENOENT:
		return "check the name";
	case EACCES:
	case EPERM:
		return "check its permissions, or run as its owner";
	case EISDIR:
		return "give a file, not a directory";
	case EINVAL:
		return "give a regular file or a block device";
	case ESPIPE:
		return "give a regular file, not a pipe or socket";
	case EROFS:
		return "it is on a read-only file system";
	case ENOSPC:
	case EDQUOT:
		return "free some space";
	case EOPNOTSUPP:
		return "try another --backend, or none";
	case ENOMEM:
		return "free some memory";
	case EIO:
		return "the device reports an I/O error; check it";
	default:
		return NULL;
	}
}

void tool_fail_errno(const char *file, int err, const char *doing)
{
	if (err < 0)
		err = -err;
	if (doing)
		tool_fail(file, hint_for(err), "%s: %s", doing, strerror(err));
	else
		tool_fail(file, hint_for(err), "%s", strerror(err));
}

int tool_usage_error(const char *verb, const char *what, ...)
{
	va_list ap;

	fprintf(stderr, "sparse-map%s%s: ", verb ? " " : "", verb ? verb : "");
	va_start(ap, what);
	vfprintf(stderr, what, ap);
	va_end(ap);
	fprintf(stderr, " (try sparse-map%s%s --help)\n", verb ? " " : "", verb ? verb : "");
	return TOOL_USAGE;
}

static int parse_backend(const char *verb, const char *name, enum sparse_map_backend *out)
{
	for (int b = 0; sparse_map_backend_name((enum sparse_map_backend)b); b++) {
		if (strcmp(name, sparse_map_backend_name((enum sparse_map_backend)b)) == 0) {
			*out = (enum sparse_map_backend)b;
			return 0;
		}
	}
	tool_usage_error(verb, "unknown backend '%s': auto, seek, fiemap, scan, ranges or none",
			 name);
	return -1;
}

int tool_map_option(const char *verb, int opt, const char *arg, struct tool_map_opts *opts)
{
	switch (opt) {
	case 'b':
		return parse_backend(verb, arg, &opts->backend) < 0 ? -1 : 1;
	case 'z':
		opts->flags |= SPARSE_MAP_ZEROES;
		return 1;
	case 'v':
		opts->flags |= SPARSE_MAP_VERIFY;
		return 1;
	case 'n':
		opts->flags |= SPARSE_MAP_NO_READ;
		return 1;
	case 's':
		opts->flags |= SPARSE_MAP_SYNC;
		return 1;
	default:
		return 0;
	}
}

int tool_map_opts_check(const char *verb, const struct tool_map_opts *opts)
{
	unsigned int reads = opts->flags & (SPARSE_MAP_ZEROES | SPARSE_MAP_VERIFY);

	if (!(opts->flags & SPARSE_MAP_NO_READ) || !reads)
		return 0;
	tool_usage_error(verb, "--no-read cannot go with %s, which read%s",
			 reads == SPARSE_MAP_ZEROES ? "--zeroes" :
			 reads == SPARSE_MAP_VERIFY ? "--verify" : "--zeroes and --verify",
			 reads == (SPARSE_MAP_ZEROES | SPARSE_MAP_VERIFY) ? "" : "s");
	return -1;
}

const char *tool_human(int64_t bytes, char buf[32])
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, 32, "%lld B", (long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, 32, "%.1f %s", v, unit[u]);
	return buf;
}

int tool_open_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == EWOULDBLOCK)
		fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	return fd;
}

int tool_bad_option(const char *verb, char **argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";

	if (optopt && strncmp(opt, "--", 2) != 0)
		return tool_usage_error(verb, "unknown option '-%c'", optopt);
	return tool_usage_error(verb, "unknown option, or one without its value: '%s'", opt);
}

int tool_map_open(int fd, const struct tool_map_opts *opts, struct sparse_map **mapp)
{
	return sparse_map_open(fd, opts->backend, opts->flags | SPARSE_MAP_SPLIT_FLAGS, mapp);
}

int64_t tool_pread(int fd, void *buf, size_t len, int64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + (int64_t)done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int64_t)done;
}

int tool_pwrite(int fd, const void *buf, size_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* no progress: never loop on it */
		buf = (const char *)buf + n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sparse-map VERB [OPTION]... FILE...\n"
		"Show, copy and reclaim the holes of files, with libsparse-map.\n"
		"\n");
	for (size_t i = 0; i < N_VERBS; i++)
		fprintf(out, "  %-6s %s\n", verbs[i].name, verbs[i].what);
	fprintf(out,
		"\n"
		"  sparse-map VERB --help  the options of VERB\n"
		"  sparse-map --version    the version of the command and the library\n"
		"\n"
		"Exit status: 0 when every file was done, 1 when one failed (the others\n"
		"are still done), 2 on bad usage.  See sparse-map(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return tool_usage_error(NULL, "no verb given: map, bmap, cp or dig");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return TOOL_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("sparse-map (libsparse-map) %s\n", PACKAGE_VERSION);
		return TOOL_OK;
	}
	opterr = 0;	/* the verbs say what is wrong, in one line */
	for (size_t i = 0; i < N_VERBS; i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return verbs[i].run(argc - 1, argv + 1);
	return tool_usage_error(NULL, "unknown verb '%s': map, bmap, cp or dig", argv[1]);
}
