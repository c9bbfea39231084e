#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A downstream project (examples/downstream) builds against an install of
# this tree and runs: `make install DESTDIR=<scratch>`, then its own
# Makefile with nothing but pkg-config pointed at the staged .pc (and
# PKG_CONFIG_SYSROOT_DIR, so its -I and -L land in the scratch tree).  The
# header must compile warning-free as strict C99, the program must load the
# staged library, and its map of a known file must be exact.  Then the same
# with the static archive: linked with `pkg-config --static --libs` between
# -Wl,-Bstatic and -Wl,-Bdynamic, the program must need no libsparse-map.so
# and map the file as exactly.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
# shellcheck source=test-lib.sh
. "${top_srcdir:?run this test through make check}/examples/test-lib.sh"
command -v pkg-config >/dev/null || { echo "SKIP: pkg-config is not installed"; exit 77; }
make=${MAKE:-make}

ex_scratch
d=$EX_SCRATCH
stage=$d/stage

# The parent make's flags (jobserver, command-line variables) are not ours.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$make" -C "$top_builddir" install DESTDIR="$stage" \
	>"$d/install.log" 2>&1 || { cat "$d/install.log"; ex_fail "make install DESTDIR=$stage"; }

mapfile -t pcs < <(find "$stage" -name libsparse-map.pc)
[ "${#pcs[@]}" = 1 ] || ex_fail "expected one installed libsparse-map.pc, found: ${pcs[*]:-none}"
# PKG_CONFIG_LIBDIR too: no .pc from the build machine may stand in.
PKG_CONFIG_PATH=$(dirname "${pcs[0]}")
PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
PKG_CONFIG_SYSROOT_DIR=$stage
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

cflags=$(pkg-config --cflags libsparse-map)
libs=$(pkg-config --libs libsparse-map)
[[ $cflags == *"-I$stage/"* ]] || ex_fail "pkg-config --cflags does not point into the stage: $cflags"
[[ $libs == *"-L$stage/"* ]] || ex_fail "pkg-config --libs does not point into the stage: $libs"
libdir=$(pkg-config --libs-only-L libsparse-map)
libdir=${libdir#-L}
libdir=${libdir%% *}

# The project as its author has it: a copy (the source tree may be read-only).
# build DIR [MAKE-ARGS...]
build() {
	local dir=$1
	shift
	cp -R "$top_srcdir/examples/downstream" "$dir"
	chmod -R u+w "$dir"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$make" -C "$dir" \
		CFLAGS="-std=c99 -pedantic -Wall -Wextra -Werror" "$@" >"$dir.log" 2>&1 ||
		{ cat "$dir.log"; ex_fail "the downstream project does not build in $dir ($*)"; }
}
build "$d/project"

export LD_LIBRARY_PATH=$libdir
if command -v ldd >/dev/null; then
	ldd "$d/project/map-file" >"$d/ldd"
	grep -qF " => $stage/" "$d/ldd" ||
		ex_fail "map-file does not load the staged library: $(cat "$d/ldd")"
fi

# data [0,1M), hole [1M,3M), data [3M,4M), hole [4M,6M); the scan backend
# finds exactly these on any file system.
truncate -s 6M "$d/file"
ex_mkdata "$d/file" 0 1
ex_mkdata "$d/file" 3 1
cat >"$d/want" <<EOT
backend scan
data 0 1048576
hole 1048576 2097152
data 3145728 1048576
hole 4194304 2097152
2097152 data bytes
EOT
# map PROGRAM: its map of the file is the one above.
map() {
	SPARSE_MAP_BACKEND=scan "$1" "$d/file" >"$d/out" || ex_fail "$1 failed"
	diff -u "$d/want" "$d/out" || ex_fail "$1 printed the wrong map"
}
map "$d/project/map-file"
echo "ok: downstream build against the staged install's shared library"

# libtool's record of what it built: old_library names the archive.
archive=$(sed -n "s/^old_library='\(.*\)'$/\1/p" "$top_builddir/lib/libsparse-map.la")
if [ -z "$archive" ]; then
	echo "PASS: downstream build against the staged install (no static library: --disable-static)"
	exit 0
fi
[ -s "$libdir/$archive" ] || ex_fail "make install staged no $libdir/$archive"
static_libs=$(pkg-config --static --libs libsparse-map)
[[ $static_libs == *"-L$stage/"* ]] || ex_fail "pkg-config --static --libs does not point into the stage: $static_libs"
# Only this library static: libc stays shared, as gcc adds it after -Bdynamic.
build "$d/static" SM_LIBS="-Wl,-Bstatic $static_libs -Wl,-Bdynamic"
unset LD_LIBRARY_PATH
if command -v readelf >/dev/null; then
	readelf -d "$d/static/map-file" >"$d/dynamic"
	! grep -q 'NEEDED.*libsparse-map' "$d/dynamic" ||
		ex_fail "the static build of map-file needs the shared library: $(grep NEEDED "$d/dynamic")"
fi
map "$d/static/map-file"
echo "PASS: downstream builds against the staged install, shared and with $archive"
