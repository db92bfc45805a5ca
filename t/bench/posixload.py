#!/usr/bin/python3
"""posixload: seed 004's loops over the SMB3 POSIX extensions (issue 16).

    posixload.py PORT USER PASSWORD N [PHASE...]

One 3.1.1 connection offering the POSIX negotiate context (impacket with
t/integ/posix_lib.py), then, each phase N loops, with the READY/DONE
protocol of smbload -P (t/bench/benchlib.py Paused):

  posix_doc     CREATE with the POSIX create context (a new name, mode
                0644, FILE_DELETE_ON_CLOSE) + QUERY_INFO of the POSIX
                level + CLOSE (which deletes it)
  posix_openqi  CREATE with the POSIX create context of an existing file
                + QUERY_INFO of the POSIX level + CLOSE

The phases (default: both) come after warm-up loops outside the window;
a phase named again (t/bench/posixbench.py `alternated` runs each phase
once per round on one connection) is warmed up only the first time.  A
server that does not answer the POSIX negotiate context prints
"ERROR ..." and exits 1 (no figure).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integ"))
from impacket import smb3structs as s3  # noqa: E402
from posix_lib import POSIX_LEVEL, connect, posix_ctx, posix_negotiated  # noqa: E402

SHARE_ALL = 7
RW = 0x00120089 | 0x00120116          # FILE_GENERIC_READ | FILE_GENERIC_WRITE
DELETE = 0x00010000
DOC_OPTS = s3.FILE_NON_DIRECTORY_FILE | s3.FILE_DELETE_ON_CLOSE


def pause(what, phase):
    print("%s phase=%s" % (what, phase), flush=True)
    sys.stdin.readline()


def main():
    port, user, pw, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    phases = sys.argv[5:] or ["posix_doc", "posix_openqi"]
    try:
        conn = connect(port, user, pw)
    except Exception as e:
        print("ERROR login: %s" % e, flush=True)
        return 1
    if not posix_negotiated(conn):
        print("ERROR the server did not answer the POSIX negotiate context",
              flush=True)
        return 1
    smb = conn.getSMBServer()
    tid = conn.connectTree("share")
    ctx = [posix_ctx(0o644)]

    def doc(i):
        f = smb.create(tid, "pl_%07d" % i, RW | DELETE, SHARE_ALL, DOC_OPTS,
                       s3.FILE_CREATE, 0, createContexts=ctx)
        smb.queryInfo(tid, f, fileInfoClass=POSIX_LEVEL)
        smb.close(tid, f)

    def openqi(i):
        f = smb.create(tid, "plqi.dat", RW, SHARE_ALL,
                       s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
                       createContexts=ctx)
        smb.queryInfo(tid, f, fileInfoClass=POSIX_LEVEL)
        smb.close(tid, f)

    smb.close(tid, smb.create(tid, "plqi.dat", RW, SHARE_ALL,
                              s3.FILE_NON_DIRECTORY_FILE,
                              s3.FILE_OVERWRITE_IF, 0, createContexts=ctx))
    fns = {"posix_doc": doc, "posix_openqi": openqi}
    warm = set()
    for phase in phases:
        fn = fns[phase]
        for i in range(16 if phase not in warm else 0):
            fn(n + i)                 # warm-up names after the window's
        warm.add(phase)
        pause("READY", phase)
        t0 = time.monotonic()
        for i in range(n):
            fn(i)
        secs = time.monotonic() - t0
        print("RESULT workload=posix phase=%s ops=%d bytes=0 secs=%.6f "
              "truncated=0" % (phase, n, secs), flush=True)
        pause("DONE", phase)
    conn.logoff()
    return 0


if __name__ == "__main__":
    sys.exit(main())
