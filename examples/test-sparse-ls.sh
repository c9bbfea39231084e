#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sparse-ls: the map it prints matches files of known layout (exactly with
# the scan backend, which needs no file system support), its summary adds
# up, --json is one valid document even with odd file names and errors, and
# a FILE it cannot map gets one line on stderr while the rest are listed.
# shellcheck disable=SC2016 # jq filters name jq variables ($M)
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=test-lib.sh
. "${top_srcdir:?run this test through make check}/examples/test-lib.sh"
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

ex_scratch
d=$EX_SCRATCH
M=1048576

# holes: data [0,1M), hole [1M,3M), data [3M,4M), hole [4M,6M).
truncate -s 6M "$d/holes"
ex_mkdata "$d/holes" 0 1
ex_mkdata "$d/holes" 3 1
# zeroes: data [0,1M), written zeroes [1M,2M), data [2M,3M).
ex_mkdata "$d/zeroes" 0 1
dd if=/dev/zero of="$d/zeroes" bs=1M seek=1 count=1 conv=notrunc status=none
ex_mkdata "$d/zeroes" 2 1
: >"$d/empty"

# Whitespace-insensitive: the columns may be widened.
squeeze() { awk '{ $1 = $1; print }'; }

# The exact text map, from the backend that reads the bytes.
"$ex_ls" --backend=scan "$d/holes" | squeeze >"$d/out"
cat >"$d/want" <<EOT
$d/holes: backend scan, size 6291456
data 0 1048576
hole 1048576 2097152
data 3145728 1048576
hole 4194304 2097152
summary: 2097152 data bytes, 4194304 hole bytes, 4 ranges
EOT
diff -u "$d/want" "$d/out" || ex_fail "sparse-ls --backend=scan: wrong map"

"$ex_ls" "$d/empty" | squeeze >"$d/out"
printf '%s\n' "$d/empty: backend seek, size 0" "summary: 0 data bytes, 0 hole bytes, 0 ranges" >"$d/want"
# The empty file's backend is whatever the build has first; compare the rest.
sed -i '1s/backend [a-z]*,/backend seek,/' "$d/out"
diff -u "$d/want" "$d/out" || ex_fail "sparse-ls on an empty file"

# jq: the ranges of file $i tile [0, size), neighbours differ in kind, and
# the summary matches them.
tiles='def tiles: .ranges as $r | ($r | length) as $n
	| ([range(0; $n)] | all(. as $i
		| $r[$i].length > 0
		and $r[$i].offset == (if $i == 0 then 0 else $r[$i-1].offset + $r[$i-1].length end)
		and ($i == 0 or $r[$i].kind != $r[$i-1].kind)))
	and ([$r[].length] | add // 0) == .size
	and ([$r[] | select(.kind == "data") | .length] | add // 0) == .data_bytes
	and .data_bytes + .hole_bytes == .size
	and .range_count == $n;
	def within($k; $a; $b): any(.ranges[]; .kind == $k and .offset <= $a and .offset + .length >= $b);'

# json_check FILE-INDEX FILTER ARGS...: the filter holds for that file's entry.
json_check() {
	local i=$1 filter=$2
	shift 2
	jq -e --argjson M "$M" "$tiles .files[$i] | $filter" "$d/json" >/dev/null ||
		ex_fail "sparse-ls --json $*: expected $filter, got: $(cat "$d/json")"
}

for opts in "" --sync --verify "--sync --verify" --backend=scan; do
	# shellcheck disable=SC2086 # opts is a list of options
	"$ex_ls" --json $opts "$d/holes" >"$d/json"
	json_check 0 'tiles and .size == 6*$M and within("data"; 0; $M) and within("data"; 3*$M; 4*$M)' "$opts"
done
"$ex_ls" --json --backend=scan "$d/holes" >"$d/json"
json_check 0 '.backend == "scan" and .range_count == 4 and within("hole"; $M; 3*$M) and within("hole"; 4*$M; 6*$M)' --backend=scan

# --backend=none: no hole information, so one range of data.
"$ex_ls" --backend=none "$d/holes" | squeeze >"$d/out"
cat >"$d/want" <<EOT
$d/holes: backend none, size 6291456
data 0 6291456
summary: 6291456 data bytes, 0 hole bytes, 1 ranges
EOT
diff -u "$d/want" "$d/out" || ex_fail "sparse-ls --backend=none: wrong map"

# --no-read reads no byte of the file.  SPARSE_MAP_BACKEND=scan would read
# it all; under --no-read it gives way to AUTO's choice, which reads nothing
# (on ramfs that may be scan, reading nothing: left out there).  And reads
# move the atime where the mount says relatime and the atime is older than
# the mtime: it must not move under --no-read.
if [ "$(stat -f -c %T "$d")" != ramfs ]; then
	SPARSE_MAP_BACKEND=scan "$ex_ls" --json "$d/holes" >"$d/json"
	json_check 0 'tiles and .backend == "scan"' "(SPARSE_MAP_BACKEND=scan)"
	SPARSE_MAP_BACKEND=scan "$ex_ls" --json --no-read "$d/holes" >"$d/json"
	json_check 0 'tiles and .backend != "scan" and within("data"; 0; $M) and within("data"; 3*$M; 4*$M)' \
		"--no-read (SPARSE_MAP_BACKEND=scan)"
fi
touch -a -d '2000-01-01 00:00:00' "$d/holes"
atime=$(stat -c %X "$d/holes")
SPARSE_MAP_BACKEND=scan "$ex_ls" --no-read --backend=auto "$d/holes" >/dev/null ||
	ex_fail "sparse-ls --no-read failed"
[ "$(stat -c %X "$d/holes")" = "$atime" ] || ex_fail "sparse-ls --no-read read the file: its atime moved"
SPARSE_MAP_BACKEND=scan "$ex_ls" "$d/holes" >/dev/null
if [ "$(stat -c %X "$d/holes")" = "$atime" ]; then
	echo "note: reads do not move the atime here, so that check proved nothing"
fi
# What only reading can do is refused under --no-read: exit 1, one line.
for opts in "--no-read --verify" "--no-read --zeroes" "--no-read --backend=scan"; do
	rc=0
	# shellcheck disable=SC2086 # opts is a list of options
	"$ex_ls" $opts "$d/holes" >/dev/null 2>"$d/err" || rc=$?
	if [ "$rc" != 1 ] || ! grep -q 'Invalid argument' "$d/err"; then
		ex_fail "sparse-ls $opts: expected exit 1 and EINVAL, got $rc: $(cat "$d/err")"
	fi
done

# Written zeroes are data, unless --zeroes (or the scan backend) says otherwise.
"$ex_ls" --json "$d/zeroes" >"$d/json"
json_check 0 'tiles and (.backend == "scan" or within("data"; 0; 3*$M))' "(no --zeroes)"
"$ex_ls" --json --zeroes "$d/zeroes" >"$d/json"
json_check 0 'tiles and within("data"; 0; $M) and within("data"; 2*$M; 3*$M) and within("hole"; $M; 2*$M)' --zeroes
json_check 0 '.backend == "scan" or any(.ranges[]; .kind == "hole" and .flags == ["zeroes"])' --zeroes

# A file name that is not plain text is still valid JSON (bytes that are
# not UTF-8 become U+FFFD) and comes back as it was otherwise.
odd=$'q"uote\\back\ttab\x01ctl\xffbad-\xc3\xa9'
cp "$d/holes" "$d/$odd"
"$ex_ls" --json "$d/$odd" "$d/holes" >"$d/json"
got=$(jq -r '.files[0].file' "$d/json") || ex_fail "sparse-ls --json: invalid JSON for an odd file name: $(cat "$d/json")"
[ "$got" = "$d/"$'q"uote\\back\ttab\x01ctl\xef\xbf\xbdbad-\xc3\xa9' ] || ex_fail "sparse-ls --json: file name came back as '$got'"
json_check 0 'tiles' "(odd name)"
json_check 1 'tiles and (.file | endswith("/holes"))' "(second file)"

# Errors: one line each on stderr, the other files still listed, exit 1.
mkdir "$d/dir"
mkfifo "$d/fifo"
rc=0
"$ex_ls" "$d/missing" "$d/holes" "$d/dir" "$d/fifo" "$d/zeroes" >"$d/out" 2>"$d/err" || rc=$?
[ "$rc" = 1 ] || ex_fail "sparse-ls with failing files: exit status $rc, expected 1"
mapfile -t err <"$d/err"
[ "${#err[@]}" = 3 ] || ex_fail "expected 3 error lines, got: $(cat "$d/err")"
[[ ${err[0]} == "sparse-ls: $d/missing: "?* ]] || ex_fail "missing file: '${err[0]}'"
[[ ${err[1]} == "sparse-ls: $d/dir: "?* ]] || ex_fail "directory: '${err[1]}'"
[[ ${err[2]} == "sparse-ls: $d/fifo: "?* ]] || ex_fail "FIFO: '${err[2]}'"
[ "$(grep -c '^  summary:' "$d/out")" = 2 ] || ex_fail "expected the maps of the 2 good files: $(cat "$d/out")"
grep -q "^$d/zeroes: backend" "$d/out" || ex_fail "the file after the errors was not listed"

rc=0
"$ex_ls" --json "$d/missing" "$d/holes" "$d/dir" "$d/fifo" >"$d/json" 2>"$d/err" || rc=$?
[ "$rc" = 1 ] || ex_fail "sparse-ls --json with failing files: exit status $rc"
[ "$(wc -l <"$d/err")" = 3 ] || ex_fail "--json: expected 3 error lines, got: $(cat "$d/err")"
jq -e '[.files[] | has("error")] == [true, false, true, true]' "$d/json" >/dev/null ||
	ex_fail "--json with errors: $(cat "$d/json")"
json_check 1 'tiles' "(good file among errors)"

# Usage.
"$ex_ls" --help | grep -q '^Usage: sparse-ls' || ex_fail "--help"
rc=0; "$ex_ls" --backend=nonesuch "$d/holes" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || ex_fail "--backend=nonesuch: exit status $rc, expected 2"
rc=0; "$ex_ls" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || ex_fail "no FILE: exit status $rc, expected 2"
echo "PASS: sparse-ls"
