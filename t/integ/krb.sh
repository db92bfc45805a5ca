#!/usr/bin/env bash
# Kerberos logons (issue 15, HACKING.md "Kerberos logons"), against a private
# MIT KDC (t/integ/krb_lib.sh): smbclient with a ticket from kinit lists,
# writes and reads as alice and the file is alice's; `username map`; a
# disabled passdb entry refuses; an expired ticket and a ticket for a key
# the server has not fail cleanly; `ntlm auth = no` refuses a password and
# still takes tickets; the ticket helper runs as usmbd-krb under seccomp and
# is restarted after kill -9; malformed AP-REQs never harm the master;
# Kerberos after NegoEx (krb_client.py negoex: the mechListMICs both ways,
# a wrong one refused, NTLMSSP first keeps NTLMSSP);
# smbtorture -k's session expiry and re-authentication tests
# (KRB_TORTURE=0 skips those, about 40 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/krb_lib.sh"

integ_init
krb_start || { fail "the KDC starts"; finish; }
ok "a private KDC for $KRB_REALM on 127.0.0.1:$KRB_PORT"
KRB_PW=carolkrb1 krb_addprinc carol carolkrb1
echo "bob = carol@$KRB_REALM" >"$T/users.map"
integ_conf "realm = $KRB_REALM" "kerberos method = dedicated keytab" \
    "dedicated keytab file = $KRB_KEYTAB" "username map = $T/users.map"
integ_users
integ_start || { fail "usmbd starts"; finish; }

# smbclient as NAME with the ticket in $KRB5CCNAME; its output in $T/smb.out
krb_smb() {
	smbclient "//$KRB_HOST/share" -p "$PORT" --use-kerberos=required \
	    --use-krb5-ccache="$KRB5CCNAME" "$@" >"$T/smb.out" 2>&1
}

krb_helper_pid() {
	ps -eo pid=,args= | awk '$2 == "usmbd:" && $3 == "krb" { print $1 }' |
	    while read -r p; do
		[ "$(awk '/^PPid:/ { print $2 }' /proc/"$p"/status 2>/dev/null)" = \
		    "$SERVER_PID" ] && echo "$p"
	    done
}

# usmbctl testparm checks the keytab.
"$USMBCTL" -s "$CONF" testparm >/dev/null 2>"$T/tp.err"
check "testparm lists the keytab's cifs/ key" \
    grep -q "keytab: cifs/$KRB_HOST@$KRB_REALM" "$T/tp.err"
check_fails "testparm finds a key for this host's name" \
    grep -q "has no cifs/ key\|keytab.*warning" "$T/tp.err"
sed 's/^\(.*dedicated keytab file = \).*/\1\/nonexistent.keytab/' "$CONF" \
    >"$T/bad.conf"
"$USMBCTL" -s "$T/bad.conf" testparm >/dev/null 2>"$T/tp.err"
check "testparm warns of a keytab it cannot read" \
    grep -q "warning: keytab /nonexistent.keytab" "$T/tp.err"
cp "$KRB_KEYTAB" "$T/open.keytab"
chmod 0644 "$T/open.keytab"
sed "s|^\(.*dedicated keytab file = \).*|\1$T/open.keytab|; s|^\(.*realm = \).*|\1OTHER.REALM|" \
    "$CONF" >"$T/bad.conf"
"$USMBCTL" -s "$T/bad.conf" testparm >/dev/null 2>"$T/tp.err"
check "testparm warns of a keytab others may read" \
    grep -q "is mode 0644" "$T/tp.err"
check "testparm warns of no cifs/ key in the realm" \
    grep -q "has no cifs/ key for" "$T/tp.err"

# NEGOTIATE offers Kerberos: smbclient -k would refuse otherwise.
krb_kinit alice
echo "alice's words" >"$T/a.txt"
check "smbclient --use-kerberos=required puts a file as alice" \
    krb_smb -c "put $T/a.txt a.txt; ls"
check "the listing shows it" grep -q "a.txt" "$T/smb.out"
if [ "$(stat -c %U "$SHARE/a.txt" 2>/dev/null)" = alice ]; then
	ok "the file alice created is alice's on disk"
else
	fail "the file alice created is alice's on disk ($(stat -c %U "$SHARE/a.txt" 2>&1))"
fi
check "alice reads it back" krb_smb -c "get a.txt $T/a.back"
check "the same bytes" cmp "$T/a.txt" "$T/a.back"
check "the master logged the Kerberos logon" \
    grep -q "Kerberos logon of alice@$KRB_REALM (alice)" "$LOG"
check "signed and encrypted with the ticket's key (SMB3 seal)" \
    krb_smb --client-protection=encrypt -c "ls"

KRB_PW=carolkrb1 krb_kinit carol
check "carol@$KRB_REALM logs in through username map" \
    krb_smb -c "put $T/a.txt c.txt"
if [ "$(stat -c %U "$SHARE/c.txt" 2>/dev/null)" = bob ]; then
	ok "username map: carol's file is bob's on disk"
else
	fail "username map: carol's file is bob's on disk"
fi
krb_kinit bob
check "bob logs in" krb_smb -c "ls"

# A disabled passdb entry refuses the ticket too.
"$USMBCTL" -s "$CONF" user disable bob >/dev/null
check_fails "a disabled account is refused" krb_smb -c "ls"
check "the log says why" grep -q "principal \"bob@$KRB_REALM\": account disabled" "$LOG"
"$USMBCTL" -s "$CONF" user enable bob >/dev/null

# A principal of a realm that is not ours, unmapped: refused.  (The KDC
# knows only one realm, so this is a user the map does not name and whose
# name has no Unix account.)
KRB_PW=nounixkrbKrb1 krb_addprinc nounixkrb nounixkrbKrb1
KRB_PW=nounixkrbKrb1 krb_kinit nounixkrb
check_fails "a principal without a Unix account is refused" krb_smb -c "ls"
check "the log names it" grep -q "principal \"nounixkrb@$KRB_REALM\": no such Unix account" "$LOG"

# An expired ticket: kinit for 2 s, wait 3; the client cannot use it.
krb_kinit alice -l 2s
sleep 3
check_fails "an expired ticket does not log in" krb_smb -c "ls"

# A ticket for a key the server does not have: the service key changes in
# the KDC, the keytab stays as it was.
kadmin.local -r "$KRB_REALM" -q "cpw -randkey cifs/$KRB_HOST" >/dev/null 2>&1
krb_kinit alice
check_fails "a ticket for a key not in the keytab is refused" krb_smb -c "ls"
check "the helper said why" grep -q "Kerberos logon failure from 127.0.0.1: principal \"\"" "$LOG"
kadmin.local -r "$KRB_REALM" -q "ktadd -k $KRB_KEYTAB cifs/$KRB_HOST" >/dev/null 2>&1
check "reload hands the helper the new keytab" "$USMBCTL" -s "$CONF" reload
sleep 0.5
kdestroy >/dev/null 2>&1
krb_kinit alice
check "the new key works after the reload" krb_smb -c "ls"

# The helper: its own account, seccomp, restarted after kill -9.
hp=$(krb_helper_pid)
if [ -n "$hp" ] && [ "$(stat -c %U /proc/"$hp")" = usmbd-krb ]; then
	ok "the ticket helper runs as usmbd-krb"
else
	fail "the ticket helper runs as usmbd-krb (pid '$hp')"
fi
check "the helper is under seccomp with no_new_privs" \
    grep -qE "^Seccomp:[[:space:]]+2" "/proc/$hp/status"
kill -9 "$hp"
for i in $(seq 1 30); do
	np=$(krb_helper_pid)
	[ -n "$np" ] && [ "$np" != "$hp" ] && break
	sleep 0.1
done
if [ -n "$np" ] && [ "$np" != "$hp" ]; then
	ok "a helper killed -9 is restarted ($hp -> $np)"
else
	fail "a helper killed -9 is restarted"
fi
sleep 0.3
check "the next Kerberos login works" krb_smb -c "ls"

# Malformed AP-REQs: refused, the master untouched, the helper alive.
"$PYTHON" "$ROOT/t/integ/krb_client.py" "$PORT" garbage 60 >"$T/garbage.out" 2>&1
if [ "$(cat "$T/garbage.out")" = "status 0xc000006d 60" ]; then
	ok "60 malformed AP-REQs: LOGON_FAILURE each"
else
	fail "60 malformed AP-REQs: LOGON_FAILURE each: $(cat "$T/garbage.out")"
fi
check "the master is alive" kill -0 "$SERVER_PID"
if [ "$(krb_helper_pid)" = "$np" ]; then
	ok "the helper survived them"
else
	fail "the helper survived them"
fi
check "a good ticket still logs in" krb_smb -c "ls"

# Kerberos when it is not the client's first mechanism (Windows 10+ lists
# NegoEx first): request-mic, the AP-REQ, the mechListMICs both ways.
krb_kinit alice
negoex() {
	USER=alice "$PYTHON" "$ROOT/t/integ/krb_client.py" "$PORT" negoex \
	    "$KRB_HOST" "$1" >"$T/negoex.out" 2>&1
}
negoex good
if [ "$(cat "$T/negoex.out")" = ok ]; then
	ok "[NegoEx, krb5, NTLMSSP]: Kerberos taken, MICs both ways, signed create"
else
	fail "[NegoEx, krb5, NTLMSSP]: Kerberos taken: $(tail -3 "$T/negoex.out")"
fi
if [ "$(stat -c %U "$SHARE/negoex-alice.txt" 2>/dev/null)" = alice ]; then
	ok "the session is alice's: her file on disk"
else
	fail "the session is alice's: her file on disk"
fi
check "the log names the Kerberos session" \
    grep -q "127.0.3.1: session [0-9a-f]* for alice (Kerberos" "$LOG"
negoex badmic
if [ "$(cat "$T/negoex.out")" = "status 0xc000006d" ]; then
	ok "a wrong mechListMIC: LOGON_FAILURE"
else
	fail "a wrong mechListMIC: LOGON_FAILURE: $(tail -3 "$T/negoex.out")"
fi
check "the helper said why" grep -q "mechListMIC does not verify" "$LOG"
negoex twoapreq
if [ "$(cat "$T/negoex.out")" = "status 0xc000000d" ]; then
	ok "a second AP-REQ where the MIC is due: INVALID_PARAMETER"
else
	fail "a second AP-REQ where the MIC is due: $(tail -3 "$T/negoex.out")"
fi
negoex nomutual
if [ "$(cat "$T/negoex.out")" = ok ]; then
	ok "no mutual authentication: the client's MIC with the AP-REQ, two legs"
else
	fail "no mutual authentication, two legs: $(tail -3 "$T/negoex.out")"
fi
negoex reauth
if [ "$(cat "$T/negoex.out")" = ok ] &&
    [ "$(stat -c %U "$SHARE/negoex-reauth-alice.txt" 2>/dev/null)" = alice ]; then
	ok "re-authentication in the user's worker, the same three legs"
else
	fail "re-authentication in the user's worker: $(tail -3 "$T/negoex.out")"
fi
rm -f "$SHARE/negoex-alice.txt"
negoex smb311
if [ "$(cat "$T/negoex.out")" = ok ] &&
    [ "$(stat -c %U "$SHARE/negoex-alice.txt" 2>/dev/null)" = alice ]; then
	ok "SMB 3.1.1: the preauth hash covers the three legs (signed create)"
else
	fail "SMB 3.1.1, the preauth hash of the three legs: $(tail -3 "$T/negoex.out")"
fi
negoex ntlmfirst
if [ "$(cat "$T/negoex.out")" = "status 0xc0000016 mech 2b06010401823702020a" ]; then
	ok "[NegoEx, NTLMSSP, krb5]: NTLMSSP, the client's first we support"
else
	fail "[NegoEx, NTLMSSP, krb5]: NTLMSSP: $(tail -3 "$T/negoex.out")"
fi

# Several users on one connection with Kerberos: bob's sessions on
# alice's connection are relayed to bob's worker (krb_client.py multi).
KRB5CCNAME=FILE:$T/krb/cc.alice krb_kinit alice
KRB5CCNAME=FILE:$T/krb/cc.bob krb_kinit bob
printf "bob's secret\n" >"$SHARE/kmsecret"
chown bob: "$SHARE/kmsecret"
chmod 600 "$SHARE/kmsecret"
kmulti() {
	"$PYTHON" "$ROOT/t/integ/krb_client.py" "$PORT" "$@" >"$T/multi.out" 2>&1
}
kmulti multi "$KRB_HOST" "FILE:$T/krb/cc.alice" "FILE:$T/krb/cc.bob"
if [ "$(cat "$T/multi.out")" = ok ]; then
	ok "Kerberos: bob (one leg, three, two) on alice's connection, relayed; AP-REP and final answers signed with bob's key; bob's 0600 file refused to alice"
else
	fail "Kerberos: bob on alice's connection: $(tail -3 "$T/multi.out")"
fi
for f in alice bob bob2 bob3; do
	u=${f%[23]}
	if [ "$(stat -c %U "$SHARE/km-$f.txt" 2>/dev/null)" = "$u" ]; then
		ok "Kerberos, one connection: km-$f.txt is $u's on disk"
	else
		fail "Kerberos, one connection: km-$f.txt is $u's on disk"
	fi
done
check "the log says bob's Kerberos session was relayed" \
    grep -q "session [0-9a-f]* of bob relayed from worker" "$LOG"
check "alice's worker got bob's verdict without his key" \
    grep -q "logon of bob from 127.0.4.1.*session key of uid [0-9]* withheld from worker" "$LOG"
kmulti multi "$KRB_HOST" "FILE:$T/krb/cc.alice" "FILE:$T/krb/cc.bob" smb311
if [ "$(cat "$T/multi.out")" = ok ]; then
	ok "Kerberos on SMB 3.1.1: bob relayed, each session's signing key from its own preauth hash (three legs across two workers)"
else
	fail "Kerberos on SMB 3.1.1: bob on alice's connection: $(tail -3 "$T/multi.out")"
fi
cat >"$T/killbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
for p in \$(integ_status_json | "$PYTHON" -c '
import json, sys
for p in json.load(sys.stdin).get("processes", []):
    if p.get("role") == "worker" and p.get("user") == "bob":
        print(p["pid"])'); do
	kill -9 "\$p"
done
sleep 0.5
SH
chmod +x "$T/killbob"
kmulti multi "$KRB_HOST" "FILE:$T/krb/cc.alice" "FILE:$T/krb/cc.bob" \
    "$T/killbob"
if [ "$(cat "$T/multi.out")" = ok ]; then
	ok "Kerberos: bob's worker killed -9: USER_SESSION_DELETED for bob, alice goes on"
else
	fail "Kerberos: bob's worker killed -9, alice goes on: $(tail -3 "$T/multi.out")"
fi
check "the server is still up" integ_ping
KRB5CCNAME=FILE:$T/krb/cc.bobshort krb_kinit bob -l 8s
kmulti expire "$KRB_HOST" "FILE:$T/krb/cc.alice" "FILE:$T/krb/cc.bobshort" \
    "FILE:$T/krb/cc.bob" 9
if [ "$(cat "$T/multi.out")" = ok ]; then
	ok "Kerberos: bob's relayed session expires with his ticket (signed NETWORK_SESSION_EXPIRED), alice goes on, a fresh ticket re-authenticates it through the relay"
else
	fail "Kerberos: bob's relayed session's expiry: $(tail -3 "$T/multi.out")"
fi
kmulti reauthother "$KRB_HOST" "FILE:$T/krb/cc.alice" "FILE:$T/krb/cc.bob"
if [ "$(cat "$T/multi.out")" = ok ]; then
	ok "Kerberos re-authentication as bob: alice's handle reads, nothing new is granted, back as alice"
else
	fail "Kerberos re-authentication as bob: $(tail -3 "$T/multi.out")"
fi
check "the log says so" grep -q "re-authenticated as bob (Kerberos" "$LOG"
test ! -e "$SHARE/kr-bob-new.txt" && ok "as bob, no new file on disk" ||
	fail "as bob, no new file on disk"
if [ "$(stat -c %U "$SHARE/kr-alice-again.txt" 2>/dev/null)" = alice ]; then
	ok "back as alice: her new file is hers on disk"
else
	fail "back as alice: her new file is hers on disk"
fi

# `ntlm auth = no`: a password is refused, a ticket still taken.
check "NTLM logons work before" smbclient "//127.0.0.1/share" -p "$PORT" \
    -U "alice%$ALICE_PW" --use-kerberos=off -c "ls"
INTEG_GLOBAL="	ntlm auth = no" integ_conf "realm = $KRB_REALM" \
    "kerberos method = dedicated keytab" "dedicated keytab file = $KRB_KEYTAB" \
    "username map = $T/users.map"
check "reload with ntlm auth = no" "$USMBCTL" -s "$CONF" reload
sleep 0.5
check_fails "ntlm auth = no refuses a password" smbclient "//127.0.0.1/share" \
    -p "$PORT" -U "alice%$ALICE_PW" --use-kerberos=off -c "ls"
check "with a log line" grep -q "NTLM refused (\`ntlm auth = no\`)" "$LOG"
check "and still takes the ticket" krb_smb -c "ls"
negoex ntlmfirst
if [ "$(cat "$T/negoex.out")" = "status 0xc0000016 mech 2a864882f712010202" ]; then
	ok "ntlm auth = no: [NegoEx, NTLMSSP, krb5] gets Kerberos"
else
	fail "ntlm auth = no: [NegoEx, NTLMSSP, krb5] gets Kerberos: $(tail -3 "$T/negoex.out")"
fi

# smbtorture with Kerberos: the session's end at the ticket's end, and
# re-authentication with a fresh ticket keeping the opens.
# The expiry tests run side by side (each waits for its ticket to run
# out; their files carry random names).  The encryption tests wait on a
# recursive notify of the share's root that the others' files would
# answer, so they run after them, one at a time.
if [ "${KRB_TORTURE:-1}" = 1 ]; then
	ktorture() {
		timeout 120 smbtorture "//$KRB_HOST/share" -p "$PORT" \
		    -U "alice%$KRB_ALICE_PW" --realm="$KRB_REALM" \
		    --use-kerberos=required "smb2.session.$1" >"$T/tort.$1" 2>&1
	}
	ktests="expire1n expire1s expire1e expire2s expire2e expire_disconnect
	    reauth1"
	kpids=()
	for t in $ktests; do
		ktorture "$t" &
		kpids+=($!)
	done
	wait "${kpids[@]}"
	for t in encryption-aes-256-gcm encryption-aes-256-ccm; do
		ktorture "$t"
		ktests="$ktests $t"
	done
	for t in $ktests; do
		if grep -q "^success: $t" "$T/tort.$t"; then
			ok "smbtorture -k smb2.session.$t"
		else
			fail "smbtorture -k smb2.session.$t: $(grep -A2 "^failure\|^error" "$T/tort.$t" | head -3)"
		fi
	done
fi
# A reload without Kerberos ends the helper; NEGOTIATE offers only NTLMSSP.
integ_conf
check "reload without Kerberos" "$USMBCTL" -s "$CONF" reload
for i in $(seq 1 30); do
	[ -z "$(krb_helper_pid)" ] && break
	sleep 0.1
done
check "the helper is gone" test -z "$(krb_helper_pid)"
krb_kinit alice
check_fails "a ticket is no longer taken" krb_smb -c "ls"
check "a password is" smbclient "//127.0.0.1/share" -p "$PORT" \
    -U "alice%$ALICE_PW" --use-kerberos=off -c "ls"
check "the master is alive at the end" kill -0 "$SERVER_PID"
finish
