#!/bin/bash
# Data through the signed and encrypted paths (issue 17): files of 1 byte,
# 4 KiB, 1 MiB + 1 and 5 MiB written and read back with smbclient,
# byte-compared, in every signing algorithm (HMAC-SHA256 on 2.1, AES-CMAC
# on 3.0.2, AES-GMAC on 3.1.1) and every cipher (AES-128/256-GCM and -CCM
# on 3.1.1, AES-128-CCM on 3.0), on a session the client seals and on a
# share that requires encryption.  An encrypted READ's data is read into
# the frame buffer behind its headers and encrypted there in place
# (worker/dispatch_out.c); a signed one is read behind its response and
# signed; an encrypted response is encrypted from the send buffer into the
# frame buffer: each of these must give back the bytes written.  The
# server's log names the dialect, cipher and signing algorithm it
# negotiated, which is checked too (so a client that silently fell back
# cannot pass for the mode).
. "$(dirname "$0")/lib.sh"

integ_init
mkdir -p "$T/sealed"
chmod 1777 "$T/sealed"
INTEG_SHARES="[sealed]
	path = $T/sealed
	read only = no
	smb encrypt = required"
INTEG_LOG_LEVEL=3 integ_conf
integ_users
integ_start || { fail "server starts"; finish; }

SMBC="timeout 60 smbclient -p $PORT -U alice%$ALICE_PW"
L="$T/local"
mkdir -p "$L/back"
head -c 1 /dev/urandom >"$L/f1"
head -c 4096 /dev/urandom >"$L/f4k"
head -c $((1048576 + 1)) /dev/urandom >"$L/f1m"
head -c $((5 * 1048576)) /dev/urandom >"$L/f5m"

# roundtrip LABEL SHARE OPTION...: put the four files, get them back, compare.
roundtrip() {
	local label=$1 share=$2 f cmds=""
	shift 2
	rm -f "$L"/back/*
	for f in f1 f4k f1m f5m; do
		cmds="$cmds put $L/$f ${label}_$f; get ${label}_$f $L/back/$f;"
	done
	if ! $SMBC //127.0.0.1/$share "$@" -c "$cmds" >"$T/rt.out" 2>&1; then
		fail "$label: put and get"
		sed 's/^/    /' "$T/rt.out" | tail -5
		return
	fi
	for f in f1 f4k f1m f5m; do
		if ! cmp -s "$L/$f" "$L/back/$f"; then
			fail "$label: $f read back differs"
			return
		fi
	done
	ok "$label: 1 B, 4 KiB, 1 MiB + 1, 5 MiB written and read back intact"
}

# negotiated DIALECT CIPHER SIGNING: the log has that negotiation (ids of
# MS-SMB2 2.2.3.1.2 and .7; 3.0.x has AES-128-CCM and AES-CMAC implied,
# 2.x HMAC-SHA256; CIPHER may be a pattern).
negotiated() {
	grep -q "negotiated dialect $1 cipher $2 signing $3" "$LOG" &&
	    ok "negotiated dialect $1 cipher $2 signing $3" ||
	    fail "negotiated dialect $1 cipher $2 signing $3 (not in the log)"
}

# (no spaces: Samba matches parameter names ignoring them, and these words
# are split by the shell)
p() { echo "--option=clientminprotocol=$1 --option=clientmaxprotocol=$1"; }

# Signed, not encrypted.
# shellcheck disable=SC2046
roundtrip hmac share $(p SMB2_10) --option='client signing=required'
negotiated 0210 0 0
# shellcheck disable=SC2046
roundtrip cmac share $(p SMB3_02) --option='client signing=required'
negotiated 0302 1 1
# shellcheck disable=SC2046
roundtrip gmac share $(p SMB3_11) --option='client signing=required' \
    --option='client smb3 signing algorithms=AES-128-GMAC'
negotiated 0311 '[0-9]' 2

# Sealed by the client, each cipher.
for c in AES-128-GCM:2 AES-256-GCM:4 AES-128-CCM:1 AES-256-CCM:3; do
	name=${c%:*} id=${c#*:}
	# shellcheck disable=SC2046
	roundtrip "enc_${name}" share $(p SMB3_11) --client-protection=encrypt \
	    --option="client smb3 encryption algorithms=$name"
	negotiated 0311 "$id" 2
done
# shellcheck disable=SC2046
roundtrip enc_30_ccm share $(p SMB3_00) --client-protection=encrypt

# Sealed because the share requires it (the bench's encrypted modes).
# shellcheck disable=SC2046
roundtrip sealed_share_gcm sealed $(p SMB3_11) --option='client signing=required' \
    --option='client smb3 encryption algorithms=AES-128-GCM'
grep -q 'ERROR\|short read of bulk data' "$LOG" && fail "server log has errors" ||
    ok "no errors in the server log"
finish
