# The impacket client of t/integ/parked.sh: one request parked in the
# server (STATUS_PENDING), then the handle, tree or session it belongs to
# goes away, or the client cancels it; the parked request must still get
# its final answer.
#   parked_client.py PORT KIND END
# KIND: notify (CHANGE_NOTIFY with nothing to report), lock (a blocking
# LOCK on a range another handle holds), create (a CREATE waiting for the
# break of another connection's RWH lease, never acknowledged).
# END: close (of the parked request's handle; not for create), tdis,
# logoff, cancel.  Prints "KIND END: status 0x%08x after N.Ns" or
# "KIND END: no answer (...)".  KIND bound or handles, END a number of
# connections: see bound().
import struct, sys, time
sys.dont_write_bytecode = True
from state_lib import ALL, RW, create, lease_ctx, lock, login
from impacket import smb3structs as s3

KIND, END = sys.argv[2], sys.argv[3]
WAIT = 8	# seconds an answer may take (a lease break times out at 35)
NOTIFIES = 513	# KIND bound: CONN_MAX_PENDING (511) and two more
HANDLES = 514	# KIND handles: as smbtorture's max async credits tests


class Sent(Exception):
    pass


def send_only(srv, fn):
    """Runs fn (an impacket call) up to its send: the message id of the
    request it sent; its answer is left for later."""
    mids = []
    send, recv = srv.sendSMB, srv.recvSMB

    def send_keep(p):
        m = send(p)
        mids.append(m)
        return m

    def stop(*a, **kw):
        raise Sent()
    srv.sendSMB, srv.recvSMB = send_keep, stop
    try:
        fn()
    except Sent:
        pass
    finally:
        srv.sendSMB, srv.recvSMB = send, recv
    return mids[-1]


def cancel(srv, mid):
    # MS-SMB2 2.2.30: CANCEL by MessageId (the interim's AsyncId would do
    # too); no response is due
    p = srv.SMB_PACKET()
    p['Command'] = s3.SMB2_CANCEL
    p['MessageID'] = mid	# impacket keeps it for a CANCEL
    p['CreditCharge'] = 0
    p['Data'] = struct.pack('<HH', 4, 0)
    srv.sendSMB(p)


def park(c, t):
    """Parks one request of KIND on c; returns (its message id, the handle
    it is about, the other connections kept alive)."""
    srv = c.getSMBServer()
    keep = []
    if KIND == "notify":
        d = srv.create(t, "pdir", s3.FILE_READ_DATA, ALL,
                       s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0)
        p = srv.SMB_PACKET()
        p['Command'] = s3.SMB2_CHANGE_NOTIFY
        p['TreeID'] = t
        p['Data'] = struct.pack('<HHL', 32, 0, 4096) + d + \
            struct.pack('<LL', 0xFFF, 0)
        return srv.sendSMB(p), d, keep
    if KIND == "lock":
        h = create(c, t, "plock.txt")
        lock(c, t, h, 0, 10, 0x2 | 0x10)	# exclusive, fail at once
        w = create(c, t, "plock.txt")
        # exclusive, blocking: waits for h's range
        return send_only(srv, lambda: lock(c, t, w, 0, 10, 0x2)), w, keep
    if KIND == "create":
        o, ot = login("alice")
        keep.append(o)
        o.getSMBServer().create(ot, "please.txt", RW, ALL,
                                s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN_IF,
                                0, oplockLevel=s3.SMB2_OPLOCK_LEVEL_LEASE,
                                createContexts=[lease_ctx(b'P' * 16, 7)])
        # no lease: the RWH lease must lose W, and o never acknowledges
        return send_only(srv, lambda: create(c, t, "please.txt")), None, keep
    raise SystemExit("unknown kind " + KIND)


def raw_answers(srv, want):
    """{mid: status} of the next answer to each of want, read raw
    (impacket's recvSMB swallows interims)."""
    out = {}
    while not want.issubset(out):
        data = srv._NetBIOSSession.recv_packet(WAIT).get_trailer()
        pos = 0
        while True:
            st, nxt, mid = struct.unpack_from("<L8xLQ", data, pos + 8)
            out.setdefault(mid, st)
            if nxt == 0:
                break
            pos += nxt
    return out


def hist(sts):
    h = {}
    for st in sts:
        h["0x%08x" % st] = h.get("0x%08x" % st, 0) + 1
    return sorted(h.items())


def step(what):
    """Tells parked.sh where we are (it measures the worker) and waits
    for its go."""
    print(what, flush=True)
    sys.stdin.readline()


def bound(nconn, handles):
    """KIND bound, END = how many connections: on each in turn (all of
    alice, so one worker), NOTIFIES CHANGE_NOTIFYs on one directory handle,
    more than a connection may park (CONN_MAX_PENDING, 511): the ones past
    the bound are answered at once with STATUS_INSUFFICIENT_RESOURCES
    (MS-SMB2 3.3.4.2), the parked ones get NOTIFY_CLEANUP when their
    handle closes.  KIND handles: one CHANGE_NOTIFY on each of HANDLES
    handles of the directory, as smbtorture 4.22's
    credits.1conn_notify_max_async_credits (each a watch of the worker's:
    one refused must not keep its watch, or the second connection finds
    fewer than 511).  Stops at "ready" (logged on) and "parked" for
    parked.sh to measure the worker.  Prints per connection "N pending,
    statuses [...] past it, cleanup [...]"."""
    conns = []
    for i in range(nconn):
        c, t = login("alice")
        srv = c.getSMBServer()
        srv._timeout = WAIT
        ds = [srv.create(t, "pbound%d" % i, s3.FILE_READ_DATA, ALL,
                         s3.FILE_DIRECTORY_FILE, s3.FILE_OPEN_IF, 0)
              for _ in range(HANDLES if handles else 1)]
        conns.append((t, srv, ds))
    step("ready")
    res = []
    for t, srv, ds in conns:
        mids = []
        for k in range(HANDLES if handles else NOTIFIES):
            p = srv.SMB_PACKET()
            p['Command'] = s3.SMB2_CHANGE_NOTIFY
            p['TreeID'] = t
            p['Data'] = struct.pack('<HHL', 32, 0, 4096) + \
                ds[k % len(ds)] + struct.pack('<LL', 0xFFF, 0)
            mids.append(srv.sendSMB(p))
        first = raw_answers(srv, set(mids))
        pending = set(m for m in mids if first[m] == 0x103)
        res.append((pending, hist(first[m] for m in mids
                                  if m not in pending)))
    step("parked")
    for (t, srv, ds), (pending, past) in zip(conns, res):
        cms = set()
        for d in ds:
            p = srv.SMB_PACKET()	# CLOSE, raw too
            p['Command'] = s3.SMB2_CLOSE
            p['TreeID'] = t
            p['Data'] = struct.pack('<HHL', 24, 0, 0) + d
            cms.add(srv.sendSMB(p))
        ans = raw_answers(srv, pending | cms)
        print("%d pending, statuses %s past it, cleanup %s" %
              (len(pending), past, hist(ans[m] for m in pending)),
              flush=True)
    print("done", flush=True)


def main():
    if KIND in ("bound", "handles"):
        return bound(int(END), KIND == "handles")
    c, t = login("alice")
    srv = c.getSMBServer()
    mid, h, keep = park(c, t)
    time.sleep(0.5)		# let it park (its interim comes first)
    t0 = time.time()
    srv._timeout = WAIT
    if END == "close":
        srv.close(t, h)
    elif END == "tdis":
        srv.disconnectTree(t)
    elif END == "logoff":
        srv.logoff()
    elif END == "cancel":
        cancel(srv, mid)
    else:
        raise SystemExit("unknown end " + END)
    try:
        ans = srv.recvSMB(mid)
        while ans['Status'] == 0x103:	# an interim: the final follows
            ans = srv.recvSMB(mid)
        print("%s %s: status 0x%08x after %.1fs" % (KIND, END, ans['Status'],
              time.time() - t0), flush=True)
    except Exception as e:	# the socket timed out: no answer
        print("%s %s: no answer (%s)" % (KIND, END, type(e).__name__),
              flush=True)
    del keep


main()
