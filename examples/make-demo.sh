#!/bin/sh
# SPDX-License-Identifier: MIT
# Make the demo file: 4 MiB, 64 KiB of data at 0 and 64 KiB at 1 MiB, holes
# between and after.  `make demo` shows its map, and the man pages' examples
# show what they print on it (man/run-examples.sh checks that they do), so
# the layout lives here once.
#
#   examples/make-demo.sh FILE
set -eu
[ $# -eq 1 ] || { echo "usage: $0 FILE" >&2; exit 2; }
rm -f "$1" "$1.data"
{ yes 'libsparse-map demo' || true; } | head -c 65536 > "$1.data"	# yes dies of SIGPIPE
truncate -s 4M "$1"
dd if="$1.data" of="$1" bs=64k count=1 conv=notrunc status=none
dd if="$1.data" of="$1" bs=64k count=1 seek=16 conv=notrunc status=none
rm -f "$1.data"
