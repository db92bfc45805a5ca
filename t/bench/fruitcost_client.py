#!/usr/bin/env python3
"""t/bench/fruitcost.sh's client: lists a directory of a share by
FileIdBothDirectoryInformation, RUNS times, on a connection with AAPL
negotiated (READ_DIR_ATTR) and on one without, alternated; prints the
median, min and max milliseconds of each.

usage: fruitcost_client.py PORT USER PASSWORD RUNS SHARE DIR
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integ"))
from fruit_client import aapl_query, ctx, login, raw_close, raw_create  # noqa
from impacket import smb3structs as st  # noqa


def listing(smb, tid, d):
    h = smb.create(tid, d, st.FILE_READ_DATA | st.FILE_LIST_DIRECTORY, 7,
                   st.FILE_DIRECTORY_FILE, st.FILE_OPEN, 0)
    n = 0
    first = True
    while True:
        try:
            smb.queryDirectory(tid, h, "*", enumRestart=first,
                               informationClass=st.FILEID_BOTH_DIRECTORY_INFORMATION,
                               maxBufferSize=65536)
        except Exception:
            break
        first = False
        n += 1
    smb.close(tid, h)
    return n


def main():
    port, user, pw, runs, share, d = sys.argv[1:7]
    conns = {}
    for mode in ("plain", "aapl"):
        conn, smb = login("127.0.0.1", int(port), user, pw)
        tid = conn.connectTree(share)
        if mode == "aapl":
            status, fid, out = raw_create(smb, tid, "", st.FILE_READ_ATTRIBUTES,
                                          st.FILE_OPEN, 0,
                                          [ctx(b"AAPL", aapl_query())])
            if b"AAPL" not in out:
                print("AAPL not answered")
                sys.exit(1)
            raw_close(smb, tid, fid)
        conns[mode] = (conn, smb, tid)
    modes = [os.environ["FRUITCOST_ONLY"]] if "FRUITCOST_ONLY" in os.environ \
        else ["plain", "aapl"]
    ms = {"plain": [], "aapl": []}
    for _ in range(int(runs)):
        for mode in modes:
            conn, smb, tid = conns[mode]
            t0 = time.perf_counter()
            listing(smb, tid, d)
            ms[mode].append((time.perf_counter() - t0) * 1000)
    for mode in modes:
        v = sorted(ms[mode])
        print("%-6s median %8.2f ms  min %8.2f  max %8.2f  (%d runs)" %
              (mode, v[(len(v) - 1) // 2], v[0], v[-1], len(v)))


main()
