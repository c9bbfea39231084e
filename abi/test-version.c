/* SPDX-License-Identifier: MIT */
/*
 * The version macros of <sparse_map.h> are the release configure was given
 * (SM_CONFIGURE_VERSION, from the Makefile), and SPARSE_MAP_VERSION_CHECK
 * orders releases as downstream code expects, in #if and in C.
 */
#include <stdio.h>
#include <string.h>

#include <sparse_map.h>

#if !defined(SPARSE_MAP_VERSION_MAJOR) || !defined(SPARSE_MAP_VERSION_MINOR) || \
	!defined(SPARSE_MAP_VERSION_MICRO) || !defined(SPARSE_MAP_VERSION_STRING)
#error "<sparse_map.h> does not define the SPARSE_MAP_VERSION_* macros"
#endif
/* The check must work where downstream code uses it most: in #if. */
#if !SPARSE_MAP_VERSION_CHECK(1, 0, 0)
#error "SPARSE_MAP_VERSION_CHECK(1, 0, 0) is false in #if"
#endif
#if SPARSE_MAP_VERSION_CHECK(SPARSE_MAP_VERSION_MAJOR + 1, 0, 0)
#error "SPARSE_MAP_VERSION_CHECK(next major, 0, 0) is true in #if"
#endif

static int failed;

static void expect(int got, int want, const char *what)
{
	if (got != want) {
		printf("FAIL: %s: expected %d, got %d\n", what, want, got);
		failed = 1;
	}
}

int main(void)
{
	char parts[64];
	const int ma = SPARSE_MAP_VERSION_MAJOR, mi = SPARSE_MAP_VERSION_MINOR,
		  mc = SPARSE_MAP_VERSION_MICRO;

	if (strcmp(SPARSE_MAP_VERSION_STRING, SM_CONFIGURE_VERSION) != 0) {
		printf("FAIL: SPARSE_MAP_VERSION_STRING is \"%s\", configure says \"%s\"\n",
		       SPARSE_MAP_VERSION_STRING, SM_CONFIGURE_VERSION);
		failed = 1;
	}
	snprintf(parts, sizeof(parts), "%d.%d.%d", ma, mi, mc);
	if (strcmp(parts, SM_CONFIGURE_VERSION) != 0) {
		printf("FAIL: MAJOR.MINOR.MICRO is %s, configure says %s\n", parts,
		       SM_CONFIGURE_VERSION);
		failed = 1;
	}

	expect(SPARSE_MAP_VERSION_CHECK(ma, mi, mc), 1, "CHECK(this release)");
	expect(SPARSE_MAP_VERSION_CHECK(ma, mi, mc + 1), 0, "CHECK(next micro)");
	expect(SPARSE_MAP_VERSION_CHECK(ma + 1, 0, 0), 0, "CHECK(next major)");
	expect(SPARSE_MAP_VERSION_CHECK(0, 0, 0), 1, "CHECK(0.0.0)");
	if (mc > 0)
		expect(SPARSE_MAP_VERSION_CHECK(ma, mi, mc - 1), 1, "CHECK(previous micro)");
	if (ma > 0)
		expect(SPARSE_MAP_VERSION_CHECK(ma - 1, 999, 999), 1, "CHECK(previous major, 999, 999)");
	/* A later minor outweighs any micro, a later major any minor. */
	expect(SPARSE_MAP_VERSION_CHECK(ma, mi + 1, 0), 0, "CHECK(next minor, micro 0)");
	if (mi > 0)
		expect(SPARSE_MAP_VERSION_CHECK(ma, mi - 1, 999), 1, "CHECK(previous minor, 999)");

	if (!failed)
		printf("PASS: version %s from <sparse_map.h>\n", SPARSE_MAP_VERSION_STRING);
	return failed;
}
