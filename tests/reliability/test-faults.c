/* SPDX-License-Identifier: MIT */
/*
 * Faults and odd answers at the system-call seam (lib/sys-calls.h), on real
 * files of several layouts.  The k-th call of each kind fails with each
 * errno that call can return, for k = 1, 2, ... up to the last call the
 * operation makes; and the kernel's answers are bent in ways a kernel may
 * bend them (short reads, SEEK_DATA/SEEK_HOLE before the offset or past EOF,
 * FIEMAP arrays that overlap, come out of order, lack LAST, carry odd flags).
 * The library must retry EINTR with no trace, turn other errors into a clean
 * -errno after which sparse_map_next() goes on, free all it allocated, end,
 * and never call data a hole.  At the end it prints what it injected.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef HAVE_LINUX_FIEMAP_H
#include <linux/fiemap.h>
#include <linux/fs.h>
#endif

#include "bytes.h"
#include "check-run.h"
#include "helpers.h"
#include "sys-calls.h"

/* Check writes a record for every passing ck_assert: millions here.  So
 * the loops check by hand and call Check only to fail. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

#define MAX_NEXT 1000000	/* sparse_map_next calls before we call it a hang */
#define ODD_ALARM 30		/* seconds an odd-answer scenario may take */

enum call {
	C_FSTAT, C_GETFL, C_LSEEK, C_PREAD, C_FDATASYNC, C_IOCTL, C_FSTATFS, C_CACHESTAT, C_FADVISE,
	C_MALLOC, C_MEMALIGN, NCALLS
};

static const char *const call_name[NCALLS] = {
	"fstat", "fcntl(F_GETFL)", "lseek", "pread", "fdatasync", "ioctl", "fstatfs", "cachestat",
	"posix_fadvise", "malloc", "posix_memalign",
};

/* The errnos each call can really return (0 ends a list); EINTR where a
 * signal can interrupt it, or a FUSE or NFS server can make it. */
static const int call_errnos[NCALLS][8] = {
	[C_FSTAT] = { EINTR, EIO, ENOMEM, EOVERFLOW, EBADF },
	[C_GETFL] = { EINTR, EBADF },
	[C_LSEEK] = { EINTR, EIO, EINVAL, EOPNOTSUPP, EOVERFLOW },
	[C_PREAD] = { EINTR, EIO, EAGAIN, EINVAL, ENXIO, ENOMEM },
	[C_FDATASYNC] = { EINTR, EIO, EINVAL, EROFS, ENOSPC },
	[C_IOCTL] = { EINTR, EIO, EOPNOTSUPP, ENOTTY, EINVAL, EBADR, ENOMEM },
	[C_FSTATFS] = { EINTR, EIO, ENOSYS },
	[C_CACHESTAT] = { EINTR, ENOSYS, EPERM, EINVAL },
	[C_FADVISE] = { EINVAL, ESPIPE, ENOSYS },
	[C_MALLOC] = { ENOMEM },
	[C_MEMALIGN] = { ENOMEM },
};

enum lseek_bend { LS_REAL, LS_BEFORE, LS_EQUAL, LS_PAST_EOF, LS_RANDOM, LS_UNSUPPORTED, NLSEEK_BENDS };
static const char *const lseek_bend_name[NLSEEK_BENDS] = {
	"real", "before the offset", "equal to the offset", "past EOF", "random", "unsupported",
};

enum fiemap_bend {
	FM_REAL, FM_OVERLAP, FM_REVERSE, FM_BEFORE_START, FM_PAST_EOF, FM_NO_LAST,
	FM_FULL_NO_LAST, FM_MORE_THAN_ASKED, FM_FLAGS, FM_ZERO, NFIEMAP_BENDS
};
static const char *const fiemap_bend_name[NFIEMAP_BENDS] = {
	"real", "overlapping", "reversed", "starting before fm_start", "past EOF",
	"without LAST", "full array without LAST", "more than asked", "odd flags", "no extents",
};

static struct sm_sys_table libc_calls;
static struct {
	int calls[NCALLS];	/* made so far */
	enum call call;		/* fail the k-th call of this kind ... */
	int k;			/* ... (1-based; 0: none) ... */
	int err;		/* ... with this errno */
	bool fired;
	bool eintr_storm;	/* every other call fails with EINTR */
	unsigned int storm;
	long live;		/* allocations not freed yet */
	size_t pread_max;	/* short reads: at most this many bytes (0: all) */
	enum lseek_bend lseek;
	enum fiemap_bend fiemap;
	uint32_t fiemap_flags;	/* FM_FLAGS: or'ed into every extent */
	uint32_t seed;
	/* A source of hole information that fails (source_fail()): the
	 * source_k-th of its calls, or every one from there on (sticky). */
	unsigned int source;	/* SRC_* */
	int source_err;
	int source_k;
	bool source_sticky;
	int source_calls;
} inj;

/* The sources of hole information, as inj.source names them. */
#define SRC_SEEK_DATA 1u
#define SRC_SEEK_HOLE 2u
#define SRC_FIEMAP 4u

/* Shared with the forked children Check runs each test in. */
static struct report {
	long faults, odd, maps, lseeks;
} *report;

static void disarm(void)
{
	long live = inj.live;

	memset(&inj, 0, sizeof(inj));
	inj.live = live;
}

static bool fail_now(enum call c)
{
	inj.calls[c]++;
	if (inj.eintr_storm && c != C_MALLOC && c != C_MEMALIGN && (++inj.storm & 1)) {
		report->faults++;
		errno = EINTR;
		return true;
	}
	if (inj.k == 0 || c != inj.call || inj.calls[c] != inj.k)
		return false;
	inj.fired = true;
	report->faults++;
	errno = inj.err;
	return true;
}

static uint32_t rnd(void)
{
	inj.seed = inj.seed * 1103515245u + 12345u;
	return inj.seed >> 16;
}

static int f_fstat(int fd, struct stat *st)
{
	return fail_now(C_FSTAT) ? -1 : libc_calls.fstat(fd, st);
}

static int f_getfl(int fd)
{
	return fail_now(C_GETFL) ? -1 : libc_calls.getfl(fd);
}

/* The files here are synced when made and never written again, so the
 * flush itself would only cost a disk cache flush per map: its result is
 * what the library has to handle. */
static int f_fdatasync(int fd)
{
	(void)fd;
	return fail_now(C_FDATASYNC) ? -1 : 0;
}

static ssize_t f_pread(int fd, void *buf, size_t len, off_t off)
{
	if (fail_now(C_PREAD))
		return -1;
	if (inj.pread_max && len > inj.pread_max) {
		len = inj.pread_max;
		report->odd++;
	}
	return libc_calls.pread(fd, buf, len, off);
}

/*
 * SEEK_DATA and SEEK_HOLE answers that are odd, yet say nothing false about
 * where data is: data "found" at or before the offset, a hole "found" at or
 * before it (the library must not believe a hole there), a hole or the end
 * of data reported past EOF only where the truth is the end of the file.
 */
static off_t bend_lseek(int fd, off_t off, int whence)
{
	off_t real = libc_calls.lseek(fd, off, whence);
	int saved = errno;
	struct stat st;
	off_t size, back = off > 0 ? off - 1 : 0;
	enum lseek_bend how = inj.lseek;

	if (how == LS_UNSUPPORTED) {
		errno = EINVAL;
		return -1;
	}
	if (libc_calls.fstat(fd, &st) < 0)
		return real;
	size = st.st_size;
	if (how == LS_RANDOM)
		how = (enum lseek_bend)(rnd() % LS_RANDOM);
	switch (how) {
	case LS_BEFORE:
		report->odd++;
		return back;
	case LS_EQUAL:
		report->odd++;
		return off;
	case LS_PAST_EOF:
		if (whence == SEEK_DATA && real < 0 && saved == ENXIO && off < size) {
			report->odd++;
			return size + (1 << 20);
		}
		if (whence == SEEK_HOLE && real == size) {
			report->odd++;
			return size + (1 << 20);
		}
		break;
	default:
		break;
	}
	errno = saved;
	return real;
}

/* Whether this call of a source of hole information fails, as inj says. */
static bool source_fail(unsigned int src)
{
	if (!(inj.source & src))
		return false;
	inj.source_calls++;
	if (inj.source_k == 0 || inj.source_calls < inj.source_k ||
	    (inj.source_calls > inj.source_k && !inj.source_sticky))
		return false;
	inj.fired = true;
	report->faults++;
	errno = inj.source_err;
	return true;
}

static off_t f_lseek(int fd, off_t off, int whence)
{
	if (fail_now(C_LSEEK))
		return -1;
	if ((whence == SEEK_DATA && source_fail(SRC_SEEK_DATA)) ||
	    (whence == SEEK_HOLE && source_fail(SRC_SEEK_HOLE)))
		return -1;
	if (inj.lseek != LS_REAL && (whence == SEEK_DATA || whence == SEEK_HOLE))
		return bend_lseek(fd, off, whence);
	return libc_calls.lseek(fd, off, whence);
}

#ifdef HAVE_LINUX_FIEMAP_H
/* Cut the extents into pieces so that they fill the whole array, as a
 * file with more extents than asked for would; LAST goes, since more
 * would follow.  Pieces that end before fm_start are not reported. */
static void fill_array(struct fiemap *fm)
{
	static struct fiemap_extent copy[1024];
	unsigned int n = fm->fm_mapped_extents, out = 0;
	uint64_t total = 0, piece;

	if (n == 0 || n > 1024)
		return;
	memcpy(copy, fm->fm_extents, n * sizeof(copy[0]));
	for (unsigned int i = 0; i < n; i++)
		total += copy[i].fe_length;
	piece = total / (fm->fm_extent_count + fm->fm_extent_count / 4);
	if (piece == 0)
		piece = 1;
	for (unsigned int i = 0; i < n && out < fm->fm_extent_count; i++) {
		for (uint64_t at = 0; at < copy[i].fe_length && out < fm->fm_extent_count; at += piece) {
			struct fiemap_extent *e = &fm->fm_extents[out];
			uint64_t len = copy[i].fe_length - at < piece ? copy[i].fe_length - at : piece;

			if (copy[i].fe_logical + at + len <= fm->fm_start)
				continue;
			*e = copy[i];
			e->fe_logical += at;
			e->fe_physical += at;
			e->fe_length = len;
			e->fe_flags &= ~(uint32_t)FIEMAP_EXTENT_LAST;
			out++;
		}
	}
	if (out < fm->fm_extent_count)
		fm->fm_extents[out - 1].fe_flags |= copy[n - 1].fe_flags & FIEMAP_EXTENT_LAST;
	fm->fm_mapped_extents = out;
}

/* The real answer, bent; every bend calls data at least what the kernel
 * called data (or is one the library must refuse). */
static int bend_fiemap(int fd, struct fiemap *fm)
{
	struct fiemap_extent *ext = fm->fm_extents;
	unsigned int n;
	int r;

	if (inj.fiemap == FM_ZERO) {
		fm->fm_mapped_extents = 0;
		report->odd++;
		return 0;
	}
	r = libc_calls.ioctl(fd, FS_IOC_FIEMAP, fm);
	if (r < 0 || fm->fm_extent_count == 0)
		return r;
	n = fm->fm_mapped_extents;
	report->odd++;
	switch (inj.fiemap) {
	case FM_OVERLAP:
		/* Each extent twice, the copy shifted by half its length. */
		if (2 * n > fm->fm_extent_count)
			break;
		for (unsigned int i = n; i-- > 0;) {
			ext[2 * i] = ext[i];
			ext[2 * i + 1] = ext[i];
			ext[2 * i + 1].fe_logical += ext[i].fe_length / 2 + 1;
		}
		fm->fm_mapped_extents = 2 * n;
		break;
	case FM_REVERSE:
		for (unsigned int i = 0; i < n / 2; i++) {
			struct fiemap_extent t = ext[i];

			ext[i] = ext[n - 1 - i];
			ext[n - 1 - i] = t;
		}
		break;
	case FM_BEFORE_START:
		if (n > 0) {
			uint64_t from = fm->fm_start > (1u << 20) ? fm->fm_start - (1u << 20) : 0;

			if (ext[0].fe_logical > from) {
				ext[0].fe_length += ext[0].fe_logical - from;
				ext[0].fe_logical = from;
			}
		}
		break;
	case FM_PAST_EOF:
		if (n > 0)
			ext[n - 1].fe_length += 1u << 30;
		break;
	case FM_NO_LAST:
		for (unsigned int i = 0; i < n; i++)
			ext[i].fe_flags &= ~(uint32_t)FIEMAP_EXTENT_LAST;
		break;
	case FM_FULL_NO_LAST:
		fill_array(fm);
		break;
	case FM_MORE_THAN_ASKED:
		fm->fm_mapped_extents = fm->fm_extent_count + 1;
		break;
	case FM_FLAGS:
		for (unsigned int i = 0; i < n; i++)
			ext[i].fe_flags |= inj.fiemap_flags;
		break;
	default:
		break;
	}
	return r;
}
#endif

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	if (fail_now(C_IOCTL))
		return -1;
#ifdef HAVE_LINUX_FIEMAP_H
	if (req == FS_IOC_FIEMAP && source_fail(SRC_FIEMAP))
		return -1;
	if (req == FS_IOC_FIEMAP && inj.fiemap != FM_REAL)
		return bend_fiemap(fd, arg);
#endif
	return libc_calls.ioctl(fd, req, arg);
}

static int f_fstatfs(int fd, int64_t *type)
{
	return fail_now(C_FSTATFS) ? -1 : libc_calls.fstatfs(fd, type);
}

static int f_cachestat(int fd, int64_t off, int64_t len, struct sm_cachestat *cs)
{
	return fail_now(C_CACHESTAT) ? -1 : libc_calls.cachestat(fd, off, len, cs);
}

static int f_fadvise(int fd, off_t off, off_t len, int advice)
{
	return fail_now(C_FADVISE) ? -1 : libc_calls.fadvise(fd, off, len, advice);
}

static void *f_malloc(size_t n)
{
	void *p;

	if (fail_now(C_MALLOC))
		return NULL;
	p = libc_calls.malloc(n);
	if (p)
		inj.live++;
	return p;
}

static int f_posix_memalign(void **p, size_t align, size_t n)
{
	int r;

	if (fail_now(C_MEMALIGN))
		return inj.err;
	r = libc_calls.posix_memalign(p, align, n);
	if (r == 0)
		inj.live++;
	return r;
}

static void f_free(void *p)
{
	if (p)
		inj.live--;
	libc_calls.free(p);
}

/* One map, start to end, retrying sparse_map_next() after an error. */
struct run {
	int open_rc;
	int next_err;		/* the first error of sparse_map_next, or 0 */
	int errors;
	bool gave_up;		/* the same error three times running */
	int calls[NCALLS];	/* how many of each call it made */
	struct th_map m;
};

static void run_map(int fd, enum sparse_map_backend b, unsigned int flags, struct run *out)
{
	struct sparse_map *map = (struct sparse_map *)&map;
	struct sparse_map_range r;
	size_t cap = 0;
	int rc, in_a_row = 0;

	memset(out, 0, sizeof(*out));
	report->maps++;
	out->open_rc = sparse_map_open(fd, b, flags, &map);
	if (out->open_rc < 0) {
		REQUIRE(map == NULL, "failed open (%d) left *mapp set", out->open_rc);
		REQUIRE(out->open_rc > -4096, "open returned %d, not -errno", out->open_rc);
		return;
	}
	out->m.size = sparse_map_size(map);
	out->m.backend = sparse_map_get_backend(map);
	for (int calls = 0;; calls++) {
		REQUIRE(calls < MAX_NEXT, "sparse_map_next did not end after %d calls", calls);
		rc = sparse_map_next(map, &r);
		if (rc == 0)
			break;
		if (rc < 0) {
			REQUIRE(rc > -4096, "sparse_map_next returned %d, not -errno", rc);
			if (!out->next_err)
				out->next_err = rc;
			out->errors++;
			if (++in_a_row == 3) {
				out->gave_up = true;
				break;
			}
			continue;
		}
		REQUIRE(rc == 1, "sparse_map_next returned %d", rc);
		in_a_row = 0;
		if (out->m.n == cap) {
			cap = cap ? 2 * cap : 64;
			out->m.r = realloc(out->m.r, cap * sizeof(r));
			REQUIRE(out->m.r, "out of memory");
		}
		out->m.r[out->m.n++] = r;
	}
	if (!out->gave_up)
		REQUIRE(sparse_map_next(map, &r) == 0, "sparse_map_next: not 0 again after the end");
	sparse_map_close(map);
	memcpy(out->calls, inj.calls, sizeof(out->calls));
}

static bool same_map(const struct th_map *a, const struct th_map *b)
{
	if (a->n != b->n || a->size != b->size || a->backend != b->backend)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->r[i].offset != b->r[i].offset || a->r[i].length != b->r[i].length ||
		    a->r[i].kind != b->r[i].kind || a->r[i].flags != b->r[i].flags)
			return false;
	return true;
}

/* Does b call data every byte that a calls data? */
static bool covers_data(const struct th_map *a, const struct th_map *b)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		int64_t lo = a->r[i].offset, hi = lo + a->r[i].length;

		if (a->r[i].kind != SPARSE_MAP_DATA)
			continue;
		while (j < b->n && b->r[j].offset + b->r[j].length <= lo)
			j++;
		for (size_t k = j; k < b->n && b->r[k].offset < hi; k++)
			if (b->r[k].kind != SPARSE_MAP_DATA)
				return false;
	}
	return true;
}

/* Errors the library turns into "this backend cannot serve the file". */
static bool clean_error(int rc, int err)
{
	if (rc == -err)
		return true;
	return rc == -EOPNOTSUPP && (err == ENOTTY || err == EINVAL || err == EBADR);
}

static void expect_contract(int fd, const struct run *run, const char *what)
{
	const char *why = th_check_contract(fd, &run->m, 0);

	REQUIRE(!why, "%s: %s", what, why);
}

static void expect_no_leak(const char *what)
{
	REQUIRE(inj.live == 0, "%s: %ld allocation(s) not freed", what, inj.live);
}

static const enum sparse_map_backend all_backends[] = {
	SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK,
	SPARSE_MAP_BACKEND_FIEMAP, SPARSE_MAP_BACKEND_SCAN,
};
#define NBACKENDS 4
static const unsigned int flag_sets[] = {
	0, SPARSE_MAP_SYNC | SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES,
};
#define NFLAGSETS 2

/* Small layouts, whose every call can be failed in turn, and one with
 * more than a FIEMAP batch of extents. */
static const char *const fault_layouts[] = {
	"empty", "one-byte", "block+1", "hole-data-hole-data", "data-hole",
	"prealloc-dirty", "punched", "written-zeroes", "fragmented",
};
#define NFAULT_LAYOUTS (sizeof(fault_layouts) / sizeof(fault_layouts[0]))

static char path[4096];

/*
 * Whether two fault-free maps of the layout make the same calls and give the
 * same map.  Not with SEEK over preallocated space: ext4 and XFS answer
 * SEEK_DATA over unwritten extents by what the page cache holds, which
 * reading the file (and checking a map) changes.  There only the contract
 * is checked.
 */
static bool answers_repeat(const char *layout, enum sparse_map_backend b)
{
	for (size_t i = 0; i < th_nlayouts; i++)
		if (strcmp(th_layouts[i].name, layout) == 0 && th_layouts[i].prealloc)
			return b == SPARSE_MAP_BACKEND_FIEMAP || b == SPARSE_MAP_BACKEND_SCAN;
	return true;
}

/* run is right: the same map as base where answers repeat, else one that
 * keeps the contract. */
static void expect_same_or_sound(int fd, const char *layout, enum sparse_map_backend b,
				 const struct run *run, const struct run *base, const char *what)
{
	if (!answers_repeat(layout, b))
		expect_contract(fd, run, what);
	else
		REQUIRE(same_map(&run->m, &base->m), "%s: map differs: %s", what, th_describe(&run->m));
}

/* The layout, built and synced, so that every run sees the same extents. */
static int make_layout(const char *name)
{
	for (size_t i = 0; i < th_nlayouts; i++) {
		if (strcmp(th_layouts[i].name, name) == 0) {
			int fd = th_create(NULL, path, sizeof(path));

			th_layouts[i].build(fd, th_blksize(fd));
			ck_assert_int_eq(fsync(fd), 0);
			return fd;
		}
	}
	ck_abort_msg("no layout %s", name);
	return -1;
}

static void drop_file(int fd)
{
	close(fd);
	unlink(path);
}

/* Which k to fail: all of 1..n where n is small; of a long run of calls
 * (a fragmented file) the first and last 24 and a spread between. */
static int next_k(int k, int n)
{
	if (n <= 64 || k < 24 || k >= n - 24)
		return k + 1;
	return k + (n - 48) / 16 + 1 < n - 24 ? k + (n - 48) / 16 + 1 : n - 24;
}

static void describe(char *buf, size_t len, const char *layout, enum sparse_map_backend b,
		     unsigned int flags, enum call c, int err, int k)
{
	snprintf(buf, len, "%s, %s, flags %#x: %s call %d fails with %s", layout,
		 sparse_map_backend_name(b), flags, call_name[c], k, strerror(err));
}

/* Every call the map makes, failed in turn with every errno it can return. */
START_TEST(test_each_failing_call_gives_clean_error_or_right_map)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	char what[256];

	for (int bi = 0; bi < NBACKENDS; bi++) {
		for (int fi = 0; fi < NFLAGSETS; fi++) {
			enum sparse_map_backend b = all_backends[bi];
			unsigned int flags = flag_sets[fi];
			struct run base, run;

			bool exact = answers_repeat(layout, b);

			if (strcmp(layout, "fragmented") == 0 && (b == SPARSE_MAP_BACKEND_SCAN || flags))
				continue;	/* reading 24 MiB per fault says no more */
			disarm();
			run_map(fd, b, flags, &base);
			if (base.open_rc == -EOPNOTSUPP &&
			    (b == SPARSE_MAP_BACKEND_FIEMAP || b == SPARSE_MAP_BACKEND_SEEK))
				continue;	/* not built, or not on this file system */
			REQUIRE(base.open_rc == 0 && base.errors == 0,
				      "%s, %s: fault-free run failed (%d, %d)", layout,
				      sparse_map_backend_name(b), base.open_rc, base.next_err);
			expect_contract(fd, &base, layout);
			expect_no_leak(layout);

			for (int c = 0; c < NCALLS; c++) {
				for (int e = 0; call_errnos[c][e]; e++) {
					int err = call_errnos[c][e];

					for (int k = 1; k <= base.calls[c] + 1; k = next_k(k, base.calls[c])) {
						describe(what, sizeof(what), layout, b, flags, c, err, k);
						disarm();
						inj.call = c;
						inj.k = k;
						inj.err = err;
						run_map(fd, b, flags, &run);
						if (k > base.calls[c] || !inj.fired) {
							/* Past the last call: nothing to fail. */
							/* How often cachestat and posix_fadvise
							 * are asked depends on what the page
							 * cache holds, which the last map's
							 * drop-behind changed: not exact. */
							REQUIRE(!exact || c == C_CACHESTAT || c == C_FADVISE ||
								(k > base.calls[c] && !inj.fired),
								"%s: %s", what, inj.fired ? "more calls than without faults"
											  : "call never made");
							th_map_free(&run.m);
							break;
						}
						expect_no_leak(what);
						if (err == EINTR) {
							REQUIRE(run.open_rc == 0 && run.errors == 0,
								"%s: not retried (%d, %d)", what, run.open_rc, run.next_err);
							expect_same_or_sound(fd, layout, b, &run, &base, what);
						} else if (run.open_rc < 0) {
							REQUIRE(clean_error(run.open_rc, err),
								      "%s: open returned %d (%s)", what,
								      run.open_rc, strerror(-run.open_rc));
						} else {
							REQUIRE(!run.gave_up && run.errors <= 1,
								      "%s: next failed %d times", what, run.errors);
							REQUIRE(!run.errors || clean_error(run.next_err, err),
								      "%s: next returned %d (%s)", what,
								      run.next_err, strerror(-run.next_err));
							if (!same_map(&run.m, &base.m))
								expect_contract(fd, &run, what);
						}
						th_map_free(&run.m);
					}
				}
			}
			th_map_free(&base.m);
		}
	}
	disarm();
	drop_file(fd);
}
END_TEST

/* An answer SEEK_DATA (hole: false; -1 for ENXIO) or SEEK_HOLE may give
 * for off: no data skipped, no data called a hole. */
static bool lseek_answer_ok(int fd, int64_t off, bool hole, int64_t got)
{
	struct stat st;
	int64_t size = fstat(fd, &st) == 0 ? st.st_size : -1;

	if (!hole && got == -1)
		return !rel_has_data(fd, off, size);	/* ENXIO */
	if (!hole)
		return got >= off && got < size && !rel_has_data(fd, off, got);
	return got >= off && got <= size && (got == size || !rel_has_data(fd, got, got + 1));
}

/* sparse_map_lseek under the same faults: the fault-free answer, or -1
 * with the injected errno; EINTR leaves no trace. */
START_TEST(test_lseek_under_faults)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	int64_t size = lseek(fd, 0, SEEK_END);
	const int64_t offsets[] = { 0, size / 3, size / 2, size > 0 ? size - 1 : 0 };
	const int whences[] = { SPARSE_MAP_SEEK_DATA, SPARSE_MAP_SEEK_HOLE };
	char what[256];

	for (int oi = 0; oi < 4; oi++) {
		for (int wi = 0; wi < 2; wi++) {
			int64_t base, got;
			int base_errno, calls[NCALLS];

			/* Each call from a clean slate: what the last one left
			 * (a proven answer, a kept walk) changes which calls the
			 * next makes. */
			th_lseek_forget();
			disarm();
			errno = 0;
			base = sparse_map_lseek(fd, offsets[oi], whences[wi]);
			base_errno = errno;
			expect_no_leak(layout);
			memcpy(calls, inj.calls, sizeof(calls));
			for (int c = 0; c < NCALLS; c++) {
				for (int e = 0; call_errnos[c][e]; e++) {
					int err = call_errnos[c][e];

					for (int k = 1; k <= calls[c]; k = next_k(k, calls[c])) {
						snprintf(what, sizeof(what),
							 "%s: sparse_map_lseek(%lld, %s): %s call %d fails with %s",
							 layout, (long long)offsets[oi],
							 wi ? "HOLE" : "DATA", call_name[c], k, strerror(err));
						th_lseek_forget();
						disarm();
						inj.call = c;
						inj.k = k;
						inj.err = err;
						report->lseeks++;
						errno = 0;
						got = sparse_map_lseek(fd, offsets[oi], whences[wi]);
						/* cachestat and posix_fadvise: as often as
						 * the page cache's state asks for.  And
						 * over preallocated space the kernel's
						 * SEEK_DATA answers by what the page cache
						 * holds, which an earlier run's read may
						 * have changed, and with it which calls
						 * follow (answers_repeat()). */
						if (!inj.fired && (c == C_CACHESTAT || c == C_FADVISE ||
								   !answers_repeat(layout, SPARSE_MAP_BACKEND_SEEK)))
							break;
						REQUIRE(inj.fired, "%s: call never made", what);
						expect_no_leak(what);
						if (got >= 0 && base >= 0) {
							/* A fault that makes the probe fall back to
							 * another backend may change the answer,
							 * within what the bytes allow. */
							REQUIRE(got == base || lseek_answer_ok(fd, offsets[oi], wi, got),
								"%s: %lld, fault-free %lld", what, (long long)got,
								(long long)base);
							REQUIRE(lseek(fd, 0, SEEK_CUR) == got,
								"%s: file offset not at the result", what);
						} else if (got == -1 && errno == ENXIO && !wi &&
							   lseek_answer_ok(fd, offsets[oi], false, -1)) {
							/* Fell back to a backend that finds no data. */
						} else if (err == EINTR || got >= 0) {
							/* EINTR leaves no trace, where answers repeat. */
							REQUIRE((got == base && errno == base_errno) ||
								(got >= 0 && lseek_answer_ok(fd, offsets[oi], wi, got) &&
								 (err != EINTR || !answers_repeat(layout, SPARSE_MAP_BACKEND_AUTO))),
								      "%s: %lld (%s), fault-free %lld (%s)", what,
								      (long long)got, strerror(errno),
								      (long long)base, strerror(base_errno));
						} else {
							REQUIRE(got == -1 && (errno == base_errno ||
										    clean_error(-errno, err)),
								      "%s: %lld, errno %s", what, (long long)got,
								      strerror(errno));
						}
					}
				}
			}
		}
	}
	disarm();
	drop_file(fd);
}
END_TEST

/*
 * Issue 21: under AUTO, lack of hole information is never an error.  These
 * errnos, from a source of hole information, say "no hole information
 * here", not "the file cannot be read" (EPERM and EACCES only from the
 * ioctl); SEEK_HOLE's ENXIO below EOF and EIO are the source's word, not a
 * failed read.
 */
static const int no_hole_info_errnos[] = {
	ENOENT, EBADFD, EIO, EINVAL, ENXIO, EOPNOTSUPP, ENOTTY, ENOSYS, EBADR, EPERM, EACCES,
};
#define NNO_HOLE_INFO (sizeof(no_hole_info_errnos) / sizeof(no_hole_info_errnos[0]))

static const struct hole_source {
	unsigned int src;
	const char *name;
	enum sparse_map_backend forced;	/* the backend that is this source */
} hole_sources[] = {
	{ SRC_SEEK_DATA, "SEEK_DATA", SPARSE_MAP_BACKEND_SEEK },
	{ SRC_SEEK_HOLE, "SEEK_HOLE", SPARSE_MAP_BACKEND_SEEK },
	{ SRC_SEEK_DATA | SRC_SEEK_HOLE, "SEEK_DATA and SEEK_HOLE", SPARSE_MAP_BACKEND_SEEK },
	{ SRC_FIEMAP, "FIEMAP", SPARSE_MAP_BACKEND_FIEMAP },
};
#define NHOLE_SOURCES (sizeof(hole_sources) / sizeof(hole_sources[0]))

/* Arm the source to fail its k-th call (0: count only), or every call from there on. */
static void arm_source(const struct hole_source *hs, int err, int k, bool sticky)
{
	disarm();
	inj.source = hs->src;
	inj.source_err = err;
	inj.source_k = k;
	inj.source_sticky = sticky;
}

/* The k to fail among n calls: 1, 2, 3, n/2 and n, for any n. */
static int next_source_k(int k, int n)
{
	if (k < 3)
		return k + 1;
	if (k < n / 2)
		return n / 2;
	return k < n ? n : n + 1;
}

/* What one fault did to AUTO and to the forced backend that is the source. */
static void expect_auto_goes_on(int fd, const struct hole_source *hs, int err, int k,
				bool sticky, const char *layout)
{
	struct run run;
	char what[256];

	snprintf(what, sizeof(what), "%s: %s call %d%s fails with %s", layout, hs->name, k,
		 sticky ? " and every one after" : "", strerror(err));
	arm_source(hs, err, k, sticky);
	run_map(fd, SPARSE_MAP_BACKEND_AUTO, 0, &run);
	if (inj.fired) {
		expect_no_leak(what);
		REQUIRE(run.open_rc == 0 && run.errors == 0, "%s: auto failed (open %s, next %s)",
			what, strerror(-run.open_rc), strerror(-run.next_err));
		expect_contract(fd, &run, what);
	}
	th_map_free(&run.m);

	arm_source(hs, err, k, sticky);
	run_map(fd, hs->forced, 0, &run);
	if (inj.fired) {
		int rc = run.open_rc < 0 ? run.open_rc : run.next_err;

		expect_no_leak(what);
		if (err == ENXIO) {
			/* Not an errno these backends report as such: an
			 * error or a map that keeps every byte written. */
			if (rc == 0)
				expect_contract(fd, &run, what);
			else
				REQUIRE(rc == -ENXIO || rc == -EIO, "%s: %s returned %s", what,
					sparse_map_backend_name(hs->forced), strerror(-rc));
		} else {
			/* At open, "not supported here" may stand for these. */
			bool unsupported = run.open_rc == -EOPNOTSUPP &&
				(err == EINVAL || err == ENOTTY || err == ENOSYS || err == EBADR);

			REQUIRE(rc < 0 && (rc == -err || unsupported),
				"%s: forced %s returned %s, not the error", what,
				sparse_map_backend_name(hs->forced), rc ? strerror(-rc) : "a map");
		}
	}
	th_map_free(&run.m);
}

/* sparse_map_lseek with the source failing from its first or second call
 * on: an answer the bytes allow, or ENXIO from SEEK_DATA past the last
 * data; a failure leaves the offset where it was. */
static void expect_lseek_goes_on(int fd, const struct hole_source *hs, int err, int64_t off,
				 int whence, const char *layout)
{
	for (int k = 1; k <= 2; k++) {
		const int64_t sentinel = 4242;
		int64_t got, now;
		int e;

		arm_source(hs, err, k, true);
		(void)lseek(fd, sentinel, SEEK_SET);
		report->lseeks++;
		errno = 0;
		got = sparse_map_lseek(fd, off, whence);
		e = errno;
		disarm();
		now = lseek(fd, 0, SEEK_CUR);
		/* Where the walk fell back to reading (a build without FIEMAP),
		 * the map stays kept for the loop's next call. */
		th_lseek_forget();
		expect_no_leak(layout);
		REQUIRE(got >= 0 ? now == got : now == sentinel,
			"%s: sparse_map_lseek(%lld, %s), %s from call %d on: %lld (%s), offset %lld",
			layout, (long long)off, whence == SPARSE_MAP_SEEK_HOLE ? "HOLE" : "DATA",
			strerror(err), k, (long long)got, got < 0 ? strerror(e) : "ok", (long long)now);
		REQUIRE((got >= 0 || e == ENXIO) &&
			lseek_answer_ok(fd, off, whence == SPARSE_MAP_SEEK_HOLE, got),
			"%s: sparse_map_lseek(%lld, %s), %s %s from call %d on: %lld (%s)", layout,
			(long long)off, whence == SPARSE_MAP_SEEK_HOLE ? "HOLE" : "DATA", hs->name,
			strerror(err), k, (long long)got, got < 0 ? strerror(e) : "ok");
	}
}

START_TEST(test_auto_goes_on_without_hole_information)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	int64_t size = lseek(fd, 0, SEEK_END);
	const int64_t offsets[] = { 0, size / 2, size > 0 ? size - 1 : 0 };

	for (size_t si = 0; si < NHOLE_SOURCES; si++) {
		const struct hole_source *hs = &hole_sources[si];
		struct run base;
		int n;

		/* How many calls of the source a fault-free AUTO map and
		 * forced map make: the calls there are to fail. */
		arm_source(hs, 0, 0, false);
		run_map(fd, SPARSE_MAP_BACKEND_AUTO, 0, &base);
		th_map_free(&base.m);
		n = inj.source_calls;
		arm_source(hs, 0, 0, false);
		run_map(fd, hs->forced, 0, &base);
		th_map_free(&base.m);
		if (inj.source_calls > n)
			n = inj.source_calls;
		disarm();
		for (size_t ei = 0; ei < NNO_HOLE_INFO; ei++) {
			int err = no_hole_info_errnos[ei];

			if (hs->src != SRC_FIEMAP && (err == EPERM || err == EACCES))
				continue;
			/* SEEK_DATA's ENXIO is its answer "no data from here": a
			 * trailing hole, which nothing but SEEK_DATA can tell from
			 * a lie (OpenZFS 15526); the library believes it. */
			if ((hs->src & SRC_SEEK_DATA) && err == ENXIO)
				continue;
			/* Every errno at the first call and one in the middle;
			 * EIO at each k next_source_k() picks. */
			for (int k = 1; k <= n; k = err == EIO ? next_source_k(k, n) :
							   k < n / 2 + 1 ? n / 2 + 1 : n + 1)
				for (int sticky = 0; sticky < 2; sticky++)
					expect_auto_goes_on(fd, hs, err, k, sticky, layout);
			if (hs->src == SRC_FIEMAP || size == 0)
				continue;	/* sparse_map_lseek asks SEEK first */
			for (int oi = 0; oi < 3; oi++)
				for (int w = 0; w < 2; w++)
					expect_lseek_goes_on(fd, hs, err, offsets[oi],
							     w ? SPARSE_MAP_SEEK_HOLE : SPARSE_MAP_SEEK_DATA,
							     layout);
		}
	}
	disarm();
	drop_file(fd);
}
END_TEST

/* EINTR on every other call of every kind: the same maps as without. */
START_TEST(test_eintr_storm_changes_nothing)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);

	for (int bi = 0; bi < NBACKENDS; bi++) {
		for (int fi = 0; fi < NFLAGSETS; fi++) {
			struct run base, run;

			disarm();
			run_map(fd, all_backends[bi], flag_sets[fi], &base);
			if (base.open_rc < 0)
				continue;
			inj.eintr_storm = true;
			run_map(fd, all_backends[bi], flag_sets[fi], &run);
			REQUIRE(run.open_rc == 0 && run.errors == 0, "%s, %s: EINTR surfaced (%d, %d)",
				      layout, sparse_map_backend_name(all_backends[bi]), run.open_rc,
				      run.next_err);
			expect_same_or_sound(fd, layout, all_backends[bi], &run, &base, layout);
			expect_no_leak(layout);
			th_map_free(&base.m);
			th_map_free(&run.m);
		}
	}
	disarm();
	drop_file(fd);
}
END_TEST

/* Short reads of 1 (small files), 511 and 4097 bytes: SCAN, VERIFY and ZEROES see the same bytes. */
START_TEST(test_short_reads_change_nothing)
{
	const char *layout = fault_layouts[_i];
	const size_t maxima[] = { 1, 511, 4097 };
	int fd = make_layout(layout);

	if (strcmp(layout, "fragmented") == 0) {
		drop_file(fd);
		return;		/* a million one-byte reads say no more */
	}
	for (int bi = 0; bi < NBACKENDS; bi++) {
		struct run base, run;
		unsigned int flags = SPARSE_MAP_VERIFY | SPARSE_MAP_ZEROES;

		disarm();
		run_map(fd, all_backends[bi], flags, &base);
		if (base.open_rc < 0)
			continue;
		for (int mi = 0; mi < 3; mi++) {
			if (maxima[mi] == 1 && base.m.size > 65536)
				continue;	/* a syscall a byte: small files only */
			disarm();
			inj.pread_max = maxima[mi];
			alarm(ODD_ALARM);
			run_map(fd, all_backends[bi], flags, &run);
			alarm(0);
			REQUIRE(run.open_rc == 0 && run.errors == 0, "%s, reads of %zu: failed (%d, %d)",
				      layout, maxima[mi], run.open_rc, run.next_err);
			expect_same_or_sound(fd, layout, all_backends[bi], &run, &base, layout);
			th_map_free(&run.m);
		}
		th_map_free(&base.m);
	}
	disarm();
	drop_file(fd);
}
END_TEST

/* SEEK_DATA/SEEK_HOLE answers before the offset, at it, past EOF, or a mix:
 * no byte lost, and under AUTO no error. */
START_TEST(test_odd_lseek_answers_lose_nothing)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	const enum sparse_map_backend bs[] = { SPARSE_MAP_BACKEND_AUTO, SPARSE_MAP_BACKEND_SEEK };
	char what[256];

	for (int bend = LS_BEFORE; bend <= LS_RANDOM; bend++) {
		for (int bi = 0; bi < 2; bi++) {
			for (unsigned int flags = 0; flags <= SPARSE_MAP_VERIFY; flags += SPARSE_MAP_VERIFY) {
				struct run run;

				snprintf(what, sizeof(what), "%s, %s, flags %#x, lseek answers %s", layout,
					 sparse_map_backend_name(bs[bi]), flags, lseek_bend_name[bend]);
				disarm();
				inj.lseek = (enum lseek_bend)bend;
				inj.seed = (uint32_t)(bend * 7 + bi);
				alarm(ODD_ALARM);
				run_map(fd, bs[bi], flags, &run);
				alarm(0);
				disarm();
				expect_no_leak(what);
				if (run.open_rc < 0 || run.errors) {
					/* A forced SEEK may refuse answers it cannot
					 * believe, with a clean errno; AUTO goes on
					 * without them (issue 21). */
					REQUIRE(bs[bi] != SPARSE_MAP_BACKEND_AUTO &&
						(run.open_rc == -EOPNOTSUPP || run.open_rc == -EIO ||
						 run.next_err == -EIO),
						      "%s: %d, %d", what, run.open_rc, run.next_err);
					continue;
				}
				expect_contract(fd, &run, what);
				th_map_free(&run.m);
			}
		}
	}
	drop_file(fd);
}
END_TEST

#ifdef HAVE_LINUX_FIEMAP_H
/* FIEMAP answers bent every way: the map calls data at least what the
 * kernel called data, and keeps the contract; answers no kernel gives may
 * fail with -EIO instead. */
START_TEST(test_odd_fiemap_answers_lose_nothing)
{
	static const uint32_t odd_flags[] = {
		FIEMAP_EXTENT_UNKNOWN, FIEMAP_EXTENT_DELALLOC, FIEMAP_EXTENT_ENCODED,
		FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_DATA_TAIL, FIEMAP_EXTENT_NOT_ALIGNED,
		FIEMAP_EXTENT_DATA_ENCRYPTED,
		FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_UNWRITTEN,
		FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNWRITTEN,
		FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_UNWRITTEN,
		FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_UNWRITTEN,
	};
	const size_t nflags = sizeof(odd_flags) / sizeof(odd_flags[0]);
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	struct run base, run;
	char what[256];

	disarm();
	run_map(fd, SPARSE_MAP_BACKEND_FIEMAP, 0, &base);
	if (base.open_rc == -EOPNOTSUPP) {
		drop_file(fd);
		return;		/* no FIEMAP on this file system */
	}
	ck_assert_int_eq(base.open_rc, 0);
	for (int bend = FM_OVERLAP; bend < FM_ZERO; bend++) {
		size_t variants = bend == FM_FLAGS ? nflags : 1;

		for (size_t v = 0; v < variants; v++) {
			/* AUTO with SEEK unsupported: the probe must reach FIEMAP. */
			for (int auto_ = 0; auto_ < 2; auto_++) {
				snprintf(what, sizeof(what), "%s, %s, FIEMAP answers %s (%#x)", layout,
					 auto_ ? "auto without SEEK" : "fiemap", fiemap_bend_name[bend],
					 bend == FM_FLAGS ? odd_flags[v] : 0);
				disarm();
				inj.fiemap = (enum fiemap_bend)bend;
				inj.fiemap_flags = odd_flags[v];
				inj.lseek = auto_ ? LS_UNSUPPORTED : LS_REAL;
				alarm(ODD_ALARM);
				run_map(fd, auto_ ? SPARSE_MAP_BACKEND_AUTO : SPARSE_MAP_BACKEND_FIEMAP, 0, &run);
				alarm(0);
				disarm();
				expect_no_leak(what);
				if (bend == FM_MORE_THAN_ASKED && base.m.n == 0 && run.open_rc == 0 &&
				    run.errors == 0) {
					/* Nothing asked of FIEMAP past the probe: an empty file. */
				} else if (bend == FM_MORE_THAN_ASKED && !auto_) {
					/* A forced FIEMAP keeps its error; AUTO goes
					 * on with the next source, below. */
					REQUIRE(run.open_rc == 0 && run.next_err == -EIO,
						      "%s: expected -EIO from next, got %d, %d", what,
						      run.open_rc, run.next_err);
					continue;
				}
				/* Answers no kernel gives (out of order, overlapping)
				 * may also be refused, with -EIO; the rest must map. */
				if ((bend == FM_REVERSE || bend == FM_OVERLAP) &&
				    (run.open_rc == -EIO || (run.open_rc == 0 && run.next_err == -EIO))) {
					th_map_free(&run.m);
					continue;
				}
				REQUIRE(run.open_rc == 0 && run.errors == 0, "%s: failed (%d, %d)",
					      what, run.open_rc, run.next_err);
				expect_contract(fd, &run, what);
				if (!auto_)
					REQUIRE(covers_data(&base.m, &run.m),
						      "%s: calls a hole what the kernel called data: %s",
						      what, th_describe(&run.m));
				th_map_free(&run.m);
			}
		}
	}
	th_map_free(&base.m);
	drop_file(fd);
}
END_TEST

/* A FIEMAP that finds no extent where st_blocks says there is data must not
 * be trusted by the probe; a forced FIEMAP that finds none where there is no
 * data is right. */
START_TEST(test_probe_distrusts_empty_fiemap)
{
	const char *layout = fault_layouts[_i];
	int fd = make_layout(layout);
	struct stat st;
	struct run run;

	ck_assert_int_eq(fstat(fd, &st), 0);
	disarm();
	inj.fiemap = FM_ZERO;
	inj.lseek = LS_UNSUPPORTED;
	run_map(fd, SPARSE_MAP_BACKEND_AUTO, 0, &run);
	disarm();
	expect_no_leak(layout);
	ck_assert_int_eq(run.open_rc, 0);
	if (st.st_blocks > 0)
		REQUIRE(run.m.backend != SPARSE_MAP_BACKEND_FIEMAP,
			      "%s: the probe trusted a FIEMAP with no extents", layout);
	expect_contract(fd, &run, layout);
	th_map_free(&run.m);
	drop_file(fd);
}
END_TEST
#endif

static Suite *faults_suite(void)
{
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("faults");

	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, th_lseek_forget, NULL);
	tcase_add_loop_test(tc, test_each_failing_call_gives_clean_error_or_right_map, 0,
			    (int)NFAULT_LAYOUTS);
	tcase_add_loop_test(tc, test_lseek_under_faults, 0, (int)NFAULT_LAYOUTS - 1);
	tcase_add_loop_test(tc, test_auto_goes_on_without_hole_information, 0, (int)NFAULT_LAYOUTS);
	tcase_add_loop_test(tc, test_eintr_storm_changes_nothing, 0, (int)NFAULT_LAYOUTS);
	tcase_add_loop_test(tc, test_short_reads_change_nothing, 0, (int)NFAULT_LAYOUTS);
	tcase_add_loop_test(tc, test_odd_lseek_answers_lose_nothing, 0, (int)NFAULT_LAYOUTS);
#ifdef HAVE_LINUX_FIEMAP_H
	tcase_add_loop_test(tc, test_odd_fiemap_answers_lose_nothing, 0, (int)NFAULT_LAYOUTS);
	tcase_add_loop_test(tc, test_probe_distrusts_empty_fiemap, 0, (int)NFAULT_LAYOUTS);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed;

	report = mmap(NULL, sizeof(*report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (report == MAP_FAILED)
		return 99;
	libc_calls = sm_sys_table;
	if (!libc_calls.free)
		return 99;
	sm_sys_table = (struct sm_sys_table){
		.fstat = f_fstat, .getfl = f_getfl, .lseek = f_lseek, .pread = f_pread,
		.fdatasync = f_fdatasync, .ioctl = f_ioctl, .fstatfs = f_fstatfs,
		.cachestat = f_cachestat, .fadvise = f_fadvise, .malloc = f_malloc,
		.posix_memalign = f_posix_memalign, .free = f_free,
	};
	failed = th_run_suite(faults_suite());
	printf("fault injection: %ld faults injected, %ld odd answers given, %ld maps and %ld "
	       "sparse_map_lseek calls checked; %s\n", report->faults, report->odd, report->maps,
	       report->lseeks, failed ? "FAILURES above" : "no data lost, no leak, no hang");
	return failed ? 1 : 0;
}
