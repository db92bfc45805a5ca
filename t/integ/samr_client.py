#!/usr/bin/env python3
"""The samr pipe (worker/pipe_samr*.c) with impacket's MS-SAMR client:
SamrConnect5, SamrEnumerateDomainsInSamServer, SamrLookupDomainInSamServer,
SamrOpenDomain, SamrEnumerateUsersInDomain (paged), SamrEnumerateGroups-
InDomain in "Unix Group", SamrQueryDisplayInformation2/3, SamrOpenUser,
SamrQueryInformationUser2, SamrLookupNamesInDomain; a handle taken to
another pipe refused; an anonymous and a guest session refused.

usage: samr_client.py PORT ALICE_PASSWORD ALICE_UID BOB_UID GROUP_GID
(GROUP_GID: a group bob is in).  Exits 1 on any failure."""
import sys

from impacket.dcerpc.v5 import samr, transport
from impacket.dcerpc.v5.rpcrt import DCERPCException

PORT = int(sys.argv[1])
PW = sys.argv[2]
AUID, BUID, GGID = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
STATUS_ACCESS_DENIED = 0xC0000022
STATUS_MORE_ENTRIES = 0x00000105
bad = 0


def report(good, what):
    global bad
    print('%s %s' % ('ok' if good else 'FAIL', what), flush=True)
    bad += 0 if good else 1


def bind(user, pw):
    t = transport.SMBTransport('127.0.0.1', PORT, r'\samr', user, pw)
    t.set_connect_timeout(10)
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(samr.MSRPC_UUID_SAMR)
    return dce


def code(e):
    return e.get_error_code() if hasattr(e, 'get_error_code') else None


def main():
    dce = bind('alice', PW)
    srv = samr.hSamrConnect5(dce)['ServerHandle']
    doms = [d['Name'] for d in
            samr.hSamrEnumerateDomainsInSamServer(dce, srv)['Buffer']['Buffer']]
    report(doms == ['SAMRTEST', 'Builtin', 'Unix Group'], 'domains %r' % doms)
    sid = samr.hSamrLookupDomainInSamServer(dce, srv, 'samrtest')['DomainId']
    report(sid.formatCanonical() == 'S-1-22-1', 'account domain SID')
    dom = samr.hSamrOpenDomain(dce, srv, domainId=sid)['DomainHandle']

    # paged: one entry an answer (PreferedMaximumLength 1)
    users, resume = [], 0
    for _ in range(10):
        try:
            r = samr.hSamrEnumerateUsersInDomain(dce, dom,
                                                 enumerationContext=resume,
                                                 preferedMaximumLength=1)
        except DCERPCException as e:
            if code(e) != STATUS_MORE_ENTRIES:
                raise
            r = e.get_packet()
        users += [(u['Name'], u['RelativeId']) for u in r['Buffer']['Buffer']]
        resume = r['EnumerationContext']
        if r['ErrorCode'] == 0:
            break
    report(sorted(users) == [('alice', AUID), ('bob', BUID)],
           'users paged one by one %r' % users)

    r = samr.hSamrQueryDisplayInformation2(dce, dom,
                                           samr.DOMAIN_DISPLAY_INFORMATION.DomainDisplayUser)
    names = [e['AccountName'] for e in r['Buffer']['UserInformation']['Buffer']]
    report(sorted(names) == ['alice', 'bob'], 'display info 2, users %r' % names)

    rids = samr.hSamrLookupNamesInDomain(dce, dom, ['ALICE'])['RelativeIds']['Element']
    report([x['Data'] for x in rids] == [AUID], 'lookup names (case-insensitive)')

    uh = samr.hSamrOpenUser(dce, dom, userId=AUID)['UserHandle']
    info = samr.hSamrQueryInformationUser2(
        dce, uh, samr.USER_INFORMATION_CLASS.UserAllInformation)['Buffer']['All']
    report(info['UserName'] == 'alice' and info['UserId'] == AUID,
           'user all information')

    # a handle is worth nothing on another pipe
    dce2 = bind('alice', PW)
    try:
        samr.hSamrQueryInformationUser2(
            dce2, uh, samr.USER_INFORMATION_CLASS.UserAllInformation)
        report(False, "a handle from another pipe refused (accepted)")
    except DCERPCException as e:
        # impacket raises a fault with its name, not its code
        report('context_mismatch' in str(e),
               'a handle from another pipe refused (%s)' % e)
    dce2.disconnect()

    gsid = samr.hSamrLookupDomainInSamServer(dce, srv, 'Unix Group')['DomainId']
    gdom = samr.hSamrOpenDomain(dce, srv, domainId=gsid)['DomainHandle']
    groups = [(g['Name'], g['RelativeId']) for g in
              samr.hSamrEnumerateGroupsInDomain(dce, gdom)['Buffer']['Buffer']]
    report(('usmbdsamrg', GGID) in groups and gsid.formatCanonical() == 'S-1-22-2',
           'Unix Group groups include bob\'s group, RID = gid')
    r = samr.hSamrQueryDisplayInformation3(dce, gdom,
                                           samr.DOMAIN_DISPLAY_INFORMATION.DomainDisplayGroup)
    gn = [e['AccountName'] for e in r['Buffer']['GroupInformation']['Buffer']]
    report('usmbdsamrg' in gn, 'display info 3, groups')
    samr.hSamrCloseHandle(dce, uh)
    dce.disconnect()

    # anonymous, and a guest (an unknown user, `map to guest = bad
    # user`): refused at SamrConnect5
    for who, pw in (('', ''), ('nosuchsamruser', 'x')):
        what = '%s connect refused' % (who or 'anonymous')
        try:
            a = bind(who, pw)
            samr.hSamrConnect5(a)
            report(False, what)
        except DCERPCException as e:
            report(code(e) == STATUS_ACCESS_DENIED, what)
        except Exception as e:		# the pipe itself refused
            report(False, '%s: %s' % (what, e))


main()
sys.exit(1 if bad else 0)
