#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gvt_rs.ko loads and unloads cleanly, creates and removes its sysfs tree
# (the class gvt_rs and its GPUs' devices), and an open sysfs file of a GPU
# does not keep the module or its data alive.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
if ! modinfo gvt_rs >/dev/null 2>&1 && [ ! -e "/lib/modules/$(uname -r)/kernel/drivers/gvt-rs/gvt_rs.ko" ]; then
	ktap_skip_all "gvt_rs.ko is not installed"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 9

module_loaded gvt_rs && rmmod gvt_rs
check "modprobe gvt_rs" modprobe gvt_rs
check "sysfs directory exists" test -d "$GVT_SYSFS"
check "version reads as x.y.z" sh -c "grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' $GVT_VERSION"
check "version is read-only" sh -c "! (echo 1 > $GVT_VERSION) 2>/dev/null"
check "rmmod gvt_rs" rmmod gvt_rs
check "sysfs directory removed" test ! -e "$GVT_SYSFS"

# Unload while a sysfs file is open: the read afterwards must fail cleanly.
modprobe gvt_rs
exec 3<"$GVT_GPU/policy"
check "rmmod with an open sysfs file" rmmod gvt_rs
check "read after unload fails with ENODEV" sh -c "cat <&3 2>&1 >/dev/null | grep -q 'No such device'"
exec 3<&-

# With CONFIG_DEBUG_KOBJECT_RELEASE (the KASAN kernel, which logs each
# delayed release) every unload waits seconds for its kobjects' releases
# (the module's, the mdev types'): fewer cycles there, each as thorough.
cycles=20
if dmesg | grep -q 'kobject_release, parent .* (delayed'; then
	cycles=4
fi
ok=true
i=0
while [ $i -lt $cycles ]; do
	modprobe gvt_rs && cat "$GVT_GPU/policy" >/dev/null && rmmod gvt_rs || ok=false
	i=$((i + 1))
done
check "$cycles load/unload cycles" $ok

ktap_finished
