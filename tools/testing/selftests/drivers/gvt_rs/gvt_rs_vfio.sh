#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A vGPU opened through VFIO as QEMU does: protocol self-check (config space,
# registers of every access size, malformed accesses, VFIO interrupt ioctls
# with vfio-pci's answers, rings and status page in guest memory, every fault
# of the command scanner and its recovery by reset, MSI and INTx), then every
# workload profile of the guest emulator, the VM CPU time it is charged, and
# the removal of a vGPU the VM holds (device request).

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 11

check "gvt_rs ready" sim_ready
u=$(vgpu_create GVTg_V5_4)
check "VFIO protocol self-check" "$GVT_GUEST" -c "$u"
check "vGPU stopped after close" sh -c "[ \$(cat $(vgpu_attr "$u" started)) = 0 ]"

for p in compute frames long idle; do
	"$GVT_GUEST" -p $p -t 2 "$u" >/tmp/vfio_$p.out 2>&1
	rc=$?
	cat /tmp/vfio_$p.out | sed 's/^/# /'
	c=$(report_field /tmp/vfio_$p.out completed)
	if [ $p = idle ]; then
		check "profile $p runs" test $rc = 0 -a "$c" = 0
	else
		check "profile $p completes its work" test $rc = 0 -a "${c:-0}" -gt 0
	fi
done
"$GVT_GUEST" -p compute -i intx -e -1 -t 2 "$u" >/tmp/vfio_intx.out 2>&1
check "INTx interrupts, both engines" test $? = 0
sed 's/^/# /' /tmp/vfio_intx.out
sub=$(cat "$(vgpu_attr "$u" submitted)")
comp=$(cat "$(vgpu_attr "$u" completed)")
echo "# engine stats: submitted=$sub completed=$comp busy_ns=$(cat "$(vgpu_attr "$u" busy_ns)")"
check "engine accounted every workload" test "$sub" = "$comp" -a "$sub" -gt 0
# vmcg's input: the CPU time of the VM, i.e. of every thread of the process
# that opened the vGPU. One busy "vCPU" thread for 3 s must add at least a
# second to what the submitting thread alone is charged (it keeps a vCPU
# busy, so ~3 s; the submitting thread mostly sleeps on interrupts). Both
# runs see the same machine load, so the difference is the busy thread's.
set_attr "$GVT_GPU/policy" vmcg
"$GVT_GUEST" -p compute -t 3 "$u" >/tmp/vfio_vcpu.out 2>&1
cpu0=$(cat "$(vgpu_attr "$u" cpu_ns)")
"$GVT_GUEST" -p compute -t 3 -v 1 "$u" >/tmp/vfio_vcpu.out 2>&1
cpu1=$(cat "$(vgpu_attr "$u" cpu_ns)")
echo "# VM CPU time sampled over 3 s: submitting thread only cpu_ns=$cpu0, plus one busy thread cpu_ns=$cpu1"
check "VM CPU time counts every thread of the VM" \
	test $((${cpu1:-0} - ${cpu0:-0})) -ge 1000000000
set_attr "$GVT_GPU/policy" tbs
# Removing a vGPU that a VM holds signals its REQ eventfd; the guest emulator
# answers as QEMU does (unplug, close) and the removal completes.
guest "$u" /tmp/vfio_req.out -p compute -t 60
t0=$(date +%s)
vgpu_remove "$u"
t1=$(date +%s)
wait
sed 's/^/# /' /tmp/vfio_req.out
# A removal that never completes fails the run by its timeout; how long it
# took is a figure, not a condition.
echo "# figure: removal of an open vGPU took $((t1 - t0)) s"
check "removal of an open vGPU: device request, the VM lets go" \
	sh -c "grep -q 'device request' /tmp/vfio_req.out && [ ! -e /sys/bus/mdev/devices/$u ]"
ktap_finished
