#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The gvt_rs tracepoints (events/gvt_rs/ in tracefs): each event exists,
# and with two guests running under sfq on shared slots the trace shows
# switches between them, every dispatch and completion of their workloads
# (as counted in sysfs) with their queueing and GPU times, and GTT loads at
# switch-in of the right size. Disabled events record nothing. The two
# guests start their runs together (however long each took to open its
# device), and the trace is read once nothing is in flight: counts, not
# timings.

. "$(dirname "$0")/gvt_rs_lib.sh"

TRACEFS=/sys/kernel/tracing

ktap_print_header
if [ ! -d "$TRACEFS/events" ]; then
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null
fi
if [ ! -d "$TRACEFS/events" ]; then
	ktap_skip_all "no tracefs (CONFIG_TRACING)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 10
check "gvt_rs ready" sim_ready

EV=$TRACEFS/events/gvt_rs
have_events() {
	for e in gvt_rs_switch gvt_rs_dispatch gvt_rs_complete gvt_rs_gtt_load \
		gvt_rs_relocate; do
		[ -r "$EV/$e/format" ] || return 1
	done
}
check "the five gvt_rs events exist" have_events

# Lines of the trace buffer for event $1.
events() {
	grep " $1: " "$TRACEFS/trace"
}

echo 0 >"$TRACEFS/tracing_on"
echo >"$TRACEFS/trace"
echo 1 >"$EV/enable"
echo 1 >"$TRACEFS/tracing_on"

set_attr "$GVT_GPU/gm_allocator" gscale
set_attr "$GVT_GPU/policy" sfq
a=$(vgpu_create GVTg_V5_1)
b=$(vgpu_create GVTg_V5_1)
ida=$(cat "$(vgpu_attr "$a" vgpu_id)")
idb=$(cat "$(vgpu_attr "$b" vgpu_id)")
rm -f /tmp/trace.go
guest "$a" /tmp/trace_a.out -w /tmp/trace.go -p compute -q 3 -d 1000 -t 2
guest "$b" /tmp/trace_b.out -w /tmp/trace.go -p compute -q 3 -d 1000 -t 2
guests_go /tmp/trace.go
wait
check "nothing in flight once the guests closed their vGPUs (waited up to $GVT_WAIT_S s)" \
	wait_until "$GVT_WAIT_S" gpu_drained
echo 0 >"$TRACEFS/tracing_on"
completed_a=$(cat "$(vgpu_attr "$a" completed)")
dispatched_b=$(cat "$(vgpu_attr "$b" dispatched)")

for e in gvt_rs_switch gvt_rs_gtt_load gvt_rs_dispatch gvt_rs_complete; do
	events $e | head -2 | sed 's/^ */# /'
done
ktap_print_msg "$(events gvt_rs_switch | wc -l) switches, $(events gvt_rs_complete | wc -l) completions, $(events gvt_rs_gtt_load | wc -l) GTT loads"
check "switches go between the two vGPUs" \
	sh -c "grep -q 'gvt_rs_switch: gpu=gvtsim0 prev=$ida next=$idb ' $TRACEFS/trace &&
	       grep -q 'gvt_rs_switch: gpu=gvtsim0 prev=$idb next=$ida ' $TRACEFS/trace"
check "every completion of vGPU $ida is traced" \
	test "$(events gvt_rs_complete | grep -c "gpu=gvtsim0 vgpu=$ida ")" -eq "$completed_a"
check "completions carry the GPU time of 1 ms workloads" \
	sh -c "grep ' gvt_rs_complete: ' $TRACEFS/trace | grep -q 'vgpu=$ida engine=[01] ns=1000000$'"
check "every dispatch of vGPU $idb is traced, with its queueing time" \
	sh -c "[ \$(grep -c 'gvt_rs_dispatch: gpu=gvtsim0 vgpu=$idb engine=0 ns=[0-9]' $TRACEFS/trace) -eq $dispatched_b ]"
# A V5_1 has 32 slots (2 GB of high GM); gscale makes both share them, so
# each switch-in copies all 32 plus the shared 64 MB low region.
check "a switch-in loads 32 slots and the low region: 540672 GTT entries" \
	sh -c "grep -q 'gvt_rs_gtt_load: gpu=gvtsim0 vgpu=$idb slots=32 entries=540672$' $TRACEFS/trace"

# Disabled: nothing more is recorded.
echo 0 >"$EV/enable"
echo >"$TRACEFS/trace"
echo 1 >"$TRACEFS/tracing_on"
guest "$a" /tmp/trace_a.out -p compute -q 3 -d 1000 -t 1
wait
wait_until "$GVT_WAIT_S" gpu_drained || echo "# still in flight after $GVT_WAIT_S s"
echo 0 >"$TRACEFS/tracing_on"
check "disabled events record nothing" \
	test "$(grep -c ' gvt_rs_' "$TRACEFS/trace")" -eq 0
vgpu_remove "$a"
vgpu_remove "$b"
check "vGPUs removed" test -z "$(ls /sys/bus/mdev/devices/ 2>/dev/null)"

ktap_finished
