/* SPDX-License-Identifier: MIT */
/*
 * sparse-map bmap: a block map of an image in the format bmaptool reads
 * (version 2.0): the image's size, 4096-byte blocks, the ranges of blocks
 * that hold data with the SHA-256 of each, and the SHA-256 of the bmap file
 * itself, taken with that field as 64 '0's.  The map is the library's, so
 * the image is not flushed first, and a ramfs image can be mapped too.
 *
 * A block is mapped when any byte of it is data; so the ranges of blocks
 * cover every byte of data, and what they leave out reads as zeroes.  A
 * range's checksum covers its blocks' bytes up to the end of the image.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096
#define CHUNK (1 << 20)

/* A text that grows: the bmap is written once it is whole, since its
 * header counts the blocks and its checksum covers everything. */
struct text {
	char *s;
	size_t len, cap;
	bool failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (t->s && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 65536;
		while (cap - t->len <= (size_t)n)
			cap *= 2;
		char *s = realloc(t->s, cap);
		if (!s) {
			t->failed = true;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
}

static void hex(const uint8_t *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

struct bmap_cmd {
	struct tool_map_opts opts;
	const char *output;
};

/* The SHA-256 of blocks [first, last] of fd, up to size: 0 or -errno. */
static int hash_blocks(int fd, int64_t first, int64_t last, int64_t size, uint8_t *buf,
		       char out[2 * SHA256_DIGEST_SIZE + 1])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	/* Cut at size; computed so that it cannot overflow near 2^63. */
	int64_t off = first * BLOCK, end = last >= (size - 1) / BLOCK ? size : (last + 1) * BLOCK;

	sha256_init(&ctx);
	while (off < end) {
		int64_t want = end - off < CHUNK ? end - off : CHUNK;
		int64_t n = tool_pread(fd, buf, (size_t)want, off);

		if (n < 0)
			return (int)n;
		if (n < want)
			return -ESTALE;	/* the image shrank under us */
		sha256_update(&ctx, (size_t)n, buf);
		off += n;
	}
	sha256_digest(&ctx, sizeof(d), d);
	hex(d, sizeof(d), out);
	return 0;
}

static int emit(struct text *ranges, int fd, int64_t first, int64_t last, int64_t size,
		uint8_t *buf)
{
	char sum[2 * SHA256_DIGEST_SIZE + 1];
	int rc = hash_blocks(fd, first, last, size, buf, sum);

	if (rc < 0)
		return rc;
	if (first == last)
		add(ranges, "        <Range chksum=\"%s\"> %lld </Range>\n", sum, (long long)first);
	else
		add(ranges, "        <Range chksum=\"%s\"> %lld-%lld </Range>\n", sum,
		    (long long)first, (long long)last);
	return 0;
}

/* The ranges of blocks, hashed: 0, or -errno. */
static int block_ranges(int fd, const struct bmap_cmd *cmd, struct text *ranges,
			int64_t *size, int64_t *mapped)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t first = -1, last = -1;	/* the span not yet written */
	uint8_t *buf = malloc(CHUNK);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = tool_map_open(fd, &cmd->opts, &map);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*size = sparse_map_size(map);
	*mapped = 0;
	while ((rc = sparse_map_next(map, &r)) == 1) {
		int64_t a, b;

		if (r.kind != SPARSE_MAP_DATA)
			continue;
		a = r.offset / BLOCK;
		b = (r.offset + r.length - 1) / BLOCK;
		if (first >= 0 && a <= last + 1) {
			if (b > last)
				last = b;
			continue;
		}
		if (first >= 0) {
			rc = emit(ranges, fd, first, last, *size, buf);
			if (rc < 0)
				break;
			*mapped += last - first + 1;
		}
		first = a;
		last = b;
	}
	if (rc == 0 && first >= 0) {
		rc = emit(ranges, fd, first, last, *size, buf);
		*mapped += last - first + 1;
	}
	sparse_map_close(map);
	free(buf);
	return rc;
}

static int make_bmap(const struct bmap_cmd *cmd, int fd, struct text *out)
{
	struct text ranges = { NULL, 0, 0, false };
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	char zeros[2 * SHA256_DIGEST_SIZE + 1], sum[2 * SHA256_DIGEST_SIZE + 1], *at;
	int64_t size = 0, mapped = 0;
	int rc = block_ranges(fd, cmd, &ranges, &size, &mapped);

	if (rc < 0) {
		free(ranges.s);
		return rc;
	}
	memset(zeros, '0', sizeof(zeros) - 1);
	zeros[sizeof(zeros) - 1] = '\0';
	add(out, "<?xml version=\"1.0\" ?>\n"
		 "<!-- Made by sparse-map %s (libsparse-map).  The blocks named below\n"
		 "     hold the image's data; every other block reads as zeroes.  Each\n"
		 "     range's chksum is the SHA-256 of its blocks, the last one cut\n"
		 "     at ImageSize; BmapFileChecksum is that of this file, taken\n"
		 "     with its own value as 64 zeroes.  -->\n"
		 "<bmap version=\"2.0\">\n", PACKAGE_VERSION);
	add(out, "    <ImageSize> %lld </ImageSize>\n", (long long)size);
	add(out, "    <BlockSize> %d </BlockSize>\n", BLOCK);
	add(out, "    <BlocksCount> %lld </BlocksCount>\n",
	    (long long)(size / BLOCK + (size % BLOCK != 0)));
	add(out, "    <MappedBlocksCount> %lld </MappedBlocksCount>\n", (long long)mapped);
	add(out, "    <ChecksumType> sha256 </ChecksumType>\n");
	add(out, "    <BmapFileChecksum> %s </BmapFileChecksum>\n", zeros);
	add(out, "    <BlockMap>\n");
	if (ranges.s)
		add(out, "%s", ranges.s);
	add(out, "    </BlockMap>\n</bmap>\n");
	free(ranges.s);
	if (out->failed)
		return -ENOMEM;
	sha256_init(&ctx);
	sha256_update(&ctx, out->len, (const uint8_t *)out->s);
	sha256_digest(&ctx, sizeof(d), d);
	hex(d, sizeof(d), sum);
	at = strstr(out->s, zeros);
	memcpy(at, sum, sizeof(sum) - 1);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sparse-map bmap [OPTION]... IMAGE\n"
		"Write a block map of IMAGE for bmaptool copy (bmap format 2.0, SHA-256).\n"
		"\n"
		"  -o, --output=FILE  write it to FILE (default: standard output)\n"
		"  --backend=NAME     auto (default), seek, fiemap, scan, ranges or none\n"
		"  --zeroes           leave out blocks of stored zeroes too (only for a\n"
		"                     target whose unwritten blocks read as zeroes)\n"
		"  --no-read          read nothing to map: where only reading finds holes,\n"
		"                     map every block\n"
		"  --sync             flush IMAGE's dirty data first (not needed)\n"
		"  --help             print this help and exit\n");
}

/* Whether the file is still what it was when the map began. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_ino == b->st_ino &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int tool_bmap(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "backend", required_argument, NULL, 'b' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ "no-read", no_argument, NULL, 'n' },
		{ "sync", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bmap_cmd cmd = { { SPARSE_MAP_BACKEND_AUTO, 0 }, NULL };
	struct text out = { NULL, 0, 0, false };
	struct stat before, after;
	const char *image;
	int opt, fd, rc, ofd = STDOUT_FILENO;

	while ((opt = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			cmd.output = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_OK;
		default:
			rc = tool_map_option("bmap", opt, optarg, &cmd.opts);
			if (rc < 0)
				return TOOL_USAGE;
			if (rc == 0)
				return tool_bad_option("bmap", argv);
		}
	}
	if (argc - optind != 1)
		return tool_usage_error("bmap", "give one IMAGE");
	if (tool_map_opts_check("bmap", &cmd.opts) < 0)
		return TOOL_USAGE;
	image = argv[optind];
	fd = tool_open_read(image);
	if (fd < 0 || fstat(fd, &before) < 0) {
		tool_fail_errno(image, errno, NULL);
		if (fd >= 0)
			close(fd);
		return TOOL_FAILED;
	}
	rc = make_bmap(&cmd, fd, &out);
	if (rc == 0 && (fstat(fd, &after) < 0 || !same_file(&before, &after)))
		rc = -ESTALE;
	close(fd);
	if (rc == -ESTALE) {
		tool_fail(image, "stop what writes it and run again",
			  "the image changed while it was mapped");
		free(out.s);
		return TOOL_FAILED;
	}
	if (rc < 0) {
		tool_fail_errno(image, rc, "cannot map it");
		free(out.s);
		return TOOL_FAILED;
	}
	if (cmd.output) {
		ofd = open(cmd.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (ofd < 0) {
			tool_fail_errno(cmd.output, errno, NULL);
			free(out.s);
			return TOOL_FAILED;
		}
	}
	rc = 0;
	for (size_t done = 0; done < out.len && rc == 0;) {
		ssize_t n = write(ofd, out.s + done, out.len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else
			done += (size_t)n;
	}
	free(out.s);
	if (cmd.output && close(ofd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		tool_fail_errno(cmd.output ? cmd.output : "standard output", rc, "cannot write");
		if (cmd.output)
			unlink(cmd.output);
		return TOOL_FAILED;
	}
	return TOOL_OK;
}
