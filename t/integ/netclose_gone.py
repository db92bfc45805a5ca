# A worker that dies while the master waits for its part of an
# administrator's NetrFileClose (t/integ/netenum.sh, daemon/admreq.c):
# carol's worker is stopped (it cannot answer MSG_ADMIN_DO), alice asks to
# close an unknown FileId, and carol's worker is killed 0.4 s later.  The
# master has then no answer left to wait for and must answer alice at
# once, not at its 2 s deadline (and hold no slot for a dead pid, which
# may come back as another child).
#   netclose_gone.py PORT PID
# Prints "ok ..." / "FAIL ..." lines.
import os, signal, sys, threading, time
sys.dont_write_bytecode = True
from impacket.dcerpc.v5 import srvs
from srvsvc_lib import srvsvc, werr

PORT, PID = int(sys.argv[1]), int(sys.argv[2])
FILEID_NOT_FOUND = 2314

d = srvsvc("alice")
os.kill(PID, signal.SIGSTOP)
killer = threading.Timer(0.4, os.kill, (PID, signal.SIGKILL))
t0 = time.time()
killer.start()
rc = werr(lambda: srvs.hNetrFileClose(d, 0x7eadbeef))
ms = (time.time() - t0) * 1000
killer.join()
print(("ok   " if rc == FILEID_NOT_FOUND else "FAIL ") +
      "NetrFileClose while a worker dies: NERR_FileIdNotFound (%d)" % rc)
print(("ok   " if ms < 1500 else "FAIL ") +
      "... answered once the worker is gone, not at the 2 s deadline "
      "(%.0f ms, the kill at 400)" % ms)
d.disconnect()
