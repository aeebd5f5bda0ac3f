#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tenant isolation measured from the victim's side: a steady vGPU (2 ms
# workloads, 16 queued) beside an equal-weight attacker, under every
# policy. What the victim got is the engine occupancy the kernel measured
# for its workloads (occupied_ns: from dispatch to the completion
# processed), over a window after both are running, as a share of what
# both held.
#
# Attack 1, the 1 us flood (the reliability audit's F1): 63 workloads of
# 1 us per doorbell, each completion costing the host an interrupt, a
# work item and a status-page write during which the engine takes nothing
# else. Charged only the workloads' 1 us, the attacker took all but a few
# percent of the victim's share while every charged figure read 50/50.
# sfq and eevdf must leave the victim at least 0.45 of the engine; tbs,
# upstream GVT-g's, splits 2 ms and 1 us workloads about 40:60 with no
# overhead at all (the host test
# a_flood_of_tiny_workloads_pays_for_its_completions), so at least 0.35.
# vmcg is VMCG's design: slices scaled from each VM's CPU time and credits
# from its pending requests, so a tenant that burns CPU servicing a flood
# of completions and keeps 63 requests pending is given more of the GPU
# (0.19 to 0.52 for the victim over five runs): a demand-proportional policy,
# not one for mutually distrusting tenants (Documentation/gvt-rs/
# scheduling.rst). For vmcg the test checks that the victim keeps
# completing and prints its share, slice and credits. The victim's
# completions per second, alone and under the flood, are printed as
# figures (wall-clock rates under TCG: not judged).
#
# The emulators run pinned to different vCPUs (taskset): on the test VM's
# two vCPUs, an attacker sharing the victim's vCPU would measure CPU
# starvation of the victim's process, not the GPU's scheduling.

. "$(dirname "$0")/gvt_rs_lib.sh"

POLICIES="sfq eevdf vmcg tbs"
ktap_print_header
ktap_set_plan 9
check "gvt_rs ready" sim_ready

uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

occupied() {
	cat "$(vgpu_attr "$1" occupied_ns)"
}

completed() {
	cat "$(vgpu_attr "$1" completed)"
}

# is_count VALUE: VALUE is a non-negative decimal number.
is_count() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
}

# pinned CPU UUID OUTFILE [gvt_guest options]: a guest emulator on vCPU
# CPU, in the background; waits (GVT_WAIT_S) until its device is open.
pinned() {
	cpu=$1 u=$2 out=$3
	shift 3
	rm -f "$out.ready"
	taskset -c "$cpu" "$GVT_GUEST" -r "$out.ready" "$@" "$u" >"$out" 2>&1 &
	wait_until "$GVT_WAIT_S" guest_opened "$out.ready" $!
	[ -e "$out.ready" ] || progress "the guest of vGPU $u did not open it"
	[ -e "$out.ready" ]
}

# completing UUID...: each vGPU has completed work.
completing() {
	for u in "$@"; do
		[ "$(completed "$u")" -gt 0 ] || return 1
	done
}

# The guests start together (-w) and run until their vGPUs are removed
# after the window (the device request ends a run).
VICTIM="-p compute -q 16 -d 2000 -t 600"
for p in $POLICIES; do
	set_attr "$GVT_GPU/policy" "$p"
	v=$(vgpu_create GVTg_V5_4)
	a=$(vgpu_create GVTg_V5_4)
	# The victim alone, for its figure, on a vGPU of its own.
	ok=true
	alone_v=$(vgpu_create GVTg_V5_4)
	# shellcheck disable=SC2086 # the options, one a word
	pinned 0 "$alone_v" /tmp/iso_alone.out $VICTIM || ok=false
	if $ok; then wait_until "$GVT_WAIT_S" completing "$alone_v" || ok=false; fi
	c0=$(completed "$alone_v") t0=$(uptime_ms)
	sleep 3
	c1=$(completed "$alone_v") t1=$(uptime_ms)
	vgpu_remove "$alone_v"
	wait
	alone=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { if (t > 0) printf "%.1f", c * 1000 / t; else print "?" }')

	# The victim beside the flood.
	rm -f /tmp/iso.go
	# shellcheck disable=SC2086 # the options, one a word
	pinned 0 "$v" /tmp/iso_victim.out -w /tmp/iso.go $VICTIM || ok=false
	pinned 1 "$a" /tmp/iso_flood.out -w /tmp/iso.go -p compute -q 63 -d 1 -t 600 || ok=false
	guests_go /tmp/iso.go
	if $ok; then wait_until "$GVT_WAIT_S" completing "$v" "$a" || ok=false; fi
	# Warm-up: both queues full, the policy past its first decisions.
	sleep 1
	ov0=$(occupied "$v") oa0=$(occupied "$a") c0=$(completed "$v") n0=$(completed "$a") t0=$(uptime_ms)
	sleep 4
	ov1=$(occupied "$v") oa1=$(occupied "$a") c1=$(completed "$v") n1=$(completed "$a") t1=$(uptime_ms)
	bv=$(cat "$(vgpu_attr "$v" busy_ns)") ba=$(cat "$(vgpu_attr "$a" busy_ns)")
	if [ "$p" = vmcg ]; then
		echo "# figure: policy=vmcg slice_ns victim $(cat "$(vgpu_attr "$v" slice_ns)"), flood $(cat "$(vgpu_attr "$a" slice_ns)"); cpu_ns victim $(cat "$(vgpu_attr "$v" cpu_ns)"), flood $(cat "$(vgpu_attr "$a" cpu_ns)")"
	fi
	vgpu_remove "$v"
	vgpu_remove "$a"
	wait
	if $ok && is_count "$ov0" && is_count "$ov1" && is_count "$oa0" && is_count "$oa1"; then
		share=$(awk -v v=$((ov1 - ov0)) -v a=$((oa1 - oa0)) 'BEGIN { if (v + a > 0) printf "%.4f", v / (v + a); else print 0 }')
	else
		share=unmeasured
	fi
	under=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { if (t > 0) printf "%.1f", c * 1000 / t; else print "?" }')
	echo "# figure: policy=$p attack=flood(1us,q63) victim occupancy share $share; victim completions/s alone $alone, under the flood $under; flood completions $((n1 - n0)) in $((t1 - t0)) ms; busy_ns victim $((bv / 1000000)) ms, flood $((ba / 1000000)) ms"
	case $p in
	tbs) min=0.35 ;;
	*) min=0.45 ;;
	esac
	if [ "$p" = vmcg ]; then
		check "vmcg: the victim keeps completing beside a 1 us flood ($((c1 - c0)) workloads, share $share)" \
			test "$((c1 - c0))" -gt 0
	else
		check "$p: a 1 us flood leaves the victim its share of the engine ($share >= $min)" \
			awk -v s="$share" -v m="$min" 'BEGIN { exit !(s + 0 == s && s >= m) }'
	fi
	# The attacker pays for its completions: its occupancy per workload
	# is more than the 1 us it asked for.
	per=$(awk -v o=$((oa1 - oa0)) -v n=$((n1 - n0)) 'BEGIN { if (n > 0) printf "%d", o / n; else print 0 }')
	echo "# figure: policy=$p the flood is charged $per ns per 1 us workload"
	check "$p: the flood is charged more than its workloads' 1 us each ($per ns)" test "$per" -gt 1000
done
set_attr "$GVT_GPU/policy" tbs
ktap_finished
