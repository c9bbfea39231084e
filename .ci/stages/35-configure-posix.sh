#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The generic system layer (--with-platform=posix, lib/sys-posix.c) on
# Linux: the whole suite, less what only Linux's layer can do (ramfs,
# cachestat, unsynced FIEMAP), which those tests skip.  A stage of its own
# so that .ci/run can run it in the other lane from the rest of stage 35.
set -euo pipefail
. "$(dirname "$0")/../variant.sh"
variant posix "-g -O2" all --with-platform=posix
