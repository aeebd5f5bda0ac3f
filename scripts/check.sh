#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything `make check` runs, in order, with timings:
# bootstrap, host lint + tests, kernel build (CLIPPY=1, warnings fail), the
# gvt_rs crate in the Kconfig variants the test kernel does not build, VM
# tests, the libvirt VM test, the Debian 13 VM tests (QEMU, libvirt), then
# the KASAN kernel's build and VM tests.
#
# The last line printed, on success and on failure, is the grand total for
# CI: "check: N passed, M failed", the host cargo tests plus the VM's
# selftest results and KUnit cases (host-tests.sh and vm_results.py append
# their counts to $GVT_RS_COUNTS). A step that fails without a failing
# test (bootstrap, lint, kernel build, VM start-up) counts as one failure,
# so M > 0 whenever the exit status is not 0.

source "$(dirname "$0")/common.sh"

t0=$(date +%s)
current=start
step() {
	current=$*
	log "== $* ($(($(date +%s) - t0)) s elapsed)"
}

mkdir -p "$GVT_RS_CACHE"
GVT_RS_COUNTS=$(mktemp "$GVT_RS_CACHE/check-counts.XXXXXX")
export GVT_RS_COUNTS
summary() {
	local rc=$? passed failed
	set +e
	read -r passed failed < <(awk '{ p += $2; f += $3 } END { print p + 0, f + 0 }' "$GVT_RS_COUNTS")
	rm -f "$GVT_RS_COUNTS"
	if [ "$rc" -ne 0 ]; then
		log "make check FAILED in step: $current (exit status $rc)"
		[ "${failed:-0}" -gt 0 ] || failed=1
	fi
	printf 'check: %d passed, %d failed\n' "${passed:-0}" "${failed:-0}"
	exit "$rc"
}
trap summary EXIT

# GVT_RS_CHECK_SCOPE=vm: only the test kernel's build (incremental) and
# the VM tests step, the selftests and KUnit suites whose outcome could
# depend on the machine's speed (scripts/check-under-load.sh SCOPE=vm);
# not the libvirt and KASAN boots.
scope=${GVT_RS_CHECK_SCOPE:-all}
case $scope in
all | vm) ;;
*) die "GVT_RS_CHECK_SCOPE must be all or vm, not '$scope'" ;;
esac

step "bootstrap"
"$GVT_RS_ROOT/scripts/bootstrap.sh"
if [ "$scope" = all ]; then
	step "host: shellcheck, rustfmt and clippy"
	"$GVT_RS_ROOT/scripts/host-tests.sh" lint
	step "host: cargo test"
	"$GVT_RS_ROOT/scripts/host-tests.sh" test
fi
# Hold the build lock from the kernel build to the end of the VM run, so
# that no other checkout's build slips in between.
take_build_lock
export GVT_RS_LOCKED=1
step "kernel build"
"$GVT_RS_ROOT/scripts/build-kernel.sh" vm >/dev/null
if [ "$scope" = all ]; then
	step "kernel build: Kconfig variants of gvt_rs"
	"$GVT_RS_ROOT/scripts/check-kconfig-variants.sh"
	step "series: export, git am, checkpatch, production build"
	"$GVT_RS_ROOT/scripts/check-series.sh"
fi
step "VM tests"
"$GVT_RS_ROOT/scripts/vm-run.sh" check
if [ "$scope" = vm ]; then
	log "make check (VM tests only) passed in $(($(date +%s) - t0)) s"
	exit 0
fi
# Debian's libvirt (with udev, mdevctl and QEMU) against gvt-rs: the same
# kernel, booted with the Debian root that bootstrap built.
step "VM tests (libvirt)"
GVT_RS_TESTS=gvt_rs_libvirt.sh "$GVT_RS_ROOT/scripts/vm-run.sh" check
# Debian 13's QEMU (a vGPU through iommufd and one through the container)
# and libvirt, a guest live-migrated by that QEMU and a domain saved and
# restored by that libvirt: the same kernel, booted with bootstrap's
# Debian 13 root.
step "VM tests (Debian 13: QEMU, libvirt, migration)"
GVT_RS_TESTS=gvt_rs_qemu13.sh,gvt_rs_libvirt13.sh,gvt_rs_migration13.sh,gvt_rs_libvirtsave13.sh "$GVT_RS_ROOT/scripts/vm-run.sh" check
# The same selftests and KUnit suites on a KASAN kernel, but for the nested
# QEMU guests (far too slow under KASAN), the i915 test (no i915 in it) and
# two measurements whose memory paths the others take under KASAN already:
# gvt_rs_fairness.sh (the policies differ only in the core, safe Rust that
# KASAN adds nothing to; their kernel calls are density's and isolation's)
# and gvt_rs_density_idle.sh (64 guests opening and running, as in
# gvt_rs_density.sh).
step "kernel build (KASAN)"
"$GVT_RS_ROOT/scripts/build-kernel.sh" kasan >/dev/null
step "VM tests (KASAN)"
GVT_RS_FLAVOUR=kasan GVT_RS_SKIP=${GVT_RS_SKIP:+$GVT_RS_SKIP,}gvt_rs_qemu.sh,gvt_rs_i915.sh,gvt_rs_fairness.sh,gvt_rs_density_idle.sh \
	"$GVT_RS_ROOT/scripts/vm-run.sh" check
log "make check passed in $(($(date +%s) - t0)) s"
