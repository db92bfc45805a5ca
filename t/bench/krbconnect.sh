#!/usr/bin/env bash
# The cost of a Kerberos login, usmbd beside Samba (issue 15).
#
# A private MIT KDC (t/integ/krb_lib.sh), one keytab; usmbd with `kerberos
# method = dedicated keytab`, Samba 4.17's smbd with the same keys (`security
# = user`, `kerberos method = dedicated keytab`, `realm`: no domain needed).
# The client is t/bench/smbload's `connect` workload with -k (libsmbclient,
# Kerberos only, alice's ticket from kinit): a fresh connection per loop,
# NEGOTIATE, SESSION_SETUP with an AP-REQ, TREE_CONNECT, a stat, logoff.
# Printed: connects a second and milliseconds per connect, client side, and
# the servers' CPU per connect (/proc times of the server's process tree,
# live children; usmbd's helper, gates and worker live on, Samba's
# per-connection smbd exit and are counted through cutime/cstime), with
# NTLM beside for reference.  Samba 4.17 with `security = user` and a
# dedicated keytab did not take the tickets here (its log shows the client
# falling back to NTLMSSP and NO_SUCH_USER for alice@USMBD.TEST): printed as
# not available, with the client's error.
#
# Then usmbd's Kerberos logon of one leg (an optimistic AP-REQ, as Samba's
# and the Linux client) beside the three legs Windows 10 and later take
# (NegoEx listed first: request-mic, the AP-REQ and AP-REP with our MIC,
# the client's MIC), with t/integ/krb_client.py's bench loop.
#
#   t/bench/krbconnect.sh            # KRB_BENCH_N connects each (default 200)
set -u
cd "$(dirname "$0")/../.."
. t/integ/lib.sh
. t/integ/krb_lib.sh

N=${KRB_BENCH_N:-200}
SMBLOAD=$ROOT/build/t/bench/smbload
[ -x "$SMBLOAD" ] || { echo "krbconnect: build $SMBLOAD first" >&2; exit 2; }

integ_init
krb_start || exit 1
integ_conf "realm = $KRB_REALM" "kerberos method = dedicated keytab" \
    "dedicated keytab file = $KRB_KEYTAB" "log level = 0"
integ_users >/dev/null
integ_start || exit 1
krb_kinit alice

SPORT=$(integ_free_port)
S=$T/samba
mkdir -p "$S"/{lock,state,cache,private,pid,ncalrpc} "$T/sshare"
chmod 1777 "$T/sshare"
cat >"$S/smb.conf" <<EOF
[global]
	smb ports = $SPORT
	interfaces = 127.0.0.1
	bind interfaces only = yes
	security = user
	realm = $KRB_REALM
	kerberos method = dedicated keytab
	dedicated keytab file = FILE:$KRB_KEYTAB
	workgroup = USMBD
	lock directory = $S/lock
	state directory = $S/state
	cache directory = $S/cache
	private dir = $S/private
	pid directory = $S/pid
	ncalrpc dir = $S/ncalrpc
	log level = ${KRB_BENCH_SAMBA_LOG:-0}
	disable spoolss = yes
	load printers = no
[share]
	path = $T/sshare
	read only = no
EOF
printf '%s\n%s\n' "$ALICE_PW" "$ALICE_PW" |
    smbpasswd -c "$S/smb.conf" -a -s alice >/dev/null 2>&1
smbd -F --no-process-group --debug-stdout -s "$S/smb.conf" >"$S/smbd.log" 2>&1 &
SMBD_PID=$!
trap 'kill "$SMBD_PID" 2>/dev/null; krb_cleanup' EXIT
for i in $(seq 1 50); do
	smbclient -L 127.0.0.1 -p "$SPORT" -N >/dev/null 2>&1 && break
	sleep 0.1
done

# CPU seconds (user + system) of a process tree's processes, live and reaped.
tree_cpu() {
	local pid=$1 t=0 p

	for p in $pid $(pgrep -P "$pid") $(for c in $(pgrep -P "$pid"); do pgrep -P "$c"; done); do
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat")))
	done
	echo "$t"
}

# run NAME PORT PID MECH: smbload's connect workload, MECH krb or ntlm.
run() {
	local name=$1 port=$2 pid=$3 mech=$4 c0 c1 out hz args

	hz=$(getconf CLK_TCK)
	if [ "$mech" = krb ]; then
		args=(-U "alice@$KRB_REALM%$KRB_ALICE_PW" -k)
	else
		args=(-U "alice%$ALICE_PW")
	fi
	c0=$(tree_cpu "$pid")
	out=$("$SMBLOAD" -u "smb://$KRB_HOST:$port/share" "${args[@]}" \
	    -w connect -n "$N" -W 5 2>&1 | grep '^RESULT' | head -1)
	c1=$(tree_cpu "$pid")
	if [ -z "$out" ]; then
		printf '%-6s %-8s connect: not available (%s)\n' "$name" "$mech" \
		    "$("$SMBLOAD" -u "smb://$KRB_HOST:$port/share" "${args[@]}" \
		    -w connect -n 1 2>&1 | tail -1)"
		return
	fi
	awk -v name="$name" -v mech="$mech" -v cpu=$((c1 - c0)) -v hz="$hz" '
	{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-6s %-8s connect: %d in %.2f s = %.0f/s, %.2f ms each; server CPU %.2f ms each\n",
		    name, mech, v["ops"], v["secs"], v["ops"] / v["secs"],
		    1000 * v["secs"] / v["ops"], 1000 * cpu / hz / v["ops"]
	}' <<<"$out"
}

echo "Login cost (smbload -w connect, $N connects, one client, loopback;"
echo "  krb: libsmbclient Kerberos only, a kinit and a service ticket per connect"
echo "  on the client; the server CPU is what the login costs the server)"
run samba "$SPORT" "$SMBD_PID" krb
run usmbd "$PORT" "$SERVER_PID" krb
run samba "$SPORT" "$SMBD_PID" ntlm
run usmbd "$PORT" "$SERVER_PID" ntlm

# legs LEGS: krb_client.py's logon loop (python3-gssapi, SMB 2.1, the
# service ticket from the ccache: no KDC in the loop), usmbd only.
legs() {
	local c0 c1 out hz

	hz=$(getconf CLK_TCK)
	c0=$(tree_cpu "$SERVER_PID")
	out=$("$PYTHON" t/integ/krb_client.py "$PORT" bench "$KRB_HOST" "$1" \
	    "$N" 2>&1 | tail -1)
	c1=$(tree_cpu "$SERVER_PID")
	case $out in
	RESULT*) ;;
	*) printf 'usmbd  %d leg(s): failed: %s\n' "$1" "$out"; return ;;
	esac
	awk -v cpu=$((c1 - c0)) -v hz="$hz" -v what="$2" '
	{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "usmbd  %-44s %d in %.2f s, %.2f ms each; server CPU %.2f ms each\n",
		    what, v["ops"], v["secs"], 1000 * v["secs"] / v["ops"],
		    1000 * cpu / hz / v["ops"]
	}' <<<"$out"
}
echo
echo "Kerberos logon by legs (krb_client.py bench: connect, NEGOTIATE, the"
echo "  SESSION_SETUPs, LOGOFF; the ticket already in the client's ccache)"
legs 1 "one leg (AP-REQ in the NegTokenInit):"
legs 3 "three legs (NegoEx first: request-mic, MICs):"
