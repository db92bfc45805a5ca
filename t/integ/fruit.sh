#!/usr/bin/env bash
# macOS clients (worker/fruit.h): smbtorture's vfs.fruit,
# vfs.fruit_timemachine and vfs.fruit_file_id against usmbd shares
# configured as Samba's selftest configures its fruit shares
# (selftest/target/Samba3.pm: vfs_fruit_metadata_stream with
# fruit:resource = stream, vfs_fruit_timemachine, vfs_fruit_zero_fileid,
# and vfs_fruit with Samba's defaults, fruit:metadata = netatalk, where
# vfs.fruit_netatalk runs too),
# checked against t/compat/fruit.list; then impacket checks of what
# smbtorture does not look at (t/integ/fruit_client.py).
#
# FRUIT_SAMBA=1 also runs the same suites against Debian's Samba with
# `vfs objects = catia fruit streams_xattr` and the same keys, and prints
# both pass counts (nothing is judged on Samba's).  FRUIT_TORTURE=422
# runs Samba 4.22's smbtorture (scripts/samba-ref.sh) instead of
# Debian's: results are printed, the list is not judged (it is 4.17's).
. "$(dirname "$0")/lib.sh"

command -v smbtorture >/dev/null || { fail "smbtorture is installed"; finish; }
LIST=$ROOT/t/compat/fruit.list
integ_init
mkdir -p "$T/tm" "$T/ro" "$T/meta" "$T/rsrc" "$T/rsrcbin"
chmod 0777 "$T/rsrcbin"
chmod 1777 "$T/tm"
echo data >"$T/ro/file"
chmod 0755 "$T/ro"
chmod 0644 "$T/ro/file"
SHARES="[fruit]
	path = $SHARE
	read only = no
	vfs objects = catia fruit streams_xattr
	fruit:resource = stream
	fruit:metadata = stream
	fruit:veto_appledouble = no
[wo_fruit]
	path = $SHARE
	read only = no
[tm]
	path = $T/tm
	read only = no
	vfs objects = fruit streams_xattr
	fruit:resource = stream
	fruit:metadata = stream
	fruit:time machine = yes
	fruit:time machine max size = 32K
[fid]
	path = $SHARE
	read only = no
	vfs objects = fruit streams_xattr
	fruit:resource = stream
	fruit:metadata = stream
	fruit:zero_file_id = yes
	fruit:validate_afpinfo = no
[fruitro]
	path = $T/ro
	read only = yes
	vfs objects = catia fruit streams_xattr
	fruit:metadata = stream
	fruit:resource = stream
[vfs_fruit]
	path = $SHARE
	read only = no
	vfs objects = catia fruit streams_xattr
	fruit:resource = file
	fruit:metadata = netatalk
	fruit:locking = netatalk
	fruit:encoding = native
	fruit:veto_appledouble = no
[meta]
	path = $T/meta
	read only = no
	vfs objects = catia fruit streams_xattr
	fruit:metadata = netatalk
	fruit:resource = stream
[rsrc]
	path = $T/rsrc
	read only = no
	vfs objects = catia fruit streams_xattr
[rsrc_bin]
	path = $T/rsrcbin
	read only = no
	vfs objects = catia fruit streams_xattr
	recycle directory = .recycle/%U
	recycle keep tree = yes
[conv_wipe]
	path = $SHARE
	read only = no
	vfs objects = fruit streams_xattr
	fruit:resource = file
	fruit:metadata = stream
	fruit:wipe_intentionally_left_blank_rfork = true
	fruit:delete_empty_adfiles = false
	fruit:veto_appledouble = no
[conv_delete]
	path = $SHARE
	read only = no
	vfs objects = fruit streams_xattr
	fruit:resource = file
	fruit:metadata = stream
	fruit:wipe_intentionally_left_blank_rfork = true
	fruit:delete_empty_adfiles = true
	fruit:veto_appledouble = no"
# Samba's selftest sets the global fruit keys its tests expect in the
# AAPL answer: fruit:copyfile (and fruit:nfs_aces, Samba's default)
GLOBALS=("fruit:copyfile = yes" "fruit:nfs_aces = yes" "fruit:model = MacSamba")
INTEG_SHARES=$SHARES integ_conf "${GLOBALS[@]}"
integ_users
chown alice: "$T/meta" "$T/rsrc"
integ_start || { fail "usmbd starts"; finish; }
grep -q "unknown key 'fruit:" "$LOG" &&
    fail "a fruit: key of Samba's selftest shares is unknown: $(grep "unknown key 'fruit:" "$LOG" | head -3)"

# fruit_run PORT SHARE SUITE: "STATUS<TAB>name" lines
TORTURE=(smbtorture)
if [ "${FRUIT_TORTURE:-}" = 422 ]; then
	"$ROOT/scripts/samba-ref.sh" path >/dev/null 2>&1 ||
	    { fail "Samba 4.22's smbtorture is installed (scripts/samba-ref.sh)"; finish; }
	TORTURE=("$ROOT/scripts/samba-ref.sh" run smbtorture)
fi
# (share2, and more options: FRUIT_SHARE2, FRUIT_OPT)
fruit_run() {
	timeout --kill-after=5 120 "${TORTURE[@]}" "//127.0.0.1/$2" -p "$1" \
	    -U "alice%$ALICE_PW" --target=samba3 \
	    --option=torture:localdir="$SHARE" \
	    --option=torture:share2="${FRUIT_SHARE2:-wo_fruit}" \
	    ${FRUIT_OPT:+"--option=$FRUIT_OPT"} \
	    --fullname --format=subunit "$3" </dev/null 2>&1 |
	    sed -n -E 's/^(success|failure|error|skip): (.*)$/\1\t\2/p' |
	    sed -E 's/ \[$//; s/^error\t/failure\t/'
}

fruit_all() {
	fruit_run "$1" fruit vfs.fruit
	# Samba's selftest runs vfs.fruit on its default-keyed share too, and
	# vfs.fruit_netatalk: listed with a "netatalk:" prefix
	{ fruit_run "$1" vfs_fruit vfs.fruit
	  fruit_run "$1" vfs_fruit vfs.fruit_netatalk; } |
	    sed 's/\t/\tnetatalk:/'
	fruit_run "$1" tm vfs.fruit_timemachine
	fruit_run "$1" fid vfs.fruit_file_id
	# the ._ file written through a plain share, converted through the
	# fruit share (share2), as Samba's selftest runs vfs.fruit_conversion
	FRUIT_SHARE2=conv_wipe FRUIT_OPT=torture:delete_empty_adfiles=false \
	    fruit_run "$1" wo_fruit vfs.fruit_conversion | sed 's/\t/\twipe:/'
	FRUIT_SHARE2=conv_delete FRUIT_OPT=torture:delete_empty_adfiles=true \
	    fruit_run "$1" wo_fruit vfs.fruit_conversion | sed 's/\t/\tdelete:/'
}

t0=$SECONDS
fruit_all "$PORT" >"$T/res.usmbd"
declare -A got=()
while IFS=$'\t' read -r st name; do got[$name]=$st; done <"$T/res.usmbd"
npass=0
[ "${FRUIT_TORTURE:-}" = 422 ] && LIST=/dev/null &&
    sed 's/^/    /' "$T/res.usmbd"
while IFS=$'\t' read -r name want; do
	case $name in ''|'#'*) continue ;; esac
	case $want in
	pass)
		if [ "${got[$name]:-}" = success ]; then
			ok "smbtorture $name"
			npass=$((npass + 1))
		else
			fail "smbtorture $name: ${got[$name]:-not run}"
		fi ;;
	*)
		[ "${got[$name]:-}" = success ] &&
		    echo "note: $name passes but is listed as failing" ;;
	esac
done <"$LIST"
for name in "${!got[@]}"; do
	grep -qF "$name	" "$LIST" ||
	    echo "note: $name (${got[$name]}) is not in $LIST"
done
echo "usmbd: $(grep -c '^success' "$T/res.usmbd") of $(wc -l <"$T/res.usmbd") smbtorture fruit tests pass ($((SECONDS - t0)) s)"

# Samba first: the bundles below are usmbd's client checks' own
if [ "${FRUIT_SAMBA:-0}" = 1 ]; then
	SP=$(integ_free_port)
	SAMBA_GLOBAL=$(printf '\t%s\n' "${GLOBALS[@]}") \
	    samba_start "$T/samba" "$SP" "$SHARES" ||
	    { fail "Samba starts"; finish; }
	fruit_all "$SP" >"$T/res.samba"
	# the stream rules of fruit_client.py on Samba: printed, not judged
	echo "Samba 4.17, fruit_client.py's stream checks:"
	"$PYTHON" "$ROOT/t/integ/fruit_client.py" 127.0.0.1 "$SP" alice \
	    "$ALICE_PW" "$SHARE" bob "$BOB_PW" samba 2>&1 | sed 's/^/    /'
	rm -rf "$SHARE/rdoc" "$SHARE/lazy"
	samba_stop
	echo "Samba 4.17: $(grep -c '^success' "$T/res.samba") of $(wc -l <"$T/res.samba") pass; usmbd: $(grep -c '^success' "$T/res.usmbd")"
	join -t $'\t' -1 2 -2 2 <(sort -t $'\t' -k2 "$T/res.usmbd") \
	    <(sort -t $'\t' -k2 "$T/res.samba") |
	    awk -F'\t' '{ printf "    %-8s %-8s %s\n", $2, $3, $1 }'
fi
# Time Machine bundles for fruit_client.py tm_checks: 3 bands of 8 KiB;
# an Info.plist that is a fifo, and one that is a symlink out of the share
mkdir -p "$T/tm/a.sparsebundle/bands" "$T/tm/fifo.sparsebundle/bands" \
    "$T/tm/link.sparsebundle/bands"
printf '<dict>\n<key>band-size</key>\n<integer>8192</integer>\n</dict>\n' \
    >"$T/tm/a.sparsebundle/Info.plist"
cp "$T/tm/a.sparsebundle/Info.plist" "$T/outside.plist"
touch "$T/tm/a.sparsebundle/bands/"{0,1,2} \
    "$T/tm/fifo.sparsebundle/bands/0" "$T/tm/link.sparsebundle/bands/0"
mkfifo "$T/tm/fifo.sparsebundle/Info.plist"
ln -s "$T/outside.plist" "$T/tm/link.sparsebundle/Info.plist"
client_checks fruit_client "$PYTHON" "$ROOT/t/integ/fruit_client.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$SHARE" bob "$BOB_PW"

# fruit:metadata = netatalk on [meta]: usmbd alone, then with Debian's
# Samba 4.17 serving the same directory (t/integ/fruit_meta.py)
client_checks fruit_meta "$PYTHON" "$ROOT/t/integ/fruit_meta.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/meta"
SP=$(integ_free_port)
if SAMBA_GLOBAL=$(printf '\t%s\n' "${GLOBALS[@]}") \
    samba_start "$T/samba_meta" "$SP" "$SHARES"; then
	client_checks fruit_meta_samba "$PYTHON" "$ROOT/t/integ/fruit_meta.py" \
	    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/meta" "$SP"
	samba_stop
else
	fail "Samba starts for the netatalk metadata checks"
fi

# fruit:resource = file on [rsrc] (Samba's defaults: ._ files), usmbd
# alone, then with Debian's Samba 4.17 on the same directory
# (t/integ/fruit_rsrc.py)
client_checks fruit_rsrc "$PYTHON" "$ROOT/t/integ/fruit_rsrc.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/rsrc" bob
# fruit:encoding = native on [vfs_fruit] (t/integ/fruit_conv.py)
client_checks fruit_native "$PYTHON" "$ROOT/t/integ/fruit_conv.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$SHARE" bob native
# ._NAME into the recycle bin beside its file, by the user's delete and
# by another user's worker (unlink_as)
client_checks fruit_rsrc_bin "$PYTHON" "$ROOT/t/integ/fruit_rsrc.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/rsrcbin" bob bin "$BOB_PW"
# a Mac's ._ files converted (Samba's ad_convert), then compared with
# Samba's conversion of the same files (t/integ/fruit_conv.py)
client_checks fruit_conv "$PYTHON" "$ROOT/t/integ/fruit_conv.py" \
    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/rsrc" bob
SP=$(integ_free_port)
if SAMBA_GLOBAL=$(printf '\t%s\n' "${GLOBALS[@]}") \
    samba_start "$T/samba_rsrc" "$SP" "$SHARES"; then
	client_checks fruit_rsrc_samba "$PYTHON" "$ROOT/t/integ/fruit_rsrc.py" \
	    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/rsrc" bob "$SP"
	client_checks fruit_conv_samba "$PYTHON" "$ROOT/t/integ/fruit_conv.py" \
	    127.0.0.1 "$PORT" alice "$ALICE_PW" "$T/rsrc" bob "$SP"
	samba_stop
else
	fail "Samba starts for the resource fork checks"
fi

finish
