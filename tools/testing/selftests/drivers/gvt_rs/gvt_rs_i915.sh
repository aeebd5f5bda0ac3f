#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Intel GVT-g modules with the gvt-rs policy hook series: i915.ko and
# kvmgt.ko load and unload cleanly, kvmgt offers the policy selection
# parameter, and gvt_rs.ko (CONFIG_GVT_RS_I915) registers its policy with
# kvmgt and withdraws it on unload. Runs without Intel hardware: i915 then
# binds to no device and no GVT instance (mdev parent, gvt/ sysfs group) is
# created, so the per-GPU parts of the series and of the provider are only
# compiled, not run, here (their protocol is tested on the host, see
# Documentation/gvt-rs/i915.rst).
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
ktap_set_plan 19

# modprobe -r may take unused dependencies (i915 under kvmgt) along.
unload() {
	module_loaded "$1" || return 0
	modprobe -r "$1"
}

# gvt_rs.ko with the i915 provider holds kvmgt.ko; the simulated GPU's
# module, gvt_rs_sim.ko, holds gvt_rs.ko.
module_loaded gvt_rs_sim && rmmod gvt_rs_sim
module_loaded gvt_rs && rmmod gvt_rs
unload kvmgt
unload i915

# Lines of the kernel log that match $1.
log_count() {
	dmesg | grep -c "$1"
}

check "modprobe i915" modprobe i915
check "modprobe kvmgt" modprobe kvmgt
# shellcheck disable=SC2016 # expanded by the sh -c
check "kvmgt.sched_policy parameter exists and is empty by default" \
	sh -c '[ -r /sys/module/kvmgt/parameters/sched_policy ] &&
	       [ -z "$(cat /sys/module/kvmgt/parameters/sched_policy)" ]'
check "kvmgt.sched_policy is read-only at run time" \
	sh -c '! (echo x > /sys/module/kvmgt/parameters/sched_policy) 2>/dev/null'

# No Intel GPU: no GVT instance, so neither an mdev parent nor the per-GPU
# policy selection files exist. Say so in the log.
gpus=$(count_paths /sys/bus/pci/devices/*/gvt)
ktap_print_msg "GVT instances (per-GPU gvt/ sysfs groups): $gpus"
check "no GVT instance without an Intel GPU" test "$gpus" -eq 0
check "unload kvmgt" unload kvmgt
check "kvmgt gone" sh -c '! grep -q "^kvmgt " /proc/modules'
check "unload i915" unload i915
check "i915 gone" sh -c '! grep -q "^i915 " /proc/modules'

# The i915 provider: gvt_rs.ko registers "gvt-rs" with kvmgt.
reg="kvmgt: vGPU scheduling policy gvt-rs registered"
unreg="kvmgt: vGPU scheduling policy gvt-rs unregistered"
before=$(log_count "$reg")
check "modprobe gvt_rs loads kvmgt and i915 with it" \
	sh -c 'modprobe gvt_rs && grep -q "^kvmgt " /proc/modules &&
	       grep -q "^i915 " /proc/modules'
check "gvt_rs registers the gvt-rs policy with kvmgt" \
	test "$(log_count "$reg")" -eq $((before + 1))
check "gvt_rs holds kvmgt" test -e /sys/module/kvmgt/holders/gvt_rs
check "kvmgt cannot be unloaded under gvt_rs" \
	sh -c '! rmmod kvmgt 2>/dev/null && grep -q "^kvmgt " /proc/modules'
check "no GPU uses the policy: gvt_rs is not held" \
	test "$(cat /sys/module/gvt_rs/refcnt)" -eq 0
gpus=$(count_paths "$GVT_SYSFS"/0000:*)
check "no i915 GPU directory without a GVT instance" test "$gpus" -eq 0
check "the simulated GPU's module loads beside the policy, and unloads" \
	sh -c "modprobe gvt_rs_sim && [ -d $GVT_GPU ] && rmmod gvt_rs_sim && [ ! -e $GVT_GPU ]"
before=$(log_count "$unreg")
check "rmmod gvt_rs unregisters the policy" \
	sh -c "rmmod gvt_rs && [ \$(dmesg | grep -c '$unreg') -eq $((before + 1)) ]"

# kvmgt.sched_policy names the policy: registration activates it on every
# GPU (none here), and unloading still works.
unload kvmgt
unload i915
# shellcheck disable=SC2016 # expanded by the sh -c
check "kvmgt sched_policy=gvt-rs, then gvt_rs loads and unloads" \
	sh -c 'modprobe kvmgt sched_policy=gvt-rs &&
	       [ "$(cat /sys/module/kvmgt/parameters/sched_policy)" = gvt-rs ] &&
	       modprobe gvt_rs && rmmod gvt_rs'
unload kvmgt
unload i915

cycles=3
ok=true
i=0
while [ $i -lt $cycles ]; do
	{ modprobe gvt_rs && rmmod gvt_rs && unload kvmgt && unload i915; } ||
		ok=false
	i=$((i + 1))
done
check "$cycles gvt_rs+kvmgt+i915 load/unload cycles" $ok

ktap_finished
