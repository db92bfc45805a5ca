# SMB3 POSIX extensions for python clients (t/integ/posix_client.py,
# t/bench/posixload.py, t/bench/perfops.py): impacket's SMB 3.1.1 with the
# POSIX negotiate context added, the POSIX create context, and decoders of
# the POSIX response context, information level and directory entries.
import hashlib
import stat
import struct

from impacket import crypto, smb3
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

POSIX_TAG = bytes.fromhex("93AD25509CB411E7B42383DE968BCD7C")
POSIX_LEVEL = 100
WIRE_TYPES = [stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK, stat.S_IFCHR,
              stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK]


class PosixSMB3(smb3.SMB3):
    """impacket's SMB3 offering the POSIX negotiate context (0x100) and
    keeping the NEGOTIATE answer and the last packet received.  It keeps
    its own 3.1.1 preauth hash and signing key (MS-SMB2 3.2.5.3.1):
    impacket 0.10's are not the server's."""
    offer_posix = True

    def hash(self, data):
        self.preauth = hashlib.sha512(self.preauth + bytes(data)).digest()

    def sendSMB(self, packet):
        if packet['Command'] == s3.SMB2_NEGOTIATE:
            self.preauth = b'\0' * 64
            neg = packet['Data']
            lst = neg['NegotiateContextList']
            if lst and self.offer_posix:
                lst += b'\0' * (-len(lst) % 8)
                lst += struct.pack('<HHL', 0x100, 16, 0) + POSIX_TAG
                neg['NegotiateContextList'] = lst
                off, cnt, r = struct.unpack('<LHH', neg['ClientStartTime'])
                neg['ClientStartTime'] = struct.pack('<LHH', off, cnt + 1, r)
        mid = super().sendSMB(packet)
        # hashed as sent: sendSMB numbered it
        if packet['Command'] in (s3.SMB2_NEGOTIATE, s3.SMB2_SESSION_SETUP):
            self.hash(packet.getData())
        return mid

    def recvSMB(self, packetID=None):
        p = super().recvSMB(packetID)
        self.last = p
        if p['Command'] == s3.SMB2_NEGOTIATE:
            self.neg_raw = p.getData()
            self.hash(p.getData())
        elif p['Command'] == s3.SMB2_SESSION_SETUP and \
                p['Status'] == 0xC0000016:
            self.hash(p.getData())
        return p

    def login(self, *a, **kw):
        r = super().login(*a, **kw)
        if self._Connection['Dialect'] == s3.SMB2_DIALECT_311:
            self._Session['SigningKey'] = crypto.KDF_CounterMode(
                self._Session['SessionKey'], b"SMBSigningKey\x00",
                self.preauth, 128)
        return r


def neg_contexts(raw):
    """{type: [data...]} of a NEGOTIATE response (MS-SMB2 2.2.4)."""
    count = struct.unpack_from('<H', raw, 64 + 6)[0]
    off = struct.unpack_from('<L', raw, 64 + 60)[0]
    out = {}
    for _ in range(count):
        off = (off + 7) & ~7
        t, ln = struct.unpack_from('<HH', raw, off)
        out.setdefault(t, []).append(raw[off + 8:off + 8 + ln])
        off += 8 + ln
    return out


class Blob:
    def __init__(self, data):
        self.data = data

    def getData(self):
        return self.data


def posix_ctx(mode, data=None):
    data = struct.pack('<L', mode) if data is None else data
    return Blob(struct.pack('<LHHHHL', 0, 16, 16, 0, 32, len(data)) +
                POSIX_TAG + data)


def resp_contexts(srv):
    raw = srv.last['Data']
    raw = raw.getData() if hasattr(raw, 'getData') else bytes(raw)
    off, ln = struct.unpack_from('<LL', raw, 80)
    buf, out, pos = raw[off - 64:off - 64 + ln], {}, 0
    while pos + 16 <= len(buf):
        nxt, noff, nlen, _, doff, dlen = struct.unpack_from('<LHHHHL', buf, pos)
        out[bytes(buf[pos + noff:pos + noff + nlen])] = \
            bytes(buf[pos + doff:pos + doff + dlen])
        if nxt == 0:
            break
        pos += nxt
    return out


def sid(buf, pos):
    rev, n = buf[pos], buf[pos + 1]
    auth = int.from_bytes(buf[pos + 2:pos + 8], 'big')
    subs = struct.unpack_from('<%dL' % n, buf, pos + 8)
    return "S-%d-%d%s" % (rev, auth, "".join("-%d" % s for s in subs)), \
        pos + 8 + 4 * n


def cc_decode(buf, pos=0):
    nlink, tag, wmode = struct.unpack_from('<LLL', buf, pos)
    owner, pos = sid(buf, pos + 12)
    group, pos = sid(buf, pos)
    mode = (wmode & 0o7777) | WIRE_TYPES[(wmode >> 12) & 7]
    return {"nlink": nlink, "tag": tag, "mode": mode, "owner": owner,
            "group": group}, pos


def info_decode(buf, pos=0):
    (ct, at, wt, cht, eof, alloc, attrs, ino, dev, _) = \
        struct.unpack_from('<QQQQQQLQLL', buf, pos)
    d, pos = cc_decode(buf, pos + 68)
    d.update(eof=eof, attrs=attrs, ino=ino)
    return d, pos


def dir_decode(buf):
    out, pos = {}, 0
    while True:
        nxt = struct.unpack_from('<L', buf, pos)[0]
        d, p = info_decode(buf, pos + 8)
        nlen = struct.unpack_from('<L', buf, p)[0]
        name = bytes(buf[p + 4:p + 4 + nlen]).decode('utf-16le')
        out[name] = d
        if nxt == 0:
            return out
        pos += nxt


def nfs_mode_sd(mode):
    """A self-relative SD whose DACL is one allow ACE for S-1-5-88-3-mode
    (what the Linux client and Samba use for a chmod)."""
    sid = bytes([1, 3, 0, 0, 0, 0, 0, 5]) + struct.pack('<LLL', 88, 3, mode)
    ace = struct.pack('<BBHL', 0, 0, 8 + len(sid), 0) + sid
    acl = struct.pack('<BBHHH', 2, 0, 8 + len(ace), 1, 0) + ace
    return struct.pack('<BBHLLLL', 1, 0, 0x8004, 0, 0, 0, 20) + acl


def connect(port, user, pw, offer=True, timeout=60):
    """A logged-on 3.1.1 connection (SMBConnection) offering the POSIX
    negotiate context when offer is true."""
    PosixSMB3.offer_posix = offer
    srv = PosixSMB3("127.0.0.1", "127.0.0.1", sess_port=port,
                    preferredDialect=s3.SMB2_DIALECT_311, timeout=timeout)
    srv._Connection["SupportsEncryption"] = False
    c = SMBConnection(existingConnection=srv)
    c.login(user, pw)
    return c


def posix_negotiated(c):
    return neg_contexts(c.getSMBServer().neg_raw).get(0x100) == [POSIX_TAG]
