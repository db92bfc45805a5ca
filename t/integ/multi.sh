#!/bin/bash
# Several users on one TCP connection (issue 13; HACKING.md "Several users
# on one connection"): alice's worker holds the socket, bob's session is
# served by bob's worker over a relay.  Client: t/integ/multi_client.py
# (impacket, one connection, a session per user; dialects 2.0.2, 2.1 and
# 3.0).  MULTI_USERS (default 64) users on one connection in all.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf "server signing = mandatory"
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

printf "bob's secret\n" >"$SHARE/secret"
chown bob: "$SHARE/secret"
chmod 600 "$SHARE/secret"

client() {
	"$PYTHON" "$ROOT/t/integ/multi_client.py" "$PORT" "$@" >"$T/client.out" 2>&1
	local rc=$?
	cat "$T/client.out"
	grep -q '^FAIL' "$T/client.out" && return 1
	return $rc
}

for d in 202 21 30; do
	check "dialect $d: alice and bob on one connection" client "$d" two "$d"
	for i in 0 4; do
		check "dialect $d: alice's file is alice's on disk" \
		    test "$(stat -c %U "$SHARE/a_${d}_$i.txt")" = alice
		check "dialect $d: bob's file is bob's on disk" \
		    test "$(stat -c %U "$SHARE/b_${d}_$i.txt")" = bob
	done
done
export SHARE
for d in 21 30; do
	check "dialect $d: lease breaks, a blocking lock and CANCEL across the two" \
	    client "$d" async "$d"
done
grep -q "relayed" "$LOG" && ok "the log says the session was relayed" ||
	fail "no relay in the log"

# bob's worker killed -9 while alice goes on
cat >"$T/killbob" <<SH
#!/bin/bash
. "$ROOT/t/integ/lib.sh"
CONF=$CONF USMBCTL=$USMBCTL PYTHON=$PYTHON
pid=\$(integ_worker_of bob)
[ -n "\$pid" ] && kill -9 "\$pid"
sleep 0.5
SH
chmod +x "$T/killbob"
check "bob's worker killed -9, alice goes on" client 21 kill k "$T/killbob"
check "the server is still up" integ_ping

# many users on one connection
n=${MULTI_USERS:-64}
users=()
for i in $(seq -w 2 "$n"); do
	integ_user "mu$i" "mupw$i" >/dev/null 2>&1 ||
		{ fail "cannot create user mu$i"; finish; }
	users+=("mu$i:mupw$i")
done
check "$n users on one connection" client 21 many m "${users[@]}"
owned=0
for u in "${users[@]}"; do
	name=${u%%:*}
	[ "$(stat -c %U "$SHARE/m_m_$name.txt" 2>/dev/null)" = "$name" ] &&
		owned=$((owned + 1))
done
check "each user's file is that user's on disk" test "$owned" = "${#users[@]}"
check "the server is still up" integ_ping
integ_stop

# Without signing required, 2.x cannot make bob's requests prove
# themselves: his session is refused, alice's goes on.
integ_conf
integ_start || exit 1
check "unsigned 2.1: another user's session refused" client 21 refused
grep -q "server signing = mandatory" "$LOG" &&
	ok "the log says which setting allows it" ||
	fail "no log line naming the setting"
finish
