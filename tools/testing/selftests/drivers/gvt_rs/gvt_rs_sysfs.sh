#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every sysfs file of gvt-rs's simulated GPU and of a vGPU, with good and bad
# input: valid values read back, malformed ones fail with EINVAL, values out
# of range with ERANGE, and a failed write changes nothing. Read-only files
# refuse writes. Each file has its mode: the figures that move with what
# tenants do are readable by root only (0400), per vGPU and GPU-wide, and
# what the administrator set or a vGPU was created with by everyone (0444,
# 0644 when root may write it); another user cannot read the former, can
# read the latter, and root can give a group read access ("Who can read
# what" in the admin guide).

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
sim_ready || { ktap_skip_all "gvt_rs simulated GPU unavailable"; exit "$KSFT_SKIP"; }
U=$(vgpu_create GVTg_V5_4)
V=/sys/bus/mdev/devices/$U/gvt_rs

# driver_core FILE: an entry the driver core gives every device (the GPU's
# directory is a device of the class gvt_rs), not a gvt-rs file.
driver_core() {
	case "${1##*/}" in
	uevent | power | subsystem | device) return 0 ;;
	*) return 1 ;;
	esac
}

ngpu=0
for path in "$GVT_GPU"/*; do
	driver_core "$path" || ngpu=$((ngpu + 1))
done
nvgpu=$(count_paths "$V"/*)
ktap_set_plan $((ngpu + nvgpu + 7))
check "per-GPU ($ngpu) and per-vGPU ($nvgpu) files exist" test "$ngpu" -ge 30 -a "$nvgpu" -ge 25

# good FILE VALUE: the write succeeds and reads back.
good() {
	echo "$2" >"$1" && [ "$(cat "$1")" = "$2" ]
}

# uint_file FILE LO HI [GOOD_HI]: integer tunable with an inclusive range.
uint_file() {
	f=$1 lo=$2 hi=$3 ghi=${4:-$3}
	def=$(cat "$f")
	good "$f" "$lo" && good "$f" "$ghi" &&
		write_fails "out of range" "$f" $((hi + 1)) &&
		{ [ "$lo" = 0 ] || write_fails "out of range" "$f" $((lo - 1)); } &&
		write_fails "Invalid argument" "$f" "x" &&
		write_fails "Invalid argument" "$f" "-1" &&
		write_fails "Invalid argument" "$f" "1 2" &&
		write_fails "Invalid argument" "$f" " 1" &&
		good "$f" "$def"
}

# writable FILE: its mode lets the owner write (root may write anything).
writable() {
	case "$(stat -c %A "$1")" in
	?rw*) return 0 ;;
	*) return 1 ;;
	esac
}

ro_file() {
	cat "$1" >/dev/null && ! (echo 1 >"$1") 2>/dev/null
}

# has_mode FILE MODE: the file's permission bits are MODE (octal).
has_mode() {
	m=$(stat -c %a "$1")
	[ "$m" = "$2" ] || { echo "# $1: mode $m, not $2"; return 1; }
}

# as_nobody [-g GID] COMMAND...: COMMAND as user 65534 in group 65534 (or
# GID), with no supplementary group: util-linux setpriv, or busybox
# nsenter, which sets the ids without entering a namespace.
as_nobody() {
	gid=65534
	if [ "$1" = -g ]; then
		gid=$2
		shift 2
	fi
	if setpriv --reuid=65534 --regid="$gid" --clear-groups true 2>/dev/null; then
		setpriv --reuid=65534 --regid="$gid" --clear-groups "$@"
	else
		nsenter -S 65534 -G "$gid" "$@"
	fi
}

# nobody_denied FILE: another user's read fails with EACCES, from cat's
# open of FILE (not from starting cat).
nobody_denied() {
	as_nobody true || { echo "# cannot run a command as user 65534"; return 1; }
	err=$(as_nobody cat "$1" 2>&1 >/dev/null) && { echo "# $1: read as nobody"; return 1; }
	case "$err" in
	*"$1"*"Permission denied"*) ;;
	*) echo "# $1: $err"; return 1 ;;
	esac
}

# nobody_reads FILE...: another user reads each file.
nobody_reads() {
	for f in "$@"; do
		as_nobody cat "$f" >/dev/null || return 1
	done
}

# group_grant FILE: root gives group 65533 read access (chgrp, chmod
# 0440), a user of that group reads the file, and the file is root's again.
group_grant() {
	chgrp 65533 "$1" && chmod 0440 "$1" && as_nobody -g 65533 cat "$1" >/dev/null &&
		chmod 0400 "$1" && chgrp 0 "$1" && nobody_denied "$1"
}

# stat_names: the figures of a GPU's debugfs stats file (debugfs-gvt_rs).
stat_names() {
	echo fairness_lambda_ppm fairness_min_max_ppm fairness_jain_ppm \
		fairness_active picks pick_ns switches withheld_ns overdue_ns \
		vmcg_rounds inflight gm_shared_slots gtt_entries_copied \
		events_queued events_dispatched events_completed events_switches \
		events_relocations events_gtt_reloads policy_lock_max_ns \
		slots_lock_max_ns gm_replans current_vgpu coschedule_vgpu
}

# stats_ok: the stats file has every figure once and nothing else, each a
# number (current_vgpu: a vGPU or idle; coschedule_vgpu: one or none).
stats_ok() {
	f=/tmp/sysfs_stats
	cat "$(gpu_stats_file)" >"$f" || return 1
	sed 's/^/# stats: /' "$f"
	[ "$(wc -l <"$f")" = "$(stat_names | wc -w)" ] || return 1
	for n in $(stat_names); do
		[ "$(grep -c "^$n " "$f")" = 1 ] || { echo "# $n: not once"; return 1; }
		v=$(gpu_stat "$n")
		case "$n:$v" in
		current_vgpu:idle | coschedule_vgpu:none) ;;
		*:*[!0-9]* | *:) echo "# $n: $v"; return 1 ;;
		esac
	done
}

gpu_rw() {
	case "$1" in
	policy)
		good_choice() { echo "$2" >"$1" && grep -q "\[$2\]" "$1"; }
		good_choice "$GVT_GPU/policy" sfq && good_choice "$GVT_GPU/policy" eevdf &&
			good_choice "$GVT_GPU/policy" vmcg &&
			grep -qx 'tbs vmcg sfq \[eevdf\]\|tbs \[vmcg\] sfq eevdf' "$GVT_GPU/policy" &&
			write_fails "Invalid argument" "$GVT_GPU/policy" fifo &&
			write_fails "Invalid argument" "$GVT_GPU/policy" "SFQ" &&
			good_choice "$GVT_GPU/policy" tbs ;;
	gm_allocator)
		# A vGPU exists: every change is refused, nothing changes.
		write_fails "busy" "$GVT_GPU/gm_allocator" gscale &&
			grep -q '\[static\]' "$GVT_GPU/gm_allocator" &&
			grep -qx '\[static\] gscale dymgpu-size dymgpu-util cost' "$GVT_GPU/gm_allocator" ;;
	tbs_tick_us) uint_file "$GVT_GPU/$1" 100 100000 ;;
	tbs_balance_ms) uint_file "$GVT_GPU/$1" 10 10000 ;;
	tbs_stages) uint_file "$GVT_GPU/$1" 1 1000 ;;
	tbs_start_boost_ms) uint_file "$GVT_GPU/$1" 0 60000 ;;
	slice_ceiling_us) uint_file "$GVT_GPU/$1" 1000 1000000 ;;
	slice_min_us) uint_file "$GVT_GPU/$1" 100 1000000 16000 ;;
	credit_pool) uint_file "$GVT_GPU/$1" 1 1000000 ;;
	dispatch_batch) uint_file "$GVT_GPU/$1" 1 1024 ;;
	pcie_link_mbps) uint_file "$GVT_GPU/$1" 1 1000000 ;;
	gm_total_mb) uint_file "$GVT_GPU/$1" 1 1048576 ;;
	sfq_slice_us) uint_file "$GVT_GPU/$1" 100 1000000 ;;
	sfq_wake_keeps_debt | sfq_wake_preempt | throttle) uint_file "$GVT_GPU/$1" 0 1 ;;
	throttle_factor_pct) uint_file "$GVT_GPU/$1" 100 10000 ;;
	fairness_window_ms) uint_file "$GVT_GPU/$1" 10 60000 ;;
	idle_threshold_us) uint_file "$GVT_GPU/$1" 0 10000 ;;
	interactive_calls) uint_file "$GVT_GPU/$1" 0 1000 ;;
	interactive_gap_us) uint_file "$GVT_GPU/$1" 0 100000 ;;
	anticipate_us) uint_file "$GVT_GPU/$1" 0 10000 ;;
	gm_sample_period_ms)
		# The utilization window (20 s) must hold 1..64 samples.
		good "$GVT_GPU/$1" 500 && good "$GVT_GPU/$1" 1000 &&
			write_fails "out of range" "$GVT_GPU/$1" 100 &&
			write_fails "out of range" "$GVT_GPU/$1" 60001 &&
			write_fails "Invalid argument" "$GVT_GPU/$1" 1s ;;
	gm_util_window_ms)
		good "$GVT_GPU/$1" 1000 && good "$GVT_GPU/$1" 20000 &&
			write_fails "out of range" "$GVT_GPU/$1" 999 &&
			write_fails "out of range" "$GVT_GPU/$1" 65000 &&
			write_fails "Invalid argument" "$GVT_GPU/$1" x ;;
	gm_idle_threshold_ms)
		good "$GVT_GPU/$1" 0 && good "$GVT_GPU/$1" 20000 &&
			write_fails "out of range" "$GVT_GPU/$1" 999 &&
			write_fails "out of range" "$GVT_GPU/$1" 86400001 &&
			write_fails "Invalid argument" "$GVT_GPU/$1" x ;;
	gm_replace_period_ms)
		good "$GVT_GPU/$1" 1000 && good "$GVT_GPU/$1" 20000 &&
			write_fails "out of range" "$GVT_GPU/$1" 999 &&
			write_fails "Invalid argument" "$GVT_GPU/$1" x ;;
	gm_move_penalty_pct) uint_file "$GVT_GPU/$1" 0 10000 200 ;;
	gm_relocation)
		echo off >"$GVT_GPU/$1" && [ "$(cat "$GVT_GPU/$1")" = 0 ] &&
			echo on >"$GVT_GPU/$1" && [ "$(cat "$GVT_GPU/$1")" = 1 ] &&
			write_fails "Invalid argument" "$GVT_GPU/$1" maybe ;;
	*) return 2 ;;
	esac
}

for path in "$GVT_GPU"/*; do
	[ -e "$path" ] || [ -L "$path" ] || continue
	driver_core "$path" && continue
	f=${path##*/}
	if writable "$GVT_GPU/$f"; then
		# gpu_rw's helpers set f.
		name=$f
		gpu_rw "$f"
		rc=$?
		[ $rc = 2 ] && echo "# $name: writable but not covered by this test"
		check "gpu/$name (mode 644)" eval "test $rc = 0 && has_mode $GVT_GPU/$name 644"
	else
		# The GPU's statistics are in debugfs: what is left is fixed
		# or the administrator's, everyone's.
		check "gpu/$f (read-only, mode 444)" \
			eval "ro_file $GVT_GPU/$f && has_mode $GVT_GPU/$f 444"
	fi
done

for path in "$V"/*; do
	[ -e "$path" ] || [ -L "$path" ] || continue
	f=${path##*/}
	case "$f" in
	weight)
		check "vgpu/weight" sh -c ". $(dirname "$0")/gvt_rs_lib.sh; \
			echo 7 > $V/weight && [ \$(cat $V/weight) = 7 ] && \
			write_fails 'out of range' $V/weight 0 && \
			write_fails 'out of range' $V/weight 10001 && \
			write_fails 'Invalid argument' $V/weight heavy && \
			echo 4 > $V/weight && [ \$(cat $V/type_weight) = 4 ]" ;;
	pcie_bw_mbps)
		check "vgpu/pcie_bw_mbps" sh -c ". $(dirname "$0")/gvt_rs_lib.sh; \
			echo 8000 > $V/pcie_bw_mbps && [ \$(cat $V/pcie_bw_mbps) = 8000 ] && \
			write_fails 'out of range' $V/pcie_bw_mbps 1000001 && \
			write_fails 'Invalid argument' $V/pcie_bw_mbps 8G && \
			echo 0 > $V/pcie_bw_mbps" ;;
	*)
		case "$f" in
		vgpu_id | type_weight | gm_mb | slot_count) m=444 ;;
		*) m=400 ;;
		esac
		check "vgpu/$f (read-only, mode $m)" eval "ro_file $V/$f && has_mode $V/$f $m" ;;
	esac
done
check "vgpu/weight and pcie_bw_mbps: mode 644" \
	eval "has_mode $V/weight 644 && has_mode $V/pcie_bw_mbps 644"
check "another user cannot read what tenants do (busy_ns, cpu_ns, the GPU's debugfs stats)" \
	eval "nobody_denied $V/busy_ns && nobody_denied $V/cpu_ns &&
		nobody_denied $(gpu_stats_file)"
check "the GPU's statistics: each of its $(stat_names | wc -w) figures once, a number or a vGPU" \
	stats_ok
check "another user reads the configuration (weight, type_weight, policy, engines)" \
	nobody_reads "$V/weight" "$V/type_weight" "$GVT_GPU/policy" "$GVT_GPU/engines"
check "root can give a group read access to a tenant's figure" group_grant "$V/busy_ns"
vgpu_remove "$U"
check "reading a removed vGPU's directory fails" test ! -e "$V/weight"
ktap_finished
