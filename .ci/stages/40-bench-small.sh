#!/usr/bin/env bash
# The benchmark in its small form (seconds), so that it cannot rot: built and
# run in the tree that .ci/run has just built in place.  Its numbers are
# printed, never judged here; the stage fails only if the benchmark cannot
# run (a map error, a tool that fails, a copy that differs).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -j2 bench BENCH_FLAGS=--small
