#!/bin/bash
# Samba's name rules of a share, with real clients: `veto files` (names
# absent from listings, not openable by any spelling or stream suffix,
# not creatable, no rename or link target), `delete veto files` off and
# on, `hide files` and `hide dot files` (FILE_ATTRIBUTE_HIDDEN in listings
# and QUERY_INFO), and a share without the keys as before.  Client:
# t/integ/veto_client.py (impacket), plus smbclient.
#
# VETO_SAMBA=1 runs the same client against Debian's Samba (/usr/sbin/smbd,
# a private smb.conf from t/compat/samba.conf.in with the same shares) and
# prints its lines prefixed "samba:", not counted: what differs is in
# HACKING.md, "Name rules".
. "$(dirname "$0")/lib.sh"

integ_init
VETO='veto files = /.DS_Store/._*/Thumbs.db/.snapshot/'
shares() {	# shares DIR: the four shares of the checks, under DIR
	cat <<EOS
[veto]
	path = $1/veto
	read only = no
	$VETO
	hide files = /*.bak/

[vdel]
	path = $1/vdel
	read only = no
	$VETO
	delete veto files = yes

[plain]
	path = $1/plain
	read only = no

[nodot]
	path = $1/nodot
	read only = no
	hide dot files = no
EOS
}
for d in veto vdel plain nodot; do
	mkdir -p "$T/$d"
	chmod 0777 "$T/$d"
done
INTEG_SHARES=$(shares "$T")
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/veto_client.py
run() {		# run PORT SHARE MODE [PREFIX]
	client_checks "veto_client.py $3" "$PYTHON" "$C" "$1" "$2" "$T/$2" "$3"
}
run "$PORT" veto veto
run "$PORT" vdel delete
run "$PORT" plain plain
run "$PORT" nodot nodot

# smbclient: what a listing and an open look like from a real client
mkdir -p "$T/veto/dir"
touch "$T/veto/dir/Thumbs.db" "$T/veto/dir/seen.txt" "$T/veto/dir/.dot"
chown -R alice "$T/veto/dir"
smbc() {
	smbclient -p "$PORT" -U "alice%$ALICE_PW" //127.0.0.1/veto -c "$1" 2>&1
}
out=$(smbc 'ls dir\*')
if grep -q seen.txt <<<"$out" && ! grep -q Thumbs.db <<<"$out"; then
	ok "smbclient ls: seen.txt listed, Thumbs.db not"
else
	fail "smbclient ls: $out"
fi
if grep -qE '^ +\.dot +AH? +|^ +\.dot +H ' <<<"$out"; then
	ok "smbclient ls: .dot shown with H"
else
	fail "smbclient ls: .dot not hidden: $(grep '\.dot' <<<"$out")"
fi
out=$(smbc 'get dir\THUMBS.DB /dev/null')
if grep -q NT_STATUS_OBJECT_NAME_NOT_FOUND <<<"$out"; then
	ok "smbclient get dir\\THUMBS.DB: NT_STATUS_OBJECT_NAME_NOT_FOUND"
else
	fail "smbclient get dir\\THUMBS.DB: $out"
fi
out=$(smbc 'allinfo dir\.dot')
if grep -qE '^attributes: .*H' <<<"$out"; then
	ok "smbclient allinfo dir\\.dot: hidden"
else
	fail "smbclient allinfo dir\\.dot: $out"
fi
# smbclient's rmdir of a directory holding only a vetoed name
mkdir -p "$T/vdel/rm1" "$T/veto/rm2"
touch "$T/vdel/rm1/Thumbs.db" "$T/veto/rm2/Thumbs.db"
chown -R alice "$T/vdel/rm1" "$T/veto/rm2"
out=$(smbclient -p "$PORT" -U "alice%$ALICE_PW" //127.0.0.1/vdel -c 'rmdir rm1' 2>&1)
if [ ! -e "$T/vdel/rm1" ]; then
	ok "smbclient rmdir with delete veto files: rm1 and its Thumbs.db gone"
else
	fail "smbclient rmdir with delete veto files: $out; left: $(ls -A "$T/vdel/rm1")"
fi
out=$(smbc 'rmdir rm2')
if grep -q NT_STATUS_DIRECTORY_NOT_EMPTY <<<"$out" && [ -e "$T/veto/rm2/Thumbs.db" ]; then
	ok "smbclient rmdir without it: NT_STATUS_DIRECTORY_NOT_EMPTY"
else
	fail "smbclient rmdir without delete veto files: $out"
fi
check "the server is still up" integ_ping

if [ "${VETO_SAMBA:-0}" = 1 ]; then
	S=$T/samba
	SPORT=$(integ_free_port)
	mkdir -p "$S"
	for d in veto vdel plain nodot; do
		mkdir -p "$S/$d"
		chmod 0777 "$S/$d"
	done
	samba_start "$S" "$SPORT" "$(shares "$S")" "alice:$ALICE_PW"
	for m in veto:veto vdel:delete plain:plain nodot:nodot; do
		"$PYTHON" "$C" "$SPORT" "${m%%:*}" "$S/${m%%:*}" "${m#*:}" 2>&1 |
		    sed 's/^/samba: /'
	done
	samba_stop
fi
finish
