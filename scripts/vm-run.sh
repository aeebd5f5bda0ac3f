#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test VM under QEMU (TCG, 2 vCPUs) and judge its log.
#
#   scripts/vm-run.sh check   run every selftest and KUnit suite
#   scripts/vm-run.sh run     the demo
#   scripts/vm-run.sh shell   an interactive shell in the VM
#   scripts/vm-run.sh bench   the QEMU-guest benchmark (scripts/vm/bench.sh)
#
# Environment: VM_CPUS (default 2), VM_MEM (MiB, default 2048: the nested
# real-client test runs two QEMU guests inside),
# VM_TIMEOUT (seconds, default 2700; 3900 for the Debian 13 tests),
# GVT_RS_TESTS (comma-separated subset),
# GVT_RS_SKIP (comma-separated tests a full run leaves out, e.g.
# gvt_rs_qemu.sh, the nested QEMU guests, 8 minutes of the run),
# GVT_RS_TEST_TIMEOUT (seconds each selftest may run, default 1200: the
# runner then stops it, scripts/vm/run-tests.sh),
# GVT_RS_BENCH (bench: the parts to run, comma-separated from path, frames,
# switch, attacks, drm, locks, migration; default all), GVT_RS_FLAVOUR (kernel build flavour to boot: vm, the default, or i915;
# build it first with scripts/build-kernel.sh FLAVOUR).
#
# The tests of $DEBIAN_TESTS need Debian's libvirt: a run that names them
# (GVT_RS_TESTS) boots with the Debian root that scripts/bootstrap.sh builds
# appended to the initramfs (at /debian, 3 GiB of memory by default); a full
# run leaves them out, and `make check` runs them in a boot of their own.
# Those of $DEBIAN13_TESTS need Debian 13's QEMU and libvirt: the same, with
# the Debian 13 root (at /debian13), in a boot of their own again (a run
# cannot name tests of both lists).

source "$(dirname "$0")/common.sh"
[ -n "${GVT_RS_LOCKED:-}" ] || { take_build_lock; export GVT_RS_LOCKED=1; }

mode=${1:-check}
flavour=${GVT_RS_FLAVOUR:-vm}
[ "$flavour" = i915 ] && flavour=vm # the vm kernel includes i915 and kvmgt
out=$BUILD_DIR-$flavour
bzimage=$out/arch/x86/boot/bzImage
[ -f "$bzimage" ] || die "no kernel at $bzimage: run scripts/build-kernel.sh $flavour first"

DEBIAN_TESTS=gvt_rs_libvirt.sh
DEBIAN13_TESTS="gvt_rs_qemu13.sh gvt_rs_libvirt13.sh gvt_rs_migration13.sh gvt_rs_libvirtsave13.sh"
# The root the named tests need: none, debian (Debian 12) or debian13.
debian=''
if [ -n "${GVT_RS_TESTS:-}" ]; then
	for t in ${GVT_RS_TESTS//,/ }; do
		need=''
		grep -qxF "$t" <(tr ' ' '\n' <<<"$DEBIAN_TESTS") && need=debian
		grep -qxF "$t" <(tr ' ' '\n' <<<"$DEBIAN13_TESTS") && need=debian13
		[ -z "$need" ] && continue
		[ -z "$debian" ] || [ "$debian" = "$need" ] ||
			die "GVT_RS_TESTS names tests of both Debian roots: run $DEBIAN_TESTS and $DEBIAN13_TESTS apart"
		debian=$need
	done
elif [ "$mode" = check ]; then
	skip="$DEBIAN_TESTS $DEBIAN13_TESTS"
	GVT_RS_SKIP=${GVT_RS_SKIP:+$GVT_RS_SKIP,}${skip// /,}
fi

log "building the initramfs"
"$GVT_RS_ROOT/scripts/make-initramfs.sh" "$out" "$out/initramfs.cpio.gz"
initrd=$out/initramfs.cpio.gz
mem=${VM_MEM:-2048}
if [ -n "$debian" ]; then
	root=$GVT_RS_CACHE/vm-$debian/root.cpio
	[ -f "$root" ] || die "no Debian root at $root: run scripts/bootstrap.sh"
	# The kernel unpacks concatenated archives; each must start 4-byte
	# aligned, and the zeros between them are skipped.
	initrd=$out/initramfs-$debian.cpio
	cp "$out/initramfs.cpio.gz" "$initrd"
	truncate -s %512 "$initrd"
	cat "$root" >>"$initrd"
	mem=${VM_MEM:-3072}
fi
# The Debian 13 run boots four nested guests one after another (two at
# once in gvt_rs_qemu13.sh), each its own few minutes under TCG.
vm_timeout=${VM_TIMEOUT:-2700}
[ "$debian" = debian13 ] && vm_timeout=${VM_TIMEOUT:-3900}


append="console=ttyS0 loglevel=5 panic=-1 gvt_rs_vm.mode=$mode"
if [ -n "${GVT_RS_TESTS:-}" ]; then
	append+=" gvt_rs_vm.tests=$GVT_RS_TESTS"
elif [ -n "${GVT_RS_SKIP:-}" ]; then
	append+=" gvt_rs_vm.skip=$GVT_RS_SKIP"
fi
if [ -n "${GVT_RS_TEST_TIMEOUT:-}" ]; then
	[[ $GVT_RS_TEST_TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
		die "GVT_RS_TEST_TIMEOUT must be a number of seconds, not '$GVT_RS_TEST_TIMEOUT'"
	append+=" gvt_rs_vm.timeout=$GVT_RS_TEST_TIMEOUT"
fi
if [ "$mode" = bench ] && [ -n "${GVT_RS_BENCH:-}" ]; then
	append+=" gvt_rs_vm.bench=$GVT_RS_BENCH"
fi
# pci-testdev at 0000:00:10.0 is the spare PCI function that tests bind to
# the gvtsim driver (the simulated GPU on a PCI parent, as libvirt needs).
# The CPU has no LA57: with 5-level paging, a 7.3 KASAN kernel reports a
# wild access for an interrupt that arrives while identify_cpu() has
# cleared the boot CPU's feature bits (the KASAN shadow bounds follow
# X86_FEATURE_LA57), before any test or module has run.
# shellcheck disable=SC2054 # QEMU's option values have commas
qemu=(qemu-system-x86_64 -accel tcg -cpu max,la57=off -smp "${VM_CPUS:-2}" -m "$mem"
	-kernel "$bzimage" -initrd "$initrd" -append "$append"
	-device pci-testdev,addr=10.0
	-no-reboot -display none -monitor none)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio
fi

# Its own log for a run with the Debian root, so that it and a plain run
# never write the same file.
logfile=$out/vm-$mode${debian:+-$debian}.log
log "booting the VM ($mode, $flavour flavour, ${VM_CPUS:-2} vCPUs, TCG; serial log $logfile)"
start=$(date +%s)
set +e
timeout --foreground -k 10 "$vm_timeout" "${qemu[@]}" -serial stdio </dev/null |
	tee "$logfile" | sed -u -n -e '/^@@GVT_RS_\(BOOT_\)\?DMESG_BEGIN/,/^@@GVT_RS_\(BOOT_\)\?DMESG_END/d' \
		-e '/^@@GVT_RS_KMEMLEAK_BEGIN/,/^@@GVT_RS_KMEMLEAK_END/d' \
		-e "$( [ "$mode" != check ] && echo p || echo '/^@@\|^ok \|^not ok \|WARNING\|BUG\|Oops\|panic/p')"
qrc=${PIPESTATUS[0]}
set -e
log "VM finished in $(($(date +%s) - start)) s (qemu status $qrc)"
[ "$qrc" -eq 124 ] && log "the VM timed out after $vm_timeout s"

tests=$(find "$GVT_RS_ROOT/tools/testing/selftests/drivers/gvt_rs" -maxdepth 1 -name '*.sh' \
	-not -name '*_lib.sh' -printf '%f\n' | sort | grep -vxF -f <(tr , '\n' <<<"${GVT_RS_SKIP:-}"))
progs=$(sed -n 's/^TEST_GEN_PROGS *[:+]*= *//p' "$GVT_RS_ROOT/tools/testing/selftests/drivers/gvt_rs/Makefile")
# A full run must have run every selftest and KUnit suite; a subset, the
# tests it names (a misspelt name fails instead of passing with nothing run).
kunit_from=()
if [ "$mode" = check ] && [ -z "${GVT_RS_TESTS:-}" ]; then
	# shellcheck disable=SC2206 # lists of names, one a word
	expect=($tests $progs)
	kunit_from=("$GVT_RS_ROOT/rust" "$GVT_RS_ROOT/drivers/gvt-rs")
elif [ "$mode" = check ]; then
	# shellcheck disable=SC2206 # the comma-separated names, one a word
	expect=(${GVT_RS_TESTS//,/ })
else
	expect=()
fi
python3 "$GVT_RS_ROOT/scripts/vm_results.py" "$logfile" --mode "$mode" \
	--flavour "$flavour" --tests-dir "$GVT_RS_ROOT/tools/testing/selftests/drivers/gvt_rs" \
	--expect-kunit-from "${kunit_from[@]}" --expect-tests "${expect[@]}"
