#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Removing a vGPU, unbinding its GPU's PCI function or unloading gvt_rs_sim
# while a process holds the vGPU's VFIO device: the removal waits for the
# holder, asks it to let go through its REQ eventfd (again every 10 s), and
# completes once the holder closed the device; `fuser`'s way (the files in
# /proc/PID/fd) finds the holder. A bound device file holds the module
# (rmmod is refused); a file of /dev/vfio/devices/ that is not bound to an
# iommufd does not, so rmmod starts and waits. After each removal nothing of
# the vGPU, its mdev parent and types or the module may be used: on the
# KASAN kernel (CONFIG_DEBUG_KOBJECT_RELEASE delays every release by 1-4 s)
# a late release into freed memory or unloaded code is reported for sure.
# What an admin sees: Documentation/gvt-rs/admin-guide.rst, "Removal".

. "$(dirname "$0")/gvt_rs_lib.sh"

HOLD=$(dirname "$0")/gvt_vfio_hold
PCI_TYPES=$GVT_PCI_DEV/mdev_supported_types
T=/tmp/gvt_rs_removal

ktap_print_header
ktap_set_plan 37

# hold MODE UUID NAME [gvt_vfio_hold options]: a process holds the vGPU's
# VFIO device (HOLD_PID), through the group, an iommufd or an unbound file
# of /dev/vfio/devices/; its request count goes to $T.NAME.reqs with -q.
hold() {
	mode=$1 u=$2 name=$3
	shift 3
	rm -f "$T.$name.ready" "$T.$name.reqs"
	"$HOLD" -m "$mode" -r "$T.$name.ready" "$@" "$u" >"$T.$name.out" 2>&1 &
	HOLD_PID=$!
	wait_until "$GVT_WAIT_S" guest_opened "$T.$name.ready" "$HOLD_PID"
	[ -e "$T.$name.ready" ] && return 0
	sed 's/^/# /' "$T.$name.out"
	ktap_exit_fail_msg "setup: gvt_vfio_hold -m $mode does not hold vGPU $u"
}

# let_go: the holder closes the device and exits cleanly.
let_go() {
	kill "$HOLD_PID" && wait "$HOLD_PID"
}

# requests NAME N: the holder NAME has received at least N device requests.
requests() {
	[ "$(cat "$T.$1.reqs" 2>/dev/null || echo 0)" -ge "$2" ]
}

# proc_state PID: the state letter of a process (S: waiting, D: waiting
# uninterruptibly).
proc_state() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1
}

# uninterruptible PID: the process waits uninterruptibly (D).
uninterruptible() {
	[ "$(proc_state "$1")" = D ]
}

# in_unregister PID: the process waits in vfio_unregister_group_dev() for
# the users of a VFIO device, as /proc/PID/stack shows.
in_unregister() {
	running "$1" && case $(proc_state "$1") in S | D) true ;; *) false ;; esac &&
		grep -q vfio_unregister_group_dev "/proc/$1/stack"
}

# blocked PID PATH: the removal PID waits for the VFIO device's users, and
# PATH (the vGPU's directory under its parent device: /sys/bus/mdev/devices/
# no longer lists it) is still there.
blocked() {
	wait_until "$GVT_WAIT_S" in_unregister "$1" && [ -e "$2" ]
}

exited() {
	! running "$1"
}

# finished PID: the background removal PID returns, with status 0.
finished() {
	wait_until "$GVT_WAIT_S" exited "$1" || return 1
	wait "$1"
}

# show_wait PID: where the removal waits, for the log.
show_wait() {
	stack=$(tr '\n' ' ' <"/proc/$1/stack" 2>/dev/null | cut -c1-300)
	echo "# pid $1 ($(proc_state "$1")): $stack"
}

# holders PATH: the processes that have PATH open, as `fuser PATH` prints
# them (busybox has no fuser).
holders() {
	for fd in /proc/[0-9]*/fd/*; do
		if [ "$(readlink "$fd" 2>/dev/null)" = "$1" ]; then
			p=${fd#/proc/}
			echo "${p%%/*}"
		fi
	done | sort -u
}

# cdev UUID: the vGPU's /dev/vfio/devices/vfioN.
cdev() {
	echo "/dev/vfio/devices/$(ls "/sys/bus/mdev/devices/$1/vfio-dev")"
}

# released N TYPE_DIR: the VFIO device that had number N (/dev/vfio/devices/
# vfioN) was released, not only unregistered. The VFIO core gives a new
# device the lowest free number, and frees it at the release: so vGPUs
# created now (in TYPE_DIR, then removed) get N before any number above it.
released() {
	made='' got=''
	while nu=$(new_uuid) && echo "$nu" >"$2/create"; do
		made="$made $nu"
		nc=$(cdev "$nu")
		got=${nc#/dev/vfio/devices/vfio}
		[ "$got" -ge "$1" ] && break
	done
	for x in $made; do
		echo 1 >"/sys/bus/mdev/devices/$x/remove"
	done
	echo "# new vGPUs got numbers up to vfio$got; the removed one had vfio$1"
	[ "$got" = "$1" ]
}

# Kernel reports since the start: written to the log with a mark first.
echo "gvt_rs_removal: start" >/dev/kmsg
REPORTS='BUG:|WARNING:|KASAN|Oops|refcount_t:|general protection|unable to handle'
REPORTS="$REPORTS|list_(add|del) corruption"
reports() {
	dmesg | sed -n '/gvt_rs_removal: start/,$p' | grep -E "$REPORTS"
}

check "gvt_rs ready" sim_ready
# The device directory of gvtsim0 (the mdev_bus link goes first on rmmod).
PARENT_DIR=$(readlink -f "$GVT_PARENT")

# 1. A VMM (the legacy container, as QEMU) ignores the request to give the
# vGPU back: the removal asks again every 10 s and returns once it is closed.
a8=$(cat "$(type_dir GVTg_V5_8)/available_instances")
u=$(vgpu_create GVTg_V5_8)
check "a vGPU has a file in /dev/vfio/devices/ (CONFIG_VFIO_DEVICE_CDEV), and /dev/iommu exists" \
	sh -c "[ -c $(cdev "$u") ] && [ -c /dev/iommu ]"
hold group "$u" group -q "$T.group.reqs"
grp=$(basename "$(readlink "/sys/bus/mdev/devices/$u/iommu_group")")
echo "# vGPU $u: group /dev/vfio/$grp, holder $HOLD_PID"
check "the holder has /dev/vfio/$grp open" test "$(holders "/dev/vfio/$grp")" = "$HOLD_PID"
# The writer catches SIGUSR1 (below) and is not ended by it.
(
	trap 'echo "# remove: SIGUSR1"' USR1
	echo 1 >"/sys/bus/mdev/devices/$u/remove"
) &
rm_pid=$!
check "remove asks the holder to let go (REQ eventfd)" wait_until "$GVT_WAIT_S" requests group 1
check "remove waits while the vGPU is held" blocked "$rm_pid" "$PARENT_DIR/$u"
show_wait "$rm_pid"
echo "# meanwhile /sys/bus/mdev/devices/$u: $(ls -d "/sys/bus/mdev/devices/$u" 2>&1)"
check "the request comes again (every 10 s)" wait_until "$GVT_WAIT_S" requests group 2
check "remove still waits" blocked "$rm_pid" "$PARENT_DIR/$u"
kill -USR1 "$rm_pid"
check "a signal does not end the wait: it goes on uninterruptibly (D)" \
	wait_until "$GVT_WAIT_S" uninterruptible "$rm_pid"
check "and the kernel says so" sh -c \
	"dmesg | grep -q 'Device is currently in use, task .* blocked until device is released'"
check "the holder closes the device" let_go
check "remove returns 0 once the device is closed" finished "$rm_pid"
check "the vGPU is gone, its resources back" sh -c \
	"[ ! -e /sys/bus/mdev/devices/$u ] &&
	 [ \$(cat $(type_dir GVTg_V5_8)/available_instances) = $a8 ]"

# 2. Bound to an iommufd (QEMU's other way): the module is held, so rmmod is
# refused; unbinding the GPU's PCI function waits as removal does.
check "the PCI function becomes a simulated GPU" pci_gpu_bind
u=$(new_uuid)
echo "$u" >"$PCI_TYPES/gvtsim-GVTg_V5_8/create"
hold iommufd "$u" iommufd -q "$T.iommufd.reqs"
c=$(cdev "$u")
check "the holder has $c open" test "$(holders "$c")" = "$HOLD_PID"
rmmod gvt_rs_sim 2>"$T.rmmod.err"
rc=$?
echo "# rmmod: $(cat "$T.rmmod.err"); refcnt $(cat /sys/module/gvt_rs_sim/refcnt)"
check "the bound file holds the module: rmmod is refused" sh -c \
	"[ $rc != 0 ] && [ \$(cat /sys/module/gvt_rs_sim/refcnt) -ge 1 ] &&
	 grep -q '^gvt_rs_sim .* Live' /proc/modules"
(echo "$GVT_PCI_ADDR" >"$GVT_PCI_DEV/driver/unbind") &
unbind_pid=$!
check "PCI unbind asks the holder to let go" wait_until "$GVT_WAIT_S" requests iommufd 1
check "PCI unbind waits while the vGPU is held" blocked "$unbind_pid" "$GVT_PCI_DEV/$u"
show_wait "$unbind_pid"
check "the holder closes the device" let_go
check "PCI unbind returns 0 once the device is closed" finished "$unbind_pid"
check "the vGPU and the mdev parent are gone" sh -c \
	"[ ! -e /sys/bus/mdev/devices/$u ] && [ ! -e $PCI_TYPES ] && [ ! -e $GVT_PCI_DEV/driver ]"

# 3. An unbound file of /dev/vfio/devices/ holds no module reference: rmmod
# starts (the module shows Unloading), waits, and finishes once it is closed.
u=$(vgpu_create GVTg_V5_8)
hold unbound "$u" unbound
c=$(cdev "$u")
check "the holder has $c open" test "$(holders "$c")" = "$HOLD_PID"
rmmod gvt_rs_sim &
rmmod_pid=$!
check "rmmod starts: gvt_rs_sim is Unloading" \
	wait_until "$GVT_WAIT_S" grep -q '^gvt_rs_sim .* Unloading' /proc/modules
check "rmmod waits while the file is open" blocked "$rmmod_pid" "$PARENT_DIR/$u"
show_wait "$rmmod_pid"
echo "# meanwhile $PARENT_DIR/$u/:" "$PARENT_DIR/$u"/*
check "the holder is found: its file shows as $c (deleted)" \
	test "$(holders "$c (deleted)")" = "$HOLD_PID"
rmmod gvt_rs_sim 2>"$T.rmmod2.err"
rc=$?
echo "# a second rmmod: $(cat "$T.rmmod2.err"); refcnt $(cat /sys/module/gvt_rs_sim/refcnt)"
insmod "$(find "/lib/modules/$(uname -r)" -name gvt_rs_sim.ko)" 2>"$T.insmod.err"
echo "# insmod meanwhile: status $?, $(cat "$T.insmod.err")"
check "a second rmmod fails (busy) and changes nothing" sh -c \
	"[ $rc != 0 ] && grep -q busy $T.rmmod2.err &&
	 grep -q '^gvt_rs_sim .* Unloading' /proc/modules"
check "the holder closes the file" let_go
check "rmmod returns 0 once the file is closed" finished "$rmmod_pid"
check "gvt_rs_sim is unloaded" sh -c "! grep -q '^gvt_rs_sim ' /proc/modules"
modprobe gvt_rs_sim
check "rmmod returned after the file's VFIO device was released" \
	released "${c#/dev/vfio/devices/vfio}" "$(type_dir GVTg_V5_8)"

# 4. The same file while the PCI function is unbound: the mdev parent and its
# types go while the VFIO device is still being released.
pci_gpu_bind
u=$(new_uuid)
echo "$u" >"$PCI_TYPES/gvtsim-GVTg_V5_4/create"
hold unbound "$u" unbound_pci
c=$(cdev "$u")
(echo "$GVT_PCI_ADDR" >"$GVT_PCI_DEV/driver/unbind") &
unbind_pid=$!
check "PCI unbind waits while an unbound file is open" \
	blocked "$unbind_pid" "$GVT_PCI_DEV/$u"
check "the holder closes the file" let_go
check "PCI unbind returns 0 once the file is closed" finished "$unbind_pid"
check "PCI unbind returned after the file's VFIO device was released" \
	released "${c#/dev/vfio/devices/vfio}" "$(type_dir GVTg_V5_8)"

# 5. The same file while the vGPU is removed, and the module unloaded as soon
# as the removal returned.
u=$(vgpu_create GVTg_V5_2)
hold unbound "$u" unbound_rm
(echo 1 >"/sys/bus/mdev/devices/$u/remove") &
rm_pid=$!
check "remove waits while an unbound file is open" blocked "$rm_pid" "$PARENT_DIR/$u"
let_go
check "remove returns 0 once the file is closed" finished "$rm_pid"
check "rmmod right after the removal returned" rmmod gvt_rs_sim

# With CONFIG_DEBUG_KOBJECT_RELEASE (which logs each delayed release) late
# releases come within seconds (1-4 s each, some in a chain): give them the
# time to report here rather than in a later test.
if dmesg | grep -q 'kobject_release, parent .* (delayed'; then
	sleep 12
fi
r=$(reports)
[ -z "$r" ] || echo "$r" | sed 's/^/# /'
check "no kernel report (KASAN, BUG, WARNING, refcount) since the test started" test -z "$r"

modprobe gvt_rs_sim
pci_gpu_unbind 2>/dev/null
ktap_finished
