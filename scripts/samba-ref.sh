#!/usr/bin/env bash
# The newest Samba Debian offers for Debian 12 (bookworm-backports: 4.22),
# beside Debian 12's own 4.17 and never over it: the second reference server
# (and the newer smbtorture) of t/compat/compare.sh and make bench.
#
#	scripts/samba-ref.sh [install]	fetch and unpack (once); prints the root
#	scripts/samba-ref.sh run PROG [ARG...]
#					run the root's PROG (smbd, smbtorture,
#					smbpasswd, testparm, smbclient...)
#	scripts/samba-ref.sh path	prints the root if installed, else fails
#
# install: a private apt sources list and state under the cache (bookworm,
# -updates, -security and -backports; the system's /etc/apt and
# /var/lib/apt are not touched), `apt-get download` of the backports
# packages below, `dpkg -x` of each into $CACHE/root.  Nothing is
# installed: dpkg's database does not know of them.  A cached root is used
# as it is (no network); SAMBA_REF_REFRESH=1 fetches again.
#
# run: the root's binaries are built for /usr/lib/x86_64-linux-gnu/samba
# (RUNPATH, modules: vfs/acl_xattr.so...), /usr/libexec/samba (smbd starts
# samba-dcerpcd from there) and /usr/share/samba, where Debian 12's 4.17
# lives.  So PROG runs in a private mount namespace (unshare -m) in which
# those three directories are the root's (bind mounts, seen by PROG and its
# children only), with LD_LIBRARY_PATH for the root's newer libtalloc,
# libtevent, libtdb, libldb and libwbclient.  PROG is exec'ed: its pid is
# the one the caller started.  Everything else (configuration, state,
# ports) comes from PROG's arguments, e.g. smbd -s PRIVATE.conf.
#
# Cache: $SAMBA_REF_CACHE (default /var/cache/usmbd/samba-4.22).  Needs
# root (mount namespace; apt).  Not part of make test or .ci/run.
set -euo pipefail

cache=${SAMBA_REF_CACHE:-/var/cache/usmbd/samba-4.22}
root=$cache/root
suite=bookworm-backports
multiarch=x86_64-linux-gnu
# smbd, smbtorture, smbpasswd/testparm/smbclient and the VFS modules, and
# what they need from backports (newer than Debian 12's): samba-testsuite
# depends on python3-samba and winbind (smbtorture links their private
# libraries), python3-samba on python3-ldb and python3-talloc.
PKGS=(samba samba-libs samba-common samba-common-bin samba-vfs-modules
      samba-testsuite smbclient libsmbclient libwbclient0 winbind
      libtalloc2 libtevent0 libtdb1 libldb2 python3-samba python3-ldb
      python3-talloc)

die() { echo "samba-ref.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

ref_env() {
	export LD_LIBRARY_PATH=$root/usr/lib/$multiarch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# ref_check: every binary and module we use finds its libraries, and smbd
# runs at all (a newer glibc than Debian 12's would show here).
ref_check() {
	local b miss=() out

	for b in "$root/usr/sbin/smbd" "$root/usr/bin/smbtorture" \
	    "$root/usr/bin/smbpasswd" "$root/usr/lib/$multiarch/samba/vfs/acl_xattr.so" \
	    "$root/usr/lib/$multiarch/samba/vfs/streams_xattr.so"; do
		[ -e "$b" ] || die "$b is missing from the unpacked packages"
		out=$(LD_LIBRARY_PATH=$root/usr/lib/$multiarch:$root/usr/lib/$multiarch/samba \
		    ldd "$b" 2>&1) || true
		mapfile -t -O ${#miss[@]} miss < <(echo "$out" | awk '/not found/ { print $1 }')
		echo "$out" | grep -q 'GLIBC_.* not found' &&
		    die "$b needs a newer glibc than this system's: $(echo "$out" | grep GLIBC_ | head -1)"
	done
	[ ${#miss[@]} -eq 0 ] || die "libraries not found: ${miss[*]} (add their packages to PKGS)"
	out=$(LD_LIBRARY_PATH=$root/usr/lib/$multiarch:$root/usr/lib/$multiarch/samba \
	    "$root/usr/sbin/smbd" --version 2>&1) ||
	    die "the unpacked smbd does not run: $out"
}

ref_install() {
	local apt_opts p got ver want=()

	if [ -x "$root/usr/sbin/smbd" ] && [ -e "$root/version" ] &&
	    [ "${SAMBA_REF_REFRESH:-0}" != 1 ]; then
		echo "$root"
		return
	fi
	command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
	    die "needs apt-get and dpkg (Debian)"
	mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
	cat >"$cache/apt/sources.list" <<EOF
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
deb http://deb.debian.org/debian $suite main
EOF
	apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list"
	    -o Dir::Etc::SourceParts=/dev/null
	    -o "Dir::State::Lists=$cache/apt/lists"
	    -o "Dir::Cache=$cache/apt/cache"
	    -o APT::Sandbox::User=root)
	apt-get "${apt_opts[@]}" -qq update >&2 ||
	    die "cannot reach deb.debian.org ($suite)"
	ver=$(apt-cache "${apt_opts[@]}" show "samba/$suite" 2>/dev/null |
	    awk '$1 == "Version:" { print $2; exit }')
	[ -n "$ver" ] || die "$suite has no samba"
	rm -rf "$cache/debs.tmp" "$root.tmp"
	mkdir -p "$cache/debs.tmp"
	for p in "${PKGS[@]}"; do want+=("$p/$suite"); done
	(cd "$cache/debs.tmp" && apt-get "${apt_opts[@]}" -qq download "${want[@]}" >&2) ||
	    die "apt-get download from $suite failed"
	for p in "${PKGS[@]}"; do
		got=$(compgen -G "$cache/debs.tmp/${p}_*.deb" | head -1 || true)
		[ -n "$got" ] || die "no .deb for $p"
		dpkg -x "$got" "$root.tmp"
	done
	echo "$ver" >"$root.tmp/version"
	rm -rf "$root" "$cache/debs"
	mv "$root.tmp" "$root"
	mv "$cache/debs.tmp" "$cache/debs"
	ref_check
	echo "$root"
}

case ${1:-install} in
install)
	ref_install ;;
path)
	[ -x "$root/usr/sbin/smbd" ] || die "not installed: run scripts/samba-ref.sh install"
	echo "$root" ;;
run)
	shift
	[ $# -ge 1 ] || die "run PROG [ARG...]"
	[ -x "$root/usr/sbin/smbd" ] || die "not installed: run scripts/samba-ref.sh install"
	prog=$1
	shift
	case $prog in
	*/*)	;;
	*)	if [ -x "$root/usr/sbin/$prog" ]; then prog=$root/usr/sbin/$prog
		elif [ -x "$root/usr/bin/$prog" ]; then prog=$root/usr/bin/$prog
		else die "no $prog in $root/usr/sbin or $root/usr/bin"
		fi ;;
	esac
	ref_env
	exec unshare -m --propagation private -- /bin/sh -c '
		r=$1 m=$2
		shift 2
		for d in /usr/lib/$m/samba /usr/libexec/samba /usr/share/samba; do
			mkdir -p "$d" && mount --bind "$r$d" "$d" || exit 126
		done
		exec "$@"' samba-ref "$root" "$multiarch" "$prog" "$@" ;;
*)	die "usage: samba-ref.sh [install|path|run PROG [ARG...]]" ;;
esac
