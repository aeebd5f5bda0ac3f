#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A vGPU opened through VFIO as QEMU does: protocol self-check (config space,
# registers, malformed accesses, MSI and INTx eventfds, reset), then every
# workload profile of the guest emulator.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 9

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
vgpu_remove "$u"
ktap_finished
