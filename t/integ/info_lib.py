# Raw SMB2 QUERY_INFO and SET_INFO over an impacket SMB3 connection, with
# the status whatever it is (impacket's own calls raise on most), and a
# file's stream list: shared by files_ea_client.py, easize_client.py,
# streams_client.py, fruit_meta.py and fruit_rsrc.py (their directory is
# on sys.path when they run as scripts).
import struct

from impacket import smb3structs as s3


def query_info(s, tid, fid, klass, inbuf=b'', itype=s3.SMB2_0_INFO_FILE,
               addl=0):
    """(status, data) of a QUERY_INFO, whatever its status."""
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_QUERY_INFO
    p['TreeID'] = tid
    q = s3.SMB2QueryInfo()
    q['FileID'] = fid
    q['InfoType'] = itype
    q['FileInfoClass'] = klass
    q['OutputBufferLength'] = 65536
    q['AdditionalInformation'] = addl
    if inbuf:
        q['InputBufferLength'] = len(inbuf)
        q['Buffer'] = inbuf
    else:
        q['InputBufferOffset'] = 0
        q['Buffer'] = b'\x00'
    p['Data'] = q
    a = s.recvSMB(s.sendSMB(p))
    if a['Status'] in (0, 0x80000005):
        return a['Status'], s3.SMB2QueryInfo_Response(a['Data'])['Buffer']
    return a['Status'], b''


def set_info(s, tid, fid, klass, blob):
    """Status of a SET_INFO of a file information class."""
    p = s.SMB_PACKET()
    p['Command'] = s3.SMB2_SET_INFO
    p['TreeID'] = tid
    r = s3.SMB2SetInfo()
    r['InfoType'] = s3.SMB2_0_INFO_FILE
    r['FileInfoClass'] = klass
    r['BufferLength'] = len(blob)
    r['FileID'] = fid
    r['Buffer'] = blob
    p['Data'] = r
    return s.recvSMB(s.sendSMB(p))['Status']


def stream_sizes(smb, tid, name):
    """[(stream name, size)] of a file, sorted, from FileStreamInformation
    (impacket's queryInfo: a failure raises)."""
    f = smb.create(tid, name, s3.FILE_READ_ATTRIBUTES, 7, 0, s3.FILE_OPEN, 0)
    raw = smb.queryInfo(tid, f, fileInfoClass=22)
    smb.close(tid, f)
    out, off = [], 0
    while off + 24 <= len(raw):
        nxt, nlen, size = struct.unpack_from("<IIq", raw, off)
        out.append((raw[off + 24:off + 24 + nlen].decode("utf-16le"), size))
        if nxt == 0:
            break
        off += nxt
    return sorted(out)
