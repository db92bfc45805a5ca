#!/usr/bin/python3
"""A client that stops reading (t/integ/uring.sh): usage PORT PASSWORD.

alice writes a 15 MiB file, then sends 240 READs of 64 KiB and
an ECHO without reading an answer, so the worker's output to this
connection is stuck (more than the socket buffers hold) while requests
are still queued behind it; after a pause it reads every answer and
checks each READ's bytes and the ECHO's status.  Prints "ok ..." or
"FAIL ..." lines.
"""
import os
import sys
import time

from impacket import smb3, smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT = int(sys.argv[1])
PW = sys.argv[2]
CHUNK = 64 * 1024
NREADS = 240


def main():
    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=PORT,
                         preferredDialect=smb3.SMB2_DIALECT_30)
    conn.login("alice", PW)
    s = conn.getSMBServer()
    tid = conn.connectTree("share")
    data = os.urandom(NREADS * CHUNK)
    fid = conn.createFile(tid, "slow.dat")
    off = 0
    while off < len(data):
        off += conn.writeFile(tid, fid, data[off:off + 1024 * 1024], off)
    ids = []
    for i in range(NREADS):
        p = s.SMB_PACKET()
        p["Command"] = s3.SMB2_READ
        p["TreeID"] = tid
        r = s3.SMB2Read()
        r["Padding"] = 0x50
        r["FileID"] = fid
        r["Length"] = CHUNK
        r["Offset"] = i * CHUNK
        p["Data"] = r
        ids.append(s.sendSMB(p))
    e = s.SMB_PACKET()
    e["Command"] = s3.SMB2_ECHO
    e["Data"] = s3.SMB2Echo()
    echo_id = s.sendSMB(e)
    time.sleep(1.5)            # the server's sends block meanwhile
    bad = 0
    for i, mid in enumerate(ids):
        ans = s.recvSMB(mid)
        if not ans.isValidAnswer(0):
            bad += 1
            continue
        got = s3.SMB2Read_Response(ans["Data"])["Buffer"]
        if got != data[i * CHUNK:(i + 1) * CHUNK]:
            bad += 1
    print("%s %d READs of 64 KiB answered intact after the client stalled "
          "(%d wrong)" % ("ok" if bad == 0 else "FAIL", NREADS, bad))
    ans = s.recvSMB(echo_id)
    print("%s the ECHO queued behind them answered" %
          ("ok" if ans.isValidAnswer(0) else "FAIL"))
    # The connection still serves requests the usual way.
    back = conn.readFile(tid, fid, 0, CHUNK)
    print("%s a READ after the stall" %
          ("ok" if back == data[:CHUNK] else "FAIL"))
    conn.closeFile(tid, fid)
    conn.deleteFile("share", "slow.dat")
    conn.logoff()


if __name__ == "__main__":
    main()
