# SPDX-License-Identifier: GPL-2.0
#
# gvt-rs developer entry points. Everything is cached under
# $(XDG_CACHE_HOME)/gvt-rs (default ~/.cache/gvt-rs), outside the clone.
#
#   make run        bootstrap, build, boot the VM and run the demo
#   make check      host tests + kernel build + VM tests (what CI runs)
#   make check-nested  only the real-client test (QEMU guests on vGPUs in
#                      the VM), which `make check` also runs
#   make check-libvirt only the libvirt test (Debian's libvirtd, virsh,
#                      mdevctl and a domain with a vGPU, in the VM), which
#                      `make check` also runs
#   make check-debian13 only the Debian 13 tests (its QEMU with a vGPU
#                      through iommufd and one through the container, its
#                      libvirt), which `make check` also runs
#   make help       all targets
#
# Set KDIR=/path/to/linux to use your own Linux 7.3 tree instead of the
# pinned Debian source.

SHELL := /bin/bash
export KDIR

CORE := drivers/gvt-rs/core
SIM := tools/gvt-sim

.PHONY: all run check check-under-load check-nested check-libvirt check-debian13 bench help bootstrap kernel host-test host-lint vm-check vm-run shell \
	patches docs clean-cache

all: kernel

help:
	@sed -n 's/^#   make /  make /p' $(lastword $(MAKEFILE_LIST))
	@echo "  make bootstrap  install/cache toolchain and kernel source"
	@echo "  make kernel     build the kernel and gvt_rs.ko (incremental)"
	@echo "  make host-test  cargo test of the policy core and tools"
	@echo "  make check-under-load  make check RUNS times (5) in a row beside HOGS CPU hogs (1);"
	@echo "                  LOAD=vm: beside a second busy TCG VM; SCOPE=vm: only the VM steps"
	@echo "  make host-lint  shellcheck on the scripts, rustfmt --check, clippy and rustdoc -D warnings on host crates"
	@echo "  make vm-check   boot the VM and run selftests + KUnit"
	@echo "  make shell      boot the VM with a shell"
	@echo "  make bench      VM benchmarks: submission path, interactive frame rate, switch time, attacks, DRM scheduler scenarios (GVT_RS_BENCH=path,frames,switch,attacks,drm)"
	@echo "  make patches    export the kernel patch series to out/patches"

bootstrap:
	@scripts/bootstrap.sh

kernel: bootstrap
	@scripts/build-kernel.sh vm >/dev/null

host-test:
	@scripts/host-tests.sh test

host-lint:
	@scripts/host-tests.sh lint

vm-check: kernel
	@scripts/vm-run.sh check

vm-run: kernel
	@scripts/vm-run.sh run

shell: kernel
	@scripts/vm-run.sh shell

check:
	@scripts/check.sh

check-under-load:
	@scripts/check-under-load.sh $(RUNS)

run: vm-run

bench: kernel
	@scripts/vm-run.sh bench

check-nested: kernel
	@GVT_RS_TESTS=gvt_rs_qemu.sh scripts/vm-run.sh check

check-libvirt: kernel
	@GVT_RS_TESTS=gvt_rs_libvirt.sh scripts/vm-run.sh check

check-debian13: kernel
	@GVT_RS_TESTS=gvt_rs_qemu13.sh,gvt_rs_libvirt13.sh,gvt_rs_migration13.sh,gvt_rs_libvirtsave13.sh scripts/vm-run.sh check

patches:
	@scripts/export-patches.sh out/patches
