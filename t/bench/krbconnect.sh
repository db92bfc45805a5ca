#!/usr/bin/env bash
# The cost of a Kerberos login, usmbd beside Samba (issue 15).
#
# A private MIT KDC (t/integ/krb_lib.sh), one keytab; usmbd with `kerberos
# method = dedicated keytab`, and the reference Samba (t/compat/samba.conf.in)
# with the same keys and no domain (krb_lib.sh krb_samba_start: `realm`,
# `kerberos method = dedicated keytab`, standalone): Debian 12's 4.17, and
# bookworm-backports' 4.22 when scripts/samba-ref.sh has fetched it.
# t/integ/krb.sh checks that this Samba logs in by Kerberos (smbd's
# "Successful AuthZ: [SMB2,krb5]"), so its rows are not NTLM in disguise.
# The client is t/bench/smbload's `connect` workload with -k (libsmbclient,
# Kerberos only, no fallback, alice's ticket): a fresh connection per loop,
# NEGOTIATE, SESSION_SETUP with an AP-REQ, TREE_CONNECT, a stat, logoff.
# Printed: connects a second and milliseconds per connect, client side, and
# the servers' CPU per connect (/proc times of the server's process tree,
# live children; usmbd's helper, gates and worker live on, Samba's
# per-connection smbd exit and are counted through cutime/cstime), then
# Samba's and usmbd's server CPU per Kerberos login side by side; NTLM
# beside for reference.
#
# Twice: with tickets without a PAC (the service principal's
# no_auth_data_required), which every server takes, then with the minimal
# PAC MIT's KDC puts in every ticket since 1.20, which Samba 4.17 refuses
# without a domain (source3/auth/auth_generic.c
# auth3_generate_session_info_pac: "Unexpected PAC ... in standalone
# mode", NT_STATUS_BAD_TOKEN_TYPE): its row says so.
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
SERVERS=()
for s in samba samba422; do
	krb_samba_start "$s"
	case $? in
	0) SERVERS+=("$s") ;;
	2) echo "($s is not installed: scripts/samba-ref.sh install; left out)" ;;
	*) echo "($s did not start; left out)" ;;
	esac
done
SERVERS+=(usmbd)

# CPU seconds (user + system) of a process tree's processes, live and reaped.
tree_cpu() {
	local pid=$1 t=0 p

	for p in $pid $(pgrep -P "$pid") $(for c in $(pgrep -P "$pid"); do pgrep -P "$c"; done); do
		[ -r "/proc/$p/stat" ] || continue
		t=$((t + $(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$p/stat")))
	done
	echo "$t"
}

# pac on|off: tickets with or without MIT's PAC from now on, and a fresh
# ccache so that no service ticket of the other kind is reused.
pac() {
	krb_pac "$1"
	kdestroy -q 2>/dev/null
	krb_kinit alice
}

# run NAME MECH: smbload's connect workload against server NAME, MECH krb
# or ntlm (LABEL: what the row calls MECH).  The server CPU per connect,
# in ms, goes to CPU[NAME:LABEL]: the CPU of all N connects over N (the
# WARM warm-up ones are not timed but are in the CPU sample).
declare -A CPU=()
WARM=5
run() {
	local name=$1 mech=$2 label=${3:-$2} port pid c0 c1 out hz args why

	if [ "$name" = usmbd ]; then
		port=$PORT pid=$SERVER_PID
	else
		port=${KRB_SAMBA_PORT[$name]} pid=${KRB_SAMBA_PID[$name]}
	fi
	hz=$(getconf CLK_TCK)
	if [ "$mech" = krb ]; then
		args=(-U "alice@$KRB_REALM%$KRB_ALICE_PW" -k)
	else
		args=(-U "alice%$ALICE_PW")
	fi
	c0=$(tree_cpu "$pid")
	out=$("$SMBLOAD" -u "smb://$KRB_HOST:$port/share" "${args[@]}" \
	    -w connect -n "$N" -W "$WARM" 2>&1 | grep '^RESULT' | head -1)
	c1=$(tree_cpu "$pid")
	if [ -z "$out" ]; then
		# smbload only says errno: the client's NTSTATUS says more.
		why=$(smbclient "//$KRB_HOST/share" -p "$port" \
		    --use-kerberos=required --use-krb5-ccache="$KRB5CCNAME" \
		    -c ls 2>&1 | tail -1)
		[ "$name:$mech" = samba:krb ] && case $why in
		*BAD_TOKEN_TYPE*)
			why="$why: Samba 4.17 refuses a PAC without a domain" ;;
		esac
		printf '%-8s %-8s connect: not available (%s)\n' "$name" "$label" "$why"
		return
	fi
	CPU[$name:$label]=$(awk -v cpu=$((c1 - c0)) -v hz="$hz" -v warm="$WARM" '
	{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%.2f", 1000 * cpu / hz / (v["ops"] + warm)
	}' <<<"$out")
	awk -v name="$name" -v mech="$label" -v cpu="${CPU[$name:$label]}" '
	{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "%-8s %-8s connect: %d in %.2f s = %.0f/s, %.2f ms each; server CPU %.2f ms each\n",
		    name, mech, v["ops"], v["secs"], v["ops"] / v["secs"],
		    1000 * v["secs"] / v["ops"], cpu
	}' <<<"$out"
}

# ratio LABEL: each Samba's server CPU per login over usmbd's.
ratio() {
	local s u=${CPU[usmbd:$1]:-}

	[ -n "$u" ] || return
	for s in "${SERVERS[@]}"; do
		[ "$s" = usmbd ] || [ -z "${CPU[$s:$1]:-}" ] ||
		    awk -v s="$s" -v a="${CPU[$s:$1]}" -v b="$u" -v l="$1" \
		    'BEGIN { if (b > 0) printf "  %s: server CPU per %s login %.1f x usmbd'"'"'s\n", s, l, a / b }'
	done
}

echo "Login cost (smbload -w connect, $N connects, one client, loopback;"
echo "  krb: libsmbclient Kerberos only, alice's ticket; the server CPU is"
echo "  what the login costs the server)"
echo "Kerberos, tickets without a PAC:"
pac off
for s in "${SERVERS[@]}"; do run "$s" krb; done
ratio krb
echo "Kerberos, tickets with MIT's minimal PAC (the KDC's default):"
pac on
for s in "${SERVERS[@]}"; do run "$s" krb krb+pac; done
ratio krb+pac
echo "NTLM:"
for s in "${SERVERS[@]}"; do run "$s" ntlm; done
ratio ntlm

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
