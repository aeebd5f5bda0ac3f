#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install or reuse everything the gvt-rs build needs. Idempotent: every step
# checks first and caches its result under $GVT_RS_CACHE, outside the clone.
#
#   scripts/bootstrap.sh            all steps
#   KDIR=/path/to/linux scripts/bootstrap.sh   use a prepared kernel tree
#
# Steps: Debian packages, Debian packages for the test VM (downloaded only),
# rust-src, bindgen-cli, libclang, Linux source.

source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/linux-source.sh"

DEB_PACKAGES="flex bison bc libelf-dev libssl-dev cpio kmod xz-utils rsync file
	qemu-system-x86 busybox-static python3 gcc make
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
