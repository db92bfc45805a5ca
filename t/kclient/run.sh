#!/usr/bin/env bash
# The kernel-client harness (issue 22): Debian's own kernel booted under
# qemu-system-x86_64 with software emulation (TCG), no network device; the
# server (usmbd, then Samba in a second boot) and the Linux cifs client both
# inside the guest on its loopback; ordinary-use checks (t/kclient/checks.sh),
# each one line ok/FAIL per server; a table usmbd vs Samba; a last line
# "N passed, N failed".  t/kclient/README.md explains it all.
#
#	t/kclient/run.sh			full run (make kclient)
#	KCLIENT_SUBSET=ci t/kclient/run.sh	the CI subset (t/integ/kclient.sh)
#
# Environment:
#	KCLIENT_KERNEL	kernel series, space separated: 6.1 (default: Debian
#			12's linux-image-amd64) and/or 6.12 (bookworm-backports)
#	KCLIENT_SERVERS	"usmbd samba" (default), or one of them
#	KCLIENT_SUBSET	full (default) or ci
#	KCLIENT_CHECKS	check names (space or comma separated), instead of
#			the subset's
#	KCLIENT_OUT	results directory (default /tmp/usmbd-kclient): per
#			kernel and server the console log and out/ (each check's
#			output, the server's log, dmesg)
#	KCLIENT_TIMEOUT	seconds per boot (default: 90 + 60 per check)
#	KCLIENT_CHECK_TIMEOUT	seconds per check inside the guest (default 150)
#	KCLIENT_LOG_LEVEL	the servers' log level (default 1)
#	KCLIENT_CIFS_FYI	1: the cifs client's debug messages (cifsFYI) go
#			to the kernel log, shown in each failed check's output
#	USMBD		not used: the guest runs build/usmbd of this tree
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
HERE=$ROOT/t/kclient

CI_CHECKS="mount_2.0 mount_2.1 mount_3.0 mount_3.02 mount_3.1.1
	mount_3.1.1_seal mount_3.1.1_sign unlink_hardlink_open unlink_open
	rename_open xattr_user times_tmpfs_touch snapshot quota dfs_link
	home_share"
FULL_CHECKS="mount_2.0 mount_2.1 mount_3.0 mount_3.02 mount_3.1.1
	mount_3.0_seal mount_3.02_seal mount_3.1.1_seal
	mount_2.0_sign mount_2.1_sign mount_3.0_sign mount_3.1.1_sign
	dd_cmp cp_a rename_file rename_over rename_open rename_dir rename_dir_over
	rm_rf truncate sparse mmap tar sqlite git lock_two_mounts lock_two_users
	unlink_hardlink_open unlink_open xattr_user symlink_native chmod_cifsacl
	second_user multiuser
	times_tmpfs_touch times_tmpfs_cp_a times_tmpfs_tar
	posix_stat posix_chmod posix_chown posix_case posix_symlink posix_mkfifo
	posix_unlink_open posix_lock
	snapshot quota dfs_link home_share reconnect dirlease_listing"

# bpo and backports name 6.12 (scripts/kclient-kernel.sh), as xfail does
KERNELS=$(sed -E 's/(^| )(bpo|backports)( |$)/\16.12\3/g' <<<"${KCLIENT_KERNEL:-6.1}")
SERVERS=${KCLIENT_SERVERS:-usmbd samba}
case ${KCLIENT_SUBSET:-full} in
ci)	CHECKS=$CI_CHECKS ;;
full)	CHECKS=$FULL_CHECKS ;;
*)	echo "KCLIENT_SUBSET is full or ci" >&2; exit 2 ;;
esac
[ -n "${KCLIENT_CHECKS:-}" ] && CHECKS=$(tr ',' ' ' <<<"$KCLIENT_CHECKS")
CHECKS=$(echo $CHECKS)
NCHECKS=$(wc -w <<<"$CHECKS")
TMO=${KCLIENT_TIMEOUT:-$((90 + 60 * NCHECKS))}
OUT=${KCLIENT_OUT:-/tmp/usmbd-kclient}

# Missing pieces fail the run loudly (and count as one failure for
# scripts/run-integ.sh): never a silent skip.
broken() {
	echo "kclient: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}
[ "$(id -u)" = 0 ] || broken "must run as root"
miss=()
for c in qemu-system-x86_64:qemu-system-x86 /bin/busybox:busybox-static \
    /sbin/mount.cifs:cifs-utils setfattr:attr sqlite3:sqlite3 git:git \
    /usr/sbin/smbd:samba depmod:kmod ss:iproute2 /usr/bin/python3:python3; do
	command -v "${c%%:*}" >/dev/null 2>&1 || miss+=("${c#*:}")
done
compgen -G '/usr/lib/*/samba/vfs/acl_xattr.so' >/dev/null || miss+=(samba-vfs-modules)
[ ${#miss[@]} = 0 ] || broken "missing packages: ${miss[*]} (run scripts/install-deps.sh)"
[ -x build/usmbd ] && [ -x build/usmbctl ] || broken "build/usmbd is not built (make)"

# Users as the integration tests have them (the guest sees the host's
# /etc/passwd); the gates' account, the state group and the state
# process's account.
for u in alice bob; do
	id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u" || broken "useradd $u failed"
done
getent group usmbd-state >/dev/null || groupadd -r usmbd-state
id usmbd >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin usmbd
id usmbd-state >/dev/null 2>&1 ||
	useradd -r -M -d /nonexistent -s /usr/sbin/nologin -g usmbd-state usmbd-state

rm -rf "$OUT"
mkdir -p "$OUT"
declare -A RES WHY KVER
t_start=$SECONDS
for k in $KERNELS; do
	kdir=$(scripts/kclient-kernel.sh "$k") || broken "cannot get the $k kernel"
	KVER[$k]=$(cat "$kdir/version")
	/usr/bin/python3 "$HERE/mkinitrd.py" "$kdir" "$OUT/initrd-$k.gz" ||
	    broken "mkinitrd.py failed for $kdir"
	for s in $SERVERS; do
		d=$OUT/$k-$s
		mkdir -p "$d/out"
		echo "$CHECKS" >"$d/out/checks"
		echo "== kernel ${KVER[$k]}, $s: $NCHECKS checks (console: $d/console.log)"
		t0=$SECONDS
		timeout -k 10 "$TMO" qemu-system-x86_64 -accel tcg -cpu max \
		    -m 2G -smp 2 -nic none -display none -monitor none -no-reboot \
		    -serial "file:$d/console.log" \
		    -kernel "$kdir/boot/vmlinuz-${KVER[$k]}" -initrd "$OUT/initrd-$k.gz" \
		    -append "console=ttyS0 loglevel=1 panic=-1 kc_kdir=$kdir kc_script=$HERE/guest.sh kc_root=$ROOT kc_server=$s kc_timeout=${KCLIENT_CHECK_TIMEOUT:-150} kc_loglevel=${KCLIENT_LOG_LEVEL:-1} kc_fyi=${KCLIENT_CIFS_FYI:-0}" \
		    -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
		    -virtfs "local,path=$d/out,mount_tag=out,security_model=none" \
		    </dev/null >"$d/qemu.out" 2>&1
		rc=$?
		[ $rc = 0 ] || echo "   qemu exit $rc$([ $rc = 124 ] && echo " (timed out after $TMO s)")"
		grep -a '^KC \(FATAL\|note\)' "$d/console.log" | sed 's/^/   /'
		grep -a '^KC \(ok\|FAIL\) ' "$d/console.log" | sed 's/^KC /   /'
		grep -aq '^KC done' "$d/console.log" || echo "   the guest did not finish (see $d/console.log)"
		echo "== $((SECONDS - t0)) s"
		while IFS= read -r l; do
			case $l in
			"KC ok "*) n=${l#KC ok }; RES[$k,$s,$n]=ok ;;
			"KC FAIL "*) n=${l#KC FAIL }; n=${n%%:*}
				RES[$k,$s,$n]=FAIL; WHY[$k,$s,$n]=${l#KC FAIL $n: } ;;
			esac
		done < <(tr -d '\r' <"$d/console.log" | grep -a '^KC \(ok\|FAIL\) ')
	done
done

# Expected failures: "NAME reason" (usmbd) or "samba:NAME reason", on
# every kernel; "usmbd@6.1:NAME reason" or "samba@6.12:NAME reason" on one.
declare -A XF
while read -r n why; do
	case $n in ''|'#'*) continue ;; esac
	case $n in *:*) ;; *) n=usmbd:$n ;; esac
	XF[$n]=$why
done <"$HERE/xfail"

passed=0
failed=0
hdr=$(printf '%-22s' check)
for k in $KERNELS; do for s in $SERVERS; do
	hdr+=$(printf ' %-14s' "$s/$k")
done; done
echo
echo "$hdr"
notes=()
for n in $CHECKS; do
	row=$(printf '%-22s' "$n")
	for k in $KERNELS; do for s in $SERVERS; do
		r=${RES[$k,$s,$n]:-none}
		x=${XF[$s:$n]+1}${XF[$s@$k:$n]+1}
		case $r:$x in
		ok:)	c=ok; passed=$((passed + 1)) ;;
		ok:1*)	c=XPASS; passed=$((passed + 1))
			notes+=("XPASS $s/$k $n: drop it from t/kclient/xfail") ;;
		FAIL:1*)	c=xfail; passed=$((passed + 1)) ;;
		FAIL:)	c=FAIL; failed=$((failed + 1))
			notes+=("FAIL $s/$k $n: ${WHY[$k,$s,$n]}") ;;
		none:*)	c=FAIL; failed=$((failed + 1))
			notes+=("FAIL $s/$k $n: no result (guest died or timed out)") ;;
		esac
		row+=$(printf ' %-14s' "$c")
	done; done
	echo "$row"
done
echo
for l in "${notes[@]}"; do echo "$l"; done
echo "xfail: $(grep -c '^[^#[:space:]]' "$HERE/xfail") lines in t/kclient/xfail; results in $OUT; $((SECONDS - t_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
