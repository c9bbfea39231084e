/* SPDX-License-Identifier: MIT */
/*
 * sparse-map map: the ranges of files, as text, as JSON in the shape
 * `qemu-img map --output=json` prints, or as one bar per file.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum output { OUT_TEXT, OUT_JSON, OUT_BAR };

struct map_cmd {
	struct tool_map_opts opts;
	enum output out;
	int width;		/* of a bar, in cells */
	bool color;
};

/* A bar's cells: what share of each is data, stored zeroes, preallocated. */
#define BAR_MAX 1024
struct bar {
	int64_t data[BAR_MAX], zeroes[BAR_MAX], unwritten[BAR_MAX];
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: sparse-map map [OPTION]... FILE...\n"
		"Show which byte ranges of each FILE hold data and which are holes.\n"
		"\n"
		"  --output=text   one line per range, then a summary (the default)\n"
		"  --output=json   per file, a JSON array of ranges with the fields of\n"
		"                  qemu-img map --output=json (start, length, depth, present,\n"
		"                  zero, data, offset) and the library's kind and flags\n"
		"  --bar           each file as one line of the terminal's width:\n"
		"                  # data, + partly data, z stored zeroes, u preallocated,\n"
		"                  . hole\n"
		"  --width=N       the bar's width in characters (default: the terminal's)\n"
		"  --color=WHEN    colour the bar: auto (on a terminal, unless NO_COLOR is\n"
		"                  set), always or never\n"
		"  --backend=NAME  auto (default), seek, fiemap, scan, ranges or none\n"
		"  --zeroes        also find blocks of stored zeroes (reads the data)\n"
		"  --verify        read every hole back; what is not zero is data\n"
		"  --no-read       read no file data: where only reading finds holes,\n"
		"                  everything is data\n"
		"  --sync          flush the file's dirty data first\n"
		"  --help          print this help and exit\n");
}

/* The terminal's width, for a bar that fills a line. */
static int terminal_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	long n;
	char *end;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (cols) {
		errno = 0;
		n = strtol(cols, &end, 10);
		if (errno == 0 && *end == '\0' && n > 0)
			return n > BAR_MAX ? BAR_MAX : (int)n;
	}
	return 80;
}

static void print_text_range(const struct sparse_map_range *r)
{
	char h[32];

	printf("%20lld %20lld  %s%s%s  %s\n", (long long)r->offset, (long long)r->length,
	       r->kind == SPARSE_MAP_DATA ? "data" : "hole",
	       r->flags & SPARSE_MAP_RANGE_ZEROES ? " zeroes" : "",
	       r->flags & SPARSE_MAP_RANGE_UNWRITTEN ? " unwritten" : "",
	       tool_human(r->length, h));
}

static void print_json_range(const struct sparse_map_range *r, bool first)
{
	bool zeroes = r->flags & SPARSE_MAP_RANGE_ZEROES;
	bool unwritten = r->flags & SPARSE_MAP_RANGE_UNWRITTEN;
	/* qemu-img's sense: data means stored in the file, zero reads as zeroes. */
	bool data = r->kind == SPARSE_MAP_DATA || zeroes;

	printf("%s{ \"start\": %lld, \"length\": %lld, \"depth\": 0, \"present\": true, "
	       "\"zero\": %s, \"data\": %s",
	       first ? "[" : ",\n", (long long)r->offset, (long long)r->length,
	       r->kind == SPARSE_MAP_HOLE ? "true" : "false", data ? "true" : "false");
	if (data)
		printf(", \"offset\": %lld", (long long)r->offset);
	printf(", \"kind\": \"%s\", \"flags\": [%s%s%s]}",
	       r->kind == SPARSE_MAP_DATA ? "data" : "hole", zeroes ? "\"zeroes\"" : "",
	       zeroes && unwritten ? ", " : "", unwritten ? "\"unwritten\"" : "");
}

/* Count [off, off + len) of r into the cells it covers. */
static void bar_add(struct bar *b, int cells, int64_t size, const struct sparse_map_range *r)
{
	int64_t *to;
	int64_t off = r->offset, end = r->offset + r->length;

	if (r->kind == SPARSE_MAP_DATA)
		to = b->data;
	else if (r->flags & SPARSE_MAP_RANGE_ZEROES)
		to = b->zeroes;
	else if (r->flags & SPARSE_MAP_RANGE_UNWRITTEN)
		to = b->unwritten;
	else
		return;
	while (off < end) {
		/* Cell c covers [c * size / cells, (c + 1) * size / cells),
		 * rounded down (bar_print() measures it so): off is in the
		 * last cell that starts at or before it. */
		int c = (int)(((__int128)(off + 1) * cells - 1) / size);
		int64_t cell_end = (int64_t)((__int128)(c + 1) * size / cells);

		if (c >= cells)
			break;
		if (cell_end > end)
			cell_end = end;
		to[c] += cell_end - off;
		off = cell_end;
	}
}

static void bar_print(const struct bar *b, int cells, int64_t size, bool color)
{
	int last = -1;

	for (int c = 0; c < cells; c++) {
		int64_t width = (int64_t)((__int128)(c + 1) * size / cells) -
				(int64_t)((__int128)c * size / cells);
		char ch = '.';
		int paint = 0;	/* ANSI colour, 0: none */

		/* Data shows in every cell that holds a byte of it. */
		if (b->data[c] > 0 && b->data[c] >= width) {
			ch = '#';
			paint = 32;
		} else if (b->data[c] > 0) {
			ch = '+';
			paint = 32;
		} else if (b->zeroes[c] > 0) {
			ch = 'z';
			paint = 33;
		} else if (b->unwritten[c] > 0) {
			ch = 'u';
			paint = 34;
		}
		if (color && paint != last) {
			printf("\033[%dm", paint);
			last = paint;
		}
		putchar(ch);
	}
	if (color && last != 0)
		printf("\033[0m");
}

/* Map one file: 0, or -1 after saying why. */
static int map_file(const struct map_cmd *cmd, const char *path, struct bar *bar)
{
	struct sparse_map *map;
	struct sparse_map_range r;
	int64_t size, data = 0, zeroes = 0, unwritten = 0, runs = 0;
	int fd, rc, cells = cmd->width;
	bool first = true;
	char h1[32], h2[32];

	fd = tool_open_read(path);
	if (fd < 0) {
		tool_fail_errno(path, errno, NULL);
		return -1;
	}
	rc = tool_map_open(fd, &cmd->opts, &map);
	if (rc < 0) {
		tool_fail_errno(path, rc, "cannot map it");
		close(fd);
		return -1;
	}
	size = sparse_map_size(map);
	if (cmd->out == OUT_TEXT)
		printf("%s: %lld bytes (%s), backend %s\n", path, (long long)size,
		       tool_human(size, h1), sparse_map_backend_name(sparse_map_get_backend(map)));
	if (cmd->out == OUT_BAR) {
		memset(bar, 0, sizeof(*bar));
		if (size > 0 && size < cells)
			cells = (int)size;
	}
	while ((rc = sparse_map_next(map, &r)) == 1) {
		if (r.kind == SPARSE_MAP_DATA) {
			data += r.length;
			runs++;
		} else if (r.flags & SPARSE_MAP_RANGE_ZEROES) {
			zeroes += r.length;
		} else if (r.flags & SPARSE_MAP_RANGE_UNWRITTEN) {
			unwritten += r.length;
		}
		if (cmd->out == OUT_TEXT)
			print_text_range(&r);
		else if (cmd->out == OUT_JSON)
			print_json_range(&r, first);
		else
			bar_add(bar, cells, size, &r);
		first = false;
	}
	if (rc < 0) {
		if (cmd->out == OUT_JSON && !first)
			printf("]\n");
		tool_fail_errno(path, rc, "mapping stopped");
		sparse_map_close(map);
		close(fd);
		return -1;
	}
	switch (cmd->out) {
	case OUT_TEXT:
		printf("%s: %lld bytes of data in %lld run%s (%s), %lld of holes",
		       path, (long long)data, (long long)runs, runs == 1 ? "" : "s",
		       tool_human(data, h1), (long long)(size - data));
		if (zeroes)
			printf(", %lld of them stored zeroes", (long long)zeroes);
		if (unwritten)
			printf(", %lld preallocated", (long long)unwritten);
		printf("\n");
		break;
	case OUT_JSON:
		printf(first ? "[]\n" : "]\n");
		break;
	case OUT_BAR:
		printf("%s: ", path);
		if (size == 0) {
			printf("empty\n");
			break;
		}
		printf("%s, %s data (%.1f%%), %lld run%s, %s\n", tool_human(size, h1),
		       tool_human(data, h2), 100.0 * (double)data / (double)size,
		       (long long)runs, runs == 1 ? "" : "s",
		       sparse_map_backend_name(sparse_map_get_backend(map)));
		bar_print(bar, cells, size, cmd->color);
		putchar('\n');
		break;
	}
	sparse_map_close(map);
	close(fd);
	return 0;
}

int tool_map(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "bar", no_argument, NULL, 'B' },
		{ "width", required_argument, NULL, 'w' },
		{ "color", required_argument, NULL, 'c' },
		{ "colour", required_argument, NULL, 'c' },
		{ "backend", required_argument, NULL, 'b' },
		{ "zeroes", no_argument, NULL, 'z' },
		{ "verify", no_argument, NULL, 'v' },
		{ "no-read", no_argument, NULL, 'n' },
		{ "sync", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct map_cmd cmd = { { SPARSE_MAP_BACKEND_AUTO, 0 }, OUT_TEXT, 0, false };
	const char *color = "auto", *no_color = getenv("NO_COLOR");
	struct bar *bar = NULL;
	int opt, rc, status = TOOL_OK;
	char *end;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (strcmp(optarg, "text") == 0)
				cmd.out = OUT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				cmd.out = OUT_JSON;
			else
				return tool_usage_error("map", "unknown --output '%s': text or json",
							optarg);
			break;
		case 'B':
			cmd.out = OUT_BAR;
			break;
		case 'w': {
			long w;

			errno = 0;
			w = strtol(optarg, &end, 10);
			if (errno || *end || w < 1 || w > BAR_MAX)
				return tool_usage_error("map", "--width wants 1 to %d, not '%s'",
							BAR_MAX, optarg);
			cmd.width = (int)w;
			break;
		}
		case 'c':
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return tool_usage_error("map", "unknown --color '%s': auto, always or never",
							optarg);
			color = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_OK;
		default:
			rc = tool_map_option("map", opt, optarg, &cmd.opts);
			if (rc < 0)
				return TOOL_USAGE;
			if (rc == 0)
				return tool_bad_option("map", argv);
		}
	}
	if (optind >= argc)
		return tool_usage_error("map", "no FILE given");
	if (tool_map_opts_check("map", &cmd.opts) < 0)
		return TOOL_USAGE;
	if (cmd.out == OUT_BAR) {
		if (cmd.width == 0)
			cmd.width = terminal_width();
		if (cmd.width > BAR_MAX)
			cmd.width = BAR_MAX;
		cmd.color = strcmp(color, "always") == 0 ||
			    (strcmp(color, "auto") == 0 && isatty(STDOUT_FILENO) &&
			     !(no_color && *no_color));
		bar = malloc(sizeof(*bar));
		if (!bar) {
			tool_fail_errno("sparse-map map", ENOMEM, NULL);
			return TOOL_FAILED;
		}
	}
	for (int i = optind; i < argc; i++)
		if (map_file(&cmd, argv[i], bar) < 0)
			status = TOOL_FAILED;
	if (cmd.out == OUT_BAR)
		printf("# data  + partly data  z stored zeroes  u preallocated  . hole\n");
	free(bar);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		tool_fail_errno("standard output", errno ? errno : EIO, "cannot write");
		return TOOL_FAILED;
	}
	return status;
}
