#!/bin/bash
# Per-share keys offices set on Samba, with real clients (smbclient and
# impacket, t/integ/sharekeys_client.py):
#  * hosts allow / hosts deny of a share, judged at TREE_CONNECT: a
#    refused tree connect is NT_STATUS_ACCESS_DENIED while another share
#    of the same session connects; 127.0.0.1 is let in unless a deny list
#    names it (Samba's rule), so the allow list is seen refusing
#    127.0.0.2; smbclient -L lists the shares all the same (as Samba);
#  * the same lists for bob's second session on alice's connection
#    (relayed to bob's worker): judged by the address the master read
#    from the connection's socket (t/integ/sharekeys_relay.py);
#  * the prefix forms of the lists ([pfx]: an IPv6 "fe80:", which loads,
#    and "127.0.0. EXCEPT 127.0.0.2"), for a session and a relayed one;
#  * force create mode / force directory mode (bits set after the masks)
#    and inherit permissions (a 2770 parent of group skteam: new directory
#    2770, new file 0660), and a share without the keys as before, read
#    from the disk.
# The server runs with umask 022, as an init script leaves it.
#
# SHAREKEYS_SAMBA=1 runs the same steps against Debian's Samba
# (/usr/sbin/smbd, t/compat/samba.conf.in plus the same shares) and
# prints its lines prefixed "samba:", not counted: what differs is in
# HACKING.md, "Share keys".
. "$(dirname "$0")/lib.sh"

integ_init
umask 022
shares() {	# shares DIR: the shares of the checks, under DIR
	cat <<EOS
[only10]
	path = $1/only10
	read only = no
	hosts allow = 10.0.0.0/8

[deny1]
	path = $1/deny1
	read only = no
	hosts deny = 127.0.0.1

[deny2]
	path = $1/deny2
	read only = no
	hosts deny = 127.0.0.2

[pfx]
	path = $1/pfx
	read only = no
	hosts allow = fe80: 127.0.0. EXCEPT 127.0.0.2
	hosts deny = ALL

[plain]
	path = $1/plain
	read only = no

[force]
	path = $1/force
	read only = no
	force create mode = 0020
	force directory mode = 2070

[inherit]
	path = $1/inherit
	read only = no
	inherit permissions = yes
	create mask = 0600
	force create mode = 0001
EOS
}
mkdirs() {	# mkdirs DIR
	local d

	for d in only10 deny1 deny2 pfx plain force inherit; do
		mkdir -p "$1/$d"
		chmod 0777 "$1/$d"
	done
	mkdir -p "$1/inherit/team"
	chgrp skteam "$1/inherit/team"
	chmod 2770 "$1/inherit/team"
}
getent group skteam >/dev/null || groupadd skteam
INTEG_SHARES=$(shares "$T")
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
usermod -a -G skteam alice
mkdirs "$T"
integ_start || exit 1
echo hello >"$T/src.txt"

# steps PORT DIR: prints "ok ..." / "FAIL ..." lines
steps() {
	local port=$1 dir=$2 out m

	smbc() {	# smbc SHARE CMD
		smbclient -p "$port" -U "alice%$ALICE_PW" "//127.0.0.1/$1" \
		    -c "$2" 2>&1
	}
	expect() {	# expect DESC WANT GOT
		if [ "$2" = "$3" ]; then
			echo "ok $1: $3"
		else
			echo "FAIL $1: $3, expected $2"
		fi
	}
	out=$(smbc only10 'ls')
	if grep -q NT_STATUS <<<"$out"; then
		echo "FAIL smbclient from 127.0.0.1 to [only10] (hosts allow = 10.0.0.0/8): $(grep NT_STATUS <<<"$out" | head -1), expected a listing (loopback is let in)"
	else
		echo "ok smbclient from 127.0.0.1 to [only10] (hosts allow = 10.0.0.0/8): listed (loopback is let in)"
	fi
	out=$(smbc deny1 'ls')
	expect "smbclient from 127.0.0.1 to [deny1] (hosts deny = 127.0.0.1)" \
	    "tree connect failed: NT_STATUS_ACCESS_DENIED" \
	    "$(grep -o 'tree connect failed: NT_STATUS_[A-Z_]*' <<<"$out")"
	out=$(smbc plain 'ls')
	if grep -q NT_STATUS <<<"$out"; then
		echo "FAIL smbclient to [plain]: $(grep NT_STATUS <<<"$out" | head -1)"
	else
		echo "ok smbclient to [plain]: listed"
	fi
	out=$(smbclient -p "$port" -U "alice%$ALICE_PW" -L 127.0.0.1 2>&1)
	for m in only10 deny1 plain; do
		if grep -qE "^[[:space:]]+$m[[:space:]]+Disk" <<<"$out"; then
			echo "ok smbclient -L lists [$m]"
		else
			echo "FAIL smbclient -L does not list [$m]: $out"
		fi
	done
	out=$("$PYTHON" "$ROOT/t/integ/sharekeys_client.py" "$port" 127.0.0.2 \
	    alice "$ALICE_PW" only10 deny1 plain pfx 2>&1)
	expect "impacket from 127.0.0.2 to [only10]" \
	    "only10 STATUS_ACCESS_DENIED" "$(grep '^only10 ' <<<"$out")"
	expect "impacket from 127.0.0.2 to [deny1]" "deny1 OK" \
	    "$(grep '^deny1 ' <<<"$out")"
	expect "impacket from 127.0.0.2 to [plain]" "plain OK" \
	    "$(grep '^plain ' <<<"$out")"
	expect "impacket from 127.0.0.2 to [pfx] (127.0.0. EXCEPT 127.0.0.2)" \
	    "pfx STATUS_ACCESS_DENIED" "$(grep '^pfx ' <<<"$out")"
	out=$("$PYTHON" "$ROOT/t/integ/sharekeys_client.py" "$port" 127.0.0.1 \
	    alice "$ALICE_PW" only10 deny1 pfx 2>&1)
	expect "impacket from 127.0.0.1 to [only10] [deny1] [pfx]" \
	    "only10 OK deny1 STATUS_ACCESS_DENIED pfx OK" "$(echo $out)"
	# bob's session on alice's connection (relayed to bob's worker):
	# judged by the connection's real address, whichever it is
	out=$("$PYTHON" "$ROOT/t/integ/sharekeys_relay.py" "$port" 127.0.0.2 \
	    only10 deny1 deny2 plain pfx 2>&1)
	expect "bob's second session from 127.0.0.2: [only10] [deny1] [deny2] [plain] [pfx]" \
	    "only10 STATUS_ACCESS_DENIED deny1 OK deny2 STATUS_ACCESS_DENIED plain OK pfx STATUS_ACCESS_DENIED" \
	    "$(echo $out)"
	out=$("$PYTHON" "$ROOT/t/integ/sharekeys_relay.py" "$port" 127.0.0.1 \
	    only10 deny1 deny2 pfx 2>&1)
	expect "bob's second session from 127.0.0.1: [only10] [deny1] [deny2] [pfx]" \
	    "only10 OK deny1 STATUS_ACCESS_DENIED deny2 OK pfx OK" "$(echo $out)"

	# new files and directories, their modes on disk
	for m in plain force inherit; do
		smbc $m "put $T/src.txt new.txt; mkdir newdir" >/dev/null
	done
	smbc inherit "put $T/src.txt team\\new.txt; mkdir team\\newdir" >/dev/null
	expect "[plain] new file" 644 "$(stat -c %a "$dir/plain/new.txt")"
	expect "[plain] new directory" 755 "$(stat -c %a "$dir/plain/newdir")"
	expect "[force] new file (force create mode = 0020)" 664 \
	    "$(stat -c %a "$dir/force/new.txt")"
	expect "[force] new directory (force directory mode = 2070)" 2775 \
	    "$(stat -c %a "$dir/force/newdir")"
	expect "[inherit] new file under a 0777 root" 666 \
	    "$(stat -c %a "$dir/inherit/new.txt")"
	expect "[inherit] new directory under a 0777 root" 777 \
	    "$(stat -c %a "$dir/inherit/newdir")"
	expect "[inherit] new file in team (2770, group skteam)" "660 skteam" \
	    "$(stat -c '%a %G' "$dir/inherit/team/new.txt")"
	expect "[inherit] new directory in team" "2770 skteam" \
	    "$(stat -c '%a %G' "$dir/inherit/team/newdir")"
}
client_checks "sharekeys steps" steps "$PORT" "$T"
check "the refusal is logged" grep -q "share deny1 refused to 127.0.0.1 (hosts allow/deny)" "$LOG"
check "bob's second sessions were relayed" grep -q "session .* of bob relayed from worker" "$LOG"
check "a relayed session's refusal names the real address" \
    grep -q "worker bob: 127.0.0.2: share deny2 refused to 127.0.0.2" "$LOG"
check "the server is still up" integ_ping

if [ "${SHAREKEYS_SAMBA:-0}" = 1 ]; then
	S=$T/samba
	SPORT=$(integ_free_port)
	mkdir -p "$S"
	mkdirs "$S"
	# acl_xattr would give new names the parent's inherited NT ACL
	# (0775 here), not the modes these keys make: off for them; and
	# usmbd never gives a new file x bits for its DOS attributes
	# (Samba's map archive)
	samba_start "$S" "$SPORT" "$(shares "$S" |
	    sed 's/^\[.*\]$/&\n\tvfs objects = streams_xattr\n\tmap archive = no/')" \
	    "alice:$ALICE_PW" "bob:$BOB_PW"
	steps "$SPORT" "$S" 2>&1 | sed 's/^/samba: /'
	samba_stop
fi
finish
