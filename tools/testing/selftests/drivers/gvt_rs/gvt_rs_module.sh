#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gvt_rs.ko and its simulated GPU's gvt_rs_sim.ko load and unload cleanly:
# gvt_rs creates and removes its sysfs tree (the class gvt_rs), gvt_rs_sim
# its GPU's device in it and needs gvt_rs, which it holds; an open sysfs file
# of a GPU does not keep the modules or their data alive.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
if ! modinfo gvt_rs_sim >/dev/null 2>&1 &&
	[ ! -e "/lib/modules/$(uname -r)/kernel/drivers/gvt-rs/gvt_rs_sim.ko" ]; then
	ktap_skip_all "gvt_rs.ko and gvt_rs_sim.ko are not installed"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 12

module_loaded gvt_rs_sim && rmmod gvt_rs_sim
module_loaded gvt_rs && rmmod gvt_rs
check "modprobe gvt_rs" modprobe gvt_rs
check "sysfs directory exists, no GPU without a provider" \
	sh -c "[ -d $GVT_SYSFS ] && [ ! -e $GVT_GPU ]"
check "version reads as x.y.z" sh -c "grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' $GVT_VERSION"
check "version is read-only" sh -c "! (echo 1 > $GVT_VERSION) 2>/dev/null"
check "modprobe gvt_rs_sim: its GPU gvtsim0" sh -c "modprobe gvt_rs_sim && [ -d $GVT_GPU ]"
check "gvt_rs_sim holds gvt_rs: rmmod gvt_rs is refused" \
	sh -c "[ -e /sys/module/gvt_rs/holders/gvt_rs_sim ] &&
	       ! rmmod gvt_rs 2>/dev/null && [ -d $GVT_GPU ]"
check "rmmod gvt_rs_sim: its GPU goes, the class stays" \
	sh -c "rmmod gvt_rs_sim && [ ! -e $GVT_GPU ] && [ -d $GVT_SYSFS ]"
check "rmmod gvt_rs" rmmod gvt_rs
check "sysfs directory removed" test ! -e "$GVT_SYSFS"

# Unload while a sysfs file is open: the read afterwards must fail cleanly.
modprobe gvt_rs_sim
exec 3<"$GVT_GPU/policy"
check "rmmod with an open sysfs file" sh -c "rmmod gvt_rs_sim && rmmod gvt_rs"
check "read after unload fails with ENODEV" \
	sh -c "cat <&3 2>&1 >/dev/null | grep -q 'No such device'"
exec 3<&-

# With CONFIG_DEBUG_KOBJECT_RELEASE (the KASAN kernel, which logs each
# delayed release) every unload waits seconds for its kobjects' releases
# (the modules', the mdev types'): fewer cycles there, each as thorough.
cycles=20
if dmesg | grep -q 'kobject_release, parent .* (delayed'; then
	cycles=4
fi
ok=true
i=0
while [ $i -lt $cycles ]; do
	modprobe gvt_rs_sim && cat "$GVT_GPU/policy" >/dev/null &&
		rmmod gvt_rs_sim && rmmod gvt_rs || ok=false
	i=$((i + 1))
done
check "$cycles load/unload cycles" $ok

ktap_finished
