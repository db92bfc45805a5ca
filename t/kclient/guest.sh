#!/bin/bash
# Runs inside the guest (started by t/kclient/init after switch_root; its
# output is the serial console).  Makes the writable places, an ext4 RAM
# disk for the share and a tmpfs for the [tmp] share, starts one server
# ($kc_server: usmbd or samba) on 127.0.0.1:445, mounts, and runs the checks
# of t/kclient/checks.sh one by one, each printing exactly one line
#	KC ok NAME		or	KC FAIL NAME: reason
# (and "KC time NAME SECONDS"), then "KC done".  Each check's full output,
# the server's log and the kernel log go to the host's result directory,
# shared writable as the 9p tag "out".  Variables from the kernel command
# line: kc_root (source tree), kc_server, kc_timeout (per check); the
# checks to run are listed in the result directory's file "checks".
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C.UTF-8 TZ=UTC
R=$kc_root
SRV=$kc_server
echo "KC start $SRV kernel $(uname -r)"

# Fresh /tmp and /run; the source tree may live below one of them (a CI
# clone in /tmp): it stays visible where it was.
mkdir -p /kcsrc && mount --bind "$R" /kcsrc
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
case $R in
/tmp/*|/run/*) mkdir -p "$R" && mount --bind /kcsrc "$R" ;;
esac
mkdir -p /dev/shm /dev/pts && mount -t tmpfs tmpfs /dev/shm && mount -t devpts devpts /dev/pts
# devtmpfs has no /dev/fd (bash's <(...) needs it)
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /kcout
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /kcout ||
    echo "KC note: no result directory (9p tag out)"
O=/kcout
hostname kclient

fatal() {
	echo "KC FATAL $*"
	dmesg >$O/dmesg.txt 2>&1
	exit 1
}

# The share on ext4 (user xattrs, like a real server's disk); [tmp] on
# tmpfs, which in 6.1 has no user xattrs (issue 22 case 6).
modprobe brd rd_nr=2 rd_size=524288 || fatal "modprobe brd failed"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/ram0 ||
    fatal "mkfs.ext4 failed"
mkdir -p /srv/kc && mount -t ext4 /dev/ram0 /srv/kc || fatal "mount ext4 failed"
mkdir -p /srv/kc/share /srv/kctmp /srv/kc/snap/.snapshots
mount -t tmpfs -o size=256m tmpfs /srv/kctmp
# [dfs]: an msdfs root whose link refers to [share] (the dfs_link check)
mkdir -p /srv/kc/dfs && ln -s 'msdfs:127.0.0.1\share' /srv/kc/dfs/link
# [homes] at /srv/kc/home/%U (the home_share check): each user's own,
# 0700, as useradd -m leaves one
for u in alice bob; do
	mkdir -p /srv/kc/home/$u && chown $u /srv/kc/home/$u && chmod 700 /srv/kc/home/$u
done
# [quota] on XFS with user and group quotas (the `quota` check; allocsize:
# little speculative preallocation charged to the quota; without
# them the share is missing and the check says so)
modprobe xfs 2>/dev/null
mkdir -p /srv/kcq
mkfs.xfs -q -f /dev/ram1 >/dev/null 2>&1 &&
    mount -t xfs -o uquota,gquota,allocsize=64k /dev/ram1 /srv/kcq &&
    mkdir -p /srv/kcq/share && chmod 1777 /srv/kcq/share
chmod 1777 /srv/kc/share /srv/kctmp /srv/kc/snap
export KC_ROOT=$R KC_SHARE=/srv/kc/share KC_TMPSHARE=/srv/kctmp KC_SERVER=$SRV
modprobe cifs || fatal "modprobe cifs failed"
# KCLIENT_CIFS_FYI=1: the client's debug messages (into each failed
# check's output, with the rest of the kernel log)
if [ "${kc_fyi:-0}" = 1 ]; then
	echo 1 >/proc/fs/cifs/cifsFYI
	mount -t debugfs debugfs /sys/kernel/debug
	echo 'module cifs +p' >/sys/kernel/debug/dynamic_debug/control
fi

K=/run/kc
mkdir -p $K
case $SRV in
usmbd)
	USMBD=$R/build/usmbd
	USMBCTL=$R/build/usmbctl
	cat >$K/usmbd.conf <<EOF
[global]
	smb ports = 445
	interfaces = 127.0.0.1
	pid directory = $K/run
	lock directory = $K/lock
	private dir = $K/private
	log level = ${kc_loglevel:-1}

[share]
	path = /srv/kc/share
	read only = no

[tmp]
	path = /srv/kctmp
	read only = no

[snap]
	path = /srv/kc/snap
	read only = no
	snapshot directory = .snapshots

[quota]
	path = /srv/kcq/share
	read only = no

[dfs]
	path = /srv/kc/dfs
	msdfs root = yes

[homes]
	path = /srv/kc/home/%U
	valid users = %S
	read only = no
	browseable = no
EOF
	for u in alice:alicepw1 bob:bobpw1; do
		printf '%s\n' "${u#*:}" | $USMBCTL -s $K/usmbd.conf user add "${u%%:*}" >/dev/null ||
		    fatal "usmbctl user add ${u%%:*} failed"
	done
	$USMBD -F -s $K/usmbd.conf 2>>$O/usmbd.log &
	up() { $USMBCTL -s $K/usmbd.conf ping >/dev/null 2>&1; } ;;
samba)
	d=$K/samba
	mkdir -p $d/run $d/lock $d/state $d/cache $d/private
	# The reference configuration every comparison shares, plus the
	# tmpfs share
	sed -e "s|@PORT@|445|; s|@DIR@|$d|g; s|@LOG@|$O/smbd.log|" \
	    -e "s|@LOGLEVEL@|${kc_loglevel:-1}|; s|@SHARE@|/srv/kc/share|" \
	    "$R/t/compat/samba.conf.in" >$d/smb.conf ||
	    fatal "no $R/t/compat/samba.conf.in"
	# the posix_* checks: Samba answers the POSIX extensions only when asked
	sed -i 's/^\[global\]$/[global]\n\tsmb3 unix extensions = yes/' $d/smb.conf
	printf '\n[tmp]\n\tpath = /srv/kctmp\n\tread only = no\n' >>$d/smb.conf
	# previous versions: shadow_copy2's names are usmbd's (.snapshots,
	# @GMT-%Y.%m.%d-%H.%M.%S); its snapshots are of the share's path, not
	# of the file system's mount point (its default)
	printf '\n[quota]\n\tpath = /srv/kcq/share\n\tread only = no\n' >>$d/smb.conf
	printf '\n[dfs]\n\tpath = /srv/kc/dfs\n\tmsdfs root = yes\n' >>$d/smb.conf
	printf '\n[homes]\n\tpath = /srv/kc/home/%%U\n\tvalid users = %%S\n\tread only = no\n\tbrowseable = no\n' >>$d/smb.conf
	printf '\n[snap]\n\tpath = /srv/kc/snap\n\tread only = no\n\tvfs objects = shadow_copy2 acl_xattr streams_xattr\n\tshadow:snapdir = .snapshots\n\tshadow:mountpoint = /srv/kc/snap\n' >>$d/smb.conf
	for u in alice:alicepw1 bob:bobpw1; do
		printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
		    smbpasswd -c $d/smb.conf -a -s "${u%%:*}" >/dev/null ||
		    fatal "smbpasswd -a ${u%%:*} failed"
	done
	/usr/sbin/smbd -F --no-process-group -s $d/smb.conf </dev/null >$O/smbd.out 2>&1 &
	up() { ss -Hltn '( sport = :445 )' | grep -q .; } ;;
*)	fatal "unknown server $SRV" ;;
esac
for i in $(seq 1 300); do
	up && break
	sleep 0.2
done
up || fatal "$SRV did not come up"

declare -A PW=([alice]=alicepw1 [bob]=bobpw1)
gmount() {	# DIR USER OPTS
	mkdir -p "$1"
	mount -t cifs //127.0.0.1/share "$1" -o "username=$2,password=${PW[$2]},$3" \
	    >>$O/mounts.log 2>&1 || echo "KC note: mount $1 ($2, $3) failed"
}
checks=$(cat $O/checks 2>/dev/null) || fatal "no list of checks ($O/checks)"
for n in $checks; do
	case $n in mount_*|chmod_cifsacl|times_*|posix_*) ;; *) need_a=1 ;; esac
done
[ -n "${need_a:-}" ] && gmount /mnt/a alice vers=3.1.1
case " $checks " in *" lock_"*|*" dirlease_"*)
	gmount /mnt/b alice vers=3.1.1,nosharesock
	gmount /mnt/c bob vers=3.1.1,nosharesock ;;
esac

for n in $checks; do
	dmesg -c >>$O/dmesg.txt 2>&1
	t0=$(date +%s.%N)
	timeout -k 5 "${kc_timeout:-150}" bash "$R/t/kclient/checks.sh" "$n" >"$O/$n.out" 2>&1 </dev/null
	rc=$?
	t1=$(date +%s.%N)
	if [ $rc = 0 ]; then
		echo "KC ok $n"
	elif [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "KC FAIL $n: timed out after ${kc_timeout:-150} s"
	else
		why=$(grep -v '^[[:space:]]*$' "$O/$n.out" | tail -n 1 | cut -c1-200)
		echo "KC FAIL $n: ${why:-exit $rc}"
	fi
	if [ $rc != 0 ]; then
		echo "--- kernel messages during the check:"
		dmesg
	fi >>"$O/$n.out" 2>&1
	echo "KC time $n $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
done
dmesg >>$O/dmesg.txt 2>&1
grep -q 'cut here\|BUG:\|Oops' $O/dmesg.txt && echo "KC note: kernel warning or oops (dmesg.txt)"
for m in /mnt/*; do mountpoint -q "$m" && timeout 20 umount -f "$m"; done
echo "KC done"
