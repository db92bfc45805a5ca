#!/usr/bin/env bash
# Stream renames (MS-FSA 2.1.5.14.11, smbtorture smb2.streams.rename2):
# a named stream renamed to the unnamed one ("::$DATA") with
# ReplaceIfExists gives the file its data (a directory watcher hears of
# it) and the handle stands for the
# unnamed stream; without it the name collides; not over a non-empty
# unnamed stream, nor while the unnamed stream is open; a stream renamed
# by a path is refused after the destination directory's sharing check
# (SHARING_VIOLATION while the directory is open with DELETE); and the
# kernel judges the write (a file its owner cannot write: ACCESS_DENIED,
# nothing moved).  And the CREATE options, each bit alone, answered as
# Windows answers them (smb2.create.gentest's masks: FILE_OPEN_BY_FILE_ID,
# FILE_CREATE_TREE_CONNECTION and FILE_RESERVE_OPFILTER NOT_SUPPORTED, the
# top byte INVALID_PARAMETER, every other bit accepted).
# t/integ/streams_client.py, impacket.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users
integ_start || exit 1

out=$(timeout 120 "$PYTHON" "$ROOT/t/integ/streams_client.py" \
    "$PORT" "$ALICE_PW" "$SHARE" 2>&1)
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
finish
