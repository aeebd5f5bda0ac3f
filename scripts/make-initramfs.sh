#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test VM's initramfs from a kernel build folder:
# busybox, the kernel modules, the kselftests of gvt-rs and the tools, and
# for the nested real-client test Debian's QEMU with an L2 payload (this
# kernel and a small initramfs with the guest driver and its client).
#
#   scripts/make-initramfs.sh BUILD_DIR OUTPUT.cpio.gz

source "$(dirname "$0")/common.sh"

out=${1:?usage: make-initramfs.sh BUILD_DIR OUTPUT}
image=${2:?usage: make-initramfs.sh BUILD_DIR OUTPUT}
# shellcheck source=/dev/null # written by scripts/bootstrap.sh
source "$GVT_RS_CACHE/env.sh"
ksrc=${KDIR:-$GVT_RS_KSRC}

stage=$(mktemp -d)
# The VM's root directory: mktemp's 0700 would keep every user but root out
# of the whole file system (gvt_rs_sysfs.sh reads files as another user).
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,tmp,root,tests,lib/modules}

busybox=$(command -v busybox || echo /bin/busybox)
file "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	[ -x /bin/busybox ] || die "busybox-static is missing (scripts/bootstrap.sh installs it)"
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$GVT_RS_ROOT/scripts/vm/init" "$stage/init"
cp "$GVT_RS_ROOT/scripts/vm/run-tests.sh" "$stage/tests/"
cp "$GVT_RS_ROOT/scripts/vm/demo.sh" "$GVT_RS_ROOT/scripts/vm/bench.sh" "$stage/tests/"

run_logged "$out/modules_install.log" make -C "$ksrc" O="$out" -s \
	INSTALL_MOD_PATH="$stage" INSTALL_MOD_STRIP=1 modules_install

# The kselftests, built and installed by the kernel's own selftest framework:
# ours, and the kernel's VFIO selftests (run against a vGPU by
# gvt_rs_vfio_selftests.sh), linked statically as ours are (the VM has no
# libuuid).
# The VFIO selftests' dependency files (-MD) name the headers each object
# was built from; one that names a header that is gone (renamed or removed
# by a patch) stops make with "No rule to make target". Such a file goes
# with what it was made for (an object, or a test built from its source),
# which is then built again, with a new one.
if [ -d "$out/kselftest" ]; then
	find "$out/kselftest" -name '*.d' -print0 | while IFS= read -r -d '' d; do
		# shellcheck disable=SC2013 # the prerequisites are words
		for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$d"); do
			# Relative names are the target's own sources.
			case $dep in /*) [ -e "$dep" ] || { rm -f "$d" "${d%.d}.o" "${d%.d}"; break; } ;; esac
		done
	done
fi
run_logged "$out/selftests.log" make -C "$ksrc/tools/testing/selftests" \
	TARGETS="drivers/gvt_rs vfio" O="$out/kselftest" \
	KHDR_INCLUDES="-isystem $out/usr/include" EXTRA_CFLAGS=-static \
	INSTALL_PATH="$stage/tests/kselftest" install
# The selftest framework goes on past a target that failed to build and
# only leaves it out; a test of ours would then fail on what is missing.
for t in drivers/gvt_rs/gvt_guest vfio/vfio_pci_driver_test; do
	[ -x "$stage/tests/kselftest/$t" ] ||
		die "the selftests did not build $t (log: $out/selftests.log)"
done
# The VFIO selftests need a device to be named: gvt_rs_vfio_selftests.sh
# runs them on vGPUs, so they are not run alone.
sed -i '/^vfio:/d' "$stage/tests/kselftest/kselftest-list.txt"

# Shell tools of gvt-rs (gvt-top).
for t in "$GVT_RS_ROOT"/tools/gvt-rs/*; do
	[ -f "$t" ] && [ -x "$t" ] && cp "$t" "$stage/bin/"
done

# Host-built tools that run in the guest (statically linked).
if [ -d "$out/gvt-rs-tools" ]; then
	cp "$out"/gvt-rs-tools/* "$stage/bin/"
fi

# Debian's qemu-system-x86_64, as the host has it, with every library it
# links, its TCG module and the firmware `-machine pc` loads (Debian's firmware path is
# /usr/share/qemu:/usr/share/seabios).
qemu=/usr/bin/qemu-system-x86_64
[ -x "$qemu" ] || die "qemu-system-x86_64 is missing (scripts/bootstrap.sh installs qemu-system-x86)"
mkdir -p "$stage/usr/bin"
cp "$qemu" "$stage/usr/bin/"
for f in $(ldd "$qemu" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }') \
	/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so \
	/usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin /usr/share/qemu/kvmvapic.bin; do
	[ -e "$f" ] || die "$f, needed by $qemu, is missing"
	mkdir -p "$stage$(dirname "$f")"
	cp -L "$f" "$stage$f"
done

# The L2 payload: the same kernel, and an initramfs with busybox, the guest
# driver and the client (scripts/vm/l2-init runs them).
l2=$(mktemp -d)
trap 'rm -rf "$stage" "$l2"' EXIT

# Debian's mdevctl, from its package (scripts/bootstrap.sh downloads it),
# with the libraries it links: the admin tool gvt_rs_mdevctl.sh drives.
mdevctl_debs=("$GVT_RS_CACHE"/debs/mdevctl_*.deb)
mdevctl_deb=${mdevctl_debs[0]}
[ -f "$mdevctl_deb" ] || die "Debian's mdevctl package is missing (scripts/bootstrap.sh downloads it)"
deb=$(mktemp -d)
trap 'rm -rf "$stage" "$l2" "$deb"' EXIT
dpkg-deb -x "$mdevctl_deb" "$deb"
cp "$deb/usr/bin/mdevctl" "$stage/usr/bin/"
ln -sf mdevctl "$stage/usr/bin/lsmdev"
mkdir -p "$stage/etc/mdevctl.d/scripts.d/callouts" "$stage/etc/mdevctl.d/scripts.d/notifiers"
for f in $(ldd "$deb/usr/bin/mdevctl" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
	mkdir -p "$stage$(dirname "$f")"
	cp -L "$f" "$stage$f"
done
mkdir -p "$l2"/{bin,proc,sys,dev,tmp}
cp "$busybox" "$l2/bin/busybox"
# The applets' links are made here, not by `busybox --install` in the guest:
# that took 10 s of the nested boot.
for applet in $("$busybox" --list); do
	[ -e "$l2/bin/$applet" ] || ln -s busybox "$l2/bin/$applet"
done
cp "$GVT_RS_ROOT/scripts/vm/l2-init" "$l2/init"
guest_ko=$(find "$stage/lib/modules" -name gvt_rs_guest.ko | head -n 1)
[ -n "$guest_ko" ] || die "gvt_rs_guest.ko was not built (CONFIG_GVT_RS_GUEST)"
cp "$guest_ko" "$l2/"
cp "$stage/tests/kselftest/drivers/gvt_rs/gvt_gpu_client" "$l2/"
mkdir -p "$stage/l2"
cp "$out/arch/x86/boot/bzImage" "$stage/l2/bzImage"
cp "$GVT_RS_ROOT/scripts/vm/l2-qemu" "$stage/l2/qemu"
# Uncompressed: unpacking even 1.5 MB of gzip took the nested guest 6 s.
(cd "$l2" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$stage/l2/initramfs.cpio"

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$image.tmp"
mv "$image.tmp" "$image"
