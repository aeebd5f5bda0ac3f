#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian's mdevctl against gvt-rs, on the simulated GPU's PCI parent (where
# libvirt and Nova look too): the types as mdevctl lists them, persistent
# definitions with a gvt-rs attribute (gvt_rs/weight) applied at start,
# list --dumpjson, stop/undefine, and a bad attribute value that makes
# start fail cleanly, leaving no vGPU and nothing used.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
need_spare_pci
ktap_set_plan 14

MDEVCTL=$(command -v mdevctl || true)
[ -n "$MDEVCTL" ] || ktap_exit_fail_msg "mdevctl is missing (scripts/make-initramfs.sh installs Debian's)"
P=$GVT_PCI_ADDR
T=gvtsim-GVTg_V5_4
TYPES=$GVT_PCI_DEV/mdev_supported_types

check "gvt_rs ready" sim_ready
check "the spare function $P is a simulated GPU" pci_gpu_bind
rm -rf /etc/mdevctl.d/"$P"

echo "# mdevctl --version: $($MDEVCTL --version 2>&1)"
$MDEVCTL types -p "$P" >/tmp/mdevctl_types.out 2>&1
sed 's/^/# /' /tmp/mdevctl_types.out
avail=$(cat "$TYPES/$T/available_instances")
check "mdevctl types lists the 4 gvt-rs types of $P" sh -c \
	"[ \$(grep -cE '^  gvtsim-GVTg_V5_[1248]\$' /tmp/mdevctl_types.out) = 4 ]"
check "... with name, device API, description and available instances" sh -c \
	"grep -A8 '^  $T\$' /tmp/mdevctl_types.out | grep -q 'Name: GVTg_V5_4' &&
	 grep -A8 '^  $T\$' /tmp/mdevctl_types.out | grep -q 'Device API: vfio-pci' &&
	 grep -A8 '^  $T\$' /tmp/mdevctl_types.out | grep -q 'Available instances: $avail' &&
	 grep -A12 '^  $T\$' /tmp/mdevctl_types.out | grep -q 'high_gm_size: 512MB'"

u=$(new_uuid)
$MDEVCTL define -u "$u" -p "$P" -t "$T" &&
	$MDEVCTL modify -u "$u" --addattr=gvt_rs/weight --value=8
check "define a vGPU with gvt_rs/weight=8" test $? = 0
check "a definition alone creates nothing" test ! -e "/sys/bus/mdev/devices/$u"
$MDEVCTL list --defined --dumpjson >/tmp/mdevctl_list.json 2>&1
sed 's/^/# /' /tmp/mdevctl_list.json
check "list --defined --dumpjson shows it with the attribute" sh -c \
	"grep -q '$u' /tmp/mdevctl_list.json && grep -q '\"mdev_type\": \"$T\"' /tmp/mdevctl_list.json &&
	 grep -q '\"gvt_rs/weight\": \"8\"' /tmp/mdevctl_list.json"
$MDEVCTL start -u "$u"
check "start creates it on $P" test -d "$GVT_PCI_DEV/$u"
check "it starts with weight 8 (its type's is 4)" sh -c \
	"[ \$(cat $(vgpu_attr "$u" weight)) = 8 ] && [ \$(cat $(vgpu_attr "$u" type_weight)) = 4 ]"
$MDEVCTL list >/tmp/mdevctl_active.out 2>&1
sed 's/^/# /' /tmp/mdevctl_active.out
check "mdevctl list shows it active" grep -q "$u $P $T" /tmp/mdevctl_active.out
$MDEVCTL stop -u "$u"
# mdevctl output is read to its end (grep without -q): mdevctl panics on
# EPIPE when the reader of a pipe exits at the first match.
check "stop removes the vGPU, keeps the definition" sh -c \
	"[ ! -e /sys/bus/mdev/devices/$u ] && $MDEVCTL list --defined | grep -F '$u' >/dev/null"
$MDEVCTL undefine -u "$u"
check "undefine forgets it" sh -c "! $MDEVCTL list --defined | grep -F '$u' >/dev/null"

# A bad value: start must fail and leave nothing behind.
for bad in 0 100000 x; do
	ub=$(new_uuid)
	$MDEVCTL define -u "$ub" -p "$P" -t "$T"
	$MDEVCTL modify -u "$ub" --addattr=gvt_rs/weight --value="$bad"
	out=$($MDEVCTL start -u "$ub" 2>&1)
	rc=$?
	echo "$out" | sed "s/^/# start with gvt_rs\/weight=$bad: status $rc: /"
	left=$(count_paths "/sys/bus/mdev/devices/$ub")
	[ "$rc" != 0 ] && [ "$left" = 0 ] && [ "$(cat "$TYPES/$T/available_instances")" = "$avail" ] && echo ok >>/tmp/mdevctl_bad
	$MDEVCTL undefine -u "$ub"
done
check "a bad weight (0, 100000, x) fails start, no vGPU left, nothing used" \
	sh -c "[ \$(grep -c ok /tmp/mdevctl_bad 2>/dev/null) = 3 ]"
rm -f /tmp/mdevctl_bad
ub=$(new_uuid)
$MDEVCTL define -u "$ub" -p "$P" -t "$T"
$MDEVCTL modify -u "$ub" --addattr=gvt_rs/no_such_knob --value=1
$MDEVCTL start -u "$ub" >/tmp/mdevctl_nosuch.out 2>&1
rc=$?
sed 's/^/# /' /tmp/mdevctl_nosuch.out
check "an unknown attribute fails start, no vGPU left" sh -c \
	"[ $rc != 0 ] && [ ! -e /sys/bus/mdev/devices/$ub ] && [ \$(cat $TYPES/$T/available_instances) = $avail ]"
$MDEVCTL undefine -u "$ub"
pci_gpu_unbind
ktap_finished
