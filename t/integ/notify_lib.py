# CHANGE_NOTIFY over impacket, which has no call for it: the request sent
# raw and FILE_NOTIFY_INFORMATION decoded.  Imported by state_lib.py,
# hostile_notify_client.py and veto_client.py (their directory is on
# sys.path when they run as scripts).
import struct

from impacket import smb3structs as s3

SMB2_WATCH_TREE = 0x0001


def notify_send(srv, tid, fid, flt, flags=0, maxlen=4096):
    """Sends a CHANGE_NOTIFY of filter flt on the open fid; its message id."""
    pkt = srv.SMB_PACKET()
    pkt['Command'] = s3.SMB2_CHANGE_NOTIFY
    pkt['TreeID'] = tid
    pkt['Data'] = struct.pack('<HHL', 32, flags, maxlen) + fid + \
        struct.pack('<LL', flt, 0)
    return srv.sendSMB(pkt)


def notify_answer(srv, mid, secs):
    """(status, [(action, name)...]) of the final answer to mid, past the
    STATUS_PENDING interim; None when none came within secs."""
    srv._timeout = secs
    try:
        ans = srv.recvSMB(mid)
        while ans['Status'] == 0x103:		# STATUS_PENDING interim
            ans = srv.recvSMB(mid)
    except Exception:
        return None
    if ans['Status'] != 0:
        return ans['Status'], []
    raw = ans['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    off, ln = struct.unpack_from('<HL', raw, 2)
    buf = raw[off - 64:off - 64 + ln]
    changes, pos = [], 0
    while pos + 12 <= len(buf):
        nxt, action, nl = struct.unpack_from('<LLL', buf, pos)
        changes.append((action,
                        buf[pos + 12:pos + 12 + nl].decode('utf-16-le')))
        if nxt == 0:
            break
        pos += nxt
    return ans['Status'], changes
