#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lay gvt-rs into a kernel source tree:
#  1. copy the project's new files (rust/, drivers/gvt-rs/) into the tree,
#     touching only files whose content changed, so rebuilds stay incremental;
#  2. apply the hook patches in patches/kernel/ (edits to existing kernel
#     files), reverting the previously applied set first when it changed.
#     The tree keeps a copy of each patch it applied ($tree/.gvt-rs/applied)
#     and reverts those copies, so a patch that was removed from, renamed in
#     or changed in patches/kernel since the last run is reverted as it was
#     applied. A patch is applied only if all of it applies (checked with
#     --dry-run first), so a failure leaves no half-applied patch behind and
#     the next run reverts exactly what the tree holds.
#     A patch's sections for project files (which step 1 copied whole) are
#     left out: they are the intermediate versions of those files that the
#     exported series shows in its driver patches (scripts/export-patches.sh).
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

# hook_sections PATCH LIST: PATCH without its sections (one file's diff
# each) for the files that LIST names, one path a line; fails if no section
# is left.
hook_sections() {
	awk -v SKIP="$2" '
	BEGIN {
		while ((getline l < SKIP) > 0)
			skip[l] = 1
	}
	{ line[++n] = $0 }
	END {
		# Section starts: the "--- " line of a "--- "/"+++ " pair, moved back
		# over the git extended header lines before it.
		for (i = 1; i < n; i++) {
			if (line[i] !~ /^--- / || line[i + 1] !~ /^\+\+\+ /)
				continue
			s = i
			while (s > 1 && line[s - 1] ~ /^(diff --git |index |new file mode |deleted file mode |old mode |new mode |similarity index |rename from |rename to )/)
				s--
			p = line[i + 1]
			if (p ~ /^\+\+\+ \/dev\/null/)
				p = line[i]
			sub(/^(---|\+\+\+) [ab]\//, "", p)
			sub(/\t.*/, "", p)
			start[++m] = s
			path[m] = p
		}
		first = m ? start[1] : n + 1
		for (i = 1; i < first; i++)
			print line[i]
		kept = 0
		for (k = 1; k <= m; k++) {
			end = k < m ? start[k + 1] - 1 : n
			if (path[k] in skip)
				continue
			kept++
			for (i = start[k]; i <= end; i++)
				print line[i]
		}
		exit kept ? 0 : 1
	}
	' "$1"
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
	local hooks=$state/hooks.patch
	for p in "${patches[@]}"; do
		if ! hook_sections "$p" "$state/manifest" >"$hooks"; then
			log "$(basename "$p"): project files only"
			continue
		fi
		log "applying $(basename "$p")"
		patch -s -d "$tree" -p1 -N --dry-run <"$hooks" >/dev/null ||
			die "$(basename "$p") does not apply to $tree (the patches before it are applied and recorded; the next run reverts them)"
		patch -s -d "$tree" -p1 -N --no-backup-if-mismatch <"$hooks" ||
			die "$(basename "$p") failed to apply to $tree after a dry run succeeded: restore a pristine tree (remove $tree)"
		cp "$hooks" "$state/applied/$(basename "$p")"
	done
	rm -f "$hooks"
	echo "$want" >"$state/patches.sha"
}

sync_overlay
apply_patches
