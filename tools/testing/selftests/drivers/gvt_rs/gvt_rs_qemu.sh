#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The real client: Debian's qemu-system-x86_64 (the image carries the
# host's) starts two L2 guests, each with its own vGPU attached through
# `-device vfio-pci,sysfsdev=...`. Each guest boots this kernel, loads the
# guest driver gvt_rs_guest.ko and runs gvt_gpu_client (scripts/vm/l2-init).
# Checked: QEMU attaches the vGPUs and prints nothing about them; both
# drivers bind; every workload completes with its fence; two saturating
# guests with weights 1:2 under sfq get GPU-time shares within 3 points of
# 1/3 and 2/3 (measured from the host's accounting, not wall clock); a
# malformed ring from one guest fails only that vGPU and a reset recovers
# it; removing a vGPU that QEMU holds completes, and its guest sees the
# device go (QEMU hot-unplugs it on the device request); no kernel warning
# in the guests (the host's log is judged by the runner).

. "$(dirname "$0")/gvt_rs_lib.sh"

QEMU=/usr/bin/qemu-system-x86_64
L2=/l2
# Nested TCG is slow: generous bounds for what takes wall-clock time.
BOOT_S=${GVT_RS_L2_BOOT_S:-600}
# How long each guest computes: long enough that both overlap for the
# share window whatever the skew between their boots.
RUN_A=90
RUN_B=120

ktap_print_header
if [ ! -x "$QEMU" ] || [ ! -f "$L2/bzImage" ]; then
	ktap_skip_all "no QEMU or L2 payload in this image"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 14

# uptime_s: seconds since boot (wall clock; a counted loop would stretch,
# every process start being slow under TCG).
uptime_s() {
	cut -d. -f1 /proc/uptime
}

# wait_for FILE PATTERN SECONDS [PID]: until FILE has a line matching
# PATTERN (or process PID, the QEMU writing FILE, exited). Polls once a
# second: the guests need the CPUs more than this loop.
wait_for() {
	end=$(($(uptime_s) + $3))
	while [ "$(uptime_s)" -lt $end ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			grep -q "$2" "$1" 2>/dev/null && return 0
			echo "# QEMU exited before '$2' appeared in $1"
			return 1
		fi
		sleep 1
	done
	echo "# timeout waiting for '$2' in $1"
	return 1
}

# l2 NAME UUID KERNEL-ARGS: starts an L2 guest on vGPU UUID.
l2() {
	rm -f "/tmp/$1.console" "/tmp/$1.err"
	"$QEMU" -accel tcg -machine pc -m 160 -smp 1 -nodefaults -no-reboot \
		-display none -monitor none -serial "file:/tmp/$1.console" \
		-kernel "$L2/bzImage" -initrd "$L2/initramfs.cpio.gz" \
		-append "console=ttyS0 loglevel=4 panic=-1 kunit.enable=0 kmemleak=off $3" \
		-device "vfio-pci,sysfsdev=/sys/bus/mdev/devices/$2" \
		</dev/null >/dev/null 2>"/tmp/$1.err" &
	echo $!
}

busy() {
	cat "$(vgpu_attr "$1" busy_ns)"
}

sim_ready || ktap_exit_fail_msg "gvt_rs not ready"
set_attr "$GVT_GPU/policy" sfq
ua=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
ub=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
set_attr "$(vgpu_attr "$ua" weight)" 1
set_attr "$(vgpu_attr "$ub" weight)" 2
ida=$(cat "$(vgpu_attr "$ua" vgpu_id)")

# 20 ms workloads, 8 queued: each guest keeps 160 ms of work in its V-Channel,
# far more than it needs to refill even under nested TCG.
load="-p,compute,-d,20000,-q,8"
t0=$(uptime_s)
qa=$(l2 l2a "$ua" "gvt_l2.mod=unchecked_submit=1 gvt_l2.run=$load,-t,$RUN_A;-m,7,-x")
# Boot one guest at a time: two QEMUs translating a kernel at once make the
# test VM's TCG stop both its vCPUs at every code invalidation.
wait_for /tmp/l2a.console "@@L2_UP" "$BOOT_S" "$qa"
qb=$(l2 l2b "$ub" "gvt_l2.run=$load,-t,$RUN_B gvt_l2.hold=300")

ok=true
wait_for /tmp/l2a.console "gvt_rs_guest: vGPU .* irq" "$BOOT_S" "$qa" || ok=false
wait_for /tmp/l2b.console "gvt_rs_guest: vGPU .* irq" "$BOOT_S" "$qb" || ok=false
echo "# both L2 guests booted and bound their vGPU in $(($(uptime_s) - t0)) s"
grep -h "gvt_rs_guest: vGPU" /tmp/l2a.console /tmp/l2b.console | sed 's/^/# /'
if ! $ok; then
	for g in l2a l2b; do
		tail -n 20 /tmp/$g.console /tmp/$g.err 2>/dev/null | sed "s/^/# $g: /"
	done
fi
check "QEMU attaches both vGPUs and the guest drivers bind" $ok

# Shares, from the GPU time the host charged, while both are backlogged.
wait_for /tmp/l2a.console "@@L2_RUN -p compute" 60 && wait_for /tmp/l2b.console "@@L2_RUN -p compute" 60
sleep 3
a0=$(busy "$ua") b0=$(busy "$ub")
sleep 12
a1=$(busy "$ua") b1=$(busy "$ub")
share=$(echo "$a0 $a1 $b0 $b1" | awk '{da = $2 - $1; db = $4 - $3; if (da + db > 0) printf "%.3f", da / (da + db); else print 0}')
echo "# weights 1:2 under sfq: GPU time charged to A $(((a1 - a0) / 1000000)) ms, B $(((b1 - b0) / 1000000)) ms, A's share $share (ideal 0.333)"
check "weights 1:2 under sfq: shares within 3 points" \
	awk -v s="$share" 'BEGIN { exit !(s >= 0.303 && s <= 0.363) }'

wait_for /tmp/l2a.console "@@L2_RUN_END" $((RUN_A + 120))
grep -h "^gvt_gpu_client:" /tmp/l2a.console | sed 's/^/# A: /'
line=$(grep -m1 "^gvt_gpu_client: profile=compute" /tmp/l2a.console)
check "guest A: every workload completes with its fence" \
	sh -c "grep -q '@@L2_RUN_END rc=0' /tmp/l2a.console && echo '$line' | grep -q 'fences_bad=0'"

# A's malformed descriptor fails A only; B's work keeps completing.
wait_for /tmp/l2a.console "gvt_gpu_client: fault=" 120
# Progress, not a rate: B completes more workloads after A failed, however
# slowly the machine runs.
c0=$(cat "$(vgpu_attr "$ub" completed)")
end=$(($(uptime_s) + 60))
c1=$c0
while [ "$c1" -le "$c0" ] && [ "$(uptime_s)" -lt $end ]; do
	sleep 1
	c1=$(cat "$(vgpu_attr "$ub" completed)")
done
echo "# B completed $((c1 - c0)) more workloads after A failed"
check "malformed ring: guest A sees its fault (unknown opcode)" \
	grep -q "gvt_gpu_client: fault=.*reason=5" /tmp/l2a.console
check "malformed ring: the host logs vGPU $ida failed" \
	sh -c "dmesg | grep -q 'vGPU $ida failed: unknown opcode'"
check "malformed ring: the other vGPU keeps completing" test "$c1" -gt "$c0"
wait_for /tmp/l2a.console "gvt_gpu_client: reset" 60
check "a device reset recovers the failed vGPU" grep -q "gvt_gpu_client: reset ok" /tmp/l2a.console

wait_for /tmp/l2b.console "@@L2_HOLD" $((RUN_B + 120))
grep -h "^gvt_gpu_client:" /tmp/l2b.console | sed 's/^/# B: /'
check "guest B: every workload completes with its fence" \
	sh -c "grep -q '@@L2_RUN_END rc=0' /tmp/l2b.console && grep -q 'profile=compute.*fences_bad=0' /tmp/l2b.console"

# Removing a vGPU QEMU holds: the device request makes QEMU unplug it.
timeout 240 sh -c "echo 1 >/sys/bus/mdev/devices/$ub/remove"
rc=$?
check "removing a vGPU that QEMU holds completes" test $rc = 0
wait_for /tmp/l2b.console "@@L2_DONE" 120
check "the guest sees its vGPU go" \
	sh -c "grep -q '@@L2_GONE' /tmp/l2b.console && grep -q 'gvt_rs_guest: removed' /tmp/l2b.console"

wait_for /tmp/l2a.console "@@L2_DONE" 120
for q in $qa $qb; do
	end=$(($(uptime_s) + 60))
	while kill -0 "$q" 2>/dev/null && [ "$(uptime_s)" -lt $end ]; do
		sleep 1
	done
	kill -0 "$q" 2>/dev/null && kill "$q"
done
for g in l2a l2b; do
	sed "s/^/# qemu $g: /" /tmp/$g.err
done
check "QEMU printed no error or warning" \
	sh -c "! grep -qiE 'vfio|warn|error|fail' /tmp/l2a.err /tmp/l2b.err"
check "both guests shut down cleanly" \
	sh -c "grep -q '@@L2_DONE rc=0' /tmp/l2a.console && grep -q '@@L2_DONE' /tmp/l2b.console"
bad=$(sed -n '/@@L2_DMESG_BEGIN/,/@@L2_DMESG_END/p' /tmp/l2a.console /tmp/l2b.console |
	grep -E 'WARNING:|BUG:|Oops|panic|lockdep|possible circular|Call Trace')
[ -n "$bad" ] && echo "$bad" | sed 's/^/# L2: /'
check "no kernel warning in the guests" test -z "$bad"
vgpu_remove "$ua"
check "vGPU A removed after its VM exited" test ! -e "/sys/bus/mdev/devices/$ua"
ktap_finished
