/* SPDX-License-Identifier: MIT */
/* The main() tail shared by the Check test programs. */
#ifndef SM_TEST_CHECK_RUN_H
#define SM_TEST_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

/* Run every test of s (each in a child of its own) and say how it went. */
static inline int th_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
