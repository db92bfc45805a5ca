#!/usr/bin/env bash
# Builds the patched LMDB that usmbd links statically: Debian's lmdb 0.9.24
# source (scripts/fetch-lmdb.sh), deps/lmdb/*.patch applied, compiled into
# OUT/liblmdb.a with OUT/lmdb.h.  deps/lmdb/README.md says why.
#
#   scripts/build-lmdb.sh OUT
# The tarball is looked for in $LMDB_CACHE, /var/cache/usmbd (where
# scripts/install-deps.sh puts it) and OUT/..; fetched into OUT/.. if
# none has it.
set -euo pipefail

TARBALL=lmdb_0.9.24.orig.tar.gz
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-lmdb.sh OUT}
cc=${CC:-cc}
parent=$(dirname "$out")

src=
for d in ${LMDB_CACHE:-} /var/cache/usmbd "$parent"; do
	if [ -f "$d/$TARBALL" ]; then
		src=$d
		break
	fi
done
if [ -z "$src" ]; then
	"$here/scripts/fetch-lmdb.sh" "$parent"
	src=$parent
fi
# fetch-lmdb.sh checks the checksum of what it keeps; check again here
# since a cache may hold anything.
"$here/scripts/fetch-lmdb.sh" "$src" >/dev/null

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
tar -C "$out.tmp" -xzf "$src/$TARBALL" --strip-components=3 \
    lmdb-0.9.24/libraries/liblmdb/mdb.c lmdb-0.9.24/libraries/liblmdb/midl.c \
    lmdb-0.9.24/libraries/liblmdb/lmdb.h lmdb-0.9.24/libraries/liblmdb/midl.h \
    lmdb-0.9.24/libraries/liblmdb/LICENSE
for p in "$here"/deps/lmdb/*.patch; do
	patch -s -d "$out.tmp" -p1 <"$p"
done
# LMDB's own flags (its Makefile: -pthread -O2 -g, -W -Wall); no -Werror,
# it is not our code.  Same defines as Debian's build, so the lock file
# format matches lmdb-utils' mdb_stat and mdb_dump.
(cd "$out.tmp" &&
	$cc -pthread -O2 -g -fPIC -W -Wall -Wno-unused-parameter \
	    -Wno-implicit-fallthrough -c mdb.c midl.c &&
	ar rcs liblmdb.a mdb.o midl.o)
rm -rf "$out"
mv "$out.tmp" "$out"
