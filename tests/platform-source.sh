#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What differs between systems lives in lib/sys-<system>.c (and Linux's
# FIEMAP in lib/backend-fiemap.c), so that the rest of lib/ compiles on any
# POSIX system.  Fails where another file of lib/ names something only some
# systems have, or where a system's file lacks a required entry of its
# table (struct sm_os).
set -euo pipefail
src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src/lib"
fail=0

# name|pattern|files allowed to use it
rules=(
	'EBADR (Linux only)|\bEBADR\b|backend-fiemap.c'
	'<linux/...> headers|#include <linux/|sys-linux.c backend-fiemap.c sys.c'
	'block-device size ioctls|BLKGETSIZE|DIOCGMEDIASIZE|DKIOC|sys-linux.c sys-freebsd.c sys-darwin.c sys-illumos.c'
	'raw system calls|\bsyscall\(|__NR_|sys-linux.c'
	'fstatfs|(^|[[:space:]=!(])fstatfs\(|sys-linux.c'
	'uname(2), whose release means something only to the Linux layer|(^|[[:space:]=!(])uname\(|sys-linux.c'
	'fdatasync(2), which macOS lacks|(^|[[:space:]=!])fdatasync\(|sys-linux.c sys-freebsd.c sys-illumos.c sys-posix.c'
	'device kinds (disks are per system)|S_ISBLK|S_ISCHR|sys-linux.c sys-freebsd.c sys-darwin.c sys-illumos.c sys-posix.c'
	'the Windows API|#include <(windows|winioctl|io)\.h>|_get_osfhandle|DeviceIoControl|ReadFile\b|sys-windows.c'
)
for rule in "${rules[@]}"; do
	what=${rule%%|*}
	allowed=${rule##*|}
	pattern=${rule#*|}
	pattern=${pattern%|*}
	while IFS= read -r hit; do
		file=${hit%%:*}
		case " $allowed " in *" $file "*) continue ;; esac
		echo "FAIL: $what outside ${allowed// /, }: $hit"
		fail=1
	done < <(grep -nE "$pattern" -- *.c *.h | grep -v '^[^:]*:[0-9]*:[[:space:]]*\(/\*\|\*\)' || true)
done

# Only one file's #include <linux/...> in sys.c, under the FIEMAP guard.
if grep -n '#include <linux/' sys.c | grep -v -e 'linux/fs.h' -e 'linux/fiemap.h' >/dev/null; then
	echo "FAIL: sys.c includes a Linux header other than FIEMAP's"
	fail=1
fi

for f in sys-*.c; do
	for entry in fdatasync disk; do
		sed -n '/^const struct sm_os sm_os = {/,/^};/p' "$f" | grep -q "^[[:space:]]*\.$entry = " ||
			{ echo "FAIL: $f: its struct sm_os has no .$entry (required)"; fail=1; }
	done
done
n=$(ls sys-*.c | wc -l)
[ "$fail" = 0 ] && echo "PASS: $n system files; the rest of lib/ names nothing system-specific"
exit "$fail"
