#!/usr/bin/env bash
# What READ_DIR_ATTR costs a listing: alice lists a directory of
# FRUITCOST_FILES files (default 5,000; each with an AFP_AfpInfo and a
# resource fork) on a fruit share, by FileIdBothDirectoryInformation, on
# a connection that negotiated AAPL (Finder info, resource fork size and
# maximal access per entry) and on one that did not, alternated run by
# run (t/bench/fruitcost_client.py); then the system calls of alice's
# worker in one listing of each (strace -f, tallied).  Prints figures, fails on
# nothing but a broken setup.
#
#	bash t/bench/fruitcost.sh
#
# FRUITCOST_RUNS: runs per figure (default 9; medians, min, max).
# FRUITCOST_META: the share's fruit:metadata (default: no key, which is
# netatalk); FRUITCOST_STORE: where the files' Finder info is, "blob"
# (netatalk's xattr), "old" (the stream xattr, default) or "none"; the
# resource fork is a stream xattr unless "none".
. "$(dirname "$0")/../integ/lib.sh"

n=${FRUITCOST_FILES:-5000}
runs=${FRUITCOST_RUNS:-9}
integ_init
mkdir -p "$SHARE/d"
meta=${FRUITCOST_META:+	fruit:metadata = $FRUITCOST_META}
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '%s\n' '[fruit]' "	path = $SHARE" \
	'	read only = no' '	vfs objects = catia fruit streams_xattr' "$meta") integ_conf
integ_users || exit 1
"$PYTHON" - "$SHARE/d" "$n" "${FRUITCOST_STORE:-old}" <<'PY'
import os, struct, sys
d, n, store = sys.argv[1], int(sys.argv[2]), sys.argv[3]
afp = bytearray(60)
afp[0:8] = b"AFP\0\0\0\1\0"
afp[16:24] = b"TEXTttxt"
for i in range(1, n + 1):
    p = os.path.join(d, "file%05d.txt" % i)
    open(p, "w").close()
    if store == "none":
        continue
    if store == "blob":
        # netatalk's AppleDouble blob as Samba writes it (proto/adouble.h)
        b = bytearray(402)
        struct.pack_into(">II16xH", b, 0, 0x00051607, 0x00020000, 8)
        for i, e in enumerate(((4, 154, 0), (8, 354, 16), (9, 122, 32),
                               (14, 370, 4), (0x80444556, 374, 0),
                               (0x80494E4F, 382, 0), (0x8053594E, 390, 0),
                               (0x8053567E, 398, 0))):
            struct.pack_into(">III", b, 26 + 12 * i, *e)
        b[122:154] = afp[16:48]
        os.setxattr(p, "user.org.netatalk.Metadata", bytes(b))
    else:
        os.setxattr(p, "user.usmbd.stream.AFP_AfpInfo", bytes(afp))
    os.setxattr(p, "user.usmbd.stream.AFP_Resource", b"resource")
PY
chown -R alice "$SHARE/d"
integ_start || exit 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "impacket FileIdBothDirectoryInformation listing of $n files, $runs alternated runs:"
"$PYTHON" "$ROOT/t/bench/fruitcost_client.py" "$PORT" alice "$ALICE_PW" \
    "$runs" fruit d || exit 1
worker=$(integ_worker_of alice)
if command -v strace >/dev/null && [ -n "$worker" ]; then
	echo "system calls of alice's worker in one listing (strace -f, tallied):"
	for m in plain aapl; do
		strace -f -s 0 -o "$T/strace.$m" -p "$worker" 2>/dev/null &
		sp=$!
		sleep 1
		FRUITCOST_ONLY=$m "$PYTHON" "$ROOT/t/bench/fruitcost_client.py" \
		    "$PORT" alice "$ALICE_PW" 1 fruit d >/dev/null
		sleep 0.5
		kill -INT "$sp"
		wait "$sp" 2>/dev/null
		strace_tally "$T/strace.$m"
		printf '%-6s total %s, lgetxattr %s, llistxattr %s, faccessat2 %s, newfstatat %s\n' \
		    "$m" "$(awk '$NF == "total" {print $4}' "$T/strace.$m")" \
		    "$(awk '$NF == "lgetxattr" {print $4}' "$T/strace.$m")" \
		    "$(awk '$NF == "llistxattr" {print $4}' "$T/strace.$m")" \
		    "$(awk '$NF == "faccessat2" {print $4}' "$T/strace.$m")" \
		    "$(awk '$NF == "newfstatat" || $NF == "statx" {s += $4} END {print s}' "$T/strace.$m")"
	done
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
