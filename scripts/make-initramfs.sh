#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs from a kernel build folder:
# busybox, the kernel modules, the kselftests of gvt-rs and the tools.
#
#   scripts/make-initramfs.sh BUILD_DIR OUTPUT.cpio.gz

source "$(dirname "$0")/common.sh"

out=${1:?usage: make-initramfs.sh BUILD_DIR OUTPUT}
image=${2:?usage: make-initramfs.sh BUILD_DIR OUTPUT}
source "$GVT_RS_CACHE/env.sh"
ksrc=${KDIR:-$GVT_RS_KSRC}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,root,tests,lib/modules}

busybox=$(command -v busybox || echo /bin/busybox)
file "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	[ -x /bin/busybox ] || die "busybox-static is missing (scripts/bootstrap.sh installs it)"
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$GVT_RS_ROOT/scripts/vm/init" "$stage/init"
cp "$GVT_RS_ROOT/scripts/vm/run-tests.sh" "$stage/tests/"
[ -f "$GVT_RS_ROOT/scripts/vm/demo.sh" ] && cp "$GVT_RS_ROOT/scripts/vm/demo.sh" "$stage/tests/"

run_logged "$out/modules_install.log" make -C "$ksrc" O="$out" -s \
	INSTALL_MOD_PATH="$stage" INSTALL_MOD_STRIP=1 modules_install

# The kselftests, built and installed by the kernel's own selftest framework.
run_logged "$out/selftests.log" make -C "$ksrc/tools/testing/selftests" \
	TARGETS=drivers/gvt_rs O="$out/kselftest" \
	KHDR_INCLUDES="-isystem $out/usr/include" \
	INSTALL_PATH="$stage/tests/kselftest" install

# Shell tools of gvt-rs (gvt-top).
for t in "$GVT_RS_ROOT"/tools/gvt-rs/*; do
	[ -f "$t" ] && [ -x "$t" ] && cp "$t" "$stage/bin/"
done

# Host-built tools that run in the guest (statically linked).
if [ -d "$out/gvt-rs-tools" ]; then
	cp "$out"/gvt-rs-tools/* "$stage/bin/"
fi

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$image.tmp"
mv "$image.tmp" "$image"
