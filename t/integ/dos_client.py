# The impacket client of t/integ/dos.sh: one user (alice) tries to fill the
# shared state while another (bob) works.
#   dos_client.py PORT fill CONNS OPENS_PER_CONN LOCKS_PER_OPEN
# Prints one fact a line for the script to grep.
import sys
sys.dont_write_bytecode = True
from state_lib import create, lock, login, status_of
from impacket import smb3structs as s3

EXCL_FAIL = 0x2 | 0x10


def bob_works(b, bt, i):
    f = create(b, bt, "bob%d.txt" % (i % 4))
    lock(b, bt, f, 0, 10, EXCL_FAIL)
    b.writeFile(bt, f, b"bob")
    b.closeFile(bt, f)


def cmd_fill(conns, per_conn, per_open):
    conns, per_conn, per_open = int(conns), int(per_conn), int(per_open)
    b, bt = login("bob")
    opened, locked, bob_ok, bob_bad = 0, 0, 0, 0
    open_refusals, lock_refusals = {}, {}
    held = []
    for k in range(conns):
        a, at = login("alice")
        held.append(a)
        for i in range(per_conn):
            name = "fill/%d-%d.txt" % (k, i)
            st = status_of(lambda: held.append(
                (a, at, create(a, at, name, disp=s3.FILE_OVERWRITE_IF))))
            if st != "OK":
                open_refusals[st] = open_refusals.get(st, 0) + 1
                continue
            opened += 1
            _, _, f = held[-1]
            for j in range(per_open):
                st = status_of(lambda: lock(a, at, f, j * 10, 5, EXCL_FAIL))
                if st == "OK":
                    locked += 1
                else:
                    lock_refusals[st] = lock_refusals.get(st, 0) + 1
            if i % 10 == 0:
                if status_of(lambda: bob_works(b, bt, i)) == "OK":
                    bob_ok += 1
                else:
                    bob_bad += 1
    print("alice-opened", opened)
    print("alice-locked", locked)
    for st, n in sorted(open_refusals.items()):
        print("alice-open-refused", st, n)
    for st, n in sorted(lock_refusals.items()):
        print("alice-lock-refused", st, n)
    print("bob-ok", bob_ok)
    print("bob-failed", bob_bad)
    # Everything alice holds is still there: she can unlock and close.
    sys.stdout.flush()


def cmd_srvsvc(user, password):
    """NetShareEnumAll 1 and 2, NetShareGetInfo of hidden/restricted shares."""
    from impacket.smbconnection import SMBConnection
    from impacket.dcerpc.v5 import transport, srvs
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(sys.argv[1]))
    c.login(user, password)
    rpc = transport.SMBTransport("127.0.0.1", int(sys.argv[1]), r"\srvsvc",
                                 smb_connection=c)
    d = rpc.get_dce_rpc()
    d.connect()
    d.bind(srvs.MSRPC_UUID_SRVS)
    for level in (1, 2, 502):
        try:
            r = srvs.hNetrShareEnum(d, level)
            n = r['InfoStruct']['ShareInfo']['Level%d' % level]['EntriesRead']
            print("enum", level, "OK", n)
        except Exception as e:
            print("enum", level, "DENIED" if "access_denied" in str(e).lower()
                  else "ERR " + str(e)[:80])
    for name in ("share", "secret", "aliceonly"):
        for level in (1, 2):
            try:
                srvs.hNetrShareGetInfo(d, name + "\x00", level)
                print("getinfo", name, level, "OK")
            except Exception as e:
                s = str(e)
                print("getinfo", name, level,
                      "DENIED" if "access_denied" in s.lower() else
                      "NOTFOUND" if "NAME_NOT_FOUND" in s or
                      "NETNAMENOTFOUND" in s or "0x906" in s
                      else "ERR " + s[:80])


if __name__ == "__main__":
    globals()["cmd_" + sys.argv[2]](*sys.argv[3:])
