#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The libFuzzer target (tests/reliability/fuzz-ops.c) for 60 seconds, with
# AddressSanitizer and UndefinedBehaviorSanitizer, from the seed corpus, on a
# file in the build directory (a disk file system: SEEK and FIEMAP both
# serve it).  A crash fails the stage; copy the crash-* file it names into
# tests/reliability/corpus/, where every make check replays it.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-fuzz
apt-get install -y -q clang libclang-rt-14-dev >/dev/null

rm -rf "$build"
mkdir -p "$build/corpus" "$build/files"
cd "$build"
"$src/configure" -q CC=clang
san="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
# The library's sources, with Linux's system layer only (lib/sys-<system>.c).
mapfile -t lib_sources < <(printf '%s\n' "$src"/lib/*.c | grep -v '/sys-[a-z]*\.c$')
lib_sources+=("$src/lib/sys-linux.c")
# shellcheck disable=SC2086
clang -g -O1 $san -DHAVE_CONFIG_H -I. -Iinclude -I"$src/include" -I"$src/lib" -I"$src/tests" \
	-o fuzz-ops "$src"/tests/reliability/fuzz-ops.c "$src"/tests/reliability/bytes.c \
	"$src"/tests/helpers.c "${lib_sources[@]}"
ASAN_OPTIONS=detect_leaks=1 SM_FUZZ_DIR=$build/files \
	./fuzz-ops -max_total_time="${SM_FUZZ_SECONDS:-60}" -timeout=20 -rss_limit_mb=1024 \
	-max_len=512 -print_final_stats=1 -artifact_prefix="$build/" \
	corpus "$src/tests/reliability/corpus"
echo "fuzzing: no crash; $(find corpus -type f | wc -l) new inputs in the working corpus"
rm -rf "$build"
