#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check` on a busy machine: RUNS complete runs in a row (default 5)
# beside a load that runs from the first run's start to the last run's end,
# at normal priority. Stops at the first failing run. Each run's output is
# kept in $GVT_RS_CACHE/under-load/run-N.log and the serial logs of its VMs
# in run-N-build-*-vm-check*.log; the summary gives each run's closing line
# and duration, and the load average the machine saw.
#
#   scripts/check-under-load.sh [RUNS]      (make check-under-load)
#
# Environment:
#   LOAD   hogs (default): HOGS CPU-bound processes, "another build on the
#          other core" of a 2-core machine;
#          vm: a second TCG VM beside the run (LOAD_VM_CPUS vCPUs, default
#          2, each running a CPU-bound loop), as when another nested QEMU
#          run shares the machine: its vCPU threads compete with the test
#          VM's for the host's cores (the condition of issue #25), plus
#          HOGS hogs (default 0 with LOAD=vm).
#   HOGS   CPU hogs (default 1 with LOAD=hogs).
#   SCOPE  all (default): the whole `make check`; vm: only the test
#          kernel's build (incremental) and the VM tests step (every
#          selftest and KUnit suite of the test VM; not the libvirt and
#          KASAN boots), a third of the time of a whole run.

source "$(dirname "$0")/common.sh"

runs=${1:-5}
load=${LOAD:-hogs}
scope=${SCOPE:-all}
case $load in
hogs) hogs=${HOGS:-1} ;;
vm) hogs=${HOGS:-0} ;;
*) die "LOAD must be hogs or vm, not '$load'" ;;
esac
case $scope in
all | vm) ;;
*) die "SCOPE must be all or vm, not '$scope'" ;;
esac
vm_cpus=${LOAD_VM_CPUS:-2}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$runs'"
[[ $hogs =~ ^[0-9]+$ ]] || die "HOGS must be a number, not '$hogs'"
[[ $vm_cpus =~ ^[1-9][0-9]*$ ]] || die "LOAD_VM_CPUS must be a positive number, not '$vm_cpus'"

out=$GVT_RS_CACHE/under-load
mkdir -p "$out"
summary=$out/summary.txt

pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_load() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap stop_load EXIT

# load_vm: boots the test kernel under TCG with an initramfs of its own
# whose /init keeps every vCPU busy until QEMU is killed. It takes neither
# the build lock nor any file of the test VM's.
load_vm() {
	local bz=$BUILD_DIR-vm/arch/x86/boot/bzImage root=$out/load-vm
	if [ ! -f "$bz" ]; then
		log "no test kernel yet: building it for the load VM"
		"$GVT_RS_ROOT/scripts/build-kernel.sh" vm >/dev/null
	fi
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/proc" "$root/dev"
	cp /bin/busybox "$root/bin/busybox"
	cat >"$root/init" <<-'EOF'
		#!/bin/busybox sh
		/bin/busybox mount -t proc proc /proc
		/bin/busybox mount -t devtmpfs devtmpfs /dev
		n=$(/bin/busybox grep -c ^processor /proc/cpuinfo)
		echo "@@LOAD_VM_UP cpus=$n"
		i=0
		while [ $i -lt "$n" ]; do
			/bin/busybox sha256sum /dev/zero </dev/null &
			i=$((i + 1))
		done
		# init must never exit: the kernel would panic.
		while :; do
			wait
			/bin/busybox sleep 1
		done
	EOF
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/load-vm.cpio"
	# shellcheck disable=SC2054 # QEMU's option values have commas
	qemu-system-x86_64 -accel tcg -cpu max,la57=off -smp "$vm_cpus" -m 256 \
		-kernel "$bz" -initrd "$out/load-vm.cpio" \
		-append "console=ttyS0 loglevel=3 panic=-1 rdinit=/init" \
		-no-reboot -display none -monitor none -serial "file:$out/load-vm.log" &
	pids+=($!)
	log "load VM started (pid $!, $vm_cpus vCPUs, TCG; serial log $out/load-vm.log)"
}

describe="$hogs CPU hog(s)"
if [ "$load" = vm ]; then
	load_vm
	describe="a second TCG VM with $vm_cpus busy vCPUs and $describe"
fi
for ((i = 0; i < hogs; i++)); do
	sha256sum /dev/zero >/dev/null &
	pids+=($!)
done
log "$describe beside the runs (pids ${pids[*]})"

{
	printf '# %s, %d run(s) in a row, %s beside them, %s, commit %s\n' \
		"$(if [ "$scope" = vm ]; then echo "make check's VM tests step"; else echo "make check"; fi)" \
		"$runs" "$describe" "$(date -u '+%F %T UTC')" \
		"$(git -C "$GVT_RS_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
	printf '# %s CPUs\n' "$(nproc)"
} >"$summary"
rc=0
for ((n = 1; n <= runs; n++)); do
	if [ "$load" = vm ] && ! kill -0 "${pids[0]}" 2>/dev/null; then
		log "the load VM is gone (see $out/load-vm.log)"
		rc=1
		break
	fi
	log "run $n of $runs (log $out/run-$n.log)"
	t=$(date +%s)
	GVT_RS_CHECK_SCOPE=$scope "$GVT_RS_ROOT/scripts/check.sh" >"$out/run-$n.log" 2>&1 || rc=$?
	last=$(tail -n 1 "$out/run-$n.log")
	printf 'run %d: exit %d, %d s, %s, load average %s\n' "$n" "$rc" \
		"$(($(date +%s) - t))" "$last" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$summary"
	# The serial logs of the VMs of this run (the next run overwrites
	# them): the figures behind each ok line.
	for f in "$BUILD_DIR"-vm/vm-check.log "$BUILD_DIR"-vm/vm-check-debian.log \
		"$BUILD_DIR"-kasan/vm-check.log; do
		[ ! -f "$f" ] || cp "$f" "$out/run-$n-$(basename "$(dirname "$f")")-$(basename "$f")"
	done
	[ "$rc" -eq 0 ] || break
done
cat "$summary"
exit "$rc"
