#!/bin/bash
# [homes] and per-user share paths (worker/homes.c, daemon/conf_subst.c)
# with smbclient and impacket (t/integ/homes_client.py) as alice and bob:
#  * [homes] without a path, valid users = %S: alice's own home (her
#    passwd home) connects by her name and by "homes", lists, takes a
#    file she owns on disk; bob's home is ACCESS_DENIED to her; a name
#    that is no user is BAD_NETWORK_NAME; smbclient -L and NetShareEnum
#    list "alice", not "homes" nor "bob"; NetShareGetInfo finds "alice";
#    `usmbctl status --json` shows the tree as "alice"; names an attacker
#    tries ("." and "..", BOB, a system account's home, a passwd home of
#    "/" or with a ".." component) get nothing;
#  * path = .../%U, .../%G and .../%I: each user's file lands in his
#    directory (the client's address's); a user whose directory is
#    missing gets BAD_NETWORK_NAME; usmbctl testparm takes the config;
#  * a reload to [homes] path = .../%S without valid users: a tree held
#    across it keeps its old root, a new one gets the new path; alice
#    reaches bob's home when its mode lets her (lists, cannot write) and
#    not when it is 0700: the kernel judges, as alice.
#
# HOMES_SAMBA=1 runs the same steps against Debian's Samba 4.17 instead
# (samba_start; a reload is SIGHUP); where the two differ the expected
# answer of each is written beside the step (HACKING.md, "Home shares").
. "$(dirname "$0")/lib.sh"

integ_init
SERVER=usmbd
[ "${HOMES_SAMBA:-0}" = 1 ] && SERVER=samba
NAME=homes-test-$$.txt
mkdir -p "$T/profiles/alice" "$T/dept/alice" "$T/homes/alice" "$T/homes/bob" \
    "$T/ip/127.0.0.1"
chmod 0755 "$T/profiles" "$T/dept" "$T/homes" "$T/ip"
chmod 0777 "$T/ip/127.0.0.1"

shares1() {
	cat <<EOS
[homes]
	read only = no
	browseable = no
	valid users = %S
[prof]
	path = $T/profiles/%U
	read only = no
[dept]
	path = $T/dept/%G
	read only = no
	valid users = @%G
[byip]
	path = $T/ip/%I
	read only = no
EOS
}
shares2() {
	cat <<EOS
[homes]
	path = $T/homes/%S
	read only = no
	browseable = no
EOS
}
INTEG_SHARES=$(shares1)
integ_conf
integ_users || { fail "users"; finish; }
# accounts no client logs on as, whose passwd homes a [homes] must not
# serve: "/" (the whole system) and a path with a ".." component
id usmbdhomeroot >/dev/null 2>&1 ||
    useradd -M -d / -s /usr/sbin/nologin usmbdhomeroot
id usmbdhomedots >/dev/null 2>&1 ||
    useradd -M -d /home/../etc -s /usr/sbin/nologin usmbdhomedots
chown alice "$T/profiles/alice" "$T/dept/alice" "$T/homes/alice"
chown bob "$T/homes/bob"
chmod 0700 "$T/profiles/alice" "$T/dept/alice" "$T/homes/alice"
chmod 0755 "$T/homes/bob"
ALICE_HOME=$(getent passwd alice | cut -d: -f6)
rm -f "$ALICE_HOME/$NAME"
trap 'rm -f "$ALICE_HOME/$NAME"; integ_cleanup' EXIT

if [ "$SERVER" = samba ]; then
	PORT=$(integ_free_port)
	samba_start "$T/samba" "$PORT" "$INTEG_SHARES" ||
	    { fail "Samba start"; finish; }
	LOG=$T/samba/smbd.log
else
	integ_start || { fail "server start"; finish; }
fi

client() {	# client CMD USER PW ARGS...: homes_client.py's output
	"$PYTHON" "$ROOT/t/integ/homes_client.py" "$1" "$PORT" "$2" "$3" \
	    "${@:4}" 2>&1
}
# expect DESC GOT USMBD_WANT [SAMBA_WANT]: the server's own answer
expect() {
	local want=$3

	[ "$SERVER" = samba ] && [ $# -ge 4 ] && want=$4
	if [ "$2" = "$want" ]; then
		ok "$1: $2"
	else
		fail "$1: got '$2', want '$want'"
	fi
}
tcon() {	# tcon USER PW SHARE: the tree connect's status
	client tcon "$1" "$2" "$3" | awk '/^tcon /{ print $3 }'
}
write() {	# write USER PW SHARE NAME: the write's status
	client write "$1" "$2" "$3" "$4" | awk '/^write /{ print $4 }'
}
owner() {	# owner FILE: its owner's name, or "none"
	stat -c %U "$1" 2>/dev/null || echo none
}

# --- [homes] without a path, valid users = %S ---
expect "alice connects to her home by name" \
    "$(tcon alice "$ALICE_PW" alice)" STATUS_SUCCESS
expect "alice connects to \\\\server\\homes (her own)" \
    "$(tcon alice "$ALICE_PW" homes)" STATUS_SUCCESS
expect "alice's name in another case" \
    "$(tcon alice "$ALICE_PW" ALICE)" STATUS_SUCCESS
expect "alice writes into her home" \
    "$(write alice "$ALICE_PW" alice "$NAME")" STATUS_SUCCESS
expect "the file is in her passwd home, hers" "$(owner "$ALICE_HOME/$NAME")" alice
check "smbclient as alice lists her home" sh -c \
    "smbclient -p $PORT -m SMB3 //127.0.0.1/alice -U alice%$ALICE_PW -c ls |
    grep -q '$NAME'"
expect "bob's home refused to alice (valid users = %S)" \
    "$(tcon alice "$ALICE_PW" bob)" STATUS_ACCESS_DENIED
expect "bob connects to his own" "$(tcon bob "$BOB_PW" bob)" STATUS_SUCCESS
expect "a name that is no user and no share" \
    "$(tcon alice "$ALICE_PW" nosuchuser)" STATUS_BAD_NETWORK_NAME
# names an attacker tries: "." and "..", another user's name in another
# case, a system account's home (here /usr/sbin), a home of "/", one
# with ".." in it
for n in . .. BOB daemon; do
	want=STATUS_ACCESS_DENIED
	case $n in .|..) want=STATUS_BAD_NETWORK_NAME ;; esac
	expect "alice at \\\\server\\$n" "$(tcon alice "$ALICE_PW" "$n")" $want
done
expect "a passwd home of / is no share" \
    "$(tcon alice "$ALICE_PW" usmbdhomeroot)" STATUS_BAD_NETWORK_NAME
expect "a passwd home with a .. component is no share" \
    "$(tcon alice "$ALICE_PW" usmbdhomedots)" STATUS_BAD_NETWORK_NAME \
    STATUS_ACCESS_DENIED
smbclient -p "$PORT" -m SMB3 -L 127.0.0.1 -U "alice%$ALICE_PW" >"$T/list" 2>&1
check "smbclient -L as alice lists her home" grep -qE '^[[:space:]]+alice[[:space:]]+Disk' "$T/list"
check_fails "... not [homes] itself (browseable = no)" grep -qE '^[[:space:]]+homes[[:space:]]' "$T/list"
check_fails "... nor bob's" grep -qE '^[[:space:]]+bob[[:space:]]' "$T/list"
client enum alice "$ALICE_PW" >"$T/enum"
expect "NetShareEnum (impacket) as alice" "$(awk '/^enum /{ $1 = ""; print substr($0, 2) }' "$T/enum")" \
    "IPC\$ alice byip dept prof share"
expect "NetShareGetInfo alice" "$(awk '$2 == "alice" { $1 = $2 = ""; print substr($0, 3) }' "$T/enum")" \
    "OK Home directory of alice"
# Samba finds any user's home service by name, "homes" too
expect "NetShareGetInfo homes" "$(awk '$2 == "homes" { print $3 }' "$T/enum")" NOTFOUND OK
expect "NetShareGetInfo bob (as alice)" "$(awk '$2 == "bob" { print $3 }' "$T/enum")" NOTFOUND OK

# --- %U and %G paths ---
expect "alice writes to [prof] (%U)" "$(write alice "$ALICE_PW" prof p.txt)" STATUS_SUCCESS
expect "... into profiles/alice, hers" "$(owner "$T/profiles/alice/p.txt")" alice
expect "bob has no profiles/bob yet" "$(tcon bob "$BOB_PW" prof)" STATUS_BAD_NETWORK_NAME
mkdir "$T/profiles/bob"
chown bob "$T/profiles/bob"
chmod 0700 "$T/profiles/bob"
expect "bob writes to [prof] once it exists" "$(write bob "$BOB_PW" prof p.txt)" STATUS_SUCCESS
expect "... into profiles/bob, his" "$(owner "$T/profiles/bob/p.txt")" bob
expect "alice writes to [dept] (%G, valid users = @%G)" \
    "$(write alice "$ALICE_PW" dept d.txt)" STATUS_SUCCESS
expect "... into dept/alice (her primary group)" "$(owner "$T/dept/alice/d.txt")" alice
expect "bob's group has no dept directory" "$(tcon bob "$BOB_PW" dept)" STATUS_BAD_NETWORK_NAME
expect "alice writes to [byip] (%I)" "$(write alice "$ALICE_PW" byip i.txt)" STATUS_SUCCESS
expect "... into ip/127.0.0.1" "$(owner "$T/ip/127.0.0.1/i.txt")" alice
if [ "$SERVER" = usmbd ]; then
	check "usmbctl testparm takes [homes] and the %-paths" \
	    "$USMBCTL" testparm "$CONF"
fi

# --- status names the home share; a tree held across a reload ---
rm -f "$T/hold.in" "$T/hold.out"
mkfifo "$T/hold.in"
"$PYTHON" "$ROOT/t/integ/homes_client.py" hold "$PORT" alice "$ALICE_PW" alice \
    <"$T/hold.in" >"$T/hold.out" 2>&1 &
HOLD=$!
exec {HFD}>"$T/hold.in"
integ_until 10 grep -q '^ready' "$T/hold.out"
if [ "$SERVER" = usmbd ]; then
	integ_status_json >"$T/status.json"
	check "usmbctl status --json shows the tree as \"alice\"" "$PYTHON" -c '
import json, sys
st = json.load(open(sys.argv[1]))
names = [t.get("share") for t in st.get("shares", [])]
sys.exit(0 if "alice" in names and "homes" not in names else 1)' "$T/status.json"
fi
echo marker >"$T/homes/alice/new-root.txt"
chown alice "$T/homes/alice/new-root.txt"
INTEG_SHARES=$(shares2)
if [ "$SERVER" = samba ]; then
	{
		sed -n '1,/^\[share\]/p' "$T/samba/smb.conf" | sed '$d'
		printf '[share]\n\tpath = %s\n\tread only = no\n\n%s\n' "$SHARE" "$INTEG_SHARES"
	} >"$T/smb.conf.new" && mv "$T/smb.conf.new" "$T/samba/smb.conf"
	kill -HUP "$SAMBA_PID"
	sleep 1
else
	integ_conf
	check "usmbctl reload" "$USMBCTL" -s "$CONF" reload
fi
echo ls >&"$HFD"
integ_until 10 grep -q '^ls' "$T/hold.out"
ls_line=$(grep '^ls' "$T/hold.out" | head -1)
case " $ls_line " in
*" $NAME "*) ok "the held tree still lists the old root after the reload" ;;
*) fail "the held tree after the reload: $ls_line" ;;
esac
echo quit >&"$HFD"
exec {HFD}>&-
integ_wait_exit "$HOLD" 10 || kill -KILL "$HOLD"
check "a new tree of alice's home has the new path" sh -c \
    "smbclient -p $PORT -m SMB3 //127.0.0.1/alice -U alice%$ALICE_PW -c ls |
    grep -q new-root.txt"

# --- Unix permissions decide who enters another's home ---
expect "alice enters bob's 0755 home (no valid users)" "$(tcon alice "$ALICE_PW" bob)" STATUS_SUCCESS
check "alice lists it (smbclient)" \
    smbclient -p "$PORT" -m SMB3 //127.0.0.1/bob -U "alice%$ALICE_PW" -c ls
expect "alice cannot write there" "$(write alice "$ALICE_PW" bob a.txt)" STATUS_ACCESS_DENIED
expect "bob writes there" "$(write bob "$BOB_PW" bob b.txt)" STATUS_SUCCESS
expect "... as bob" "$(owner "$T/homes/bob/b.txt")" bob
chmod 0700 "$T/homes/bob"
expect "bob's home at 0700: refused to alice" "$(tcon alice "$ALICE_PW" bob)" \
    STATUS_ACCESS_DENIED
expect "... still bob's" "$(tcon bob "$BOB_PW" bob)" STATUS_SUCCESS
finish
