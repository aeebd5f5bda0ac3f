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
# best as backlogged, so a fair policy leaves it at least half.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 9
check "gvt_rs ready" sim_ready

RUN_S=6

busy() {
	cat "$(vgpu_attr "$1" busy_ns)"
}

# reopen_loop UUID SECONDS: opens, uses and closes the vGPU until the time
# is up.
reopen_loop() {
	end=$(($(cut -d. -f1 /proc/uptime) + $2))
	n=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
		"$GVT_GUEST" -p compute -q 8 -t 0.3 "$1" >/dev/null 2>&1
		n=$((n + 1))
	done
	echo "$n" >/tmp/restart_reopens
}

for policy in tbs vmcg sfq eevdf; do
	for attack in reset reopen; do
		set_attr "$GVT_GPU/policy" "$policy"
		ua=$(vgpu_create GVTg_V5_4)
		ub=$(vgpu_create GVTg_V5_4)
		guest "$ua" /tmp/restart_a.out -p compute -q 16 -t $((RUN_S + 1))
		a0=$(busy "$ua") b0=$(busy "$ub")
		if [ $attack = reset ]; then
			"$GVT_GUEST" -p reset -q 8 -t $RUN_S "$ub" >/tmp/restart_b.out 2>&1
			how="resets=$(report_field /tmp/restart_b.out resets)"
		else
			reopen_loop "$ub" $RUN_S
			how="reopens=$(cat /tmp/restart_reopens)"
		fi
		a1=$(busy "$ua") b1=$(busy "$ub")
		wait
		share=$(awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) \
			'BEGIN { t = a + b; printf "%.4f\n", t ? a / t : 0 }')
		echo "# figure: policy=$policy attack=$attack steady_share=$share steady_ms=$(((a1 - a0) / 1000000)) restarting_ms=$(((b1 - b0) / 1000000)) $how"
		check "$policy: a vGPU that ${attack}s gains nothing (steady share $share >= 0.45)" \
			awk -v s="$share" 'BEGIN { exit !(s >= 0.45) }'
		vgpu_remove "$ua"
		vgpu_remove "$ub"
	done
done
set_attr "$GVT_GPU/policy" tbs
ktap_finished
