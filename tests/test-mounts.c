/* SPDX-License-Identifier: MIT */
/*
 * The probe on file systems that are not the build's (root only): ramfs has
 * the kernel's all-data SEEK stub and no FIEMAP, so AUTO must see through
 * the stub and pick SCAN; tmpfs has SEEK but no FIEMAP; a loop block device
 * is mapped by reading it.  Mapping stores nothing: a ramfs hole is found
 * without reading it (reading would store it), and a scan drops again the
 * pages it brought into the cache.  Mounts are made in a mount namespace
 * of this process's own, inside a private temporary directory, and undone
 * at exit.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#ifdef SM_HAVE_FIEMAP
#include <linux/fiemap.h>
#include <linux/fs.h>
#endif
#include <linux/loop.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-run.h"
#include "helpers.h"
#include "../lib/sparse-map-private.h"
#include "../lib/sys-calls.h"

/* What AUTO picks where SEEK would do, in a build with or without it. */
#ifdef SM_HAVE_SEEK
#define SEEK_OR_SCAN SPARSE_MAP_BACKEND_SEEK
#define SEEK_OR_NONE SPARSE_MAP_BACKEND_SEEK
#else
#define SEEK_OR_SCAN SPARSE_MAP_BACKEND_SCAN
#define SEEK_OR_NONE SPARSE_MAP_BACKEND_NONE
#endif

static char top[4000], ramfs[4096], tmpfs[4096], hugefs[4096], backing[4096];
static char loopdev[64];
static bool ramfs_ok, tmpfs_ok, hugefs_ok;
/* Loop-mounted images of the file systems that have preallocation of
 * their own, made here with mkfs (test_split_flags_on_every_file_system). */
static const char *const image_types[] = { "ext4", "xfs", "btrfs" };
#define NIMAGES 3
static char image_dir[NIMAGES][4096];
static bool image_ok[NIMAGES];
static pid_t owner;	/* Check forks a child per test: only main() cleans up */

static void cleanup(void)
{
	if (getpid() != owner)
		return;
	if (ramfs_ok)
		umount2(ramfs, MNT_DETACH);
	if (tmpfs_ok)
		umount2(tmpfs, MNT_DETACH);
	if (hugefs_ok)
		umount2(hugefs, MNT_DETACH);
	ramfs_ok = tmpfs_ok = hugefs_ok = false;
	for (int i = 0; i < NIMAGES; i++) {
		if (image_ok[i])
			umount2(image_dir[i], MNT_DETACH);
		image_ok[i] = false;
		if (*image_dir[i])
			rmdir(image_dir[i]);
	}
	if (*backing)
		unlink(backing);
	rmdir(ramfs);
	rmdir(tmpfs);
	rmdir(hugefs);
	rmdir(top);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A loop device over backing, or -1.  LO_FLAGS_AUTOCLEAR detaches it when
 * the last fd closes, so nothing is left behind even on a crash. */
static int attach_loop(const char *file)
{
	struct loop_info64 info;
	int ctl, n, dev, back;

	ctl = open("/dev/loop-control", O_RDWR);
	if (ctl < 0)
		return -1;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -1;
	snprintf(loopdev, sizeof(loopdev), "/dev/loop%d", n);
	dev = open(loopdev, O_RDWR);
	back = open(file, O_RDWR);
	if (dev < 0 || back < 0 || ioctl(dev, LOOP_SET_FD, back) < 0) {
		if (dev >= 0)
			close(dev);
		if (back >= 0)
			close(back);
		return -1;
	}
	close(back);
	memset(&info, 0, sizeof(info));
	info.lo_flags = LO_FLAGS_AUTOCLEAR;
	ioctl(dev, LOOP_SET_STATUS64, &info);
	return dev;
}

/* A fresh file system of type on a 512 MiB sparse image in top, mounted
 * at image_dir[i]: true, or false with the reason on stderr (mkfs not
 * installed, no loop device, a kernel without the type). */
static bool mount_image(int i)
{
	const char *type = image_types[i];
	char img[4200], mkfs[32], dev[64];
	int fd, status, loop;
	pid_t pid;

	snprintf(image_dir[i], sizeof(image_dir[i]), "%s/%s", top, type);
	snprintf(img, sizeof(img), "%s/%s.img", top, type);
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", type);
	if (mkdir(image_dir[i], 0700) != 0)
		return false;
	fd = open(img, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, 512 << 20) != 0) {
		fprintf(stderr, "%s: cannot make %s: %s\n", type, img, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(img);
		return false;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		/* ext4's -F and XFS's and Btrfs's -f: an image, not a disk. */
		execlp(mkfs, mkfs, "-q", strcmp(type, "ext4") == 0 ? "-F" : "-f", img, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s: %s failed or is not installed: not tested\n", type, mkfs);
		unlink(img);
		return false;
	}
	loop = attach_loop(img);
	unlink(img);	/* the loop device holds it now */
	if (loop < 0) {
		fprintf(stderr, "%s: no loop device here: not tested\n", type);
		return false;
	}
	snprintf(dev, sizeof(dev), "%s", loopdev);
	if (mount(dev, image_dir[i], type, 0, NULL) != 0) {
		fprintf(stderr, "%s: the kernel would not mount it (%s): not tested\n", type,
			strerror(errno));
		close(loop);
		return false;
	}
	close(loop);	/* the mount keeps the device; autoclear at umount */
	return true;
}

static int sparse_file_in(const char *dir, char *path, size_t len)
{
	int fd = th_create(dir, path, len);

	th_truncate(fd, 1 << 20);
	th_fill(fd, 64 * 1024, 8192);
	th_fill(fd, 512 * 1024 + 100, 10);
	return fd;
}

static void expect_contract(int fd, enum sparse_map_backend b, enum sparse_map_backend picked,
			    const char *where)
{
	struct th_map m;
	const char *err;

	ck_assert_int_eq(th_collect(fd, b, 0, 0, &m), 0);
	ck_assert_msg(picked == SPARSE_MAP_BACKEND_AUTO || m.backend == picked,
		      "%s: %s picked %s, expected %s", where,
		      sparse_map_backend_name(b), sparse_map_backend_name(m.backend),
		      sparse_map_backend_name(picked));
	err = th_check_contract(fd, &m, 0);
	ck_assert_msg(err == NULL, "%s: %s", where, err);
	th_map_free(&m);
}


/* cachestat(2) (Linux 6.5; 451 on every architecture but alpha): pages of
 * [off, off + len) in the page cache, or -errno. */
static int64_t cached_pages(int fd, int64_t off, int64_t len)
{
	struct { uint64_t off, len; } range = { (uint64_t)off, (uint64_t)len };
	struct { uint64_t cache, dirty, writeback, evicted, recently_evicted; } cs;

	if (syscall(451, fd, &range, &cs, 0) < 0)
		return -errno;
	return (int64_t)cs.cache;
}

/*
 * Under valgrind (the CI stage sets SM_TEST_UNDER_VALGRIND) the kernel's
 * page-cache answers are not the kernel's: valgrind 3.19 fails cachestat
 * with ENOSYS and answers mincore of a file mapping itself, wrongly.  The
 * library then rightly believes neither and falls back; the tests that
 * expect it to find ramfs holes without reading run natively only.
 */
static bool page_answers_are_not_the_kernels(void)
{
	if (!getenv("SM_TEST_UNDER_VALGRIND"))
		return false;
	fprintf(stderr, "under valgrind: ramfs hole finding is tested natively only\n");
	return true;
}

/* The library as on a kernel before 6.5, which has no cachestat. */
static int no_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	(void)fd; (void)off; (void)len; (void)cs;
	errno = ENOSYS;
	return -1;
}

static void without_cachestat(bool gone)
{
	sm_sys_table.cachestat = gone ? no_cachestat : NULL;
}

/* Pages of the first len bytes that mincore(2) sees, through a mapping
 * that is never touched. */
static int64_t mincore_pages(int fd, size_t len)
{
	unsigned char vec[1024];
	int64_t n = 0;
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	ck_assert_msg(p != MAP_FAILED && len / 4096 <= sizeof(vec), "mmap");
	ck_assert_int_eq(mincore(p, len, vec), 0);
	munmap(p, len);
	for (size_t i = 0; i < len / 4096; i++)
		n += vec[i] & 1;
	return n;
}

static int64_t blocks_of(int fd)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return (int64_t)st.st_blocks;
}

/* Unevictable + Shmem from /proc/meminfo, in KiB: where ramfs pages show. */
static long long pinned_kib(void)
{
	char line[256];
	long long kib, sum = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Unevictable: %lld kB", &kib) == 1 ||
		    sscanf(line, "Shmem: %lld kB", &kib) == 1)
			sum += kib;
	fclose(f);
	return sum;
}

#define GIB (1LL << 30)

/* A 1 GiB ramfs file with a page of data at 64 KiB and one at 512 MiB + 100. */
static int big_sparse_ramfs_file(char *path, size_t len)
{
	int fd = th_create(ramfs, path, len);

	th_truncate(fd, GIB);
	th_fill(fd, 64 * 1024, 4096);
	th_fill(fd, 512 * 1024 * 1024 + 100, 10);
	ck_assert_int_eq(blocks_of(fd), 16);	/* two pages stored */
	return fd;
}

/* The facts the ramfs code stands on, on this kernel: reading a hole
 * stores a page; cachestat, and mincore of an untouched mapping, count
 * exactly the stored pages. */
START_TEST(test_ramfs_reading_a_hole_stores_it)
{
	char p[4096], buf[4096];
	int fd;
	int64_t n;

	ck_assert(ramfs_ok);
	fd = th_create(ramfs, p, sizeof(p));
	th_truncate(fd, 1 << 20);
	th_fill(fd, 0, 4096);
	ck_assert_int_eq(blocks_of(fd), 8);
	n = cached_pages(fd, 0, 1 << 20);
	if (n == -ENOSYS) {
		fprintf(stderr, "no cachestat on this kernel: ramfs holes are not searched\n");
	} else {
		ck_assert_msg(n == 1, "cachestat counts %lld pages, st_blocks says 1", (long long)n);
		ck_assert_int_eq(cached_pages(fd, 4096, (1 << 20) - 4096), 0);
	}
	ck_assert_msg(mincore_pages(fd, 1 << 20) == 1,
		      "mincore of an untouched mapping counts %lld pages, st_blocks says 1",
		      (long long)mincore_pages(fd, 1 << 20));
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 8192), (ssize_t)sizeof(buf));
	ck_assert_msg(blocks_of(fd) == 16, "reading a ramfs hole no longer stores it "
		      "(st_blocks %lld): the notes in sparse_map(3) are out of date",
		      (long long)blocks_of(fd));
	if (n != -ENOSYS)
		ck_assert_int_eq(cached_pages(fd, 0, 1 << 20), 2);
	close(fd);
	unlink(p);
}
END_TEST

/* Every backend and flag that runs on ramfs maps a 1 GiB sparse file
 * without storing a page or pinning memory, twice alike, and AUTO, SCAN
 * and ZEROES find its holes. */
static const struct { enum sparse_map_backend b; unsigned int flags; bool finds_holes; } ramfs_runs[] = {
	{ SPARSE_MAP_BACKEND_AUTO, 0, true },
	{ SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY, true },
	{ SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES, true },
	{ SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_SYNC, true },
	{ SPARSE_MAP_BACKEND_SCAN, 0, true },
	{ SPARSE_MAP_BACKEND_SCAN, SPARSE_MAP_ZEROES, true },
#ifdef SM_HAVE_SEEK
	{ SPARSE_MAP_BACKEND_SEEK, 0, false },
	{ SPARSE_MAP_BACKEND_SEEK, SPARSE_MAP_VERIFY, false },
	{ SPARSE_MAP_BACKEND_SEEK, SPARSE_MAP_ZEROES, true },
#endif
};

#define NRAMFS_RUNS (sizeof(ramfs_runs) / sizeof(ramfs_runs[0]))

/* _i < NRAMFS_RUNS with cachestat, the rest with mincore standing in. */
START_TEST(test_ramfs_map_stores_nothing)
{
	char p[4096];
	struct th_map m1, m2;
	int fd = big_sparse_ramfs_file(p, sizeof(p));
	long long before = pinned_kib();
	int i = _i % (int)NRAMFS_RUNS;
	const char *what = _i < (int)NRAMFS_RUNS ? sparse_map_backend_name(ramfs_runs[i].b) :
			   i == 0 ? "auto (mincore)" : "(mincore)";
	unsigned int flags = ramfs_runs[i].flags;
	if (page_answers_are_not_the_kernels()) {
		close(fd);
		unlink(p);
		return;
	}

	without_cachestat(_i >= (int)NRAMFS_RUNS);
	ck_assert_int_eq(th_collect(fd, ramfs_runs[i].b, flags, 0, &m1), 0);
	ck_assert_int_eq(th_collect(fd, ramfs_runs[i].b, flags, 0, &m2), 0);
	without_cachestat(false);
	ck_assert_msg(blocks_of(fd) == 16, "%s flags %#x: st_blocks 16 -> %lld", what, flags,
		      (long long)blocks_of(fd));
	/* 1 GiB stored would add 1048576 KiB; other tests running beside this
	 * one stay far below 256 MiB. */
	ck_assert_msg(pinned_kib() - before < 256 * 1024, "%s flags %#x: %lld KiB more pinned",
		      what, flags, pinned_kib() - before);
	ck_assert_msg(m1.n == m2.n && memcmp(m1.r, m2.r, m1.n * sizeof(*m1.r)) == 0,
		      "%s flags %#x: two maps differ: %s", what, flags, th_describe(&m2));
	if (ramfs_runs[i].finds_holes)
		ck_assert_msg(m1.n == 5 && m1.r[1].kind == SPARSE_MAP_DATA &&
			      m1.r[1].offset == 64 * 1024 && m1.r[1].length == 4096 &&
			      m1.r[3].offset == 512 * 1024 * 1024 && m1.r[3].length == 4096,
			      "%s flags %#x: expected H D H D H, got %s", what, flags,
			      th_describe(&m1));
	else
		ck_assert_msg(m1.n == 1 && m1.r[0].kind == SPARSE_MAP_DATA, "%s: %s", what,
			      th_describe(&m1));
	th_map_free(&m1);
	th_map_free(&m2);
	close(fd);
	unlink(p);
}
END_TEST

/* A loop's calls share one map on ramfs (lib/lseek.c): a write, truncate
 * or zeroes between two calls give the answer a fresh map gives, within
 * one tick of ramfs's coarse clock (_i 0) and after it (1). */
START_TEST(test_ramfs_lseek_loop_sees_every_change)
{
	char p[4096];
	int fd;
	const char *bad;

	ck_assert(ramfs_ok);
	fd = th_create(ramfs, p, sizeof(p));
	bad = th_lseek_after_changes(fd, SPARSE_MAP_BACKEND_AUTO, th_blksize(fd), _i == 1);
	ck_assert_msg(!bad, "%s", bad ? bad : "");
	close(fd);
	unlink(p);
}
END_TEST

/* cachestat calls over a whole file of this size, counted at the seam. */
static int64_t whole_file_size;
static int whole_file_counts;
static int (*real_cachestat)(int fd, int64_t off, int64_t len, struct sm_cachestat *cs);

static int count_whole_file(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	if (off == 0 && len == whole_file_size)
		whole_file_counts++;
	return real_cachestat(fd, off, len, cs);
}

/* Where SPARSE_MAP_BACKEND names a backend that cannot serve a ramfs file
 * (FIEMAP) for a map that reads (VERIFY), AUTO takes over: the file's
 * pages are counted once, not by the named backend's check and again by
 * AUTO's probe. */
START_TEST(test_ramfs_pages_counted_once_when_the_env_gives_way)
{
	char p[4096];
	struct sparse_map *map;
	int fd = big_sparse_ramfs_file(p, sizeof(p));

	if (page_answers_are_not_the_kernels()) {
		close(fd);
		unlink(p);
		return;
	}
	whole_file_size = lseek(fd, 0, SEEK_END);
	whole_file_counts = 0;
	real_cachestat = sm_sys_table.cachestat;
	ck_assert_msg(real_cachestat != NULL, "the seam has no cachestat to count");
	setenv("SPARSE_MAP_BACKEND", "fiemap", 1);
	sm_sys_table.cachestat = count_whole_file;
	ck_assert_int_eq(sparse_map_open(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY, &map), 0);
	sm_sys_table.cachestat = real_cachestat;
	unsetenv("SPARSE_MAP_BACKEND");
	ck_assert_msg(whole_file_counts == 1, "the whole file's pages were counted %d times",
		      whole_file_counts);
	sparse_map_close(map);
	close(fd);
	unlink(p);
}
END_TEST

/* A loop's kept map on ramfs, asked about an earlier offset after a later
 * one, reads no hole there (reading a ramfs hole stores a page): what the
 * page cache said about the later offset says nothing of the earlier.
 * After two seconds, when the kept map believes most. */
START_TEST(test_ramfs_lseek_back_stores_nothing)
{
	char p[4096];
	int fd;
	int64_t blocks;

	ck_assert(ramfs_ok);
	if (page_answers_are_not_the_kernels())
		return;
	fd = th_create(ramfs, p, sizeof(p));
	th_fill(fd, 64 * 1024, 8 << 20);	/* past the 4 MiB page-count window */
	blocks = blocks_of(fd);
	usleep(2100 * 1000);
	ck_assert_int_eq(sparse_map_lseek(fd, 64 * 1024, SPARSE_MAP_SEEK_DATA), 64 * 1024);
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA), 64 * 1024);
	ck_assert_msg(blocks_of(fd) == blocks, "SEEK_DATA(0) after SEEK_DATA(64 KiB) stored %lld "
		      "blocks", (long long)(blocks_of(fd) - blocks));
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE), 0);
	close(fd);
	unlink(p);
}
END_TEST

/* A write that stalls between stamping the file's times and copying its
 * bytes: its source page is missing, and a userfaultfd handler supplies
 * it only when told to. */
struct stalled_write {
	int fd, uffd;
	unsigned char *src;
	int faulted, release;	/* set by the handler, by the test */
	ssize_t wrote;
};

static void *stalled_write_handler(void *arg)
{
	struct stalled_write *w = arg;
	struct uffd_msg msg;
	struct pollfd pfd = { w->uffd, POLLIN, 0 };
	static unsigned char page[4096] __attribute__((aligned(4096)));
	struct uffdio_copy copy;

	if (poll(&pfd, 1, 20000) != 1 || read(w->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return NULL;
	__atomic_store_n(&w->faulted, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&w->release, __ATOMIC_SEQ_CST))
		usleep(10 * 1000);
	memset(page, 'x', sizeof(page));
	copy = (struct uffdio_copy){ .dst = (uintptr_t)w->src, .src = (uintptr_t)page,
				     .len = sizeof(page) };
	(void)ioctl(w->uffd, UFFDIO_COPY, &copy);
	return NULL;
}

static void *stalled_write_writer(void *arg)
{
	struct stalled_write *w = arg;

	w->wrote = pwrite(w->fd, w->src, 4096, 4096);
	return NULL;
}

/* Zeroes a loop's call read stay zeroes to its next call only if read
 * again: here a write stamped the times, stalled, a call read the old
 * zeroes more than two seconds later (so the times look settled), and the
 * write landed, leaving size, st_blocks and the times as they were.  The
 * next call must find the data. */
START_TEST(test_ramfs_lseek_sees_a_stalled_write)
{
	char p[4096];
	struct stalled_write w = { .fd = -1 };
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_t handler, writer;
	int fd;

	ck_assert(ramfs_ok);
	if (page_answers_are_not_the_kernels())
		return;
	w.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (w.uffd < 0 && errno == ENOSYS) {
		fprintf(stderr, "no userfaultfd: the stalled write is not tested\n");
		return;
	}
	ck_assert_msg(w.uffd >= 0 && ioctl(w.uffd, UFFDIO_API, &api) == 0, "userfaultfd: %s",
		      strerror(errno));
	w.src = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(w.src != MAP_FAILED);
	reg = (struct uffdio_register){ .range = { (uintptr_t)w.src, 4096 },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	ck_assert_int_eq(ioctl(w.uffd, UFFDIO_REGISTER, &reg), 0);

	fd = th_create(ramfs, p, sizeof(p));
	th_fill(fd, 0, 4096);
	th_zero_fill(fd, 4096, 4096);	/* a stored page of zeroes */
	th_truncate(fd, 1 << 20);
	w.fd = fd;
	ck_assert_int_eq(pthread_create(&handler, NULL, stalled_write_handler, &w), 0);
	ck_assert_int_eq(pthread_create(&writer, NULL, stalled_write_writer, &w), 0);
	for (int i = 0; i < 2000 && !__atomic_load_n(&w.faulted, __ATOMIC_SEQ_CST); i++)
		usleep(10 * 1000);
	ck_assert_msg(w.faulted, "the write never faulted on its source");
	usleep(2200 * 1000);
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_HOLE), 4096);
	__atomic_store_n(&w.release, 1, __ATOMIC_SEQ_CST);
	pthread_join(writer, NULL);
	pthread_join(handler, NULL);
	ck_assert_int_eq(w.wrote, 4096);
	ck_assert_int_eq(sparse_map_lseek(fd, 4096, SPARSE_MAP_SEEK_DATA), 4096);
	ck_assert_int_eq(sparse_map_lseek(fd, 4096, SPARSE_MAP_SEEK_HOLE), 8192);
	munmap(w.src, 4096);
	close(w.uffd);
	close(fd);
	unlink(p);
}
END_TEST

/* The fact sparse_map_lseek(3) NOTES warns of: on ramfs a second write
 * through a shared mapping to a page already written that way changes
 * neither mtime nor ctime, so a loop's kept bytes cannot see it (the
 * first write to a page does change them).  Fails if ramfs starts to
 * stamp such writes, when the warning can go. */
START_TEST(test_ramfs_mapped_rewrite_keeps_the_times)
{
	char p[4096];
	struct stat a, b, c;
	unsigned char *mem;
	int fd;

	ck_assert(ramfs_ok);
	fd = th_create(ramfs, p, sizeof(p));
	th_truncate(fd, 8192);
	mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert(mem != MAP_FAILED);
	ck_assert_int_eq(fstat(fd, &a), 0);
	usleep(20 * 1000);	/* past a tick of the coarse clock */
	mem[10] = 1;
	ck_assert_int_eq(fstat(fd, &b), 0);
	usleep(20 * 1000);
	mem[20] = 1;
	ck_assert_int_eq(fstat(fd, &c), 0);
	munmap(mem, 8192);
	ck_assert_msg(b.st_ctim.tv_sec != a.st_ctim.tv_sec || b.st_ctim.tv_nsec != a.st_ctim.tv_nsec,
		      "the first write through the mapping left ctime as it was");
	ck_assert_msg(c.st_ctim.tv_sec == b.st_ctim.tv_sec && c.st_ctim.tv_nsec == b.st_ctim.tv_nsec &&
		      c.st_mtim.tv_sec == b.st_mtim.tv_sec && c.st_mtim.tv_nsec == b.st_mtim.tv_nsec,
		      "a second write to the page changed the times: sparse_map_lseek(3) "
		      "NOTES can drop its warning");
	close(fd);
	unlink(p);
}
END_TEST

/* The portable lseek, called many times, finds the holes every time and
 * stores nothing; with cachestat (_i 0) and with mincore standing in (1). */
START_TEST(test_ramfs_lseek_stores_nothing)
{
	char p[4096];
	int fd = big_sparse_ramfs_file(p, sizeof(p));
	long long before = pinned_kib();
	if (page_answers_are_not_the_kernels()) {
		close(fd);
		unlink(p);
		return;
	}

	without_cachestat(_i == 1);
	for (int i = 0; i < 200; i++) {
		int64_t off = (int64_t)i * (GIB / 200);
		int64_t data = off <= 64 * 1024 + 4095 ? (off > 64 * 1024 ? off : 64 * 1024) :
			       off <= 512 * 1024 * 1024 + 4095 ?
			       (off > 512 * 1024 * 1024 ? off : 512 * 1024 * 1024) : -1;

		ck_assert_int_eq(sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_DATA), data);
		if (data >= 0)
			ck_assert_int_eq(sparse_map_lseek(fd, data, SPARSE_MAP_SEEK_HOLE),
					 (data < 1 << 20 ? 64 * 1024 : 512 * 1024 * 1024) + 4096);
		ck_assert_int_eq(sparse_map_lseek(fd, off, SPARSE_MAP_SEEK_HOLE),
				 off >= 64 * 1024 && off < 68 * 1024 ? 68 * 1024 :
				 off >= 512 * 1024 * 1024 && off < 512 * 1024 * 1024 + 4096 ?
				 512 * 1024 * 1024 + 4096 : off);
	}
	without_cachestat(false);
	ck_assert_int_eq(blocks_of(fd), 16);
	ck_assert_msg(pinned_kib() - before < 256 * 1024, "%lld KiB more pinned",
		      pinned_kib() - before);
	close(fd);
	unlink(p);
}
END_TEST

/* A caller the kernel will not tell which pages exist (cachestat says
 * EPERM to one who may neither write nor own the file): AUTO takes SEEK's
 * all-data answer, stores nothing, and no data byte is ever a hole. */
START_TEST(test_ramfs_other_user_gets_all_data)
{
	char p[4096];
	int fd = big_sparse_ramfs_file(p, sizeof(p));
	int rd, status;
	pid_t pid;
	if (page_answers_are_not_the_kernels()) {
		close(fd);
		unlink(p);
		return;
	}

	ck_assert_int_eq(fchmod(fd, 0644), 0);
	rd = open(p, O_RDONLY);
	ck_assert_int_ge(rd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct th_map m;
		int64_t n;

		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0)
			_exit(10);
		/* mincore tells such a caller that every page is there: the
		 * st_blocks check must not believe it. */
		without_cachestat(_i == 1);
		n = cached_pages(rd, 0, 4096);
		if (_i == 0 && n != -EPERM && n != -ENOSYS)
			_exit(11);	/* the kernel tells others now: see the notes */
		if (th_collect(rd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m) != 0)
			_exit(12);
#ifdef SM_HAVE_SEEK
		if (m.backend != SPARSE_MAP_BACKEND_SEEK || m.n != 1 || m.r[0].kind != SPARSE_MAP_DATA)
			_exit(13);
#endif
		if (sparse_map_lseek(rd, 64 * 1024, SPARSE_MAP_SEEK_DATA) != 64 * 1024 ||
		    sparse_map_lseek(rd, 512 * 1024 * 1024 + 200, SPARSE_MAP_SEEK_HOLE) <
		    512 * 1024 * 1024 + 4096)
			_exit(14);
		th_map_free(&m);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "as another user: step %d failed (10 setuid, 11 cachestat answered, "
		      "12 map, 13 not all data, 14 lseek)", WEXITSTATUS(status));
#ifdef SM_HAVE_SEEK
	ck_assert_int_eq(blocks_of(fd), 16);
#endif	/* else reading was the only way left, and it stored the holes */
	close(rd);
	close(fd);
	unlink(p);
}
END_TEST

/* The library's preads, counted through the seam. */
static int preads;

static ssize_t counted_pread(int fd, void *buf, size_t len, off_t off)
{
	preads++;
	return pread(fd, buf, len, off);
}

/* The library as on a system where mincore cannot answer either. */
static int no_mincore(int fd, off_t off, size_t len, unsigned char *vec)
{
	(void)fd; (void)off; (void)len; (void)vec;
	errno = ENOSYS;
	return -1;
}

/* AUTO with SPARSE_MAP_NO_READ, its preads counted in preads; pages:
 * 0 as the kernel is, 1 without cachestat (mincore stands in), 2 with
 * neither, so that no page can be counted. */
static int no_read_map(int fd, int pages, struct th_map *m)
{
	int rc;

	preads = 0;
	sm_sys_table = (struct sm_sys_table){
		.pread = counted_pread,
		.cachestat = pages >= 1 ? no_cachestat : NULL,
		.mincore = pages >= 2 ? no_mincore : NULL,
	};
	rc = th_collect(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_NO_READ, 0, m);
	sm_sys_table = (struct sm_sys_table){ 0 };
	ck_assert_msg(rc == 0, "NO_READ: expected 0, got %d (%s)", rc, strerror(-rc));
	ck_assert_msg(preads == 0, "NO_READ: the map read %d times", preads);
	return rc;
}

/* SPARSE_MAP_NO_READ on ramfs: where pages can be counted (cachestat, or
 * mincore without it: _i 0 and 1) the holes are found all the same, page
 * for page; where they cannot (_i 2), SEEK's all-data answer.  Never a
 * read, and nothing stored. */
START_TEST(test_ramfs_no_read_finds_holes_from_pages)
{
	char p[4096];
	struct th_map m;
	int fd = big_sparse_ramfs_file(p, sizeof(p));

	if (page_answers_are_not_the_kernels()) {
		close(fd);
		unlink(p);
		return;
	}
	no_read_map(fd, _i, &m);
	ck_assert_int_eq(blocks_of(fd), 16);
	if (_i < 2)
		ck_assert_msg(m.n == 5 && m.r[1].kind == SPARSE_MAP_DATA &&
			      m.r[1].offset == 64 * 1024 && m.r[1].length == 4096 &&
			      m.r[3].offset == 512 * 1024 * 1024 && m.r[3].length == 4096,
			      "NO_READ, %s: expected the two pages as data, got %s",
			      _i ? "mincore" : "cachestat", th_describe(&m));
	else
		ck_assert_msg(m.backend == SEEK_OR_NONE && m.n == 1 && m.r[0].kind == SPARSE_MAP_DATA,
			      "NO_READ, no page answers: expected seek's all data (none's "
			      "without seek), got %s", th_describe(&m));
	th_map_free(&m);
	close(fd);
	unlink(p);
}
END_TEST

/* ramfs, data [0,4096) of 64 KiB, offset 0: SEEK_DATA from 8192 finds no
 * data (ENXIO), and the offset the kernel's stub answer moved is put back;
 * a success leaves it at the answer.  With cachestat (_i 0) and mincore
 * standing in (1). */
START_TEST(test_ramfs_lseek_failure_leaves_the_offset)
{
	char p[4096];
	int fd;
	int64_t r;

	ck_assert(ramfs_ok);
	if (page_answers_are_not_the_kernels())
		return;
	fd = th_create(ramfs, p, sizeof(p));
	th_fill(fd, 0, 4096);
	th_truncate(fd, 65536);
	without_cachestat(_i == 1);
	errno = 0;
	r = sparse_map_lseek(fd, 8192, SPARSE_MAP_SEEK_DATA);
	ck_assert_msg(r == -1 && errno == ENXIO, "SEEK_DATA(8192): expected -1 (ENXIO), got %lld (%s)",
		      (long long)r, strerror(errno));
	ck_assert_msg(lseek(fd, 0, SEEK_CUR) == 0, "SEEK_DATA(8192) failed, yet moved the offset to %lld",
		      (long long)lseek(fd, 0, SEEK_CUR));
	errno = 0;
	r = sparse_map_lseek(fd, 65536, SPARSE_MAP_SEEK_HOLE);
	ck_assert_msg(r == -1 && errno == ENXIO && lseek(fd, 0, SEEK_CUR) == 0,
		      "SEEK_HOLE(size): expected -1 (ENXIO) and offset 0, got %lld, offset %lld",
		      (long long)r, (long long)lseek(fd, 0, SEEK_CUR));
	ck_assert_int_eq(sparse_map_lseek(fd, 100, SPARSE_MAP_SEEK_HOLE), 4096);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 4096);
	without_cachestat(false);
	ck_assert_int_eq(blocks_of(fd), 8);
	close(fd);
	unlink(p);
}
END_TEST

/* The lseek loop (each call going on from the last answer) finds what a
 * fresh AUTO map finds, on ramfs (_i < th_nlayouts) and tmpfs. */
START_TEST(test_lseek_loop_matches_the_map)
{
	const struct th_layout *l = &th_layouts[_i % (int)th_nlayouts];
	const char *dir = _i < (int)th_nlayouts ? ramfs : tmpfs;
	const char *err;
	char p[4096];
	int fd;

	ck_assert(_i < (int)th_nlayouts ? ramfs_ok : tmpfs_ok);
	if (dir == ramfs && (strcmp(l->name, "past-4g") == 0 || page_answers_are_not_the_kernels()))
		return;	/* as in test_ramfs_every_layout */
	fd = th_create(dir, p, sizeof(p));
	l->build(fd, th_blksize(fd));
	err = th_lseek_loop_matches_auto(fd);
	ck_assert_msg(err == NULL, "%s, layout %s: the lseek loop, then AUTO: %s", dir, l->name, err);
	close(fd);
	unlink(p);
}
END_TEST

/* SPARSE_MAP_NO_READ on tmpfs: what AUTO finds without it, unread. */
START_TEST(test_tmpfs_no_read_reads_nothing)
{
	const struct th_layout *l = &th_layouts[_i];
	struct th_map m, plain;
	const char *err;
	char p[4096];
	int fd;

	ck_assert(tmpfs_ok);
	fd = th_create(tmpfs, p, sizeof(p));
	l->build(fd, th_blksize(fd));
	no_read_map(fd, 0, &m);
#ifdef SM_HAVE_SEEK
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &plain), 0);
#else
	/* Without SEEK, only reading finds tmpfs's holes: all data unread. */
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_NONE, 0, 0, &plain), 0);
#endif
	err = th_same_kinds(&m, &plain, 0, plain.size);
	ck_assert_msg(err == NULL, "tmpfs, layout %s: NO_READ, then without: %s", l->name, err);
	th_map_free(&m);
	th_map_free(&plain);
	close(fd);
	unlink(p);
}
END_TEST

START_TEST(test_ramfs_auto_sees_through_the_stub)
{
	char p[4096];
	struct th_map m;
	int fd, wfd;

	ck_assert_msg(ramfs_ok, "ramfs could not be mounted");
	fd = sparse_file_in(ramfs, p, sizeof(p));
	/* The stub: SEEK_HOLE(0) is EOF though the file is sparse. */
	ck_assert_int_eq(lseek(fd, 0, SEEK_HOLE), 1 << 20);
	if (page_answers_are_not_the_kernels()) {
		expect_contract(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_AUTO, "ramfs");
		close(fd);
		unlink(p);
		return;
	}
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_SCAN && m.n == 5 &&
		      m.r[0].kind == SPARSE_MAP_HOLE,
		      "ramfs: expected SCAN and H D H D H, got %s", th_describe(&m));
	ck_assert_msg(th_check_contract(fd, &m, 0) == NULL, "%s", th_check_contract(fd, &m, 0));
	th_map_free(&m);
	/* Reading a ramfs hole stores a page of zeroes (6.18 does): then
	 * st_blocks calls the file dense and AUTO may take the stub's all-data
	 * answer, which is now true.  Either way the map must be right. */
	expect_contract(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_AUTO, "ramfs, read once");
	close(fd);
	unlink(p);
	fd = sparse_file_in(ramfs, p, sizeof(p));
#ifdef SM_HAVE_SEEK
	/* Forced SEEK answers the stub's all data: coarse but never wrong. */
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0, &m), 0);
	ck_assert_msg(m.n == 1 && m.r[0].kind == SPARSE_MAP_DATA, "%s", th_describe(&m));
	th_map_free(&m);
#endif
	/* No FIEMAP on ramfs. */
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, 0, &m), -EOPNOTSUPP);
	/* The portable lseek finds the holes the kernel's does not. */
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA), 64 * 1024);
	ck_assert_int_eq(sparse_map_lseek(fd, 64 * 1024, SPARSE_MAP_SEEK_HOLE), 72 * 1024);
	/* Write-only: SCAN cannot read, so AUTO falls back to SEEK's safe
	 * answer, or fails where SEEK is not built. */
	wfd = open(p, O_WRONLY);
	ck_assert_int_ge(wfd, 0);
#ifdef SM_HAVE_SEEK
	ck_assert_int_eq(th_collect(wfd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_SEEK && m.n == 1 &&
		      m.r[0].kind == SPARSE_MAP_DATA, "ramfs, write-only: %s", th_describe(&m));
	th_map_free(&m);
#else
	/* Nothing reports holes without reading: all data (NONE). */
	ck_assert_int_eq(th_collect(wfd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_NONE && m.n == 1 &&
		      m.r[0].kind == SPARSE_MAP_DATA, "ramfs, write-only: %s", th_describe(&m));
	th_map_free(&m);
#endif
	close(wfd);
	close(fd);
	unlink(p);
}
END_TEST

START_TEST(test_ramfs_dense_file_stays_with_seek)
{
	char p[4096];
	int fd;

	ck_assert(ramfs_ok);
	fd = th_create(ramfs, p, sizeof(p));
	th_fill(fd, 0, 256 * 1024);
	/* st_blocks agrees that every byte is stored: SEEK's answer is true. */
	expect_contract(fd, SPARSE_MAP_BACKEND_AUTO, SEEK_OR_SCAN, "ramfs dense");
	close(fd);
	unlink(p);
}
END_TEST

START_TEST(test_ramfs_every_layout)
{
	const struct th_layout *l = &th_layouts[_i];
	char p[4096];
	struct th_map m;
	int fd;

	ck_assert(ramfs_ok);
	if (strcmp(l->name, "past-4g") == 0)
		return;	/* a 16 GiB SCAN of RAM-backed holes is tested on tmpfs */
	fd = th_create(ramfs, p, sizeof(p));
	l->build(fd, th_blksize(fd));
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_msg(th_check_contract(fd, &m, 0) == NULL, "ramfs %s: %s", l->name,
		      th_check_contract(fd, &m, 0));
	th_map_free(&m);
	close(fd);
	unlink(p);
}
END_TEST

START_TEST(test_tmpfs_has_seek_without_fiemap)
{
	char p[4096];
	struct th_map m;
	int fd;

	ck_assert_msg(tmpfs_ok, "tmpfs could not be mounted");
	fd = sparse_file_in(tmpfs, p, sizeof(p));
	expect_contract(fd, SPARSE_MAP_BACKEND_AUTO, SEEK_OR_SCAN, "tmpfs");
	expect_contract(fd, SPARSE_MAP_BACKEND_SCAN, SPARSE_MAP_BACKEND_SCAN, "tmpfs");
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, 0, &m), -EOPNOTSUPP);
	close(fd);
	unlink(p);
}
END_TEST

START_TEST(test_tmpfs_every_layout_every_backend)
{
	const struct th_layout *l = &th_layouts[_i / 3];
	enum sparse_map_backend b = (enum sparse_map_backend)(_i % 3 == 2 ? 3 : _i % 3);
	char p[4096];
	struct th_map m;
	int fd;

	ck_assert(tmpfs_ok);
	fd = th_create(tmpfs, p, sizeof(p));
	l->build(fd, th_blksize(fd));
#ifndef SM_HAVE_SEEK
	if (b == SPARSE_MAP_BACKEND_SEEK)
		b = SPARSE_MAP_BACKEND_SCAN;
#endif
	ck_assert_int_eq(th_collect(fd, b, 0, 0, &m), 0);
	ck_assert_msg(th_check_contract(fd, &m, 0) == NULL, "tmpfs %s %s: %s", l->name,
		      sparse_map_backend_name(b), th_check_contract(fd, &m, 0));
	th_map_free(&m);
	close(fd);
	unlink(p);
}
END_TEST

/*
 * tmpfs mounted huge=always keeps files in 2 MiB folios and says so in
 * st_blksize.  What sparse_map(3) says of the granularity there: SEEK's is
 * the folio (one byte written makes its 2 MiB data), SCAN's is st_blksize
 * clamped to 1 MiB (SM_MAX_BLKSIZE).  Where no huge folio could be had
 * (memory too fragmented), the byte's folio is a 4 KiB page, and SEEK's
 * part is not tested.
 */
START_TEST(test_tmpfs_huge_granularity)
{
	const int64_t MiB = 1 << 20;
	char p[4096];
	struct th_map m;
	struct stat st;
	int fd;

	if (!hugefs_ok) {
		printf("tmpfs huge=always: cannot be mounted here (no transparent huge pages?); "
		       "not tested\n");
		return;
	}
	fd = th_create(hugefs, p, sizeof(p));
	th_truncate(fd, 8 * MiB);
	th_fill(fd, 3 * MiB + 5, 1);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_msg(st.st_blksize == 2 * MiB, "tmpfs huge=always: st_blksize %ld, not 2 MiB",
		      (long)st.st_blksize);
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_SCAN, 0, 0, &m), 0);
	ck_assert_msg(m.n == 3 && m.r[1].kind == SPARSE_MAP_DATA && m.r[1].offset == 3 * MiB &&
			      m.r[1].length == MiB,
		      "tmpfs huge=always: SCAN does not see 1 MiB blocks: %s", th_describe(&m));
	th_map_free(&m);
#ifdef SM_HAVE_SEEK
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_SEEK, 0, 0, &m), 0);
	ck_assert_msg(m.n == 3 && m.r[1].kind == SPARSE_MAP_DATA, "tmpfs huge=always: SEEK: %s",
		      th_describe(&m));
	if (m.r[1].length == 4096)
		printf("tmpfs huge=always: no huge folio could be had (memory fragmented?); "
		       "SEEK's granularity not tested\n");
	else
		ck_assert_msg(m.r[1].offset == 2 * MiB && m.r[1].length == 2 * MiB,
			      "tmpfs huge=always: SEEK's data is not the byte's 2 MiB folio: %s",
			      th_describe(&m));
	ck_assert_int_eq(sparse_map_lseek(fd, 0, SPARSE_MAP_SEEK_DATA), m.r[1].offset);
	th_map_free(&m);
#endif
	close(fd);
	unlink(p);
}
END_TEST

/*
 * Offsets next to INT64_MAX (tmpfs takes such sizes): nothing overflows, and
 * data in the last page is found although tmpfs on Linux 6.18 answers
 * SEEK_DATA with ENXIO for it (backend-seek.c distrusts that answer there).
 */
START_TEST(test_tmpfs_size_near_int64_max)
{
	static const struct { enum sparse_map_backend b; unsigned int flags; } runs[] = {
		{ SPARSE_MAP_BACKEND_SCAN, 0 },
		{ SEEK_OR_SCAN, SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES },
		{ SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_VERIFY },
		{ SPARSE_MAP_BACKEND_AUTO, 0 },
	};
	const int64_t size = INT64_MAX - 1000, start = size - 10000;
	char p[4096];
	int fd;

	ck_assert(tmpfs_ok);
	fd = th_create(tmpfs, p, sizeof(p));
	th_truncate(fd, size);
	th_fill(fd, size - 2, 1);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct th_map m;
		int rc = th_collect(fd, runs[i].b, runs[i].flags, start, &m);

		ck_assert_msg(rc == 0, "%s flags %#x: %s", sparse_map_backend_name(runs[i].b),
			      runs[i].flags, strerror(-rc));
		ck_assert_msg(th_check_contract(fd, &m, start) == NULL, "%s",
			      th_check_contract(fd, &m, start));
		ck_assert_int_eq(th_kind_at(&m, size - 2), SPARSE_MAP_DATA);
		th_map_free(&m);
	}
	ck_assert_int_eq(sparse_map_lseek(fd, size - 10, SPARSE_MAP_SEEK_DATA), size - 10);
	ck_assert_int_eq(sparse_map_lseek(fd, size - 10, SPARSE_MAP_SEEK_HOLE), size);
	setenv("SPARSE_MAP_BACKEND", "scan", 1);
	ck_assert_int_eq(sparse_map_lseek(fd, start, SPARSE_MAP_SEEK_DATA), size - size % 4096);
	unsetenv("SPARSE_MAP_BACKEND");
	close(fd);
	unlink(p);
}
END_TEST

/*
 * Files of the largest size tmpfs takes (INT64_MAX), which any user can
 * make in /dev/shm.  Linux 6.18's tmpfs SEEK_DATA says "no more data" for
 * data in the folio that reaches 2^63, and SEEK_HOLE there answers
 * INT64_MIN or the offset (checked first: if the kernel is ever right, the
 * test says so and the library's rule, sm_trusted_end(), could go).  The
 * library calls the last 2 MiB data; every answer must agree with every
 * other, and the loop of sparse_map(3) must end.  With huge=always the
 * folio is 2 MiB: a byte 2 MiB less 8 KiB below the end is in it.
 */
static void check_int64_max_file(const char *dir, int64_t data_at, int64_t len, bool kernel_wrong)
{
	const int64_t size = INT64_MAX;
	struct th_map m;
	const char *err;
	char p[4096];
	int fd = th_create(dir, p, sizeof(p));

	th_truncate(fd, size);
	if (len > 0)
		th_fill(fd, data_at, len);
	if (kernel_wrong && len > 0) {
		errno = 0;
		ck_assert_msg(lseek(fd, 0, SEEK_DATA) < 0 && errno == ENXIO,
			      "the kernel now finds data at %lld: the last folio's rule may go",
			      (long long)data_at);
	}
	err = th_lseek_consistent(fd, (uint64_t)data_at, 400);
	ck_assert_msg(err == NULL, "%s, data at %lld: %s", dir, (long long)data_at, err);
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	if (len > 0)
		ck_assert_msg(th_kind_at(&m, data_at) == SPARSE_MAP_DATA &&
			      th_kind_at(&m, data_at + len - 1) == SPARSE_MAP_DATA,
			      "data at %lld is called a hole: %s", (long long)data_at, th_describe(&m));
	/*
	 * Beyond what was written (rounded out to a huge folio), only the
	 * zone the library does not ask the kernel about may be called data:
	 * the last max(2 MiB, page size squared / 8) bytes.
	 */
	{
		const int64_t page = sysconf(_SC_PAGESIZE), fol = 2 << 20;
		const int64_t zone = page * page / 8 > fol ? page * page / 8 : fol;
		const int64_t lo = data_at / fol * fol;
		const int64_t hi = len > 0 && data_at + len <= size - fol ?
					   (data_at + len + fol - 1) / fol * fol : lo;

		for (size_t i = 0; i < m.n; i++) {
			int64_t s0 = m.r[i].offset, e0 = s0 + m.r[i].length;

			if (m.r[i].kind != SPARSE_MAP_DATA || (s0 >= lo && e0 <= hi))
				continue;
			ck_assert_msg(s0 >= size - zone + 1,
				      "data called where none was written: %s", th_describe(&m));
		}
	}
	th_map_free(&m);
	th_lseek_forget();
	close(fd);
	unlink(p);
}

START_TEST(test_int64_max_files_are_consistent)
{
	ck_assert(tmpfs_ok);
#ifndef SM_HAVE_SEEK
	/* tmpfs has no FIEMAP: without SEEK only a read of 2^63 bytes would
	 * find the holes (sparse_map_lseek(3) NOTES). */
	printf("built without SEEK_DATA: files of 2^63 bytes on tmpfs not tested\n");
	return;
#endif
	check_int64_max_file(tmpfs, 0, 0, false);		/* no data at all */
	check_int64_max_file(tmpfs, INT64_MAX - 4095, 4095, true);	/* the last page */
	check_int64_max_file(tmpfs, INT64_MAX - 1, 1, true);	/* the last byte */
	check_int64_max_file(tmpfs, (int64_t)1 << 40, 4096, false);	/* far below */
	if (!hugefs_ok) {
		printf("tmpfs huge=always: cannot be mounted here: the 2 MiB folio not tested\n");
		return;
	}
	check_int64_max_file(hugefs, INT64_MAX - (2 << 20) + 8193, 1, false);
	check_int64_max_file(hugefs, INT64_MAX - 4095, 4095, false);
}
END_TEST

/* Block devices: size from the device, AUTO reads it (SCAN). */
START_TEST(test_loop_block_device_is_scanned)
{
	struct th_map m;
	struct sparse_map *map;
	int fd = th_create(top, backing, sizeof(backing));
	int dev, rd, wr;

	th_truncate(fd, 4 << 20);
	th_fill(fd, 1 << 20, 4096);
	close(fd);
	dev = attach_loop(backing);
	if (dev < 0) {
		fprintf(stderr, "no loop device here (%s): block devices not tested\n", strerror(errno));
		return;
	}
	unlink(backing);	/* the device holds it now */
	rd = open(loopdev, O_RDONLY);
	ck_assert_int_ge(rd, 0);
	close(dev);	/* rd keeps the device; autoclear at its close */
	expect_contract(rd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SCAN, loopdev);
	ck_assert_int_eq(th_collect(rd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_int_eq(m.size, 4 << 20);
	ck_assert_msg(m.n == 3 && m.r[1].offset == 1 << 20 && m.r[1].length == 4096,
		      "%s: %s", loopdev, th_describe(&m));
	th_map_free(&m);
	ck_assert_int_eq(sparse_map_open(rd, SPARSE_MAP_BACKEND_FIEMAP, 0, &map), -EOPNOTSUPP);
	/* Linux refuses SEEK_HOLE on a device: nothing but reading maps it. */
	ck_assert_int_eq(sparse_map_open(rd, SPARSE_MAP_BACKEND_SEEK, 0, &map), -EOPNOTSUPP);
	wr = open(loopdev, O_WRONLY);
	ck_assert_int_ge(wr, 0);
	ck_assert_int_eq(sparse_map_open(wr, SPARSE_MAP_BACKEND_AUTO, 0, &map), -EBADF);
	close(wr);
	ck_assert_int_eq(sparse_map_lseek(rd, 0, SPARSE_MAP_SEEK_DATA), 1 << 20);
	/* SPARSE_MAP_NO_READ: only reading finds a device's zeroes, so NONE,
	 * one data range, and no read. */
	no_read_map(rd, 0, &m);
	ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_NONE && m.n == 1 &&
		      m.r[0].kind == SPARSE_MAP_DATA && m.r[0].length == 4 << 20,
		      "%s, NO_READ: expected none, one data range of 4 MiB; got %s", loopdev,
		      th_describe(&m));
	th_map_free(&m);
	close(rd);
}
END_TEST


/* Scanning a device leaves the page cache as it was: what it brought in
 * is dropped again, what was cached stays. */
START_TEST(test_scan_keeps_the_page_cache_as_it_was)
{
	char p[4096], buf[1 << 16];
	struct th_map m;
	int fd = th_create(top, p, sizeof(p));
	int dev, rd;
	const int64_t size = 64 << 20, pages = size / 4096;
	int64_t n;

	th_truncate(fd, size);
	th_fill(fd, 1 << 20, 4096);
	th_fill(fd, 40 << 20, 1 << 20);
	close(fd);
	dev = attach_loop(p);
	unlink(p);
	if (dev < 0)
		return;	/* said by test_loop_block_device_is_scanned */
	rd = open(loopdev, O_RDONLY);
	ck_assert_int_ge(rd, 0);
	close(dev);
	if (cached_pages(rd, 0, size) == -ENOSYS) {
		fprintf(stderr, "no cachestat: the scan does not drop what it read\n");
		close(rd);
		return;
	}
	/* Not cached: after the scan, still (almost) not. */
	ck_assert_int_eq(posix_fadvise(rd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ck_assert_int_le(cached_pages(rd, 0, size), pages / 100);
	ck_assert_int_eq(th_collect(rd, SPARSE_MAP_BACKEND_AUTO, 0, 0, &m), 0);
	ck_assert_msg(m.backend == SPARSE_MAP_BACKEND_SCAN && m.n == 5, "%s", th_describe(&m));
	th_map_free(&m);
	n = cached_pages(rd, 0, size);
	ck_assert_msg(n <= pages / 20, "the scan left %lld of %lld pages cached",
		      (long long)n, (long long)pages);
	/* All cached: after the scan, still all.  The kernel may evict a
	 * page or two of its own under memory pressure (CI runs two lanes
	 * at once); the scan drops whole chunks of 64 pages, which a slack
	 * of 8 does not hide. */
	for (int64_t off = 0; off < size; off += (int64_t)sizeof(buf))
		ck_assert_int_eq(pread(rd, buf, sizeof(buf), off), (ssize_t)sizeof(buf));
	ck_assert_int_ge(cached_pages(rd, 0, size), pages - 8);
	ck_assert_int_eq(th_collect(rd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES, 0, &m), 0);
	th_map_free(&m);
	n = cached_pages(rd, 0, size);
	ck_assert_msg(n >= pages - 8, "the scan dropped cached pages: %lld of %lld left",
		      (long long)n, (long long)pages);
	close(rd);
}
END_TEST

#ifdef SM_HAVE_FIEMAP
/* Whether the kernel's FIEMAP calls [off, off + len) of fd one or more
 * unwritten extents, and nothing around it. */
static bool fiemap_says_unwritten(int fd, int64_t off, int64_t len)
{
	union {
		struct fiemap fm;
		unsigned char space[sizeof(struct fiemap) + 8 * sizeof(struct fiemap_extent)];
	} u;
	int64_t at = off;

	memset(&u, 0, sizeof(u));
	u.fm.fm_start = (uint64_t)off;
	u.fm.fm_length = (uint64_t)len;
	u.fm.fm_extent_count = 8;
	if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) != 0 || u.fm.fm_mapped_extents == 0)
		return false;
	for (unsigned int i = 0; i < u.fm.fm_mapped_extents; i++) {
		const struct fiemap_extent *e = &u.fm.fm_extents[i];

		if (!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN) || (int64_t)e->fe_logical != at)
			return false;
		at += (int64_t)e->fe_length;
	}
	return at == off + len;
}
#endif

/*
 * Issue 27 on real files: a hole, preallocated space touching it, written
 * zeroes touching a second hole, then data, each 64 KiB (a multiple of
 * every block size here).  Under SPARSE_MAP_SPLIT_FLAGS and ZEROES every
 * byte must be what was made of it: the holes unflagged holes, the written
 * zeroes a hole flagged ZEROES, the data data.  The preallocated space is
 * a hole: flagged UNWRITTEN, with exactly its bounds, where the file
 * system's FIEMAP calls it unwritten and the map uses FIEMAP (ext4, XFS,
 * Btrfs); tmpfs has no FIEMAP, and its SEEK calls fallocated pages holes,
 * unflagged.  Where the map reads (SCAN: tmpfs in a build without SEEK),
 * the written zeroes are a hole, flagged or not.  Once as written
 * (nothing flushed) and once after SYNC.
 * Without the flag the four holes are one, unflagged, as in 1.0.
 */
enum { SPLIT_ON_TMPFS = NIMAGES, NSPLIT_FS };
#define SPLIT_UNIT (64 * 1024)

/* The directory of file system i (SPLIT_ON_TMPFS: tmpfs, else an image),
 * or NULL, said on stderr, where it could not be mounted: what is then not
 * tested on it. */
static const char *fs_dir(int i, const char *what)
{
	if (i == SPLIT_ON_TMPFS) {
		ck_assert(tmpfs_ok);
		return tmpfs;
	}
	if (!image_ok[i]) {
		fprintf(stderr, "%s: could not be mounted here (the reason is above): "
			"%s not tested on it\n", image_types[i], what);
		return NULL;
	}
	return image_dir[i];
}

START_TEST(test_split_flags_on_every_file_system)
{
	static const struct {
		const char *what;
		enum sparse_map_kind kind;
		uint32_t flags;		/* expected, but see prealloc */
	} region[] = {
		{ "the first hole", SPARSE_MAP_HOLE, 0 },
		{ "preallocated space", SPARSE_MAP_HOLE, SPARSE_MAP_RANGE_UNWRITTEN },
		{ "written zeroes", SPARSE_MAP_HOLE, SPARSE_MAP_RANGE_ZEROES },
		{ "the second hole", SPARSE_MAP_HOLE, 0 },
		{ "written data", SPARSE_MAP_DATA, 0 },
	};
	const int64_t u = SPLIT_UNIT;
	const char *type = _i == SPLIT_ON_TMPFS ? "tmpfs" : image_types[_i];
	const char *dir = fs_dir(_i, "SPARSE_MAP_SPLIT_FLAGS");
	bool unwritten = false;
	char p[4200];
	struct th_map m, maps[2];
	const char *err;
	int fd;

	if (!dir)
		return;
	fd = th_create(dir, p, sizeof(p));
	th_truncate(fd, 5 * u);
	ck_assert_msg(th_fallocate(fd, 0, u, u), "%s: fallocate is not supported", type);
	th_zero_fill(fd, 2 * u, u);
	th_fill(fd, 4 * u, u);
	for (int sync = 0; sync < 2; sync++) {
		unsigned int flags = SPARSE_MAP_SPLIT_FLAGS | SPARSE_MAP_ZEROES |
				     (sync ? SPARSE_MAP_SYNC : 0);

#ifdef SM_HAVE_FIEMAP
		unwritten = fiemap_says_unwritten(fd, u, u);
#endif
		ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, flags, 0, &m), 0);
		/* Every byte: each range against each region it covers. */
		for (size_t k = 0; k < m.n; k++) {
			const struct sparse_map_range *r = &m.r[k];

			for (int64_t g = r->offset / u; g < 5 && g * u < r->offset + r->length; g++) {
				uint32_t want = region[g].flags;

				if (g == 1 && !(unwritten && m.backend == SPARSE_MAP_BACKEND_FIEMAP))
					want = r->flags & SPARSE_MAP_RANGE_ZEROES;	/* 0, or read as zeroes */
				/* SCAN (tmpfs in a build without SEEK) reads; it
				 * cannot tell stored zeroes from a hole. */
				if (g == 2 && m.backend == SPARSE_MAP_BACKEND_SCAN)
					want = r->flags & SPARSE_MAP_RANGE_ZEROES;
				ck_assert_msg(r->kind == region[g].kind && r->flags == want,
					      "%s, flags %#x: bytes [%lld, %lld) of %s are %s%s%s "
					      "(FIEMAP %s unwritten): %s", type, flags,
					      (long long)(g * u), (long long)((g + 1) * u),
					      region[g].what,
					      r->kind == SPARSE_MAP_DATA ? "data" : "a hole",
					      r->flags & SPARSE_MAP_RANGE_UNWRITTEN ? ", unwritten" : "",
					      r->flags & SPARSE_MAP_RANGE_ZEROES ? ", zeroes" : "",
					      unwritten ? "says" : "does not say", th_describe(&m));
			}
			/* A flagged run has exactly the bounds of what was made. */
			if (r->flags & SPARSE_MAP_RANGE_UNWRITTEN)
				ck_assert_msg(r->offset == u && r->length == u,
					      "%s: the unwritten extent is [%lld, +%lld), expected "
					      "[%lld, +%lld): %s", type, (long long)r->offset,
					      (long long)r->length, (long long)u, (long long)u,
					      th_describe(&m));
			if (r->flags & SPARSE_MAP_RANGE_ZEROES && r->offset >= 2 * u)
				ck_assert_msg(r->offset == 2 * u && r->length == u,
					      "%s: the written zeroes are [%lld, +%lld), expected "
					      "[%lld, +%lld): %s", type, (long long)r->offset,
					      (long long)r->length, (long long)(2 * u), (long long)u,
					      th_describe(&m));
		}
		maps[sync] = m;
	}
	/* Only now read the holes back: on ext4 and XFS, pages that a read
	 * left in the page cache over an unwritten extent make the kernel's
	 * SEEK_DATA call it data (which ZEROES then finds zeroes). */
	for (int sync = 0; sync < 2; sync++) {
		err = th_check_contract(fd, &maps[sync], 0);
		ck_assert_msg(err == NULL, "%s%s: %s", type, sync ? ", SYNC" : "", err);
		th_map_free(&maps[sync]);
	}
#ifdef SM_HAVE_FIEMAP
	if (_i != SPLIT_ON_TMPFS)
		ck_assert_msg(unwritten, "%s: FIEMAP does not call fallocated space unwritten", type);
#endif

	/* Without the flag: data and holes alternate, and the holes are one. */
	ck_assert_int_eq(th_collect(fd, SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_ZEROES, 0, &m), 0);
	ck_assert_msg(m.n == 2 && m.r[0].kind == SPARSE_MAP_HOLE && m.r[0].length == 4 * u &&
		      m.r[0].flags == 0 && m.r[1].kind == SPARSE_MAP_DATA,
		      "%s, ZEROES without SPLIT_FLAGS: expected one unflagged hole of %lld bytes "
		      "and data: %s", type, (long long)(4 * u), th_describe(&m));
	th_map_free(&m);
	close(fd);
	unlink(p);
}
END_TEST

#if defined(SM_HAVE_SEEK) && defined(SM_HAVE_FIEMAP)
/*
 * Issue 30: the system calls of an archiver's map of a small sparse file
 * (its own fstat, AUTO, SPARSE_MAP_NO_READ | SPARSE_MAP_NO_ENV) of 64 KiB
 * with data in [0, 4K) and [32K, 36K), written back.  The loop it replaces
 * makes 5 lseek (SEEK_DATA, SEEK_HOLE twice, and the SEEK_DATA that finds
 * no more).  st_blocks says the file has a hole, so the file system is
 * asked first and the first FIEMAP is the answer:
 *   ext4, XFS: fstatfs, cachestat, FIEMAP, in that order (cachestat vouches
 *     only for the FIEMAP after it);
 *   Btrfs, on a kernel whose FIEMAP holds the range's lock: fstatfs, uname,
 *     FIEMAP;
 *   tmpfs, which has SEEK_DATA and no FIEMAP: fstatfs and the loop's own
 *     lseeks, the probe's SEEK_HOLE(0) being the map's first answer, and
 *     without SPARSE_MAP_ANY_OFFSET the offset asked before and put back
 *     after.
 * _i: the file system (as SPLIT_ON_TMPFS numbers them), times two: with
 * and without SPARSE_MAP_ANY_OFFSET.
 */
static char call_seq[64];
static size_t call_n;
static struct sm_sys_table real_calls;	/* the C library's: main() keeps them */

static void note_call(char c)
{
	if (call_n + 1 < sizeof(call_seq))
		call_seq[call_n++] = c;
	call_seq[call_n] = 0;
}
static int seq_fstat(int fd, struct stat *st) { note_call('f'); return real_calls.fstat(fd, st); }
static int seq_getfl(int fd) { note_call('g'); return real_calls.getfl(fd); }
static int seq_fstatfs(int fd, int64_t *t) { note_call('s'); return real_calls.fstatfs(fd, t); }
static int seq_uname(char *b, size_t n) { note_call('u'); return real_calls.uname(b, n); }
static int seq_ioctl(int fd, unsigned long r, void *a) { note_call('F'); return real_calls.ioctl(fd, r, a); }
static ssize_t seq_pread(int fd, void *b, size_t n, off_t o) { note_call('r'); return real_calls.pread(fd, b, n, o); }
static int seq_cachestat(int fd, int64_t o, int64_t n, struct sm_cachestat *cs)
{
	note_call('C');
	return real_calls.cachestat(fd, o, n, cs);
}
static off_t seq_lseek(int fd, off_t o, int w)
{
	note_call(w == SEEK_DATA ? 'D' : w == SEEK_HOLE ? 'H' : w == SEEK_CUR ? 'c' : '=');
	return real_calls.lseek(fd, o, w);
}

/* From now on, the library's system calls are noted in call_seq. */
static void record_calls(void)
{
	call_n = 0;
	call_seq[0] = 0;
	sm_sys_table = (struct sm_sys_table){
		.fstat = seq_fstat, .getfl = seq_getfl, .fstatfs = seq_fstatfs, .uname = seq_uname,
		.ioctl = seq_ioctl, .pread = seq_pread, .cachestat = seq_cachestat, .lseek = seq_lseek,
	};
}

START_TEST(test_small_sparse_file_costs_less_than_the_loop)
{
	int fsi = _i / 2;
	bool any_offset = _i % 2;
	const char *type = fsi == SPLIT_ON_TMPFS ? "tmpfs" : image_types[fsi];
	const char *dir = fs_dir(fsi, "the cost of a small file");
	struct sparse_map_options o = SPARSE_MAP_OPTIONS_INIT;
	const char *want = NULL;
	struct sm_cachestat cs;
	struct th_map m;
	struct stat st;
	char p[4200], release[128];
	bool has_cachestat;
	int fd, rc;

	if (!dir)
		return;
	fd = th_create(dir, p, sizeof(p));
	th_truncate(fd, 65536);
	th_fill(fd, 0, 4096);
	th_fill(fd, 32768, 4096);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(close(fd), 0);
	fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(lseek(fd, 12345, SEEK_SET), 12345);
	ck_assert_int_eq(fstat(fd, &st), 0);
	/* Without cachestat (valgrind knows no such call) SEEK decides the
	 * gaps on ext4 and XFS: no count is expected there. */
	has_cachestat = sm_sys_cachestat(fd, 0, 4096, &cs) == 0;

	record_calls();
	o.st = &st;
	o.flags = SPARSE_MAP_NO_READ | SPARSE_MAP_NO_ENV | (any_offset ? SPARSE_MAP_ANY_OFFSET : 0);
	rc = th_collect_with(fd, &o, &m);
	sm_sys_table = (struct sm_sys_table){ 0 };
	ck_assert_msg(rc == 0, "%s: the map failed: %s", type, strerror(-rc));
	ck_assert_msg(m.n == 4 && th_kind_at(&m, 0) == SPARSE_MAP_DATA &&
		      th_kind_at(&m, 4096) == SPARSE_MAP_HOLE &&
		      th_kind_at(&m, 32768) == SPARSE_MAP_DATA &&
		      th_kind_at(&m, 36864) == SPARSE_MAP_HOLE && m.r[2].length == 4096,
		      "%s: %s", type, th_describe(&m));
	/* The offset: put back, or left where the map's questions left it. */
	if (!any_offset)
		ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 12345);
	if (fsi == SPLIT_ON_TMPFS)
		want = any_offset ? "sHDHD" : "scHDHD=";
#ifdef SM_HAVE_FIEMAP
	else if (strcmp(type, "btrfs") == 0) {
		struct utsname u;

		ck_assert_int_eq(uname(&u), 0);
		snprintf(release, sizeof(release), "%s", u.release);
		if (sm_btrfs_fiemap_holds_lock(release))
			want = "suF";
	} else if (has_cachestat) {
		want = "sCF";
	}
#endif
	(void)release;
	(void)has_cachestat;
	if (want)
		ck_assert_msg(strcmp(call_seq, want) == 0,
			      "%s%s: the map made these calls: %s (f fstat, s fstatfs, u uname, "
			      "C cachestat, F FIEMAP, c/=/H/D lseek SEEK_CUR/SET/HOLE/DATA), "
			      "expected %s", type, any_offset ? ", ANY_OFFSET" : "", call_seq, want);
	else
		fprintf(stderr, "%s: calls %s (no count expected on this kernel)\n", type, call_seq);
	th_map_free(&m);
	close(fd);
	unlink(p);

	/* A dense file of 8 KiB after it: one FIEMAP on ext4, XFS and Btrfs;
	 * on tmpfs, whose FIEMAP failed for a file of this thread before, the
	 * SEEK_HOLE that finds EOF (with the offset asked and put back,
	 * unless SPARSE_MAP_ANY_OFFSET), and no fstatfs. */
	fd = th_create(dir, p, sizeof(p));
	th_fill(fd, 0, 8192);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	record_calls();
	rc = th_collect_with(fd, &o, &m);
	sm_sys_table = (struct sm_sys_table){ 0 };
	ck_assert_msg(rc == 0 && m.n == 1 && m.r[0].kind == SPARSE_MAP_DATA, "%s, dense: %s", type,
		      rc ? strerror(-rc) : th_describe(&m));
#ifdef SM_HAVE_FIEMAP
	want = fsi == SPLIT_ON_TMPFS ? (any_offset ? "H" : "cH=") : "F";
#else
	want = any_offset ? "H" : "cH=";
#endif
	ck_assert_msg(strcmp(call_seq, want) == 0, "%s%s, dense: the map made these calls: %s, "
		      "expected %s", type, any_offset ? ", ANY_OFFSET" : "", call_seq, want);
	th_map_free(&m);
	close(fd);
	unlink(p);
}
END_TEST
#endif

int main(void)
{
	Suite *s = suite_create("mounts");
	TCase *tc = tcase_create("mounts");
	TCase *linux_tc = tcase_create("linux");

#if defined(SM_HAVE_SEEK) && defined(SM_HAVE_FIEMAP)
	real_calls = sm_sys_table;
#endif
	if (!th_is_root()) {
		printf("SKIP: test-mounts mounts ramfs and tmpfs and needs root\n");
		return TH_SKIP;
	}
	/* A mount namespace of our own: our mounts die with us, whatever happens. */
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		printf("SKIP: cannot make a private mount namespace: %s\n", strerror(errno));
		return TH_SKIP;
	}
	snprintf(top, sizeof(top), "%s/sm-test-mounts-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	owner = getpid();
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	snprintf(ramfs, sizeof(ramfs), "%s/ramfs", top);
	snprintf(tmpfs, sizeof(tmpfs), "%s/tmpfs", top);
	ramfs_ok = mkdir(ramfs, 0700) == 0 && mount("sm-ramfs", ramfs, "ramfs", 0, NULL) == 0;
	tmpfs_ok = mkdir(tmpfs, 0700) == 0 && mount("sm-tmpfs", tmpfs, "tmpfs", 0, NULL) == 0;
	snprintf(hugefs, sizeof(hugefs), "%s/tmpfs-huge", top);
	hugefs_ok = mkdir(hugefs, 0700) == 0 &&
		    mount("sm-tmpfs-huge", hugefs, "tmpfs", 0, "huge=always") == 0;
	for (int i = 0; i < NIMAGES; i++)
		image_ok[i] = mount_image(i);

	unsetenv("SPARSE_MAP_BACKEND");
	tcase_set_timeout(tc, 300);
	/* What only Linux's system layer can do: know ramfs by its f_type,
	 * and ask cachestat what a scan may drop again. */
	tcase_set_timeout(linux_tc, 300);
	tcase_add_checked_fixture(linux_tc, th_lseek_forget, NULL);
	tcase_add_test(linux_tc, test_ramfs_auto_sees_through_the_stub);
	tcase_add_test(linux_tc, test_ramfs_dense_file_stays_with_seek);
	tcase_add_test(linux_tc, test_ramfs_reading_a_hole_stores_it);
	tcase_add_loop_test(linux_tc, test_ramfs_map_stores_nothing, 0, 2 * (int)NRAMFS_RUNS);
	tcase_add_loop_test(linux_tc, test_ramfs_lseek_stores_nothing, 0, 2);
	tcase_add_loop_test(linux_tc, test_ramfs_lseek_loop_sees_every_change, 0, 2);
	tcase_add_test(linux_tc, test_ramfs_mapped_rewrite_keeps_the_times);
	tcase_add_test(linux_tc, test_ramfs_lseek_back_stores_nothing);
	tcase_add_test(linux_tc, test_ramfs_pages_counted_once_when_the_env_gives_way);
	tcase_add_test(linux_tc, test_ramfs_lseek_sees_a_stalled_write);
	tcase_add_loop_test(linux_tc, test_ramfs_other_user_gets_all_data, 0, 2);
	tcase_add_loop_test(linux_tc, test_ramfs_every_layout, 0, (int)th_nlayouts);
	tcase_add_test(linux_tc, test_scan_keeps_the_page_cache_as_it_was);
	tcase_add_loop_test(linux_tc, test_ramfs_no_read_finds_holes_from_pages, 0, 3);
	tcase_add_loop_test(linux_tc, test_ramfs_lseek_failure_leaves_the_offset, 0, 2);
	tcase_add_loop_test(linux_tc, test_lseek_loop_matches_the_map, 0, 2 * (int)th_nlayouts);
#ifdef SM_PLATFORM_LINUX
	suite_add_tcase(s, linux_tc);
#else
	printf("ramfs and the page cache: not tested, the library is built with another "
	       "system's layer\n");
#endif
	tcase_add_checked_fixture(tc, th_lseek_forget, NULL);
	tcase_add_test(tc, test_tmpfs_has_seek_without_fiemap);
	tcase_add_loop_test(tc, test_tmpfs_every_layout_every_backend, 0, (int)th_nlayouts * 3);
	tcase_add_test(tc, test_tmpfs_size_near_int64_max);
	tcase_add_test(tc, test_int64_max_files_are_consistent);
	tcase_add_test(tc, test_tmpfs_huge_granularity);
	tcase_add_loop_test(tc, test_tmpfs_no_read_reads_nothing, 0, (int)th_nlayouts);
	tcase_add_test(tc, test_loop_block_device_is_scanned);
	tcase_add_loop_test(tc, test_split_flags_on_every_file_system, 0, NSPLIT_FS);
#ifdef SM_PLATFORM_LINUX
#if defined(SM_HAVE_SEEK) && defined(SM_HAVE_FIEMAP)
	/* AUTO's order of questions where both sources are built. */
	tcase_add_loop_test(tc, test_small_sparse_file_costs_less_than_the_loop, 0, 2 * NSPLIT_FS);
#endif
#endif
	suite_add_tcase(s, tc);
	return th_run_suite(s);
}
