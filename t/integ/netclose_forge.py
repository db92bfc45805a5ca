# A compromised worker of t/integ/netenum.sh: bob's worker (stopped by the
# script) asks the master on its own channel, as an administrator's
# worker would, to close alice's open (MSG_ADMIN_REQ, daemon/admmsg.h) and
# to end alice's sessions.  Nothing in the message says who asks; the
# master must judge the channel's worker (bob, not in `server admin
# group`) and answer ERROR_ACCESS_DENIED without asking anyone, to a
# flood too.
#   netclose_forge.py PID MSG_ADMIN_REQ MSG_ADMIN_REP FILEID
# Prints "ok ..." / "FAIL ..." lines.  The channel is taken with
# pidfd_getfd, as t/integ/privsep_client.py does.
import os, select, struct, sys
sys.dont_write_bytecode = True
from privsep_lib import channel_of

PID, REQ, REP, FILEID = (int(x) for x in sys.argv[1:5])


def ask(chan, mid, payload):
    try:
        chan.send(struct.pack("<LLL", REQ, len(payload), mid) + payload)
    except OSError as e:
        return "cannot send: %s" % e
    while select.select([chan], [], [], 5)[0]:
        m = chan.recv(70000)
        if len(m) < 12:
            return "the channel closed (the worker was killed)"
        typ, ln, rid = struct.unpack_from("<LLL", m)
        if typ == REP and rid == mid:
            return struct.unpack_from("<L", m, 12)[0] if ln == 4 else -1
    return None


chan = channel_of(PID)
w = ask(chan, 0x5151, struct.pack("<BL", 1, FILEID))
print(("ok " if w == 5 else "FAIL ") +
      "a forged NetrFileClose from bob's worker: the master answers "
      "ERROR_ACCESS_DENIED (%r)" % w, flush=True)
name = b"alice"
w = ask(chan, 0x5152, struct.pack("<BH", 2, 0) +
        struct.pack("<H", len(name)) + name)
print(("ok " if w == 5 else "FAIL ") +
      "a forged NetrSessionDel from bob's worker: ERROR_ACCESS_DENIED (%r)"
      % w, flush=True)
# A flood of them: each refused (the master's group lookups are counted
# by netenum.sh, which traces the master meanwhile)
got = [ask(chan, 0x5200 + i, struct.pack("<BL", 1, FILEID)) for i in range(40)]
print(("ok " if got == [5] * 40 else "FAIL ") +
      "40 more forged requests from bob's worker: each ERROR_ACCESS_DENIED "
      "(%r)" % sorted(set(got), key=repr), flush=True)
chan.close()
