#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build the kernel with gvt-rs in a cached output folder.
#
#   scripts/build-kernel.sh [vm]     the test kernel (GCC)
#   scripts/build-kernel.sh kasan    the same with KASAN, built with LLVM
#
# The output folder ($BUILD_DIR-<flavour>) lives outside the clone and is
# reused: after the first build only what changed is rebuilt.

source "$(dirname "$0")/common.sh"
[ -n "${GVT_RS_LOCKED:-}" ] || { take_build_lock; export GVT_RS_LOCKED=1; }

flavour=${1:-vm}
[ -f "$GVT_RS_CACHE/env.sh" ] || "$GVT_RS_ROOT/scripts/bootstrap.sh"
# shellcheck source=/dev/null # written by scripts/bootstrap.sh
source "$GVT_RS_CACHE/env.sh"
if [ -n "${KDIR:-}" ]; then
	GVT_RS_KSRC=$(cd "$KDIR" && pwd)
fi


# One test kernel carries both providers: the simulated GPU and real GVT-g
# (i915.ko + kvmgt.ko with the policy hook series), so that `make check`
# builds and loads everything in one build and one boot. "i915" is kept as
# an alias of "vm" for older instructions.
# The KASAN kernel leaves i915 out (its selftest needs no GPU either way,
# and it is the longest part of the build) and is built with LLVM, which
# KASAN of Rust code needs (bootstrap installs clang-$LLVM_VERSION).
[ "$flavour" = i915 ] && flavour=vm
configs=$GVT_RS_ROOT/scripts/configs
llvm=()
case $flavour in
vm) fragments=("$configs/vm.config" "$configs/debug.config" "$configs/i915.config") ;;
kasan)
	fragments=("$configs/vm.config" "$configs/debug.config" "$configs/kasan.config")
	command -v "clang-$LLVM_VERSION" >/dev/null ||
		die "clang-$LLVM_VERSION is missing (scripts/bootstrap.sh installs it)"
	llvm=(LLVM=-"$LLVM_VERSION")
	;;
*) die "unknown build flavour '$flavour' (use vm or kasan)" ;;
esac
out=$BUILD_DIR-$flavour
mkdir -p "$out"

"$GVT_RS_ROOT/scripts/prepare-tree.sh" "$GVT_RS_KSRC"

kmake() {
	make -C "$GVT_RS_KSRC" O="$out" LIBCLANG_PATH="$LIBCLANG_PATH" \
		BINDGEN="$TOOLS_DIR/bindgen/bin/bindgen" CLIPPY=1 "${llvm[@]}" "$@"
}

# Reconfigure only when a fragment or a Kconfig file of ours changed.
config_sum=$(find "${fragments[@]}" "$GVT_RS_ROOT"/drivers/gvt-rs "$GVT_RS_ROOT"/patches/kernel \
	-name '*.config' -o -name Kconfig -o -name '*.patch' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
if [ "$(cat "$out/.gvt-rs-config" 2>/dev/null)" != "$config_sum" ] || [ ! -f "$out/.config" ]; then
	log "configuring the kernel ($flavour): tinyconfig + ${fragments[*]##*/}"
	run_logged "$out/config.log" kmake tinyconfig
	run_logged "$out/config.log" "$GVT_RS_KSRC/scripts/kconfig/merge_config.sh" \
		-m -O "$out" "$out/.config" "${fragments[@]}"
	run_logged "$out/config.log" kmake olddefconfig
	# Every option we ask for must have stuck: Kconfig drops unmet ones silently.
	missing=$(grep -h '^CONFIG_' "${fragments[@]}" | sort -u | while read -r line; do
		grep -qx "$line" "$out/.config" || echo "$line"
	done)
	[ -z "$missing" ] || die "options not set after olddefconfig (unmet dependencies?):
$missing"
	kmake -s rustavailable >/dev/null 2>&1 || die "Rust toolchain not usable: run 'make -C $GVT_RS_KSRC O=$out rustavailable'"
	echo "$config_sum" >"$out/.gvt-rs-config"
fi

jobs=${JOBS:-$(nproc)}
if [ ! -f "$out/vmlinux" ]; then
	log "building the kernel from scratch ($flavour, -j$jobs): about 8-15 minutes, log in $out/build.log"
else
	log "rebuilding the kernel incrementally ($flavour), log in $out/build.log"
fi
start=$(date +%s)
run_logged "$out/build.log" kmake -j"$jobs" bzImage modules
run_logged "$out/build.log.headers" kmake -s headers
log "kernel built in $(($(date +%s) - start)) s: $out/arch/x86/boot/bzImage"
# Compiler and clippy warnings, and modpost's (an export from an init
# section, a missing symbol or namespace import: "WARNING: modpost: ...").
if grep -nE '(^|[^a-z_])(warning|error)(\[|:)|^(WARNING|ERROR): modpost: ' "$out/build.log" |
	grep -v '^.*scripts/' | head -20 | grep .; then
	[ "${GVT_RS_ALLOW_WARNINGS:-0}" = 1 ] || die "the build printed warnings (see above, full log $out/build.log)"
fi
echo "$out"
