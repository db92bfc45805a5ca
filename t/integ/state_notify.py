# The impacket client of t/integ/state_notify.sh: alice's CHANGE_NOTIFY
# parked in her worker, completed by what bob's worker does.
#   state_notify.py PORT COMMAND [ARG...]
# A watch prints "waiting" once its request is sent, then its answer.
import struct, sys
sys.dont_write_bytecode = True
from state_lib import ALL, changes_line, create, login, notify_wait
from impacket import smb3structs as s3

FILE_WRITE_EA = 0x10


def cmd_watch(dirname, flt):
    # alice watches dirname (CHANGE_NOTIFY with filter flt)
    a, at = login("alice")
    print(changes_line(*notify_wait(a, at, dirname, int(flt, 0))), flush=True)


def cmd_watch_status(dirname):
    # alice watches dirname for names; only the final status matters
    a, at = login("alice")
    status, _ = notify_wait(a, at, dirname, 0x1 | 0x2)
    print("status 0x%x" % status, flush=True)


def cmd_bob_create(name):
    b, bt = login("bob")
    b.closeFile(bt, create(b, bt, "watched\\" + name, disp=s3.FILE_CREATE))
    print("created")


def cmd_bob_rmdir(dirname):
    # bob's delete-on-close handle of the directory, closed at once
    b, bt = login("bob")
    srv = b.getSMBServer()
    f = srv.create(bt, dirname, s3.DELETE | s3.FILE_READ_ATTRIBUTES, ALL,
                   s3.FILE_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE,
                   s3.FILE_OPEN, 0)
    srv.close(bt, f)
    print("deleted", flush=True)


def cmd_bob_rename(old, new):
    b, _ = login("bob")
    b.rename("share", old, new)
    print("renamed", flush=True)


def cmd_bob_file():
    b, bt = login("bob")
    b.closeFile(bt, create(b, bt, "watched\\xattr.txt"))
    print("file", flush=True)


def cmd_bob_stream():
    b, bt = login("bob")
    b.closeFile(bt, create(b, bt, "watched\\xattr.txt:stream",
                           disp=s3.FILE_CREATE))
    print("stream created", flush=True)


def cmd_bob_ea():
    b, bt = login("bob")
    srv = b.getSMBServer()
    f = srv.create(bt, "watched\\xattr.txt", FILE_WRITE_EA, ALL,
                   s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    name, val = b"BOBEA", b"value"
    # FILE_FULL_EA_INFORMATION (MS-FSCC 2.4.15)
    ea = struct.pack('<LBBH', 0, 0, len(name), len(val)) + name + b"\0" + val
    srv.setInfo(bt, f, ea, infoType=s3.SMB2_0_INFO_FILE, fileInfoClass=15)
    srv.close(bt, f)
    print("ea set", flush=True)


COMMANDS = {
    "watch": cmd_watch, "watch-status": cmd_watch_status,
    "bob-create": cmd_bob_create, "bob-rmdir": cmd_bob_rmdir,
    "bob-rename": cmd_bob_rename, "bob-file": cmd_bob_file,
    "bob-stream": cmd_bob_stream, "bob-ea": cmd_bob_ea,
}

if __name__ == "__main__":
    COMMANDS[sys.argv[2]](*sys.argv[3:])
