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
 *   layout-tool copies NAME DIR COPIER...
 *                                  for each file named on stdin, whether
 *                                  each COPIER SRC DST writes what a read
 *                                  of SRC returns (examples/test-copy-pseudo.sh)
 *
 * `same` reads only where either file has data by the kernel's own
 * SEEK_DATA: cmp would read all 16 GiB of the largest layout (a minute on
 * ext4), and this comparison does not go through the library under test.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/*
 * copies: test-copy-pseudo.sh's loop, here because the shell spends a dozen
 * processes a file on it (1,700 files of /proc and /sys: minutes of CPU).
 * For each file: read it (as cat does, at most 1 MiB, within 5 s), run
 * each copier on it (within 10 s each), read it again.  Two reads that
 * differ: the file changes on its own, left out.  Else each copy must be
 * what was read, and its copier silent on stderr; a mismatch is tried
 * three times (some files change without two reads seeing it).
 */
#define PSEUDO_MAX (1 << 20)

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/* Read all of path, at most max + 1 bytes, within secs: the count, or -1. */
static ssize_t read_all_of(const char *path, unsigned char *buf, size_t max, unsigned int secs)
{
	size_t n = 0;
	int fd;

	timed_out = 0;
	alarm(secs);
	fd = open(path, O_RDONLY | O_NOCTTY);
	while (fd >= 0 && n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 || timed_out) {
			n = (size_t)-1;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	alarm(0);
	if (fd < 0)
		return -1;
	close(fd);
	return n == (size_t)-1 ? -1 : (ssize_t)n;
}

/* Run argv with stdout and stdin /dev/null and stderr to err, killed after
 * secs: 0 when it ran (whatever its status), -1 when it could not. */
static int run_within(char *const argv[], const char *err, unsigned int secs)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	timed_out = 0;
	alarm(secs);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			break;
		if (timed_out)
			kill(pid, SIGKILL);
	}
	alarm(0);
	return 0;
}

static int copies(const char *name, const char *dir, int ncopiers, char **copier)
{
	static unsigned char a[PSEUDO_MAX + 1], b[PSEUDO_MAX + 1], c[PSEUDO_MAX + 1];
	struct sigaction sa;
	char path[4096], out[4200], err[4200], why[512];
	long compared = 0, changing = 0, unreadable = 0, failed = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: a blocked read ends */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	snprintf(out, sizeof(out), "%s/copy", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	while (fgets(path, sizeof(path), stdin)) {
		ssize_t na, nb, nc;
		struct stat st;
		int rc = 1;

		path[strcspn(path, "\n")] = '\0';
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0)
			continue;
		na = read_all_of(path, a, PSEUDO_MAX, 5);
		if (na < 0 || na > PSEUDO_MAX) {
			unreadable++;
			continue;
		}
		for (int attempt = 0; attempt < 3 && rc == 1; attempt++) {
			na = read_all_of(path, a, PSEUDO_MAX, 5);
			if (na < 0 || na > PSEUDO_MAX) {
				rc = 2;
				break;
			}
			why[0] = '\0';
			for (int k = 0; k < ncopiers && !why[0]; k++) {
				char *argv[] = { copier[k], path, out, NULL };

				unlink(out);
				if (run_within(argv, err, 10) < 0) {
					snprintf(why, sizeof(why), "%s: cannot run it", copier[k]);
					break;
				}
				nc = read_all_of(out, c, PSEUDO_MAX, 5);
				if (stat(err, &st) == 0 && st.st_size > 0) {
					FILE *e = fopen(err, "r");
					char line[256] = "";

					if (e) {
						if (!fgets(line, sizeof(line), e))
							line[0] = '\0';
						fclose(e);
					}
					line[strcspn(line, "\n")] = '\0';
					snprintf(why, sizeof(why), "%s: %s", copier[k], line);
				} else if (nc < 0) {
					snprintf(why, sizeof(why), "%s wrote no copy", copier[k]);
				} else if (nc != na || memcmp(a, c, (size_t)na) != 0) {
					snprintf(why, sizeof(why), "%s wrote %zd bytes, cat %zd, or other bytes",
						 copier[k], nc, na);
				}
			}
			nb = read_all_of(path, b, PSEUDO_MAX, 5);
			if (na < 0 || nb != na || memcmp(a, b, (size_t)na) != 0)
				rc = 2;
			else
				rc = why[0] ? 1 : 0;
		}
		if (rc == 2) {
			changing++;
		} else {
			compared++;
			if (rc == 1) {
				printf("FAIL: %s: %s\n", path, why);
				failed++;
			}
		}
	}
	unlink(out);
	unlink(err);
	printf("%s: %ld compared, %ld changing on their own, %ld not readable by cat\n", name,
	       compared, changing, unreadable);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "copies") == 0)
		return copies(argv[2], argv[3], argc - 4, argv + 4);
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
	fprintf(stderr, "usage: layout-tool names | make NAME FILE | same A B | append FILE MAX |"
			" copies NAME DIR COPIER...\n");
	return 2;
}
