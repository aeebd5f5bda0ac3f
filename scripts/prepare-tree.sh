#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lay gvt-rs into a kernel source tree:
#  1. copy the project's new files (rust/, drivers/gvt-rs/) into the tree,
#     touching only files whose content changed, so rebuilds stay incremental;
#  2. apply the hook patches in patches/kernel/ (edits to existing kernel
#     files), reverting the previously applied set first when it changed.
#
#   scripts/prepare-tree.sh /path/to/linux

source "$(dirname "$0")/common.sh"

tree=${1:?usage: prepare-tree.sh KERNEL_TREE}
state=$tree/.gvt-rs
mkdir -p "$state"

sync_overlay() {
	local f n=0
	# shellcheck disable=SC2119 # no extra directories: the build's files only
	overlay_files >"$state/manifest.new" || true
	while read -r f; do
		if ! cmp -s "$GVT_RS_ROOT/$f" "$tree/$f"; then
			mkdir -p "$(dirname "$tree/$f")"
			cp "$GVT_RS_ROOT/$f" "$tree/$f"
			n=$((n + 1))
		fi
	done <"$state/manifest.new"
	# Files that left the project leave the tree too.
	if [ -f "$state/manifest" ]; then
		comm -23 "$state/manifest" "$state/manifest.new" | while read -r f; do
			rm -f "$tree/$f"
		done
	fi
	mv "$state/manifest.new" "$state/manifest"
	[ "$n" -gt 0 ] && log "overlay: $n file(s) updated in $tree"
	return 0
}

apply_patches() {
	local want have p
	local patches=("$GVT_RS_ROOT"/patches/kernel/*.patch)
	[ -f "${patches[0]}" ] || patches=()
	want=$(cat /dev/null "${patches[@]}" | sha256sum | cut -c1-16)
	have=$(cat "$state/patches.sha" 2>/dev/null || true)
	[ "$want" = "$have" ] && return
	if [ -d "$state/applied" ]; then
		log "reverting the previously applied kernel patches"
		# In reverse order of application (the glob sorts).
		local applied=("$state"/applied/*.patch) i
		for ((i = ${#applied[@]} - 1; i >= 0; i--)); do
			p=${applied[i]}
			[ -f "$p" ] || continue
			patch -s -d "$tree" -p1 -R --no-backup-if-mismatch <"$p" ||
				die "cannot revert $p: restore a pristine tree (remove $tree)"
		done
		rm -rf "$state/applied"
	fi
	mkdir -p "$state/applied"
	for p in "${patches[@]}"; do
		log "applying $(basename "$p")"
		patch -s -d "$tree" -p1 -N --no-backup-if-mismatch <"$p" ||
			die "$(basename "$p") does not apply to $tree"
		cp "$p" "$state/applied/"
	done
	echo "$want" >"$state/patches.sha"
}

sync_overlay
apply_patches
