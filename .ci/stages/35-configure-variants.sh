#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds that stand in for platforms without FIEMAP (--disable-fiemap) and
# without SEEK_DATA/SEEK_HOLE (--disable-seek): AUTO must fall back, forced
# backends must say EOPNOTSUPP, and the whole test suite must pass.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"

for variant in --disable-fiemap --disable-seek; do
	build=${TMPDIR:-/tmp}/sm-stage-variant$variant
	rm -rf "$build"
	mkdir -p "$build"
	cd "$build"
	"$src/configure" -q "$variant"
	make -j2 >/dev/null
	make -j2 check || { cat test-suite.log; exit 1; }
	cd / && rm -rf "$build"
done
