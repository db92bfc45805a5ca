#!/usr/bin/env bash
# Installs every Debian package that the build, the tests, the demo and the
# benchmarks need, and the system accounts the daemon expects.  Idempotent
# and silent when everything is already there; run as root on Debian 12.
set -euo pipefail

# Why each package is here:
#   build-essential pkg-config   compiler, make, pkg-config for the flags
#   clang                        the libFuzzer targets (make fuzz, make test)
#   lmdb-utils                   mdb_stat and mdb_dump, to inspect the state (tests)
#   curl patch                   fetch Debian's lmdb 0.9.24 source and patch it: usmbd
#                                links that LMDB statically (deps/lmdb/README.md)
#   libbsd-dev libmd-dev         pidfile, setproctitle, closefrom, readpassphrase; MD4
#   libgnutls28-dev              signing, encryption and key derivation crypto
#   check libsubunit-dev         the unit test framework
#   smbclient samba samba-testsuite python3-impacket libsmbclient-dev
#                                real clients for the integration tests, smbtorture,
#                                and Samba as the benchmark's reference server
#   tshark strace                protocol traces and syscall counts (tests, bench)
#   python3 procps iproute2 passwd   scripts, ps/pgrep, ss, useradd/groupadd
#   kernel-client harness (t/kclient, make kclient, t/integ/kclient.sh):
#   qemu-system-x86              boots Debian's kernel with software emulation
#   busybox-static               the guest's initramfs (insmod, mount, switch_root)
#   kmod                         depmod for the unpacked kernel; modprobe in the guest
#   cifs-utils                   mount.cifs, run in the guest
#   attr sqlite3 git             setfattr/getfattr, sqlite3 and git: checks run on the mount
#   samba-vfs-modules            acl_xattr and streams_xattr for the Samba reference
#   libkrb5-dev                  MIT krb5's GSSAPI headers: the ticket helper
#                                (usmbd --child krb) verifies AP-REQs with it
#   krb5-kdc krb5-admin-server   krb5kdc, kdb5_util and kadmin.local: the private
#                                KDC of the Kerberos tests (t/integ/krb_lib.sh)
#   krb5-user                    kinit, klist, kvno for the tests
#   python3-gssapi               MIT GSSAPI from Python: krb_client.py plays a
#                                Windows client (NegoEx listed first, Kerberos
#                                after it) and makes the SPNEGO mechListMIC
#   xfsprogs btrfs-progs         mkfs.xfs, mkfs.btrfs: t/integ/clone.sh makes a
#                                loop-mounted XFS with reflink and a btrfs to
#                                test block cloning (FSCTL_DUPLICATE_EXTENTS_TO_FILE)
#   The kernel itself is not installed (linux-image-amd64 would pull systemd,
#   udev and initramfs-tools): scripts/kclient-kernel.sh downloads and
#   unpacks it into /var/cache/usmbd/kclient (below).
PKGS=(build-essential pkg-config clang lmdb-utils curl patch libbsd-dev libmd-dev
      libgnutls28-dev check libsubunit-dev smbclient samba samba-testsuite
      python3-impacket libsmbclient-dev tshark strace python3 procps iproute2 passwd
      qemu-system-x86 busybox-static kmod cifs-utils attr sqlite3 git
      samba-vfs-modules libkrb5-dev krb5-kdc krb5-admin-server krb5-user
      python3-gssapi xfsprogs btrfs-progs)

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: must run as root" >&2
	exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
	echo "install-deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture; answer no
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
	    debconf-set-selections
	# Keep the samba package from starting its own daemons (they would
	# take port 445 and run beside ours): policy-rc.d exit 101 = "not
	# allowed".  Removed afterwards only if we created it.
	created_policy=0
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 0755 /usr/sbin/policy-rc.d
		created_policy=1
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	if [ "$created_policy" -eq 1 ]; then
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT
	fi
fi

# The unprivileged accounts the gates and the state process run as, and
# the group that may write the shared state (DESIGN.md, security model).
if ! getent group usmbd-state >/dev/null; then
	groupadd --system usmbd-state
fi
if ! getent passwd usmbd >/dev/null; then
	useradd --system --no-create-home --home-dir /nonexistent \
	    --shell /usr/sbin/nologin --user-group usmbd
fi
# The state process's own account (its only group: usmbd-state).
if ! getent passwd usmbd-state >/dev/null; then
	useradd --system --no-create-home --home-dir /nonexistent \
	    --shell /usr/sbin/nologin --gid usmbd-state usmbd-state
fi

# The Kerberos ticket helper's account (usmbd --child krb): it reads the
# keys the master hands it and nothing else.
if ! getent passwd usmbd-krb >/dev/null; then
	useradd --system --no-create-home --home-dir /nonexistent \
	    --shell /usr/sbin/nologin --user-group usmbd-krb
fi

# LMDB's source, for the patched static build (scripts/build-lmdb.sh looks
# here first); checked against the SHA-256 of Debian's signed .dsc.
"$(dirname "$0")/fetch-lmdb.sh" /var/cache/usmbd

# Debian 12's kernel for the kernel-client harness, unpacked (not installed)
# into /var/cache/usmbd/kclient; bookworm-backports' 6.12 is fetched on
# demand (KCLIENT_KERNEL=6.12).
"$(dirname "$0")/kclient-kernel.sh" 6.1 >/dev/null
