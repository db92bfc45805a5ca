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

run() {	# run PORT DIR SERVER
	timeout 120 "$PYTHON" "$ROOT/t/integ/easize_client.py" "$1" \
	    "$ALICE_PW" "$2" "$3" 2>&1
}

out=$(run "$PORT" "$SHARE" usmbd)
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
