#!/usr/bin/env bash
# What block cloning costs against server-side copy: usmbd with a share on
# a loop-mounted XFS made with reflink (t/integ/xfs_lib.sh) and the usual
# share on /tmp's file system, t/bench/clonecost_client.py timing one file
# copied on the server by FSCTL_DUPLICATE_EXTENTS_TO_FILE and by COPYCHUNK
# (on XFS the kernel's copy_file_range shares blocks too, so both are
# metadata work there; on /tmp the copy moves the data).  Prints figures,
# fails on nothing but a broken setup.
#
#	bash t/bench/clonecost.sh [MIB...]	sizes, default 64 512
#
# CLONECOST_RUNS: runs per figure (default 9; medians, min, max).
. "$(dirname "$0")/../integ/lib.sh"
. "$(dirname "$0")/../integ/xfs_lib.sh"

why=$(xfs_why)
[ -z "$why" ] || { echo "clonecost.sh: no loop-mounted XFS here: $why"; exit 0; }
command -v mkfs.xfs >/dev/null || { echo "clonecost.sh: mkfs.xfs is missing (xfsprogs)" >&2; exit 1; }
integ_init
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(64 512)
max=0
for s in "${sizes[@]}"; do [ "$s" -gt "$max" ] && max=$s; done
# the source, its clone (shared) and its copy (shared on XFS), room to spare
xfs_make xfs $(( max * 2 + 400 ))M "-m reflink=1" || exit 1
mkdir -p "$T/xfs/share"
chmod 1777 "$T/xfs/share"
INTEG_LOG_LEVEL=1 INTEG_SHARES=$(printf '[xfs]\n\tpath = %s\n\tread only = no\n' "$T/xfs/share") \
    integ_conf
integ_users || exit 1
integ_start || exit 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in "${sizes[@]}"; do
	"$PYTHON" "$ROOT/t/bench/clonecost_client.py" "$PORT" xfs "$T/xfs/share" \
	    "$s" "${CLONECOST_RUNS:-9}" || exit 1
	"$PYTHON" "$ROOT/t/bench/clonecost_client.py" "$PORT" share "$SHARE" \
	    "$s" "${CLONECOST_RUNS:-9}" copy || exit 1
	rm -f "$SHARE"/cost.* "$T/xfs/share"/cost.*
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
exit 0
