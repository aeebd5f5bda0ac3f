#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Under load: GTT slot sharing keeps every vGPU's entries its own while only
# non-resident slots are copied; 100 vGPU create/destroy cycles, then two
# shells creating and removing at once, every guest checking its GTT; policy and
# throttle switches; allocator switches refused. Beside the guests of each
# allocator's run and through the policy switches, a guest copies guest
# memory and checks every completed copy against its pattern, the latter
# with resets and faults of its own and its vGPU removed while it copies:
# no completed copy may be wrong, and every copy must complete or be failed.
# The VM runner fails the run on any kernel warning or lockdep report.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 15
check "gvt_rs ready" sim_ready

# ---- GTT slots: static vs gscale -------------------------------------------
copies() {
	gpu_stat gtt_entries_copied
}

# The guests run together, however long each took to open its vGPU, and
# each must have checked its GTT (gtt_checked) and found only its entries.
gtt_run() {
	ok=true
	list=
	for t in $1; do
		list="$list $(vgpu_create "$t")"
	done
	cu=$(vgpu_create GVTg_V5_8)
	c0=$(copies)
	rm -f /tmp/gtt.go
	for u in $list; do
		guest "$u" "/tmp/gtt_$u.out" -w /tmp/gtt.go -g -p compute -q 3 -d 1000 -t 4
	done
	guest "$cu" /tmp/gtt_copy.out -w /tmp/gtt.go -p copy -e -1 -q 6 -d 500 -t 4
	guests_go /tmp/gtt.go
	wait
	for u in $list; do
		grep -q 'gtt_checked=[1-9].* gtt_mismatch=0 ' "/tmp/gtt_$u.out" || { ok=false; sed 's/^/# /' "/tmp/gtt_$u.out"; }
	done
	copies_ok /tmp/gtt_copy.out || { ok=false; sed 's/^/# /' /tmp/gtt_copy.out; }
	vgpu_remove "$cu"
	echo "# $2: $(($(copies) - c0)) GTT entries copied," \
		"shared slots $(gpu_stat gm_shared_slots), switches $(gpu_stat events_switches)"
	for u in $list; do
		echo "#   vGPU $(cat "$(vgpu_attr "$u" vgpu_id)"): slots $(cat "$(vgpu_attr "$u" slot_start)")+$(cat "$(vgpu_attr "$u" slot_count)") switch_ins $(cat "$(vgpu_attr "$u" switch_ins)") slots_copied $(cat "$(vgpu_attr "$u" slots_copied)")"
		vgpu_remove "$u"
	done
	$ok
}

set_attr "$GVT_GPU/policy" sfq
check "static: three vGPUs see only their own GTT entries, copies beside them right" gtt_run "GVTg_V5_4 GVTg_V5_4 GVTg_V5_2" static
set_attr "$GVT_GPU/gm_allocator" gscale
check "gscale: three V5_1 sharing slots see only their own GTT entries, copies beside them right" gtt_run "GVTg_V5_1 GVTg_V5_1 GVTg_V5_1" gscale
set_attr "$GVT_GPU/gm_allocator" dymgpu-size
check "dymgpu-size: four vGPUs see only their own GTT entries, copies beside them right" gtt_run "GVTg_V5_1 GVTg_V5_2 GVTg_V5_2 GVTg_V5_4" dymgpu-size
# The re-placing allocators, re-placing every second with relocation on.
# The four guests run the same load, so the layout usually stays put (the
# count of relocations is logged); isolation must hold either way.
# The window must hold 1 to 64 samples after every single write.
set_attr "$GVT_GPU/gm_util_window_ms" 5000
set_attr "$GVT_GPU/gm_sample_period_ms" 100
set_attr "$GVT_GPU/gm_util_window_ms" 200
set_attr "$GVT_GPU/gm_sample_period_ms" 10
set_attr "$GVT_GPU/gm_replace_period_ms" 1000
set_attr "$GVT_GPU/gm_relocation" 1
reloc0=$(gpu_stat events_relocations)
set_attr "$GVT_GPU/gm_allocator" dymgpu-util
check "dymgpu-util: four vGPUs see only their own GTT entries, copies beside them right" gtt_run "GVTg_V5_1 GVTg_V5_2 GVTg_V5_2 GVTg_V5_4" dymgpu-util
set_attr "$GVT_GPU/gm_allocator" cost
check "cost: four vGPUs see only their own GTT entries, copies beside them right" gtt_run "GVTg_V5_1 GVTg_V5_2 GVTg_V5_2 GVTg_V5_4" cost
echo "# relocations during the two runs: $(($(gpu_stat events_relocations) - reloc0))"
set_attr "$GVT_GPU/gm_sample_period_ms" 100
set_attr "$GVT_GPU/gm_util_window_ms" 5000
set_attr "$GVT_GPU/gm_sample_period_ms" 1000
set_attr "$GVT_GPU/gm_util_window_ms" 20000
set_attr "$GVT_GPU/gm_replace_period_ms" 20000
set_attr "$GVT_GPU/gm_allocator" static
# ---- 100 create/destroy cycles under load ------------------------------------
bg=$(vgpu_create GVTg_V5_4)
guest "$bg" /tmp/bg.out -p compute -q 4 -d 2000 -t 600
bgpid=$GUEST_PID
ok=true
i=0
while [ $i -lt 100 ]; do
	u=$(vgpu_create GVTg_V5_8) || { ok=false; break; }
	if [ $((i % 4)) = 0 ]; then
		"$GVT_GUEST" -p frames -f 2 -d 500 -z 0 -t 0.05 "$u" >/tmp/cycle.out 2>&1 || { ok=false; cat /tmp/cycle.out; }
	fi
	vgpu_remove "$u" || ok=false
	i=$((i + 1))
done
check "100 create/destroy cycles under load ($i done)" $ok
check "no vGPU left but the loaded one" sh -c "[ \$(cat $GVT_GPU/vgpus) = 1 ]"

# ---- two shells creating and removing at once, under load --------------------
# A vGPU's id is reused as soon as it is freed: a create racing a remove
# must never end up with GTT entries the dying vGPU frees, or with another
# VM's entries (each cycle's guest checks its GTT while it runs, -g).
churn() {
	j=0
	while [ $j -lt 20 ]; do
		u=$(vgpu_create GVTg_V5_8) || { echo "create failed"; return 1; }
		"$GVT_GUEST" -g -p compute -q 2 -d 500 -t 0.2 "$u" >"/tmp/churn_$1.out" 2>&1
		grep -q 'gtt_checked=[1-9].* gtt_mismatch=0 ' "/tmp/churn_$1.out" || { cat "/tmp/churn_$1.out"; return 1; }
		vgpu_remove "$u" || { echo "remove failed"; return 1; }
		j=$((j + 1))
	done
}
churn a >/tmp/churn_a.log 2>&1 &
pa=$!
churn b >/tmp/churn_b.log 2>&1 &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
sed 's/^/# a: /' /tmp/churn_a.log
sed 's/^/# b: /' /tmp/churn_b.log
check "two shells: 2 x 20 concurrent create/check/remove cycles, every GTT intact" test $ra = 0 -a $rb = 0
check "no vGPU left but the loaded one after the concurrent cycles" sh -c "[ \$(cat $GVT_GPU/vgpus) = 1 ]"

# ---- policy and allocator switches under load --------------------------------
# The guests run until their vGPUs are removed, so that every switch comes
# while they run however slowly the loop goes; after each switch, both must
# complete more work (progress, not a rate).
u2=$(vgpu_create GVTg_V5_2)
u3=$(vgpu_create GVTg_V5_8)
u4=$(vgpu_create GVTg_V5_8)
guest "$u2" /tmp/sw2.out -p frames -f 3 -d 1000 -z 2000 -t 600
p2=$GUEST_PID
guest "$u3" /tmp/sw3.out -p long -q 2 -d 10000 -t 600
p3=$GUEST_PID
# Copies on both engines, a reset after every 40th round and a copy from
# unmapped memory every 97th, until its vGPU is removed.
guest "$u4" /tmp/sw4.out -p copy -e -1 -q 8 -d 1000 -x 40 -j 97 -t 600
p4=$GUEST_PID
done2=$(vgpu_attr "$u2" completed) done3=$(vgpu_attr "$u3" completed)
# progressed C2 C3: both vGPUs completed more than C2 and C3.
progressed() {
	[ "$(cat "$done2")" -gt "$1" ] && [ "$(cat "$done3")" -gt "$2" ]
}
ok=true
n=0
moved=0
# After a first stall, do not wait the full time at every later switch.
wait_s=$GVT_WAIT_S
for round in 1 2 3 4 5 6 7 8; do
	for p in tbs vmcg sfq eevdf; do
		echo $p >"$GVT_GPU/policy" || ok=false
		echo $((round % 2)) >"$GVT_GPU/throttle" || ok=false
		n=$((n + 1))
		sleep 0.2
		c2=$(cat "$done2") c3=$(cat "$done3")
		if wait_until "$wait_s" progressed "$c2" "$c3"; then
			moved=$((moved + 1))
		else
			echo "# $p, throttle $((round % 2)): no progress in $wait_s s"
			echo "# completed: $c2 -> $(cat "$done2"), $c3 -> $(cat "$done3")"
			wait_s=1
		fi
	done
done
check "$n policy/throttle switches under load" $ok
check "allocator switch under load refused (EBUSY)" write_fails "busy" "$GVT_GPU/gm_allocator" cost
# The device requests end the runs of the two guests; the background
# guest is killed, and VFIO closes its device.
vgpu_remove "$u2"
vgpu_remove "$u3"
vgpu_remove "$u4"
kill "$bgpid" 2>/dev/null
wait "$p2" "$p3" "$p4" "$bgpid"
ok=true
for f in /tmp/sw2.out /tmp/sw3.out; do
	sed 's/^/# /' $f
	grep -q 'completed=[1-9]' $f || ok=false
done
check "guests kept completing after each of the $n switches ($moved)" \
	sh -c "$ok && [ $moved = $n ]"
sed 's/^/# /' /tmp/sw4.out
check "copies through $n switches, resets, faults and the removal: none wrong, none lost" \
	copies_ok /tmp/sw4.out 1

vgpu_remove "$bg"
check "everything removed" eval "[ \$(cat $GVT_GPU/vgpus) = 0 ] && gpu_drained"
set_attr "$GVT_GPU/policy" tbs
set_attr "$GVT_GPU/throttle" 0
ktap_finished
