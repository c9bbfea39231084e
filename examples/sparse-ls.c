/* SPDX-License-Identifier: MIT */
/*
 * sparse-ls: print which byte ranges of each FILE hold data and which are
 * holes, as libsparse-map sees them.
 *
 *   sparse-ls [--backend=auto|seek|fiemap|scan|ranges|none] [--sync]
 *             [--verify] [--zeroes] [--no-read] [--json] FILE...
 *
 * A FILE that cannot be mapped gets a one-line message on stderr; the
 * others are still listed, and the exit status is 1.
 */
#include "example.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "sparse-ls";

struct options {
	enum sparse_map_backend backend;
	unsigned int flags;
	bool json;
	bool listed;	/* a map was printed: the next one starts after a blank line */
};

/* What one FILE added up to. */
struct totals {
	int64_t data, hole, ranges;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [OPTION]... FILE...\n"
		"Print the data and hole ranges of each FILE.\n"
		"\n"
		"  --backend=NAME  auto (default), seek, fiemap, scan, ranges or none\n"
		"  --sync          flush the file's dirty data before mapping\n"
		"  --verify        read every hole back; what is not zero is data\n"
		"  --zeroes        also call all-zero blocks inside data holes\n"
		"  --no-read       read no file data: where only reading finds holes, all data\n"
		"  --json          print one JSON document for the whole run\n"
		"  --help          print this help and exit\n"
		"\n"
		"Each range line: kind, offset, length, flags (unwritten, zeroes).\n"
		"Exit status: 0 if every FILE was mapped, 1 if one was not, 2 on bad usage.\n",
		prog);
}

/* The length of the UTF-8 sequence at s (at most n bytes), or 0 if it is
 * not valid: file names are bytes, and JSON must be Unicode. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* s as a JSON string; bytes that are not UTF-8 become U+FFFD. */
static void json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	putchar('"');
	while (n > 0) {
		size_t len = utf8_len(s, n);

		if (len == 0) {
			fputs("\\ufffd", stdout);
			len = 1;
		} else if (*s == '"' || *s == '\\') {
			printf("\\%c", *s);
		} else if (*s < 0x20) {
			printf("\\u%04x", *s);
		} else {
			fwrite(s, 1, len, stdout);
		}
		s += len;
		n -= len;
	}
	putchar('"');
}

static void print_flags(uint32_t flags, bool json)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ SPARSE_MAP_RANGE_UNWRITTEN, "unwritten" },
		{ SPARSE_MAP_RANGE_ZEROES, "zeroes" },
	};
	bool first = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		if (json)
			printf("%s\"%s\"", first ? "" : ",", names[i].name);
		else
			printf("%s%s", first ? "  " : ",", names[i].name);
		first = false;
	}
}

static void print_range(const struct sparse_map_range *r, bool json, bool first)
{
	const char *kind = r->kind == SPARSE_MAP_DATA ? "data" : "hole";

	if (json) {
		printf("%s\n        {\"kind\": \"%s\", \"offset\": %lld, \"length\": %lld, \"flags\": [",
		       first ? "" : ",", kind, (long long)r->offset, (long long)r->length);
		print_flags(r->flags, true);
		printf("]}");
	} else {
		printf("  %s %15lld %15lld", kind, (long long)r->offset, (long long)r->length);
		print_flags(r->flags, false);
		putchar('\n');
	}
}

static void print_totals(const struct totals *t, bool json)
{
	if (json)
		printf("\n      ],\n      \"data_bytes\": %lld, \"hole_bytes\": %lld, \"range_count\": %lld",
		       (long long)t->data, (long long)t->hole, (long long)t->ranges);
	else
		printf("  summary: %lld data bytes, %lld hole bytes, %lld ranges\n",
		       (long long)t->data, (long long)t->hole, (long long)t->ranges);
}

/* Report an error for path: always a line on stderr, and in JSON the
 * file's "error" member too. */
static void report(const char *path, const char *what, int err, const struct options *o)
{
	fprintf(stderr, "%s: %s: %s%s%s\n", prog, path, what ? what : "", what ? ": " : "",
		strerror(err));
	if (o->json) {
		printf(",\n      \"error\": ");
		json_string(strerror(err));
	}
}

/* Print the map of one file: 0, or -errno after reporting it. */
static int list_file(const char *path, struct options *o)
{
	struct sparse_map *map = NULL;
	struct sparse_map_range r;
	struct totals t = { 0, 0, 0 };
	int fd, rc;

	if (o->json) {
		printf("      \"file\": ");
		json_string(path);
	}
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; the library
	 * then refuses it (ESPIPE) like any file it cannot map. */
	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | O_BINARY);
	if (fd < 0) {
		rc = -errno;
		report(path, NULL, -rc, o);
		return rc;
	}
	rc = sparse_map_open(fd, o->backend, o->flags, &map);
	if (rc < 0) {
		report(path, NULL, -rc, o);
		close(fd);
		return rc;
	}
	if (o->json)
		printf(",\n      \"backend\": \"%s\", \"size\": %lld,\n      \"ranges\": [",
		       sparse_map_backend_name(sparse_map_get_backend(map)),
		       (long long)sparse_map_size(map));
	else
		printf("%s%s: backend %s, size %lld\n", o->listed ? "\n" : "", path,
		       sparse_map_backend_name(sparse_map_get_backend(map)),
		       (long long)sparse_map_size(map));

	o->listed = true;
	while ((rc = sparse_map_next(map, &r)) == 1) {
		print_range(&r, o->json, t.ranges == 0);
		t.ranges++;
		if (r.kind == SPARSE_MAP_DATA)
			t.data += r.length;
		else
			t.hole += r.length;
	}
	print_totals(&t, o->json);
	if (rc < 0)
		report(path, "mapping stopped", -rc, o);
	sparse_map_close(map);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "sync", no_argument, NULL, 's' },
		{ "verify", no_argument, NULL, 'v' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ "no-read", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { SPARSE_MAP_BACKEND_AUTO, 0, false, false };
	int c, status = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (example_backend(prog, optarg, &o.backend) < 0)
				return 2;
			break;
		case 's':
			o.flags |= SPARSE_MAP_SYNC;
			break;
		case 'v':
			o.flags |= SPARSE_MAP_VERIFY;
			break;
		case 'z':
			o.flags |= SPARSE_MAP_ZEROES;
			break;
		case 'n':
			o.flags |= SPARSE_MAP_NO_READ;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "%s: no FILE given (try --help)\n", prog);
		return 2;
	}

	if (o.json)
		printf("{\n  \"files\": [");
	for (int i = optind; i < argc; i++) {
		if (o.json)
			printf("%s\n    {\n", i == optind ? "" : ",");
		if (list_file(argv[i], &o) < 0)
			status = 1;
		if (o.json)
			printf("\n    }");
	}
	if (o.json)
		printf("\n  ]\n}\n");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: writing the output: %s\n", prog, strerror(errno));
		return 1;
	}
	return status;
}
