#!/usr/bin/env python3
"""fruit:metadata = netatalk (worker/fruit.h, proto/adouble.h), checked
with impacket on a usmbd share [meta] and, with a Samba port, against
Debian's Samba 4.17 serving the same directory with the same keys:

* an AfpInfo written through usmbd lands in user.org.netatalk.Metadata
  as a 402-byte AppleDouble blob whose header is byte for byte the one
  Samba writes, reads back as the record Samba makes of it, is listed
  once, and reaches a Mac's listing (READ_DIR_ATTR);
* what an older usmbd stored (user.usmbd.stream.AFP_AfpInfo) is read and
  listed, then replaced by the blob at the next write;
* an all-zero Finder info removes both; a malformed blob reads as none
  and is replaced by a good one at the next write; a blob's comment is
  kept by a write;
* with Samba: what Samba wrote usmbd reads with the same bytes, and what
  usmbd wrote Samba reads with the same bytes; the stream lists agree.

Prints "ok ..." / "FAIL ..." lines.
usage: fruit_meta.py HOST PORT USER PASSWORD SHAREDIR [SAMBA_PORT]
"""
import os
import struct
import sys

from impacket import smb3 as s3
from impacket import smb3structs as st
from impacket.smbconnection import SMBConnection

from info_lib import stream_sizes as streams

import fruit_client as fc

META = "user.org.netatalk.Metadata"
OLD = "user.usmbd.stream.AFP_AfpInfo"
NOT_FOUND = 0xC0000034
SHARE = "meta"


def say(good, what):
    print(("ok   " if good else "FAIL ") + what)


def record(label, kind=b"TEXTttxt"):
    """An AfpInfo as a Mac writes it: a type, a creator and Finder flags
    whose colour label is label."""
    r = bytearray(60)
    r[0:8] = b"AFP\0\0\0\1\0"
    r[16:24] = kind
    r[24:26] = bytes([0, (label & 7) << 1])
    return bytes(r)


def mac_reads(rec):
    """The record a server answers for rec's Finder info (Samba's
    afpinfo_new + afpinfo_pack): backup time "never", zeros after."""
    return b"AFP\0\0\0\1\0" + b"\0" * 4 + b"\x80\0\0\0" + rec[16:48] + \
        b"\0" * 12


def connect(host, port, user, pw):
    conn = SMBConnection(host, host, sess_port=port)
    conn.login(user, pw)
    return conn, conn._SMBConnection, conn.connectTree(SHARE)


def write_afp(smb, tid, name, data):
    f = smb.create(tid, name + ":AFP_AfpInfo", st.FILE_WRITE_DATA, 7, 0,
                   st.FILE_OPEN_IF, 0)
    smb.write(tid, f, data, 0, len(data))
    smb.close(tid, f)


def read_afp(smb, tid, name):
    """The stream's 60 bytes, or the NTSTATUS of its FILE_OPEN."""
    try:
        f = smb.create(tid, name + ":AFP_AfpInfo", st.FILE_READ_DATA, 7, 0,
                       st.FILE_OPEN, 0)
    except s3.SessionError as err:
        return err.get_error_code()
    data = smb.read(tid, f, 0, 60)
    smb.close(tid, f)
    return data


def xattr(path, name):
    try:
        return os.getxattr(path, name)
    except OSError:
        return None


def new_file(dirpath, name):
    p = os.path.join(dirpath, name)
    with open(p, "wb") as fh:
        fh.write(b"data")
    return p


def usmbd_checks(host, port, user, pw, d, owner):
    conn, smb, tid = connect(host, port, user, pw)
    rec = record(2)
    p = new_file(d, "w1")
    os.chown(p, *owner)
    write_afp(smb, tid, "w1", rec)
    blob = xattr(p, META)
    say(blob is not None and len(blob) == 402 and xattr(p, OLD) is None,
        "a write stores netatalk's 402-byte blob, no stream xattr (%s)"
        % (len(blob) if blob else None))
    hdr = struct.pack(">IIxxxxxxxxxxxxxxxxH", 0x00051607, 0x00020000, 8)
    for e in ((4, 154, 0), (8, 354, 16), (9, 122, 32), (14, 370, 4),
              (0x80444556, 374, 0), (0x80494E4F, 382, 0),
              (0x8053594E, 390, 0), (0x8053567E, 398, 0)):
        hdr += struct.pack(">III", *e)
    say(blob is not None and blob[:122] == hdr and blob[122:154] == rec[16:48],
        "the blob's header and entries are Samba's, the Finder info at 122")
    say(read_afp(smb, tid, "w1") == mac_reads(rec),
        "AFP_AfpInfo reads back as the record made from the blob")
    say(streams(smb, tid, "w1") == [("::$DATA", 4),
                                           (":AFP_AfpInfo:$DATA", 60)],
        "the stream list shows AFP_AfpInfo once, 60 bytes")

    # what an older usmbd wrote: read, listed, replaced at the next write
    p = new_file(d, "old")
    os.chown(p, *owner)
    old = record(5, b"APPLMACS")
    os.setxattr(p, OLD, old)
    say(read_afp(smb, tid, "old") == old,
        "an older usmbd's AfpInfo stream xattr is still read")
    say(streams(smb, tid, "old") == [("::$DATA", 4),
                                            (":AFP_AfpInfo:$DATA", 60)],
        "... and listed once")
    rec2 = record(3, b"APPLMACS")
    write_afp(smb, tid, "old", rec2)
    say(xattr(p, OLD) is None and xattr(p, META) is not None and
        read_afp(smb, tid, "old") == mac_reads(rec2),
        "... and replaced by netatalk's blob at the next write")

    # an all-zero Finder info removes both
    os.setxattr(p, OLD, old)
    write_afp(smb, tid, "old", b"AFP\0\0\0\1\0" + b"\0" * 52)
    say(xattr(p, OLD) is None and xattr(p, META) is None and
        read_afp(smb, tid, "old") == NOT_FOUND and
        streams(smb, tid, "old") == [("::$DATA", 4)],
        "an all-zero Finder info removes the blob and the older xattr")

    # a malformed blob reads as none; a write replaces it
    p = new_file(d, "bad")
    os.chown(p, *owner)
    bad = bytearray(blob)
    struct.pack_into(">I", bad, 26 + 2 * 12 + 4, 390)    # Finder info past end
    os.setxattr(p, META, bytes(bad))
    say(read_afp(smb, tid, "bad") == NOT_FOUND and
        streams(smb, tid, "bad") == [("::$DATA", 4)],
        "a malformed blob is no AfpInfo (not found, not listed)")
    write_afp(smb, tid, "bad", rec)
    nb = xattr(p, META)
    say(nb is not None and nb[:122] == hdr and
        read_afp(smb, tid, "bad") == mac_reads(rec),
        "... and a write replaces it with a good one")
    # a comment (another program's) is kept by a write
    withc = bytearray(blob)
    struct.pack_into(">I", withc, 26 + 8, 7)
    withc[154:161] = b"comment"
    os.setxattr(p, META, bytes(withc))
    write_afp(smb, tid, "bad", rec2)
    nb = xattr(p, META)
    say(nb is not None and nb[154:161] == b"comment" and
        nb[122:154] == rec2[16:48] and len(nb) == 402,
        "a write keeps the blob's comment and changes its Finder info only")
    # truncated to nothing by an overwrite: gone
    status, fid, _, action = fc.raw_create_ex(
        smb, tid, "bad:AFP_AfpInfo", st.FILE_WRITE_DATA, st.FILE_OVERWRITE_IF,
        0, [])
    fc.raw_close(smb, tid, fid)
    say(status == 0 and xattr(p, META) is None,
        "an AfpInfo overwritten (OVERWRITE_IF) leaves no blob")

    # a Mac's listing: the Finder info comes from the blob
    _, fid, _ = fc.raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                              st.FILE_OPEN, 0,
                              [fc.ctx(b"AAPL", fc.aapl_query())])
    fc.raw_close(smb, tid, fid)
    dh = smb.create(tid, "", st.FILE_READ_DATA | st.FILE_LIST_DIRECTORY, 7,
                    st.FILE_DIRECTORY_FILE, st.FILE_OPEN, 0)
    e = bytes(smb.queryDirectory(
        tid, dh, "w1", informationClass=st.FILEID_BOTH_DIRECTORY_INFORMATION))
    smb.close(tid, dh)
    say(e[78:86] == b"TEXTttxt" and e[86:88] == rec[24:26],
        "READ_DIR_ATTR: type, creator and flags from the blob")
    conn.logoff()


def interop_checks(host, port, sport, user, pw, d, owner):
    uconn, usmb, utid = connect(host, port, user, pw)
    sconn, ssmb, stid = connect(host, sport, user, pw)
    # Samba writes, usmbd reads
    p = new_file(d, "by_samba")
    os.chown(p, *owner)
    rec = record(6, b"8BPS8BIM")
    write_afp(ssmb, stid, "by_samba", rec)
    sblob = xattr(p, META)
    from_samba = read_afp(ssmb, stid, "by_samba")
    say(sblob is not None and len(sblob) == 402 and
        xattr(p, OLD) is None,
        "Samba 4.17 stores the AfpInfo in netatalk's blob (402 bytes)")
    say(read_afp(usmb, utid, "by_samba") == from_samba and
        from_samba == mac_reads(rec),
        "usmbd reads what Samba wrote with Samba's bytes")
    say(streams(usmb, utid, "by_samba") ==
        streams(ssmb, stid, "by_samba"),
        "the stream lists of usmbd and Samba agree (%s)"
        % streams(usmb, utid, "by_samba"))
    # usmbd writes (in place: Samba's dates kept), Samba reads
    rec2 = record(1, b"TEXTR*ch")
    write_afp(usmb, utid, "by_samba", rec2)
    ublob = xattr(p, META)
    say(ublob is not None and ublob[:122] == sblob[:122] and
        ublob[154:] == sblob[154:],
        "usmbd changes only the Finder info of Samba's blob")
    say(read_afp(ssmb, stid, "by_samba") == mac_reads(rec2),
        "Samba reads what usmbd wrote into its blob")
    p = new_file(d, "by_usmbd")
    os.chown(p, *owner)
    write_afp(usmb, utid, "by_usmbd", rec)
    say(read_afp(ssmb, stid, "by_usmbd") == read_afp(usmb, utid, "by_usmbd")
        == mac_reads(rec),
        "Samba reads a blob usmbd made with usmbd's bytes")
    say(streams(usmb, utid, "by_usmbd") ==
        streams(ssmb, stid, "by_usmbd"),
        "the stream lists of usmbd and Samba agree on usmbd's blob")
    # deleted through Samba (all-zero Finder info): gone for usmbd
    write_afp(ssmb, stid, "by_usmbd", b"AFP\0\0\0\1\0" + b"\0" * 52)
    say(xattr(p, META) is None and
        read_afp(usmb, utid, "by_usmbd") == NOT_FOUND,
        "deleted through Samba: usmbd finds no AfpInfo")
    uconn.logoff()
    sconn.logoff()



def main():
    host, port, user, pw, sharedir = sys.argv[1:6]
    d = sharedir
    st_ = os.stat(d)
    owner = (st_.st_uid, st_.st_gid)
    if len(sys.argv) > 6:
        interop_checks(host, int(port), int(sys.argv[6]), user, pw, d, owner)
    else:
        usmbd_checks(host, int(port), user, pw, d, owner)


if __name__ == "__main__":
    main()
