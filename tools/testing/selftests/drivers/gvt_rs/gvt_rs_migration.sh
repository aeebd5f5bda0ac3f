#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Live migration of a running vGPU (VFIO migration v2), without QEMU:
# gvt_migrate holds a source and a destination vGPU of the same type as a
# VMM does, with a running workload stream on the source, and checks a
# cancelled migration (the source goes on), streams the destination must
# refuse (corrupted, truncated, of another version, of another type: each
# leaves it clean, as after a reset), then the migration itself: the
# workload continues on the destination with its fences in order and every
# workload completed once. The source's weight moves with it (the
# scheduling identity), and the source is released afterwards. The stream
# size and the stop-copy time are figures, not conditions. gvt_migrate
# runs once with VFIO containers and once (-I) with iommufd, as QEMU may
# open the devices either way.

. "$(dirname "$0")/gvt_rs_lib.sh"

GVT_MIGRATE=$(dirname "$0")/gvt_migrate
out=/tmp/gvt_migrate.out

# tool_ok NAME: gvt_migrate reported the check NAME passed.
tool_ok() {
	grep -qxF "# ok: $1" "$out"
}

ktap_print_header
ktap_set_plan 28

check "gvt_rs ready" sim_ready
set_attr "$GVT_GPU/policy" sfq
src=$(vgpu_create GVTg_V5_4)
dst=$(vgpu_create GVTg_V5_4)
other=$(vgpu_create GVTg_V5_8)
# A weight that is not the type's: it must move with the vGPU.
set_attr "$(vgpu_attr "$src" weight)" 7
"$GVT_MIGRATE" -x "$other" "$src" "$dst" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
for c in \
	"the vGPU offers migration: STOP_COPY, no PRE_COPY" \
	"a vGPU opened is RUNNING" \
	"PRE_COPY is refused with EINVAL, the state unchanged" \
	"the source runs, fences in order" \
	"cancel: STOP_COPY, part of the stream read, back to RUNNING" \
	"cancel: the data fd fails once the session ended (ENODEV)" \
	"cancel: the source goes on running, fences in order" \
	"STOP_COPY: the stream read to its end, of the size announced" \
	"STOP_COPY: the source completes nothing more" \
	"a corrupted stream: the destination is in ERROR and clean" \
	"a truncated stream: the destination is in ERROR and clean" \
	"a stream of another version: the destination is in ERROR and clean" \
	"a stream of another vGPU type: the destination is in ERROR and clean" \
	"a corrupted stream: ERROR is left only by a reset (EINVAL)" \
	"a stream of another vGPU type: a reset returns the destination to RUNNING" \
	"RESUMING: the stream written in pieces, the destination RUNNING" \
	"the source back to STOP" \
	"the destination has the GTT entries the guest wrote" \
	"the destination has the rings and the status page" \
	"the workload continues on the destination, fences in order" \
	"every workload submitted completed once, in order, across the migration"; do
	check "$c" tool_ok "$c"
done
# refused WHAT ERRNO_TEXT: gvt_migrate's refusal of WHAT, with its errno.
refused() {
	grep -q "^# ok: $1: refused (write $2" "$out"
}
check "refusals with their errnos: EBADMSG, ENODATA, EPROTONOSUPPORT, EINVAL" eval \
	"refused 'a corrupted stream' 'Bad message, STOP Bad message' &&
	 refused 'a truncated stream' 'Success, STOP No data available' &&
	 refused 'a stream of another version' 'Protocol not supported' &&
	 refused 'a stream of another vGPU type' 'Invalid argument'"
check "gvt_migrate: every check passed" test "$rc" = 0
check "the destination has the source's weight" \
	test "$(cat "$(vgpu_attr "$dst" weight)")" = 7
echo "# figure: $(grep '^migration:' "$out")"
dmesg | grep 'migration stream refused' | tail -4 | sed 's/^/# /'
# The source is released: its vGPU goes, the destination stays.
vgpu_remove "$src"
vgpu_remove "$other"
check "the source is released" test ! -e "/sys/bus/mdev/devices/$src"
vgpu_remove "$dst"

# The same migration with the devices bound to iommufd (-I).
src=$(vgpu_create GVTg_V5_4)
dst=$(vgpu_create GVTg_V5_4)
"$GVT_MIGRATE" -I "$src" "$dst" >"$out" 2>&1
rc=$?
sed 's/^/# iommufd: /' "$out"
check "gvt_migrate -I (iommufd): every check passed" test "$rc" = 0
vgpu_remove "$src"
vgpu_remove "$dst"
check "the destination is released" test ! -e "/sys/bus/mdev/devices/$dst"
set_attr "$GVT_GPU/policy" tbs
ktap_finished
