#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export gvt-rs as a git-format-patch series against pristine Linux 7.3, for
# distributions to carry.
#
#   scripts/export-patches.sh OUT_DIR
#
# Every patches/kernel/NNNN-*.patch becomes one commit. A patch may name the
# project files that belong to it with "gvt-rs-overlay: PATH..." lines in its
# description (e.g. the sysfs patch adds rust/kernel/sysfs.rs), so that each
# commit builds. Project files no patch claims go into a final commit per
# top-level directory. The result applies with `git am` (or `patch -p1` in
# order) to the tree that scripts/bootstrap.sh fetches.

source "$(dirname "$0")/common.sh"
take_build_lock

outdir=$(realpath -m "${1:?usage: export-patches.sh OUT_DIR}")
source "$GVT_RS_CACHE/env.sh" 2>/dev/null || "$GVT_RS_ROOT/scripts/bootstrap.sh"
source "$GVT_RS_CACHE/env.sh"
ksrc=${KDIR:-$GVT_RS_KSRC}
"$GVT_RS_ROOT/scripts/prepare-tree.sh" "$ksrc"

patches=("$GVT_RS_ROOT"/patches/kernel/*.patch)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Pristine copies of every file the patches touch: the tree's copies with
# the applied patches reverted.
touched=$(grep -h '^+++ b/' "${patches[@]}" | sed 's|^+++ b/||; s|\t.*||' | sort -u)
for f in $touched; do
	[ -f "$ksrc/$f" ] || continue
	mkdir -p "$work/$(dirname "$f")"
	cp "$ksrc/$f" "$work/$f"
done
for ((i = ${#patches[@]} - 1; i >= 0; i--)); do
	patch -s -d "$work" -p1 -R --no-backup-if-mismatch -f <"${patches[$i]}" >/dev/null ||
		die "cannot reverse $(basename "${patches[$i]}") on the tree's copies"
done
# Files the patches create did not exist in the pristine tree.
find "$work" -type f -empty -delete

git -C "$work" init -q
git -C "$work" -c user.name=gvt-rs -c user.email=gvt-rs@example.org add -A
git -C "$work" -c user.name=gvt-rs -c user.email=gvt-rs@example.org commit -qm "pristine Linux 7.3 files touched by gvt-rs" --allow-empty
base=$(git -C "$work" rev-parse HEAD)

overlay=$(cd "$GVT_RS_ROOT" && find rust drivers/gvt-rs tools/testing/selftests/drivers/gvt_rs \
	Documentation -type f -not -path '*/target/*' -not -name Cargo.lock 2>/dev/null | LC_ALL=C sort)
claimed=$work/.claimed
: >"$claimed"

add_overlay() {
	local p f
	for p in "$@"; do
		for f in $overlay; do
			case "$f" in "$p" | "$p"/*) ;; *) continue ;; esac
			grep -qxF "$f" "$claimed" && continue
			mkdir -p "$work/$(dirname "$f")"
			cp "$GVT_RS_ROOT/$f" "$work/$f"
			echo "$f" >>"$claimed"
		done
	done
}

commit() {
	# $1: message file
	git -C "$work" add -A -- . ':!.claimed'
	git -C "$work" -c user.name="gvt-rs developers" -c user.email=gvt-rs@example.org \
		commit -q -F "$1"
}

for p in "${patches[@]}"; do
	patch -s -d "$work" -p1 -N --no-backup-if-mismatch <"$p" ||
		die "$(basename "$p") does not apply in order"
	add_overlay $(sed -n 's/^gvt-rs-overlay: //p' "$p")
	# Commit message: the Subject without [PATCH], then the body up to '---'.
	awk '
		/^Subject: / { sub(/^Subject: (\[[^]]*\] )?/, ""); subj = $0; insubj = 1; next }
		insubj && /^ / { subj = subj $0; next }
		insubj { insubj = 0; print subj; inbody = 1 }
		inbody && /^---$/ { exit }
		inbody && !/^gvt-rs-overlay: / { print }
	' "$p" >"$work/.msg"
	[ -s "$work/.msg" ] || echo "$(basename "$p" .patch)" >"$work/.msg"
	commit "$work/.msg"
	rm -f "$work/.msg"
done

for dir in rust drivers/gvt-rs tools/testing/selftests/drivers/gvt_rs Documentation; do
	before=$(wc -l <"$claimed")
	add_overlay "$dir"
	[ "$(wc -l <"$claimed")" -gt "$before" ] || continue
	printf 'gvt-rs: add %s\n\nSigned-off-by: gvt-rs developers <gvt-rs@example.org>\n' "$dir" >"$work/.msg"
	commit "$work/.msg"
	rm -f "$work/.msg"
done

rm -rf "$outdir"
mkdir -p "$outdir"
git -C "$work" format-patch -q -o "$outdir" "$base"..HEAD
(cd "$outdir" && ls *.patch >series)
log "exported $(wc -l <"$outdir/series") patches to $outdir (apply with git am, in the order of $outdir/series)"
