#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install or reuse everything the gvt-rs build needs. Idempotent: every step
# checks first and caches its result under $GVT_RS_CACHE, outside the clone.
#
#   scripts/bootstrap.sh            all steps
#   KDIR=/path/to/linux scripts/bootstrap.sh   use a prepared kernel tree
#
# Steps: Debian packages (shellcheck among them, for the lint step), Debian
# packages for the test VM (downloaded only), rust-src, bindgen-cli,
# libclang, Linux source.

source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/linux-source.sh"

DEB_PACKAGES="flex bison bc libelf-dev libssl-dev cpio kmod xz-utils rsync file
	qemu-system-x86 busybox-static python3 gcc make debootstrap shellcheck
	clang-$LLVM_VERSION lld-$LLVM_VERSION llvm-$LLVM_VERSION"

install_debian_packages() {
	local missing=()
	for p in $DEB_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	log "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	run_logged "$GVT_RS_CACHE/apt-update.log" as_root apt-get update -q
	run_logged "$GVT_RS_CACHE/apt-install.log" \
		as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Debian packages that run inside the test VM, not on the host: downloaded
# (not installed) into $GVT_RS_CACHE/debs for scripts/make-initramfs.sh.
VM_DEBS="mdevctl"

fetch_vm_debs() {
	local p dir=$GVT_RS_CACHE/debs
	mkdir -p "$dir"
	for p in $VM_DEBS; do
		ls "$dir/${p}"_*.deb >/dev/null 2>&1 && continue
		log "downloading Debian's $p for the test VM"
		if ! (cd "$dir" && apt-get download "$p" >"$GVT_RS_CACHE/apt-download-$p.log" 2>&1); then
			run_logged "$GVT_RS_CACHE/apt-update.log" as_root apt-get update -q
			(cd "$dir" && apt-get download "$p" >"$GVT_RS_CACHE/apt-download-$p.log" 2>&1) ||
				die "cannot download Debian's $p (log: $GVT_RS_CACHE/apt-download-$p.log)"
		fi
	done
}

# The libvirt test VM's Debian user space (gvt_rs_libvirt.sh): Debian's
# libvirt daemon and client, mdevctl (which libvirt creates mdevs with),
# udev (whose events libvirt's node-device driver follows) and QEMU (the
# domain's emulator), from the host's own Debian release and mirror, packed
# as one uncompressed cpio archive (prefix debian/) that scripts/vm-run.sh
# appends to the test VM's initramfs. debootstrap installs the packages whose
# dependencies its simple resolver handles; apt, inside the new root,
# installs libvirt-daemon-system (the libvirt-qemu user, the configuration
# files), whose systemd and polkit alternatives it does not.
# Rebuilt only when these lists change.
LIBVIRT_ROOT_PACKAGES="libvirt-daemon,libvirt-daemon-driver-qemu,libvirt-clients,mdevctl,udev,qemu-system-x86"
LIBVIRT_ROOT_APT_PACKAGES="libvirt-daemon-system"
# The second root: the same packages from Debian 13 (trixie: QEMU 10, whose
# vfio-pci attaches through iommufd, and libvirt 11), from the same mirror,
# as vm-debian13/root.cpio with prefix debian13/ (gvt_rs_qemu13.sh,
# gvt_rs_libvirt13.sh; scripts/vm-run.sh boots it in a run of its own).
# apt installs them all: debootstrap's resolver, given them, unpacked
# systemd before configuring the libsystemd-shared it pre-depends on.
DEBIAN13_SUITE=trixie
DEBIAN13_APT_PACKAGES="${LIBVIRT_ROOT_PACKAGES//,/ } $LIBVIRT_ROOT_APT_PACKAGES"

# build_debian_root NAME SUITE INCLUDE APT-PACKAGES:
# $GVT_RS_CACHE/vm-NAME/root.cpio, the root of Debian SUITE under the
# prefix NAME/: debootstrap with INCLUDE (comma-separated, may be empty),
# then apt with APT-PACKAGES.
build_debian_root() {
	local name=$1 suite=$2 include=$3 apt=$4 dir=$GVT_RS_CACHE/vm-$1 stamp tmp
	stamp="$suite $include $apt"
	[ -f "$dir/root.cpio" ] && [ "$(cat "$dir/root.stamp" 2>/dev/null)" = "$stamp" ] && return
	mkdir -p "$dir"
	# One build at a time: another checkout's bootstrap would remove this
	# one's root as left over.
	exec 8>"$dir/build.lock"
	flock 8
	[ -f "$dir/root.cpio" ] && [ "$(cat "$dir/root.stamp" 2>/dev/null)" = "$stamp" ] &&
		{ exec 8>&-; return; }
	log "building the test VM's Debian $suite root ($name) with debootstrap (about 3 minutes, cached afterwards)"
	# A run that was cut off may have left a root with /proc mounted:
	# unmount, and never let rm cross into a mounted file system.
	for tmp in "$dir"/tmp.*; do
		[ -d "$tmp" ] || continue
		umount -R "$tmp/$name/proc" "$tmp/$name/sys" 2>/dev/null || true
		as_root rm -rf --one-file-system "$tmp"
	done
	tmp=$(mktemp -d -p "$dir")
	run_logged "$dir/debootstrap.log" as_root debootstrap --variant=minbase \
		${include:+--include="$include"} "$suite" "$tmp/$name" "$(debian_mirror)"
	as_root mount -t proc proc "$tmp/$name/proc"
	# shellcheck disable=SC2086 # the packages are words
	if ! { as_root chroot "$tmp/$name" apt-get update -q &&
		as_root chroot "$tmp/$name" apt-get install -y -q --no-install-recommends \
		$apt; } >"$dir/apt-install.log" 2>&1; then
		as_root umount "$tmp/$name/proc"
		tail -n 30 "$dir/apt-install.log" >&2
		die "installing $apt in the $name test root failed (log: $dir/apt-install.log)"
	fi
	as_root umount "$tmp/$name/proc"
	# What no test reads: documentation, translations, package caches.
	rm -rf "$tmp/$name"/usr/share/{doc,man,info,locale} "$tmp/$name"/var/cache/apt/* \
		"$tmp/$name"/var/lib/apt/lists/*
	(cd "$tmp" && find "$name" -path "$name/dev/*" -prune -o -path "$name/proc/*" -prune -o \
		-path "$name/sys/*" -prune -o -print | LC_ALL=C sort |
		cpio -o -H newc --quiet) >"$dir/root.cpio.tmp"
	mv "$dir/root.cpio.tmp" "$dir/root.cpio"
	echo "$stamp" >"$dir/root.stamp"
	as_root rm -rf --one-file-system "$tmp"
	log "$name test root: $(du -m "$dir/root.cpio" | cut -f1) MB"
	exec 8>&-
}

build_libvirt_root() {
	local suite
	# shellcheck source=/dev/null # the host's file
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	build_debian_root debian "$suite" "$LIBVIRT_ROOT_PACKAGES" "$LIBVIRT_ROOT_APT_PACKAGES"
	build_debian_root debian13 "$DEBIAN13_SUITE" "" "$DEBIAN13_APT_PACKAGES"
}

install_rust_src() {
	command -v rustc >/dev/null || die "rustc not found: install Rust with rustup (https://rustup.rs)"
	local sysroot
	sysroot=$(rustc --print sysroot)
	[ -d "$sysroot/lib/rustlib/src/rust/library/core" ] && return
	command -v rustup >/dev/null ||
		die "rust-src missing and no rustup: install the Rust standard library source for $(rustc --version)"
	log "installing rust-src with rustup"
	run_logged "$GVT_RS_CACHE/rustup.log" rustup component add rust-src
}

install_bindgen() {
	local have
	have=$("$TOOLS_DIR/bindgen/bin/bindgen" --version 2>/dev/null | awk '{print $2}') || true
	[ "$have" = "$BINDGEN_VERSION" ] && return
	log "building bindgen-cli $BINDGEN_VERSION (about 2 minutes, cached afterwards)"
	run_logged "$GVT_RS_CACHE/bindgen.log" cargo install --locked --force \
		--root "$TOOLS_DIR/bindgen" bindgen-cli --version "$BINDGEN_VERSION"
}

# bindgen needs libclang >= 17. Use the system one when it is new enough,
# otherwise the self-contained libclang.so of the PyPI wheel (downloaded, not
# installed: it only depends on libc).
find_libclang() {
	local d
	for d in /usr/lib/llvm-{21,20,19,18,17}/lib; do
		if ls "$d"/libclang*.so* >/dev/null 2>&1; then
			echo "$d"
			return
		fi
	done
	d=$TOOLS_DIR/libclang-$LIBCLANG_WHEEL_VERSION/clang/native
	if [ ! -f "$d/libclang.so" ]; then
		log "fetching libclang $LIBCLANG_WHEEL_VERSION (PyPI wheel)"
		local tmp
		tmp=$(mktemp -d)
		run_logged "$GVT_RS_CACHE/libclang.log" python3 -m pip download -q --no-deps \
			--only-binary=:all: --platform manylinux2010_x86_64 \
			-d "$tmp" "libclang==$LIBCLANG_WHEEL_VERSION"
		mkdir -p "$TOOLS_DIR/libclang-$LIBCLANG_WHEEL_VERSION"
		python3 - "$tmp" "$TOOLS_DIR/libclang-$LIBCLANG_WHEEL_VERSION" <<'PY'
import glob, os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(src, "*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if "/clang/native/" in n:
            out = os.path.join(dst, "clang", "native", os.path.basename(n))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(z.read(n))
PY
		rm -rf "$tmp"
	fi
	[ -f "$d/libclang.so" ] || die "libclang.so not found in the wheel"
	echo "$d"
}

main() {
	mkdir -p "$GVT_RS_CACHE" "$TOOLS_DIR"
	install_debian_packages
	fetch_vm_debs
	build_libvirt_root
	install_rust_src
	install_bindgen
	local libclang ksrc
	libclang=$(find_libclang)
	if [ -n "${KDIR:-}" ]; then
		[ -f "$KDIR/Makefile" ] || die "KDIR=$KDIR is not a kernel source tree"
		ksrc=$(cd "$KDIR" && pwd)
	else
		ksrc=$(fetch_linux_source)
	fi
	# The build reads these to find its tools and tree.
	cat >"$GVT_RS_CACHE/env.sh" <<ENV
export LIBCLANG_PATH=$libclang
export GVT_RS_KSRC=$ksrc
ENV
	log "bootstrap done: kernel source $ksrc, libclang $libclang"
}

main "$@"
