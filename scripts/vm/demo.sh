#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make run`: load gvt-rs in the VM and show what it offers.

show_tree() {
	for f in $(find "$1" -type f 2>/dev/null | sort); do
		if [ -r "$f" ] && v=$(cat "$f" 2>/dev/null); then
			printf '  %-50s %s\n' "${f#"$1"/}" "$(echo "$v" | head -n 1)"
		else
			printf '  %-50s (write-only)\n' "${f#"$1"/}"
		fi
	done
}

echo "== modprobe gvt_rs_sim (the simulated GPU; it loads gvt_rs)"
modprobe gvt_rs_sim || exit 1
dmesg | grep gvt-rs | tail -n 3
echo "== /sys/class/gvt_rs"
for g in /sys/class/gvt_rs/*; do
	[ -e "$g/policy" ] || continue
	echo "  ${g##*/}:"
	show_tree "$g/"
done
if [ -d /sys/class/mdev_bus ]; then
	echo "== mdev types offered"
	for t in /sys/class/mdev_bus/*/mdev_supported_types/*; do
		[ -d "$t" ] || continue
		printf '  %-28s %s, available %s\n' "$(basename "$t")" \
			"$(cat "$t/name" 2>/dev/null)" "$(cat "$t/available_instances")"
	done
fi
# ---- vGPUs of mixed types and weights under each policy --------------------
GPU=/sys/class/gvt_rs/gvtsim0
# Its statistics (debugfs, root's).
STATS=/sys/kernel/debug/gvt_rs/gvtsim0/stats

# gpu_stat NAME: a figure of the GPU's statistics.
gpu_stat() {
	awk -v k="$1" '$1 == k { print $2 }' "$STATS"
}
TYPES=/sys/class/mdev_bus/gvtsim0/mdev_supported_types
GUEST=/tests/kselftest/drivers/gvt_rs/gvt_guest
# create TYPE N: creates vGPU number N of type TYPE and prints its UUID.
create() {
	u=$(printf '%08x-0000-4000-8000-%012x' "$2" "$2")
	echo "$u" >"$TYPES/gvtsim-$1/create" && echo "$u"
}

if [ -d "$GPU" ] && [ -x "$GUEST" ]; then
	echo "== graphics memory: available_instances by allocator"
	for a in static gscale; do
		echo $a >"$GPU/gm_allocator"
		printf '  %-8s' $a
		for t in GVTg_V5_8 GVTg_V5_4 GVTg_V5_2 GVTg_V5_1; do
			printf '  %s: %s' $t "$(cat "$TYPES/gvtsim-$t/available_instances")"
		done
		echo
	done
	TRACE=/sys/kernel/tracing
	[ -d "$TRACE/events" ] || mount -t tracefs nodev "$TRACE" 2>/dev/null
	echo "== five vGPUs (gscale slots): V5_1 w16, V5_2 w8, V5_4 w4 (w override 12), V5_8 w2, V5_4 idle"
	A=$(create GVTg_V5_1 1)
	B=$(create GVTg_V5_2 2)
	C=$(create GVTg_V5_4 3)
	D=$(create GVTg_V5_8 4)
	E=$(create GVTg_V5_4 5)
	echo 12 >"/sys/bus/mdev/devices/$C/gvt_rs/weight"
	for p in tbs vmcg sfq; do
		echo
		echo "=================== policy $p ==================="
		echo $p >"$GPU/policy"
		$GUEST -p compute -q 6 -d 3000 -t 7 "$A" >/tmp/demo_a.out 2>&1 &
		$GUEST -p frames -f 4 -d 1500 -z 4000 -t 7 "$B" >/tmp/demo_b.out 2>&1 &
		$GUEST -p compute -q 6 -d 2000 -t 7 "$C" >/tmp/demo_c.out 2>&1 &
		$GUEST -p long -q 2 -d 20000 -t 7 "$D" >/tmp/demo_d.out 2>&1 &
		$GUEST -p idle -t 7 "$E" >/tmp/demo_e.out 2>&1 &
		sleep 2.5
		if [ $p = sfq ] && [ -d "$TRACE/events/gvt_rs" ]; then
			# 50 ms of scheduling events (Documentation/gvt-rs/admin-guide.rst).
			echo >"$TRACE/trace"
			echo 1 >"$TRACE/events/gvt_rs/enable"
			sleep 0.05
			echo 0 >"$TRACE/events/gvt_rs/enable"
			echo "-- tracepoints (events/gvt_rs), the first 8 of $(grep -c ' gvt_rs_' "$TRACE/trace") events in 50 ms:"
			grep ' gvt_rs_' "$TRACE/trace" | head -8 | sed 's/^.*\(gvt_rs_[a-z_]*: \)/  \1/'
		fi
		fair="lambda $(gpu_stat fairness_lambda_ppm) ppm (0 = fair), min-max $(gpu_stat fairness_min_max_ppm) ppm (1000000 = fair), Jain $(gpu_stat fairness_jain_ppm) ppm"
		gvt-top -n 2 -d 1
		wait
		echo "-- guests' own view (rate = workloads/s, fps for frames):"
		for f in a b c d e; do
			sed -n 's/gvt_guest uuid=\([^-]*\)[^ ]* \(profile=[^ ]*\) .*\(completed=[^ ]*\) .*\(gpu_ms=[^ ]*\) .*\(rate_per_s=[^ ]*\) \(fps=[^ ]*\).*/  \1 \2 \3 \4 \5 \6/p' /tmp/demo_$f.out
		done
		echo "-- fairness of the last 1 s window while all ran (weight-normalised GPU time): $fair"
	done
	# shellcheck disable=SC2086 # a vGPU that was not created drops out
	for u in $A $B $C $D $E; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	echo static >"$GPU/gm_allocator"
	echo tbs >"$GPU/policy"
fi

# ---- a real VM: Debian's QEMU with a vGPU, beside an emulator ---------------
if [ -d "$GPU" ] && [ -x /usr/bin/qemu-system-x86_64 ] && [ -f /l2/bzImage ]; then
	echo
	echo "=================== a QEMU guest beside a guest emulator (sfq) ==================="
	echo sfq >"$GPU/policy"
	Q=$(create GVTg_V5_4 6)
	G=$(create GVTg_V5_4 7)
	echo "  qemu-system-x86_64 -accel tcg -machine pc -m 160 ... -device vfio-pci,sysfsdev=/sys/bus/mdev/devices/$Q"
	echo "  (the guest boots this kernel nested in this TCG VM: about two minutes)"
	/l2/qemu /tmp/demo_qemu.console "$Q" gvt_l2.run=-p,compute,-d,5000,-q,8,-t,20 \
		</dev/null >/dev/null 2>/tmp/demo_qemu.err &
	qpid=$!
	i=0
	while ! grep -q "@@L2_RUN " /tmp/demo_qemu.console 2>/dev/null && kill -0 $qpid 2>/dev/null && [ $i -lt 900 ]; do
		sleep 1
		i=$((i + 1))
	done
	grep -h "gvt_rs_guest .*: vGPU" /tmp/demo_qemu.console | sed 's/^.*gvt_rs_guest \([^ ]*\): /  guest kernel: gvt_rs_guest \1: /'
	$GUEST -p compute -q 8 -d 5000 -t 15 "$G" >/tmp/demo_g.out 2>&1 &
	sleep 3
	gvt-top -n 2 -d 2
	wait $!
	while kill -0 $qpid 2>/dev/null && [ $i -lt 1200 ]; do
		sleep 1
		i=$((i + 1))
	done
	echo "-- the QEMU guest's own view:"
	grep -h "^gvt_gpu_client:" /tmp/demo_qemu.console | sed 's/^/  /'
	echo "-- the emulator's:"
	sed 's/^/  /' /tmp/demo_g.out
	[ -s /tmp/demo_qemu.err ] && sed 's/^/  qemu: /' /tmp/demo_qemu.err
	# shellcheck disable=SC2086 # a vGPU that was not created drops out
	for u in $Q $G; do echo 1 >"/sys/bus/mdev/devices/$u/remove"; done
	echo tbs >"$GPU/policy"
fi

echo "== rmmod gvt_rs_sim gvt_rs"
rmmod gvt_rs_sim && rmmod gvt_rs
