# Playing a compromised child (t/integ/privsep_client.py,
# netclose_forge.py): a copy of a stopped process's channel to the master
# (its fd 3, MSG_CHILD_FD), taken with pidfd_getfd as root.
import ctypes
import os
import socket

MSG_CHILD_FD = 3
SYS_PIDFD_GETFD = 438


def channel_of(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    pfd = os.pidfd_open(pid)
    fd = libc.syscall(SYS_PIDFD_GETFD, pfd, MSG_CHILD_FD, 0)
    os.close(pfd)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return socket.socket(fileno=fd)
