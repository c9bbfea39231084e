#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# GNU cp and GNU tar's own sparse tests, unpatched and with lseek made
# sparse_map_lseek, on ext4, XFS, Btrfs, tmpfs and ramfs: the library
# built from a clean copy of the sources, then `make check-downstream`
# (tests/downstream/run.sh says what it proves).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/.ci/clean-source.sh"
# What the two suites need beyond the library's own packages.
apt-get install -y -q dpkg-dev perl python3 valgrind >/dev/null
build=$(mktemp -d "${TMPDIR:-/tmp}/sm-downstream-build.XXXXXX")
trap 'rm -rf "$build"' EXIT
cd "$build"
"$src/configure" -q
make -j2 >/dev/null
make check-downstream
