#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Windows build (lib/sys-windows.c): mingw-w64 cross-compiles the DLL,
# the examples and tests/test-anywhere, and wine runs them.
#  - The DLL exports exactly lib/libsparse-map.sym's functions.
#  - test-anywhere: RANGES through the seam, SCAN and sparse_map_lseek on a
#    real file with the file offset kept, the access mode without fcntl,
#    text mode, and wine's own answers (FSCTL_QUERY_ALLOCATED_RANGES
#    refused, so AUTO takes SCAN).
#  - sparse-ls.exe maps the demo layout; sparse-cp.exe copies it exactly.
# No pkg-config answers for the cross build: Linux's Check and FUSE are no
# use to it, so configure leaves the Check tests out.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-windows
host=x86_64-w64-mingw32
apt-get install -y -q gcc-mingw-w64-x86-64 wine wine64 >/dev/null

rm -rf "$build"
mkdir -p "$build"
cd "$build"
PKG_CONFIG_LIBDIR=/nonexistent "$src/configure" -q --host=$host 2>&1 |
	grep -v -e 'cross tools not prefixed' -e 'Check (check' || true
grep -q 'system layer: lib/sys-windows.c' config.log ||
	{ echo "FAIL: configure did not pick the Windows layer"; exit 1; }
make -j2 >/dev/null
make -j2 tests/test-anywhere.exe >/dev/null
dll=lib/.libs/libsparse-map-0.dll
for f in "$dll" lib/.libs/libsparse-map.dll.a examples/.libs/sparse-ls.exe \
	examples/.libs/sparse-cp.exe tests/.libs/test-anywhere.exe; do
	[ -s "$f" ] || { echo "FAIL: the build made no $f"; exit 1; }
done

OBJDUMP=$host-objdump "$top/abi/check-exports.sh" "$dll" "$src/lib/libsparse-map.sym"

export WINEPREFIX=$build/wine-prefix WINEDEBUG=-all
winpath() { printf 'Z:%s' "${1//\//\\}"; }
export WINEPATH
WINEPATH=$(winpath "$build/lib/.libs")
# The first run makes the prefix; its complaints about 32-bit wine are noise.
wine cmd /c exit >/dev/null 2>&1 || true

mkdir -p scratch
wine tests/.libs/test-anywhere.exe "$(winpath "$build/scratch")" | tr -d '\r' | tee anywhere.out
grep -q '^windows (wine): [0-9]* checks, 0 failed$' anywhere.out ||
	{ echo "FAIL: test-anywhere under wine"; exit 1; }

# make demo's file: 64 KiB of data, a hole, 64 KiB at 1 MiB, a hole to 4 MiB.
sh "$src/examples/make-demo.sh" demo.img
wine examples/.libs/sparse-ls.exe demo.img | tr -d '\r' | tee ls.out
cat >ls.want <<'EOF'
demo.img: backend scan, size 4194304
  data               0           65536
  hole           65536          983040
  data         1048576           65536
  hole         1114112         3080192
  summary: 131072 data bytes, 4063232 hole bytes, 4 ranges
EOF
diff -u ls.want ls.out || { echo "FAIL: sparse-ls.exe under wine"; exit 1; }
wine examples/.libs/sparse-cp.exe demo.img copy.img
cmp demo.img copy.img || { echo "FAIL: sparse-cp.exe's copy differs"; exit 1; }
echo "PASS: sparse-ls.exe and sparse-cp.exe under wine"
cd / && rm -rf "$build"
