# Client of t/integ/links.sh: delete pending belongs to a name (a hard
# link), not to the file, and a delete-on-close CREATE that waits for a
# break of the client's own lease is not failed by itself.  Prints one
# line "ok DESC" or "FAIL DESC: why" per check; the share's directory on
# disk is argv[2] (checked directly, not through the server).
import os
import struct
import sys
import time

from impacket import smb3structs as s3

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from state_lib import (ALL, login, create, status_of, lease_ctx,  # noqa: E402
                       break_wait)

SHARE = sys.argv[2]
RD = s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES
DOC = s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE


def close(c, t, fid):
    """impacket keys its table of opens by name: a second handle of a name
    closed first leaves the first one's entry gone (KeyError after the
    server answered)."""
    try:
        c.getSMBServer().close(t, fid)
    except KeyError:
        pass


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def on_disk(*names):
    return " ".join("%s=%s" % (n, os.path.exists(os.path.join(SHARE, n)))
                    for n in names)


def mklinks(a, b, data=b"hard link data\n"):
    for n in (a, b):
        try:
            os.unlink(os.path.join(SHARE, n))
        except FileNotFoundError:
            pass
    with open(os.path.join(SHARE, a), "wb") as f:
        f.write(data)
    os.chmod(os.path.join(SHARE, a), 0o666)
    os.link(os.path.join(SHARE, a), os.path.join(SHARE, b))


def delete_now(c, t, name):
    """What a client's unlink sends: CREATE(DELETE, delete-on-close) and
    CLOSE."""
    srv = c.getSMBServer()
    fid = srv.create(t, name, s3.DELETE | s3.FILE_READ_ATTRIBUTES, ALL, DOC,
                     s3.FILE_OPEN, 0)
    srv.close(t, fid)


def set_disposition(c, t, fid):
    c.getSMBServer().setInfo(t, fid, inputBlob=b"\x01",
                             infoType=s3.SMB2_0_INFO_FILE,
                             fileInfoClass=s3.SMB2_FILE_DISPOSITION_INFO)


def rename(c, t, fid, to):
    name = to.encode("utf-16le")
    blob = struct.pack("<B7sQL", 0, b"\0" * 7, 0, len(name)) + name
    c.getSMBServer().setInfo(t, fid, inputBlob=blob,
                             infoType=s3.SMB2_0_INFO_FILE,
                             fileInfoClass=s3.SMB2_FILE_RENAME_INFO)


def cmd_links():
    a, at = login("alice")
    b, bt = login("bob")

    # The Linux client's data loss: ul1 open, ul2 deleted, ul1 closed.
    mklinks("ul1", "ul2")
    h1 = create(a, at, "ul1", access=RD, disp=s3.FILE_OPEN)
    delete_now(a, at, "ul2")
    check("deleting link ul2 while ul1 is open removes ul2 at once",
          on_disk("ul1", "ul2") == "ul1=True ul2=False", on_disk("ul1", "ul2"))
    st = status_of(lambda: close(a, at, create(a, at, "ul1", access=RD,
                                                  disp=s3.FILE_OPEN)))
    check("ul1 opens again (not delete pending)", st == "OK", st)
    close(a, at, h1)
    check("closing ul1 leaves ul1 (the name not deleted)",
          on_disk("ul1", "ul2") == "ul1=True ul2=False", on_disk("ul1", "ul2"))
    with open(os.path.join(SHARE, "ul1"), "rb") as f:
        data = f.read()
    check("ul1 keeps its data", data == b"hard link data\n", repr(data))

    # ul2 held by a second handle and made delete pending by SET_INFO:
    # only ul2 is delete pending, and it goes at ul2's own last close.
    mklinks("hl1", "hl2")
    h1 = create(a, at, "hl1", access=RD, disp=s3.FILE_OPEN)
    h2 = create(a, at, "hl2", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    h2b = create(a, at, "hl2", access=RD, disp=s3.FILE_OPEN)
    set_disposition(a, at, h2)
    st = status_of(lambda: close(a, at, create(a, at, "hl2", access=RD,
                                                  disp=s3.FILE_OPEN)))
    check("a new open of the delete-pending name fails", 
          st == "STATUS_DELETE_PENDING", st)
    st = status_of(lambda: close(a, at, create(a, at, "hl1", access=RD,
                                                  disp=s3.FILE_OPEN)))
    check("the other name of the file still opens", st == "OK", st)
    close(a, at, h2)
    close(a, at, h1)
    check("hl2 stays while another handle of hl2 is open",
          on_disk("hl1", "hl2") == "hl1=True hl2=True", on_disk("hl1", "hl2"))
    close(a, at, h2b)
    check("hl2's last handle closed: hl2 gone, hl1 kept",
          on_disk("hl1", "hl2") == "hl1=True hl2=False", on_disk("hl1", "hl2"))

    # Across workers and users: alice holds xl1, bob deletes xl2.
    mklinks("xl1", "xl2")
    h1 = create(a, at, "xl1", access=RD, disp=s3.FILE_OPEN)
    delete_now(b, bt, "xl2")
    close(a, at, h1)
    check("bob deletes xl2 while alice's worker holds xl1: xl1 kept",
          on_disk("xl1", "xl2") == "xl1=True xl2=False", on_disk("xl1", "xl2"))

    # A rename carries the name's pending delete and handles along: two
    # handles of r1 in one worker, one renames to r2, the other deletes.
    for n in ("r1", "r2"):
        if os.path.exists(os.path.join(SHARE, n)):
            os.unlink(os.path.join(SHARE, n))
    open(os.path.join(SHARE, "r1"), "wb").close()
    os.chmod(os.path.join(SHARE, "r1"), 0o666)
    g1 = create(a, at, "r1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    g2 = create(a, at, "r1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    rename(a, at, g1, "r2")
    fresh = create(a, at, "r1", access=RD, disp=s3.FILE_CREATE)
    close(a, at, fresh)
    set_disposition(a, at, g2)
    close(a, at, g2)
    close(a, at, g1)
    check("a delete by a handle of a renamed file removes the new name only",
          on_disk("r1", "r2") == "r1=True r2=False", on_disk("r1", "r2"))

    # The same with the other handle in another user's worker: it learns
    # the file's new name from the kernel, deletes the file there, and
    # never the file that took the old name.
    for n in ("s1", "s2"):
        if os.path.exists(os.path.join(SHARE, n)):
            os.unlink(os.path.join(SHARE, n))
    open(os.path.join(SHARE, "s1"), "wb").close()
    os.chmod(os.path.join(SHARE, "s1"), 0o666)
    gb = create(b, bt, "s1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    ga = create(a, at, "s1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    rename(a, at, ga, "s2")
    close(a, at, ga)
    fresh = create(a, at, "s1", access=RD, disp=s3.FILE_CREATE)
    close(a, at, fresh)
    set_disposition(b, bt, gb)
    close(b, bt, gb)
    check("a stale name in another worker never deletes the file that "
          "took it, and the delete follows the rename",
          on_disk("s1", "s2") == "s1=True s2=False", on_disk("s1", "s2"))

    # A rename through a handle whose file another worker renamed: the
    # file moves, not the one that took its old name (Windows renames by
    # handle).
    for n in ("m1", "m2", "m3"):
        if os.path.exists(os.path.join(SHARE, n)):
            os.unlink(os.path.join(SHARE, n))
    with open(os.path.join(SHARE, "m1"), "wb") as fh:
        fh.write(b"moved twice\n")
    os.chmod(os.path.join(SHARE, "m1"), 0o666)
    gb = create(b, bt, "m1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    ga = create(a, at, "m1", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    rename(a, at, ga, "m2")
    close(a, at, ga)
    fresh = create(a, at, "m1", access=RD, disp=s3.FILE_CREATE)
    close(a, at, fresh)
    st = status_of(lambda: rename(b, bt, gb, "m3"))
    close(b, bt, gb)
    with open(os.path.join(SHARE, "m3"), "rb") as fh:
        data = fh.read() if os.path.exists(os.path.join(SHARE, "m3")) \
            else b""
    check("a rename through a handle another worker's rename moved takes "
          "that file, not the one that took its old name",
          st == "OK" and on_disk("m1", "m2", "m3") ==
          "m1=True m2=False m3=True" and data == b"moved twice\n",
          "%s %s %r" % (st, on_disk("m1", "m2", "m3"), data))
    os.rename(os.path.join(SHARE, "m3"), os.path.join(SHARE, "m4"))
    h = create(a, at, "m4", access=RD | s3.DELETE, disp=s3.FILE_OPEN)
    os.rename(os.path.join(SHARE, "m4"), os.path.join(SHARE, "m5"))
    st = status_of(lambda: rename(a, at, h, "m6"))
    close(a, at, h)
    check("... and one made on the server itself",
          st == "OK" and on_disk("m5", "m6") == "m5=False m6=True",
          "%s %s" % (st, on_disk("m5", "m6")))


# ---- raw SMB2, for a compound and a lease break on one connection ----

SMB2_CREATE, SMB2_CLOSE, SMB2_OPLOCK_BREAK = 5, 6, 0x12
FLAG_RESPONSE, FLAG_ASYNC, FLAG_RELATED = 1, 2, 4
STATUS_PENDING = 0x103


def hdr(srv, cmd, tid, flags=0, nxt=0):
    """A plain SMB2 header (unsigned session); the caller sets NextCommand
    at offset 20 once the body's length is known."""
    mid = srv._Connection['SequenceWindow']
    srv._Connection['SequenceWindow'] += 1
    return struct.pack("<4sHHLHHLLQLLQ16s", b"\xfeSMB", 64, 1, 0, cmd, 64,
                       flags, nxt, mid, 0, tid, srv._Session['SessionID'],
                       b"\0" * 16), mid


def create_body(name, access, options):
    n = name.encode("utf-16le")
    return struct.pack("<HBBLQQLLLLLHHLL", 57, 0, 0, 2, 0, 0, access, 0,
                       7, s3.FILE_OPEN, options, 120, len(n), 0, 0) + n


def frames(srv, tid, want, timeout=40):
    """Reads frames until `want` (a set of message ids) all have final
    answers; answers lease breaks with an ack of what they ask for.
    Returns {mid: (command, status)} and the number of breaks."""
    out, nbreaks, t0 = {}, 0, time.time()
    while not want.issubset(out) and time.time() - t0 < timeout:
        data = srv._NetBIOSSession.recv_packet(timeout).get_trailer()
        pos = 0
        while True:
            (status, cmd, flags, nxt, mid) = struct.unpack_from(
                "<L H 2x L L Q", data, pos + 8)
            if cmd == SMB2_OPLOCK_BREAK and mid == 0xFFFFFFFFFFFFFFFF:
                nbreaks += 1
                key = data[pos + 72:pos + 88]
                new = struct.unpack_from("<L", data, pos + 92)[0]
                h, _ = hdr(srv, SMB2_OPLOCK_BREAK, tid)
                srv._NetBIOSSession.send_packet(
                    h + struct.pack("<HHL16sLQ", 36, 0, 0, key, new, 0))
            elif not (flags & FLAG_ASYNC and status == STATUS_PENDING):
                out[mid] = (cmd, status)
                if cmd == SMB2_OPLOCK_BREAK and status != 0:
                    print("FAIL lease break ack: 0x%08x" % status, flush=True)
            if nxt == 0:
                break
            pos += nxt
    return out, nbreaks


def cmd_compound():
    # The Linux client's unlink of a file it holds open with a lease:
    # CREATE(DELETE_ON_CLOSE) + CLOSE in one compound; the CREATE waits
    # for the break of the client's own lease (handle caching), then must
    # succeed, and the file goes when the leased handle closes.
    c, t = login("alice")
    srv = c.getSMBServer()
    path = os.path.join(SHARE, "leased")
    with open(path, "wb") as f:
        f.write(b"x")
    os.chmod(path, 0o666)
    key = os.urandom(16)
    h = create(c, t, "leased", access=RD | s3.FILE_WRITE_DATA,
               disp=s3.FILE_OPEN, contexts=[lease_ctx(key, 7)])
    h1, m1 = hdr(srv, SMB2_CREATE, t, 0, 0)
    b1 = create_body("leased", s3.DELETE | s3.FILE_READ_ATTRIBUTES, DOC)
    b1 += b"\0" * (-(len(h1) + len(b1)) % 8)
    h1 = h1[:20] + struct.pack("<L", len(h1) + len(b1)) + h1[24:]
    h2, m2 = hdr(srv, SMB2_CLOSE, t, FLAG_RELATED, 0)
    b2 = struct.pack("<HHL16s", 24, 0, 0, b"\xff" * 16)
    srv._NetBIOSSession.send_packet(h1 + b1 + h2 + b2)
    t0 = time.time()
    got, nbreaks = frames(srv, t, {m1, m2})
    st1 = got.get(m1, (0, None))[1]
    st2 = got.get(m2, (0, None))[1]
    check("compound delete-on-close CREATE of an own-leased file succeeds "
          "(%d break)" % nbreaks, st1 == 0, "CREATE 0x%08x" % (st1 or 0))
    check("... and its related CLOSE", st2 == 0, "CLOSE 0x%08x" % (st2 or 0))
    check("... at the ack, not at the break timeout", time.time() - t0 < 10,
          "%.1f s" % (time.time() - t0))
    check("the name stays while the leased handle is open",
          os.path.exists(path), "gone early")
    close(c, t, h)
    check("the leased handle's close deletes it", not os.path.exists(path),
          "still there")


def cmd_compound_rename():
    # The Linux client's rename of a file it holds open with a lease:
    # CREATE(DELETE, no lease) + SET_INFO(rename) + CLOSE in one
    # compound.  The CREATE waits for the break of the client's write
    # caching, then the rename for its handle caching (as on Windows,
    # smb2.compound_async.rename_middle): two waits in one chain, whose
    # rest must not be charged twice (it was, and the rename failed).
    c, t = login("alice")
    srv = c.getSMBServer()
    src, dst = os.path.join(SHARE, "mv-src"), os.path.join(SHARE, "mv-dst")
    for p in (src, dst):
        if os.path.exists(p):
            os.unlink(p)
    with open(src, "wb") as f:
        f.write(b"moved")
    os.chmod(src, 0o666)
    key = os.urandom(16)
    h = create(c, t, "mv-src", access=RD | s3.FILE_WRITE_DATA,
               disp=s3.FILE_OPEN, contexts=[lease_ctx(key, 7)])
    h1, m1 = hdr(srv, SMB2_CREATE, t)
    b1 = create_body("mv-src", s3.DELETE | s3.FILE_READ_ATTRIBUTES,
                     s3.FILE_NON_DIRECTORY_FILE)
    b1 += b"\0" * (-(len(h1) + len(b1)) % 8)
    name = "mv-dst".encode("utf-16le")
    info = struct.pack("<B7sQL", 0, b"\0" * 7, 0, len(name)) + name
    h2, m2 = hdr(srv, 0x11, t, FLAG_RELATED)	# SET_INFO
    b2 = struct.pack("<HBBLHHL16s", 33, s3.SMB2_0_INFO_FILE,
                     s3.SMB2_FILE_RENAME_INFO, len(info), 96, 0, 0,
                     b"\xff" * 16) + info
    b2 += b"\0" * (-(len(h2) + len(b2)) % 8)
    h3, m3 = hdr(srv, SMB2_CLOSE, t, FLAG_RELATED)
    b3 = struct.pack("<HHL16s", 24, 0, 0, b"\xff" * 16)
    h1 = h1[:20] + struct.pack("<L", len(h1) + len(b1)) + h1[24:]
    h2 = h2[:20] + struct.pack("<L", len(h2) + len(b2)) + h2[24:]
    srv._NetBIOSSession.send_packet(h1 + b1 + h2 + b2 + h3 + b3)
    got, nbreaks = frames(srv, t, {m1, m2, m3})
    sts = [got.get(m, (0, None))[1] for m in (m1, m2, m3)]
    check("compound rename of an own-leased open file: CREATE, SET_INFO, "
          "CLOSE all succeed (%d break)" % nbreaks, sts == [0, 0, 0],
          " ".join("None" if x is None else "0x%08x" % x for x in sts))
    check("... and the file has its new name",
          os.path.exists(dst) and not os.path.exists(src),
          on_disk("mv-src", "mv-dst"))
    check("... after the breaks of write and then handle caching",
          nbreaks == 2, "%d breaks" % nbreaks)
    close(c, t, h)


def rename_dir_case(holder, lease):
    """alice (one connection) holds d/f open, with an RH lease or none;
    alice (another connection) renames d.  holder: what the first does
    with a break: "close" or "ack".  Returns (breaks seen, the rename's
    status, seconds it took)."""
    for n in ("rd", "rd-new"):
        p = os.path.join(SHARE, n)
        if os.path.isdir(p):
            for e in os.listdir(p):
                os.unlink(os.path.join(p, e))
            os.rmdir(p)
    os.mkdir(os.path.join(SHARE, "rd"))
    os.chmod(os.path.join(SHARE, "rd"), 0o777)
    a, ta = login("alice")
    b, tb = login("alice")
    sa, sb = a.getSMBServer(), b.getSMBServer()
    key = os.urandom(16)
    h = create(a, ta, "rd\\f", access=RD, disp=s3.FILE_OPEN_IF,
               contexts=[lease_ctx(key, 3)] if lease else None)
    d = sb.create(tb, "rd", s3.DELETE | s3.FILE_READ_ATTRIBUTES, ALL,
                  s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    name = "rd-new".encode("utf-16le")
    info = struct.pack("<B7sQL", 0, b"\0" * 7, 0, len(name)) + name
    h1, m1 = hdr(sb, 0x11, tb)	# SET_INFO FileRenameInformation
    raw = d.getData() if hasattr(d, "getData") else bytes(d)
    sb._NetBIOSSession.send_packet(h1 + struct.pack(
        "<HBBLHHL16s", 33, s3.SMB2_0_INFO_FILE, s3.SMB2_FILE_RENAME_INFO,
        len(info), 96, 0, 0, raw) + info)
    t0, nbreaks = time.time(), 0
    if lease:
        sa._timeout = 10	# no break at all: fail, do not hang
        try:
            brk = break_wait(sa)
        except Exception as e:  # noqa: BLE001 (any: the check says why)
            return 0, "no break (%s)" % type(e).__name__, time.time() - t0
        nbreaks = 1
        if holder == "close":
            close(a, ta, h)
            h = None
        else:
            new = struct.unpack_from("<L", brk, 28)[0]
            ha, ma = hdr(sa, SMB2_OPLOCK_BREAK, ta)
            sa._NetBIOSSession.send_packet(
                ha + struct.pack("<HHL16sLQ", 36, 0, 0, key, new, 0))
            sa.recvSMB(ma)
    got, _ = frames(sb, tb, {m1}, timeout=10)
    st = got.get(m1, (0, None))[1]
    if h is not None:
        close(a, ta, h)
    close(b, tb, d)
    return nbreaks, st, time.time() - t0


def cmd_rename_dir():
    # MS-FSA 2.1.5.14.11 as Windows does it (smbtorture 4.22
    # smb2.lease.rename_dir_openfile): a directory with an open file below
    # is renamed only after that open's holder, asked to give up its
    # handle caching, closes it.
    n, st, dt = rename_dir_case("close", True)
    check("a directory rename breaks the H lease of an open below and "
          "succeeds when its holder closes (%d break)" % n,
          n == 1 and st == 0, "status %r" % st)
    check("... at the close, not at the break timeout", dt < 10,
          "%.1f s" % dt)
    check("... and the directory has its new name",
          os.path.isdir(os.path.join(SHARE, "rd-new")), on_disk("rd", "rd-new"))
    n, st, dt = rename_dir_case("ack", True)
    check("... fails ACCESS_DENIED when the holder keeps its handle "
          "(acknowledges to R)", n == 1 and st == 0xC0000022,
          "status %r" % st)
    n, st, dt = rename_dir_case("", False)
    check("... and at once when the open below caches no handle",
          st == 0xC0000022 and dt < 5, "status %r after %.1f s" % (st, dt))


if __name__ == "__main__":
    {"links": cmd_links, "compound": cmd_compound,
     "compound-rename": cmd_compound_rename,
     "rename-dir": cmd_rename_dir}[sys.argv[3]]()
