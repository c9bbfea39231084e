#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI of the built library against the released one kept in
# abi/libsparse-map.abi (abidw, from libabigail):
#  - a symbol removed, or a public type or function changed: FAIL, with
#    abidiff's report;
#  - only new symbols, each in a version node the baseline does not have
#    (lib/libsparse-map.sym): PASS, and a reminder to regenerate the
#    baseline when the new node is released;
#  - a new symbol in a node the baseline already has: FAIL (released nodes
#    are never edited).
# Skipped (77) without abidw/abidiff, without a shared library, without
# debug info (-g), or on an architecture other than the baseline's.
#
#   abi/check-abi.sh                 the check (make check runs it)
#   abi/check-abi.sh --write FILE    write the built library's ABI to FILE
#                                    (make abi-baseline)
#   SM_ABI_LIB=FILE abi/check-abi.sh check FILE instead of the built library
#                                    (abi/test-check-abi.sh does)
set -euo pipefail

src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
build=${top_builddir:-$PWD}
baseline=$src/abi/libsparse-map.abi
lib=${SM_ABI_LIB:-$build/lib/.libs/libsparse-map.so}

for tool in abidw abidiff readelf; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed (abigail-tools, binutils)"
		exit 77
	fi
done
if [ ! -e "$lib" ]; then
	echo "SKIP: no shared library at $lib (a --disable-shared build?)"
	exit 77
fi
lib=$(readlink -f "$lib")
# Not grep -q: it could stop reading early, and readelf's SIGPIPE would fail
# the pipe.
if ! readelf -S "$lib" | grep '\.debug_info' >/dev/null; then
	echo "SKIP: $lib has no debug info (built without -g), so its types cannot be compared"
	exit 77
fi

# The one way this project describes an ABI: public types only (those the
# installed header declares), no build paths, no line numbers (the header
# may gain comments), type ids from a hash (a stable file to diff).
abi_of() {
	abidw --headers-dir "$src/include" --drop-private-types --drop-undefined-syms --exported-interfaces-only \
		--no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash \
		--out-file "$2" "$1"
}

if [ "${1:-}" = --write ]; then
	[ $# = 2 ] || { echo "usage: $0 --write FILE" >&2; exit 2; }
	abi_of "$lib" "$2"
	echo "wrote the ABI of $lib to $2"
	exit 0
fi
[ -r "$baseline" ] || { echo "FAIL: no baseline at $baseline"; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sm-abi.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
abi_of "$lib" "$scratch/built.abi"

arch_of() { sed -n "s/.*<abi-corpus [^>]*architecture='\([^']*\)'.*/\1/p" "$1" | head -n1; }
want_arch=$(arch_of "$baseline")
got_arch=$(arch_of "$scratch/built.abi")
if [ "$want_arch" != "$got_arch" ]; then
	echo "SKIP: the baseline is for $want_arch, this build is $got_arch"
	exit 77
fi

rc=0
abidiff "$baseline" "$scratch/built.abi" >"$scratch/report" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
	echo "PASS: the ABI of $(basename "$lib") is the baseline's ($(basename "$baseline"))"
	exit 0
fi
cat "$scratch/report"
# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 ABI
# change, 8 incompatible ABI change.
if [ $((rc & 3)) != 0 ]; then
	echo "FAIL: abidiff could not compare (exit status $rc)"
	exit 1
fi
if [ $((rc & 8)) != 0 ]; then
	echo "FAIL: incompatible ABI change against $baseline (abidiff exit status $rc)"
	echo "      Removing or changing a released symbol or type breaks every program built against it."
	exit 1
fi

# A change, not an incompatible one: pass only if it is new symbols alone.
rc2=0
abidiff --no-added-syms "$baseline" "$scratch/built.abi" >"$scratch/report2" 2>&1 || rc2=$?
if [ "$rc2" != 0 ]; then
	echo "FAIL: a released function or type changed (abidiff exit status $rc), not only new"
	echo "      symbols.  abidiff cannot prove every such change harmless (a struct that grows"
	echo "      breaks callers), so a person decides: see HACKING, changing the API."
	exit 1
fi
# New symbols name their version node, as {name@@NODE} in the report.
mapfile -t old_nodes < <(sed -n "s/.*<elf-symbol [^>]* version='\([^']*\)'.*/\1/p" "$baseline" | sort -u)
[ "${#old_nodes[@]}" -gt 0 ] || { echo "FAIL: no symbol versions in $baseline"; exit 1; }
bad=0
while read -r sym node; do
	for old in "${old_nodes[@]}"; do
		if [ "$node" = "$old" ]; then
			echo "FAIL: new symbol $sym is in the released node $node; put it in a new node"
			bad=1
		fi
	done
done < <(sed -n 's/.*{\([A-Za-z0-9_]*\)@@\([A-Za-z0-9_.]*\)}.*/\1 \2/p' "$scratch/report")
[ "$bad" = 0 ] || exit 1
echo "PASS: new symbols only, in new version nodes; once they are released, run"
echo "      make abi-baseline (HACKING: changing the API)"
