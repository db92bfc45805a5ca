#!/usr/bin/python3
"""idleconn: many idle SMB sessions held open at once (issue 6, item 4).

    idleconn.py PORT N USERFILE [DEADLINE_SECS]

USERFILE has one "user password" per line; connection i logs in as user
i % len(users) (negotiate, NTLM session setup, tree connect to "share"),
all over 127.0.0.1.  Then, with the READY/DONE protocol of smbload -P:

  READY phase=open   all N sessions are open and each answered one ECHO;
                     the driver reads the server's memory now
  (a line on stdin)
  RESULT ...         one more ECHO on every session: ops = sessions that
                     answered (each must still be served while idle)
  DONE phase=open    then every session is logged off and closed.

Bounded: N connections, one ECHO round each side of the pause, and a
deadline (default 600 s) after which it stops with an ERROR line.
"""

import resource
import sys
import time

from impacket.smbconnection import SMBConnection
from impacket.smb3structs import SMB2_DIALECT_30


def main():
    port, n, ufile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    deadline = time.monotonic() + (float(sys.argv[4]) if len(sys.argv) > 4 else 600)
    users = [tuple(line.split()[:2]) for line in open(ufile) if line.strip()]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(want, soft), hard), hard))
    conns = []
    try:
        t0 = time.monotonic()
        for i in range(n):
            if time.monotonic() > deadline:
                raise RuntimeError("deadline passed after %d connections" % i)
            user, pw = users[i % len(users)]
            c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=port,
                              preferredDialect=SMB2_DIALECT_30, timeout=30)
            c.login(user, pw)
            tid = c.connectTree("share")
            conns.append((c, tid))
        for c, _ in conns:
            c.getSMBServer().echo()
        opened = time.monotonic() - t0
        print("READY phase=open", flush=True)
        sys.stdin.readline()
        t1 = time.monotonic()
        ok = 0
        for c, _ in conns:
            if time.monotonic() > deadline:
                break
            try:
                c.getSMBServer().echo()
                ok += 1
            except Exception:       # counted as not answering
                pass
        print("RESULT workload=idle phase=open ops=%d bytes=0 secs=%.6f truncated=%d "
              "open_secs=%.3f" % (ok, time.monotonic() - t1, int(ok < n), opened), flush=True)
        print("DONE phase=open", flush=True)
        sys.stdin.readline()
    finally:
        for c, tid in conns:
            try:
                c.disconnectTree(tid)
                c.logoff()
                c.close()
            except Exception:
                pass
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:      # the driver reports it as the reason
        print("ERROR %s: %s" % (type(e).__name__, str(e).replace("\n", " ")[:300]), flush=True)
        sys.exit(1)
