#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages (debian/), as a distribution would build them:
#  1. `dpkg-buildpackage -us -uc -b` from a clean export of the tracked
#     files (dh runs autoreconf, configure, make check as a normal user
#     would, and dpkg-gensymbols -c4 holds the exports to the symbols file);
#  2. the release tarball from `make dist` as the .orig.tar.xz of a source
#     package;
#  3. lintian on both, failing on any error or warning not overridden;
#  4. the packages installed, and debian/tests run against them by
#     autopkgtest; sparse-map-tools installed beside them, and the
#     installed sparse-map command run: its version, a map, its man page;
#     then all purged, so that later stages see no installed copy.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/.ci/clean-source.sh"
apt-get install -y -q debhelper dpkg-dev lintian autopkgtest >/dev/null

version=$(sed -n '1s/^libsparse-map (\([^)]*\)).*/\1/p' "$top/debian/changelog")
upstream=${version%-*}
release=$(sed -n 's/^m4_define(\[sm_\(major\|minor\|micro\)\], \[\([0-9]*\)\]).*/\2/p' "$top/configure.ac" | paste -sd.)
if [ "$upstream" != "$release" ]; then
	echo "FAIL: debian/changelog packages $upstream, configure.ac is release $release"
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sm-debian.XXXXXX")
installed=
cleanup() {
	if [ -n "$installed" ]; then
		# Only the packages dpkg has: apt-get purge refuses a name it does
		# not know, and would then purge none of them.
		local pkgs
		pkgs=$(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' \
			sparse-map-tools libsparse-map-dev libsparse-map0 2>/dev/null | awk '$1 !~ /^.n/ { print $2 }')
		# shellcheck disable=SC2086
		[ -z "$pkgs" ] || apt-get purge -y -q $pkgs >/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"	# lintian runs as nobody

# 1. Binary packages from a clean export.
mkdir -p "$work/bin/libsparse-map-$upstream"
(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$work/bin/libsparse-map-$upstream")
(cd "$work/bin/libsparse-map-$upstream" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
	{ tail -n 200 "$work/build.log"; echo "FAIL: dpkg-buildpackage -b"; exit 1; }
sed -n 's/^# \(TOTAL\|PASS\|SKIP\|FAIL\|ERROR\): */package build tests, \1: /p' "$work/build.log"

# 2. The release tarball as the source package's .orig.tar.xz.
mkdir "$work/dist" "$work/src"
(cd "$work/dist" && "$src/configure" -q && make -s dist-xz) >"$work/dist.log" 2>&1 ||
	{ cat "$work/dist.log"; echo "FAIL: make dist"; exit 1; }
cp "$work/dist/libsparse-map-$upstream.tar.xz" "$work/src/libsparse-map_$upstream.orig.tar.xz"
tar -C "$work/src" -xJf "$work/src/libsparse-map_$upstream.orig.tar.xz"
if [ -e "$work/src/libsparse-map-$upstream/debian" ]; then
	echo "FAIL: the release tarball carries debian/; a distribution brings its own"
	exit 1
fi
cp -R "$top/debian" "$work/src/libsparse-map-$upstream/"
(cd "$work/src/libsparse-map-$upstream" && dpkg-source -b .) >"$work/source.log" 2>&1 ||
	{ cat "$work/source.log"; echo "FAIL: dpkg-source -b on the release tarball"; exit 1; }

# 3. lintian, as a normal user (it warns against root).
# (From $work: nobody may not be able to enter the checkout, a clone in a
# mktemp -d directory, say.)
chmod -R a+rX "$work"
cd "$work"
runuser -u nobody -- lintian --fail-on error,warning --display-info \
	"$work/bin/libsparse-map_${version}_"*.changes "$work/src/libsparse-map_$version.dsc"
echo "lintian: no error or warning that debian/*.lintian-overrides does not justify"

# 4. The packages installed, and debian/tests run against them.
installed=1
autopkgtest --output-dir "$work/autopkgtest" "$work/bin/libsparse-map0_${version}_"*.deb \
	"$work/bin/libsparse-map-dev_${version}_"*.deb "$work/src/libsparse-map-$upstream" -- null ||
	{ cat "$work/autopkgtest/"build-std* 2>/dev/null; echo "FAIL: autopkgtest (debian/tests)"; exit 1; }
echo "autopkgtest: debian/tests passed against the installed packages"

# 5. sparse-map-tools installed, with the libsparse-map0 it links, and the
# installed command run as a user runs it: it says the packaged version, it
# maps a sparse file (64 KiB written at 0, then a hole to 4 MiB), and its
# man page renders without a warning.
apt-get install -y -q "$work/bin/libsparse-map0_${version}_"*.deb \
	"$work/bin/sparse-map-tools_${version}_"*.deb >/dev/null
[ "$(command -v sparse-map)" = /usr/bin/sparse-map ] ||
	{ echo "FAIL: sparse-map-tools put no /usr/bin/sparse-map on PATH ($(command -v sparse-map || true))"; exit 1; }
said=$(sparse-map --version | sed -n 1p)
if [ "${said##* }" != "$upstream" ]; then
	echo "FAIL: sparse-map --version says '$said', the package is $upstream"
	exit 1
fi
mkdir "$work/smoke"
f=$work/smoke/file
truncate -s 4M "$f"
dd if=/dev/urandom of="$f" bs=64K count=1 conv=notrunc status=none
rc=0
sparse-map map "$f" >"$work/smoke/out" || rc=$?
# A range's line is OFFSET LENGTH KIND...  The file system may keep more
# than the 64 KiB written as data, but the data starts at 0 and the hole
# after it runs to the end of the file.
ranges=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $3, $1, $2 }' "$work/smoke/out")
data=$(sed -n '1s/^data 0 \([0-9]*\)$/\1/p' <<<"$ranges")
if [ "$rc" != 0 ] || [ -z "$data" ] || [ "$data" -lt 65536 ] || [ "$data" -ge 4194304 ] ||
	[ "$ranges" != "$(printf 'data 0 %s\nhole %s %s' "$data" "$data" $((4194304 - data)))" ]; then
	cat "$work/smoke/out"
	echo "FAIL: sparse-map map (status $rc): want data from 0 (64 KiB or more), then a hole to 4 MiB"
	exit 1
fi
where=$(man -w 1 sparse-map) || { echo "FAIL: man -w 1 sparse-map: no installed page"; exit 1; }
if ! out=$(MANWIDTH=80 MAN_KEEP_FORMATTING='' man --warnings=w -P cat 1 sparse-map 2>&1 >"$work/smoke/page") ||
	[ -n "$out" ] || ! grep -q '^NAME' "$work/smoke/page"; then
	printf 'FAIL: man 1 sparse-map (%s):\n%s\n' "$where" "$out"
	exit 1
fi
echo "sparse-map-tools: '$said'; sparse-map map: data [0,$data), then a hole; man 1 sparse-map renders"
