# Client of t/integ/posix.sh: the SMB3 POSIX extensions (smb3posix.org)
# over impacket's SMB 3.1.1, with the POSIX negotiate context added to its
# NEGOTIATE, the POSIX create context, and the POSIX information level of
# QUERY_INFO and QUERY_DIRECTORY decoded here.  argv: PORT SHARE_DIR CASE.
# Prints one line "ok DESC" or "FAIL DESC: why" per check; the share's
# directory on disk (argv[2]) is looked at directly.
import os
import pwd
import stat
import sys

from impacket import smb3, nt_errors
from impacket import smb3structs as s3
from impacket.smbconnection import SessionError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posix_lib import (POSIX_LEVEL, POSIX_TAG, cc_decode, connect,  # noqa: E402
                       dir_decode, info_decode, neg_contexts, nfs_mode_sd,
                       posix_ctx, resp_contexts)

PORT = int(sys.argv[1])
SHARE = sys.argv[2]
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE


def check(desc, cond, why=""):
    print(("ok %s" % desc) if cond else ("FAIL %s: %s" % (desc, why)),
          flush=True)


def name_of(e):
    code = e.get_error_code() if hasattr(e, "get_error_code") else e.error
    return nt_errors.ERROR_MESSAGES.get(code, ("0x%08x" % code,))[0]


def login(user="alice", pw="alicepw1", offer=True):
    c = connect(PORT, user, pw, offer)
    return c, c.connectTree("share")


def create(c, t, name, ctxs=None, disp=s3.FILE_OPEN_IF,
           opts=s3.FILE_NON_DIRECTORY_FILE, access=None):
    access = access or (s3.FILE_READ_DATA | s3.FILE_WRITE_DATA |
                        s3.FILE_READ_ATTRIBUTES | s3.DELETE)
    return c.getSMBServer().create(t, name, access, ALL, opts, disp, 0,
                                   createContexts=ctxs)


def status(fn):
    try:
        fn()
        return "OK"
    except (SessionError, smb3.SessionError) as e:
        return name_of(e)


def case_posix():
    c, t = login()
    srv = c.getSMBServer()
    ctxs = neg_contexts(srv.neg_raw)
    check("the POSIX negotiate context is answered with our GUID",
          ctxs.get(0x100) == [POSIX_TAG], repr(ctxs.get(0x100)))
    pw = pwd.getpwnam("alice")
    owner, group = "S-1-22-1-%d" % pw.pw_uid, "S-1-22-2-%d" % pw.pw_gid

    fid = create(c, t, "PosixFile", [posix_ctx(0o640)],
                 disp=s3.FILE_CREATE)
    rc = resp_contexts(srv).get(POSIX_TAG)
    check("a POSIX create gets the POSIX response context", rc is not None,
          repr(resp_contexts(srv)))
    if rc is not None:
        d, _ = cc_decode(rc)
        check("its mode is a regular file 0640",
              d["mode"] == stat.S_IFREG | 0o640, oct(d["mode"]))
        check("its nlink is 1, reparse tag 0",
              d["nlink"] == 1 and d["tag"] == 0, repr(d))
        check("owner and group are the Unix SIDs", d["owner"] == owner and
              d["group"] == group, "%s %s" % (d["owner"], d["group"]))
    st = os.stat(os.path.join(SHARE, "PosixFile"))
    check("the file is 0640 on disk", stat.S_IMODE(st.st_mode) == 0o640,
          oct(st.st_mode))
    srv.writeFile(t, fid, b"x" * 5)
    q = srv.queryInfo(t, fid, fileInfoClass=POSIX_LEVEL)
    d, _ = info_decode(q)
    check("QUERY_INFO FILE_POSIX_INFORMATION: eof, mode, owner, inode",
          d["eof"] == 5 and d["mode"] == stat.S_IFREG | 0o640 and
          d["owner"] == owner and d["ino"] == st.st_ino, repr(d))

    # case sensitive on a POSIX handle, insensitive without
    s = status(lambda: srv.close(t, create(c, t, "posixfile",
                                            disp=s3.FILE_CREATE)))
    check("without the context, posixfile is PosixFile (collision)",
          s == "STATUS_OBJECT_NAME_COLLISION", s)
    fid2 = create(c, t, "posixfile", [posix_ctx(0o600)],
                  disp=s3.FILE_CREATE)
    check("with it, posixfile is another name",
          os.path.exists(os.path.join(SHARE, "posixfile")) and
          os.path.exists(os.path.join(SHARE, "PosixFile")),
          repr(os.listdir(SHARE)))
    srv.close(t, fid2)
    s = status(lambda: srv.close(t, create(c, t, "POSIXFILE",
                                            [posix_ctx(0o600)],
                                            disp=s3.FILE_OPEN)))
    check("a POSIX open of POSIXFILE finds neither",
          s == "STATUS_OBJECT_NAME_NOT_FOUND", s)

    # the POSIX level needs a POSIX handle
    fid3 = create(c, t, "PosixFile")
    s = status(lambda: srv.queryInfo(t, fid3, fileInfoClass=POSIX_LEVEL))
    check("QUERY_INFO POSIX level on a Windows handle: INVALID_LEVEL",
          s == "STATUS_INVALID_LEVEL", s)
    srv.close(t, fid3)

    # POSIX pathname rules: ':' is a name character
    fid4 = create(c, t, "a:b", [posix_ctx(0o644)], disp=s3.FILE_CREATE)
    srv.close(t, fid4)
    check("a POSIX create of a:b makes a file named a:b",
          os.path.isfile(os.path.join(SHARE, "a:b")), repr(os.listdir(SHARE)))

    # a directory with its mode
    dfid = create(c, t, "pdir", [posix_ctx(0o750)], disp=s3.FILE_CREATE,
                  opts=s3.FILE_DIRECTORY_FILE,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    d, _ = cc_decode(resp_contexts(srv)[POSIX_TAG])
    # a directory's wire mode has no type bits (Linux 6.1 takes them as
    # mode bits): wire type 0, the attributes say directory
    check("a POSIX mkdir: 0750 in the response (no type bits) and on disk",
          d["mode"] == stat.S_IFREG | 0o750 and stat.S_IMODE(os.stat(
              os.path.join(SHARE, "pdir")).st_mode) == 0o750, oct(d["mode"]))
    srv.close(t, dfid)

    # a listing of the POSIX level through a POSIX handle of the root
    rfid = create(c, t, "", [posix_ctx(0)], opts=s3.FILE_DIRECTORY_FILE,
                  disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    ents = dir_decode(srv.queryDirectory(t, rfid, "*",
                                         informationClass=POSIX_LEVEL))
    check("QUERY_DIRECTORY POSIX: PosixFile 0640 with the Unix owner",
          ents.get("PosixFile", {}).get("mode") == stat.S_IFREG | 0o640 and
          ents["PosixFile"]["owner"] == owner, repr(ents.get("PosixFile")))
    lk = ents.get("link", {})
    check("a symlink is listed as a symlink reparse point, not followed",
          lk.get("mode", 0) & 0o170000 == stat.S_IFLNK and
          lk.get("tag") == 0xA000000C and lk.get("attrs", 0) & 0x400,
          repr(lk))
    ff = ents.get("fifo", {})
    check("a fifo is listed as a fifo",
          ff.get("mode", 0) & 0o170000 == stat.S_IFIFO, repr(ff))
    check("both spellings listed", "posixfile" in ents and "a:b" in ents,
          repr(sorted(ents)))
    srv.close(t, rfid)
    # impacket ignores enumRestart: a fresh handle for a new pattern
    rfid = create(c, t, "", [posix_ctx(0)], opts=s3.FILE_DIRECTORY_FILE,
                  disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    one = dir_decode(srv.queryDirectory(t, rfid, "posixfile",
                                        informationClass=POSIX_LEVEL))
    check("a POSIX listing matches names exactly", list(one) == ["posixfile"],
          repr(list(one)))
    srv.close(t, rfid)
    wfid = create(c, t, "", opts=s3.FILE_DIRECTORY_FILE, disp=s3.FILE_OPEN,
                  access=s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES)
    s = status(lambda: srv.queryDirectory(t, wfid, "*",
                                          informationClass=POSIX_LEVEL))
    check("QUERY_DIRECTORY POSIX level on a Windows handle: INVALID_LEVEL",
          s == "STATUS_INVALID_LEVEL", s)
    srv.close(t, wfid)

    # chmod: a DACL of one ACE for S-1-5-88-3-MODE on a POSIX handle
    cfid = create(c, t, "PosixFile", [posix_ctx(0)], disp=s3.FILE_OPEN,
                  access=s3.READ_CONTROL | s3.WRITE_DAC |
                  s3.FILE_READ_ATTRIBUTES)
    srv.setInfo(t, cfid, nfs_mode_sd(0o604), infoType=3,
                additionalInformation=4)
    d, _ = info_decode(srv.queryInfo(t, cfid, fileInfoClass=POSIX_LEVEL))
    check("chmod 0604 through the NFS mode SID (on disk and POSIX stat)",
          stat.S_IMODE(os.stat(os.path.join(SHARE, "PosixFile")).st_mode) ==
          0o604 and d["mode"] == stat.S_IFREG | 0o604, oct(d["mode"]))
    srv.close(t, cfid)
    s = status(lambda: create(c, t, "bad", [posix_ctx(0, b"\0\0\0")]))
    check("a POSIX context of 3 bytes: INVALID_PARAMETER",
          s == "STATUS_INVALID_PARAMETER", s)
    try:
        srv.close(t, fid)
    except KeyError:
        pass    # impacket keys opens by name: fid3 took its entry


def case_off():
    """The server does not answer the context (config no, or not offered);
    a POSIX create context is then ignored."""
    c, t = login()
    srv = c.getSMBServer()
    ctxs = neg_contexts(srv.neg_raw)
    check("no POSIX negotiate context in the answer", 0x100 not in ctxs,
          repr(ctxs))
    fid = create(c, t, "OffFile", [posix_ctx(0o600)], disp=s3.FILE_CREATE)
    check("a POSIX create context is ignored (no response context)",
          POSIX_TAG not in resp_contexts(srv), repr(resp_contexts(srv)))
    srv.close(t, fid)


def case_unoffered():
    c, t = login(offer=False)
    srv = c.getSMBServer()
    check("not offered: not answered", 0x100 not in neg_contexts(srv.neg_raw))
    fid = create(c, t, "Unoffered", [posix_ctx(0o600)], disp=s3.FILE_CREATE)
    check("not negotiated: the create context is ignored",
          POSIX_TAG not in resp_contexts(srv), repr(resp_contexts(srv)))
    srv.close(t, fid)


{"posix": case_posix, "off": case_off,
 "unoffered": case_unoffered}[sys.argv[3]]()
