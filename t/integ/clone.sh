#!/usr/bin/env bash
# Block cloning (FSCTL_DUPLICATE_EXTENTS_TO_FILE): a share [xfs] on a
# loop-mounted XFS made with reflink, in this run's temp dir, beside
# [btrfs] on a loop-mounted btrfs (when the kernel has it), and [noref]
# on an XFS made without reflink, [noread] on the first XFS with a root
# users cannot read, and the default [share] (on /tmp's file system:
# ext4 here), none of which clones.
#   - smbtorture's smb2.ioctl.dup_extents_* against [xfs] and [btrfs]:
#     each test of t/compat/clone.list gives the result listed there
#     (pass, or skip for the reason named); against [share] each skips;
#   - t/integ/clone_client.py (impacket): the attribute bit on each share,
#     a clone's data and its shared extents (FIEMAP), the refusals
#     (alignment, overlap, past the source, a user who may only read the
#     target, handles), byte-range locks not checked as ReFS, and the
#     FSCTL refused as before where the file system cannot clone.
# A machine that cannot make a loop device or mount XFS (no
# /dev/loop-control, losetup -f failing, no xfs in the kernel) prints one
# line saying so and counts nothing; a missing mkfs.xfs is a failure
# (scripts/install-deps.sh installs xfsprogs).  The images are unmounted and their loop devices
# detached at exit, after the server stopped (t/integ/xfs_lib.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xfs_lib.sh"

LIST=$ROOT/t/compat/clone.list

why=$(xfs_why)
if [ -n "$why" ]; then
	echo "clone.sh: cannot make a loop-mounted XFS here: $why; nothing run"
	echo "0 passed, 0 failed"
	exit 0
fi

integ_init
XFS=$T/xfs
NOREF=$T/noref
command -v mkfs.xfs >/dev/null || { fail "mkfs.xfs is installed (xfsprogs)"; finish; }
check "an XFS made with reflink, loop-mounted" xfs_make xfs 320M "-m reflink=1"
mountpoint -q "$XFS" || finish
mkdir -p "$XFS/share" "$XFS/noread"
chmod 1777 "$XFS/share"
# a root users may enter but not read: XFS's geometry call needs a read
# open of it, so there the share does not clone
chmod 0711 "$XFS/noread"
# an XFS made without reflink: the geometry call says so
check "an XFS made without reflink, loop-mounted" xfs_make noref 320M "-m reflink=0"
mountpoint -q "$NOREF" || finish
chmod 1777 "$NOREF"
# btrfs, the other file system that clones (statfs tells it)
BTRFS=
if grep -qw btrfs /proc/filesystems || modprobe -q btrfs 2>/dev/null; then
	if ! command -v mkfs.btrfs >/dev/null; then
		fail "mkfs.btrfs is installed (btrfs-progs)"
	elif check "a btrfs, loop-mounted" xfs_make btrfs 200M "" mkfs.btrfs &&
	    mountpoint -q "$T/btrfs"; then
		BTRFS=$T/btrfs
		chmod 1777 "$BTRFS"
	fi
else
	echo "clone.sh: the kernel has no btrfs: [btrfs] not checked"
fi

INTEG_SHARES=$(printf '[%s]\n\tpath = %s\n\tread only = no\n\n' xfs "$XFS/share" \
    noref "$NOREF" noread "$XFS/noread" ${BTRFS:+btrfs "$BTRFS"}) integ_conf
integ_users || { fail "users"; finish; }
integ_start || { fail "usmbd starts"; finish; }

# torture SHARE: smbtorture's tests of the list against SHARE, as
# t/integ/torture.sh runs it; results in $T/res.SHARE (STATUS<TAB>name).
torture() {
	grep -v -E '^(#|[[:space:]]*$)' "$LIST" | cut -f1 >"$T/load"
	timeout --kill-after=5 120 smbtorture "//127.0.0.1/$1" -p "$PORT" \
	    -U "alice%$ALICE_PW" --target=samba3 \
	    --option=torture:sharedelay=100000 \
	    --option=torture:user2name=bob \
	    --option=torture:user2password="$BOB_PW" \
	    --fullname --format=subunit --load-list="$T/load" smb2.ioctl \
	    </dev/null >"$T/torture.$1" 2>&1
	sed -n -E 's/^(success|successful|failure|fail|error|skip): (.*)$/\1\t\2/p' \
	    "$T/torture.$1" | sed -E 's/ \[$//; s/^successful\t/success\t/;
	    s/^(fail|error)\t/failure\t/' >"$T/res.$1"
	if grep -q '^failure' "$T/res.$1"; then
		sed -n '/^failure/,/^\]/p' "$T/torture.$1" | head -n 40
	fi
}
result() { awk -F '\t' -v n="$2" '$2 == n { print $1 }' "$T/res.$1" | tail -n 1; }

if command -v smbtorture >/dev/null; then
	torture xfs
	torture share
	[ -n "$BTRFS" ] && torture btrfs
	while IFS=$'\t' read -r name want; do
		case $name in '#'* | '') continue ;; esac
		for sh in xfs ${BTRFS:+btrfs}; do
			got=$(result $sh "$name")
			case $want in
			pass) [ "$got" = success ] && ok "smbtorture $name on [$sh]" ||
			    fail "smbtorture $name on [$sh]: ${got:-no result}" ;;
			skip*) [ "$got" = skip ] &&
			    ok "smbtorture $name on [$sh] skips (${want#skip: })" ||
			    fail "smbtorture $name on [$sh]: ${got:-no result}, expected a skip" ;;
			esac
		done
		got=$(result share "$name")
		[ "$got" = skip ] && ok "smbtorture $name skips on [share] (no reflink)" ||
		    fail "smbtorture $name on [share]: ${got:-no result}, expected a skip"
	done <"$LIST"
else
	fail "smbtorture is installed"
fi

run() {
	client_checks "clone_client.py $1" "$PYTHON" \
	    "$ROOT/t/integ/clone_client.py" "$PORT" "$@"
}
run "$XFS/share" xfs
run "$SHARE" plain share
run "$NOREF" plain noref
run "$XFS/noread" plain noread
[ -n "$BTRFS" ] && run "$BTRFS" basic btrfs
check "the server is still up" integ_ping
finish
