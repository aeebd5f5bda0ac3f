#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A guest cannot buy GPU time by restarting its vGPU. Under every policy a
# steady vGPU shares the GPU with an equal-weight neighbour that either
# resets its device after every round of submissions (VFIO_DEVICE_RESET)
# or closes and reopens it over and over, as a VMM restarting would. A
# restart must not bring a fresh start boost or forgive time-slice debt
# (upstream tbs did both: the steady vGPU fell to ~2% of the GPU). The
# assertion is on GPU time the engine charged (busy_ns), not on wall-clock
# rates: the steady vGPU always has work queued and the neighbour is at
# best as backlogged, so a fair policy leaves it at least half. The window
# is the attack of the neighbour, from its first open to its last close
# however long those take, and the steady guest runs until its vGPU is
# removed after it, so that neither has the GPU alone in the window.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 9
check "gvt_rs ready" sim_ready

RUN_S=6

# reopen_loop UUID SECONDS READY: opens, uses and closes the vGPU until the
# time is up; READY appears at the first open.
reopen_loop() {
	end=$(($(uptime_s) + $2))
	n=0
	while [ "$(uptime_s)" -lt "$end" ]; do
		"$GVT_GUEST" -r "$3" -p compute -q 8 -t 0.3 "$1" >/dev/null 2>&1
		n=$((n + 1))
	done
	echo "$n" >/tmp/restart_reopens
}

for policy in tbs vmcg sfq eevdf; do
	for attack in reset reopen; do
		set_attr "$GVT_GPU/policy" "$policy"
		ua=$(vgpu_create GVTg_V5_4)
		ub=$(vgpu_create GVTg_V5_4)
		# Read with the read builtin: no process to start between the
		# end of the attack and the samples.
		ba=$(vgpu_attr "$ua" busy_ns) bb=$(vgpu_attr "$ub" busy_ns)
		ca=$(vgpu_attr "$ua" contended_ns) cb=$(vgpu_attr "$ub" contended_ns)
		guest "$ua" /tmp/restart_a.out -p compute -q 16 -t 600
		pa=$GUEST_PID
		if [ $attack = reset ]; then
			guest "$ub" /tmp/restart_b.out -p reset -q 8 -t $RUN_S
			pb=$GUEST_PID
		else
			rm -f /tmp/restart_b.ready
			reopen_loop "$ub" $RUN_S /tmp/restart_b.ready &
			pb=$!
			wait_until "$GVT_WAIT_S" guest_opened /tmp/restart_b.ready "$pb"
		fi
		read -r a0 <"$ba"
		read -r b0 <"$bb"
		read -r ac0 <"$ca"
		read -r bc0 <"$cb"
		wait "$pb"
		read -r a1 <"$ba"
		read -r b1 <"$bb"
		read -r ac1 <"$ca"
		read -r bc1 <"$cb"
		if [ $attack = reset ]; then
			how="resets=$(report_field /tmp/restart_b.out resets)"
		else
			how="reopens=$(cat /tmp/restart_reopens)"
		fi
		# The device request ends the run of the steady guest.
		vgpu_remove "$ua"
		wait "$pa"
		share=$(awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) \
			'BEGIN { t = a + b; printf "%.4f\n", t ? a / t : 0 }')
		cshare=$(awk -v a=$((ac1 - ac0)) -v b=$((bc1 - bc0)) \
			'BEGIN { t = a + b; printf "%.4f\n", t ? a / t : 0 }')
		echo "# figure: policy=$policy attack=$attack steady_share=$share steady_ms=$(((a1 - a0) / 1000000)) restarting_ms=$(((b1 - b0) / 1000000)) $how"
		echo "# figure: steady share of the GPU time while both had work: $cshare"
		check "$policy: a vGPU that ${attack}s gains nothing (steady share $share >= 0.45)" \
			awk -v s="$share" 'BEGIN { exit !(s >= 0.45) }'
		vgpu_remove "$ub"
	done
done
set_attr "$GVT_GPU/policy" tbs
ktap_finished
