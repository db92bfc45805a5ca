#!/bin/bash
# 8.3 short names (Samba's `mangled names`, HACKING.md "Short names"), with
# real clients: FileAlternateNameInformation on shares with yes, illegal
# (the default) and no; ShortName in FileBothDirectoryInformation and
# FileIdBothDirectoryInformation with yes only; opens, a directory on the
# way, search patterns, rename and hard-link targets by short name; a
# file recreated by its short name gets its long name back; vetoed and
# (hide unreadable) unreadable names not reachable by their short names;
# a link out of the share refused by its short name as by its long one.
# A case-sensitive share matches short names as written (upper case); a
# name hidden by attribute (hide dot files) is reachable by its short
# name as by its long one.
# Clients: t/integ/mangle_client.py (impacket) and smbclient (allinfo,
# ls and get by short name); smbtorture 4.22's
# smb2.name-mangling.mangled-mask on a `mangled names = yes` share when
# Samba 4.22's smbtorture is installed (scripts/samba-ref.sh); Debian's
# smbtorture smb2.dir.one on that share (its listings' ShortName and
# EaSize against FileAlternateNameInformation and FileAllInformation; on
# the default share it fails on the ShortName: t/compat/torture.xfail).
#
# MANGLE_SAMBA=1 runs the same steps against Debian's Samba 4.17 and
# prints its lines prefixed "samba:", not counted: what differs is in
# HACKING.md, "Short names".
. "$(dirname "$0")/lib.sh"

integ_init
shares() {	# shares DIR: five shares over one directory
	cat <<EOS
[yes]
	path = $1
	read only = no
	mangled names = yes
[ill]
	path = $1
	read only = no
[no]
	path = $1
	read only = no
	mangled names = no
[veto]
	path = $1
	read only = no
	mangled names = yes
	veto files = /secret*/
[hide]
	path = $1
	read only = no
	hide unreadable = yes
[cs]
	path = $1
	read only = no
	case sensitive = yes
	hide dot files = yes
EOS
}
D=$T/names
mkdir -p "$D"
chmod 0777 "$D"
INTEG_SHARES=$(shares "$D")
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/mangle_client.py
client_checks "mangle_client.py" "$PYTHON" "$C" "$PORT" "$D" usmbd

# smbclient: allinfo's altname, ls and get by it
smbc() {	# smbc PORT SHARE CMD
	smbclient -p "$1" -U "alice%$ALICE_PW" "//127.0.0.1/$2" -c "$3" 2>&1
}
smbclient_steps() {	# smbclient_steps PORT: prints ok/FAIL lines
	local port=$1 out sn
	printf 'smbclient body\n' >"$D/smbclient long file name.txt"
	chown alice "$D/smbclient long file name.txt"
	out=$(smbc "$port" ill 'allinfo "smbclient long file name.txt"')
	sn=$(sed -n 's/^altname: //p' <<<"$out")
	case $sn in
	*~*) echo "ok allinfo: altname $sn" ;;
	*) echo "FAIL allinfo: no short name: $out"; return ;;
	esac
	out=$(smbc "$port" ill "ls $sn")
	if grep -q "smbclient long file name.txt" <<<"$out"; then
		echo "ok ls $sn lists the long name"
	else
		echo "FAIL ls $sn: $out"
	fi
	out=$(smbc "$port" ill "get $sn $T/got.$port")
	if cmp -s "$T/got.$port" "$D/smbclient long file name.txt"; then
		echo "ok get $sn: the long file's data"
	else
		echo "FAIL get $sn: $out"
	fi
	out=$(smbc "$port" no 'allinfo "smbclient long file name.txt"')
	sn=$(sed -n 's/^altname: //p' <<<"$out")
	[ "$sn" = "smbclient lo" ] && echo "ok mangled names = no: altname $sn" ||
	    echo "FAIL mangled names = no: altname $sn"
	rm -f "$D/smbclient long file name.txt"
}
client_checks "smbclient" smbclient_steps "$PORT"

# smbtorture 4.22: a search by a short name (needs listed short names)
if root=$("$ROOT/scripts/samba-ref.sh" path 2>/dev/null); then
	out=$("$ROOT/scripts/samba-ref.sh" run smbtorture "//127.0.0.1/yes" \
	    -p "$PORT" -U "alice%$ALICE_PW" --target=samba3 \
	    smb2.name-mangling.mangled-mask 2>&1)
	if grep -q '^success: mangled-mask' <<<"$out"; then
		ok "smbtorture 4.22 smb2.name-mangling.mangled-mask (yes)"
	else
		fail "smbtorture 4.22 mangled-mask: $(tail -n 5 <<<"$out")"
	fi
else
	echo "skipped: Samba 4.22's smbtorture is not installed (scripts/samba-ref.sh install)"
fi

# smbtorture 4.17: every listing class of one file against QUERY_INFO,
# which needs listed short names (and EaSize: HACKING.md "Listings and
# EaSize")
out=$(timeout 120 smbtorture "//127.0.0.1/yes" -p "$PORT" \
    -U "alice%$ALICE_PW" --target=samba3 smb2.dir.one 2>&1)
if grep -Eq '^success: (smb2\.dir\.)?one$' <<<"$out"; then
	ok "smbtorture smb2.dir.one (yes)"
else
	fail "smbtorture smb2.dir.one (yes): $(tail -n 5 <<<"$out")"
fi

if [ "${MANGLE_SAMBA:-0}" = 1 ]; then
	integ_stop
	rm -rf "$D"
	mkdir -p "$D"
	chmod 0777 "$D"
	SP=$(integ_free_port)
	samba_start "$T/samba" "$SP" "$(shares "$D")" ||
	    { fail "samba starts"; finish; }
	"$PYTHON" "$C" "$SP" "$D" samba 2>&1 | sed 's/^/samba: /'
	smbclient_steps "$SP" | sed 's/^/samba: /'
	samba_stop
fi
finish
