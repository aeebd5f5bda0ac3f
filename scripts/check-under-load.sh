#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check` on a busy machine: RUNS complete runs in a row (default 5)
# with HOGS CPU-bound processes (default 1: "another build on the other
# core" of a 2-core machine) running beside them at normal priority, from
# the first run's start to the last run's end. Stops at the first failing
# run. Each run's output is kept in $GVT_RS_CACHE/under-load/run-N.log and
# the serial logs of its VMs in run-N-build-*-vm-check*.log; the summary
# gives each run's closing line and duration, and the load average
# the machine saw.
#
#   scripts/check-under-load.sh [RUNS]      (make check-under-load)
#
# Environment: HOGS (default 1).

source "$(dirname "$0")/common.sh"

runs=${1:-5}
hogs=${HOGS:-1}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number, not '$runs'"
[[ $hogs =~ ^[0-9]+$ ]] || die "HOGS must be a number, not '$hogs'"

out=$GVT_RS_CACHE/under-load
mkdir -p "$out"
summary=$out/summary.txt

pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_hogs() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap stop_hogs EXIT
for ((i = 0; i < hogs; i++)); do
	sha256sum /dev/zero >/dev/null &
	pids+=($!)
done
log "$hogs CPU hog(s) started: ${pids[*]}"

{
	printf '# make check, %d run(s) in a row, %d CPU hog(s) beside them, %s, commit %s\n' \
		"$runs" "$hogs" "$(date -u '+%F %T UTC')" \
		"$(git -C "$GVT_RS_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
	printf '# %s CPUs\n' "$(nproc)"
} >"$summary"
rc=0
for ((n = 1; n <= runs; n++)); do
	log "run $n of $runs (log $out/run-$n.log)"
	t=$(date +%s)
	"$GVT_RS_ROOT/scripts/check.sh" >"$out/run-$n.log" 2>&1 || rc=$?
	last=$(tail -n 1 "$out/run-$n.log")
	printf 'run %d: exit %d, %d s, %s, load average %s\n' "$n" "$rc" \
		"$(($(date +%s) - t))" "$last" "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$summary"
	# The serial logs of the VMs of this run (the next run overwrites
	# them): the figures behind each ok line.
	for f in "$BUILD_DIR"-vm/vm-check.log "$BUILD_DIR"-vm/vm-check-debian.log \
		"$BUILD_DIR"-kasan/vm-check.log; do
		[ ! -f "$f" ] || cp "$f" "$out/run-$n-$(basename "$(dirname "$f")")-$(basename "$f")"
	done
	[ "$rc" -eq 0 ] || break
done
cat "$summary"
exit "$rc"
