# A private MIT KDC for the Kerberos tests.  Source after lib.sh and
# integ_init:
#
#	. "$(dirname "$0")/krb_lib.sh"
#	krb_start			# KDC up, principals made, keytab written
#	krb_kinit alice			# a ticket for alice in $KRB5CCNAME
#
# The KDC (krb5kdc from Debian's krb5-kdc) listens on 127.0.0.1 on a free
# port, UDP and TCP, for the realm $KRB_REALM (USMBD.TEST).  Everything is
# under $T/krb and goes with $T; the KDC is stopped by the EXIT trap
# (krb_stop is chained into integ_cleanup).
#
# Variables set:
#	KRB_REALM	USMBD.TEST
#	KRB_HOST	the host name clients use for the server: this host's
#			name (it must resolve to 127.0.0.1; Samba's clients
#			refuse Kerberos to "localhost" and to addresses)
#			(the service principal is cifs/$KRB_HOST@$KRB_REALM)
#	KRB_PORT	the KDC's port on 127.0.0.1
#	KRB_KEYTAB	$T/krb/usmbd.keytab: cifs/$KRB_HOST's keys, root-owned,
#			mode 0600 (as an AD join leaves /etc/krb5.keytab)
#	KRB5_CONFIG	$T/krb/krb5.conf, exported: every krb5 program of
#			the test (kinit, smbclient, smbtorture, usmbd's
#			helper) reads it instead of /etc/krb5.conf
#	KRB5CCNAME	exported, FILE:$T/krb/cc.default (krb_kinit writes it)
#	KRB_ALICE_PW KRB_BOB_PW	the principals' passwords
#
# Functions:
#	krb_start [LIFE]	make the usmbd-krb account when absent, the
#				realm, principals alice, bob,
#				cifs/$KRB_HOST (keys in $KRB_KEYTAB) and start
#				the KDC; LIFE is the realm's max ticket life
#				(default 10h); returns 1 when it does not come
#				up.  Takes about a second.
#	krb_kinit NAME [ARGS]	kinit NAME with its password into $KRB5CCNAME
#				(ARGS to kinit, e.g. -l 1m)
#	krb_addprinc NAME PW	another principal
#	krb_stop		stop the KDC (also done at exit)
#	krb_pac on|off		whether the KDC puts a PAC in tickets for
#				cifs/$KRB_HOST (on, MIT 1.20's default: a minimal
#				one, no logon info; off: the principal's
#				no_auth_data_required).  Service tickets already in
#				a ccache keep theirs: kinit again.
#	krb_samba_start NAME	the reference Samba (t/compat/samba.conf.in)
#				taking tickets from this KDC with $KRB_KEYTAB, no
#				domain: `realm`, `kerberos method = dedicated
#				keytab`, standalone.  NAME: samba (Debian 12's
#				4.17) or samba422 (scripts/samba-ref.sh's root).
#				alice and bob get passdb entries (for NTLM beside).
#				State and smbd.log under $T/NAME, log level
#				$KRB_SAMBA_LOG (default 0).  Sets
#				KRB_SAMBA_PORT[NAME] and KRB_SAMBA_PID[NAME] (smbd's
#				own pid); returns 2 when NAME is not installed
#				(samba422 is not fetched here), 1 when it does not
#				come up.  Stopped at exit (krb_samba_stop).
#
# Samba without a domain and the PAC: smbd in standalone mode takes MIT
# tickets (source3/auth/auth_generic.c, the "standalone legacy code path":
# the principal's realm stripped when it is `realm`, then `username map`
# and getpwnam), but 4.17 refuses any PAC there ("Unexpected PAC for [%s]
# in standalone mode", NT_STATUS_BAD_TOKEN_TYPE), and MIT's KDC puts one
# in every ticket since 1.20 (Debian 12 has 1.20.1): Samba 4.17 logs in by
# Kerberos only with `krb_pac off`.  4.22 (generate_krb5_session_info)
# takes a PAC without a logon info, MIT's.

KRB_REALM=USMBD.TEST
KRB_HOST=$(hostname)
KRB_PORT=
KRB_KEYTAB=
KRB_PID=
KRB_ALICE_PW=alicekrb1
KRB_BOB_PW=bobkrb1

krb_stop() {
	if [ -n "$KRB_PID" ] && kill -0 "$KRB_PID" 2>/dev/null; then
		kill -TERM "$KRB_PID" 2>/dev/null
		integ_wait_exit "$KRB_PID" 3 || kill -KILL "$KRB_PID" 2>/dev/null
	fi
	KRB_PID=
}

krb_cleanup() {
	local rc=$?

	krb_samba_stop
	krb_stop
	(exit $rc)
	integ_cleanup
}

krb_addprinc() {
	kadmin.local -r "$KRB_REALM" -q "addprinc -pw $2 $1" >/dev/null 2>&1
}

krb_kinit() {
	local name=$1 pw

	shift
	case $name in
	alice) pw=$KRB_ALICE_PW ;;
	bob) pw=$KRB_BOB_PW ;;
	*) pw=${KRB_PW:?krb_kinit: KRB_PW for $name} ;;
	esac
	printf '%s\n' "$pw" | kinit "$@" "$name@$KRB_REALM" >/dev/null
}

krb_start() {
	local life=${1:-10h} d=$T/krb i

	# The ticket helper's account (scripts/install-deps.sh makes it too).
	id usmbd-krb >/dev/null 2>&1 ||
	    useradd -r -M -d /nonexistent -s /usr/sbin/nologin -U usmbd-krb
	mkdir -p "$d"
	# 0755: every krb5 program of the test (the helper runs as usmbd-krb)
	# reads krb5.conf here; the keytab itself is root 0600.
	chmod 0755 "$d"
	KRB_PORT=$(integ_free_port) || return 1
	KRB_KEYTAB=$d/usmbd.keytab
	export KRB5_CONFIG=$d/krb5.conf
	export KRB5_KDC_PROFILE=$d/kdc.conf
	export KRB5CCNAME=FILE:$d/cc.default
	cat >"$KRB5_CONFIG" <<EOF
[libdefaults]
	default_realm = $KRB_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	udp_preference_limit = 1
	default_ccache_name = FILE:$d/cc.default
[realms]
	$KRB_REALM = {
		kdc = 127.0.0.1:$KRB_PORT
	}
[domain_realm]
	$KRB_HOST = $KRB_REALM
EOF
	cat >"$KRB5_KDC_PROFILE" <<EOF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$KRB_PORT
	kdc_tcp_listen = 127.0.0.1:$KRB_PORT
[realms]
	$KRB_REALM = {
		database_name = $d/principal
		key_stash_file = $d/stash
		acl_file = $d/kadm5.acl
		max_life = $life
		max_renewable_life = 0
		supported_enctypes = aes256-cts:normal aes128-cts:normal
	}
[logging]
	kdc = FILE:$d/kdc.log
EOF
	: >"$d/kadm5.acl"
	# -W: the weak (fast) random source for the master key of a test realm.
	kdb5_util create -W -s -r "$KRB_REALM" -P "kdb-master-$$" >/dev/null 2>&1 ||
	    { echo "kdb5_util create failed" >&2; return 1; }
	krb_addprinc alice "$KRB_ALICE_PW" || return 1
	krb_addprinc bob "$KRB_BOB_PW" || return 1
	kadmin.local -r "$KRB_REALM" -q "addprinc -randkey cifs/$KRB_HOST" \
	    >/dev/null 2>&1 || return 1
	kadmin.local -r "$KRB_REALM" -q "ktadd -k $KRB_KEYTAB cifs/$KRB_HOST" \
	    >/dev/null 2>&1 || return 1
	chown root:root "$KRB_KEYTAB"
	chmod 0600 "$KRB_KEYTAB"
	krb5kdc -n -r "$KRB_REALM" -P "$d/kdc.pid" >>"$d/kdc.out" 2>&1 &
	KRB_PID=$!
	trap krb_cleanup EXIT
	for i in $(seq 1 50); do
		if printf '%s\n' "$KRB_ALICE_PW" |
		    kinit -c "FILE:$d/cc.probe" "alice@$KRB_REALM" >/dev/null 2>&1; then
			rm -f "$d/cc.probe"
			return 0
		fi
		kill -0 "$KRB_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "the KDC did not come up:" >&2
	cat "$d/kdc.out" "$d/kdc.log" >&2 2>/dev/null
	return 1
}

krb_pac() {
	local flag=+no_auth_data_required

	[ "$1" = on ] && flag=-no_auth_data_required
	kadmin.local -r "$KRB_REALM" -q "modprinc $flag cifs/$KRB_HOST" \
	    >/dev/null 2>&1
}

declare -A KRB_SAMBA_PORT=() KRB_SAMBA_PID=()

krb_samba_start() {
	local name=$1 d=$T/$1 ref=$ROOT/scripts/samba-ref.sh root port pid m i
	local smbd=() smbpasswd=() moddir u

	case $name in
	samba)
		smbd=(/usr/sbin/smbd) smbpasswd=(smbpasswd) root= ;;
	samba422)
		root=$("$ref" path 2>/dev/null) || return 2
		smbd=("$ref" run smbd) smbpasswd=("$ref" run smbpasswd) ;;
	*)
		echo "krb_samba_start: no Samba called $name" >&2
		return 1 ;;
	esac
	[ -x "$root/usr/sbin/smbd" ] || return 2
	# The reference share's modules (t/compat/compare.sh refuses to run
	# without them too).
	moddir=$(compgen -G "$root/usr/lib/*/samba/vfs" | head -1)
	for m in acl_xattr streams_xattr; do
		[ -n "$moddir" ] && [ -e "$moddir/$m.so" ] || {
			echo "$name: Samba's $m module is missing (samba-vfs-modules)" >&2
			return 1
		}
	done
	port=$(integ_free_port) || return 1
	mkdir -p "$d/share" "$d/run" "$d/lock" "$d/state" "$d/cache" "$d/private"
	chmod 1777 "$d/share"
	# smbd runs as root: it reads the root 0600 keytab itself.
	sed -e "s|@PORT@|$port|; s|@DIR@|$d|g; s|@LOG@|$d/smbd.log|" \
	    -e "s|@LOGLEVEL@|${KRB_SAMBA_LOG:-0}|; s|@SHARE@|$d/share|" \
	    -e "/^\[global\]/a\\
	realm = $KRB_REALM\\
	kerberos method = dedicated keytab\\
	dedicated keytab file = FILE:$KRB_KEYTAB" \
	    "$ROOT/t/compat/samba.conf.in" >"$d/smb.conf" || return 1
	for u in "alice:$ALICE_PW" "bob:$BOB_PW"; do
		printf '%s\n%s\n' "${u#*:}" "${u#*:}" |
		    "${smbpasswd[@]}" -c "$d/smb.conf" -a -s "${u%%:*}" \
		    >/dev/null 2>>"$d/smbpasswd.err" ||
		    return 1
	done
	setsid "${smbd[@]}" -F --no-process-group -s "$d/smb.conf" \
	    </dev/null >"$d/smbd.out" 2>&1 &
	pid=$!
	KRB_SAMBA_PID[$name]=$pid
	KRB_SAMBA_PORT[$name]=$port
	# Up when it answers a password logon (NTLM, Kerberos off: this
	# proves nothing about tickets).
	for i in $(seq 1 50); do
		timeout 10 smbclient -L 127.0.0.1 -p "$port" -U "alice%$ALICE_PW" \
		    --use-kerberos=off >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	echo "$name: smbd did not come up:" >&2
	tail -5 "$d/smbd.out" "$d/smbd.log" >&2 2>/dev/null
	return 1
}

krb_samba_stop() {
	local name pid pids

	for name in "${!KRB_SAMBA_PID[@]}"; do
		pid=${KRB_SAMBA_PID[$name]}
		kill -TERM "$pid" 2>/dev/null
		integ_wait_exit "$pid" 5 || kill -KILL "$pid" 2>/dev/null
		unset "KRB_SAMBA_PID[$name]"
		# samba-dcerpcd and its rpcd_* outlive smbd (t/compat/compare.sh).
		pids=$(pgrep -f -- "--configfile=$T/$name/smb.conf( |$)")
		[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	done
	return 0
}
