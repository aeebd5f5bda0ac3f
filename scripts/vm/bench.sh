#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the cost of the submission path for a guest through QEMU
# against the guest emulator (gvt_guest). Each runs the same load alone on
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

GPU=/sys/kernel/gvt_rs/gvtsim0
TYPES=/sys/class/mdev_bus/gvtsim0/mdev_supported_types
GUEST=/tests/kselftest/drivers/gvt_rs/gvt_guest
RUN_S=20

modprobe gvt_rs || exit 1
[ -x /l2/qemu ] || { echo "no L2 payload in this image"; exit 1; }
echo sfq >"$GPU/policy"

# vgpu N: creates vGPU number N (GVTg_V5_4) and prints its UUID.
vgpu() {
	u=$(printf '%08x-0000-4000-8000-%012x' "$1" "$1")
	echo "$u" >"$TYPES/gvtsim-GVTg_V5_4/create" && echo "$u"
}

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

per() {
	awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.2f", a / n; else print "?" }'
}
echo "== result (1 ms workloads, 8 queued, ${RUN_S} s, each alone on an sfq GPU)"
printf '  %-34s %12s %14s %18s\n' client workloads workloads/s "BAR accesses/wl"
printf '  %-34s %12s %14s %18s\n' "gvt_guest (VFIO, test VM)" "${g_done:-?}" "${g_rate:-?}" "$(per "${g_acc:-0}" "${g_done:-0}")"
printf '  %-34s %12s %14s %18s\n' "QEMU guest (nested, whole life)" "${q_done:-?}" "${q_rate:-?}" "$(per "$q_acc" "${q_done:-0}")"
rmmod gvt_rs
