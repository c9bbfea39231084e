#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A project may link libsparse-map.a whole into a shared library of its
# own: libarchive builds libarchive.so and libarchive.a from one list of
# libraries.  So the archive's objects must be position-independent, and
# their thread-local variables of a model a shared library can hold.
# Here abi/archive-wrap.c and the archive (-Wl,--whole-archive) make
# libwrap.so, and a program linked against libwrap.so alone maps a file
# of known layout through it: 1 MiB of data, then a 1 MiB hole.
# libwrap.so must have no text relocations and no initial-exec TLS
# (which i386's linker makes of objects built for executables, where
# x86-64's fails), need no libsparse-map.so, and export none of the
# archive's sm_* names (test-archive-symbols.sh holds them hidden).
# Skipped without readelf, for a build without the archive
# (--disable-static), where it is not ELF, and where the programs CC
# makes do not run here (a cross build).
set -euo pipefail
src=${top_srcdir:?run this test through make check}
build=${top_builddir:?run this test through make check}
# CC and the flags may hold several words (clang -fsanitize=...): unquoted.
cc=${CC:-cc}
cflags=${build_cflags:-}
ldflags=${build_ldflags:-}
fail() {
	echo "FAIL: $*"
	exit 1
}
command -v readelf >/dev/null || { echo "SKIP: readelf is not installed (binutils)"; exit 77; }

# libtool's record of what it built: old_library names the archive, and
# dependency_libs what a link of it needs besides (-lpthread, before glibc 2.34).
la=$build/lib/libsparse-map.la
old=$(sed -n "s/^old_library='\(.*\)'$/\1/p" "$la")
[ -n "$old" ] || { echo "SKIP: no static library in this build (--disable-static)"; exit 77; }
archive=$build/lib/.libs/$old
[ -s "$archive" ] || fail "lib/libsparse-map.la names $old, but there is no $archive"
readelf -h "$archive" >/dev/null 2>&1 || { echo "SKIP: $old is not an archive of ELF objects"; exit 77; }
deplibs=$(sed -n "s/^dependency_libs='\(.*\)'$/\1/p" "$la")

mkdir -p "$build/abi"
d=$(mktemp -d "$build/abi/archive-wrap.XXXXXX")
trap 'rm -rf "$d"' EXIT
# shellcheck disable=SC2086
run_cc() { $cc $cflags "$@" >>"$d/cc.log" 2>&1; }

echo 'int main(void) { return 0; }' >"$d/probe.c"
# shellcheck disable=SC2086
run_cc $ldflags -o "$d/probe" "$d/probe.c" || { cat "$d/cc.log"; fail "$cc cannot build a program"; }
"$d/probe" 2>/dev/null || { echo "SKIP: the programs $cc builds do not run here (a cross build)"; exit 77; }

inc=(-I"$src/include" -I"$build/include")
run_cc -fPIC "${inc[@]}" -c -o "$d/archive-wrap.o" "$src/abi/archive-wrap.c" ||
	{ cat "$d/cc.log"; fail "abi/archive-wrap.c does not compile"; }
# shellcheck disable=SC2086
run_cc $ldflags -shared -Wl,-soname,libwrap.so -o "$d/libwrap.so" "$d/archive-wrap.o" \
	-Wl,--whole-archive "$archive" -Wl,--no-whole-archive $deplibs ||
	{ cat "$d/cc.log"; fail "$old does not link whole into a shared library (are its objects PIC?)"; }
readelf -dW "$d/libwrap.so" >"$d/wrap.dynamic"
! grep -q TEXTREL "$d/wrap.dynamic" ||
	fail "libwrap.so has text relocations: $old's objects are not position-independent"
# Initial-exec TLS (STATIC_TLS) takes the loader's static TLS room, which a
# library loaded by dlopen may find too small (and i386 links it from
# objects built for executables); a shared library's own models need none.
! grep -q STATIC_TLS "$d/wrap.dynamic" ||
	fail "libwrap.so has initial-exec TLS (STATIC_TLS): $old's thread-local variables are not of a shared library's model"
! grep -q 'NEEDED.*libsparse-map' "$d/wrap.dynamic" ||
	fail "libwrap.so needs the shared library: $(grep NEEDED "$d/wrap.dynamic")"
leaked=$(readelf --dyn-syms -W "$d/libwrap.so" | awk '$7 != "UND" && $8 ~ /^sm_/ { printf " %s", $8 }')
[ -z "$leaked" ] || fail "libwrap.so exports the archive's internals:$leaked"

# The soname, -L and -rpath: NEEDED names libwrap.so alone, not the path
# it was linked by, and the loader finds it here.
# shellcheck disable=SC2086
run_cc "${inc[@]}" $ldflags -o "$d/archive-wrap-main" "$src/abi/archive-wrap-main.c" \
	-L"$d" -lwrap -Wl,-rpath,"$d" || { cat "$d/cc.log"; fail "no program links against libwrap.so"; }
readelf -dW "$d/archive-wrap-main" | grep -q 'NEEDED.*\[libwrap\.so\]' ||
	fail "archive-wrap-main does not need libwrap.so by its soname: $(readelf -dW "$d/archive-wrap-main" | grep NEEDED)"

mib=1048576
truncate -s $((2 * mib)) "$d/file"
head -c $mib /dev/zero | tr '\0' d | dd of="$d/file" conv=notrunc status=none
env -u SPARSE_MAP_BACKEND -u SPARSE_MAP_DEBUG "$d/archive-wrap-main" "$d/file" >"$d/out" ||
	fail "archive-wrap-main failed on data [0, 1 MiB), hole [1 MiB, 2 MiB)"
data=$(sed -n 's/^data //p' "$d/out")
hole=$(sed -n 's/^hole //p' "$d/out")
[ "$data" = $mib ] || fail "through libwrap.so, expected $mib data bytes, got '$data'"
# SEEK_HOLE may answer anywhere from the hole to EOF, never inside the data.
if ! [[ $hole =~ ^[0-9]+$ ]] || [ "$hole" -lt $mib ] || [ "$hole" -gt $((2 * mib)) ]; then
	fail "through libwrap.so, expected sparse_map_lseek's first hole in [$mib, $((2 * mib))], got '$hole'"
fi
echo "PASS: $old links whole into libwrap.so, which maps $mib data bytes and a hole at $hole"
