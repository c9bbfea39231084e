#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `man 3 NAME` works from an install for every public function.
#
#   man/check-installed.sh MANDIR   check pages installed under MANDIR
#   man/check-installed.sh          install them with `make install-man`
#                                   into a scratch directory, then check
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v man >/dev/null 2>&1; then
	echo "SKIP: man(1) is not installed"
	exit 77
fi

if [ $# -eq 1 ]; then
	mandir=$1
else
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/sm-man-install.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	mandir=$scratch/share/man
	# A make of its own, not part of the make that runs this test.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -s -C "${top_builddir:-.}" \
		install-man mandir="$mandir" >/dev/null
	# man may read pages as its own user.
	chmod -R a+rX "$scratch"
fi

fail=0
symbols=$(sed -n 's/^[[:space:]]*\(sparse_map_[a-z_]*\);.*/\1/p' "$src/lib/libsparse-map.sym")
for name in sparse_map $symbols; do
	# man -w names the page a link page leads to.
	where=$(MANPATH=$mandir man -w 3 "$name" 2>&1) || true
	if [ ! -f "$mandir/man3/$name.3" ] || [ "${where#"$mandir"/man3/}" = "$where" ]; then
		echo "FAIL: man -w 3 $name: $where"
		fail=1
		continue
	fi
	# Rendered, with link pages followed, the page names the function.
	if ! MANPATH=$mandir MANWIDTH=80 man -P cat 3 "$name" 2>/dev/null |
		sed -n '/^NAME/,/^SYNOPSIS/p' | grep -qw "$name"; then
		echo "FAIL: man 3 $name does not show a page that names it"
		fail=1
		continue
	fi
	echo "PASS: man 3 $name"
done
exit "$fail"
