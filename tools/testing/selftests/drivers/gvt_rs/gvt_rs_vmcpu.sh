#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A VM's thread count does not slow the GPU's decisions (the reliability
# audit's F7). vmcg weighs each VM's CPU time. It was that of the process
# that opened the vGPU, whose reading walked every thread of that process,
# as many as the VMM made, and read while the GPU decided who runs next,
# with the GPU's locks held, every 5 ms, it made the GPU's decisions wait
# for a walk of all of them. It is now that of the VM's vCPU threads, the
# threads that access the vGPU (at most 16), read by a work item.
#
# A steady guest runs beside an idle one that keeps its vGPU open: first
# with one thread, then with 4000 sleeping threads. The time a decision
# holds the GPU's locks, on average over a window of each phase (pick_ns /
# picks, both measured by the kernel), must not grow with the threads:
# less than 3 times that of the first phase. And the VMs' CPU time still
# reaches the scheduler: the steady guest's cpu_ns grows while it runs.

. "$(dirname "$0")/gvt_rs_lib.sh"

THREADS=4000
ktap_print_header
ktap_set_plan 5
check "gvt_rs ready" sim_ready
set_attr "$GVT_GPU/policy" vmcg

gpu() {
	gpu_stat "$1"
}

completing() {
	[ "$(cat "$(vgpu_attr "$1" completed)")" -gt 0 ]
}

# threads PID: the number of threads of a process.
threads() {
	sed -n 's/^Threads:[[:space:]]*//p' "/proc/$1/status"
}

# window NAME: the mean time a decision held the GPU's locks over 4 s, in
# ns, as "MEAN PICKS"; printed as a figure.
window() {
	p0=$(gpu pick_ns) n0=$(gpu picks)
	sleep 4
	p1=$(gpu pick_ns) n1=$(gpu picks)
	mean=$(awk -v p=$((p1 - p0)) -v n=$((n1 - n0)) \
		'BEGIN { if (n > 0) printf "%d", p / n; else print 0 }')
	echo "# figure: $1: $((n1 - n0)) decisions in 4 s, $mean ns each on average," \
		"$(((p1 - p0) / 4000)) us per second" >&2
	echo "$mean $((n1 - n0))"
}

v=$(vgpu_create GVTg_V5_4)
a=$(vgpu_create GVTg_V5_4)
guest "$v" /tmp/vmcpu_v.out -p compute -q 4 -d 2000 -t 600
guest "$a" /tmp/vmcpu_a.out -p idle -t 600
wait_until "$GVT_WAIT_S" completing "$v" ||
	ktap_exit_fail_msg "setup: vGPU $v completes nothing"
sleep 1
cpu0=$(cat "$(vgpu_attr "$v" cpu_ns)")
r=$(window "beside a VM of 1 thread")
mean1=${r% *} picks1=${r#* }
cpu1=$(cat "$(vgpu_attr "$v" cpu_ns)")
check "the steady VM's CPU time reaches the scheduler ($cpu0 -> $cpu1 ns)" test "$cpu1" -gt "$cpu0"
vgpu_remove "$a"

a=$(vgpu_create GVTg_V5_4)
progress "a VM of $THREADS threads opens vGPU $a"
guest "$a" /tmp/vmcpu_a.out -p idle -t 600 -T "$THREADS"
n=$(threads "$GUEST_PID")
check "the idle VM has $THREADS threads more ($n)" test "$n" -gt "$THREADS"
sleep 1
r=$(window "beside a VM of $n threads")
mean2=${r% *} picks2=${r#* }
check "the GPU decided in both windows ($picks1, $picks2 decisions)" \
	test "$picks1" -ge 20 -a "$picks2" -ge 20
check "a VM's threads do not lengthen the GPU's decisions ($mean2 ns < 3 x $mean1 ns)" \
	test "$mean2" -lt $((3 * mean1))
vgpu_remove "$a"
vgpu_remove "$v"
wait
set_attr "$GVT_GPU/policy" tbs
ktap_finished
