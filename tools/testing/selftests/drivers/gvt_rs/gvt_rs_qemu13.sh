#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian 13's QEMU (/debian13 in this VM: scripts/bootstrap.sh builds the
# root with debootstrap, scripts/vm-run.sh boots it in a run of its own)
# attaches vGPUs both ways a user attaches a vfio-pci device today, in two
# L2 guests at once, chrooted in that root as on a Debian 13 host:
#   A  through iommufd: -object iommufd,id=i0
#                       -device vfio-pci,iommufd=i0,sysfsdev=...
#   B  through the legacy container: -device vfio-pci,sysfsdev=...
# Each guest boots this kernel (scripts/vm/l2-init), loads the guest driver
# gvt_rs_guest.ko, waits at @@L2_READY for a line on its console (both
# get it once both are ready: the files each QEMU holds are read then,
# while both run) and runs gvt_gpu_client for 10 s of 20 ms workloads,
# then copies guest memory through the vGPU, each copy checked against its
# pattern: B for COPY_B_S s while L1 switches the GPU's policy under it, A
# until its vGPU is removed under its copies.
# Checked: which VFIO interface each QEMU holds open (A /dev/iommu and the
# vGPU's /dev/vfio/devices/vfioN and no container, B the container and
# the vGPU's group and no /dev/iommu); both drivers bind; every workload
# completes with its fence; no completed copy is wrong and every one
# submitted completed or was failed to its guest, through the policy
# switches (B) and the removal (A); gvt-rs counted each workload and copy
# the guest saw complete on that guest's vGPU; removing A's vGPU while
# QEMU holds it through iommufd completes (QEMU unplugs it on the device
# request) and guest A sees it go; both guests
# shut down, QEMU prints no error or warning, no guest kernel warns.
#
# The guests run under TCG inside the TCG test VM, so their work is short.
# Every wait ends at the test's budget, 120 s before the runner's timeout
# (GVT_RS_TEST_TIMEOUT); once one has run out, the test waits no more and
# the checks left fail on what is missing. On exit or SIGTERM the QEMU
# processes are stopped, the vGPUs removed and the root's mounts undone.

. "$(dirname "$0")/gvt_rs_lib.sh"

D=/debian13
QEMU=/usr/bin/qemu-system-x86_64
LIMIT_S=${GVT_RS_TEST_TIMEOUT:-1200}
DEADLINE=$((GVT_T0 + LIMIT_S - 120))
BIND="gvt_rs_guest .*: vGPU .* irq"
# The guests' kernel command line is the lib's L2_CMDLINE.
# 10 s of 20 ms workloads, four queued; then copies on both engines, one
# at a time: B's for COPY_B_S s, A's until its vGPU goes (the hold then
# sees it gone at once).
RUN="-p,compute,-d,20000,-q,4,-t,10"
COPY_B_S=24
RUN_A="$RUN;-p,copy,-e,-1,-t,600"
RUN_B="$RUN;-p,copy,-e,-1,-t,$COPY_B_S"
# The policies B's copies run through, one every POLICY_S s.
POLICIES="eevdf tbs vmcg sfq"
POLICY_S=4

ktap_print_header
if [ ! -x "$D$QEMU" ] || [ ! -x /l2/qemu ]; then
	ktap_skip_all "no Debian 13 root with QEMU in this image (make check boots one for it)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 19

qa='' qb='' ua='' ub='' remover='' gave_up=''

# wait_for FILE PATTERN PID: until FILE (in the root) has a line matching
# PATTERN; gives up when QEMU PID exits or the budget ends, and then no
# later wait waits.
wait_for() {
	[ -z "$gave_up" ] || return 1
	while ! grep -q "$2" "$D$1" 2>/dev/null; do
		if ! running "$3" || [ "$(uptime_s)" -ge "$DEADLINE" ]; then
			grep -q "$2" "$D$1" 2>/dev/null && break
			gave_up=1
			why="QEMU $3 exited"
			running "$3" && why="the budget ended"
			progress "gave up waiting for '$2' in $1 ($why)"
			# Enough of a console for a guest kernel's oops and call trace.
			for f in /tmp/q13a.console /tmp/q13b.console /tmp/q13a.err /tmp/q13b.err; do
				tail -n 60 "$D$f" 2>/dev/null | sed "s|^|# ${f#/tmp/}: |"
			done
			return 1
		fi
		sleep 1
	done
	progress "${1#/tmp/}: $2"
}

cleanup() {
	trap '' INT TERM
	if [ "$KTAP_TESTNO" -le "$KSFT_NUM_TESTS" ]; then
		while [ "$KTAP_TESTNO" -le "$KSFT_NUM_TESTS" ]; do
			ktap_test_fail "check $KTAP_TESTNO not run: the test ended early"
		done
		ktap_print_totals
	fi
	stop "$qa" "$qb"
	exec 3>&- 4>&-
	for u in $ua $ub; do
		[ -e "/sys/bus/mdev/devices/$u" ] && echo 1 >"/sys/bus/mdev/devices/$u/remove"
	done
	debian_release
}
trap cleanup EXIT
trap 'progress "stopped by SIGTERM"; exit 143' TERM

# qemu_fds PID: the files QEMU PID holds open, as paths in the root.
qemu_fds() {
	for f in /proc/"$1"/fd/*; do
		l=$(readlink "$f") && echo "${l#"$D"}"
	done
}

check "gvt_rs ready" sim_ready
version=$(in_debian "$QEMU" --version | head -n 1)
echo "# $version"
check "Debian 13's QEMU runs: $version" sh -c "echo '$version' | grep -q '^QEMU emulator version'"
check "the Debian 13 root is mounted" debian_mount qemu

ua=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
ub=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
cdev=$(ls "/sys/bus/mdev/devices/$ua/vfio-dev" 2>/dev/null)
group=$(basename "$(readlink "/sys/bus/mdev/devices/$ub/iommu_group")")
echo "# vGPU A $ua (device file /dev/vfio/devices/$cdev), vGPU B $ub (group $group)"
cb0=$(cat "$(vgpu_attr "$ub" completed)")
# The GPU's count: A's share of it after A's vGPU is gone (only A and B
# are on this GPU).
ev0=$(gpu_stat events_completed)
policy0=$(cat "$GVT_GPU/policy")

debian_guest q13a "gvt_l2.go=1 gvt_l2.run=$RUN_A gvt_l2.hold=300" \
	-object iommufd,id=i0 -device "vfio-pci,iommufd=i0,sysfsdev=/sys/bus/mdev/devices/$ua"
qa=$pid
debian_guest q13b "gvt_l2.go=1 gvt_l2.run=$RUN_B" \
	-device "vfio-pci,sysfsdev=/sys/bus/mdev/devices/$ub"
qb=$pid
# Read-write opens: writing never waits for a reader.
exec 3<>"$D/tmp/q13a.in" 4<>"$D/tmp/q13b.in"
progress "two L2 guests started (QEMU pids $qa $qb)"

wait_for /tmp/q13a.console "@@L2_READY" "$qa"
wait_for /tmp/q13b.console "@@L2_READY" "$qb"
qemu_fds "$qa" | grep '^/dev/' | sort -u | sed 's/^/# QEMU A holds /'
qemu_fds "$qb" | grep '^/dev/' | sort -u | sed 's/^/# QEMU B holds /'
check "QEMU A attaches its vGPU through iommufd: /dev/iommu, its vfio/devices/$cdev, no container" \
	sh -c "[ -n '$cdev' ] && qemu_fds() { for f in /proc/$qa/fd/*; do readlink \$f; done; };
	 qemu_fds | grep -q '/dev/iommu\$' && qemu_fds | grep -q '/dev/vfio/devices/$cdev\$' &&
	 ! qemu_fds | grep -q '/dev/vfio/vfio\$'"
check "QEMU B attaches its vGPU through the container: /dev/vfio/vfio, group $group, no iommufd" \
	sh -c "qemu_fds() { for f in /proc/$qb/fd/*; do readlink \$f; done; };
	 qemu_fds | grep -q '/dev/vfio/vfio\$' && qemu_fds | grep -q '/dev/vfio/$group\$' &&
	 ! qemu_fds | grep -q '/dev/iommu\$'"
grep -h "$BIND" "$D/tmp/q13a.console" "$D/tmp/q13b.console" 2>/dev/null | sed 's/^/# /'
check "both guest drivers bind to their vGPUs" sh -c \
	"grep -q '$BIND' $D/tmp/q13a.console && grep -q '$BIND' $D/tmp/q13b.console"
if [ -z "$gave_up" ]; then
	echo go >&3
	echo go >&4
	progress "both guests told to start their runs"
fi

# B's copies run through a switch of the GPU's policy every POLICY_S s.
switched=0 switches=0
if wait_for /tmp/q13b.console "@@L2_RUN -p copy" "$qb"; then
	for p in $POLICIES; do
		switches=$((switches + 1))
		echo "$p" >"$GVT_GPU/policy" && switched=$((switched + 1))
		progress "policy $p under B's copies"
		sleep "$POLICY_S"
	done
fi
check "$switched of $switches policy switches ($POLICIES) under guest B's copies" \
	sh -c "[ $switched -gt 0 ] && [ $switched = $switches ]"
echo "$policy0" >"$GVT_GPU/policy"

wait_for /tmp/q13b.console "@@L2_DONE" "$qb"
cb1=$(cat "$(vgpu_attr "$ub" completed)")
grep -h "^gvt_gpu_client:" "$D/tmp/q13b.console" 2>/dev/null | sed 's/^/# B: /'
check "guest B (container): copies through the policy switches: none wrong, each completed" \
	l2_copies_ok "$D/tmp/q13b.console" removed=0
# count CONSOLE PROFILE FIELD: FIELD of the client's line for PROFILE, 0
# without one.
count() {
	n=$(sed -n "s/^gvt_gpu_client: profile=$2 .* $3=\([0-9]*\) .*/\1/p" "$1" | tail -n 1)
	echo "${n:-0}"
}
# work_ok CONSOLE: the compute run ended well with every fence right.
work_ok() {
	grep -q '@@L2_RUN_END rc=0' "$1" &&
		grep -q '^gvt_gpu_client: profile=compute .* completed=[1-9].* fences_bad=0 ' "$1"
}
check "guest B (container): every workload completes with its fence" \
	work_ok "$D/tmp/q13b.console"
b_seen=$(($(count "$D/tmp/q13b.console" compute completed) +
	$(count "$D/tmp/q13b.console" copy completed)))
echo "# vGPU B: gvt-rs counted $((cb1 - cb0)) completions," \
	"guest B saw $b_seen (workloads and copies)"
check "guest B: gvt-rs counted on its vGPU each workload and copy it saw complete" \
	sh -c "[ $b_seen -gt 0 ] && [ $b_seen = $((cb1 - cb0)) ]"

# A's copies run until its vGPU is removed under them.
wait_for /tmp/q13a.console "@@L2_RUN -p copy" "$qa"
[ -z "$gave_up" ] && sleep 5
# Removing a vGPU that QEMU holds through iommufd: the device request
# makes QEMU unplug it, the removal completes once QEMU has closed it.
rc=1
if [ -z "$gave_up" ]; then
	(echo 1 >"/sys/bus/mdev/devices/$ua/remove") &
	remover=$!
	while running "$remover" && [ "$(uptime_s)" -lt "$DEADLINE" ]; do
		sleep 1
	done
	if running "$remover"; then
		progress "the removal of vGPU $ua has not completed"
	else
		wait "$remover"
		rc=$?
		progress "vGPU $ua removed (status $rc)"
	fi
fi
check "removing vGPU A while QEMU holds it through iommufd completes" test $rc = 0
wait_for /tmp/q13a.console "@@L2_DONE" "$qa"
check "guest A sees its vGPU go" sh -c \
	"grep -q '@@L2_GONE' $D/tmp/q13a.console &&
	 grep -q 'gvt_rs_guest .*: removed vGPU' $D/tmp/q13a.console"
grep -h "^gvt_gpu_client:" "$D/tmp/q13a.console" 2>/dev/null | sed 's/^/# A: /'
check "guest A (iommufd): copies until its vGPU was removed: none wrong, each completed or failed" \
	l2_copies_ok "$D/tmp/q13a.console" removed=1
check "guest A (iommufd): every workload completes with its fence" \
	work_ok "$D/tmp/q13a.console"
# A copy the engine completed as its vGPU went may reach the guest failed:
# gvt-rs counts at least what A saw complete and at most what it submitted.
a_count=$(($(gpu_stat events_completed) - ev0 - (cb1 - cb0)))
a_seen=$(($(count "$D/tmp/q13a.console" compute completed) +
	$(count "$D/tmp/q13a.console" copy completed)))
a_failed=$(count "$D/tmp/q13a.console" copy failed)
echo "# vGPU A: gvt-rs counted $a_count completions, guest A saw $a_seen" \
	"(workloads and copies), $a_failed copies failed"
check "guest A: gvt-rs counted on its vGPU each workload and copy it saw complete" \
	sh -c "[ $a_seen -gt 0 ] && [ $a_count -ge $a_seen ] &&
	 [ $a_count -le $((a_seen + a_failed)) ]"

end=$(($(uptime_s) + 60))
while { running "$qa" || running "$qb"; } && [ "$(uptime_s)" -lt "$end" ]; do
	sleep 1
done
for g in q13a q13b; do
	grep -h "@@L2_RUN_END\|@@L2_DONE" "$D/tmp/$g.console" 2>/dev/null | sed "s/^/# $g: /"
done
# A QEMU that exited but is not reaped yet is a zombie, which kill -0
# still finds: running() does not count it.
still_running=''
running "$qa" && still_running="$still_running A ($qa)"
running "$qb" && still_running="$still_running B ($qb)"
[ -n "$still_running" ] && echo "# QEMU still running:$still_running"
check "both guests shut down, their QEMU exited" sh -c \
	"grep -q '@@L2_DONE rc=0' $D/tmp/q13a.console &&
	 grep -q '@@L2_DONE rc=0' $D/tmp/q13b.console && [ -z '$still_running' ]"
for g in q13a q13b; do
	sed "s/^/# qemu $g: /" "$D/tmp/$g.err"
done
# One line is QEMU's own, under TCG only: at the unplug of A's vGPU,
# QEMU's detach of an iommufd device removes the device's file from the
# KVM VFIO device (vfio_kvm_device_del_fd()), which TCG never created,
# and says so; adding it returned early without KVM. QEMU 7.2's container
# path returned there silently. Exactly that line is allowed, for A.
tcg_detach="KVM VFIO device isn't created yet"
echo "# figure: QEMU A's detach without KVM: $(grep -c "$tcg_detach" "$D/tmp/q13a.err") line(s)"
check "QEMU printed no error or warning (A: but its line on detaching without KVM)" sh -c \
	"! grep -v \"$tcg_detach\" $D/tmp/q13a.err | grep -qiE 'vfio|iommu|kvm|warn|error|fail' &&
	 ! grep -qiE 'vfio|iommu|kvm|warn|error|fail' $D/tmp/q13b.err"
# What scripts/vm_results.py counts as a kernel error in the test VM's log.
KERNEL_BAD='WARNING: .* at |cut here|BUG: |kernel BUG at|Oops|Kernel panic'
KERNEL_BAD="$KERNEL_BAD|general protection fault|possible (circular|recursive) locking"
KERNEL_BAD="$KERNEL_BAD|inconsistent lock state|lock held when returning|suspicious RCU usage"
KERNEL_BAD="$KERNEL_BAD|lockdep is turned off|sleeping function called from invalid context"
KERNEL_BAD="$KERNEL_BAD|scheduling while atomic|panicked at|UBSAN:|blocked for more than|Call Trace"
bad=$(sed -n '/@@L2_DMESG_BEGIN/,/@@L2_DMESG_END/p' "$D/tmp/q13a.console" "$D/tmp/q13b.console" |
	grep -E "$KERNEL_BAD")
[ -n "$bad" ] && echo "$bad" | sed 's/^/# L2: /'
check "no kernel warning in the guests" sh -c \
	"[ -z '$(echo "$bad" | tr -d "'")' ] && grep -q '@@L2_DMESG_END' $D/tmp/q13a.console"
stop "$qa" "$qb"
[ -e "/sys/bus/mdev/devices/$ub" ] && echo 1 >"/sys/bus/mdev/devices/$ub/remove"
check "no vGPU left" sh -c "[ -z \"\$(ls /sys/bus/mdev/devices)\" ]"
ktap_finished
