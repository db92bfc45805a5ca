#!/usr/bin/env bash
# Extended attributes and the DOS xattr, as the Linux kernel client found
# them wanting (issue 22, items 3 and 6).
#
# EA names keep the case they were set with and compare without it: a set,
# a replacement in another case (one EA, the new spelling), a query naming
# EAs in another case, a deletion by an empty value, EAs of a CREATE
# context, EAs an older usmbd stored upper-cased; FileEaInformation and
# FileAllInformation agree on EaSize (t/integ/files_ea_client.py, impacket).
#
# A share on a file system that keeps no user xattrs (ramfs, which stands
# in for the tmpfs of kernels before 6.6): files and directories are
# created, and timestamps set as touch -d, cp -a and tar x set them take
# effect with SUCCESS; the creation time and attributes that have nowhere
# to go are dropped (as Samba drops them), queries do not fail, EA sets
# are STATUS_EAS_NOT_SUPPORTED, and the worker logs it once.
#
# On both shares, a write time set through a handle stays when that
# handle writes afterwards (the Linux client's cached writes may reach
# the server after its SET_INFO; MS-FSA 2.1.5.14.2) or sets EndOfFile or
# AllocationSize (2.1.5.14.4), on disk and by QUERY_INFO, and a write or
# an EndOfFile set through another handle moves it.
. "$(dirname "$0")/lib.sh"

integ_init
NOX=$T/nox
mkdir -p "$NOX"
# ramfs has no xattr handler at all: every user.* call is EOPNOTSUPP
if ! mount -t ramfs -o mode=1777 usmbd-nox "$NOX"; then
	fail "ramfs mounted for the share without user xattrs"
	finish
fi
trap 'rc=$?; umount -l "$NOX" 2>/dev/null; (exit $rc); integ_cleanup' EXIT
if /usr/bin/python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.x", b"1")' "$NOX" 2>/dev/null; then
	fail "the ramfs share refuses user xattrs (this kernel's ramfs keeps them: the test proves nothing)"
fi
INTEG_SHARES="[nox]
	path = $NOX
	read only = no"
integ_conf
integ_users
integ_start || exit 1

client() {	# client MODE DIR LABEL [SHARE]
	local out line

	out=$(timeout 120 "$PYTHON" "$ROOT/t/integ/files_ea_client.py" \
	    "$PORT" "$ALICE_PW" "$1" "$2" ${4:+"$4"} 2>&1)
	while IFS= read -r line; do
		case $line in
		ok\ *) ok "$3: ${line#ok }" ;;
		FAIL\ *) fail "$3: ${line#FAIL }" ;;
		esac
	done <<<"$out"
	if ! grep -q '^ok \|^FAIL ' <<<"$out" || grep -q Traceback <<<"$out"; then
		fail "$3: the client ran to its end"
		sed 's/^/     /' <<<"$out" | tail -n 15
	fi
}

client ea "$SHARE" "EA names"
client nox "$NOX" "no user xattrs"
client sticky "$SHARE" "write time set" share
client sticky "$NOX" "write time set" nox

# the same through smbclient: put, utimes (all four times), setmode, mkdir
S=//127.0.0.1/nox
smb() {
	timeout 60 smbclient "$S" -p "$PORT" -U "alice%$ALICE_PW" -m SMB3 -c "$1" 2>&1
}
L=$T/local
mkdir -p "$L"
echo hello > "$L/f"
out=$(smb "put $L/f f; mkdir d; utimes f 2001:02:03-04:05:06 2002:02:03-04:05:06 2003:02:03-04:05:06 -1; setmode f +h")
if [ -f "$NOX/f" ] && [ -d "$NOX/d" ]; then ok "smbclient: put and mkdir on the share without user xattrs"
else fail "smbclient: put and mkdir on the share without user xattrs"; echo "$out"; fi
if ! grep -q NT_STATUS <<<"$out"; then ok "smbclient: utimes and setmode succeed"
else fail "smbclient: utimes and setmode succeed"; echo "$out"; fi
m=$(TZ=UTC stat -c %y "$NOX/f")
case $m in
2003-02-03\ 04:05:06*) ok "smbclient: utimes set the mtime ($m)" ;;
*) fail "smbclient: utimes set the mtime ($m)" ;;
esac
out=$(smb "allinfo f; ls")
if grep -q "write_time: *Mon Feb  3 04:05:06 2003" <<<"$out" && ! grep -q NT_STATUS <<<"$out"; then
	ok "smbclient: allinfo and ls answer, the write time shown"
else
	fail "smbclient: allinfo and ls answer, the write time shown"; echo "$out"
fi
n=$(grep -c "keeps no user xattrs" "$LOG")
if [ "$n" = 1 ]; then ok "the worker says once that DOS attributes are dropped"
else fail "the worker says once that DOS attributes are dropped ($n lines)"; fi
finish
