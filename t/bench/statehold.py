"""The state env's writer-lock hold meter, read from `usmbctl metrics`
(t/bench/README.md, "The state layer's ceiling").

Every write transaction of the state env is timed in the process that
makes it (shm/env.c shm_wbegin_kind .. shm_wcommit: CLOCK_MONOTONIC by the
vDSO, no syscall): `hold` from holding LMDB's writer lock to the commit
done, `wait` from asking for it to holding it (the queue behind other
writers plus mdb_txn_begin's own work, all of it when nobody else writes).
Kinds: create (the share-mode check + insert of a CREATE), close (the
removal at a CLOSE), other.  The metrics add up every worker.

Used by t/bench/perfcheck.py (asserts the meter counts each CREATE and
CLOSE) and t/bench/contend.py (the LIMIT line of `make bench`).
"""
import re

KINDS = ("create", "close", "other")
_LINE = re.compile(r'^usmbd_state_(write_transactions|write_hold_seconds|write_wait_seconds|'
                   r'main_write_transactions)_total\{kind="(\w+)"\} (\S+)$')
_FIELD = {"write_transactions": "txns", "write_hold_seconds": "hold_ns",
          "write_wait_seconds": "wait_ns", "main_write_transactions": "main_txns"}


def sample(srv):
    """{kind: {"txns", "hold_ns", "wait_ns", "main_txns"}} from `usmbctl metrics`,
    or None.  main_txns: those of the main env (with `state partitions` > 1 a
    CREATE or CLOSE takes a data env's lock only)."""
    try:
        r = srv.ctl("metrics")
    except Exception:
        return None
    if r.returncode != 0:
        return None
    out = {k: {"txns": 0, "hold_ns": 0.0, "wait_ns": 0.0, "main_txns": 0} for k in KINDS}
    seen = False
    for line in r.stdout.splitlines():
        m = _LINE.match(line)
        if not m or m.group(2) not in out:
            continue
        seen = True
        what, kind, val = m.groups()
        f = _FIELD[what]
        out[kind][f] = int(val) if f.endswith("txns") else float(val) * 1e9
    return out if seen else None


def delta(a, b):
    """b - a, per kind; None when either is missing."""
    if a is None or b is None:
        return None
    return {k: {f: b[k][f] - a[k][f] for f in a[k]} for k in a}


def per_txn(d, kind):
    """(txns, hold ns per txn, wait ns per txn) of one kind of a delta."""
    n = d[kind]["txns"]
    if n <= 0:
        return n, 0.0, 0.0
    return n, d[kind]["hold_ns"] / n, d[kind]["wait_ns"] / n


def ceiling(create_ns, close_ns):
    """The most open+close pairs per second one writer lock admits when
    each pair holds it create_ns + close_ns: 1 / (hold_create + hold_close)."""
    t = create_ns + close_ns
    return 1e9 / t if t > 0 else 0.0
