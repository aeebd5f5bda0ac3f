#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fairness of the policies, measured on the simulated GPU with guest
# emulators opening their vGPUs through VFIO:
#  1. weights 1:2:3 get GPU shares within 2 points of 1/6, 2/6, 3/6 (sfq);
#  2. a started-but-idle neighbour costs a busy vGPU < 2% (sfq), < 4% (vmcg), and
#     what tbs loses is reported (best of three interleaved samples each);
#  3. a neighbour submitting long batches does not starve one submitting
#     short batches (sfq: at least 40% of the GPU against a fair 50%; tbs
#     and vmcg: at least 10%, their figures are reported).
# Shares are GPU busy time (busy_ns) over a measurement window after a
# warm-up. Figures are printed as "# figure: ..." lines.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 8
check "gvt_rs ready" sim_ready

uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

busy() {
	cat "$(vgpu_attr "$1" busy_ns)"
}

# ---- 1. weights 1:2:3 under sfq -------------------------------------------
set_attr "$GVT_GPU/policy" sfq
u1=$(vgpu_create GVTg_V5_4)
u2=$(vgpu_create GVTg_V5_4)
u3=$(vgpu_create GVTg_V5_4)
set_attr "$(vgpu_attr "$u1" weight)" 1
set_attr "$(vgpu_attr "$u2" weight)" 2
set_attr "$(vgpu_attr "$u3" weight)" 3
for u in $u1 $u2 $u3; do
	guest "$u" "/tmp/fair_$u.out" -p compute -q 6 -d 2000 -t 14
done
sleep 3
a1=$(busy "$u1") a2=$(busy "$u2") a3=$(busy "$u3")
sleep 9
b1=$(busy "$u1") b2=$(busy "$u2") b3=$(busy "$u3")
wait
res=$(awk -v d1=$((b1 - a1)) -v d2=$((b2 - a2)) -v d3=$((b3 - a3)) 'BEGIN {
	t = d1 + d2 + d3; if (t == 0) t = 1
	s1 = d1 / t; s2 = d2 / t; s3 = d3 / t
	e = s1 - 1/6; if (e < 0) e = -e; m = e
	e = s2 - 2/6; if (e < 0) e = -e; if (e > m) m = e
	e = s3 - 3/6; if (e < 0) e = -e; if (e > m) m = e
	printf "%.4f %.4f %.4f %.4f %.1f\n", s1, s2, s3, m, t / 1e6 }')
set -- $res
echo "# figure: policy=sfq weights=1:2:3 shares=$1:$2:$3 (ideal 0.1667:0.3333:0.5000) max_error=$4 gpu_ms=$5"
echo "# figure: lambda_ppm=$(cat "$GVT_GPU/fairness_lambda_ppm") min_max_ppm=$(cat "$GVT_GPU/fairness_min_max_ppm") jain_ppm=$(cat "$GVT_GPU/fairness_jain_ppm")"
check "sfq: weights 1:2:3 get shares within 2% (max error $4)" awk -v m="$4" 'BEGIN { exit !(m < 0.02) }'
for u in $u1 $u2 $u3; do vgpu_remove "$u"; done

# ---- 2. an idle-but-started neighbour --------------------------------------
# util POLICY WITH_IDLE: busy fraction of a saturating vGPU over 5 s. Long
# (10 ms) workloads keep the guest's and the work item's latency under TCG
# small against the GPU time, so that the comparison is not noise.
util() {
	set_attr "$GVT_GPU/policy" "$1"
	a=$(vgpu_create GVTg_V5_4)
	if [ "$2" = 1 ]; then
		b=$(vgpu_create GVTg_V5_4)
		guest "$b" /tmp/idle_b.out -p idle -t 8
	fi
	guest "$a" /tmp/idle_a.out -p compute -q 4 -d 10000 -t 7
	sleep 1.5
	x0=$(busy "$a") t0=$(uptime_ms)
	sleep 5
	x1=$(busy "$a") t1=$(uptime_ms)
	wait
	vgpu_remove "$a"
	[ "$2" = 1 ] && vgpu_remove "$b"
	awk -v d=$((x1 - x0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.4f\n", d / (t * 1e6) }'
}

# max A B: the larger of two busy fractions.
max() {
	awk -v a="$1" -v b="$2" 'BEGIN { print (a > b) ? a : b }'
}

# Under TCG a guest or work-item stall now and then lowers one sample by a
# few percent, which is noise, not the policy. So each condition is
# measured three times, interleaved, and its best sample is compared: a
# policy that really loses throughput to an idle neighbour (tbs) loses it
# in every sample.
# Bounds: sfq 2%. vmcg 4%: its credits refill in rounds, which costs the
# busy vGPU about 0.5% next to an idle one, and under TCG its best-of-three
# samples still spread by +-1.5% (-1.1% to +2.3% over six clean runs).
# tbs loses about 49%, far beyond either.
for p in sfq vmcg tbs; do
	bound_pct=2
	[ $p = vmcg ] && bound_pct=4
	alone=0 with=0
	for k in 1 2 3; do
		alone=$(max "$alone" "$(util $p 0)")
		with=$(max "$with" "$(util $p 1)")
	done
	loss=$(awk -v a="$alone" -v w="$with" 'BEGIN { printf "%.4f\n", (a - w) / a }')
	echo "# figure: policy=$p idle-neighbour busy_alone=$alone busy_with_idle=$with loss=$loss"
	if [ $p = tbs ]; then
		check "tbs: idle-neighbour loss reported ($loss)" test -n "$loss"
	else
		check "$p: an idle neighbour costs < $bound_pct% (loss $loss)" \
			awk -v l="$loss" -v b="$bound_pct" 'BEGIN { exit !(l < b / 100) }'
	fi
done

# ---- 3. long-batch neighbour -----------------------------------------------
for p in sfq vmcg tbs; do
	set_attr "$GVT_GPU/policy" $p
	long=$(vgpu_create GVTg_V5_4)
	short=$(vgpu_create GVTg_V5_4)
	guest "$long" /tmp/long.out -p long -q 2 -d 20000 -t 7
	guest "$short" /tmp/short.out -p compute -q 4 -d 1000 -t 7
	sleep 2
	l0=$(busy "$long") s0=$(busy "$short")
	sleep 4
	l1=$(busy "$long") s1=$(busy "$short")
	wait
	share=$(awk -v l=$((l1 - l0)) -v s=$((s1 - s0)) 'BEGIN { t = l + s; if (t == 0) t = 1; printf "%.4f\n", s / t }')
	p99=$(cat "$(vgpu_attr "$short" latency_p99_ns)")
	echo "# figure: policy=$p long-batch(20ms) vs short(1ms) short_share=$share short_latency_p99_ns=$p99"
	vgpu_remove "$long"
	vgpu_remove "$short"
	case $p in
	sfq) min=0.40 ;;
	*) min=0.10 ;;
	esac
	check "$p: short-batch vGPU not starved by a long-batch neighbour (share $share >= $min)" \
		awk -v s="$share" -v m="$min" 'BEGIN { exit !(s >= m) }'
done
set_attr "$GVT_GPU/policy" tbs
ktap_finished
