#!/bin/bash
# Names, not files: delete pending belongs to the name (hard link) that was
# opened for delete (MS-FSA's Link), so deleting one link of a file never
# removes another, in one worker or across users; a rename carries the
# name's opens along; and a delete-on-close CREATE that waits for the break
# of the client's own lease (the Linux client's unlink of a file it holds
# open: CREATE + CLOSE in one compound) succeeds, and so does its rename
# of such a file (CREATE + SET_INFO + CLOSE); a directory with a file
# open below it is renamed once the open's holder gives its handle up
# (MS-FSA 2.1.5.14.11, as Windows).  Client:
# t/integ/links_client.py.
. "$(dirname "$0")/lib.sh"

integ_init
integ_conf
integ_users || { echo "cannot create users" >&2; exit 1; }
integ_start || exit 1

C=$ROOT/t/integ/links_client.py
# a directory both users may write, with the files made there by root
chmod 0777 "$SHARE"
run() {
	client_checks "links_client.py $1" "$PYTHON" "$C" "$PORT" "$SHARE" "$1"
}
run links
run compound
run compound-rename
run rename-dir
check "the server is still up" integ_ping
finish
