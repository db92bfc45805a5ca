#!/usr/bin/env bash
# What EaSize costs a listing (HACKING.md "Listings and EaSize"): bob
# lists directories of EACOST_FILES files (default 10,000, each with
# usmbd's DOS xattr, as files made over SMB have it) with
# FileIdBothDirectoryInformation (Explorer's and smbclient's class),
# alternated run by run (t/bench/eacost_client.py): "plain" (no EAs) and
# "eas" (two EAs each) through shares with `ea support` yes (EaSize
# counted: one listxattrat per entry, one getxattrat per EA) and no (the
# listing as it was before EaSize: one getxattrat of the DOS xattr per
# entry); then the system calls of bob's worker in one listing of each
# (strace -f, tallied); then Debian's Samba 4.17 (t/compat/samba.conf.in: EAs and
# DOS attributes in user xattrs, acl_xattr, streams_xattr) on copies of
# the same two directories, its EAs under its own names.  Prints
# figures, fails on nothing but a broken setup.
#
#	bash t/bench/eacost.sh
#
# EACOST_RUNS: runs per figure (default 9; medians, min, max);
# EACOST_SAMBA=0 leaves Samba out.
. "$(dirname "$0")/../integ/lib.sh"

n=${EACOST_FILES:-10000}
runs=${EACOST_RUNS:-9}
integ_init
mkdir -p "$T/plain" "$T/eas" "$T/s-plain" "$T/s-eas"
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '%s\n' \
	'[plain]' "	path = $T/plain" '[eas]' "	path = $T/eas" \
	'[plain-no]' "	path = $T/plain" '	ea support = no' \
	'[eas-no]' "	path = $T/eas" '	ea support = no') integ_conf
integ_users || exit 1
"$PYTHON" - "$T" "$n" <<'PY'
import os, struct, sys
t, n = sys.argv[1], int(sys.argv[2])
# usmbd's DOS xattr, version 1 (vfs/xattr.c): "UD", 1, 0, attrs, create time
dos = b"UD\x01\x00" + struct.pack("<IQ", 0x20, 132000000000000000)
eas = ((b"EAONE", b"VALUE1"), (b"SecondEA", b"a longer value 2"))
for i in range(1, n + 1):
    name = "file%05d.txt" % i
    for d, prefix in (("plain", None), ("eas", "user.usmbd.ea."),
                      ("s-plain", None), ("s-eas", "user.")):
        p = os.path.join(t, d, name)
        open(p, "w").close()
        if not d.startswith("s-"):
            os.setxattr(p, "user.usmbd.dos", dos)
        if prefix:
            for k, v in eas:
                os.setxattr(p, prefix + k.decode(), v)
PY
chown -R bob "$T/plain" "$T/eas" "$T/s-plain" "$T/s-eas"
integ_start || exit 1
smbclient -p "$PORT" -m SMB3 //127.0.0.1/plain -U "bob%$BOB_PW" -c 'ls x' \
    >/dev/null 2>&1
worker=$(integ_worker_of bob)
[ -n "$worker" ] || { echo "no worker of bob"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "usmbd: FileIdBothDirectoryInformation listing of $n files, $runs alternated runs:"
"$PYTHON" "$ROOT/t/bench/eacost_client.py" "$PORT" bob "$BOB_PW" "$runs" \
    "$worker" 37 plain-no plain eas-no eas || exit 1
if command -v strace >/dev/null; then
	echo "system calls of bob's worker in one listing (strace -f, tallied):"
	for s in plain-no plain eas-no eas; do
		strace -f -s 0 -o "$T/strace.$s" -p "$worker" 2>/dev/null &
		sp=$!
		sleep 1
		"$PYTHON" "$ROOT/t/bench/eacost_client.py" "$PORT" bob "$BOB_PW" \
		    0 "$worker" 37 "$s" >/dev/null
		sleep 0.5
		kill -INT "$sp"
		wait "$sp" 2>/dev/null
		strace_tally "$T/strace.$s"
		printf '%-8s total %s, listxattr(at) %s, getxattr(at) %s, statx %s\n' \
		    "$s" "$(awk '$NF == "total" {print $4}' "$T/strace.$s")" \
		    "$(awk '$NF == "llistxattr" || $NF == "listxattrat" {s += $4} END {print s + 0}' "$T/strace.$s")" \
		    "$(awk '$NF == "lgetxattr" || $NF == "getxattrat" {s += $4} END {print s + 0}' "$T/strace.$s")" \
		    "$(awk '$NF == "newfstatat" || $NF == "statx" {s += $4} END {print s}' "$T/strace.$s")"
	done
fi
if [ "${EACOST_SAMBA:-1}" = 1 ]; then
	integ_stop
	SP=$(integ_free_port)
	samba_start "$T/samba" "$SP" "$(printf '%s\n' \
	    '[plain]' "	path = $T/s-plain" '[eas]' "	path = $T/s-eas" \
	    '[plain-no]' "	path = $T/s-plain" '	ea support = no' \
	    '[eas-no]' "	path = $T/s-eas" '	ea support = no')" ||
	    { echo "samba does not start"; exit 1; }
	echo "Samba $(/usr/sbin/smbd -V | awk '{print $2}'): the same, its smbd processes' CPU:"
	"$PYTHON" "$ROOT/t/bench/eacost_client.py" "$SP" bob "$BOB_PW" "$runs" \
	    "children:$SAMBA_PID" 37 plain-no plain eas-no eas || exit 1
	samba_stop
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
