#!/usr/bin/env bash
# The regression guard of issue 21: the tests of Samba 4.22's smbtorture
# that found real bugs in usmbd (and the quick ones of issue 16's
# directory leases), each run against usmbd in its own
# smbtorture process (with a time limit, so a request left unanswered
# costs its test, not the run).  smbtorture 4.22 comes from the root
# scripts/samba-ref.sh unpacks (bookworm-backports, beside Debian 12's
# Samba); when that root is not there the script says so on one line and
# passes nothing and fails nothing: `make compat-new` (t/compat/
# compat-new.sh) installs it and runs the whole 4.22 list.
#
# Environment: TORTURE422_TIMEOUT seconds per test (default 60).
. "$(dirname "$0")/lib.sh"

REF=$ROOT/scripts/samba-ref.sh
TMO=${TORTURE422_TIMEOUT:-60}
# What each found (t/compat/torture422.xfail has the ones still failing).
TESTS=(
	smb2.notify.mask-change			# a CHANGE_NOTIFY never answered
	smb2.notify.rec				# ... and the fix's limit
	smb2.notify.valid-req			# buffer size of the first
	smb2.credits.1conn_notify_max_async_credits	# 511 parked, then
						# INSUFFICIENT_RESOURCES
	smb2.acls.OVERWRITE_READ_ONLY_FILE	# overwrite vs share modes
	smb2.lease.v2_rename_target_overwrite	# rename onto an open file
	smb2.lease.rename_dir_openfile		# H breaks below a dir rename
	smb2.durable-v2-open.nonstat-and-lease	# READ_CONTROL is not stat
	smb2.lease.unlink			# delete on close breaks H
	smb2.lease.initial_delete_tdis		# ... and at a tree disconnect
	smb2.lease.lease-epoch			# no R lease over brlocks
	smb2.durable-open.lock-noW-lease	# RH + locks: not kept
	smb2.durable-v2-open.purge-disconnected-rh-with-rename
	smb2.compound_async.getinfo_middle	# related FileId
	smb2.compound_async.rename_last		# no interim, chain held
	smb2.compound_async.rename_middle	# ... a chain waiting twice
	smb2.compound_async.rename_non_compound_no_async
	smb2.dirlease.leases			# RH/R, never W (issue 16)
	smb2.dirlease.v2_request_parent		# the parent key answered
	smb2.dirlease.unlink_different_set_and_close	# whose key spares
	smb2.dirlease.rename_dst_parent		# rename waits for the dir's H
	smb2.session.reauth2			# re-authenticated as anonymous,
	smb2.session.reauth3			# the handles go on (issue 13)
	smb2.session.anon-signing1		# anonymous signs with the
	smb2.session.anon-signing2		# NTLMSSP key; a bad one refused
	smb2.session.anon-encryption2		# anonymous sealed on alice's
	smb2.session.anon-encryption3		# connection, relayed (issue 21/13)
	smb2.streams.rename2			# a stream onto "::$DATA"; a path
						# rename's directory check first
)

if ! root=$("$REF" path 2>/dev/null); then
	echo "skipped: Samba 4.22's smbtorture is not installed (scripts/samba-ref.sh install, or make compat-new)"
	finish
fi
integ_init
integ_conf "restrict anonymous = 0"
integ_users
integ_start || { fail "usmbd starts"; finish; }
for t in "${TESTS[@]}"; do
	o=$T/out.$t
	t0=$SECONDS
	timeout --kill-after=5 "$TMO" "$REF" run smbtorture "//127.0.0.1/share" \
	    -p "$PORT" -U "alice%$ALICE_PW" \
	    --target=samba3 \
	    --option=torture:sharedelay=100000 \
	    --option=torture:writetimeupdatedelay=500000 \
	    --option=torture:user2name=bob \
	    --option=torture:user2password="$BOB_PW" \
	    --fullname --format=subunit "$t" </dev/null >"$o" 2>&1
	rc=$?
	if grep -q -x -F "success: $t" "$o"; then
		ok "$t (4.22, $((SECONDS - t0)) s)"
	else
		fail "$t (4.22, rc $rc, $((SECONDS - t0)) s)"
		grep -A4 '^failure' "$o" | head -5 | sed 's/^/     /'
		[ "$rc" = 124 ] && echo "     timed out after ${TMO}s"
	fi
done
finish
