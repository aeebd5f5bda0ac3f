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
# (read, not cat: tests poll it every second, and every process started is
# slow under TCG). An empty PID is not running.
running() {
	[ -n "$1" ] || return 1
	{ read -r _st <"/proc/$1/stat"; } 2>/dev/null || return 1
	_st=${_st##*) }
	[ "${_st%% *}" != Z ]
}

# none_running PID...: no process of the list runs.
none_running() {
	for _p in "$@"; do
		running "$_p" && return 1
	done
	return 0
}

# stop PID...: SIGTERM to those of the processes still running, SIGKILL to
# those left 10 s later; returns when none runs (or 10 s after the SIGKILL).
stop() {
	for _sig in TERM KILL; do
		none_running "$@" && return 0
		for _p in "$@"; do
			running "$_p" && kill -s "$_sig" "$_p" 2>/dev/null
		done
		wait_until 10 none_running "$@"
	done
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

# vgpu_stat UUID FILE: the value of a per-vGPU gvt-rs file.
vgpu_stat() {
	cat "$(vgpu_attr "$1" "$2")"
}

# vgpus_stat FILE UUID...: each vGPU's value of FILE, space separated.
vgpus_stat() {
	_f=$1 _out=""
	shift
	for _u in "$@"; do _out="$_out $(vgpu_stat "$_u" "$_f")"; done
	echo "$_out"
}

# vgpus_sum FILE UUID...: the sum of the vGPUs' values of FILE.
vgpus_sum() {
	_f=$1 _s=0
	shift
	for _u in "$@"; do _s=$((_s + $(vgpu_stat "$_u" "$_f"))); done
	echo "$_s"
}

# vgpus_create TYPE COUNT: creates COUNT vGPUs of TYPE, their UUIDs in
# VGPUS (those created before a refusal, which fails).
vgpus_create() {
	VGPUS=""
	_n=0
	while [ "$_n" -lt "$2" ]; do
		_u=$(vgpu_create "$1") || return 1
		VGPUS="$VGPUS $_u"
		_n=$((_n + 1))
	done
}

# vgpus_remove UUID...: removes the vGPUs.
vgpus_remove() {
	for _u in "$@"; do vgpu_remove "$_u"; done
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
	module_loaded gvt_rs_sim || modprobe gvt_rs_sim || return 1
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
	guest_start "$@"
	guests_opened
}

# guest_start UUID OUTFILE [gvt_guest options]: starts a guest emulator as
# guest() does (GUEST_PID is its pid) without waiting for it: many guests
# open their vGPUs at once, and guests_opened waits for all of them.
guest_start() {
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
	GUESTS_STARTING="$GUESTS_STARTING $u,$out,$GUEST_PID"
}

# guests_opened: waits until every guest guest_start started has its
# device open, each within GVT_WAIT_S of the one before, and fails the
# test as guest() does for the first that did not get there.
guests_opened() {
	for _g in $GUESTS_STARTING; do
		_u=${_g%%,*} _p=${_g##*,}
		_o=${_g#*,}
		_o=${_o%,*}
		wait_until "$GVT_WAIT_S" guest_opened "$_o.ready" "$_p"
		[ -e "$_o.ready" ] && continue
		GUESTS_STARTING=""
		sed 's/^/# /' "$_o"
		if running "$_p"; then
			ktap_test_fail "the guest emulator opens vGPU $_u within $GVT_WAIT_S s"
		else
			ktap_test_fail "the guest emulator opens vGPU $_u (it exited first)"
		fi
		ktap_exit_fail_msg "setup: no guest on vGPU $_u"
	done
	GUESTS_STARTING=""
}

# guest_opened READY_FILE PID: the guest opened its device, or exited.
guest_opened() {
	[ -e "$1" ] || ! running "$2"
}

# guests_go FILE: starts the runs of the guests started with -w FILE.
guests_go() {
	: >"$1"
}

# gpu_stats_file [GPU_DIR]: the GPU's statistics in debugfs (default
# gvtsim0): a "name value" line per figure, read at one moment.
gpu_stats_file() {
	echo "/sys/kernel/debug/gvt_rs/$(basename "${1:-$GVT_GPU}")/stats"
}

# gpu_stat NAME [GPU_DIR]: a statistic of the GPU (default gvtsim0); fails
# if the GPU has no such figure.
gpu_stat() {
	awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' \
		"$(gpu_stats_file "$2")"
}

# gpu_drained [GPU_DIR]: nothing in flight on the GPU (default gvtsim0).
gpu_drained() {
	[ "$(gpu_stat inflight "$1")" = 0 ]
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

# weighted_shares WEIGHTS BEFORE AFTER: how the growth of a counter
# (space-separated per vGPU, BEFORE and AFTER a run) divides between vGPUs
# of the WEIGHTS: min/max over the vGPUs of (share of the summed growth) /
# (weight's share), the smallest and largest of those, the total growth in
# ms, min/max over the weights of the mean of their vGPUs', and each vGPU's
# share (colon-separated); "unmeasured" if a counter is not a number or
# nothing grew.
weighted_shares() {
	echo "$1|$2|$3" | awk -F'|' '{
		n = split($1, w, " "); split($2, b, " "); split($3, a, " ")
		ok = 1; t = 0; tw = 0
		for (i = 1; i <= n; i++) {
			if (b[i] !~ /^[0-9]+$/ || a[i] !~ /^[0-9]+$/) ok = 0
			d[i] = a[i] - b[i]; t += d[i]; tw += w[i]
		}
		if (!ok || t <= 0) { print "unmeasured"; exit }
		lo = -1; hi = 0; shares = ""
		for (i = 1; i <= n; i++) {
			r = (d[i] / t) / (w[i] / tw)
			if (lo < 0 || r < lo) lo = r
			if (r > hi) hi = r
			cs[w[i]] += r; cn[w[i]]++
			shares = shares sprintf("%s%.3f", i > 1 ? ":" : "", d[i] / t)
		}
		clo = -1; chi = 0
		for (k in cs) {
			m = cs[k] / cn[k]
			if (clo < 0 || m < clo) clo = m
			if (m > chi) chi = m
		}
		printf "%.4f %.4f %.4f %.1f %.4f %s\n", lo / hi, lo, hi, t / 1e6, clo / chi,
			shares }'
}

# The Debian roots: make check's first VM boot has Debian 12's at /debian,
# its second Debian 13's at /debian13 (scripts/vm-run.sh). A test sets D to
# the root and runs the root's programs chrooted in it, with the VM's /proc,
# /sys and /dev, and /l2 (the L2 guests' kernel and initramfs) mounted there.

# in_debian PROGRAM...: a program of the root $D, named by its path (the
# VM's busybox chroot and env run a busybox applet for a bare name).
in_debian() {
	chroot "$D" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
}

# debian_mounts: the mount points at or below $D, the latest first (a
# mount's submounts come after it in /proc/self/mounts).
debian_mounts() {
	awk -v d="$D" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts |
		sed -n '1!G;h;$p'
}

# debian_procs: the processes chrooted in $D (what a test started there:
# QEMU, libvirt's daemons, udevd, and their children).
debian_procs() {
	for _p in /proc/[0-9]*; do
		[ "$(readlink "$_p/root" 2>/dev/null)" = "$D" ] && echo "${_p#/proc/}"
	done
}

# debian_release: ends whatever runs in the root $D (stop) and undoes its
# mounts, deepest first; a mount still busy is detached (umount -l), so
# that the next test mounts afresh whatever this one left behind. Says
# what it stopped; status 1 if a mount is left.
debian_release() {
	_procs=$(debian_procs)
	if [ -n "$_procs" ]; then
		_names=$(for _p in $_procs; do cat "/proc/$_p/comm"; done 2>/dev/null | tr '\n' ' ')
		echo "# $D: stopping what still runs in it: $_names"
		# shellcheck disable=SC2086 # the pids are words
		stop $_procs
	fi
	for _m in $(debian_mounts); do
		umount "$_m" 2>/dev/null || umount -l "$_m" || return 1
	done
	[ -z "$(debian_mounts)" ]
}

# debian_mount qemu|host: mounts the VM's /proc, /sys, /dev and /l2 in the
# root $D, after releasing (debian_release) what an earlier test left in it,
# which it names: what QEMU run chrooted there needs. With host, the root is
# also set up as a host's libvirt needs it: a mount point of its own (the
# QEMU driver makes it a slave mount in the namespace it runs QEMU in),
# /dev/pts, /dev/shm, tmpfs on /run and /tmp, and the links a booting
# system makes in /dev (mdevctl reads the JSON libvirt passes it from
# /dev/stdin; the VM's init may have made some).
debian_mount() {
	_left=$(debian_mounts)
	[ -z "$_left" ] ||
		echo "# $D: mounts left by an earlier test, undone: $(echo "$_left" | tr '\n' ' ')"
	debian_release || return 1
	case "$1" in
	qemu | host) ;;
	*) echo "# debian_mount: qemu or host, not '$1'" && return 1 ;;
	esac
	if [ "$1" = host ]; then
		mount --bind "$D" "$D" || return 1
	fi
	mount -t proc proc "$D/proc" && mount -t sysfs sysfs "$D/sys" &&
		mount -t devtmpfs devtmpfs "$D/dev" && mkdir -p "$D/l2" &&
		mount --bind /l2 "$D/l2" || return 1
	[ "$1" = host ] || return 0
	mkdir -p "$D/dev/pts" "$D/dev/shm" &&
		mount -t devpts -o ptmxmode=0666 devpts "$D/dev/pts" &&
		mount -t tmpfs tmpfs "$D/dev/shm" && mount -t tmpfs tmpfs "$D/run" &&
		mount -t tmpfs tmpfs "$D/tmp" || return 1
	for _l in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 \
		stderr:/proc/self/fd/2; do
		[ -L "$D/dev/${_l%%:*}" ] || ln -s "${_l#*:}" "$D/dev/${_l%%:*}" || return 1
	done
}

# debian_guest NAME APPEND QEMU-ARGS...: starts an L2 guest (scripts/vm/
# l2-init) with the root's QEMU, the kernel command line L2_CMDLINE APPEND
# and QEMU-ARGS (the vGPU's device, -incoming, a QMP monitor...); prints
# the command line as a comment and sets pid to QEMU's. Its console is
# /tmp/NAME.console in the root, its standard error /tmp/NAME.err; what is
# written to the FIFO /tmp/NAME.in is typed on the console (QEMU's pipe
# backend reads PATH.in and writes PATH.out: links to the FIFO and the
# console file, as scripts/vm/l2-qemu).
debian_guest() {
	_name=$1 _append=$2
	shift 2
	rm -f "$D/tmp/$_name.console" "$D/tmp/$_name.in" "$D/tmp/$_name.err" \
		"$D/tmp/$_name.console.pipe.in" "$D/tmp/$_name.console.pipe.out"
	: >"$D/tmp/$_name.console"
	mkfifo "$D/tmp/$_name.in"
	ln -s "/tmp/$_name.in" "$D/tmp/$_name.console.pipe.in"
	ln -s "/tmp/$_name.console" "$D/tmp/$_name.console.pipe.out"
	set -- /usr/bin/qemu-system-x86_64 -accel tcg -machine pc -m 160 -smp 1 \
		-nodefaults -no-reboot -display none -monitor none \
		-chardev "pipe,id=console,path=/tmp/$_name.console.pipe" -serial chardev:console \
		-kernel /l2/bzImage -initrd /l2/initramfs.cpio -append "$L2_CMDLINE $_append" "$@"
	echo "# $_name: $*"
	# Not through in_debian: a function in the background is a subshell,
	# whose child QEMU would be; chroot and env exec, so $! is QEMU.
	chroot "$D" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@" \
		</dev/null >/dev/null 2>"$D/tmp/$_name.err" &
	# shellcheck disable=SC2034 # the caller's
	pid=$!
}
