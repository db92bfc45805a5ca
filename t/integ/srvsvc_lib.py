# Shared impacket code of the srvsvc tests (t/integ/netenum.sh's clients):
# a bound srvsvc pipe as a user, a call's WERROR, NetrFileEnum's rows.
import sys
from impacket.dcerpc.v5 import srvs, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException
from state_lib import PASSWORDS

PORT = int(sys.argv[1])


def srvsvc(user):
    t = transport.SMBTransport("127.0.0.1", PORT, r"\srvsvc",
                               username=user or "",
                               password=PASSWORDS.get(user, ""))
    d = t.get_dce_rpc()
    d.connect()
    d.bind(srvs.MSRPC_UUID_SRVS)
    return d


def werr(fn):
    """The call's WERROR: 0, or the code of the error it returned."""
    try:
        fn()
        return 0
    except DCERPCException as e:
        return e.get_error_code() & 0xFFFF


def rows(ans, level, kind):
    return ans["InfoStruct"][kind]["Level%d" % level]["Buffer"]


def s(v):
    return str(v).rstrip("\0")
