#!/usr/bin/env python3
"""fruit:resource = file (worker/fruit_rsrc.c, proto/adouble.h), checked
with impacket on a usmbd share [rsrc] keyed as Samba's defaults (catia
fruit streams_xattr, nothing else) and, with a Samba port, against
Debian's Samba 4.17 serving the same directory:

* AFP_Resource of NAME is the fork entry of ._NAME: Samba's 82-byte
  header, the fork at 82, grown at the end (past what an xattr holds),
  its length in the entry table; truncated by FileEndOfFileInformation;
  listed with its size; the ._ file made as the user with the create mask;
* ._ names are vetoed (not listed, not opened); a rename of NAME moves
  ._NAME, a delete removes it;
* an older usmbd's fork (the stream xattr) is read, then moved into the
  ._ file at the next write;
* hostile ._ files: a symlink out of the share, a hard link to a file
  out of it, a FIFO, another user's
  file the caller may not write, a malformed header (the fork over the
  Finder info): never followed, never blocking, refused, unchanged;
  a Mac's own ._ file (extended Finder info, the fork at 0xEE2) is read;
* with Samba: each reads what the other wrote with the same bytes, the
  stream lists agree, renames and deletes by either are seen by the other.

Prints "ok ..." / "FAIL ..." lines.
usage: fruit_rsrc.py HOST PORT USER PASSWORD SHAREDIR OTHER_USER [SAMBA_PORT]
       fruit_rsrc.py HOST PORT USER PASSWORD BINSHAREDIR OTHER_USER bin OTHER_PW
(the second on [rsrc_bin]: ._NAME into the recycle bin beside its file,
by a delete of the user's own or of another user's, unlink_as)
"""
import os
import pwd
import stat
import struct
import sys
import time

from impacket import smb3 as s3
from impacket import smb3structs as st
from impacket.smbconnection import SMBConnection

from info_lib import stream_sizes as streams

SHARE = "rsrc"
OLD = "user.usmbd.stream.AFP_Resource"
NOT_FOUND = 0xC0000034
ACCESS_DENIED = 0xC0000022


def say(good, what):
    print(("ok   " if good else "FAIL ") + what)


def connect(host, port, user, pw):
    conn = SMBConnection(host, host, sess_port=port)
    conn.login(user, pw)
    return conn, conn._SMBConnection, conn.connectTree(SHARE)


def status_of(fn):
    try:
        fn()
        return 0
    except s3.SessionError as err:
        return err.get_error_code()


def write_rsrc(smb, tid, name, data, off=0):
    f = smb.create(tid, name + ":AFP_Resource", st.FILE_WRITE_DATA |
                   st.FILE_READ_DATA, 7, 0, st.FILE_OPEN_IF, 0)
    smb.write(tid, f, data, off, len(data))
    smb.close(tid, f)


def read_rsrc(smb, tid, name, length=1 << 20, off=0):
    """The fork's bytes, or the NTSTATUS of its open or read."""
    try:
        f = smb.create(tid, name + ":AFP_Resource", st.FILE_READ_DATA, 7, 0,
                       st.FILE_OPEN, 0)
    except s3.SessionError as err:
        return err.get_error_code()
    out = b""
    try:
        while len(out) < length:
            chunk = smb.read(tid, f, off + len(out),
                             min(65536, length - len(out)))
            if not chunk:
                break
            out += chunk
    except s3.SessionError as err:
        if err.get_error_code() != 0xC0000011:     # END_OF_FILE
            out = err.get_error_code()
    smb.close(tid, f)
    return out


def set_eof(smb, tid, name, size):
    f = smb.create(tid, name + ":AFP_Resource", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN, 0)
    smb.setInfo(tid, f, inputBlob=struct.pack("<q", size),
                infoType=1, fileInfoClass=20)    # FileEndOfFileInformation
    smb.close(tid, f)


def samba_hdr(rlen, roff=82):
    return (struct.pack(">II", 0x00051607, 0x00020000) + b"Netatalk        " +
            struct.pack(">HIIIIII", 2, 2, roff, rlen, 9, 50, 32) + b"\0" * 32)


def new_file(d, name, owner):
    p = os.path.join(d, name)
    with open(p, "wb") as fh:
        fh.write(b"data")
    os.chown(p, *owner)
    return p


def slurp(p):
    with open(p, "rb") as fh:
        return fh.read()


def usmbd_checks(host, port, user, pw, d, owner, other):
    conn, smb, tid = connect(host, port, user, pw)
    fork = bytes(range(256)) * 4 + b"tail"
    new_file(d, "r1", owner)
    write_rsrc(smb, tid, "r1", fork)
    ad = os.path.join(d, "._r1")
    blob = slurp(ad) if os.path.exists(ad) else b""
    say(blob[:82] == samba_hdr(len(fork)) and blob[82:] == fork,
        "a write makes ._r1: Samba's 82-byte header, the fork at 82")
    sb = os.lstat(ad) if blob else None
    say(sb is not None and sb.st_uid == owner[0] and
        stat.S_IMODE(sb.st_mode) == 0o644,
        "... made by the user with the create mask (0744 & 0666)")
    say(read_rsrc(smb, tid, "r1") == fork, "the fork reads back")
    say(streams(smb, tid, "r1") == [("::$DATA", 4),
                                    (":AFP_Resource:$DATA", len(fork))],
        "the stream list shows AFP_Resource with its size")
    say(os.listxattr(os.path.join(d, "r1")).count(OLD) == 0,
        "no stream xattr is written")
    # past what an xattr holds: the ._ file grows, the entry follows
    far = 300000
    write_rsrc(smb, tid, "r1", b"FAR", far)
    blob = slurp(ad)
    say(len(blob) == 82 + far + 3 and
        blob[:82] == samba_hdr(far + 3) and
        read_rsrc(smb, tid, "r1", 3, far) == b"FAR" and
        blob[82 + len(fork):82 + len(fork) + 16] == b"\0" * 16,
        "a write at 300000 grows the fork; its length in the table")
    set_eof(smb, tid, "r1", 100)
    blob = slurp(ad)
    say(len(blob) == 182 and blob[:82] == samba_hdr(100) and
        read_rsrc(smb, tid, "r1") == fork[:100],
        "FileEndOfFileInformation on the stream truncates the fork")
    # vetoed: not listed, not opened
    names = [e.get_longname() for e in conn.listPath(SHARE, "*")]
    say("r1" in names and "._r1" not in names,
        "fruit:veto_appledouble: ._r1 is not listed")
    say(status_of(lambda: smb.create(tid, "._r1", st.FILE_READ_DATA, 7, 0,
                                     st.FILE_OPEN, 0)) == NOT_FOUND,
        "... and not opened by name (OBJECT_NAME_NOT_FOUND)")
    # rename and delete of the data file
    conn.rename(SHARE, "r1", "r2")
    say(not os.path.exists(ad) and
        os.path.exists(os.path.join(d, "._r2")) and
        read_rsrc(smb, tid, "r2") == fork[:100],
        "a rename of r1 moves ._r1 to ._r2")
    conn.deleteFile(SHARE, "r2")
    say(not os.path.exists(os.path.join(d, "._r2")),
        "a delete of r2 removes ._r2")

    # upgrade: an older usmbd's stream xattr
    p = new_file(d, "old", owner)
    os.setxattr(p, OLD, b"OLD" * 10)
    say(read_rsrc(smb, tid, "old") == b"OLD" * 10 and
        streams(smb, tid, "old") == [("::$DATA", 4),
                                     (":AFP_Resource:$DATA", 30)],
        "an older usmbd's fork (stream xattr) is read and listed once")
    write_rsrc(smb, tid, "old", b"NEW", 30)
    blob = slurp(os.path.join(d, "._old"))
    say(blob == samba_hdr(33) + b"OLD" * 10 + b"NEW" and
        OLD not in os.listxattr(p),
        "... and moved into ._old at the next write")

    # a symlink out of the share: never followed
    outside = os.path.join(os.path.dirname(d.rstrip("/")), "outside_rsrc")
    with open(outside, "wb") as fh:
        fh.write(samba_hdr(6) + b"secret")
    os.chown(outside, *owner)
    new_file(d, "sym", owner)
    os.symlink(outside, os.path.join(d, "._sym"))
    r = read_rsrc(smb, tid, "sym")
    say(r != b"secret", "a ._ symlink out of the share is not read (%r)"
        % (r if isinstance(r, int) else r[:8]))
    w = status_of(lambda: write_rsrc(smb, tid, "sym", b"XXXX"))
    say(slurp(outside) == samba_hdr(6) + b"secret" and w != 0,
        "... nor written through (0x%x)" % w)
    # a FIFO: never blocks, never read
    new_file(d, "fifo", owner)
    os.mkfifo(os.path.join(d, "._fifo"))
    t0 = time.time()
    r = read_rsrc(smb, tid, "fifo")
    w = status_of(lambda: write_rsrc(smb, tid, "fifo", b"x"))
    say(not isinstance(r, bytes) or r == b"", "a ._ FIFO reads as no fork")
    say(w != 0 and time.time() - t0 < 5,
        "... a write is refused at once (0x%x)" % w)
    # another user's ._ file the caller may not write
    new_file(d, "theirs", owner)
    theirs = os.path.join(d, "._theirs")
    with open(theirs, "wb") as fh:
        fh.write(samba_hdr(4) + b"bobs")
    os.chown(theirs, other.pw_uid, other.pw_gid)
    os.chmod(theirs, 0o644)
    say(read_rsrc(smb, tid, "theirs") == b"bobs",
        "another user's readable ._ file is read")
    w = status_of(lambda: write_rsrc(smb, tid, "theirs", b"mine"))
    say(w == ACCESS_DENIED and slurp(theirs) == samba_hdr(4) + b"bobs",
        "... and not written (ACCESS_DENIED)")
    # a hard link planted as ._NAME by a local account: the user's fork
    # would be written into (and read from) the file it names, here one of
    # the user's own outside the share
    hl_out = os.path.join(os.path.dirname(d.rstrip("/")), "outside_hl")
    hl_blob = samba_hdr(7) + b"private"
    with open(hl_out, "wb") as fh:
        fh.write(hl_blob)
    os.chown(hl_out, *owner)
    new_file(d, "hl", owner)
    os.link(hl_out, os.path.join(d, "._hl"))
    r = read_rsrc(smb, tid, "hl")
    w = status_of(lambda: write_rsrc(smb, tid, "hl", b"EVIL"))
    say(r != b"private" and w != 0 and slurp(hl_out) == hl_blob,
        "a ._ hard link to a file out of the share is neither read (%r) "
        "nor written through (0x%x)" % (r if isinstance(r, int) else r[:8],
                                        w))
    conn.deleteFile(SHARE, "hl")
    say(not os.path.exists(os.path.join(d, "._hl")) and
        slurp(hl_out) == hl_blob,
        "... a delete of hl removes the link ._hl, not the file")
    # a malformed header: the fork over the Finder info
    new_file(d, "bad", owner)
    bad = os.path.join(d, "._bad")
    badblob = samba_hdr(20, 60) + b"z" * 20
    with open(bad, "wb") as fh:
        fh.write(badblob)
    os.chown(bad, *owner)
    r = read_rsrc(smb, tid, "bad")
    w = status_of(lambda: write_rsrc(smb, tid, "bad", b"evil"))
    say(r == NOT_FOUND and w != 0 and slurp(bad) == badblob,
        "a ._ whose fork overlaps the header is refused, left as it is")
    # a Mac's own ._ file: extended Finder info, the fork at 0xEE2
    new_file(d, "mac", owner)
    mac = (struct.pack(">II", 0x00051607, 0x00020000) + b"Mac OS X        " +
           struct.pack(">HIIIIII", 2, 9, 50, 0xEB0, 2, 0xEE2, 5))
    mac += b"\0" * (0xEE2 - len(mac)) + b"hello"
    with open(os.path.join(d, "._mac"), "wb") as fh:
        fh.write(mac)
    os.chown(os.path.join(d, "._mac"), *owner)
    say(read_rsrc(smb, tid, "mac") == b"hello" and
        streams(smb, tid, "mac")[1] == (":AFP_Resource:$DATA", 5),
        "a Mac's ._ file (fork at 0xEE2) is read where it is")
    write_rsrc(smb, tid, "mac", b"!", 5)
    say(slurp(os.path.join(d, "._mac"))[0xEE2:] == b"hello!" and
        struct.unpack_from(">I", slurp(os.path.join(d, "._mac")), 46)[0] == 6,
        "... and grows there")
    conn.logoff()


def interop_checks(host, port, sport, user, pw, d, owner):
    uconn, usmb, utid = connect(host, port, user, pw)
    sconn, ssmb, stid = connect(host, sport, user, pw)
    fork = os.urandom(5000)
    new_file(d, "by_samba", owner)
    write_rsrc(ssmb, stid, "by_samba", fork)
    blob = slurp(os.path.join(d, "._by_samba"))
    say(blob[:82] == samba_hdr(len(fork)),
        "Samba 4.17 writes the header usmbd writes (82 bytes)")
    say(read_rsrc(usmb, utid, "by_samba") == fork,
        "usmbd reads the fork Samba wrote, byte for byte")
    say(streams(usmb, utid, "by_samba") == streams(ssmb, stid, "by_samba"),
        "the stream lists agree (%s)" % (streams(usmb, utid, "by_samba"),))
    new_file(d, "by_usmbd", owner)
    write_rsrc(usmb, utid, "by_usmbd", fork)
    write_rsrc(usmb, utid, "by_usmbd", b"more", len(fork))
    say(read_rsrc(ssmb, stid, "by_usmbd") == fork + b"more",
        "Samba reads the fork usmbd wrote, byte for byte")
    say(streams(usmb, utid, "by_usmbd") == streams(ssmb, stid, "by_usmbd"),
        "the stream lists agree on usmbd's")
    sconn.rename(SHARE, "by_usmbd", "moved_by_samba")
    say(read_rsrc(usmb, utid, "moved_by_samba") == fork + b"more",
        "renamed through Samba: usmbd reads the fork by the new name")
    uconn.rename(SHARE, "by_samba", "moved_by_usmbd")
    say(read_rsrc(ssmb, stid, "moved_by_usmbd") == fork,
        "renamed through usmbd: Samba reads the fork by the new name")
    uconn.deleteFile(SHARE, "moved_by_samba")
    sconn.deleteFile(SHARE, "moved_by_usmbd")
    say(not any(n.startswith("._moved") for n in os.listdir(d)),
        "deleted through either: no ._ file is left")
    uconn.logoff()
    sconn.logoff()


def peek(p):
    """The file's bytes, or b"" when there is none."""
    return slurp(p) if os.path.exists(p) else b""


def bin_checks(host, port, user, pw, d, other, other_pw):
    """On [rsrc_bin] (a recycle bin, keep tree): ._NAME goes into the bin
    beside its file, by the deleting user's worker or by another user's
    worker acting for him (unlink_as), as Samba's fruit passes the unlink
    of ._NAME to vfs_recycle."""
    global SHARE
    SHARE = "rsrc_bin"
    conn, smb, tid = connect(host, port, user, pw)
    fork = os.urandom(3000)
    conn.createDirectory(SHARE, "sub")
    for name in ("b1", "sub/b2"):
        f = smb.create(tid, name, st.FILE_WRITE_DATA, 7, 0,
                       st.FILE_CREATE, 0)
        smb.close(tid, f)
        write_rsrc(smb, tid, name, fork)
        conn.deleteFile(SHARE, name)
    bin_ = os.path.join(d, ".recycle", user)
    say(os.path.exists(os.path.join(bin_, "b1")) and
        peek(os.path.join(bin_, "._b1"))[82:] == fork and
        not os.path.exists(os.path.join(d, "._b1")),
        "a delete moves ._NAME into the bin beside its file")
    say(peek(os.path.join(bin_, "sub", "._b2"))[82:] == fork and
        not os.path.exists(os.path.join(d, "sub", "._b2")),
        "... in its directory there (keep tree)")
    # bob deletes alice's file while she holds it open: her last close
    # has bob's worker move it into bob's bin (unlink_as), ._ with it
    bconn = SMBConnection(host, host, sess_port=port)
    bconn.login(other, other_pw)
    bsmb, btid = bconn._SMBConnection, bconn.connectTree(SHARE)
    f = smb.create(tid, "b3", st.FILE_WRITE_DATA | st.FILE_READ_DATA, 7, 0,
                   st.FILE_CREATE, 0)
    write_rsrc(smb, tid, "b3", fork)
    g = bsmb.create(btid, "b3", 0x00010000, 7, 0, st.FILE_OPEN, 0)
    bsmb.setInfo(btid, g, inputBlob=b"\x01", infoType=1, fileInfoClass=13)
    bsmb.close(btid, g)
    smb.close(tid, f)
    bbin = os.path.join(d, ".recycle", other)
    for _ in range(40):
        if os.path.exists(os.path.join(bbin, "._b3")):
            break
        time.sleep(0.05)
    say(os.path.exists(os.path.join(bbin, "b3")) and
        os.path.exists(os.path.join(bbin, "._b3")) and
        peek(os.path.join(bbin, "._b3"))[82:] == fork and
        not os.path.exists(os.path.join(d, "._b3")),
        "another user's delete (unlink_as): ._NAME into his bin too")
    bconn.logoff()
    conn.logoff()


def main():
    host, port, user, pw, d, other = sys.argv[1:7]
    st_ = os.stat(d)
    owner = (st_.st_uid, st_.st_gid)
    if len(sys.argv) > 8 and sys.argv[7] == "bin":
        bin_checks(host, int(port), user, pw, d, other, sys.argv[8])
    elif len(sys.argv) > 7:
        interop_checks(host, int(port), int(sys.argv[7]), user, pw, d, owner)
    else:
        usmbd_checks(host, int(port), user, pw, d, owner, pwd.getpwnam(other))


if __name__ == "__main__":
    main()
