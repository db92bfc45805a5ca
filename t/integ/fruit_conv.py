#!/usr/bin/env python3
"""A Mac's own ._ files converted as Samba's ad_convert (worker/fruit_conv.c),
checked with impacket on the usmbd share [rsrc] (Samba's defaults: netatalk
metadata, the fork in ._ files) and, with a Samba port, against Debian's
Samba 4.17 serving the same directory:

* a ._ file in a Mac's layout (filler "Mac OS X", an ATTR block of two
  extended attributes in its Finder info, the fork after it), met at an
  open of AFP_AfpInfo: its Finder info is the AfpInfo, each attribute a
  stream named as Samba names it (':' is U+F022), the ._ file Samba's 82
  bytes with the fork at 82; converted once (an AfpInfo the Mac writes
  afterwards stays);
* hostile ._ files: an attribute past its block (nothing converted, the
  file unchanged), attribute names that are no stream name here ('/',
  AFP_AfpInfo: left out, the rest converted), a symlink to a Mac's file
  outside the share and another user's file the caller may not write
  (neither converted nor changed);
* with Samba: the same ._ file converted by each server gives the same
  AfpInfo bytes, the same streams with the same bytes, the same fork and
  (with attributes) the same ._ file.

Prints "ok ..." / "FAIL ..." lines.
usage: fruit_conv.py HOST PORT USER PASSWORD SHAREDIR OTHER_USER [SAMBA_PORT]
       fruit_conv.py HOST PORT USER PASSWORD SHAREDIR OTHER_USER native
(the second on [vfs_fruit], fruit:encoding = native: a name sent with
U+F022 is ':' on disk and U+F022 again in listings and name queries)
"""
import ctypes
import os
import pwd
import struct
import sys

from impacket import smb3 as s3
from impacket import smb3structs as st
from impacket.smbconnection import SMBConnection

from info_lib import stream_sizes as streams

SHARE = "rsrc"
NOT_FOUND = 0xC0000034
TAGS = b"com.apple.metadata:_kMDItemUserTags"
FORK = bytes(range(0xf0, 0x100))


def say(good, what):
    print(("ok   " if good else "FAIL ") + what)


def connect(host, port, user, pw):
    conn = SMBConnection(host, host, sess_port=port)
    conn.login(user, pw)
    return conn, conn._SMBConnection, conn.connectTree(SHARE)


def mac_ad(attrs, fork, fi=b"TESTSLOW", filler=b"Mac OS X        "):
    """A ._ file as a Mac writes it, laid out from the format: the Finder
    info at 50, 2 bytes of padding, the ATTR header at 84, the entries
    4-aligned from 120, their data, the fork last."""
    end = 120
    for name, _ in attrs:
        end = ((end + 3) & ~3) + 11 + len(name) + 1
    start = (end + 3) & ~3
    data, offs = b"", []
    for _, value in attrs:
        offs.append(start + len(data))
        data += value
    total = start + len(data)
    rf_off = max(total, 0x200)
    b = bytearray(rf_off + len(fork))
    b[0:26] = struct.pack(">II16sH", 0x00051607, 0x00020000, filler, 2)
    b[26:50] = struct.pack(">IIIIII", 9, 50, total - 50, 2, rf_off, len(fork))
    b[50:50 + len(fi)] = fi
    b[84:88] = b"ATTR"
    b[92:104] = struct.pack(">III", total, start, len(data))
    b[118:120] = struct.pack(">H", len(attrs))
    at = 120
    for (name, value), off in zip(attrs, offs):
        at = (at + 3) & ~3
        b[at:at + 11] = struct.pack(">IIHB", off, len(value), 0, len(name) + 1)
        b[at + 11:at + 11 + len(name)] = name
        at += 11 + len(name) + 1
    b[start:start + len(data)] = data
    b[rf_off:] = fork
    return bytes(b)


def mac_ad_plain(fork, fi=b"WAVEPTul"):
    """A Mac's ._ file without attributes: 32 bytes of Finder info."""
    b = bytearray(82 + len(fork))
    b[0:26] = struct.pack(">II16sH", 0x00051607, 0x00020000,
                          b"Mac OS X        ", 2)
    b[26:50] = struct.pack(">IIIIII", 2, 82, len(fork), 9, 50, 32)
    b[50:50 + len(fi)] = fi
    b[82:] = fork
    return bytes(b)


def samba_hdr(rlen, fi=b""):
    """Samba's 82-byte header (filler, the fork at 82, Finder info)."""
    return (struct.pack(">II", 0x00051607, 0x00020000) + b"Netatalk        " +
            struct.pack(">HIIIIII", 2, 2, 82, rlen, 9, 50, 32) +
            fi + b"\0" * (32 - len(fi)))


def put(d, name, blob, owner):
    p = os.path.join(d, name)
    with open(p, "wb") as fh:
        fh.write(blob)
    os.chown(p, *owner)
    return p


def slurp(p):
    with open(p, "rb") as fh:
        return fh.read()


def read_stream(smb, tid, name, length=65536):
    """The stream's bytes, or the NTSTATUS of its open."""
    try:
        f = smb.create(tid, name, st.FILE_READ_DATA, 7, 0, st.FILE_OPEN, 0)
    except s3.SessionError as err:
        return err.get_error_code()
    try:
        out = smb.read(tid, f, 0, length)
    except s3.SessionError as err:
        out = b"" if err.get_error_code() == 0xC0000011 else \
            err.get_error_code()
    smb.close(tid, f)
    return out


def write_afpinfo(smb, tid, name, fi):
    rec = b"AFP\0\0\0\x01\0" + b"\0" * 8 + fi + b"\0" * (44 - len(fi))
    f = smb.create(tid, name + ":AFP_AfpInfo", st.FILE_WRITE_DATA |
                   st.FILE_READ_DATA, 7, 0, st.FILE_OPEN_IF, 0)
    smb.write(tid, f, rec, 0, len(rec))
    smb.close(tid, f)


def outcome(smb, tid, d, name):
    """What a client sees of name after the conversion an AfpInfo open
    sets off: AfpInfo, stream list, every named stream's bytes, the ._
    file."""
    afp = read_stream(smb, tid, name + ":AFP_AfpInfo")
    lst = streams(smb, tid, name)
    data = {s: read_stream(smb, tid, name + s[:-len(":$DATA")])
            for s, _ in lst if s != "::$DATA"}
    p = os.path.join(d, "._" + name)
    return afp, lst, data, slurp(p) if os.path.exists(p) else None


def close_writes(d, fn):
    """The names in d closed after writing (inotify IN_CLOSE_WRITE, which
    breaks every directory lease on d) while fn runs."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    libc.inotify_add_watch(fd, d.encode(), 0x8)
    try:
        fn()
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            buf = b""
    finally:
        os.close(fd)
    names, off = [], 0
    while off + 16 <= len(buf):
        ln = struct.unpack_from("<iIII", buf, off)[3]
        names.append(buf[off + 16:off + 16 + ln].rstrip(b"\0").decode())
        off += 16 + ln
    return names


def attrs_demo():
    return [(TAGS, b"bplist00\xa0\x08"), (b"foo:bar", b"baz")]


def usmbd_checks(host, port, user, pw, d, owner, other):
    conn, smb, tid = connect(host, port, user, pw)
    put(d, "m1", b"data", owner)
    put(d, "._m1", mac_ad(attrs_demo(), FORK), owner)
    afp, lst, data, ad = outcome(smb, tid, d, "m1")
    say(isinstance(afp, bytes) and afp[:8] == b"AFP\0\0\0\x01\0" and
        afp[12:16] == b"\x80\0\0\0" and afp[16:48] == b"TESTSLOW" + b"\0" * 24,
        "a Mac's Finder info is the AfpInfo")
    want = sorted([("::$DATA", 4), (":AFP_AfpInfo:$DATA", 60),
                   (":AFP_Resource:$DATA", 16),
                   (":com.apple.metadata\uf022_kMDItemUserTags:$DATA", 10),
                   (":foo\uf022bar:$DATA", 3)])
    say(lst == want, "its attributes are streams, ':' as U+F022 (%s)" % lst)
    say(data.get(":foo\uf022bar:$DATA") == b"baz" and
        data.get(":AFP_Resource:$DATA") == FORK,
        "... with their bytes, and the fork")
    say(ad == samba_hdr(16, b"TESTSLOW") + FORK,
        "the ._ file is Samba's 82 bytes, the fork at 82")
    write_afpinfo(smb, tid, "m1", b"ABCDabcd")
    afp = read_stream(smb, tid, "m1:AFP_AfpInfo")
    say(isinstance(afp, bytes) and afp[16:24] == b"ABCDabcd",
        "converted once: the AfpInfo written since stays")
    # no attributes: only the Finder info; once too
    put(d, "m2", b"data", owner)
    put(d, "._m2", mac_ad_plain(FORK), owner)
    afp = read_stream(smb, tid, "m2:AFP_AfpInfo")
    say(isinstance(afp, bytes) and afp[16:24] == b"WAVEPTul" and
        read_stream(smb, tid, "m2:AFP_Resource") == FORK,
        "without attributes: the Finder info is the AfpInfo, the fork read")
    write_afpinfo(smb, tid, "m2", b"ABCDabcd")
    afp = read_stream(smb, tid, "m2:AFP_AfpInfo")
    say(isinstance(afp, bytes) and afp[16:24] == b"ABCDabcd",
        "... converted once (Samba converts it again at every open)")
    # an attribute past its block: nothing converted, nothing changed
    put(d, "h1", b"data", owner)
    bad = bytearray(mac_ad(attrs_demo(), FORK))
    struct.pack_into(">I", bad, 124, 0x10000)
    p = put(d, "._h1", bytes(bad), owner)
    afp = None

    def meet_h1():
        nonlocal afp
        afp = read_stream(smb, tid, "h1:AFP_AfpInfo")
    cw = close_writes(d, meet_h1)
    say(cw == [], "a malformed ._ file is not opened for writing at each "
        "meeting (its close would break the directory's leases: %s)" % cw)
    say(afp == NOT_FOUND and slurp(p) == bytes(bad) and
        streams(smb, tid, "h1") == [("::$DATA", 4),
                                    (":AFP_Resource:$DATA", 16)],
        "an attribute past its block: not converted, left as it is "
        "(its fork still read where it is)")
    # names that are no stream name here are left out, the rest converted
    put(d, "h2", b"data", owner)
    put(d, "._h2", mac_ad([(b"a/b", b"slash"), (b"AFP_AfpInfo", b"x" * 60),
                           (b"ok", b"fine")], FORK), owner)
    afp = read_stream(smb, tid, "h2:AFP_AfpInfo")
    names = [s for s, _ in streams(smb, tid, "h2")]
    say(isinstance(afp, bytes) and afp[16:24] == b"TESTSLOW" and
        names == sorted(["::$DATA", ":AFP_AfpInfo:$DATA",
                         ":AFP_Resource:$DATA", ":ok:$DATA"]),
        "names with '/' or of an Apple stream are left out (%s)" % names)
    # a ._ symlink to a Mac's file outside the share
    outside = os.path.join(os.path.dirname(d.rstrip("/")), "outside_ad")
    blob = mac_ad(attrs_demo(), FORK)
    with open(outside, "wb") as fh:
        fh.write(blob)
    os.chown(outside, *owner)
    put(d, "h3", b"data", owner)
    os.symlink(outside, os.path.join(d, "._h3"))
    afp = read_stream(smb, tid, "h3:AFP_AfpInfo")
    say(afp == NOT_FOUND and slurp(outside) == blob and
        streams(smb, tid, "h3") == [("::$DATA", 4)],
        "a ._ symlink out of the share is not followed")
    # a ._ hard link to a Mac's file outside the share, which the user
    # may write: neither converted nor cut
    os.chown(outside, *owner)
    put(d, "h5", b"data", owner)
    os.link(outside, os.path.join(d, "._h5"))
    afp = read_stream(smb, tid, "h5:AFP_AfpInfo")
    say(afp == NOT_FOUND and slurp(outside) == blob and
        streams(smb, tid, "h5") == [("::$DATA", 4)],
        "a ._ hard link to a file out of the share is neither converted nor cut")
    # another user's ._ file the caller may not write
    put(d, "h4", b"data", owner)
    p = put(d, "._h4", blob, (other.pw_uid, other.pw_gid))
    os.chmod(p, 0o644)
    afp = read_stream(smb, tid, "h4:AFP_AfpInfo")
    say(afp == NOT_FOUND and slurp(p) == blob,
        "another user's ._ file is neither converted nor changed")
    # another local account's ._ file beside the user's file, writable by
    # the user: the user's own worker would write its attributes over the
    # file's streams, which that account may not write
    put(d, "h6", b"data", owner)
    f = smb.create(tid, "h6:keep", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.write(tid, f, b"mine", 0, 4)
    smb.close(tid, f)
    evil = mac_ad([(b"keep", b"evil"), (b"new", b"planted")], FORK)
    p = put(d, "._h6", evil, (other.pw_uid, other.pw_gid))
    os.chmod(p, 0o666)
    afp = None

    def meet_h6():
        nonlocal afp
        afp = read_stream(smb, tid, "h6:AFP_AfpInfo")
    cw = close_writes(d, meet_h6)
    say(cw == [], "... nor opened for writing (%s)" % cw)
    say(afp == NOT_FOUND and read_stream(smb, tid, "h6:keep") == b"mine" and
        read_stream(smb, tid, "h6:new") == NOT_FOUND and slurp(p) == evil,
        "a ._ file of another owner than its file is not converted "
        "(its attributes are not the file's streams)")
    conn.logoff()


def interop_checks(host, port, sport, user, pw, d, owner):
    uconn, usmb, utid = connect(host, port, user, pw)
    sconn, ssmb, stid = connect(host, sport, user, pw)
    cases = [("x", mac_ad(attrs_demo(), FORK)),
             ("p", mac_ad_plain(FORK)),
             ("e", mac_ad([(b"e:mpty", b"v")], b""))]
    for tag, blob in cases:
        for who in ("u", "s"):
            put(d, who + tag, b"data", owner)
            put(d, "._" + who + tag, blob, owner)
        # Samba converts before its open but judged the stream absent
        # already: its first open is OBJECT_NAME_NOT_FOUND
        read_stream(usmb, utid, "u" + tag + ":AFP_AfpInfo")
        read_stream(ssmb, stid, "s" + tag + ":AFP_AfpInfo")
        u = outcome(usmb, utid, d, "u" + tag)
        s = outcome(ssmb, stid, d, "s" + tag)
        say(u[0] == s[0] and isinstance(u[0], bytes),
            "%s: the same AfpInfo bytes from both" % tag)
        say(u[1] == s[1] and u[2] == s[2],
            "%s: the same streams with the same bytes (%s)" % (tag, u[1]))
        if tag == "x":
            say(u[3] == s[3], "%s: the same ._ file" % tag)
        else:
            # p: Samba leaves a Mac's filler (and converts again at each
            # open); e: Samba leaves the empty fork's offset past the end
            print("note %s: the ._ file: usmbd %s, Samba %s" %
                  (tag, u[3][8:50].hex(), s[3][8:50].hex()))
    uconn.logoff()
    sconn.logoff()


def native_checks(host, port, user, pw, d):
    """fruit:encoding = native on [vfs_fruit]: a name a Mac sends with
    U+F022 (':') and U+F026 ('\\') is stored with ':' and '\\', never
    '/', and listed and named back with the private characters."""
    global SHARE
    SHARE = "vfs_fruit"
    conn, smb, tid = connect(host, port, user, pw)
    conn.createDirectory(SHARE, "enc")
    name = "a\uf022b\uf026c\uf001"
    f = smb.create(tid, "enc\\" + name, st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_CREATE, 0)
    smb.close(tid, f)
    on_disk = sorted(os.listdir(os.path.join(d, "enc")))
    say(on_disk == ["a:b\\c\x01"],
        "a U+F022 name is stored with ':' (and U+F026 '\\', U+F001 0x01) "
        "(%r)" % (on_disk,))
    listed = [e.get_longname() for e in conn.listPath(SHARE, "enc\\*")
              if e.get_longname() not in (".", "..")]
    say(listed == [name], "... and listed with U+F022 back (%r)" % listed)
    one = [e.get_longname() for e in conn.listPath(SHARE, "enc\\" + name)]
    say(one == [name], "... and found by its name alone (%r)" % one)
    f = smb.create(tid, "enc\\" + name, st.FILE_READ_ATTRIBUTES, 7, 0,
                   st.FILE_OPEN, 0)
    raw = smb.queryInfo(tid, f, fileInfoClass=18)  # FileAllInformation
    smb.close(tid, f)
    got = raw[100:100 + struct.unpack_from("<I", raw, 96)[0]].decode(
        "utf-16le")
    say(got.endswith(name), "... and named so in a name query (%r)" % got)
    conn.deleteFile(SHARE, "enc\\" + name)
    conn.deleteDirectory(SHARE, "enc")
    conn.logoff()


def main():
    host, port, user, pw, d, other = sys.argv[1:7]
    st_ = os.stat(d)
    owner = (st_.st_uid, st_.st_gid)
    if len(sys.argv) > 7 and sys.argv[7] == "native":
        native_checks(host, int(port), user, pw, d)
    elif len(sys.argv) > 7:
        interop_checks(host, int(port), int(sys.argv[7]), user, pw, d, owner)
    else:
        usmbd_checks(host, int(port), user, pw, d, owner, pwd.getpwnam(other))


if __name__ == "__main__":
    main()
