#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates every scheduling reproduction and benchmark of
# Documentation/gvt-rs/results-scheduling.rst, the slot experiments of
# results-slots.rst and the thread-division model of papers.rst.
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
"$sim/gvt-sim" drmtune >"$out/drmtune.txt"
for f in fig4 vmcg issue187 fig11 mixes interactive fairgv joinleave-tbs joinleave-vmcg joinleave-sfq drmfair drmtune; do
	echo "-- $f"
	cat "$out/$f.txt"
done

echo "== slot experiments and thread division -> $out"
cargo build --release -q --bin gvt-slots --bin gvt-threads
"$sim/gvt-slots" repro >"$out/slots-repro.txt"
"$sim/gvt-slots" --secs 300 --seeds 3 mix >"$out/slots-mix.txt"
"$sim/gvt-slots" --secs 300 --seeds 3 sets >"$out/slots-sets.txt"
"$sim/gvt-slots" --secs 300 --cases 8 --policy rr,tbs optimal >"$out/slots-optimal.txt"
"$sim/gvt-slots" --secs 300 --cases 4 detail >"$out/slots-detail.txt"
"$sim/gvt-slots" --secs 300 --seeds 3 switch >"$out/slots-switch.txt"
"$sim/gvt-slots" --secs 300 --seeds 3 reloc >"$out/slots-reloc.txt"
"$sim/gvt-threads" >"$out/threads.txt"
for f in slots-repro slots-mix slots-sets slots-optimal slots-detail slots-switch slots-reloc threads; do
	echo "-- $f"
	cat "$out/$f.txt"
done

echo "== decision cost (ns per call)"
"$sim/gvt-bench" "${GVT_BENCH_CYCLES:-200000}" | tee "$out/bench.txt"

echo "== slot pool and GTT copy cost (host timing)"
"$sim/gvt-slots" bench | tee "$out/slots-bench.txt"
"$sim/gvt-slots" copybench | tee "$out/slots-copybench.txt"
