#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer: the first error of either, or a leak, aborts
# the test that met it.  Also the clang build of the project.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-asan
apt-get install -y -q clang libclang-rt-14-dev >/dev/null

rm -rf "$build"
mkdir -p "$build"
cd "$build"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# Exported: the tests that build programs against the library (examples/)
# must link the sanitizers' run-time too.
export CC="clang $san"
"$src/configure" -q CFLAGS="-g -O1"
make -j2 >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
make -j2 check || { cat test-suite.log; exit 1; }
cd / && rm -rf "$build"
