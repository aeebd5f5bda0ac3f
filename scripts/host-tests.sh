#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side tests of the pure crates (the policy core and the tools).
#
#   scripts/host-tests.sh test    cargo test
#   scripts/host-tests.sh lint    rustfmt --check + clippy -D warnings

source "$(dirname "$0")/common.sh"

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$GVT_RS_CACHE/cargo-target}
crates=()
for c in drivers/gvt-rs/core tools/gvt-sim; do
	[ -f "$GVT_RS_ROOT/$c/Cargo.toml" ] && crates+=("$c")
done

case "${1:-test}" in
test)
	for c in "${crates[@]}"; do
		log "cargo test: $c"
		# Release builds with overflow checks on (see the crates' profiles).
		if ! (cd "$GVT_RS_ROOT/$c" && cargo test --release --quiet >"$CARGO_TARGET_DIR/test.log" 2>&1); then
			tail -n 60 "$CARGO_TARGET_DIR/test.log" >&2
			die "host tests failed in $c"
		fi
		awk '/^test result:/ { p += $4; f += $6 } END { printf "  %d passed, %d failed\n", p, f }' \
			"$CARGO_TARGET_DIR/test.log" >&2
	done
	;;
lint)
	for c in "${crates[@]}"; do
		log "rustfmt + clippy: $c"
		(cd "$GVT_RS_ROOT/$c" && cargo fmt --check) || die "rustfmt: run 'cargo fmt' in $c"
		(cd "$GVT_RS_ROOT/$c" && cargo clippy --quiet --all-targets -- -D warnings) ||
			die "clippy warnings in $c"
	done
	;;
*) die "usage: host-tests.sh test|lint" ;;
esac
