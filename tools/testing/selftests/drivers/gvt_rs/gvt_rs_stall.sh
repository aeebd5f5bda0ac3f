#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# One tenant's memory stalls only that tenant (the reliability audit's F3).
#
# A vGPU reports each completion by writing a record into its guest's
# status page: a DMA into the VM's memory, which can wait as long as that
# memory does (a page userfaultfd serves late during a postcopy migration,
# swap, a slow backing file). The attacker's status page is registered
# with a userfaultfd that is never served (gvt_guest -p stall), so the
# write of its one completion waits for good. Meanwhile:
# - a neighbour on the same engine completes every workload it submits
#   (it did not before: the engine's one work item, which serves every
#   vGPU, was the one waiting);
# - the engines drain (the GPU's `inflight` reaches 0): the stalled
#   completion is the attacker's to receive, not the GPU's to finish;
# - removing an unrelated vGPU returns (it waited on a GPU-wide count of
#   completions being delivered).
# Then the attacker's vGPU is removed: the request reaches its VMM, which
# closes the userfaultfd (the fault is then served with a fresh page), and
# the removal completes.
# Counts and states only; the waits are limits for a loaded machine.

. "$(dirname "$0")/gvt_rs_lib.sh"

OUT=/tmp/gvt_rs_stall
ktap_print_header
ktap_set_plan 8
check "gvt_rs ready" sim_ready

gone() {
	[ ! -e "/sys/bus/mdev/devices/$1" ]
}

stalled() {
	grep -q " stalled address=" "$OUT.attacker"
}

attacker=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "setup: no vGPU"
victim=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "setup: no vGPU"
bystander=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "setup: no vGPU"

guest "$attacker" "$OUT.attacker" -p stall -e 0 -d 1000 -t 900
attacker_pid=$GUEST_PID
wait_until "$GVT_WAIT_S" stalled
check "the attacker's status-page write waits on its userfaultfd" stalled
sed 's/^/# attacker: /' "$OUT.attacker"

progress "the victim runs on the same engine"
"$GVT_GUEST" -p compute -e 0 -d 2000 -q 4 -t 3 "$victim" >"$OUT.victim" 2>&1
rc=$?
sed 's/^/# victim: /' "$OUT.victim"
done_v=$(report_field "$OUT.victim" completed)
sub_v=$(report_field "$OUT.victim" submitted)
victim_completed_all() {
	[ "$rc" = 0 ] && [ "${done_v:-0}" -gt 0 ] && [ "$done_v" = "$sub_v" ]
}
check "the victim completes all of its ${sub_v:-?} workloads meanwhile" victim_completed_all
check "the engines drain while the attacker's completion waits" \
	wait_until "$GVT_WAIT_S" gpu_drained
check "the attacker is still stalled (the test stalled what it meant to)" \
	running "$attacker_pid"

progress "an unrelated vGPU is removed"
vgpu_remove "$bystander" &
remove_pid=$!
wait_until "$GVT_WAIT_S" gone "$bystander"
check "removing an unrelated vGPU returns while the completion waits" gone "$bystander"

progress "the attacker's vGPU is removed"
vgpu_remove "$attacker" &
wait_until "$GVT_WAIT_S" gone "$attacker"
check "the attacker's vGPU is removed once its VMM lets go of the page" gone "$attacker"
wait "$attacker_pid"
rc=$?
check "the attacker's device wrote the stalled page (gvt_guest status 0)" [ "$rc" = 0 ]
wait "$remove_pid"
vgpu_remove "$victim"
ktap_finished
