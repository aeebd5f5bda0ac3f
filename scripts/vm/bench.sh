#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: (1) the cost of the submission path for a guest through
# QEMU against the guest emulator (gvt_guest); (2) an interactive vGPU's
# frame rate beside saturating neighbours, per policy; (3) the GTT copy
# time of vGPU switches per slot allocator; (4) a victim's throughput
# beside each tenant attack, per policy; (5) the DRM scheduler's own
# scenarios (tests_scheduler.c), per policy; (6) the longest hold of each
# engine lock with the GPU full of saturating vGPUs; (7) the device's part
# of a live migration (gvt_migrate). Each runs the same load alone on
# its own vGPU: 1 ms workloads, 8 queued, for 20 s, so that what limits the
# rate is the path (MMIO exits, interrupts, guest wake-ups), not the GPU.
# For each it prints workloads per second and BAR accesses per workload.
# QEMU's BAR accesses are counted by QEMU's own trace events
# (vfio_region_read/vfio_region_write: each one a VM exit to QEMU and a
# VFIO region access), from the guest's probe to its power-off, so they
# include a few dozen accesses of the probe and the reset at the end;
# gvt_guest counts its own during the run.
#
# These are wall-clock rates in a TCG VM, the QEMU guest nested one level
# deeper: compare the two with each other on one machine, not across
# machines.

# The parts to run (GVT_RS_BENCH on the host: gvt_rs_vm.bench=path,frames,
# switch,attacks,drm,locks,migration on the kernel command line); all by
# default.
parts=path,frames,switch,attacks,drm,locks,migration
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case "$arg" in
	gvt_rs_vm.bench=*) parts=${arg#gvt_rs_vm.bench=} ;;
	esac
done
# part NAME: true if NAME is to run.
part() {
	case ",$parts," in *",$1,"*) return 0 ;; esac
	return 1
}
for p in $(echo "$parts" | tr , ' '); do
	case $p in
	path | frames | switch | attacks | drm | locks | migration) ;;
	*)
		echo "unknown bench part '$p' (path, frames, switch, attacks, drm, locks, migration)"
		exit 1
		;;
	esac
done

GPU=/sys/class/gvt_rs/gvtsim0
# Its statistics (debugfs, root's; the VM's init mounts debugfs).
STATS=/sys/kernel/debug/gvt_rs/gvtsim0/stats

# gpu_stat NAME: a figure of the GPU's statistics.
gpu_stat() {
	awk -v k="$1" '$1 == k { print $2 }' "$STATS"
}
TYPES=/sys/class/mdev_bus/gvtsim0/mdev_supported_types
GUEST=/tests/kselftest/drivers/gvt_rs/gvt_guest
RUN_S=20

modprobe gvt_rs_sim || exit 1
[ -x /l2/qemu ] || { echo "no L2 payload in this image"; exit 1; }
echo sfq >"$GPU/policy"

# vgpu N: creates vGPU number N (GVTg_V5_4) and prints its UUID.
vgpu() {
	u=$(printf '%08x-0000-4000-8000-%012x' "$1" "$1")
	echo "$u" >"$TYPES/gvtsim-GVTg_V5_4/create" && echo "$u"
}

per() {
	awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", a / n; else print "?" }'
}

# bench_path: the submission path's cost, gvt_guest and a QEMU guest.
bench_path() {
	echo "== gvt_guest (VFIO from user space in the test VM): -p compute -d 1000 -q 8 -t $RUN_S"
	g=$(vgpu 1) || exit 1
	"$GUEST" -p compute -d 1000 -q 8 -t "$RUN_S" "$g" | tee /tmp/bench_g.out
	echo 1 >"/sys/bus/mdev/devices/$g/remove"
	line=$(grep "^gvt_guest " /tmp/bench_g.out)
	g_rate=$(echo "$line" | sed -n 's/.* rate_per_s=\([0-9.]*\).*/\1/p')
	g_done=$(echo "$line" | sed -n 's/.* completed=\([0-9]*\).*/\1/p')
	g_acc=$(echo "$line" | sed -n 's/.* bar_accesses=\([0-9]*\).*/\1/p')

	echo "== a QEMU guest (gvt_rs_guest.ko, gvt_gpu_client): -p compute -d 1000 -q 8 -t $RUN_S"
	q=$(vgpu 2) || exit 1
	L2_QEMU_ARGS="-trace vfio_region_read -trace vfio_region_write -D /tmp/bench_q.trace" \
		/l2/qemu /tmp/bench_q.console "$q" "gvt_l2.run=-p,compute,-d,1000,-q,8,-t,$RUN_S" \
		</dev/null >/dev/null 2>/tmp/bench_q.err
	grep "^gvt_gpu_client:" /tmp/bench_q.console
	[ -s /tmp/bench_q.err ] && sed 's/^/qemu: /' /tmp/bench_q.err
	echo 1 >"/sys/bus/mdev/devices/$q/remove"
	line=$(grep "^gvt_gpu_client: profile=" /tmp/bench_q.console)
	q_rate=$(echo "$line" | sed -n 's/.* wl_per_s=\([0-9.]*\).*/\1/p')
	q_done=$(echo "$line" | sed -n 's/.* completed=\([0-9]*\).*/\1/p')
	q_acc=$(grep -c "vfio_region_\(read\|write\)" /tmp/bench_q.trace)

	echo "== result (1 ms workloads, 8 queued, ${RUN_S} s, each alone on an sfq GPU)"
	printf '  %-34s %12s %14s %18s\n' client workloads workloads/s "BAR accesses/wl"
	printf '  %-34s %12s %14s %18s\n' "gvt_guest (VFIO, test VM)" "${g_done:-?}" "${g_rate:-?}" "$(per "${g_acc:-0}" "${g_done:-0}")"
	printf '  %-34s %12s %14s %18s\n' "QEMU guest (nested, whole life)" "${q_done:-?}" "${q_rate:-?}" "$(per "$q_acc" "${q_done:-0}")"
}


# ---- an interactive vGPU beside saturating ones ------------------------------
# gvt_guest renders frames of one 1 ms workload and 15 ms of think time,
# alone and beside 7 neighbours that keep four 2 ms workloads queued, 10 s
# each, per policy (and sfq without wake-up preemption). The neighbours'
# GPU shares come from the host's accounting (busy_ns).
n_vgpu=100
# new_vgpu TYPE: creates a vGPU of TYPE and leaves its UUID in $new (not
# printed: a command substitution's subshell would lose the count).
new_vgpu() {
	n_vgpu=$((n_vgpu + 1))
	new=$(printf '%08x-0000-4000-8000-%012x' "$n_vgpu" "$n_vgpu")
	echo "$new" >"$TYPES/gvtsim-$1/create"
}
# frames NEIGHBOURS: the frame guest's frames per second beside NEIGHBOURS
# saturating guests; the neighbours' min/max GPU time in /tmp/bench_mm, the
# frame vGPU's submit-to-dispatch p50/p99/max (us, from sysfs) in
# /tmp/bench_lat.
frames() {
	list=
	for _ in $(seq 1 "$1"); do
		new_vgpu GVTg_V5_8 || return 1
		list="$list $new"
		"$GUEST" -p compute -q 4 -d 2000 -t 13 "$new" >/dev/null 2>&1 &
	done
	new_vgpu GVTg_V5_8 || return 1
	l=$new
	sleep 1
	b0=
	for b in $list; do b0="$b0 $(cat "/sys/bus/mdev/devices/$b/gvt_rs/busy_ns")"; done
	"$GUEST" -p frames -f 1 -d 1000 -z 15000 -t 10 "$l" >/tmp/bench_f.out 2>&1
	d=/sys/bus/mdev/devices/$l/gvt_rs
	echo "$(cat "$d/latency_p50_ns") $(cat "$d/latency_p99_ns") $(cat "$d/latency_max_ns")" |
		awk '{ printf "%d/%d/%d\n", $1 / 1000, $2 / 1000, $3 / 1000 }' >/tmp/bench_lat
	echo "$(cat "$d/anticipate_hits")/$(cat "$d/anticipate_misses")" >/tmp/bench_ant
	b1=
	for b in $list; do b1="$b1 $(cat "/sys/bus/mdev/devices/$b/gvt_rs/busy_ns")"; done
	wait
	echo "$b0 / $b1" | awk '{ n = (NF - 1) / 2; min = -1; max = 0
		for (i = 1; i <= n; i++) { d = $(n + 1 + i) - $i; if (min < 0 || d < min) min = d; if (d > max) max = d }
		if (n > 0 && max > 0) printf "%.3f\n", min / max; else print "-" }' >/tmp/bench_mm
	for u in $list $l; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	sed -n 's/.* fps=\([0-9.]*\).*/\1/p' /tmp/bench_f.out
}

# bench_frames: the interactive vGPU per policy.
bench_frames() {
	echo
	echo "== interactive: a frame vGPU (1 ms per frame, 15 ms think) alone and beside 7 saturating ones (four 2 ms queued), 10 s each"
	printf '  %-22s %10s %14s %11s %20s %24s %16s\n' policy "fps alone" "fps beside 7" "% of alone" "neighbours min/max" "wait p50/p99/max us" "holds hit/miss"
	for v in tbs vmcg sfq sfq-nopreempt eevdf eevdf+anticipate; do
		echo "${v%%[-+]*}" >"$GPU/policy"
		case $v in *-nopreempt) echo 0 ;; *) echo 1 ;; esac >"$GPU/sfq_wake_preempt"
		# Anticipation holds of up to one neighbour workload (2 ms).
		case $v in *+anticipate) echo 2000 ;; *) echo 0 ;; esac >"$GPU/anticipate_us"
		alone=$(frames 0)
		beside=$(frames 7)
		printf '  %-22s %10s %14s %11s %20s %24s %16s\n' "$v" "$alone" "$beside" \
			"$(awk -v a="$alone" -v b="$beside" 'BEGIN { if (a > 0) printf "%.1f", b / a * 100; else print "?" }')" \
			"$(cat /tmp/bench_mm)" "$(cat /tmp/bench_lat)" "$(cat /tmp/bench_ant)"
	done
	echo 1 >"$GPU/sfq_wake_preempt"
	echo 0 >"$GPU/anticipate_us"
}


# ---- switch time per slot allocator ------------------------------------------
# DymGPU's switch-time results (its Figs. 11-12): four vGPUs of the paper's
# set mix (one V5_1, two V5_2, one V5_4: more than the slots hold) run the
# same load under sfq for 15 s per allocator. gvt_rs_switch is emitted just
# before a switch-in copies the vGPU's non-resident slots and gvt_rs_gtt_load
# just after, on the same CPU under the policy lock (engine/mod.rs), so their
# timestamp difference is the slot decision plus the copy. A switch that
# copies nothing emits no gvt_rs_gtt_load.
# bench_switch: the switch time per slot allocator.
bench_switch() {
	T=/sys/kernel/tracing
	SW_S=15
	[ -d "$T/events" ] || mount -t tracefs nodev "$T" || exit 1
	[ -d "$T/events/gvt_rs" ] || { echo "no gvt_rs tracepoints (CONFIG_TRACING)"; exit 1; }
	echo 1 >"$GPU/gm_relocation"
	echo mono >"$T/trace_clock"
	echo 16384 >"$T/buffer_size_kb"
	echo
	echo "== switch time per allocator: V5_1 + 2 x V5_2 + V5_4 under sfq, each -p compute -q 3 -d 1000, ${SW_S} s"
	printf '  %-12s %9s %7s %13s %15s %16s %17s\n' allocator switches loads "entries/load" "copy us/load" "copy us/switch" "copy % of time"
	: >/tmp/bench_sw_all
	for a in gscale dymgpu-size dymgpu-util cost; do
		echo "$a" >"$GPU/gm_allocator" || exit 1
		list=
		for t in GVTg_V5_1 GVTg_V5_2 GVTg_V5_2 GVTg_V5_4; do
			new_vgpu "$t" || exit 1
			list="$list $new"
		done
		s0=$(gpu_stat events_switches)
		echo >"$T/trace"
		echo 1 >"$T/events/gvt_rs/gvt_rs_switch/enable"
		echo 1 >"$T/events/gvt_rs/gvt_rs_gtt_load/enable"
		for u in $list; do
			"$GUEST" -p compute -q 3 -d 1000 -t "$SW_S" "$u" >/dev/null 2>&1 &
		done
		wait
		echo 0 >"$T/events/gvt_rs/enable"
		s1=$(gpu_stat events_switches)
		# Pairs (entries, ns) of every switch that copied, paired per CPU.
		awk '{ if (!match($0, /\[[0-9]+\]/)) next; cpu = substr($0, RSTART, RLENGTH)
		       if (!match($0, /[0-9]+\.[0-9]+: gvt_rs_/)) next; ts = substr($0, RSTART, RLENGTH) + 0
		       if ($0 ~ /gvt_rs_switch:/) { split($0, a, "next="); t[cpu] = ts; v[cpu] = a[2] + 0 }
		       else if ($0 ~ /gvt_rs_gtt_load:/) { split($0, a, "vgpu="); split($0, e, "entries=")
		           if (t[cpu] > 0 && v[cpu] == a[2] + 0) printf "%d %.0f\n", e[2], (ts - t[cpu]) * 1e9
		           t[cpu] = 0 } }' "$T/trace" >/tmp/bench_sw
		cat /tmp/bench_sw >>/tmp/bench_sw_all
		awk -v a="$a" -v sw=$((s1 - s0)) -v secs="$SW_S" '{ n++; x += $1; y += $2 }
		    END { printf "  %-12s %9d %7d %13.0f %15.0f %16.1f %17.2f\n", a, sw, n,
		          n ? x / n : 0, n ? y / n / 1000 : 0, sw ? y / sw / 1000 : 0, y / (secs * 1e9) * 100 }' /tmp/bench_sw
		for u in $list; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	done
	# Least squares over every copy: the cost of one entry and the fixed part.
	awk '{ n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
	     END { d = n * sxx - sx * sx; if (n < 2 || d == 0) { print "  fit: too few copies"; exit }
	           b = (n * sxy - sx * sy) / d; a = (sy - b * sx) / n
	           printf "  fit over %d copies: %.0f ps per entry + %.0f ns (TCG: the copy as emulated, not a native one)\n", n, b * 1000, a }' /tmp/bench_sw_all
	echo static >"$GPU/gm_allocator"
}

# Each attack of gvt_rs_isolation.sh and gvt_rs_stall.sh, on vCPU 1 (a
# reset loop too), beside a victim on vCPU 0: 2 ms workloads, 16 queued.
ATTACK_S=10
ATTACKS="flood:-p compute -q 63 -d 1
doorbell:-p doorbell
ignored:-p ignored
reset:-p reset -q 4 -d 1000
stall:-p stall -e 0 -d 1000"

# victim_rate UUID: the victim's workloads completed per second, as its
# guest counts them over its run.
victim_rate() {
	taskset -c 0 "$GUEST" -p compute -q 16 -d 2000 -t "$ATTACK_S" "$1" >/tmp/bench_v.out 2>&1
	sed -n 's/.* rate_per_s=\([^ ]*\).*/\1/p' /tmp/bench_v.out
}

# bench_attacks: the victim's own throughput alone and beside each attack,
# per policy, and its ratio to alone.
bench_attacks() {
	echo "== the victim's throughput beside each attack: gvt_guest -p compute -q 16 -d 2000 -t $ATTACK_S on vCPU 0, the attacker on vCPU 1"
	printf '  %-7s %9s' policy alone
	echo "$ATTACKS" | while IFS=: read -r name _; do printf ' %16s' "$name"; done
	echo
	n=100
	for p in sfq eevdf vmcg tbs; do
		echo "$p" >"$GPU/policy"
		n=$((n + 1))
		v=$(vgpu "$n")
		alone=$(victim_rate "$v")
		line=$(printf '  %-7s %9s' "$p" "$alone")
		while IFS=: read -r name opts; do
			n=$((n + 1))
			a=$(vgpu "$n")
			# shellcheck disable=SC2086 # the options, one a word
			taskset -c 1 "$GUEST" $opts -t 600 "$a" >/tmp/bench_a.out 2>&1 &
			sleep 2
			r=$(victim_rate "$v")
			echo 1 >"/sys/bus/mdev/devices/$a/remove"
			wait
			line="$line$(printf ' %8s (%5s)' "$r" "$(per "$r" "$alone")")"
		done <<EOF2
$ATTACKS
EOF2
		echo "$line"
		echo 1 >"/sys/bus/mdev/devices/$v/remove"
	done
	echo "  (workloads per second; in brackets the ratio to alone; wall-clock rates under TCG)"
	echo sfq >"$GPU/policy"
}

# ---- the DRM scheduler's own scenarios -------------------------------------
# The ping-pong, two-clients and many-clients cases of the pinned tree's
# drivers/gpu/drm/scheduler/tests/tests_scheduler.c, each client a gvt_guest
# on a vGPU of its own, per gvt-rs policy (gvt-sim drmfair has the same
# cases in the simulator, with the upstream fair scheduler's model beside
# them). A client "prio:jobs:us:sync|async|pp:sleep_us" becomes:
# synchronous, -p frames -f jobs -d us -z sleep_us (submit the jobs, wait
# for all, sleep); asynchronous, -p compute -q 8 -d us (eight queued at all
# times: upstream queues its whole second of work at once, or 3 jobs every
# 0.5 ms for the hog); pp, -p frames -f 1 -d us -z 0 -k with the other pp
# client's FIFOs: a token passed through two FIFOs makes each job wait for
# the other client's previous one (ping_pong's chain; its rate is printed
# as the time a job takes against its 1 ms). Priorities become weights as
# 128 >> vruntime_shift: high 32, normal 8, low 1. Figures over the middle
# DRM_S - 2 s of each run from the host's accounting: GPU share, workloads
# per second; the submit-to-dispatch waits (p50/p99/max, us) are the vGPU's
# whole run's. GVTg_V5_8 vGPUs (384 MB of high GM, 6 of the simulated
# GPU's 54 slots): 9 fit the default static allocator; a case with more
# runs under gscale, which shares slots (a switch-in then copies the
# vGPU's GTT entries), and the allocator is set back after it. A GPU has
# at most 16 vGPUs (MAX_VGPUS): many-31 cannot run, and many-16 runs its
# clients (2 x 1 ms jobs) at that count.
DRM_S=6
DRM_CASES="ping-pong normal:1:1000:pp:0 normal:1:1000:pp:0
normal-normal normal:1:8000:async:0 normal:1:8000:async:0
normal-low normal:1:8000:async:0 low:1:8000:async:0
high-normal high:1:8000:async:0 normal:1:8000:async:0
high-low high:1:8000:async:0 low:1:8000:async:0
50-50 normal:1:1500:sync:1500 normal:1:2500:sync:2500
50-50low normal:1:1500:sync:1500 low:1:2500:sync:2500
50high-50 high:1:1500:sync:1500 normal:1:2500:sync:2500
lowhog-interactive low:3:2500:async:500 normal:1:500:sync:10000
heavy-interactive normal:3:2500:sync:2500 normal:1:1000:sync:9000
veryheavy-interactive normal:4:50000:sync:1 normal:1:1000:sync:9000
many-2 2*normal:4:1000:sync:0
many-3 3*normal:4:1000:sync:0
many-7 7*normal:4:1000:sync:0
many-13 13*normal:4:1000:sync:0
many-16 16*normal:2:1000:sync:0
many-31 31*normal:2:1000:sync:0"

# drm_weight PRIO: the gvt-rs weight of a DRM priority.
drm_weight() {
	case $1 in kernel) echo 64 ;; high) echo 32 ;; normal) echo 8 ;; low) echo 1 ;; esac
}

# drm_case NAME CLIENT...: one case under the current policy, a line per
# client (a line for all in the many-clients cases).
drm_case() {
	name=$1
	shift
	clients=
	for c in "$@"; do
		case $c in
		*\**) for _ in $(seq 1 "${c%%\**}"); do clients="$clients ${c#*\*}"; done ;;
		*) clients="$clients $c" ;;
		esac
	done
	n=$(echo "$clients" | wc -w)
	# More than the static allocator fits: gscale, set back afterwards.
	alloc=$(sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$GPU/gm_allocator")
	fit=$(cat "$TYPES/gvtsim-GVTg_V5_8/available_instances")
	if [ "$fit" -lt "$n" ]; then
		echo gscale >"$GPU/gm_allocator" || return 1
		fit=$(cat "$TYPES/gvtsim-GVTg_V5_8/available_instances")
		if [ "$fit" -lt "$n" ]; then
			echo "$alloc" >"$GPU/gm_allocator"
			printf '  %-22s %-16s %s\n' "$name" "$v" "skipped: $n vGPUs, a GPU has at most $fit (MAX_VGPUS) under any allocator"
			return 0
		fi
	fi
	list=
	pp=0
	rm -f /tmp/bench_pp0 /tmp/bench_pp1
	for c in $clients; do
		IFS=: read -r prio jobs us mode sleep_us <<EOF3
$c
EOF3
		new_vgpu GVTg_V5_8 || return 1
		drm_weight "$prio" >"/sys/bus/mdev/devices/$new/gvt_rs/weight"
		list="$list $new"
		case $mode in
		sync) "$GUEST" -p frames -f "$jobs" -d "$us" -z "$sleep_us" -t "$DRM_S" "$new" >/dev/null 2>&1 & ;;
		async) "$GUEST" -p compute -q 8 -d "$us" -t "$DRM_S" "$new" >/dev/null 2>&1 & ;;
		pp)
			[ $pp = 1 ] || mkfifo /tmp/bench_pp0 /tmp/bench_pp1 || return 1
			"$GUEST" -p frames -f "$jobs" -d "$us" -z 0 -k "/tmp/bench_pp$pp,/tmp/bench_pp$((1 - pp))" \
				-t "$DRM_S" "$new" >/dev/null 2>&1 &
			pp=1
			;;
		esac
	done
	# The chain's first token, to the first client (the open waits for it).
	[ $pp = 0 ] || timeout 30 sh -c 'printf t >/tmp/bench_pp0' || return 1
	sleep 1
	s0=
	for u in $list; do
		d=/sys/bus/mdev/devices/$u/gvt_rs
		s0="$s0 $(cat "$d/busy_ns") $(cat "$d/completed")"
	done
	t0=$(cut -d' ' -f1 /proc/uptime)
	sleep $((DRM_S - 2))
	t1=$(cut -d' ' -f1 /proc/uptime)
	s1=
	lat=
	for u in $list; do
		d=/sys/bus/mdev/devices/$u/gvt_rs
		s1="$s1 $(cat "$d/busy_ns") $(cat "$d/completed")"
		lat="$lat $(cat "$d/latency_p50_ns") $(cat "$d/latency_p99_ns") $(cat "$d/latency_max_ns")"
	done
	wait
	for u in $list; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	rm -f /tmp/bench_pp0 /tmp/bench_pp1
	echo "$alloc" >"$GPU/gm_allocator"
	echo "$t0 $t1 | $clients | $s0 | $s1 | $lat" | awk -v name="$name" -v pol="$v" -v pp="$pp" -F'|' '
	{ split($1, t, " "); wall = t[2] - t[1]; n = split($2, c, " ")
	  split($3, a, " "); split($4, b, " "); split($5, l, " ")
	  if (n <= 2) {
	      jobs = 0
	      for (i = 1; i <= n; i++) {
		  split(c[i], p, ":")
		  jobs += (b[2 * i] - a[2 * i]) / wall
		  printf "  %-22s %-16s c%d %-6s %6.1f %8.1f %22s\n", i == 1 ? name : "", i == 1 ? pol : "", i - 1, p[1],
		      (b[2 * i - 1] - a[2 * i - 1]) / 1e9 / wall * 100, (b[2 * i] - a[2 * i]) / wall,
		      sprintf("%d/%d/%d", l[3 * i - 2] / 1000, l[3 * i - 1] / 1000, l[3 * i] / 1000)
	      }
	      # The chain: a job every 1/jobs s, against its 1 ms alone.
	      if (pp && jobs > 0)
		  printf "  %-22s %-16s chain: %.1f jobs/s, %.0f us a job (%.0f us over its 1000), 1000 jobs in %.0f ms\n",
		      "", "", jobs, 1e6 / jobs, 1e6 / jobs - 1000, 1e6 / jobs
	  } else {
	      gmin = -1; gmax = 0; jmin = -1; jmax = 0; p50 = 0; p99 = 0; mx = 0
	      for (i = 1; i <= n; i++) {
		  g = (b[2 * i - 1] - a[2 * i - 1]) / 1e9 / wall * 100; j = (b[2 * i] - a[2 * i]) / wall
		  if (gmin < 0 || g < gmin) gmin = g; if (g > gmax) gmax = g
		  if (jmin < 0 || j < jmin) jmin = j; if (j > jmax) jmax = j
		  if (l[3 * i - 2] > p50) p50 = l[3 * i - 2]; if (l[3 * i - 1] > p99) p99 = l[3 * i - 1]; if (l[3 * i] > mx) mx = l[3 * i]
	      }
	      printf "  %-22s %-16s %-9s %6s %8s %22s\n", name, pol, n " clients",
		  sprintf("%.1f-%.1f", gmin, gmax), sprintf("%.0f-%.0f", jmin, jmax),
		  sprintf("%d/%d/%d", p50 / 1000, p99 / 1000, mx / 1000)
	  } }'
}

# bench_drm: every case under every gvt-rs policy.
bench_drm() {
	echo
	echo "== tests_scheduler.c scenarios through gvt_guest, ${DRM_S} s each, figures over the middle $((DRM_S - 2)) s; weights high 32, normal 8, low 1"
	printf '  %-22s %-16s %-9s %6s %8s %22s\n' case policy client "gpu%" "jobs/s" "wait p50/p99/max us"
	for v in tbs sfq eevdf eevdf+anticipate; do
		echo "${v%%+*}" >"$GPU/policy"
		case $v in *+anticipate) echo 2000 ;; *) echo 0 ;; esac >"$GPU/anticipate_us"
		echo "$DRM_CASES" | while read -r name clients; do
			# shellcheck disable=SC2086 # the clients, one a word
			drm_case "$name" $clients || exit 1
		done
	done
	echo 0 >"$GPU/anticipate_us"
	echo sfq >"$GPU/policy"
}

# bench_locks: the holds of the engine's policy and slot locks, from the
# GPU's debugfs file lock_holds (Documentation/gvt-rs/scheduling.rst, "Lock
# holds"): how many, how many with the holder switched out meanwhile
# (preempted or asleep), the 99th and 99.9th percentile, the longest, and
# the longest through which the holder ran. With as many vGPUs of a type as
# the GPU takes: 64 GVTg_V5_8 (six slots each, shared: the sharing
# allocators place up to max_vgpus) and 64 GVTg_V5_64 (one slot), relocation
# on, each vGPU saturating (-p compute -q 4 -d 1000), for sfq and eevdf,
# under gscale (no re-placement) and cost with a re-placement every second
# (planned off the locks: gm_replans). The module is reloaded first, so the
# figures count from its load: the vGPUs' creation (placed under the locks)
# and the run.
# reload: a fresh gvt_rs and gvt_rs_sim, once its simulated GPU's directory is there.
reload() {
	rmmod gvt_rs_sim && rmmod gvt_rs && modprobe gvt_rs_sim || return 1
	i=0
	while [ ! -d "$GPU" ] && [ $i -lt 20 ]; do
		sleep 1
		i=$((i + 1))
	done
	[ -d "$GPU" ]
}

bench_locks() {
	LOCK_S=20
	D=/sys/kernel/debug/gvt_rs
	[ -d "$D" ] || mount -t debugfs nodev /sys/kernel/debug || exit 1
	echo
	echo "== lock holds: every vGPU the GPU takes, re-placement (cost) every 1 s, each -p compute -q 4 -d 1000, ${LOCK_S} s"
	printf '  %-7s %-6s %-10s %5s %-9s %8s %8s %8s %9s %10s %12s %7s\n' alloc policy type vgpus \
		lock holds switched p99_us p999_us max_us max_ran_us replans
	for run in gscale/sfq/8 cost/sfq/8 gscale/eevdf/8 cost/eevdf/8 \
		gscale/sfq/64 cost/sfq/64 gscale/eevdf/64 cost/eevdf/64; do
		alloc=${run%%/*} pol=${run#*/} size=${run##*/}
		pol=${pol%/*}
		reload || exit 1
		echo 1 >"$GPU/gm_relocation"
		echo "$alloc" >"$GPU/gm_allocator" || exit 1
		echo 1000 >"$GPU/gm_replace_period_ms"
		echo "$pol" >"$GPU/policy"
		list=
		while [ "$(cat "$TYPES/gvtsim-GVTg_V5_$size/available_instances")" -gt 0 ]; do
			new_vgpu "GVTg_V5_$size" || exit 1
			list="$list $new"
		done
		for u in $list; do
			"$GUEST" -p compute -q 4 -d 1000 -t "$LOCK_S" "$u" >/dev/null 2>&1 &
		done
		wait
		n=$(echo "$list" | wc -w)
		# lock holds switched_out p50 p99 p999 max max_running, ns.
		# Then the parts of the decisions' holds (pick_holds).
		{
			sed 1d "$D/$(basename "$GPU")/lock_holds"
			sed 1d "$D/$(basename "$GPU")/pick_holds"
		} | while read -r lock holds sw _p50 p99 p999 max ran; do
			printf '  %-7s %-6s %-10s %5d %-9s %8d %8d %8s %9s %10s %12s %7d\n' "$alloc" "$pol" \
				"GVTg_V5_$size" "$n" \
				"$lock" "$holds" "$sw" "$(per "$p99" 1000)" "$(per "$p999" 1000)" \
				"$(per "$max" 1000)" "$(per "$ran" 1000)" "$(gpu_stat gm_replans)"
		done
		for u in $list; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	done
	echo "  (decide, load_step: a switch point's decision, under both locks, and each step (a slot,"
	echo "   or the shared low GM) of its switch-in's GTT load, under slots alone (pick_holds);"
	echo "   switched: holds during which the holder was switched out; max_ran: the longest hold"
	echo "   through which it ran; the VM is TCG: times are the emulated CPU's, and a vCPU the"
	echo "   host stops mid-hold is not seen as switched out)"
	reload || exit 1
	echo sfq >"$GPU/policy"
}

# bench_migration: a vGPU running a workload stream migrated to another of
# its type by gvt_migrate (VFIO migration v2 as a VMM drives it, without
# QEMU), 5 times: the stream's size and the device's part of the downtime,
# STOP_COPY (the stream built and read out) plus RESUMING to RUNNING (written
# and loaded). The guest RAM a VMM copies meanwhile is not in it: QEMU's
# whole downtime is gvt_rs_migration13.sh's figure (make check-debian13).
bench_migration() {
	echo
	echo "== migration: GVTg_V5_4 with a running workload stream to another, gvt_migrate, 5 runs"
	printf '  %3s %12s %14s %12s %16s\n' run stream_bytes stop_copy_us resume_us device_downtime_us
	: >/tmp/bench_mig
	for i in 1 2 3 4 5; do
		new_vgpu GVTg_V5_4 || exit 1
		s=$new
		new_vgpu GVTg_V5_4 || exit 1
		d=$new
		"${GUEST%/*}/gvt_migrate" "$s" "$d" >/tmp/bench_m.out 2>&1 ||
			sed 's/^/  gvt_migrate: /' /tmp/bench_m.out
		line=$(grep '^migration:' /tmp/bench_m.out)
		f() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
		b=$(f stream_bytes) sc=$(f stop_copy_us) r=$(f resume_us)
		printf '  %3d %12s %14s %12s %16s\n' "$i" "${b:-?}" "${sc:-?}" "${r:-?}" \
			"$((${sc:-0} + ${r:-0}))"
		[ -n "$b" ] && echo "$b $sc $r" >>/tmp/bench_mig
		for u in $s $d; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	done
	# med COLUMN: the median of that column of the runs.
	med() {
		sort -n -k"$1" /tmp/bench_mig |
			awk -v c="$1" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
	}
	[ -s /tmp/bench_mig ] && echo "  median: stop_copy $(med 2) us, resume $(med 3) us," \
		"a $(med 1)-byte stream (TCG: the emulated CPU's times)"
}

part path && bench_path
part frames && bench_frames
part switch && bench_switch
part attacks && bench_attacks
part drm && bench_drm
part locks && bench_locks
part migration && bench_migration
echo tbs >"$GPU/policy"
rmmod gvt_rs_sim && rmmod gvt_rs
