#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export gvt-rs as a git-format-patch series against pristine Linux 7.3, for
# distributions to carry.
#
#   scripts/export-patches.sh OUT_DIR
#
# Every patches/kernel/NNNN-*.patch becomes one commit, numbered in order
# from 0001. A patch names the project files that belong to it with
# "gvt-rs-overlay: PATH..." lines in its description (e.g. the sysfs patch
# adds rust/kernel/sysfs.rs), so that each commit builds; a project file
# that no patch claims is an error. A patch may also carry sections for
# project files that a later patch claims: the versions of those files at
# that point of the series (the driver's Kconfig, Makefile and
# gvt_rs_main.rs grow with each driver patch). scripts/prepare-tree.sh
# leaves those sections out, and here every project file must end up as
# the project has it. The cover letter, 0000-cover-letter.patch, is
# patches/cover-letter.txt with git format-patch's shortlog and diffstat;
# the series file lists the patches without it. The result applies with
# `git am` (or `patch -p1` in order) to the tree that
# scripts/linux-source.sh unpacks.
#
# Needs git and the pristine source, nothing else: KDIR if it is set and not
# prepared by scripts/prepare-tree.sh, else the pinned Debian source,
# unpacked once into $GVT_RS_CACHE/pristine (and downloaded first if the
# .deb is not cached). That tree is only read; the commits are made in a
# temporary directory, the commit messages written beside it. No build lock
# is taken. Dates are the repository's last commit's, so the same sources
# export to the same files.

source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/linux-source.sh"

outdir=$(realpath -m "${1:?usage: export-patches.sh OUT_DIR}")
if [ -n "${KDIR:-}" ]; then
	[ -f "$KDIR/Makefile" ] || die "KDIR=$KDIR is not a kernel source tree"
	[ ! -d "$KDIR/.gvt-rs" ] ||
		die "KDIR=$KDIR carries gvt-rs already (prepared by scripts/prepare-tree.sh): unset KDIR to export against the pinned Debian source"
	pristine=$(cd "$KDIR" && pwd)
else
	pristine=$(pristine_linux_source)
fi

patches=("$GVT_RS_ROOT"/patches/kernel/*.patch)
tmp=$(mktemp -d)
trap 'rm -rf --one-file-system "$tmp"' EXIT
work=$tmp/linux
mkdir "$work"
git_c=(git -C "$work" -c user.name="gvt-rs developers" -c user.email=gvt-rs@example.org
	-c core.autocrlf=false -c commit.gpgsign=false)
export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
GIT_AUTHOR_DATE=$(git -C "$GVT_RS_ROOT" log -1 --format=%cI 2>/dev/null || date -R)
GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

# The pristine files the patches edit, as the base commit.
touched=$(sed -n 's|^--- a/||p; s|^+++ b/||p' "${patches[@]}" | sed 's|\t.*||' | LC_ALL=C sort -u)
for f in $touched; do
	[ -f "$pristine/$f" ] || continue
	mkdir -p "$work/$(dirname "$f")"
	cp "$pristine/$f" "$work/$f"
done
"${git_c[@]}" init -q
"${git_c[@]}" add -A
"${git_c[@]}" commit -q --allow-empty -m "pristine Linux files that gvt-rs edits"
base=$("${git_c[@]}" rev-parse HEAD)

overlay=$(overlay_files Documentation)
claimed=$tmp/claimed
: >"$claimed"

# Copy the project files under the paths given into the work tree.
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

msg=$tmp/msg
for p in "${patches[@]}"; do
	patch -s -d "$work" -p1 -N --no-backup-if-mismatch <"$p" ||
		die "$(basename "$p") does not apply in order"
	mapfile -t claims < <(sed -n 's/^gvt-rs-overlay: //p' "$p" | tr ' ' '\n' | sed '/^$/d')
	add_overlay "${claims[@]}"
	# Commit message: the Subject without [PATCH], then the body up to '---'.
	awk '
		/^Subject: / { sub(/^Subject: (\[[^]]*\] )?/, ""); subj = $0; insubj = 1; next }
		insubj && /^ / { subj = subj $0; next }
		insubj { insubj = 0; print subj; inbody = 1 }
		inbody && /^---$/ { exit }
		inbody && !/^gvt-rs-overlay: / { print }
	' "$p" >"$msg"
	grep -q '^Signed-off-by: ' "$msg" || die "$(basename "$p") has no Signed-off-by"
	[ "$(sed -n '3,/^Signed-off-by: /p' "$msg" | grep -c .)" -gt 1 ] ||
		die "$(basename "$p") has no description"
	"${git_c[@]}" add -A
	"${git_c[@]}" commit -q -F "$msg"
done

unclaimed=$(comm -23 <(echo "$overlay") <(LC_ALL=C sort "$claimed"))
[ -z "$unclaimed" ] || die "no patch in patches/kernel claims these files (add a gvt-rs-overlay: line):
$unclaimed"
# A section for a project file after the patch that claims it would leave
# an intermediate version at the end.
for f in $overlay; do
	cmp -s "$GVT_RS_ROOT/$f" "$work/$f" ||
		die "$f differs from the project's at the end of the series: a patch after the one that claims it changes it"
done

# Nothing but the kernel tree's own files: an edited or removed file must
# exist in the pristine tree, an added one must be a project file or one
# that a patch creates.
created=$(awk '/^--- \/dev\/null/ { getline; sub(/^\+\+\+ b\//, ""); sub(/\t.*/, ""); print }' "${patches[@]}")
while IFS=$'\t' read -r status path; do
	case $status in
	A) grep -qxF "$path" <<<"$overlay"$'\n'"$created" ||
		die "the series adds $path, which is neither a project file nor created by a patch" ;;
	*) [ -f "$pristine/$path" ] || die "the series changes $path, which the pristine tree does not have" ;;
	esac
done < <("${git_c[@]}" diff --no-renames --name-status "$base" HEAD)

rm -rf --one-file-system "$outdir"
mkdir -p "$outdir"
"${git_c[@]}" format-patch -q --no-signature --cover-letter -o "$outdir" "$base"..HEAD
# The cover letter: format-patch's placeholders replaced.
cover=$outdir/0000-cover-letter.patch
letter=$GVT_RS_ROOT/patches/cover-letter.txt
grep -v '^#' "$letter" | sed -n 1p >"$tmp/subject"
grep -v '^#' "$letter" | sed '1d' | sed '/./,$!d' >"$tmp/blurb"
if [ ! -s "$tmp/subject" ] || [ ! -s "$tmp/blurb" ]; then
	die "$letter needs a subject line and a text"
fi
awk -v subj="$(cat "$tmp/subject")" -v blurb="$tmp/blurb" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
	/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) print l; next }
	{ print }
' "$cover" >"$tmp/cover"
mv "$tmp/cover" "$cover"
! grep -q '\*\*\* .* HERE \*\*\*' "$cover" || die "a placeholder is left in $cover"
(cd "$outdir" && find . -maxdepth 1 -name '*.patch' ! -name 0000-cover-letter.patch -printf '%f\n' |
	LC_ALL=C sort >series)
log "exported $(wc -l <"$outdir/series") patches and a cover letter to $outdir (apply with git am, in the order of $outdir/series)"
