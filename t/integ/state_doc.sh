#!/bin/bash
# Delete-on-close across workers and users (issue 5; HACKING.md, Shared
# state): the last close deletes, whoever closes it, and a file another
# user's worker may not unlink is unlinked by the vouching worker through
# the master (MSG_UNLINK_AS).  Clients: t/integ/state_client.py (doc) and
# t/integ/state_doc.py.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/state_client.py

# 2. delete-on-close across workers: bob's close makes it delete pending
# (new opens: DELETE_PENDING) and the file goes at alice's last close.
# The unlink is alice's worker's, with alice's rights: a directory both
# may write (not the sticky share root, where only root's file's owner
# could remove it -- see HACKING.md, Shared state).
mkdir -p "$SHARE/docdir" && chmod 0777 "$SHARE/docdir"
: >"$SHARE/docdir/doc.txt"; chmod 0666 "$SHARE/docdir/doc.txt"
coproc DOC { "$PYTHON" "$C" "$PORT" doc 'docdir\doc.txt' 2>&1; }
docout=
while read -r -t 10 line <&"${DOC[0]}"; do
	docout="$docout $line"
	case $line in exists-before) break ;; esac
done
[ -e "$SHARE/docdir/doc.txt" ] && echo "$docout" | grep -q "bob-reopen STATUS_DELETE_PENDING" &&
    ok "bob's delete-on-close close: delete pending while alice's handle is open" ||
    fail "delete pending across workers: $docout"
echo >&"${DOC[1]}"
read -r -t 10 line <&"${DOC[0]}"
[ "$line" = alice-closed ] && [ ! -e "$SHARE/docdir/doc.txt" ] &&
    ok "the file is removed at alice's last close (another worker)" ||
    fail "delete at last close: $line, $(ls "$SHARE/docdir/doc.txt" 2>&1)"
echo >&"${DOC[1]}"
wait "$DOC_PID" 2>/dev/null

# 1. Delete-on-close across users: bob makes his file in a sticky (1777)
# directory delete pending, alice holds it and closes last.  Her worker may
# not unlink it (EPERM); bob's worker does, through the master
# (MSG_UNLINK_AS), because it vouched for that delete when it closed its
# own handle; never a file that took the name since (another inode).  The
# remaining gap: bob's worker gone before alice's close, the file stays
# (what it vouched for lived in its memory; a new worker is not started).
integ_stop
integ_conf
: >"$LOG"
if integ_start; then
	mkdir -p "$SHARE/sticky" && chmod 1777 "$SHARE/sticky"
	doc() { USMBCTL="$USMBCTL" "$PYTHON" "$(dirname "$0")/state_doc.py" \
	    "$PORT" "$CONF" "$SHARE" "$@" 2>&1; }
	out=$(doc basic bob-file)
	echo "$out" | grep -q "owner-bob True" &&
	    echo "$out" | grep -q "after-bob-close present" &&
	    echo "$out" | grep -q "after-alice-close gone" &&
	    ok "bob's delete-on-close, alice closes last: gone ($(echo "$out" |
	    sed -n 's/^after-alice-close gone //p'))" ||
	    fail "delete on close across users: $out"
	grep -q 'worker alice: delete on close of "sticky/bob-file": Operation not permitted' "$LOG" &&
	    ok "alice's own unlink was refused (sticky directory)" ||
	    fail "alice's worker was not refused: the test proves nothing"
	grep -q 'delete on close of share\\sticky/bob-file done' "$LOG" &&
	    ok "bob's worker logs the unlink" || fail "no unlink log line"
	out=$(doc gone bob-file2)
	echo "$out" | grep -q "bob-worker-killed True" &&
	    echo "$out" | grep -q "after-alice-close present" &&
	    [ -e "$SHARE/sticky/bob-file2" ] &&
	    ok "bob's worker killed first: the file stays (known gap)" ||
	    fail "delete on close with bob's worker gone: $out"
	grep -q 'delete on close of share\\sticky/bob-file2: no live worker of bob' "$LOG" &&
	    ok "the dropped request is logged" ||
	    fail "no log line for the dropped delete on close"
	rm -f "$SHARE/sticky/bob-file2"
	out=$(doc replaced bob-file3)
	echo "$out" | grep -q "replaced-ino True" &&
	    echo "$out" | grep -q "after-alice-close present replacement" &&
	    ok "a file that replaced the name is not deleted" ||
	    fail "replaced file: $out"
	# refused by alice's worker already (its own inode check before the
	# unlink), or by bob's when asked
	grep -q 'sticky/bob-file3: the name is now another file' "$LOG" &&
	    ok "the refusal is logged" || fail "no refusal log line"
	# Every request above named a delete bob's worker had vouched for.
	grep -q 'unvouched request' "$LOG" &&
	    fail "a vouched delete was refused: $(grep 'unvouched' "$LOG")" ||
	    ok "bob's worker matched each request to its own vouch"
else
	fail "server for delete on close across users did not start"
fi

finish
