#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates every scheduling reproduction and benchmark of
# Documentation/gvt-rs/results-scheduling.rst.
#
#   tools/gvt-sim/reproduce.sh [OUT_DIR]     (default: tools/gvt-sim/target/sched-results)
#
# Deterministic: the simulator has no randomness but its seeded jitter, so the
# tables are identical on every machine. The benchmark figures depend on the
# host (and on its load: the minimum over 20 batches is reported).

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/target/sched-results}
mkdir -p "$out"

echo "== core tests (every policy rule, paper examples, properties)"
(cd "$root/drivers/gvt-rs/core" && cargo test --release -q sched 2>&1 | tail -n 3)

echo "== simulator reproductions -> $out"
cd "$here"
cargo build --release -q --bin gvt-sim --bin gvt-bench
sim=$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
	sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release
"$sim/gvt-sim" all --out "$out" >/dev/null
for f in fig4 vmcg issue187 fig11 mixes interactive joinleave-tbs joinleave-vmcg joinleave-sfq; do
	echo "-- $f"
	cat "$out/$f.txt"
done

echo "== decision cost (ns per call)"
"$sim/gvt-bench" "${GVT_BENCH_CYCLES:-200000}" | tee "$out/bench.txt"
