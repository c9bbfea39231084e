#!/bin/sh
# Make ./configure from a git checkout (a release tarball ships it).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
