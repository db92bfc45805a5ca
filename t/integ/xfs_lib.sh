# Loop-mounted XFS images in a run's temp dir, for the scripts that need a
# file system that shares blocks (t/integ/clone.sh, t/bench/clonecost.sh).
# Source it after t/integ/lib.sh:
#
#	xfs_why			prints why this machine cannot make one (no
#				/dev/loop-control, losetup -f fails, no xfs in
#				the kernel); nothing when it can.  mkfs.xfs is
#				a dependency (scripts/install-deps.sh), not a
#				property of the machine: the caller checks it
#	xfs_make NAME SIZE OPTS [MKFS]
#				MKFS (default mkfs.xfs) -q OPTS on a sparse
#				$T/NAME.img of SIZE (truncate's units;
#				xfsprogs refuses a data section under 300 MB),
#				loop device, mounted on $T/NAME; 0, or 1 with
#				a line why.  mkfs.btrfs makes the other file
#				system that clones
#	xfs_cleanup		stops the server (its workers hold the share
#				roots), unmounts and detaches every image,
#				then lib.sh's cleanup, keeping the exit
#				status; xfs_make installs it as the EXIT trap
XFS_MOUNTS=()
XFS_LOOPS=()

xfs_why() {
	if [ ! -e /dev/loop-control ] || ! losetup -f >/dev/null 2>&1; then
		echo "no loop device (/dev/loop-control, losetup -f)"
	elif ! grep -qw xfs /proc/filesystems && ! modprobe -q xfs 2>/dev/null; then
		echo "the kernel has no xfs"
	fi
}

xfs_cleanup() {
	local rc=$? m d

	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID" 2>/dev/null
		integ_wait_exit "$SERVER_PID" 5 || kill -KILL "$SERVER_PID" 2>/dev/null
		integ_wait_exit "$SERVER_PID" 5
	fi
	for m in "${XFS_MOUNTS[@]}"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount "$m" 2>/dev/null || umount -l "$m"
		fi
	done
	for d in "${XFS_LOOPS[@]}"; do
		losetup -d "$d" 2>/dev/null
	done
	(exit "$rc")
	integ_cleanup
}

xfs_make() {
	local name=$1 size=$2 opts=$3 mkfs=${4:-mkfs.xfs} img=$T/$1.img dev

	trap xfs_cleanup EXIT
	truncate -s "$size" "$img" || return 1
	# shellcheck disable=SC2086
	"$mkfs" -q $opts "$img" || { echo "$mkfs $opts failed"; return 1; }
	dev=$(losetup -f --show "$img") || { echo "losetup failed"; return 1; }
	XFS_LOOPS+=("$dev")
	mkdir -p "$T/$name"
	mount "$dev" "$T/$name" || { echo "mount $dev failed"; return 1; }
	XFS_MOUNTS+=("$T/$name")
}
