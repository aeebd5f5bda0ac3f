#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tenant isolation measured from the victim's side: a steady vGPU (2 ms
# workloads, 16 queued) beside an equal-weight attacker, under every
# policy. What the victim got is the engine occupancy the kernel measured
# for its workloads (occupied_ns: from dispatch to the completion
# processed), over a window while both run, as a share of what both held.
# A share above 0 also says the victim kept completing: occupancy is
# counted per completed workload.
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
# Attacks 2 and 3 submit no work during the window, so no policy has
# anything of theirs to run: a victim's share of the two below 0.99 (the
# attacker's occupancy above 0) means the device turned register accesses
# into work, whatever the policy. Each makes ATTACKS accesses, the window
# being the time they take (a count, not a rate); the kernel's own figures
# say what they did.
# Attack 2, a doorbell storm on an empty ring: TAIL written with the value
# it has, in a tight loop, after a round of workloads completed (the ring
# holds valid descriptors behind HEAD, which a device that fetched again
# would run). Its vGPU must queue nothing.
# Attack 3, accesses the device ignores (the reliability audit's F4):
# unknown offsets read and written, writes to read-only registers, reads
# across two registers, a GTT index past the high GM. QEMU logged every
# one when they failed; now each succeeds and is counted in the vGPU's
# ignored_accesses, which must count every one, and the host log may grow
# by at most 5 lines (dmesg, from a mark written before the attack).
# Engine time a policy holds for a started vGPU without work (tbs's turns;
# withheld_ns) is the policy's choice, the same beside a neighbour that
# submits nothing: printed, as the part of the window the victim's
# workloads held the engine, beside such a neighbour and under attack.
#
# The emulators run pinned to different vCPUs (taskset): on the test VM's
# two vCPUs, an attacker sharing the victim's vCPU would measure CPU
# starvation of the victim's process, not the GPU's scheduling.

. "$(dirname "$0")/gvt_rs_lib.sh"

POLICIES="sfq eevdf vmcg tbs"
ATTACKS=300000
LOG_LINES_MAX=5
ktap_print_header
ktap_set_plan 29
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

# delta BEFORE AFTER: AFTER - BEFORE, or "?" unless both are counts.
delta() {
	if is_count "$1" && is_count "$2"; then
		echo $(($2 - $1))
	else
		echo "?"
	fi
}

# at_least VALUE MIN: VALUE is a number and at least MIN.
at_least() {
	awk -v s="$1" -v m="$2" 'BEGIN { exit !(s + 0 == s && s >= m) }'
}

# pinned CPU UUID OUTFILE [gvt_guest options]: a guest emulator on vCPU
# CPU, in the background (PINNED_PID); waits (GVT_WAIT_S) until its
# device is open.
pinned() {
	cpu=$1 u=$2 out=$3
	shift 3
	rm -f "$out.ready"
	taskset -c "$cpu" "$GVT_GUEST" -r "$out.ready" "$@" "$u" >"$out" 2>&1 &
	PINNED_PID=$!
	wait_until "$GVT_WAIT_S" guest_opened "$out.ready" "$PINNED_PID"
	[ -e "$out.ready" ] || progress "the guest of vGPU $u did not open it"
	[ -e "$out.ready" ]
}

# completing UUID...: each vGPU has completed work.
completing() {
	for u in "$@"; do
		[ "$(completed "$u")" -gt 0 ] || return 1
	done
}

exited() {
	! running "$1"
}

# The guests start together (-w) and run until their vGPUs are removed
# after the window (the device request ends a run).
VICTIM="-p compute -q 16 -d 2000 -t 600"

# victim_alone: the victim on a vGPU of its own for 3 s; sets alone (its
# completions per second) and alone_held (the part of the time its
# workloads held the engine).
victim_alone() {
	u=$(vgpu_create GVTg_V5_4)
	# shellcheck disable=SC2086 # the options, one a word
	if pinned 0 "$u" /tmp/iso_alone.out $VICTIM; then
		wait_until "$GVT_WAIT_S" completing "$u"
	fi
	c0=$(completed "$u") o0=$(occupied "$u") t0=$(uptime_ms)
	sleep 3
	c1=$(completed "$u") o1=$(occupied "$u") t1=$(uptime_ms)
	vgpu_remove "$u"
	wait
	alone=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { if (t > 0) printf "%.1f", c * 1000 / t; else print "?" }')
	alone_held=$(held $((o1 - o0)) $((t1 - t0)))
}

# held NS MS: the part of a window of MS ms that NS ns of occupancy fill.
held() {
	awk -v o="$1" -v t="$2" '
		BEGIN { if (t > 0) printf "%.3f", o / (t * 1000000); else print "?" }'
}

# pair OUTFILE [attacker options]: the victim (vCPU 0, start file
# /tmp/iso.go) and an attacker (vCPU 1, OUTFILE; its options name its
# start file), each on a new vGPU, $v and $a; the attacker's pid is
# ATTACKER. ok=false if either did not open its device.
pair() {
	attacker_out=$1
	shift
	v=$(vgpu_create GVTg_V5_4)
	a=$(vgpu_create GVTg_V5_4)
	rm -f /tmp/iso.go /tmp/iso.attack
	ok=true
	# shellcheck disable=SC2086 # the options, one a word
	pinned 0 "$v" /tmp/iso_victim.out -w /tmp/iso.go $VICTIM || ok=false
	pinned 1 "$a" "$attacker_out" "$@" || ok=false
	ATTACKER=$PINNED_PID
}

# window_begin, window_end: the figures of both vGPUs at the start and at
# the end of the window; window_end sets share (the victim's share of the
# occupancy of the two, or "unmeasured"), vdone and adone (workloads
# completed), ms (the window's length) and vheld (the part of it the
# victim's workloads held the engine).
window_begin() {
	ov0=$(occupied "$v") oa0=$(occupied "$a") c0=$(completed "$v") n0=$(completed "$a")
	t0=$(uptime_ms)
}

window_end() {
	ov1=$(occupied "$v") oa1=$(occupied "$a") c1=$(completed "$v") n1=$(completed "$a")
	t1=$(uptime_ms)
	if $ok && is_count "$ov0" && is_count "$ov1" && is_count "$oa0" && is_count "$oa1"; then
		share=$(awk -v v=$((ov1 - ov0)) -v a=$((oa1 - oa0)) 'BEGIN { if (v + a > 0) printf "%.4f", v / (v + a); else print 0 }')
	else
		share=unmeasured
	fi
	vdone=$((c1 - c0)) adone=$((n1 - n0)) ms=$((t1 - t0))
	vheld=$(held $((ov1 - ov0)) "$ms")
}

pair_remove() {
	vgpu_remove "$v"
	vgpu_remove "$a"
	wait
}

# victim_keeps POLICY ATTACK MIN: the victim's share of the window's
# occupancy is at least MIN.
victim_keeps() {
	check "$1: $2 leaves the victim its share of the engine ($share >= $3, $vdone completed)" \
		at_least "$share" "$3"
}

# log_mark TEXT: writes TEXT to the kernel log.
log_mark() {
	echo "$1" >/dev/kmsg
}

# log_lines_since TEXT: the lines the kernel logged after the mark TEXT,
# or "lost" when the mark left the log buffer (1 MB logged since). Not
# counted: the records of delayed kobject releases of the KASAN kernel
# (CONFIG_DEBUG_KOBJECT_RELEASE logs each one, 1-4 s after the last
# reference went): those of the devices of the pair removed before, which
# fall into the window when it starts within seconds of that removal.
log_lines_since() {
	dmesg | awk -v m="$1" '
		found && !/kobject_release, parent .* \(delayed/ { n++ }
		index($0, m) { found = 1; n = 0 }
		END { if (found) print n + 0; else print "lost" }'
}

# no_work_attack POLICY NAME [attacker options]: the attacker starts with
# the window, makes its accesses (-n) and exits, which ends the window;
# sets the window's figures and, for the attacker's vGPU over it, queued
# (workloads queued), ignored (accesses its device ignored), made (the
# accesses it reports) and log (lines the host logged, or "lost"); "?"
# for a figure that could not be read.
no_work_attack() {
	pol=$1 name=$2
	shift 2
	pair "/tmp/iso_$name.out" -w /tmp/iso.attack "$@"
	guests_go /tmp/iso.go
	if $ok; then wait_until "$GVT_WAIT_S" completing "$v" || ok=false; fi
	sleep 1
	mark="gvt_rs_isolation: $pol: $name attack on vGPU $a starts"
	log_mark "$mark"
	q0=$(cat "$(vgpu_attr "$a" submitted)") i0=$(cat "$(vgpu_attr "$a" ignored_accesses)")
	window_begin
	guests_go /tmp/iso.attack
	if $ok && ! wait_until "$GVT_WAIT_S" exited "$ATTACKER"; then
		progress "the $name attacker did not finish within $GVT_WAIT_S s"
		ok=false
	fi
	window_end
	q1=$(cat "$(vgpu_attr "$a" submitted)") i1=$(cat "$(vgpu_attr "$a" ignored_accesses)")
	log=$(log_lines_since "$mark")
	pair_remove
	sed 's/^/# /' "/tmp/iso_$name.out"
	made=$(report_field "/tmp/iso_$name.out" attack_accesses)
	is_count "$made" || made="?"
	queued=$(delta "$q0" "$q1") ignored=$(delta "$i0" "$i1")
	echo "# figure: policy=$pol attack=$name victim occupancy share $share; victim held the engine $vheld of the $ms ms window (alone: $alone_held, beside an idle neighbour: $idle_held); victim completions $vdone; attacker accesses $made, queued $queued, ignored $ignored; host log +$log lines"
}

# After no_work_attack: the host log grew by at most LOG_LINES_MAX lines.
log_bounded() {
	is_count "$log" && [ "$log" -le "$LOG_LINES_MAX" ]
}

# After the doorbell storm: it made its doorbells, queued nothing and
# logged nothing.
storm_queued_nothing() {
	at_least "$made" "$ATTACKS" && [ "$queued" = 0 ] && log_bounded
}

# After the ignored accesses: each was counted, none logged.
each_counted() {
	at_least "$made" "$ATTACKS" && [ "$ignored" = "$made" ] && log_bounded
}

for p in $POLICIES; do
	set_attr "$GVT_GPU/policy" "$p"
	victim_alone

	# Attack 1: the victim beside the flood.
	pair /tmp/iso_flood.out -w /tmp/iso.go -p compute -q 63 -d 1 -t 600
	guests_go /tmp/iso.go
	if $ok; then wait_until "$GVT_WAIT_S" completing "$v" "$a" || ok=false; fi
	# Warm-up: both queues full, the policy past its first decisions.
	sleep 1
	window_begin
	sleep 4
	window_end
	bv=$(cat "$(vgpu_attr "$v" busy_ns)") ba=$(cat "$(vgpu_attr "$a" busy_ns)")
	# The host CPU its completions' delivery took, the flood's own.
	druns=$(cat "$(vgpu_attr "$a" delivery_runs)")
	dns=$(cat "$(vgpu_attr "$a" delivery_cpu_ns)")
	acompleted=$(cat "$(vgpu_attr "$a" completed)")
	if [ "$p" = vmcg ]; then
		echo "# figure: policy=vmcg slice_ns victim $(cat "$(vgpu_attr "$v" slice_ns)"), flood $(cat "$(vgpu_attr "$a" slice_ns)"); cpu_ns victim $(cat "$(vgpu_attr "$v" cpu_ns)"), flood $(cat "$(vgpu_attr "$a" cpu_ns)")"
	fi
	pair_remove
	under=$(awk -v c="$vdone" -v t="$ms" 'BEGIN { if (t > 0) printf "%.1f", c * 1000 / t; else print "?" }')
	echo "# figure: policy=$p attack=flood(1us,q63) victim occupancy share $share; victim completions/s alone $alone, under the flood $under; flood completions $adone in $ms ms; busy_ns victim $((bv / 1000000)) ms, flood $((ba / 1000000)) ms"
	case $p in
	tbs) min=0.35 ;;
	*) min=0.45 ;;
	esac
	if [ "$p" = vmcg ]; then
		check "vmcg: the victim keeps completing beside a 1 us flood ($vdone workloads, share $share)" \
			test "$vdone" -gt 0
	else
		victim_keeps "$p" "a 1 us flood" "$min"
	fi
	# The attacker pays for its completions: its occupancy per workload
	# is more than the 1 us it asked for.
	per=$(awk -v o=$((oa1 - oa0)) -v n="$adone" 'BEGIN { printf "%d", (n > 0 ? o / n : 0) }')
	echo "# figure: policy=$p the flood is charged $per ns per 1 us workload"
	check "$p: the flood is charged more than its workloads' 1 us each ($per ns)" test "$per" -gt 1000
	# Its completions' delivery is counted against it: at least one run,
	# no more runs than completions (a run delivers all pending), time.
	echo "# figure: policy=$p the flood's delivery: $druns runs for" \
		"$acompleted completions, $dns ns of host CPU"
	desc="$p: the flood's delivery CPU is counted against it"
	check "$desc ($druns runs, $acompleted completions, $dns ns)" \
		awk -v r="$druns" -v c="$acompleted" -v n="$dns" \
		'BEGIN { exit !(r ~ /^[0-9]+$/ && c ~ /^[0-9]+$/ && n ~ /^[0-9]+$/ &&
			r > 0 && r <= c && n > 0) }'

	# The baseline of attacks 2 and 3: a neighbour that opened its vGPU
	# and submits nothing, for 2 s (a figure).
	idle_held="?"
	no_work_attack "$p" idle -p idle -t 2
	idle_held=$vheld

	# Attack 2: a doorbell storm on an empty ring.
	no_work_attack "$p" doorbell -p doorbell -n "$ATTACKS"
	victim_keeps "$p" "a doorbell storm on an empty ring" 0.99
	check "$p: $made doorbells on an empty ring: +$queued queued, +$log log lines" \
		storm_queued_nothing

	# Attack 3: accesses the device ignores.
	no_work_attack "$p" ignored -p ignored -n "$ATTACKS"
	victim_keeps "$p" "a loop of ignored register accesses" 0.99
	check "$p: $made ignored accesses: $ignored counted, +$log log lines" each_counted
done
set_attr "$GVT_GPU/policy" tbs
ktap_finished
