# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Shared helpers of the gvt-rs shell selftests (sourced).

# shellcheck source=/dev/null # the kernel's, not in this directory
. "$(dirname "$0")/../../kselftest/ktap_helpers.sh"

# The class of gvt-rs's GPU devices: /sys/class/gvt_rs/<gpu>/ has a GPU's
# files. The module's version is the kernel's file of every module.
GVT_SYSFS=/sys/class/gvt_rs
# shellcheck disable=SC2034 # read by the tests that source this file
GVT_VERSION=/sys/module/gvt_rs/version

# check DESCRIPTION COMMAND...: one KTAP result from a command's status.
check() {
	desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

# write_fails ERRNO_TEXT FILE VALUE: the write must fail, with the given
# message fragment (e.g. "Invalid argument"), and leave the file unchanged.
write_fails() {
	expect=$1 file=$2 value=$3
	before=$(cat "$file")
	# busybox echo reports a failed write(); its printf does not.
	# shellcheck disable=SC3037 # busybox echo has -n
	err=$( (echo -n "$value" >"$file") 2>&1) && return 1
	case "$err" in *"$expect"*) ;; *) echo "# $file <- '$value': $err" ; return 1 ;; esac
	[ "$(cat "$file")" = "$before" ]
}

# set_attr FILE VALUE: a setup write that must succeed; a test whose setup
# did not apply would test something else, so it stops here.
set_attr() {
	# shellcheck disable=SC3037 # busybox echo has -n (see write_fails)
	err=$( (echo -n "$2" >"$1") 2>&1) && return 0
	ktap_exit_fail_msg "setup: $1 <- '$2' failed: $err"
}

# uptime_s: seconds since boot (wall clock; a counted loop would stretch,
# every process start being slow under TCG).
uptime_s() {
	cut -d. -f1 /proc/uptime
}

# progress MESSAGE: a line timestamped from the test's start, so that a slow
# run shows where its time went.
GVT_T0=$(uptime_s)
progress() {
	echo "# +$(($(uptime_s) - GVT_T0)) s: $*"
}

# GVT_WAIT_S: how long a test waits for something that the load on the
# machine can only delay (a guest opening its device, queued work
# completing). A wait that is answered returns at once: the limit only ends
# one whose answer never comes, so it is far beyond any stall of a loaded
# TCG VM, and reaching it is a failure that names what was waited for.
GVT_WAIT_S=${GVT_WAIT_S:-120}

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds
# (status 0) or SECONDS of uptime passed (status 1, after a last try).
wait_until() {
	_wu_end=$(($(uptime_s) + $1 + 1))
	shift
	until "$@"; do
		if [ "$(uptime_s)" -ge "$_wu_end" ]; then
			"$@"
			return
		fi
		sleep 0.1
	done
}

# running PID: the process has not exited. (kill -0 also succeeds on a
# child that exited and that the shell has not waited for yet, a zombie.)
running() {
	[ -r "/proc/$1/stat" ] || return 1
	read -r _st 2>/dev/null <"/proc/$1/stat" || return 1
	_st=${_st##*) }
	[ "${_st%% *}" != Z ]
}

module_loaded() {
	grep -q "^$1 " /proc/modules
}

# count_paths PATH...: how many of the paths exist (an unmatched glob
# counts 0), as `ls -d PATH... | wc -l` would say.
count_paths() {
	n=0
	for p in "$@"; do
		if [ -e "$p" ] || [ -L "$p" ]; then
			n=$((n + 1))
		fi
	done
	echo "$n"
}

# ---- L2 guests ----------------------------------------------------------------

# The kernel command line of an L2 guest, the test kernel booted by a QEMU
# or libvirt in this VM: scripts/vm/l2-qemu's, which says why each
# argument is there.
L2_CMDLINE="console=ttyS0 loglevel=4 panic=-1 acpi=noirq no_timer_check kunit.enable=0"
L2_CMDLINE="$L2_CMDLINE kmemleak=off no_debug_objects"

# ---- simulated GPU (gvt-rs sim provider) -------------------------------------

GVT_PARENT=/sys/class/mdev_bus/gvtsim0
GVT_GPU=$GVT_SYSFS/gvtsim0
GVT_GUEST=$(dirname "$0")/gvt_guest

# GVT_VFIO_MODE: how gvt_guest and guest() open a vGPU: through the legacy
# VFIO container and group (container, the default), or as QEMU 8.2 and
# later do, through the device's /dev/vfio/devices/vfioN and /dev/iommu
# (iommufd, gvt_guest -I).
GVT_VFIO_MODE=${GVT_VFIO_MODE:-container}

# gvt_guest [gvt_guest options]: runs the guest emulator in GVT_VFIO_MODE
# (in the foreground: in the background, $! would be a subshell's).
gvt_guest() {
	case $GVT_VFIO_MODE in
	container) "$GVT_GUEST" "$@" ;;
	iommufd) "$GVT_GUEST" -I "$@" ;;
	*)
		echo "# GVT_VFIO_MODE=$GVT_VFIO_MODE: neither container nor iommufd" >&2
		return 2
		;;
	esac
}

# type_dir TYPE: the mdev type directory, e.g. type_dir GVTg_V5_4.
type_dir() {
	echo "$GVT_PARENT/mdev_supported_types/gvtsim-$1"
}

# new_uuid: a fresh UUID. A counter kept in /tmp (so subshells work); each
# number is claimed with mkdir, which only one caller can win, so shells
# creating vGPUs at the same time never pick the same one.
new_uuid() {
	mkdir -p /tmp/.gvt_rs_uuid.d
	n=$(cat /tmp/.gvt_rs_uuid 2>/dev/null || echo 0)
	n=$((n + 1))
	while ! mkdir "/tmp/.gvt_rs_uuid.d/$n" 2>/dev/null; do
		n=$((n + 1))
	done
	echo "$n" >/tmp/.gvt_rs_uuid
	printf '%08x-0000-4000-8000-%012x\n' "$n" "$n"
}

# vgpu_create TYPE: creates a vGPU and prints its UUID (fails if it cannot).
vgpu_create() {
	u=$(new_uuid)
	echo "$u" >"$(type_dir "$1")/create" || return 1
	echo "$u"
}

# vgpu_remove UUID
vgpu_remove() {
	echo 1 >"/sys/bus/mdev/devices/$1/remove"
}

# vgpu_attr UUID FILE: a per-vGPU gvt-rs file.
vgpu_attr() {
	echo "/sys/bus/mdev/devices/$1/gvt_rs/$2"
}

# remove_all_vgpus: removes every vGPU of the simulated GPU.
remove_all_vgpus() {
	for d in "$GVT_PARENT"/mdev_supported_types/*/devices/*; do
		[ -e "$d" ] && echo 1 >"$d/remove"
	done
	return 0
}

# sim_ready: gvt_rs is loaded with its simulated GPU and no vGPU.
sim_ready() {
	module_loaded gvt_rs || modprobe gvt_rs || return 1
	remove_all_vgpus
	set_attr "$GVT_GPU/gm_allocator" static
	set_attr "$GVT_GPU/policy" tbs
	test -d "$GVT_PARENT"
}

# guest UUID OUTFILE [gvt_guest options]: runs a guest emulator in the
# background, its report in OUTFILE, and waits until its device is open
# (GUEST_PID is its pid). A guest that exits first, or does not get there
# within GVT_WAIT_S, fails the test: what follows would test nothing.
guest() {
	u=$1 out=$2
	shift 2
	rm -f "$out.ready"
	# Started directly, not through gvt_guest(): GUEST_PID is the guest's.
	if [ "$GVT_VFIO_MODE" = iommufd ]; then
		"$GVT_GUEST" -I -r "$out.ready" "$@" "$u" >"$out" 2>&1 &
	else
		"$GVT_GUEST" -r "$out.ready" "$@" "$u" >"$out" 2>&1 &
	fi
	GUEST_PID=$!
	wait_until "$GVT_WAIT_S" guest_opened "$out.ready" "$GUEST_PID"
	[ -e "$out.ready" ] && return 0
	sed 's/^/# /' "$out"
	if running "$GUEST_PID"; then
		ktap_test_fail "the guest emulator opens vGPU $u within $GVT_WAIT_S s"
	else
		ktap_test_fail "the guest emulator opens vGPU $u (it exited first)"
	fi
	ktap_exit_fail_msg "setup: no guest on vGPU $u"
}

# guest_opened READY_FILE PID: the guest opened its device, or exited.
guest_opened() {
	[ -e "$1" ] || ! running "$2"
}

# guests_go FILE: starts the runs of the guests started with -w FILE.
guests_go() {
	: >"$1"
}

# gpu_drained [GPU_DIR]: nothing in flight on the GPU (default gvtsim0).
gpu_drained() {
	[ "$(cat "${1:-$GVT_GPU}/inflight")" = 0 ]
}

# report_field OUTFILE KEY: a key=value field of a guest report.
report_field() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$1" | tail -1
}

# ---- the simulated GPU on a PCI function -------------------------------------

# The test VM's spare PCI function (QEMU's pci-testdev, see scripts/vm-run.sh).
GVT_PCI_ADDR=${GVT_PCI_ADDR:-0000:00:10.0}
GVT_PCI_DEV=/sys/bus/pci/devices/$GVT_PCI_ADDR

# pci_driver ADDR: the name of the driver bound to a PCI function, if any.
pci_driver() {
	d=$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null) || return 0
	basename "$d"
}

# The only kind of function the tests take: QEMU's pci-testdev, a device
# for tests that no driver claims. Any other function at GVT_PCI_ADDR (on a
# real host, perhaps a disk or a NIC) is left alone.
GVT_PCI_ID=0x1b36:0x0005

# spare_pci: the spare function exists, is a pci-testdev, and is unbound or
# bound to gvtsim.
spare_pci() {
	[ -d "$GVT_PCI_DEV" ] || return 1
	[ "$(cat "$GVT_PCI_DEV/vendor"):$(cat "$GVT_PCI_DEV/device")" = "$GVT_PCI_ID" ] ||
		return 1
	case "$(pci_driver "$GVT_PCI_ADDR")" in
	'' | gvtsim) return 0 ;;
	esac
	return 1
}

# need_spare_pci: before a test's plan, skips the whole test, saying why,
# unless the spare function is one the tests may take (spare_pci).
need_spare_pci() {
	spare_pci && return 0
	ktap_skip_all "$GVT_PCI_ADDR is not an unclaimed QEMU pci-testdev ($GVT_PCI_ID): no PCI function to make a simulated GPU (set GVT_PCI_ADDR to one)"
	exit "$KSFT_SKIP"
}

# pci_gpu_bind: makes the spare function a simulated GPU, the way an admin
# binds vfio-pci (driver_override, then drivers_probe).
pci_gpu_bind() {
	spare_pci || return 1
	[ "$(pci_driver "$GVT_PCI_ADDR")" = gvtsim ] && return 0
	echo gvtsim >"$GVT_PCI_DEV/driver_override" &&
		echo "$GVT_PCI_ADDR" >/sys/bus/pci/drivers_probe &&
		[ "$(pci_driver "$GVT_PCI_ADDR")" = gvtsim ]
}

# pci_gpu_unbind: unbinds the spare function from gvtsim (removing its
# vGPUs) and clears its driver_override; a function that is not the tests'
# is not touched.
pci_gpu_unbind() {
	spare_pci || return 0
	[ "$(pci_driver "$GVT_PCI_ADDR")" = gvtsim ] &&
		echo "$GVT_PCI_ADDR" >"$GVT_PCI_DEV/driver/unbind"
	echo >"$GVT_PCI_DEV/driver_override"
}

# ---- copies (gvt_guest -p copy) ----------------------------------------------

# copies_ok OUTFILE [MIN_FAILED]: the copy report of a gvt_guest run, or of
# gvt_gpu_client in a guest (the profile=copy line) holds its counts:
# copies completed (each one verified against its pattern's checksum, none
# wrong), every submitted copy either completed or failed by a fault or a
# reset, at least one completed and at
# least MIN_FAILED (default 0) failed.
copies_ok() {
	line=$(grep 'profile=copy ' "$1" | tail -1)
	field() {
		echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
	}
	s=$(field submitted) c=$(field completed) v=$(field verified)
	f=$(field failed) w=$(field wrong) x=$(field unexpected_faults)
	echo "# copies: submitted=${s:-?} completed=${c:-?} verified=${v:-?}" \
		"failed=${f:-?} wrong=${w:-?} unexpected_faults=${x:-?}"
	[ -n "$s" ] && [ -n "$c" ] && [ -n "$v" ] && [ -n "$f" ] && [ -n "$w" ] || return 1
	# gvt_gpu_client, in a guest, has no unexpected_faults field.
	[ "$w" = 0 ] && [ "${x:-0}" = 0 ] && [ "$v" = "$c" ] && [ "$c" -gt 0 ] &&
		[ "$s" = $((c + f)) ] && [ "$f" -ge "${2:-0}" ]
}

# l2_copies_ok CONSOLE REMOVED: the copy run of gvt_gpu_client in a QEMU
# guest (a step -p,copy,... of gvt_l2.run, scripts/vm/l2-init) ended as
# REMOVED says (removed=0: at its time; removed=1: by the removal of its
# vGPU), and its counts hold (copies_ok).
l2_copies_ok() {
	grep "^gvt_gpu_client: profile=copy" "$1" | grep -q " $2 " && copies_ok "$1"
}

# l2_kernel_bad CONSOLE...: the lines of QEMU guests' kernel logs (what
# scripts/vm/l2-init prints between @@L2_DMESG_BEGIN and @@L2_DMESG_END)
# that scripts/vm_results.py counts as kernel errors in the test VM's log.
l2_kernel_bad() {
	_kb='WARNING: .* at |cut here|BUG: |kernel BUG at|Oops|Kernel panic|panicked at'
	_kb="$_kb|general protection fault|possible (circular|recursive) locking"
	_kb="$_kb|inconsistent lock state|suspicious RCU usage|lock held when returning"
	_kb="$_kb|lockdep is turned off|scheduling while atomic|UBSAN:|blocked for more than"
	_kb="$_kb|sleeping function called from invalid context"
	sed -n '/@@L2_DMESG_BEGIN/,/@@L2_DMESG_END/p' "$@" | grep -E "$_kb|Call Trace"
}
