# SPDX-License-Identifier: MIT
# Source this from a bash test that needs file systems of its own:
#
#   . "$srcdir/tests/mounts.sh"       # re-runs the script in a private mount namespace
#   sm_mounts_require_root            # exits 77 (skipped) with a message when not root
#   if sm_can_mount; then ...; fi     # root, and not told otherwise
#   sm_mounts_init                    # the private directory and the cleanup trap
#   if sm_mount ext4; then dir=$SM_DIR; else echo "ext4: cannot mount here"; fi
#
# sm_mount sets SM_DIR rather than printing it: a $(...) subshell would keep
# the list of mounts, and the cleanup, to itself.
# Everything lives under one mktemp -d directory; an EXIT/INT/TERM trap
# unmounts it all, and because the mounts are made in a mount namespace of
# the test's own, they vanish with it even if the test is killed.
# Types: ext4 ext2 xfs btrfs tmpfs ramfs (images are sparse, 512 MiB unless
# SM_IMAGE_SIZE says otherwise; SM_MKFS_OPTS adds mkfs options, SM_MOUNT_OPTS
# mount options, tmpfs's too), and FUSE file systems of the tests' own
# (sm_mount_fuse), whose daemons the cleanup stops too.  When mkfs refuses
# its options (older tools) or the kernel the mount, sm_mount says which on
# stderr and fails.
# SM_TESTS_NO_ROOT=1 makes root run the tests as another user would, without
# mounts (a package build does that: debian/rules).

sm_can_mount() {
	[ "$(id -u)" = 0 ] && [ -z "${SM_TESTS_NO_ROOT:-}" ]
}

if sm_can_mount && [ -z "${SM_IN_MOUNT_NS:-}" ] && command -v unshare >/dev/null 2>&1; then
	SM_IN_MOUNT_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi

SM_MOUNT_ROOT=
SM_MOUNTED=()
SM_FUSE_PIDS=()

sm_mounts_require_root() {
	if ! sm_can_mount; then
		echo "SKIP: $(basename "$0") mounts file systems and needs root${SM_TESTS_NO_ROOT:+ (SM_TESTS_NO_ROOT is set)}"
		exit 77
	fi
}

sm_mounts_cleanup() {
	local i
	for ((i = ${#SM_MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${SM_MOUNTED[i]}" 2>/dev/null || umount -l "${SM_MOUNTED[i]}" 2>/dev/null || true
	done
	SM_MOUNTED=()
	# Unmounted, a FUSE daemon ends; one that never mounted is told to.
	for i in "${SM_FUSE_PIDS[@]}"; do
		kill "$i" 2>/dev/null || true
		wait "$i" 2>/dev/null || true
	done
	SM_FUSE_PIDS=()
	[ -n "$SM_MOUNT_ROOT" ] && rm -rf "$SM_MOUNT_ROOT"
	SM_MOUNT_ROOT=
}

sm_mounts_init() {
	[ -n "$SM_MOUNT_ROOT" ] && return 0
	SM_MOUNT_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/sm-mounts.XXXXXX")
	trap 'sm_mounts_cleanup' EXIT
	trap 'sm_mounts_cleanup; exit 130' INT TERM HUP
}

# sm_mount TYPE [NAME]: mount a new, empty file system of TYPE and set SM_DIR
# to its directory; fails (with a reason on stderr) where TYPE cannot be had.
sm_mount() {
	local type=$1 name=${2:-$1} dir img mkfs out
	SM_DIR=
	[ -n "$SM_MOUNT_ROOT" ] || { echo "sm_mount: sm_mounts_init first" >&2; return 1; }
	dir=$SM_MOUNT_ROOT/$name
	img=$SM_MOUNT_ROOT/$name.img
	mkdir -p "$dir" || return 1
	case $type in
	tmpfs | ramfs)
		mount -t "$type" -o "mode=0755${SM_MOUNT_OPTS:+,$SM_MOUNT_OPTS}" "sm-$name" "$dir" ||
			{ echo "mount -t $type -o ${SM_MOUNT_OPTS:-mode=0755} failed" >&2; return 1; }
		;;
	ext4 | ext2 | xfs | btrfs)
		case $type in
		ext4 | ext2) mkfs="mkfs.$type -q -F" ;;
		xfs) mkfs="mkfs.xfs -q -f" ;;
		btrfs) mkfs="mkfs.btrfs -q -f" ;;
		esac
		command -v "${mkfs%% *}" >/dev/null 2>&1 || { echo "${mkfs%% *} is not installed" >&2; return 1; }
		truncate -s "${SM_IMAGE_SIZE:-512M}" "$img" || return 1
		# shellcheck disable=SC2086 # both are lists of words
		if ! out=$($mkfs ${SM_MKFS_OPTS:-} "$img" 2>&1); then
			echo "$mkfs ${SM_MKFS_OPTS:-} failed: $(printf '%s\n' "$out" | grep -v '^$' | head -n 2 | tr '\n' ' ')" >&2
			return 1
		fi
		mount -o "loop${SM_MOUNT_OPTS:+,$SM_MOUNT_OPTS}" "$img" "$dir" ||
			{ echo "the kernel would not mount $mkfs ${SM_MKFS_OPTS:-} -o ${SM_MOUNT_OPTS:-defaults}" >&2; return 1; }
		;;
	*)
		echo "sm_mount: unknown type $type" >&2
		return 1
		;;
	esac
	SM_MOUNTED+=("$dir")
	SM_DIR=$dir
}

# sm_track_mount DIR: unmount DIR with the rest (for mounts made by hand).
sm_track_mount() {
	SM_MOUNTED+=("$1")
}

# sm_mount_fuse PROGRAM BACKING NAME: start the FUSE file system PROGRAM
# (run as PROGRAM BACKING MOUNTPOINT, in the foreground) in the background
# and set SM_DIR to its mount point once it is mounted; fails if it is not
# within five seconds.  The cleanup unmounts it and stops the daemon.
sm_mount_fuse() {
	local prog=$1 back=$2 dir=$SM_MOUNT_ROOT/$3
	SM_DIR=
	[ -n "$SM_MOUNT_ROOT" ] || { echo "sm_mount_fuse: sm_mounts_init first" >&2; return 1; }
	mkdir -p "$dir" || return 1
	"$prog" "$back" "$dir" &
	SM_FUSE_PIDS+=("$!")
	SM_MOUNTED+=("$dir")
	for _ in $(seq 50); do
		if grep -q " $dir fuse" /proc/mounts; then
			SM_DIR=$dir
			return 0
		fi
		sleep 0.1
	done
	echo "$3: the FUSE file system did not mount" >&2
	return 1
}
