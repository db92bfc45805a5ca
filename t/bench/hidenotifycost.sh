#!/usr/bin/env bash
# What `hide unreadable` costs CHANGE_NOTIFY: bob watches a directory
# (file names) through a share without the key and through one with it
# while HIDENOTIFY_FILES files (default 200, what one watch's queue holds
# before it overflows; not bob's, 0644, so each is judged with calls)
# are made there locally; the system calls of bob's worker meanwhile
# (strace -f, tallied), per share.  Prints figures, fails on nothing but a
# broken setup.
#
#	bash t/bench/hidenotifycost.sh
. "$(dirname "$0")/../integ/lib.sh"

n=${HIDENOTIFY_FILES:-200}
integ_init
mkdir -p "$T/d"
chmod 0777 "$T/d"
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '%s\n' \
	'[off]' "	path = $T/d" \
	'[on]' "	path = $T/d" '	hide unreadable = yes') integ_conf
integ_users || exit 1
integ_start || exit 1
command -v strace >/dev/null || { echo "no strace"; exit 1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in off on; do
	# bob's watch: a CHANGE_NOTIFY answered by the first change, the
	# watch kept (its handle open) while the rest queue behind it
	"$PYTHON" - "$PORT" "$BOB_PW" "$s" "$T/go.$s" "$ROOT/t/integ" <<'EOF' &
import os, sys, time
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection
sys.path.insert(0, sys.argv[5])
from notify_lib import notify_send, notify_answer
c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]),
                  preferredDialect=s3.SMB2_DIALECT_30)
c.login("bob", sys.argv[2])
t = c.connectTree(sys.argv[3])
srv = c.getSMBServer()
d = srv.create(t, "", s3.FILE_READ_DATA, 7, s3.FILE_DIRECTORY_FILE,
               s3.FILE_OPEN, 0)
mid = notify_send(srv, t, d, 0x1)
open(sys.argv[4], "w").close()
notify_answer(srv, mid, 30)
time.sleep(3)
srv.close(t, d)
c.logoff()
EOF
	py=$!
	for i in $(seq 50); do [ -e "$T/go.$s" ] && break; sleep 0.1; done
	worker=$(integ_worker_of bob)
	strace -f -s 0 -o "$T/strace.$s" -p "$worker" 2>/dev/null &
	sp=$!
	sleep 1
	(cd "$T/d" && seq -f "$s%05g.txt" 1 "$n" | xargs touch &&
	    chown alice "$s"* && chmod 0644 "$s"*)
	sleep 2
	kill -INT "$sp"
	wait "$sp" 2>/dev/null
	strace_tally "$T/strace.$s"
	wait "$py"
	printf '%-4s %s files: total %s, faccessat2 %s, statx %s, newfstatat %s, read %s\n' \
	    "$s" "$n" \
	    "$(awk '$NF == "total" {print $4}' "$T/strace.$s")" \
	    "$(awk '$NF == "faccessat2" {print $4}' "$T/strace.$s")" \
	    "$(awk '$NF == "statx" {print $4}' "$T/strace.$s")" \
	    "$(awk '$NF == "newfstatat" {print $4}' "$T/strace.$s")" \
	    "$(awk '$NF == "read" {print $4}' "$T/strace.$s")"
done
finish
