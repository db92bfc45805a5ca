#!/usr/bin/env python3
"""CHANGE_NOTIFY on fruit:encoding = native shares (worker/notify_queue.c,
proto/fscc.c fscc_notify_encode), checked with impacket:

* on [native]: a watcher of a directory sees the file created locally as
  "a:b" as "a\\uF022b", the name it lists, and one created over SMB as
  "c\\uF022d" the same;
* on [native_hide] (hide unreadable = yes): bob watches for EA changes;
  alice sets an EA over SMB on "x:y", made locally, which bob may read:
  bob is told "x\\uF022y" (it was judged by a file "x" and dropped); one
  on "p:q", which bob may not read, is not told.

Prints "ok ..." / "FAIL ..." lines; with SAMBA (a last argument "samba")
the same steps print "info ..." lines only (Samba 4.17 is not judged).
usage: fruit_notify.py HOST PORT ALICE_PW BOB_PW DIR_NATIVE DIR_HIDE [samba]
"""
import os
import struct
import sys
import time

from impacket import smb3structs as st
from impacket.smbconnection import SMBConnection

from notify_lib import notify_send, notify_answer

FILE_NOTIFY_CHANGE_FILE_NAME = 0x1
FILE_NOTIFY_CHANGE_EA = 0x80
FILE_FULL_EA_INFORMATION = 15
SAMBA = False


def say(good, what):
    if SAMBA:
        print("info %s: %s" % ("same" if good else "differs", what))
    else:
        print(("ok   " if good else "FAIL ") + what)


def connect(host, port, user, pw, share):
    conn = SMBConnection(host, host, sess_port=port)
    conn.login(user, pw)
    return conn, conn._SMBConnection, conn.connectTree(share)


def open_dir(smb, tid, name):
    return smb.create(tid, name, st.FILE_READ_DATA | st.FILE_READ_ATTRIBUTES,
                      7, st.FILE_DIRECTORY_FILE, st.FILE_OPEN, 0)


def close(smb, tid, fid):
    """impacket's close forgets a name listPath reused (a KeyError)."""
    try:
        smb.close(tid, fid)
    except KeyError:
        pass


def watch(smb, tid, fid, flt, change, secs=3):
    """The changes a watch of flt on fid is told after change()."""
    mid = notify_send(smb, tid, fid, flt)
    time.sleep(0.3)			# parked before the change
    change()
    ans = notify_answer(smb, mid, secs)
    return ans[1] if ans is not None and ans[0] == 0 else ans


def set_ea(smb, tid, name):
    e = struct.pack("<IBBH", 0, 0, 4, 1) + b"test\0" + b"v"
    f = smb.create(tid, name, st.FILE_WRITE_EA, 7, 0, st.FILE_OPEN, 0)
    smb.setInfo(tid, f, e + b"\0" * (-len(e) % 4), infoType=1,
                fileInfoClass=FILE_FULL_EA_INFORMATION)
    smb.close(tid, f)


def native_checks(host, port, pw, d):
    conn, smb, tid = connect(host, port, "alice", pw, "native")
    os.mkdir(os.path.join(d, "nw"))
    os.chmod(os.path.join(d, "nw"), 0o777)
    dfid = open_dir(smb, tid, "nw")
    got = watch(smb, tid, dfid, FILE_NOTIFY_CHANGE_FILE_NAME,
                lambda: open(os.path.join(d, "nw", "a:b"), "w").close())
    say(got == [(1, "a\uf022b")],
        "a file made locally as 'a:b' is told as a\\uF022b (%r)" % (got,))

    def smb_create():
        f = smb.create(tid, "nw\\c\uf022d", st.FILE_WRITE_DATA, 7, 0,
                       st.FILE_CREATE, 0)
        smb.close(tid, f)
    got = watch(smb, tid, dfid, FILE_NOTIFY_CHANGE_FILE_NAME, smb_create)
    say(got == [(1, "c\uf022d")],
        "a file made over SMB as c\\uF022d is told so (%r)" % (got,))
    listed = sorted(e.get_longname() for e in conn.listPath("native",
                    "nw\\*") if e.get_longname() not in (".", ".."))
    say(listed == ["a\uf022b", "c\uf022d"],
        "... the names the listing shows (%r)" % (listed,))
    close(smb, tid, dfid)
    conn.logoff()


def hide_checks(host, port, apw, bpw, d):
    aconn, asmb, atid = connect(host, port, "alice", apw, "native_hide")
    bconn, bsmb, btid = connect(host, port, "bob", bpw, "native_hide")
    dfid = open_dir(bsmb, btid, "")
    got = watch(bsmb, btid, dfid, FILE_NOTIFY_CHANGE_EA,
                lambda: set_ea(asmb, atid, "x\uf022y"))
    say(got == [(3, "x\uf022y")],
        "hide unreadable: an EA set on 'x:y' (made locally, readable) is "
        "told to bob as x\\uF022y (%r)" % (got,))
    got = watch(bsmb, btid, dfid, FILE_NOTIFY_CHANGE_EA,
                lambda: set_ea(asmb, atid, "p\uf022q"), 1.5)
    say(got is None, "... one on 'p:q' (0600, alice's) is not (%r)" % (got,))
    close(bsmb, btid, dfid)
    aconn.logoff()
    bconn.logoff()


def main():
    global SAMBA
    host, port, apw, bpw, dnat, dhide = sys.argv[1:7]
    SAMBA = len(sys.argv) > 7 and sys.argv[7] == "samba"
    native_checks(host, int(port), apw, dnat)
    hide_checks(host, int(port), apw, bpw, dhide)


if __name__ == "__main__":
    main()
