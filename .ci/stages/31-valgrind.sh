#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every C test program of make check under valgrind memcheck: no error and
# no leak (definite or indirect) in the library or the tests.  Automake runs
# tests without an extension through LOG_COMPILER, so valgrind reaches the
# C programs and nothing else; libtool's
# --mode=execute looks through its wrapper scripts, and CK_FORK=no keeps
# each Check program in one process, where valgrind sees all of it.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-valgrind
apt-get install -y -q valgrind >/dev/null

rm -rf "$build"
mkdir -p "$build"
cd "$build"
"$src/configure" -q CFLAGS="-g -O1"
make -j2 >/dev/null
# valgrind 3.19 wants mount(2)'s type to be a string even where the kernel
# ignores it (propagation changes, bind mounts and remounts pass NULL).
cat >sm.supp <<'EOS'
{
   mount-type-may-be-null
   Memcheck:Param
   mount(type)
   fun:mount
   ...
}
EOS
cat >memcheck <<EOS
#!/bin/sh
exec "$build/libtool" --mode=execute valgrind -q --error-exitcode=1 --leak-check=full \\
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \\
	--suppressions="$build/sm.supp" "\$@"
EOS
chmod +x memcheck
# The C programs among the tests: the shell tests run natively in the
# other stages, and would only cost time here.
# shellcheck disable=SC2016 # make expands these, not the shell
printf 'print-c-tests:\n\t@echo $(filter-out %%.sh,$(TESTS))\n' >c-tests.mk
c_tests=$(make -s -f Makefile -f c-tests.mk print-c-tests)
echo "under valgrind: $c_tests"
# valgrind answers cachestat and mincore itself (see tests/test-mounts.c).
SM_TEST_UNDER_VALGRIND=1 CK_FORK=no make -j2 check TESTS="$c_tests" LOG_COMPILER="$build/memcheck" || { cat test-suite.log; exit 1; }
cd / && rm -rf "$build"
