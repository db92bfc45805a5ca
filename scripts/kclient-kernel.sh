#!/usr/bin/env bash
# Fetches a Debian kernel for the kernel-client harness (t/kclient) without
# installing it: `apt-get download` of the package that linux-image-amd64
# names, `dpkg -x` into a cache directory, `depmod -b` there (the package's
# postinst would do it).  Installing linux-image-amd64 instead would pull
# systemd, udev and initramfs-tools into a container, and run
# update-initramfs for a kernel nobody boots on the host.
#
#	scripts/kclient-kernel.sh 6.1	Debian 12's own kernel (the system's
#					apt sources)
#	scripts/kclient-kernel.sh 6.12	bookworm-backports' kernel, through a
#					private sources list under the cache
#					(the system's apt sources untouched)
#
# Prints the directory: DIR/boot/vmlinuz-VER, DIR/lib/modules/VER, and
# DIR/version holds VER.  Cache: $KCLIENT_CACHE (default
# /var/cache/usmbd/kclient).  A cached kernel is used as it is (no network);
# KCLIENT_REFRESH=1 looks for a newer package.
set -euo pipefail

series=${1:-6.1}
cache=${KCLIENT_CACHE:-/var/cache/usmbd/kclient}
mkdir -p "$cache"
cd "$cache"

die() { echo "kclient-kernel.sh: $*" >&2; exit 1; }

command -v depmod >/dev/null || die "depmod not found (package kmod; run scripts/install-deps.sh)"

link=$cache/current-$series
if [ -e "$link/version" ] && [ "${KCLIENT_REFRESH:-0}" != 1 ]; then
	readlink -f "$link"
	exit 0
fi

apt_opts=()
case $series in
6.1)	;;
6.12|bpo|backports)
	series=6.12
	link=$cache/current-$series
	mkdir -p apt/lists/partial apt/cache/archives/partial
	echo 'deb http://deb.debian.org/debian bookworm-backports main' >apt/sources.list
	apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list"
	    -o Dir::Etc::SourceParts=/dev/null
	    -o "Dir::State::Lists=$cache/apt/lists"
	    -o "Dir::Cache=$cache/apt/cache"
	    -o APT::Sandbox::User=root)
	apt-get "${apt_opts[@]}" -qq update >&2 ||
	    die "cannot reach bookworm-backports (deb.debian.org)" ;;
*)	die "unknown kernel series '$series' (6.1 or 6.12)" ;;
esac

pkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$pkg" ] || die "apt knows no linux-image-amd64 for $series (apt-get update?)"
ver=${pkg#linux-image-}
case $series:$ver in
6.1:6.1.*|6.12:6.12.*) ;;
*) die "linux-image-amd64 of $series points at $pkg" ;;
esac

if [ ! -e "$ver/version" ]; then
	rm -rf "$ver.tmp" && mkdir "$ver.tmp"
	(cd "$ver.tmp" && apt-get "${apt_opts[@]}" -o APT::Sandbox::User=root \
	    -qq download "$pkg" >&2) || die "apt-get download $pkg failed"
	dpkg -x "$ver.tmp"/*.deb "$ver.tmp/x"
	[ -e "$ver.tmp/x/boot/vmlinuz-$ver" ] || die "$pkg has no boot/vmlinuz-$ver"
	depmod -b "$ver.tmp/x" "$ver"
	echo "$ver" >"$ver.tmp/x/version"
	rm -f "$ver.tmp"/*.deb
	rm -rf "$ver"
	mv "$ver.tmp/x" "$ver"
	rm -rf "$ver.tmp"
fi
ln -sfn "$ver" "$link"
readlink -f "$link"
