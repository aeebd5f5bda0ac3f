#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the pure crates (the policy core and the tools).
#
#   scripts/host-tests.sh test    cargo test
#   scripts/host-tests.sh lint    shellcheck + rustfmt --check + clippy -D warnings
#
# `test` ends with a "host: N passed, M failed" total (a crate that fails
# without a failing test, e.g. one that does not build, counts as one
# failure) and, when $GVT_RS_COUNTS names a file (scripts/check.sh), appends
# "host N M" to it.

source "$(dirname "$0")/common.sh"

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$GVT_RS_CACHE/cargo-target}
crates=()
for c in drivers/gvt-rs/core tools/gvt-sim; do
	[ -f "$GVT_RS_ROOT/$c/Cargo.toml" ] && crates+=("$c")
done

# The shell scripts, relative to the repository, one a line: the tracked
# files named *.sh or starting with a sh or bash shebang (outside a git
# checkout, e.g. an unpacked tarball, the same among all files).
shell_scripts() {
	local f first
	(
		cd "$GVT_RS_ROOT" || exit
		if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
			git ls-files -z
		else
			find . -path ./.git -prune -o -path '*/target' -prune -o -type f -printf '%P\0'
		fi
	) | while IFS= read -r -d '' f; do
		[ -f "$GVT_RS_ROOT/$f" ] || continue
		first=
		case $f in
		*.sh) ;;
		*)
			IFS= read -r -n 128 first <"$GVT_RS_ROOT/$f" || true
			[[ $first =~ ^#!.*/(env[[:space:]]+)?(ba)?sh([[:space:]]|$) ]] || continue
			;;
		esac
		printf '%s\n' "$f"
	done | LC_ALL=C sort
}

case "${1:-test}" in
test)
	mkdir -p "$CARGO_TARGET_DIR"
	total_p=0 total_f=0
	# The total, also for check.sh's grand total.
	total() {
		printf 'host: %d passed, %d failed\n' "$total_p" "$total_f" >&2
		if [ -n "${GVT_RS_COUNTS:-}" ]; then
			echo "host $total_p $total_f" >>"$GVT_RS_COUNTS"
		fi
	}
	for c in "${crates[@]}"; do
		log "cargo test: $c"
		testlog=$CARGO_TARGET_DIR/test.log
		# Release builds with overflow checks on (see the crates' profiles).
		ok=1
		(cd "$GVT_RS_ROOT/$c" && cargo test --release --quiet --no-fail-fast >"$testlog" 2>&1) || ok=0
		read -r p f < <(awk '/^test result:/ { p += $4; f += $6 } END { print p + 0, f + 0 }' "$testlog")
		if [ "$ok" = 0 ] && [ "$f" -eq 0 ]; then
			f=1
		fi
		total_p=$((total_p + p)) total_f=$((total_f + f))
		if [ "$ok" = 0 ]; then
			tail -n 60 "$testlog" >&2
			total
			die "host tests failed in $c"
		fi
		if [ "$p" -eq 0 ]; then
			printf '  no unit tests\n' >&2
		else
			printf '  %d passed, %d failed\n' "$p" "$f" >&2
		fi
	done
	total
	;;
lint)
	# Every shell script, with the repository's .shellcheckrc; any finding
	# at shellcheck's default severity (style included) fails.
	command -v shellcheck >/dev/null ||
		die "shellcheck is missing (scripts/bootstrap.sh installs it)"
	mapfile -t scripts < <(shell_scripts)
	[ ${#scripts[@]} -gt 0 ] || die "no shell scripts found"
	log "shellcheck: ${#scripts[@]} scripts"
	(cd "$GVT_RS_ROOT" && shellcheck "${scripts[@]}") ||
		die "shellcheck: fix the findings above (or disable one on its line, with the reason)"
	# mdevctl is a Rust program: it panics on EPIPE, which a reader that
	# exits at its first match (grep -q) causes when mdevctl writes on.
	early=$(cd "$GVT_RS_ROOT" &&
		git grep -nE '(mdevctl|MDEVCTL)[[:space:]][^|#]*[|][[:space:]]*grep[^|]*-[a-zA-Z]*q' -- tools/testing scripts) ||
		true
	[ -z "$early" ] || {
		printf '%s\n' "$early" >&2
		die "read mdevctl output to its end: grep ... >/dev/null, not grep -q"
	}
	# The kernel-side Rust (the module and rust/kernel additions) with the
	# kernel's .rustfmt.toml settings, as `make rustfmtcheck` would.
	log "rustfmt: drivers/gvt-rs and rust/ (kernel settings)"
	kfiles=$(cd "$GVT_RS_ROOT" && find drivers/gvt-rs rust -name '*.rs' -not -path 'drivers/gvt-rs/core/*' | LC_ALL=C sort)
	# shellcheck disable=SC2086 # $kfiles: one file a word
	(cd "$GVT_RS_ROOT" && rustfmt --edition 2021 --check \
		--config skip_children=true,newline_style=Unix $kfiles) ||
		die "rustfmt: run 'rustfmt --edition 2021 FILE' on the files above"
	log "vertical imports: every Rust file"
	horizontal=$(cd "$GVT_RS_ROOT" && git ls-files -z '*.rs' | xargs -0 awk -f scripts/vertical-imports.awk)
	[ -z "$horizontal" ] || {
		printf '%s\n' "$horizontal" >&2
		die "imports: one item a line, as in Documentation/rust/coding-guidelines.rst (end each list with '//' and run rustfmt)"
	}
	for c in "${crates[@]}"; do
		log "rustfmt + clippy + rustdoc: $c"
		(cd "$GVT_RS_ROOT/$c" && cargo fmt --check) || die "rustfmt: run 'cargo fmt' in $c"
		(cd "$GVT_RS_ROOT/$c" && cargo clippy --quiet --all-targets -- -D warnings) ||
			die "clippy warnings in $c"
		# Broken intra-doc links are what a reader of the docs trips on.
		(cd "$GVT_RS_ROOT/$c" && RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps) ||
			die "rustdoc warnings in $c"
	done
	;;
*) die "usage: host-tests.sh test|lint" ;;
esac
