#!/usr/bin/env bash
# srvsvc's session, open-file and connection lists (Computer Management's
# Shared Folders, `net session`, `net file`): alice (in `server admin
# group`) and bob hold sessions and open files; t/integ/netenum_client.py
# (impacket) checks each level field by field as alice, and the refusals
# to bob and to a null session; rpcclient's netsessenum, netfileenum and
# netconnenum run while the opens are held, as alice and as bob; then
# smbtorture's rpc.srvsvc.srvsvc (admin access) NetSessEnum, NetFileEnum
# and NetConnEnum.
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_GLOBAL=$'\tserver admin group = usmbdtadm\n\trestrict anonymous = 0'
integ_conf
# [share]'s trees are recorded in the shared state with `max connections`
sed -i 's/^\tcomment = integration test share$/&\n\tmax connections = 50/' "$CONF"
integ_users || { fail "users"; finish; }
getent group usmbdtadm >/dev/null || groupadd usmbdtadm
usermod -a -G usmbdtadm alice
gpasswd -d bob usmbdtadm >/dev/null 2>&1 || true
integ_start || { fail "server start"; finish; }

has() {
	grep -Eq -- "$1" "$T/out"
}

DONE=$T/netenum.done
rm -f "$DONE"
PYTHONPATH="$ROOT/t/integ" "$PYTHON" "$ROOT/t/integ/netenum_client.py" \
    "$PORT" "$SHARE" "$DONE" >"$T/client.out" 2>&1 &
CLIENT=$!
end=$((SECONDS + 30))
while ! grep -q '^holding$' "$T/client.out" && kill -0 "$CLIENT" 2>/dev/null &&
    [ "$SECONDS" -lt "$end" ]; do
	sleep 0.2
done

RPCA=(rpcclient -U "alice%$ALICE_PW" -p "$PORT" 127.0.0.1)
RPCB=(rpcclient -U "bob%$BOB_PW" -p "$PORT" 127.0.0.1)
# rpcclient's own session is one more: alice's, bob's and its own.
if "${RPCA[@]}" -c 'netsessenum' >"$T/out" 2>&1 &&
    n=$(sed -n 's/^Received \([0-9]*\) entries\.$/\1/p' "$T/out") &&
    [ "${n:-0}" -ge 3 ]; then
	ok "rpcclient netsessenum as alice: $n sessions"
else
	fail "rpcclient netsessenum as alice"; sed 's/^/     /' "$T/out"
fi
if "${RPCA[@]}" -c 'netfileenum 3' >"$T/out" 2>&1 &&
    grep -Fxq "C:${SHARE//\//\\}\\alice.txt" "$T/out"; then
	ok "rpcclient netfileenum 3 as alice: the durable open's Windows path"
else
	fail "rpcclient netfileenum as alice"; sed 's/^/     /' "$T/out"
fi
# rpcclient prints nothing of a listing it got (impacket checks the fields)
if "${RPCA[@]}" -c 'netconnenum 1 share' >"$T/out" 2>&1 && ! has 'WERR_|NT_STATUS_'; then
	ok "rpcclient netconnenum 1 share as alice: WERR_OK"
else
	fail "rpcclient netconnenum as alice"; sed 's/^/     /' "$T/out"
fi
for cmd in 'netsessenum' 'netfileenum 3' 'netconnenum 1 share'; do
	"${RPCB[@]}" -c "$cmd" >"$T/out" 2>&1
	if has 'WERR_ACCESS_DENIED' && ! has 'alice' && ! has 'Received'; then
		ok "rpcclient $cmd as bob: WERR_ACCESS_DENIED, nothing listed"
	else
		fail "rpcclient $cmd as bob"; sed 's/^/     /' "$T/out"
	fi
done
touch "$DONE"
wait "$CLIENT"
client_checks netenum_client.py cat "$T/client.out"
# smbtorture's own checks of the three lists (every level it knows)
for t in NetSessEnum NetFileEnum NetConnEnum; do
	if smbtorture "ncacn_np:127.0.0.1[smb2]" -U "alice%$ALICE_PW" \
	    --option="smb ports=$PORT" "rpc.srvsvc.srvsvc (admin access).$t" \
	    >"$T/out" 2>&1 && has "^success: srvsvc \(admin access\)\.$t\$"; then
		ok "smbtorture rpc.srvsvc.srvsvc (admin access).$t"
	else
		fail "smbtorture $t"; tail -n 15 "$T/out" | sed 's/^/     /'
	fi
done
check "server still answers" "$USMBCTL" -s "$CONF" ping
finish
