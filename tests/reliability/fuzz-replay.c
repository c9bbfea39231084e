/* SPDX-License-Identifier: MIT */
/*
 * Runs inputs through the fuzz target (fuzz-ops.c) without libFuzzer: the
 * files and directories named, else $top_srcdir/tests/reliability/corpus,
 * the seeds and every crash found so far.  A broken rule aborts.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int runs;

static void run_file(const char *path)
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		perror(path);
		exit(1);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	runs++;
}

static void run_path(const char *path)
{
	struct stat st;
	struct dirent **names;
	int n;

	if (stat(path, &st) < 0) {
		perror(path);
		exit(1);
	}
	if (!S_ISDIR(st.st_mode)) {
		run_file(path);
		return;
	}
	/* In name order, so that a failure repeats the same way. */
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
			run_path(sub);
		}
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	char corpus[4096];
	const char *top = getenv("top_srcdir");

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			run_path(argv[i]);
	} else {
		snprintf(corpus, sizeof(corpus), "%s/tests/reliability/corpus", top ? top : ".");
		run_path(corpus);
	}
	printf("fuzz replay: %d inputs, every rule held\n", runs);
	return runs ? 0 : 1;
}
