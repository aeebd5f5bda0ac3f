#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Intel GVT-g modules with the gvt-rs policy hook series: i915.ko and
# kvmgt.ko load and unload cleanly, and kvmgt offers the policy selection
# parameter. Runs without Intel hardware: i915 then binds to no device and
# no GVT instance (mdev parent, gvt/ sysfs group) is created, so the
# per-GPU parts of the series are only compiled, not run, here.
#
# gvt-rs-flavour: vm
# The test kernel (scripts/configs/i915.config) has the modules, so a skip
# there is a failure; a kernel built without them (KDIR= with another
# config) may skip, which scripts/vm_results.py accepts for other flavours.

. "$(dirname "$0")/gvt_rs_lib.sh"

# busybox modinfo succeeds for unknown modules: look at modules.dep instead.
have_module() {
	grep -q "/$1\.ko[.a-z]*:" "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null
}

ktap_print_header
if ! have_module i915 || ! have_module kvmgt; then
	ktap_skip_all "i915.ko/kvmgt.ko not in this image (scripts/configs/i915.config)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 10

# modprobe -r may take unused dependencies (i915 under kvmgt) along.
unload() {
	module_loaded "$1" || return 0
	modprobe -r "$1"
}

unload kvmgt
unload i915

check "modprobe i915" modprobe i915
check "modprobe kvmgt" modprobe kvmgt
check "kvmgt.sched_policy parameter exists and is empty by default" \
	sh -c '[ -r /sys/module/kvmgt/parameters/sched_policy ] &&
	       [ -z "$(cat /sys/module/kvmgt/parameters/sched_policy)" ]'
check "kvmgt.sched_policy is read-only at run time" \
	sh -c '! (echo x > /sys/module/kvmgt/parameters/sched_policy) 2>/dev/null'

# No Intel GPU: no GVT instance, so neither an mdev parent nor the per-GPU
# policy selection files exist. Say so in the log.
gpus=$(ls -d /sys/bus/pci/devices/*/gvt 2>/dev/null | wc -l)
ktap_print_msg "GVT instances (per-GPU gvt/ sysfs groups): $gpus"
check "no GVT instance without an Intel GPU" test "$gpus" -eq 0
check "unload kvmgt" unload kvmgt
check "kvmgt gone" sh -c '! grep -q "^kvmgt " /proc/modules'
check "unload i915" unload i915
check "i915 gone" sh -c '! grep -q "^i915 " /proc/modules'

cycles=3
ok=true
i=0
while [ $i -lt $cycles ]; do
	{ modprobe kvmgt && unload kvmgt && unload i915; } || ok=false
	i=$((i + 1))
done
check "$cycles kvmgt+i915 load/unload cycles" $ok

ktap_finished
