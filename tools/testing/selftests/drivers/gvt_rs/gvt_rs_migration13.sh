#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Live migration of a guest with a vGPU by Debian 13's QEMU (10.0), chrooted
# in /debian13 as gvt_rs_qemu13.sh runs it. One L2 guest (scripts/vm/l2-init)
# boots on vGPU A and runs two gvt_gpu_client runs at once (l2-init's '&'):
# copies, each checked against its pattern's checksum, and compute
# workloads, 4 queued, whose fences the client checks in order. Neither
# ends by its time: they run until the destination's vGPU is removed, so
# the client that started on the source is the one that reports on the
# destination's console. Driven through each QEMU's QMP monitor (a pipe):
#   1. a migration to a destination QEMU (-incoming, on vGPU B) cancelled
#      midway (migrate_cancel while RAM is sent, the bandwidth capped):
#      the source runs on, the destination QEMU exits;
#   2. a migration to a file (file:), whose device stream is then corrupted
#      (one byte) and refused by a destination QEMU loading it on vGPU B:
#      that QEMU fails, the kernel says why; the source, paused by the
#      migration, resumes (cont) and its copies go on;
#   3. the live migration to a destination QEMU on vGPU B: the source stops
#      and exits (quit), its vGPU is released and removable; the guest's
#      clients carry on at the destination; the downtime, the RAM sent and the
#      device's stream size (QMP query-migrate) are figures.
# Then vGPU B is removed: QEMU unplugs it, the clients end and report every
# copy verified and every fence in order across the three migrations.
#
# What QEMU 10 needs to migrate a vfio-pci mdev under TCG (hw/vfio/
# migration.c): the device's VFIO_MIGRATION_STOP_COPY, and, as the vGPU has
# no device dirty tracking (VFIO_DEVICE_FEATURE_DMA_LOGGING) and the
# container's is not counted as IOMMU dirty tracking (only an iommufd
# hwpt's is), enable-migration=on: with the default (auto) QEMU blocks the
# migration; with on it warns "VFIO device doesn't support device and
# IOMMU dirty tracking" and migrates. The vGPU is attached through the
# type1 container: there QEMU reads the dirty pages from VFIO_IOMMU_DIRTY_PAGES,
# which for an emulated-IOMMU group are the pages the vendor driver pinned
# or wrote (vfio_dma_rw()), so RAM converges as without the device;
# through iommufd an mdev has no hwpt with dirty tracking and QEMU would
# mark all of RAM dirty at every pass. Nothing else is needed: no
# -global migration.x-..., the device is QEMU's only VFIO device and there
# is no vIOMMU. The destination runs the same command line plus -incoming.
#
# The guest runs under TCG inside the TCG test VM: every wait ends at the
# test's budget, 120 s before the runner's timeout (GVT_RS_TEST_TIMEOUT);
# once one has run out, the test waits no more and the checks left fail on
# what is missing. On exit or SIGTERM the QEMU processes are stopped, the
# vGPUs removed and the root's mounts undone.

. "$(dirname "$0")/gvt_rs_lib.sh"

D=/debian13
QEMU=/usr/bin/qemu-system-x86_64
LIMIT_S=${GVT_RS_TEST_TIMEOUT:-1200}
DEADLINE=$((GVT_T0 + LIMIT_S - 120))
# Copies on both engines and 20 ms compute workloads on engine 0, both
# until the vGPU goes (-t far beyond the test).
RUN="-p,copy,-e,-1,-t,3600&-p,compute,-d,20000,-q,4,-t,3600"
# The guest's kernel command line after gvt_rs_lib.sh's: the runs.
GUEST="gvt_l2.go=1 gvt_l2.run=$RUN gvt_l2.hold=120"
# QEMU's warning for enable-migration=on (above): one line per QEMU.
NO_DIRTY="VFIO device doesn't support device and IOMMU dirty tracking"

ktap_print_header
if [ ! -x "$D$QEMU" ] || [ ! -x /l2/qemu ]; then
	ktap_skip_all "no Debian 13 root with QEMU in this image (make check boots one for it)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 20

src='' d1='' d2='' d3='' ua='' ub='' gave_up=''

# budget_left: the test's budget has not run out; once it has, no wait waits.
budget_left() {
	[ -z "$gave_up" ] && [ "$(uptime_s)" -lt "$DEADLINE" ] && return 0
	[ -n "$gave_up" ] || progress "the test's budget ended"
	gave_up=1
	return 1
}

# wait_line FILE PATTERN PID: until FILE (in the root) has a line matching
# PATTERN, while QEMU PID runs and the budget lasts.
wait_line() {
	until grep -q "$2" "$D$1" 2>/dev/null; do
		if ! running "$3" || ! budget_left; then
			grep -q "$2" "$D$1" 2>/dev/null && break
			progress "gave up waiting for '$2' in $1"
			tail -n 15 "$D$1" | sed "s|^|# ${1#/tmp/}: |"
			return 1
		fi
		sleep 1
	done
	progress "${1#/tmp/}: $2"
}

# wait_exit PID [SECONDS]: until the process PID has exited (within
# SECONDS, default 60, and the budget); its status in $status (the shell's
# wait), 255 if it did not exit.
wait_exit() {
	end=$(($(uptime_s) + ${2:-60}))
	while running "$1" && [ "$(uptime_s)" -lt "$end" ] && budget_left; do
		sleep 1
	done
	status=255
	running "$1" && return 1
	wait "$1"
	status=$?
}

cleanup() {
	trap '' INT TERM
	if [ "$KTAP_TESTNO" -le "$KSFT_NUM_TESTS" ]; then
		while [ "$KTAP_TESTNO" -le "$KSFT_NUM_TESTS" ]; do
			ktap_test_fail "check $KTAP_TESTNO not run: the test ended early"
		done
		ktap_print_totals
	fi
	stop "$src" "$d1" "$d2" "$d3"
	for u in $ua $ub; do
		[ -e "/sys/bus/mdev/devices/$u" ] && echo 1 >"/sys/bus/mdev/devices/$u/remove"
	done
	rm -f "$D/tmp/mig.bin"
	debian_release
}
trap cleanup EXIT
trap 'progress "stopped by SIGTERM"; exit 143' TERM

# start NAME UUID ARGS...: the guest (debian_guest) on vGPU UUID, attached
# through the container and migratable, ARGS after (-incoming); its pid in
# $pid. Its QMP monitor reads the FIFO /tmp/NAME.qmp.in and writes
# /tmp/NAME.qmp.out in the root.
start() {
	name=$1 u=$2
	shift 2
	rm -f "$D/tmp/$name.qmp".*
	: >"$D/tmp/$name.qmp.out"
	mkfifo "$D/tmp/$name.qmp.in"
	debian_guest "$name" "$GUEST" \
		-chardev "pipe,id=qmp,path=/tmp/$name.qmp" -mon chardev=qmp,mode=control \
		-device "vfio-pci,sysfsdev=/sys/bus/mdev/devices/$u,enable-migration=on" "$@"
}

# qmp NAME PID COMMAND [ARGUMENTS]: runs COMMAND on QEMU NAME's monitor
# (PID), ARGUMENTS a JSON object; its answer in $reply (empty if none came
# in 60 s or QEMU exited). Status 0 if QEMU returned, not an error.
qmp_n=0
qmp() {
	qmp_n=$((qmp_n + 1))
	req="{\"execute\": \"$3\"${4:+, \"arguments\": $4}, \"id\": \"t$qmp_n\"}"
	reply=''
	running "$2" || return 1
	# Read-write: the open never waits for a reader.
	printf '%s\n' "$req" 1<>"$D/tmp/$1.qmp.in"
	end=$(($(uptime_s) + 60))
	until reply=$(grep -F "\"id\": \"t$qmp_n\"" "$D/tmp/$1.qmp.out"); do
		if ! running "$2" || [ "$(uptime_s)" -ge "$end" ]; then
			progress "$1: no answer to $req"
			return 1
		fi
		sleep 0.2
	done
	case "$reply" in *'"return"'*) return 0 ;; esac
	progress "$1: $req: $reply"
	return 1
}

# qmp_open NAME PID: QEMU's greeting, then out of capabilities negotiation.
qmp_open() {
	wait_line "/tmp/$1.qmp.out" '"QMP"' "$2" && qmp "$1" "$2" qmp_capabilities
}

# num KEY: the number after "KEY": in $reply (the last one).
num() {
	echo "$reply" | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"
}

# sent WHAT: the bytes query-migrate's $reply says were sent of WHAT: ram
# (RAM) or vfio (VFIO devices' data, here the vGPU's stream), from that
# object's "transferred" (QEMU orders an object's members as it likes).
sent() {
	echo "$reply" | sed -n "s/.*\"$1\": {\([^}]*\)}.*/\1/p" |
		sed -n 's/.*"transferred": \([0-9]*\).*/\1/p'
}

# migration PID: query-migrate on the source until the migration ended;
# its status in $mig ("" if the budget ended), the answer in $reply.
migration() {
	mig=''
	while budget_left && qmp src "$1" query-migrate; do
		s=$(echo "$reply" | sed -n 's/.*"status": "\([a-z-]*\)".*/\1/p')
		case "$s" in
		completed | failed | cancelled)
			mig=$s
			return 0
			;;
		esac
		sleep 1
	done
	return 1
}

# runstate NAME PID: QEMU's run state (query-status).
runstate() {
	qmp "$1" "$2" query-status && echo "$reply" | sed -n 's/.*"status": "\([a-z-]*\)".*/\1/p'
}

# done_on UUID: the workloads gvt-rs completed for the vGPU so far.
done_on() {
	cat "$(vgpu_attr "$1" completed)" 2>/dev/null || echo 0
}

# more_done UUID FROM N: gvt-rs completes N more workloads for the vGPU
# than FROM, within the budget.
more_done() {
	while [ "$(done_on "$1")" -lt $(($2 + $3)) ]; do
		budget_left || return 1
		sleep 1
	done
}

check "gvt_rs ready" sim_ready
version=$(in_debian "$QEMU" --version | head -n 1)
echo "# $version"
mounted() {
	echo "$version" | grep -q '^QEMU emulator version' && debian_mount qemu
}
check "the Debian 13 root is mounted, its QEMU runs: $version" mounted

ua=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
ub=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"
echo "# source vGPU A $ua, destination vGPU B $ub (GVTg_V5_4, the same GPU)"

start src "$ua"
src=$pid
qmp_open src "$src"
wait_line /tmp/src.console "@@L2_READY" "$src"
grep -h "gvt_rs_guest .*: vGPU" "$D/tmp/src.console" | sed 's/^/# /'
a0=$(done_on "$ua")
echo go 1<>"$D/tmp/src.in"
# Both clients run before anything moves.
wait_line /tmp/src.console "@@L2_RUN -p compute" "$src" && more_done "$ua" "$a0" 20
check "the guest runs its copies and workloads on vGPU A (gvt-rs counts them)" \
	test "$(done_on "$ua")" -ge $((a0 + 20))

# 1. Cancelled: RAM is sent at 2 MiB/s, so the migration is still sending
# RAM when the cancel comes (its non-zero pages alone take seconds).
cancelled() {
	budget_left || return 1
	start d1 "$ub" -incoming unix:/tmp/mig1.sock
	d1=$pid
	qmp_open d1 "$d1" || return 1
	qmp src "$src" migrate-set-parameters '{"max-bandwidth": 2097152}' &&
		qmp src "$src" migrate '{"uri": "unix:/tmp/mig1.sock"}' || return 1
	moved=0
	while [ "${moved:-0}" -eq 0 ] && budget_left && qmp src "$src" query-migrate; do
		case "$reply" in *'"status": "active"'*) moved=$(sent ram) ;; esac
		[ "${moved:-0}" -gt 0 ] || sleep 1
	done
	qmp src "$src" migrate_cancel || return 1
	migration "$src"
	state=$(runstate src "$src")
	progress "cancelled after $moved bytes of RAM: migration $mig, the source $state"
	[ "$moved" -gt 0 ] && [ "$mig" = cancelled ] && [ "$state" = running ]
}
check "cancelled midway (RAM being sent): the source runs on" cancelled
wait_exit "$d1"
sed 's/^/# qemu d1: /' "$D/tmp/d1.err"
check "cancelled: the destination QEMU exits with an error" \
	test "$status" -ne 0 -a "$status" -ne 255
a1=$(done_on "$ua")
more_done "$ua" "$a1" 20
check "cancelled: the source's vGPU completes more work" test "$(done_on "$ua")" -ge $((a1 + 20))
# What the source printed up to here: the cancel's.
src_cancel=$(wc -l <"$D/tmp/src.err")

# 2. To a file, then corrupted: the device's stream in the file is found by
# its header ("GVTM", version 1, header size 48), one byte of its body
# flipped. RAM at 1 GiB/s (the cap is QEMU's; TCG sends less); a final
# pass of up to 1 s, as QEMU estimates it from the bandwidth it measures
# under TCG (the downtime achieved is measured).
to_file() {
	budget_left || return 1
	qmp src "$src" migrate-set-parameters \
		'{"max-bandwidth": 1073741824, "downtime-limit": 1000}' &&
		qmp src "$src" migrate '{"uri": "file:/tmp/mig.bin"}' &&
		migration "$src" || return 1
	file_vfio=$(sent vfio)
	state=$(runstate src "$src")
	at=$(in_debian /bin/sh -c "LC_ALL=C grep -obUaP 'GVTM\\x01\\x00\\x30\\x00' /tmp/mig.bin |
		tail -n 1 | cut -d: -f1")
	[ -n "$at" ] || return 1
	len=$(in_debian /usr/bin/od -An -tu4 -j $((at + 8)) -N4 /tmp/mig.bin | tr -d ' ')
	echo "# figure: file migration: $(wc -c <"$D/tmp/mig.bin") bytes in the file;" \
		"the vGPU's stream at $at, $len bytes by its header, QEMU counted ${file_vfio:-?}"
	[ "$mig" = completed ] && [ "$state" = postmigrate ] && [ "$len" = "$file_vfio" ]
}
check "to a file: completes, the source paused, the stream in it as long as its header says" to_file
corrupt() {
	[ -n "$at" ] && [ -n "$len" ] || return 1
	off=$((at + len / 2))
	old=$(in_debian /usr/bin/od -An -tu1 -j "$off" -N1 /tmp/mig.bin | tr -d ' ')
	in_debian /bin/sh -c "printf '\\$(printf %o $((old ^ 0x10)))' |
		dd of=/tmp/mig.bin bs=1 seek=$off conv=notrunc status=none"
}
mark=$(dmesg | wc -l)
d2_refused() {
	corrupt || return 1
	start d2 "$ub" -incoming file:/tmp/mig.bin
	d2=$pid
	wait_exit "$d2"
	sed 's/^/# qemu d2: /' "$D/tmp/d2.err"
	dmesg | tail -n +$((mark + 1)) | grep 'migration stream refused' | sed 's/^/# /'
	[ "$status" -ne 0 ] && [ "$status" -ne 255 ] && grep -q 'Bad message' "$D/tmp/d2.err" &&
		dmesg | tail -n +$((mark + 1)) | grep -q 'migration stream refused: checksum'
}
check "a corrupted stream: the destination QEMU fails, the kernel refuses it (EBADMSG)" d2_refused
resumed() {
	qmp src "$src" cont || return 1
	a2=$(done_on "$ua")
	state=$(runstate src "$src")
	more_done "$ua" "$a2" 20 && [ "$state" = running ]
}
check "a corrupted stream: the source resumes (cont), its vGPU completes more work" resumed
rm -f "$D/tmp/mig.bin"

# 3. The migration.
migrated() {
	budget_left || return 1
	start d3 "$ub" -incoming unix:/tmp/mig3.sock
	d3=$pid
	qmp_open d3 "$d3" || return 1
	b0=$(done_on "$ub")
	qmp src "$src" migrate '{"uri": "unix:/tmp/mig3.sock"}' && migration "$src" || return 1
	echo "# query-migrate: $reply"
	downtime=$(num downtime) total=$(num total-time)
	ram=$(sent ram) vfio=$(sent vfio)
	echo "# figure: migration: downtime ${downtime:-?} ms, total ${total:-?} ms," \
		"RAM sent ${ram:-?} bytes, the vGPU's stream ${vfio:-?} bytes"
	s_state=$(runstate src "$src")
	d_state=$(runstate d3 "$d3")
	a3=$(done_on "$ua")
	progress "migration $mig: the source $s_state, the destination $d_state"
	[ "$mig" = completed ] && [ "$s_state" = postmigrate ] && [ "$d_state" = running ]
}
check "migrated: the source paused, the destination runs" migrated
quit_src() {
	qmp src "$src" quit
	wait_exit "$src"
	[ "$status" = 0 ] && vgpu_remove "$ua" && [ ! -e "/sys/bus/mdev/devices/$ua" ]
}
check "migrated: the source QEMU quits, its vGPU is released (removed)" quit_src
more_done "$ub" "${b0:-0}" 20
b1=$(done_on "$ub")
check "migrated: the guest's work continues on the destination's vGPU" \
	test "$b1" -ge $((${b0:-0} + 20))

# The end: vGPU B removed, QEMU unplugs it, the clients end.
rc=1
if budget_left; then
	(vgpu_remove "$ub") &
	remover=$!
	wait_exit "$remover" "$LIMIT_S"
	rc=$status
	progress "vGPU $ub removed (status $rc)"
fi
check "removing the destination's vGPU completes" test "$rc" = 0
wait_line /tmp/d3.console "@@L2_DONE" "$d3"
wait_exit "$d3"
grep -h "^gvt_gpu_client:" "$D/tmp/src.console" | sed 's/^/# source: /'
grep -h "^gvt_gpu_client:" "$D/tmp/d3.console" | sed 's/^/# destination: /'
echo "# figure: gvt-rs completed $((${a3:-0} - a0)) workloads on vGPU A (source)," \
	"$((b1 - ${b0:-0})) on vGPU B (destination) before its removal"
check "the guest sees its vGPU go, shuts down, the destination QEMU exits" sh -c \
	"grep -q '@@L2_GONE' $D/tmp/d3.console && grep -q '@@L2_DONE' $D/tmp/d3.console &&
	 ! kill -0 $d3 2>/dev/null"
# The clients started on the source and ended on the destination: no
# boot, no run started there, none ended on the source.
check "the clients were not restarted: both started on the source, ended on the destination" \
	sh -c "[ \$(grep -c '^@@L2_RUN -p' $D/tmp/src.console) = 2 ] &&
	 ! grep -q '^@@L2_RUN_END\|^gvt_gpu_client:' $D/tmp/src.console &&
	 ! grep -q '^@@L2_UP\|^@@L2_RUN -p' $D/tmp/d3.console &&
	 [ \$(grep -c '^@@L2_RUN_END' $D/tmp/d3.console) = 2 ]"
check "every copy completed across the migrations verified against its checksum" \
	l2_copies_ok "$D/tmp/d3.console" removed=1
# fences_in_order CONSOLE: the compute run's fences came back in order,
# each right; only the workloads queued at the removal (4) did not come.
fences_in_order() {
	line=$(grep '^gvt_gpu_client: profile=compute' "$1")
	s=$(echo "$line" | sed -n 's/.* submitted=\([0-9]*\).*/\1/p')
	c=$(echo "$line" | sed -n 's/.* completed=\([0-9]*\).*/\1/p')
	ok=$(echo "$line" | sed -n 's/.* fences_ok=\([0-9]*\).*/\1/p')
	case "$line" in *" fences_bad=0 "*) ;; *) return 1 ;; esac
	[ -n "$c" ] && [ "$c" -gt 0 ] && [ "$ok" = "$c" ] && [ $((s - c)) -le 4 ]
}
check "the workloads' fences came back in order across the migrations" \
	fences_in_order "$D/tmp/d3.console"
for g in src d3; do
	sed "s/^/# qemu $g: /" "$D/tmp/$g.err"
done
# The destination's vGPU was removed while QEMU held it: QEMU's teardown of
# its container prints the lines gvt_rs_qemu.sh allows for the same
# removal (the kernel detaches the removed vGPU's group from the container,
# before or after QEMU does, as scheduling has it: EINVAL for QEMU's DMA
# unmaps and its unset), and under TCG the detach's line on the KVM VFIO
# device that TCG never created (gvt_rs_qemu13.sh).
X='0x[0-9a-f]+'
TEARDOWN="KVM VFIO device isn't created yet"
TEARDOWN="$TEARDOWN|vfio_container_dma_unmap\($X, $X, $X\) = -22 \(Invalid argument\)"
TEARDOWN="$TEARDOWN|vfio: error disconnecting group [0-9]+ from container"
# The cancel, as the source's migration thread meets the destination's
# exit, may print its failed write of RAM: allowed until the cancel ended.
CANCEL="Unable to write to socket: Broken pipe"
CANCEL="$CANCEL|failed to save SaveStateEntry with id\(name\): [0-9]+\(ram\): -5"
echo "# figure: QEMU's warning for enable-migration=on: $(grep -c "$NO_DIRTY" "$D/tmp/src.err")" \
	"line(s) from the source, $(grep -c "$NO_DIRTY" "$D/tmp/d3.err") from the destination;" \
	"the source's at the cancel: $(head -n "${src_cancel:-0}" "$D/tmp/src.err" |
		grep -cE "$CANCEL") line(s); the destination's teardown after the removal:" \
	"$(grep -cE "$TEARDOWN" "$D/tmp/d3.err") line(s)"
# qemu_quiet FILE ALLOWED: FILE has no error or warning but QEMU's warning
# for enable-migration=on and the lines ALLOWED (an extended regex).
qemu_quiet() {
	! grep -v "$NO_DIRTY" "$1" | grep -vE "$2" | grep -qiE 'vfio|warn|error|fail'
}
quiet() {
	head -n "${src_cancel:-0}" "$D/tmp/src.err" >/tmp/src_cancel.err
	tail -n +$((${src_cancel:-0} + 1)) "$D/tmp/src.err" >/tmp/src_after.err
	qemu_quiet /tmp/src_cancel.err "$CANCEL" && qemu_quiet /tmp/src_after.err '^$' &&
		qemu_quiet "$D/tmp/d3.err" "$TEARDOWN"
}
check "QEMU printed no error or warning (but those lines)" quiet
bad=$(l2_kernel_bad "$D/tmp/d3.console")
[ -n "$bad" ] && echo "$bad" | sed 's/^/# L2: /'
check "no kernel warning in the guest" sh -c \
	"[ -z '$(echo "$bad" | tr -d "'")' ] && grep -q '@@L2_DMESG_END' $D/tmp/d3.console"
stop "$src" "$d1" "$d2" "$d3"
check "no vGPU left" sh -c "[ -z \"\$(ls /sys/bus/mdev/devices)\" ]"
ktap_finished
