#!/usr/bin/env bash
# Fetches LMDB's source as Debian 12 ships it (the lmdb 0.9.24 source
# package's upstream tarball, the same code as liblmdb0 0.9.24-1) into DIR,
# and checks it against the SHA-256 of Debian's signed .dsc.  usmbd builds
# it with one patch of ours (deps/lmdb/README.md says why).  Idempotent:
# a tarball already there with the right checksum is kept.
#
#   scripts/fetch-lmdb.sh DIR
set -euo pipefail

TARBALL=lmdb_0.9.24.orig.tar.gz
SHA256=8e7200fdc9bb09b0cfad1d4eee8b20d539e43fe05c7ef9406247d64659c4a480
URLS=(
	"http://deb.debian.org/debian/pool/main/l/lmdb/$TARBALL"
	"http://snapshot.debian.org/archive/debian/20250520T000000Z/pool/main/l/lmdb/$TARBALL"
)

dir=${1:?usage: fetch-lmdb.sh DIR}
mkdir -p "$dir"
out="$dir/$TARBALL"

good() { [ -f "$1" ] && echo "$SHA256  $1" | sha256sum -c --status; }

if good "$out"; then
	exit 0
fi
tmp="$out.part.$$"
trap 'rm -f "$tmp"' EXIT
for url in "${URLS[@]}"; do
	if command -v curl >/dev/null; then
		curl -fsSL --retry 2 --max-time 120 -o "$tmp" "$url" || continue
	else
		python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
		    "$url" "$tmp" || continue
	fi
	if good "$tmp"; then
		mv "$tmp" "$out"
		exit 0
	fi
	echo "fetch-lmdb.sh: $url: checksum mismatch" >&2
done
echo "fetch-lmdb.sh: could not fetch $TARBALL (tried ${URLS[*]})" >&2
exit 1
