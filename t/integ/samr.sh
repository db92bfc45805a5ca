#!/usr/bin/env bash
# The samr pipe (worker/pipe_samr*.c) with real clients: rpcclient's
# enumdomains, enumdomusers, enumdomgroups, enumalsgroups, lookupnames,
# queryuser, querydispinfo, querydominfo; impacket's samr client
# (t/integ/samr_client.py) as alice, as anonymous and as a guest; smbtorture's
# rpc.samr.accessmask tests that need no administrator.  Only the passdb's
# accounts are listed, not every Unix account.
. "$(dirname "$0")/lib.sh"

integ_init
INTEG_GLOBAL=$'\tnetbios name = SAMRTEST\n\trestrict anonymous = 0\n\tmap to guest = bad user'
integ_conf
integ_users || { fail "users"; finish; }
getent group usmbdsamrg >/dev/null || groupadd usmbdsamrg
usermod -a -G usmbdsamrg bob
getent passwd usmbdsamrx >/dev/null || useradd -M usmbdsamrx
integ_start || { fail "server start"; finish; }

RPC=(rpcclient -U "alice%$ALICE_PW" -p "$PORT" 127.0.0.1)
AUID=$(id -u alice)
BUID=$(id -u bob)
GGID=$(getent group usmbdsamrg | cut -d: -f3)
hex() { printf '0x%x' "$1"; }

has() {
	grep -Eq -- "$1" "$T/out"
}

"${RPC[@]}" -c enumdomains >"$T/out" 2>&1
if has '^name:\[SAMRTEST\] idx:\[0x0\]$' && has '^name:\[Builtin\] idx:\[0x1\]$' &&
    has '^name:\[Unix Group\] idx:\[0x2\]$'; then
	ok "rpcclient enumdomains: SAMRTEST, Builtin, Unix Group"
else
	fail "rpcclient enumdomains"; cat "$T/out"
fi

"${RPC[@]}" -c enumdomusers >"$T/out" 2>&1
if has "^user:\[alice\] rid:\[$(hex "$AUID")\]$" &&
    has "^user:\[bob\] rid:\[$(hex "$BUID")\]$" && ! has usmbdsamrx &&
    ! has '^user:\[root\]'; then
	ok "rpcclient enumdomusers: the passdb's users, RID = uid, no others"
else
	fail "rpcclient enumdomusers"; cat "$T/out"
fi

# The account domain holds no groups: Unix groups are S-1-22-2-GID.
"${RPC[@]}" -c enumdomgroups >"$T/out" 2>&1
if [ "$(grep -c '^group:' "$T/out")" = 0 ] && ! has 'NT_STATUS|error'; then
	ok "rpcclient enumdomgroups: none in the account domain"
else
	fail "rpcclient enumdomgroups"; cat "$T/out"
fi

"${RPC[@]}" -c 'enumalsgroups builtin' >"$T/out" 2>&1
if has '^group:\[Administrators\] rid:\[0x220\]$' && has '^group:\[Users\] rid:\[0x221\]$'; then
	ok "rpcclient enumalsgroups builtin"
else
	fail "rpcclient enumalsgroups builtin"; cat "$T/out"
fi

"${RPC[@]}" -c "samlookupnames domain alice bob" >"$T/out" 2>&1
"${RPC[@]}" -c "samlookupnames domain nosuchuser" >>"$T/out" 2>&1
if has "^name alice: $(hex "$AUID") \(1\)$" && has "^name bob: $(hex "$BUID") \(1\)$" &&
    has 'NT_STATUS_NONE_MAPPED'; then
	ok "rpcclient samlookupnames: alice found, an unknown name not"
else
	fail "rpcclient samlookupnames"; cat "$T/out"
fi

"${RPC[@]}" -c "samlookuprids domain $AUID 0" >"$T/out" 2>&1
if has "^rid $(hex "$AUID"): alice \(1\)$"; then
	ok "rpcclient samlookuprids"
else
	fail "rpcclient samlookuprids"; cat "$T/out"
fi

"${RPC[@]}" -c "queryuser $AUID" >"$T/out" 2>&1
if has '^[[:space:]]+User Name[[:space:]]+:[[:space:]]+alice$' &&
    has "^[[:space:]]+user_rid :[[:space:]]+$(hex "$AUID")$"; then
	ok "rpcclient queryuser (level 21)"
else
	fail "rpcclient queryuser"; cat "$T/out"
fi

"${RPC[@]}" -c "querydispinfo" >"$T/out" 2>&1
if has "Account:[[:space:]]+alice" && has "Account:[[:space:]]+bob" && ! has usmbdsamrx; then
	ok "rpcclient querydispinfo (level 1)"
else
	fail "rpcclient querydispinfo"; cat "$T/out"
fi

"${RPC[@]}" -c "querydominfo" >"$T/out" 2>&1
if has '^Domain:[[:space:]]+SAMRTEST$' && has '^Total Users:[[:space:]]+2$'; then
	ok "rpcclient querydominfo (level 2)"
else
	fail "rpcclient querydominfo"; cat "$T/out"
fi

# Windows' `net user NAME` asks the user's aliases: none are kept.
"${RPC[@]}" -c "queryuseraliases builtin S-1-22-1-$AUID" >"$T/out" 2>&1
if ! has 'NT_STATUS|error|rid:'; then
	ok "rpcclient queryuseraliases: no alias memberships"
else
	fail "rpcclient queryuseraliases"; cat "$T/out"
fi

if timeout 60 "$PYTHON" "$ROOT/t/integ/samr_client.py" "$PORT" "$ALICE_PW" "$AUID" "$BUID" \
    "$GGID" >"$T/out" 2>&1; then
	ok "impacket samr: connect, domains, users, groups, display; anonymous and guest refused"
else
	fail "impacket samr"; cat "$T/out"
fi

# An account added to the passdb is listed after a reload (the master
# sends the list at a worker's start and on every reload).
printf '%s\n' "$BOB_PW" | "$USMBCTL" -s "$CONF" user add usmbdsamrx >/dev/null &&
    "$USMBCTL" -s "$CONF" reload >/dev/null
listed() {
	"${RPC[@]}" -c enumdomusers >"$T/out" 2>&1 && has '^user:\[usmbdsamrx\] rid:'
}
if integ_until 5 listed; then
	ok "a passdb account added is listed after usmbctl reload"
else
	fail "usmbctl user add + reload: listed"; cat "$T/out"
fi
"$USMBCTL" -s "$CONF" user del usmbdsamrx >/dev/null 2>&1

# smbtorture's rpc.samr tests that fit a standalone server and a user
# without administrator rights (HACKING.md "Accounts over SAMR" lists the
# others and why they fail).
timeout 60 smbtorture --option="smb ports=$PORT" "ncacn_np:127.0.0.1[smb2]" \
    -U "alice%$ALICE_PW" rpc.samr.accessmask.samr.Connect5 \
    rpc.samr.accessmask.samr.OpenDomain rpc.samr.accessmask.samr.LookupDomain \
    rpc.samr.accessmask.samr.EnumDomains >"$T/out" 2>&1
for t in Connect5 OpenDomain LookupDomain EnumDomains; do
	if has "^success: samr\.$t\$"; then
		ok "smbtorture rpc.samr.accessmask.samr.$t"
	else
		fail "smbtorture rpc.samr.accessmask.samr.$t"
		grep -E "^(failure|error)" "$T/out"
	fi
done

finish
