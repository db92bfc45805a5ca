#!/usr/bin/env bash
# SMB 3.1.1 compression (worker/compress.c, proto/compress.c, HACKING.md
# "Compression"): a raw 3.1.1 client (t/integ/compress_client.py, impacket
# with the compression context) negotiates it, sends compressed WRITEs
# (unchained LZ77, chained NONE + Pattern_V1 + LZ77) and ECHO, READs with
# SMB2_READFLAG_REQUEST_COMPRESSED and on a `compress data` share, and
# hostile messages (bombs, bad offsets, lengths that do not add up,
# compressed NEGOTIATE and SESSION_SETUP, no compression negotiated):
# each closes its own connection only.  LZ77 is made and read by Samba
# 4.22's samba.compression (scripts/samba-ref.sh), the independent
# oracle; without that root the client prints SKIP.  Then `smb compression
# = no`.  Samba 4.22's server negotiates no compression: nothing to
# compare on the wire.
. "$(dirname "$0")/lib.sh"

SREF=${SAMBA_REF_ROOT:-/var/cache/usmbd/samba-4.22/root}
ZSHARE=

integ_init
ZSHARE=$T/zshare
mkdir -p "$ZSHARE"
chmod 1777 "$ZSHARE"
mkdir -p "$T/sealed"
chmod 1777 "$T/sealed"
INTEG_SHARES="[zshare]
	path = $ZSHARE
	read only = no
	compress data = yes

[sealed]
	path = $T/sealed
	read only = no
	smb encrypt = required"
integ_conf
integ_users
# heap calls counted per process (t/bench/malloc_count.c, as perfcheck)
mkdir -p "$T/mc"
if cc -O2 -shared -fPIC -DMALLOC_COUNT_PRELOAD -o "$T/mc.so" \
    "$ROOT/t/bench/malloc_count.c" -lpthread; then
	export LD_PRELOAD=$T/mc.so MALLOC_COUNT_DIR=$T/mc COMPRESS_MC_DIR=$T/mc
else
	fail "malloc_count.so builds"
fi
integ_start || exit 1
unset LD_PRELOAD MALLOC_COUNT_DIR

run() {
	# the 4.22 root's libraries for the client only (Debian's smbd is 4.17)
	timeout 120 env -u LD_PRELOAD \
	    PYTHONPATH="$SREF/usr/lib/python3/dist-packages" \
	    LD_LIBRARY_PATH="$SREF/usr/lib/x86_64-linux-gnu/samba:$SREF/usr/lib/x86_64-linux-gnu" \
	    "$PYTHON" "$ROOT/t/integ/compress_client.py" \
	    "$PORT" "$ALICE_PW" "$SHARE" "$1" "$BOB_PW"
}

out=$(run on 2>&1)
if grep -q '^SKIP ' <<<"$out"; then
	echo "$out" | grep '^SKIP '
	integ_stop
	finish
fi
client_checks compress_client echo "$out"
client_checks "compress_client relay" run relay
check "the server still answers" integ_ping
if grep -q 'signal\|sanitizer\|ERROR: AddressSanitizer' "$LOG"; then
	fail "no child died: $(grep -m3 'signal\|Sanitizer' "$LOG")"
else
	ok "no child died of a signal"
fi
check "the hostile messages are logged" grep -q \
    'compressed message before a session is set up' "$LOG"

integ_stop
integ_conf "smb compression = no"
integ_start || exit 1
client_checks "compress_client off" run off

# The same negotiation against Debian's Samba 4.17 with COMPRESS_SAMBA=1
# (printed, not counted): it answers no compression context.
if [ "${COMPRESS_SAMBA:-0}" = 1 ]; then
	integ_stop
	SP=$(integ_free_port)
	samba_start "$T/samba" "$SP" "" || { fail "samba starts"; finish; }
	PORT=$SP run samba 2>&1 | grep '^samba:'
	samba_stop
fi
finish
