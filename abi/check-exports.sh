#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-exports.sh LIBRARY [SYMBOL-FILE]: whether the shared library LIBRARY
# (ELF, Mach-O or PE) exports exactly the functions of lib/libsparse-map.sym,
# as its loader sees them: an ELF's dynamic symbols, a Mach-O's export trie
# (what dyld binds against; Zig 0.11's linker puts hidden symbols there),
# a DLL's export table.  Make check runs it on the native build; the CI
# stages run it on every build they link (-m32, s390x, Windows, macOS).
# NM, OBJDUMP (for PE) and LLVM_OBJDUMP (for Mach-O) name the tools.
set -euo pipefail
lib=${1:?usage: check-exports.sh LIBRARY [SYMBOL-FILE]}
sym=${2:-$(dirname "$0")/../lib/libsparse-map.sym}
magic=$(od -An -tx1 -N4 "$lib" | tr -d ' \n')
case $magic in
7f454c46)
	format=ELF
	got=$(${NM:-nm} -D --defined-only "$lib" |
		awk '$2 ~ /^[TtWiDdBbRrVv]$/ { sub(/@.*/, "", $3); print $3 }') ;;
cffaedfe | cefaedfe)
	format=Mach-O
	got=$(${LLVM_OBJDUMP:-llvm-objdump} --macho --exports-trie "$lib" |
		awk '/^0x/ { sub(/^_/, "", $2); print $2 }') ;;
4d5a*)
	format=PE
	got=$(${OBJDUMP:-objdump} -p "$lib" |
		sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] //p') ;;
*)
	echo "FAIL: $lib is not an ELF, Mach-O or PE file (starts $magic)"
	exit 1 ;;
esac
want=$(sed -n 's/^[[:space:]]*\(sparse_map_[a-z_]*\);$/\1/p' "$sym" | sort)
got=$(echo "$got" | grep -v '^$' | sort -u || true)
# An ELF also exports its version nodes, as absolute symbols.
[ "$format" = ELF ] && got=$(echo "$got" | grep -v '^SPARSE_MAP_[0-9.]*$' || true)
if [ "$got" != "$want" ]; then
	diff -u <(echo "$want") <(echo "$got") || true
	echo "FAIL: $lib ($format) does not export exactly the functions of libsparse-map.sym"
	exit 1
fi
echo "PASS: $lib ($format) exports the $(echo "$want" | wc -l) functions of libsparse-map.sym"
