#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A vGPU opened through VFIO as QEMU does: protocol self-check (config space,
# registers of every access size, malformed accesses, the ignored ones and
# their count, VFIO interrupt ioctls with vfio-pci's answers, rings and status
# page in guest memory, every fault of the command scanner and its recovery by
# reset, MSI and INTx, INTx in a new session without a reset), then every
# workload profile of the guest emulator, copies of guest memory checked
# byte for byte across resets and faults, the VM CPU time it is charged, and
# the removal of a vGPU the VM holds (device request) while it copies.
#
# All of it twice: through the legacy VFIO container and group, and through
# the device's /dev/vfio/devices/vfioN bound to /dev/iommu (iommufd), as
# QEMU 8.2 and later open a device; the vGPU must behave the same.

. "$(dirname "$0")/gvt_rs_lib.sh"

# copy_run_ok STATUS OUTFILE [MIN_FAILED]: a copy run exited 0 and its
# counts hold (copies_ok).
copy_run_ok() {
	rc=$1
	shift
	copies_ok "$@" && [ "$rc" = 0 ]
}

ktap_print_header
ktap_set_plan 29

check "gvt_rs ready" sim_ready
for GVT_VFIO_MODE in container iommufd; do
	m="($GVT_VFIO_MODE)"
	progress "VFIO through the $GVT_VFIO_MODE"
	u=$(vgpu_create GVTg_V5_4)
	check "VFIO protocol self-check $m" gvt_guest -c "$u"
	# The run above wrote GTT entries and closed the device: the next
	# tenant of the same vGPU finds them at power-on (the self-check's
	# first check).
	check "VFIO protocol self-check again: nothing of the last tenant's GTT $m" \
		gvt_guest -c "$u"
	check "vGPU stopped after close $m" sh -c "[ \$(cat $(vgpu_attr "$u" started)) = 0 ]"

	# The engine's counts from here on: the self-checks above end sessions
	# with work queued on purpose (faults, resets), whose discarded
	# workloads stay counted as submitted.
	sub0=$(cat "$(vgpu_attr "$u" submitted)")
	comp0=$(cat "$(vgpu_attr "$u" completed)")
	for p in compute frames long idle; do
		gvt_guest -p $p -t 2 "$u" >/tmp/vfio_$p.out 2>&1
		rc=$?
		sed 's/^/# /' /tmp/vfio_$p.out
		c=$(report_field /tmp/vfio_$p.out completed)
		if [ $p = idle ]; then
			check "profile $p runs $m" test $rc = 0 -a "$c" = 0
		else
			check "profile $p completes its work $m" test $rc = 0 -a "${c:-0}" -gt 0
		fi
	done
	gvt_guest -p compute -i intx -e -1 -t 2 "$u" >/tmp/vfio_intx.out 2>&1
	check "INTx interrupts, both engines $m" test $? = 0
	sed 's/^/# /' /tmp/vfio_intx.out
	# Each of these runs waits for all it submitted: the engine counted
	# every workload they submitted, each completed, and as many as the
	# guests saw complete. (An engine completion is counted before the
	# guest can see it.)
	sub=$(($(cat "$(vgpu_attr "$u" submitted)") - sub0))
	comp=$(($(cat "$(vgpu_attr "$u" completed)") - comp0))
	busy=$(cat "$(vgpu_attr "$u" busy_ns)")
	seen=0
	for p in compute frames long idle intx; do
		c=$(report_field /tmp/vfio_$p.out completed)
		seen=$((seen + ${c:-0}))
	done
	echo "# engine stats $m, the profile runs: submitted=$sub completed=$comp" \
		"(the guests saw $seen), busy_ns=$busy in all"
	check "engine accounted every workload $m" \
		test "$sub" = "$comp" -a "$comp" = "$seen" -a "$sub" -gt 0
	# Work that moves data: copies on both engines, a reset after every
	# 5th round (VFIO_DEVICE_RESET and the RESET register in turn) and a
	# copy from unmapped memory every 17th (a fault, after which the guest
	# resets the device): every completed copy holds its pattern, every
	# other one was failed by the reset or the fault, none is lost.
	gvt_guest -p copy -e -1 -q 8 -d 300 -t 3 -x 5 -j 17 "$u" >/tmp/vfio_copy.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/vfio_copy.out
	check "copies across resets and faults: none wrong, each completed or failed $m" \
		copy_run_ok $rc /tmp/vfio_copy.out 1
	# The input of vmcg: the CPU time of the VM, i.e. of its vCPU threads,
	# those that access the vGPU: the submitting one and one busy "vCPU"
	# thread that read a register once. Judged against what the threads of that process
	# used in the same run, as the kernel accounted it and the guest
	# emulator reports it: the figure of the engine must cover the time of
	# the submitting thread and at least half of that of the others (its
	# last sample comes a little before the run ends), however much CPU
	# time the load on the machine left the busy thread. A vGPU of its
	# own: cpu_ns keeps the largest figure of the life of the vGPU.
	set_attr "$GVT_GPU/policy" vmcg
	uc=$(vgpu_create GVTg_V5_4)
	gvt_guest -p compute -t 3 -v 1 "$uc" >/tmp/vfio_vcpu.out 2>&1
	cpu=$(cat "$(vgpu_attr "$uc" cpu_ns)")
	vgpu_remove "$uc"
	all=$(report_field /tmp/vfio_vcpu.out cpu_ns)
	own=$(report_field /tmp/vfio_vcpu.out submit_cpu_ns)
	echo "# figure $m: VM CPU time over a 3 s run: engine cpu_ns=$cpu," \
		"process threads ${all:-?} ns, submitting thread ${own:-?} ns"
	cpu=${cpu:-0} all=${all:-0} own=${own:-0}
	check "VM CPU time counts every thread of the VM $m" \
		test "$all" -gt "$own" -a $((cpu - own)) -ge $(((all - own) / 2))
	set_attr "$GVT_GPU/policy" tbs
	# Removing a vGPU that a VM holds signals its REQ eventfd; the guest
	# emulator answers as QEMU does (unplug, close) and the removal
	# completes.
	guest "$u" /tmp/vfio_req.out -p copy -e -1 -q 8 -d 500 -t 60
	# It holds the vGPU the way it was asked to: the group and container,
	# or the device file and an iommufd, and not the other.
	fds=$(ls -l "/proc/$GUEST_PID/fd" 2>/dev/null)
	echo "$fds" | sed -n 's|.* -> \(/dev/.*\)|# guest holds \1|p'
	if [ "$GVT_VFIO_MODE" = iommufd ]; then
		check "the guest holds the vGPU through /dev/vfio/devices/ and /dev/iommu $m" \
			sh -c "echo '$fds' | grep -q ' /dev/vfio/devices/vfio[0-9]*\$' &&
				echo '$fds' | grep -q ' /dev/iommu\$' &&
				! echo '$fds' | grep -q ' /dev/vfio/vfio\$'"
	else
		check "the guest holds the vGPU through its group and /dev/vfio/vfio $m" \
			sh -c "echo '$fds' | grep -q ' /dev/vfio/[0-9]*\$' &&
				echo '$fds' | grep -q ' /dev/vfio/vfio\$' &&
				! echo '$fds' | grep -q ' /dev/iommu\$'"
	fi
	t0=$(date +%s)
	vgpu_remove "$u"
	t1=$(date +%s)
	wait
	sed 's/^/# /' /tmp/vfio_req.out
	# A removal that never completes fails the run by its timeout; how
	# long it took is a figure, not a condition.
	echo "# figure $m: removal of an open vGPU took $((t1 - t0)) s"
	check "removal of an open vGPU: device request, the VM lets go $m" \
		sh -c "grep -q 'device request' /tmp/vfio_req.out &&
			[ ! -e /sys/bus/mdev/devices/$u ]"
	check "copies across the removal: none wrong, each completed or failed $m" \
		copy_run_ok 0 /tmp/vfio_req.out
done
ktap_finished
