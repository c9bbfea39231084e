#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# abi/check-abi.sh must tell an incompatible change from a compatible one.
# From the objects of the built library, link three altered copies and
# check each:
#  - sparse_map_seek left out of the version script: FAIL (incompatible);
#  - a new function in a new node after the last: PASS;
#  - the same function put in the released node SPARSE_MAP_1.0: FAIL.
# Skipped where check-abi.sh itself would skip (no abigail-tools, no -g).
set -euo pipefail
src=${top_srcdir:?run this test through make check}
build=${top_builddir:?run this test through make check}
# CC may carry flags ("clang -fsanitize=..."), as make passes it.
read -ra cc <<<"${CC:-cc}"

for tool in abidw abidiff readelf; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed"; exit 77; }
done
mapfile -t objs < <(find "$build/lib/.libs" -maxdepth 1 -name 'libsparse_map_la-*.o' | sort)
[ "${#objs[@]}" -gt 0 ] || { echo "SKIP: no shared objects of the library in $build/lib/.libs"; exit 77; }
readelf -S "${objs[0]}" | grep '\.debug_info' >/dev/null || { echo "SKIP: the library is built without -g"; exit 77; }

# Where the check cannot run on the built library (another architecture
# than the baseline's, say), it cannot be tested either.
rc=0
out=$(bash "$src/abi/check-abi.sh" 2>&1) || rc=$?
if [ "$rc" = 77 ]; then
	echo "$out"
	exit 77
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sm-abi-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# link NAME SYMFILE [EXTRA_OBJECT]: the library's objects under SYMFILE.
link() {
	mkdir -p "$scratch/$1"
	"${cc[@]}" -shared -g -o "$scratch/$1/libsparse-map.so" -Wl,-soname,libsparse-map.so.0 \
		-Wl,--version-script="$2" "${objs[@]}" "${@:3}" ||
		fail "cannot link the $1 copy"
}
# expect NAME STATUS PATTERN: check-abi.sh on the NAME copy exits STATUS
# and says PATTERN.
expect() {
	local rc=0
	SM_ABI_LIB=$scratch/$1/libsparse-map.so bash "$src/abi/check-abi.sh" >"$scratch/$1.out" 2>&1 || rc=$?
	if [ "$rc" != "$2" ] || ! grep -q "$3" "$scratch/$1.out"; then
		cat "$scratch/$1.out"
		fail "$1: check-abi.sh exited $rc (wanted $2) without saying '$3'"
	fi
	echo "ok: $1: $(grep -m1 "$3" "$scratch/$1.out")"
}

# The unaltered objects pass (before a release, with the nodes the baseline
# does not have yet): the copies below differ from the built library only
# where the case says.
link same "$src/lib/libsparse-map.sym"
expect same 0 "^PASS: \(the ABI\|new symbols only\)"
last_node=$(sed -n 's/^\(SPARSE_MAP_[0-9.]*\) {.*/\1/p' "$src/lib/libsparse-map.sym" | tail -n 1)

sed '/sparse_map_seek;/d' "$src/lib/libsparse-map.sym" >"$scratch/removed.sym"
link removed "$scratch/removed.sym"
expect removed 1 "^FAIL: incompatible ABI change"

printf 'int sparse_map_added(void);\nint sparse_map_added(void) { return 1; }\n' >"$scratch/added.c"
"${cc[@]}" -c -g -fPIC -o "$scratch/added.o" "$scratch/added.c"
{ cat "$src/lib/libsparse-map.sym"
  printf 'SPARSE_MAP_99.0 {\nglobal:\n\tsparse_map_added;\n} %s;\n' "$last_node"; } >"$scratch/new-node.sym"
link new-node "$scratch/new-node.sym" "$scratch/added.o"
expect new-node 0 "^PASS: new symbols only"

sed 's/^\tsparse_map_lseek;/&\n\tsparse_map_added;/' "$src/lib/libsparse-map.sym" >"$scratch/old-node.sym"
grep -q sparse_map_added "$scratch/old-node.sym" || fail "could not add a symbol to the 1.0 node"
link old-node "$scratch/old-node.sym" "$scratch/added.o"
expect old-node 1 "^FAIL: new symbol sparse_map_added is in the released node SPARSE_MAP_1.0"
echo "PASS: check-abi.sh fails on a removed symbol and on an edited node, passes a new node"
