#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a distribution does with the gvt-rs patch series, on every
# `make check`:
#  1. export the series (scripts/export-patches.sh) against the pristine
#     Linux source;
#  2. `git am` it into a scratch git tree of the pristine files it edits;
#  3. check that the result equals the tested tree: the same pristine files
#     prepared by scripts/prepare-tree.sh (the overlay and patches/kernel),
#     plus the documentation, which only the series carries;
#  4. run checkpatch.pl --strict on every patch: no error, and exactly the
#     warnings and checks that scripts/series-checkpatch.txt lists (per file
#     and type, with their counts and reasons), so that a new one fails, and
#     so does a listed one that went away;
#  5. build the production configuration (tinyconfig + scripts/configs/
#     prod.config: GVT_RS=m, GVT_RS_SIM=n, GVT_RS_I915=y with i915 and KVMGT,
#     the guest driver, no debug options) from a full pristine tree with the
#     series applied, with CLIPPY=1, failing on any warning, then the
#     series' C files (drivers/gvt-rs, drivers/gpu/drm/i915/gvt) at W=1, and
#     check the version gvt_rs.ko reports against the CHANGELOG;
#  6. check that each driver patch builds: at every "gvt-rs:" patch of the
#     applied series, compile the module's two crates, the policy core and
#     the driver, as that patch leaves them
#     (drivers/gvt-rs/ from the git am tree at that commit), with the
#     production build's own clippy-driver command and its Rust cfg list,
#     in which the driver's options are those that patch's Kconfig defines,
#     all on; no error, no warning. A patch before the driver's Kconfig
#     exists (the policy core) has nothing for kbuild to build: its check is
#     the core's cargo test (scripts/host-tests.sh). The options off, on the
#     whole driver, are scripts/check-kconfig-variants.sh's.
#
# The build's source tree ($GVT_RS_CACHE/series/linux, a copy of the
# pristine tree to which only the files the series changes are written,
# when their content changed) and its output folder ($GVT_RS_CACHE/
# build-prod) are kept, so later runs rebuild only what changed. It takes no
# build lock: it reads the pristine tree ($GVT_RS_CACHE/pristine, unpacked
# once from the cached .deb) and writes only its own folders, never the
# shared tree in $GVT_RS_CACHE/src or the other build folders.
#
# Prints "series: N passed, M failed" and, when $GVT_RS_COUNTS names a file
# (scripts/check.sh), appends "series N M" to it: one result for each of
# export, git am, equality, the checkpatch list and the build, one per
# patch for checkpatch errors, and one per driver patch for its build.
#
#   scripts/check-series.sh

source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/linux-source.sh"
[ -f "$GVT_RS_CACHE/env.sh" ] || die "run scripts/bootstrap.sh first (bindgen, libclang)"
# shellcheck source=/dev/null # written by scripts/bootstrap.sh
source "$GVT_RS_CACHE/env.sh"

allow=$GVT_RS_ROOT/scripts/series-checkpatch.txt
src=$GVT_RS_CACHE/series/linux
out=$GVT_RS_CACHE/build-prod
jobs=${JOBS:-$(nproc)}

passed=0 failed=0
tmp=$(mktemp -d)
finish() {
	local rc=$?
	rm -rf --one-file-system "$tmp"
	[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
	printf 'series: %d passed, %d failed\n' "$passed" "$failed" >&2
	if [ -n "${GVT_RS_COUNTS:-}" ]; then
		echo "series $passed $failed" >>"$GVT_RS_COUNTS"
	fi
}
trap finish EXIT

# result OK WHAT: count one result.
result() {
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		log "series: ok: $2"
	else
		failed=$((failed + 1))
		log "series: FAILED: $2"
	fi
}

t0=$(date +%s)
pristine=$(pristine_linux_source)

# 1. Export, against the pinned Debian source even when KDIR is set (a KDIR
# tree is prepared in place, so it is not pristine).
env -u KDIR "$GVT_RS_ROOT/scripts/export-patches.sh" "$tmp/patches" ||
	{
		result 1 "export the series"
		exit 1
	}
mapfile -t series <"$tmp/patches/series"
result 0 "export the series (${#series[@]} patches)"

# 2. git am into a scratch tree of the pristine files the series edits.
am=$tmp/am
mkdir "$am"
sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "${series[@]/#/$tmp/patches/}" | LC_ALL=C sort -u |
	while read -r f; do
		[ -f "$pristine/$f" ] || continue
		mkdir -p "$am/$(dirname "$f")"
		cp "$pristine/$f" "$am/$f"
	done
git_am=(git -C "$am" -c user.name=packager -c user.email=packager@example.org -c commit.gpgsign=false)
"${git_am[@]}" init -q
"${git_am[@]}" add -A
"${git_am[@]}" commit -q --allow-empty -m "pristine Linux $LINUX_SOURCE_VERSION files"
if "${git_am[@]}" am -q "${series[@]/#/$tmp/patches/}" >"$tmp/am.log" 2>&1 &&
	[ -z "$("${git_am[@]}" status --porcelain)" ] &&
	[ "$("${git_am[@]}" rev-list --count HEAD)" -eq $((${#series[@]} + 1)) ]; then
	result 0 "git am of every patch, nothing left over"
else
	cat "$tmp/am.log" >&2
	"${git_am[@]}" status --short >&2
	result 1 "git am of every patch, nothing left over"
	exit 1
fi

# 3. The tested tree: the same pristine files, prepared as for the test
# kernel, plus the documentation.
tested=$tmp/tested
mkdir "$tested"
(cd "$am" && git ls-files) | while read -r f; do
	[ -f "$pristine/$f" ] || continue
	mkdir -p "$tested/$(dirname "$f")"
	cp "$pristine/$f" "$tested/$f"
done
"$GVT_RS_ROOT/scripts/prepare-tree.sh" "$tested" 2>/dev/null
rm -rf --one-file-system "$tested/.gvt-rs"
overlay_files Documentation | grep '^Documentation/' | while read -r f; do
	mkdir -p "$tested/$(dirname "$f")"
	cp "$GVT_RS_ROOT/$f" "$tested/$f"
done
if diff -r -x .git "$am" "$tested" >"$tmp/tested.diff"; then
	result 0 "the applied series equals the tested tree"
else
	head -n 40 "$tmp/tested.diff" >&2
	result 1 "the applied series equals the tested tree"
fi

# The build tree: pristine once, then only the files the series changes.
if [ ! -f "$src/.gvt-rs-extracted" ]; then
	log "copying the pristine tree to $src (once)"
	rm -rf --one-file-system "$src" "$src.tmp"
	mkdir -p "$(dirname "$src")"
	cp -a "$pristine" "$src.tmp"
	mv "$src.tmp" "$src"
fi
(cd "$am" && git ls-files) | LC_ALL=C sort >"$tmp/files"
n=0
while read -r f; do
	cmp -s "$am/$f" "$src/$f" && continue
	mkdir -p "$(dirname "$src/$f")"
	cp "$am/$f" "$src/$f.gvt-rs-new"
	mv "$src/$f.gvt-rs-new" "$src/$f"
	n=$((n + 1))
done <"$tmp/files"
# Files the previous series had and this one has not: back to pristine.
if [ -f "$src/.gvt-rs-series" ]; then
	comm -23 "$src/.gvt-rs-series" "$tmp/files" | while read -r f; do
		if [ -f "$pristine/$f" ]; then
			cp "$pristine/$f" "$src/$f"
		else
			rm -f "$src/$f"
		fi
	done
fi
cp "$tmp/files" "$src/.gvt-rs-series"
log "series: $n file(s) of the build tree updated"

# 4. checkpatch: no errors, and the listed warnings and checks only.
# checkpatch.pl caches in its working directory: run it in the scratch one.
mkdir "$tmp/cpwd"
for p in "${series[@]}"; do
	(cd "$tmp/cpwd" && "$src/scripts/checkpatch.pl" --strict --show-types --terse --no-summary \
		--showfile --root="$src" "$tmp/patches/$p") >"$tmp/cp.$p" 2>&1 || true
	if grep -q ': ERROR:' "$tmp/cp.$p"; then
		grep ': ERROR:' "$tmp/cp.$p" >&2
		result 1 "checkpatch: no error in $p"
	else
		result 0 "checkpatch: no error in $p"
	fi
done
# "FILE LEVEL:TYPE COUNT" for what checkpatch found and what the list allows.
cat "$tmp"/cp.* | sed -nE 's/^([^:]+):[0-9]+: (WARNING|CHECK):([A-Z0-9_]+):.*/\1 \2:\3/p' |
	LC_ALL=C sort | uniq -c | awk '{ print $2, $3, $1 }' >"$tmp/found"
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$allow" | awk '{ print $1, $2, $3 }' | LC_ALL=C sort >"$tmp/allowed"
if [ -n "$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$allow" | awk 'NF < 4')" ]; then
	log "every line of $allow needs FILE LEVEL:TYPE COUNT and a reason"
	result 1 "checkpatch: warnings and checks as listed"
elif diff -u "$tmp/allowed" "$tmp/found" >"$tmp/cp.diff"; then
	result 0 "checkpatch: warnings and checks as listed ($(awk '{ n += $3 } END { print n + 0 }' "$tmp/found") in $(wc -l <"$tmp/found") file/type pairs)"
else
	log "checkpatch found (+) other warnings or checks than $allow lists (-):"
	grep '^[-+][^-+]' "$tmp/cp.diff" >&2 || true
	grep -h ': \(WARNING\|CHECK\):' "$tmp"/cp.* | grep -F -f <(sed -n 's/^+\([^ ]*\) [A-Z]*:\([A-Z0-9_]*\) .*/\1:/p' "$tmp/cp.diff") >&2 || true
	result 1 "checkpatch: warnings and checks as listed"
fi
log "series: export, git am, equality and checkpatch took $(($(date +%s) - t0)) s"

# 5. The production build.
t1=$(date +%s)
mkdir -p "$out"
kmake() {
	nice -n 10 make -C "$src" O="$out" LIBCLANG_PATH="$LIBCLANG_PATH" \
		BINDGEN="$TOOLS_DIR/bindgen/bin/bindgen" CLIPPY=1 "$@"
}
warnings() {
	grep -nE '(^|[^a-z_])(warning|error)(\[|:)' "$1" | head -n 20 | grep . >&2
}
fragment=$GVT_RS_ROOT/scripts/configs/prod.config
config_sum=$({
	cat "$fragment" "$src/.gvt-rs-series"
	grep 'Kconfig' "$src/.gvt-rs-series" | sed "s|^|$src/|" | xargs cat
} | sha256sum | cut -c1-16)
build_ok=0
if [ "$(cat "$out/.gvt-rs-config" 2>/dev/null)" != "$config_sum" ] || [ ! -f "$out/.config" ]; then
	log "series: configuring the production kernel: tinyconfig + ${fragment##*/}"
	run_logged "$out/config.log" kmake tinyconfig
	run_logged "$out/config.log" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$fragment"
	run_logged "$out/config.log" kmake olddefconfig
	missing=$(grep -hE '^(CONFIG_|# CONFIG_.* is not set)' "$fragment" | while read -r line; do
		grep -qx "$line" "$out/.config" || echo "$line"
	done)
	[ -z "$missing" ] || die "options not set after olddefconfig (unmet dependencies?):
$missing"
	echo "$config_sum" >"$out/.gvt-rs-config"
fi
if [ ! -f "$out/vmlinux" ]; then
	log "series: building the production kernel from scratch (-j$jobs, 6 to 15 minutes), log in $out/build.log"
else
	log "series: rebuilding the production kernel incrementally, log in $out/build.log"
fi
# The whole kernel without warnings, then the C files of the series at W=1
# (extra warnings and kernel-doc): upstream files are not W=1-clean in this
# configuration (kernel/sched/rt.c). Those objects are compiled again, at
# W=1, and so once more by the next run's build: a few seconds each.
compiled=0
if kmake -j"$jobs" >"$out/build.log" 2>&1; then
	compiled=1
	mapfile -t w1 < <(grep -E '^(drivers/gvt-rs/.*|drivers/gpu/drm/i915/gvt/[^/]*)\.c$' "$src/.gvt-rs-series" |
		sed 's/\.c$/.o/' | while read -r o; do [ -f "$out/$o" ] && echo "$o"; done)
	if warnings "$out/build.log"; then
		log "the production build printed warnings (above; full log $out/build.log)"
	elif ! kmake -j"$jobs" W=1 "${w1[@]}" >"$out/build-w1.log" 2>&1; then
		tail -n 40 "$out/build-w1.log" >&2
		log "the W=1 build of ${#w1[@]} objects failed (full log $out/build-w1.log)"
	elif warnings "$out/build-w1.log"; then
		log "W=1 warnings in the series' C files (above; full log $out/build-w1.log)"
	else
		log "series: W=1 clean: ${w1[*]}"
		build_ok=1
	fi
else
	tail -n 40 "$out/build.log" >&2
	log "the production build failed (full log $out/build.log)"
fi
if [ "$build_ok" = 1 ]; then
	want=$(sed -n 's/^## \[\([0-9][0-9.]*\)\].*/\1/p' "$GVT_RS_ROOT/CHANGELOG" | head -n 1)
	have=$(modinfo -F version "$out/drivers/gvt-rs/gvt_rs.ko" 2>/dev/null || true)
	if [ -z "$want" ] || [ "$have" != "$want" ]; then
		log "gvt_rs.ko reports version '${have}', the CHANGELOG's newest entry is '${want}'"
		build_ok=0
	elif grep -q '^CONFIG_GVT_RS_SIM=[ym]' "$out/.config" || [ -e "$out/drivers/gvt-rs/gvt_rs_sim.ko" ]; then
		log "the production build has the simulated GPU"
		build_ok=0
	elif awk -F'\t' '$3 == "drivers/gvt-rs/gvt_rs"' "$out/Module.symvers" | grep -q .; then
		# The exports are the simulator's (gvt_rs_exports.c), not an API.
		log "the production gvt_rs.ko exports symbols (Module.symvers)"
		build_ok=0
	fi
fi
result $((1 - build_ok)) "production build (GVT_RS_SIM=n, GVT_RS_I915=y, no lockdep, CLIPPY=1, W=1) without warnings, gvt_rs.ko version ${have:-?} exporting nothing, in $(($(date +%s) - t1)) s"

# 6. Each driver patch builds.
t2=$(date +%s)
# The production build's commands for the module's two Rust crates: the
# policy core (gvt_core.o, whose metadata the driver crate reads) and the
# driver (gvt_rs_main.o).
saved_cmd() {
	sed -n "s|^savedcmd_drivers/gvt-rs/$1.o := ||p" "$out/drivers/gvt-rs/.$1.o.cmd" 2>/dev/null || true
}
core_cmd=$(saved_cmd gvt_core)
cmd=$(saved_cmd gvt_rs_main)
# The command of crate $1 with its inputs and outputs in $d, the Rust cfg
# list $d/rustc_cfg.
replay() {
	local c=$2
	c=${c//@.\/include\/generated\/rustc_cfg/@$d/rustc_cfg}
	c=${c//--out-dir drivers\/gvt-rs\//--out-dir $d/}
	c=${c//--emit=dep-info=drivers\/gvt-rs\/.$1.o.d/--emit=dep-info=$d/$1.d}
	c=${c//--emit=obj=drivers\/gvt-rs\/$1.o/--emit=obj=$d/$1.o}
	c=${c//=drivers\/gvt-rs\/libgvt_core.rmeta/=$d/libgvt_core.rmeta}
	c=${c//$src\/drivers\/gvt-rs\/$1.rs/$d/drivers/gvt-rs/$1.rs}
	echo "$c"
}
# The production build compiled everything (warnings or not): its kernel
# crate and its commands for the two crates are those of this series.
if [ "$compiled" != 1 ] || [ -z "$cmd" ] || [ -z "$core_cmd" ] ||
	! grep -q '@./include/generated/rustc_cfg' <<<"$cmd" ||
	! grep -q -- '--extern gvt_core=drivers/gvt-rs/libgvt_core.rmeta' <<<"$cmd" ||
	! grep -q -- '--emit=metadata=drivers/gvt-rs/libgvt_core.rmeta' <<<"$core_cmd"; then
	result 1 "each driver patch builds (needs a completed production build: its commands for gvt_core.o and gvt_rs_main.o)"
else
	while read -r commit subject; do
		d=$tmp/prefix/$commit
		mkdir -p "$d"
		git -C "$am" archive "$commit" drivers/gvt-rs | tar -x -C "$d"
		kconfig=$d/drivers/gvt-rs/Kconfig
		if [ ! -f "$kconfig" ]; then
			log "series: \"$subject\": no Kconfig yet, nothing for kbuild to build"
			continue
		fi
		grep -Ev -- '--cfg=CONFIG_GVT_RS_(SIM|I915)(=|$)' "$out/include/generated/rustc_cfg" >"$d/rustc_cfg"
		on=()
		for o in SIM I915; do
			grep -q "^config GVT_RS_$o\$" "$kconfig" || continue
			printf -- '--cfg=CONFIG_GVT_RS_%s\n--cfg=CONFIG_GVT_RS_%s="y"\n' "$o" "$o" >>"$d/rustc_cfg"
			on+=("GVT_RS_$o")
		done
		what="\"$subject\" builds: gvt_rs with ${on[*]:-no provider}, clippy-clean"
		c1=$(replay gvt_core "$core_cmd")
		c2=$(replay gvt_rs_main "$cmd")
		if (cd "$out" && export RUSTC_BOOTSTRAP=1 CLIPPY_CONF_DIR=$src &&
			eval "nice -n 10 env $c1" && eval "nice -n 10 env $c2") >"$d/log" 2>&1 &&
			[ -s "$d/gvt_core.o" ] && [ -s "$d/gvt_rs_main.o" ] && ! grep -q '^warning' "$d/log"; then
			result 0 "$what"
		else
			grep -A12 -E '^(warning|error)' "$d/log" | head -n 40 >&2 || true
			result 1 "$what"
		fi
	done < <(git -C "$am" log --reverse --format='%H %s' | grep -E '^[0-9a-f]+ gvt-rs: ')
	log "series: the driver patches' builds took $(($(date +%s) - t2)) s"
fi
log "series: done in $(($(date +%s) - t0)) s"
[ "$failed" -eq 0 ]
