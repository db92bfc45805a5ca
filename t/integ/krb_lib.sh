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
