#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything `make check` runs, in order, with timings:
# bootstrap, host lint + tests, kernel build (CLIPPY=1, warnings fail), VM tests.

source "$(dirname "$0")/common.sh"

# Hold the build lock from the kernel build to the end of the VM run, so
# that no other checkout's build slips in between.
t0=$(date +%s)
step() {
	log "== $* ($(($(date +%s) - t0)) s elapsed)"
}

step "bootstrap"
"$GVT_RS_ROOT/scripts/bootstrap.sh"
step "host: rustfmt and clippy"
"$GVT_RS_ROOT/scripts/host-tests.sh" lint
step "host: cargo test"
"$GVT_RS_ROOT/scripts/host-tests.sh" test
take_build_lock
export GVT_RS_LOCKED=1
step "kernel build"
"$GVT_RS_ROOT/scripts/build-kernel.sh" vm >/dev/null
step "VM tests"
"$GVT_RS_ROOT/scripts/vm-run.sh" check
log "make check passed in $(($(date +%s) - t0)) s"
