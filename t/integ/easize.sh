#!/usr/bin/env bash
# EaSize in directory listings (worker/smb2_dir.c dir_entry_xattrs,
# HACKING.md "Listings and EaSize"): every listing level with the field
# gives each entry the EaSize QUERY_INFO gives (FileEaInformation,
# FileAllInformation), the length of the file's FILE_FULL_EA_INFORMATION
# list: a file with two EAs, one with none, a directory with one, a
# symlink to the first, a file with a user xattr that is not an EA.  On a
# share with `ea support = no`, EaSize 0, queries NO_EAS_ON_FILE, sets and
# creates with EAs EAS_NOT_SUPPORTED (t/integ/easize_client.py, impacket).
# The symlink's entry also shows its target's DOS attributes and creation
# time, from the target's DOS xattr.
# As the attacker: bob's 0600 file with an EA, and a symlink to it, list
# EaSize 0 to alice (she cannot read its EAs), and an entry bob keeps
# replacing by symlinks out of the share while alice lists never shows
# another file's EaSize (usmbd only).
# The same steps against Debian's Samba 4.17 with EASIZE_SAMBA=1 (printed,
# not counted: HACKING.md says where it differs).
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_SHARES="[noea]
	path = $SHARE
	read only = no
	ea support = no"
integ_conf
integ_users
integ_start || exit 1

# bob's files in foreign/, and his loop replacing "swap" while alice lists
# (bounded: EASIZE_RACE_S seconds, 2 by default)
F=$SHARE/foreign
mkdir -p "$F" && chmod 1777 "$F"
V=$(head -c 1000 /dev/zero | tr '\0' x)
runuser -u bob -- sh -c "umask 077; echo p >$F/priv &&
    setfattr -n user.usmbd.ea.PRIVNAME -v $V $F/priv &&
    echo p >$F/pub && chmod 0644 $F/pub &&
    setfattr -n user.usmbd.ea.PUBNAME -v $V $F/pub && ln -s priv $F/link" ||
    fail "bob's files"
runuser -u bob -- bash -c "umask 022; end=\$((SECONDS + ${EASIZE_RACE_S:-2} + 3))
while [ \$SECONDS -lt \$end ]; do
	echo a >$F/s.f && setfattr -n user.usmbd.ea.RACE -v $V $F/s.f &&
	    mv -Tf $F/s.f $F/swap
	for t in /etc/shadow priv /root; do
		ln -sfn \$t $F/s.l && mv -Tf $F/s.l $F/swap
	done
done" &
racer=$!

run() {	# run PORT DIR SERVER
	timeout 120 "$PYTHON" "$ROOT/t/integ/easize_client.py" "$1" \
	    "$ALICE_PW" "$2" "$3" 2>&1
}

out=$(run "$PORT" "$SHARE" usmbd)
kill "$racer" 2>/dev/null
wait "$racer" 2>/dev/null
while IFS= read -r line; do
	case $line in
	ok\ *) ok "${line#ok }" ;;
	FAIL\ *) fail "${line#FAIL }" ;;
	esac
done <<<"$out"
if ! grep -q '^ok \|^FAIL ' <<<"$out" || grep -q Traceback <<<"$out"; then
	fail "the client ran to its end"
	sed 's/^/     /' <<<"$out" | tail -n 15
fi

if [ "${EASIZE_SAMBA:-0}" = 1 ]; then
	integ_stop
	D=$T/samba-share
	mkdir -p "$D"
	chmod 1777 "$D"
	SP=$(integ_free_port)
	SHARE=$D samba_start "$T/samba" "$SP" "[noea]
	path = $D
	read only = no
	ea support = no" || { fail "samba starts"; finish; }
	run "$SP" "$D" samba | sed 's/^/samba: /'
	samba_stop
fi
finish
