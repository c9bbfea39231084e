# SPDX-License-Identifier: MIT
# Sourced by .ci/stages/33-m32.sh and 39-s390x.sh: a Linux build for
# another architecture, run natively where the kernel can (i386 on a kernel
# with IA32 emulation) and else under Debian's qemu-user, which passes the
# programs' system calls to this kernel.  What runs: the programs that need
# no Check (Check for another architecture would mean adding it to apt's
# architectures, which changes the machine's package set-up for every later
# stage): tests/test-anywhere, tests/reliability/portable and the examples,
# on tmpfs and on loop-mounted ext4 and XFS, each in a private temporary
# directory that is unmounted and removed however the stage ends.
#
# emulated_stage TRIPLET QEMU: TRIPLET names Debian's cross compiler
# (gcc-TRIPLET) and its sysroot /usr/TRIPLET; QEMU is qemu-user's name for
# the architecture (qemu-QEMU).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/clean-source.sh"

emulated_cleanup() {
	local m
	cd /
	for m in "${emulated_mounts[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$emulated_dir"
}

emulated_stage() {
	local triplet=$1 qemu=$2 sysroot=/usr/$1 build fs img mnt bin
	apt-get install -y -q --no-install-recommends "gcc-$triplet" "libc6-dev-${3:-$qemu}-cross" \
		qemu-user e2fsprogs xfsprogs >/dev/null
	emulated_dir=$(mktemp -d "${TMPDIR:-/tmp}/sm-stage-$qemu.XXXXXX")
	emulated_mounts=()
	trap emulated_cleanup EXIT
	build=$emulated_dir/build
	mkdir -p "$build"
	cd "$build"

	# A static program runs without a loader at the usual path: whether
	# this kernel runs the architecture itself.
	echo 'int main(void) { return 0; }' >probe.c
	"$triplet-gcc" -static probe.c -o probe
	if ./probe 2>/dev/null; then
		emulated_how="natively"
		emulated_run() {
			"$sysroot"/lib/ld-linux*.so.* --library-path "$sysroot/lib:$build/lib/.libs" "$@"
		}
	else
		emulated_how="under qemu-$qemu $(qemu-$qemu --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')"
		emulated_run() {
			"qemu-$qemu" -L "$sysroot" -E LD_LIBRARY_PATH="$build/lib/.libs" "$@"
		}
	fi
	echo "$triplet: runs $emulated_how"

	# Check and FUSE given as found keeps pkg-config from offering the
	# build machine's; nothing built here uses them.
	"$src/configure" -q --host="$triplet" CHECK_CFLAGS=" " CHECK_LIBS=" " \
		FUSE3_CFLAGS=" " FUSE3_LIBS=" " >configure.out 2>&1 || { cat configure.out; exit 1; }
	make -j2 lib/libsparse-map.la examples/sparse-ls examples/sparse-cp tests/test-anywhere \
		tests/reliability/portable >make.out 2>&1 || { cat make.out; exit 1; }
	NM=$triplet-nm "$top/abi/check-exports.sh" lib/.libs/libsparse-map.so "$src/lib/libsparse-map.sym"

	# The demo layout, and one of 4 GiB + 1 MiB with data and holes
	# past 4 GiB (the 16 GiB layout of portable goes further).
	mkdir -p "$emulated_dir/tmpfs" "$emulated_dir/ext4" "$emulated_dir/xfs"
	mount -t tmpfs -o size=256m sm-stage "$emulated_dir/tmpfs"
	emulated_mounts+=("$emulated_dir/tmpfs")
	for fs in ext4 xfs; do
		img=$emulated_dir/$fs.img
		truncate -s 512M "$img"
		"mkfs.$fs" -q "$img"
		mount -o loop "$img" "$emulated_dir/$fs"
		emulated_mounts+=("$emulated_dir/$fs")
	done
	for fs in tmpfs ext4 xfs; do
		mnt=$emulated_dir/$fs
		echo "--- $fs"
		bin=tests/test-anywhere
		[ -f tests/.libs/test-anywhere ] && bin=tests/.libs/test-anywhere
		emulated_run "$bin" "$mnt" | tee anywhere.out
		grep -q '^[0-9]* checks, 0 failed$' anywhere.out || { echo "FAIL: test-anywhere on $fs"; exit 1; }
		emulated_run tests/reliability/.libs/portable "$mnt" | tee portable.out
		grep -q 'all kept the contract' portable.out || { echo "FAIL: portable on $fs"; exit 1; }
		emulated_examples "$mnt" "$fs"
	done
	echo "PASS: $triplet, $emulated_how: test-anywhere, portable, sparse-ls and sparse-cp on tmpfs, ext4 and XFS"
}

# emulated_examples DIR FS: sparse-ls maps the demo layout and a file past
# 4 GiB as they were written (whatever backend AUTO takes, it is printed),
# and sparse-cp copies both exactly.
emulated_examples() {
	local dir=$1 fs=$2 f
	{ yes 'libsparse-map demo' || true; } | head -c 65536 >"$dir/data"
	truncate -s 4M "$dir/demo"
	dd if="$dir/data" of="$dir/demo" bs=64k count=1 conv=notrunc status=none
	dd if="$dir/data" of="$dir/demo" bs=64k seek=16 count=1 conv=notrunc status=none
	truncate -s $((4 * 1024 + 1))M "$dir/big"
	dd if="$dir/data" of="$dir/big" bs=64k count=1 conv=notrunc status=none
	dd if="$dir/data" of="$dir/big" bs=64k seek=$((4 * 16384 + 1)) count=1 conv=notrunc status=none
	cat >ls.want <<'WANT'
demo
  data               0           65536
  hole           65536          983040
  data         1048576           65536
  hole         1114112         3080192
  summary: 131072 data bytes, 4063232 hole bytes, 4 ranges
big
  data               0           65536
  hole           65536      4294967296
  data      4295032832           65536
  hole      4295098368          917504
  summary: 131072 data bytes, 4295884800 hole bytes, 4 ranges
WANT
	: >ls.out
	for f in demo big; do
		(cd "$dir" && emulated_run "$build/examples/.libs/sparse-ls" "$f") >ls.raw
		sed -n '1s/.*backend \([a-z]*\).*/  AUTO took \1/p' ls.raw >&2
		{ echo "$f"; sed 1d ls.raw; } >>ls.out
		emulated_run "$build/examples/.libs/sparse-cp" "$dir/$f" "$dir/$f.copy"
		cmp "$dir/$f" "$dir/$f.copy" || { echo "FAIL: sparse-cp's copy of $f on $fs differs"; exit 1; }
		rm -f "$dir/$f.copy"
	done
	diff -u ls.want ls.out || { echo "FAIL: sparse-ls on $fs"; exit 1; }
	rm -f "$dir/data" "$dir/demo" "$dir/big"
}
