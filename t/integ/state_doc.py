# Delete-on-close across users (t/integ/state_doc.sh): bob makes his file in a
# sticky directory delete pending, alice holds it open and closes last.
# Her worker may not unlink it; bob's worker, asked through the master,
# must -- it vouched for the delete when it closed its handle.
#   state_doc.py PORT CONF SHAREPATH CASE NAME
# CASE: basic (bob closes first), gone (bob's worker killed before alice
# closes: what it vouched for died with it, none is started, the file
# stays -- the known gap), replaced (the name is another inode by alice's
# close).
import json, os, pwd, subprocess, sys, time
from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection

PORT, CONF, SHARE, CASE, NAME = sys.argv[1:6]
USMBCTL = os.environ.get("USMBCTL", "usmbctl")
ALL = s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE


def login(user, pw):
    c = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(PORT),
                      preferredDialect=s3.SMB2_DIALECT_21)
    c.login(user, pw)
    return c, c.connectTree("share")


def create(c, tid, name, access, disp):
    return c.getSMBServer().create(tid, name, access, ALL,
                                   s3.FILE_NON_DIRECTORY_FILE, disp, 0)


def worker_of(user):
    out = subprocess.run([USMBCTL, "-s", CONF, "status", "--json"],
                         capture_output=True, text=True).stdout
    for p in json.loads(out).get("processes", []):
        if p.get("role") == "worker" and p.get("user") == user \
           and not p.get("stopping"):
            return int(p["pid"])
    return None


def gone_within(path, secs):
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        if not os.path.lexists(path):
            return int((time.monotonic() - t0) * 1000)
        time.sleep(0.02)
    return None


rel = "sticky\\" + NAME
disk = os.path.join(SHARE, "sticky", NAME)
b, bt = login("bob", "bobpw1")
fb = create(b, bt, rel, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA | s3.DELETE,
            s3.FILE_OVERWRITE_IF)
b.getSMBServer().write(bt, fb, b"bob's data", 0, 10)
a, at = login("alice", "alicepw1")
fa = create(a, at, rel, s3.FILE_READ_DATA, s3.FILE_OPEN)
st = os.stat(disk)
print("owner-bob", st.st_uid == pwd.getpwnam("bob").pw_uid)
b.getSMBServer().setInfo(bt, fb, inputBlob=b"\x01",
                         fileInfoClass=s3.SMB2_FILE_DISPOSITION_INFO)
b.closeFile(bt, fb)
print("after-bob-close", "present" if os.path.lexists(disk) else "gone")
if CASE == "gone":
    # bob leaves, and his worker with him: nobody vouches any more.
    b.logoff()
    b.close()
    wpid = worker_of("bob")
    if wpid is not None:
        os.kill(wpid, 9)
        for _ in range(100):
            try:
                os.kill(wpid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    print("bob-worker-killed", wpid is not None and worker_of("bob") is None)
elif CASE == "replaced":
    # Another file (bob's, so alice cannot remove it either) takes the name.
    tmp = disk + ".new"
    with open(tmp, "w") as f:
        f.write("replacement")
    os.chown(tmp, st.st_uid, st.st_gid)
    os.rename(tmp, disk)
    print("replaced-ino", os.stat(disk).st_ino != st.st_ino)
a.closeFile(at, fa)
if CASE == "replaced":
    time.sleep(1.0)
    print("after-alice-close", "present" if os.path.lexists(disk) else "gone",
          open(disk).read() if os.path.lexists(disk) else "")
else:
    ms = gone_within(disk, 1.0)
    print("after-alice-close", "gone" if ms is not None else "present",
          "%d ms" % ms if ms is not None else "")
a.logoff()
