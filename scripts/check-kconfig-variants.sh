#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile the gvt_rs crate for the provider choices the test kernel does
# not build: CONFIG_GVT_RS_SIM and CONFIG_GVT_RS_I915 each off, and both
# off. The test kernel has both on; a distribution kernel typically has
# only the i915 provider. Each variant reruns the kernel build's own
# clippy-driver command for drivers/gvt-rs/gvt_rs_main.o (from its .cmd
# file) with those options removed from the Rust cfg list, writing to a
# temporary folder, and fails on any error or warning. About 5 s each.
#
#   scripts/check-kconfig-variants.sh     (after scripts/build-kernel.sh)

source "$(dirname "$0")/common.sh"
# shellcheck source=/dev/null # written by scripts/bootstrap.sh
source "$GVT_RS_CACHE/env.sh"
[ -n "${KDIR:-}" ] && GVT_RS_KSRC=$(cd "$KDIR" && pwd)
out=$BUILD_DIR-vm
cmdfile=$out/drivers/gvt-rs/.gvt_rs_main.o.cmd
[ -f "$cmdfile" ] || die "no $cmdfile: build the kernel first (scripts/build-kernel.sh)"
cmd=$(sed -n 's|^savedcmd_drivers/gvt-rs/gvt_rs_main.o := ||p' "$cmdfile")
[ -n "$cmd" ] || die "cannot read the rustc command from $cmdfile"
grep -q '@./include/generated/rustc_cfg' <<<"$cmd" || die "unexpected rustc command in $cmdfile"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What kbuild sets for Rust objects.
export RUSTC_BOOTSTRAP=1 CLIPPY_CONF_DIR=$GVT_RS_KSRC

failed=0
for variant in "no-sim:CONFIG_GVT_RS_SIM" "no-i915:CONFIG_GVT_RS_I915" \
	"none:CONFIG_GVT_RS_SIM|CONFIG_GVT_RS_I915"; do
	name=${variant%%:*}
	drop=${variant#*:}
	mkdir -p "$work/$name"
	grep -Ev -- "--cfg=($drop)(=|\$)" "$out/include/generated/rustc_cfg" >"$work/$name/rustc_cfg"
	c=${cmd//@.\/include\/generated\/rustc_cfg/@$work/$name/rustc_cfg}
	c=${c//--out-dir drivers\/gvt-rs\//--out-dir $work/$name/}
	c=${c//--emit=dep-info=drivers\/gvt-rs\/.gvt_rs_main.o.d/--emit=dep-info=$work/$name/d}
	c=${c//--emit=obj=drivers\/gvt-rs\/gvt_rs_main.o/--emit=obj=$work/$name/o.o}
	# The metadata the simulated GPU's crate reads stays the build's.
	c=${c//--emit=metadata=drivers\/gvt-rs\/libgvt_rs_main.rmeta/--emit=metadata=$work/$name/m.rmeta}
	if (cd "$out" && eval "$c") >"$work/$name/log" 2>&1 && ! grep -q '^warning' "$work/$name/log"; then
		log "Kconfig variant $name: gvt_rs compiles clippy-clean"
	else
		cat "$work/$name/log" >&2
		log "Kconfig variant $name: FAILED"
		failed=1
	fi
done
exit $failed
