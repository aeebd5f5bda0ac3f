#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# 48 idle vGPUs beside 16 busy ones on one simulated GPU (issue #27), all
# 64 started by a guest emulator through VFIO, under sfq with gscale
# placing them: the idle ones cost the busy ones nothing. Nothing may be
# charged to the idle ones (occupied_ns) or withheld for them (withheld_ns:
# GPU time held idle for a vGPU's turn while others waited), both exact
# counts, and the 16 busy ones divide the engine time charged to them by
# their weights (1-4), as if alone.
#
# Apart from gvt_rs_density.sh (64 busy, churn) so that the KASAN run,
# which has its memory paths from that test already, can leave this
# measurement out (scripts/check.sh).
# Figures are printed as "# figure: ..." lines.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 5
check "gvt_rs ready" sim_ready

N=64
T=GVTg_V5_64

t_start=$(uptime_s)
set_attr "$GVT_GPU/gm_allocator" gscale
set_attr "$GVT_GPU/policy" sfq
vgpus_create $T $N || true
check "gscale places $N vGPUs" test "$(cat "$GVT_GPU/vgpus")" = $N
BUSY="" IDLE="" BW=""
i=0
rm -f /tmp/idle.go
for u in $VGPUS; do
	if [ $i -lt 16 ]; then
		w=$((i % 4 + 1))
		set_attr "$(vgpu_attr "$u" weight)" "$w"
		BUSY="$BUSY $u" BW="$BW $w"
		guest_start "$u" "/tmp/idle_$i.out" -F -w /tmp/idle.go -p compute -q 16 -d 1000 \
			-t 900
	else
		IDLE="$IDLE $u"
		guest_start "$u" "/tmp/idle_$i.out" -p idle -t 900
	fi
	i=$((i + 1))
done
guests_opened
guests_go /tmp/idle.go
sleep 3
# shellcheck disable=SC2086 # the UUIDs, one a word
started=$(vgpus_sum started $IDLE)
# shellcheck disable=SC2086
io0=$(vgpus_sum occupied_ns $IDLE) iw0=$(vgpus_sum withheld_ns $IDLE)
# shellcheck disable=SC2086
bo=$(vgpus_stat occupied_ns $BUSY)
sleep 20
# shellcheck disable=SC2086
io1=$(vgpus_sum occupied_ns $IDLE) iw1=$(vgpus_sum withheld_ns $IDLE)
# shellcheck disable=SC2086
ao=$(vgpus_stat occupied_ns $BUSY)
res=$(weighted_shares "$BW" "$bo" "$ao")
# shellcheck disable=SC2086 # the figures, one a word
set -- $res
mm=${1:-unmeasured}
echo "# figure: 16 busy beside 48 idle (started $started):" \
	"charged to the idle $((io1 - io0)) ns, withheld for them $((iw1 - iw0)) ns;" \
	"busy occupied share/ideal min_max=$mm (min ${2:-?} max ${3:-?})" \
	"by weight ${5:-?} occupied_ms=${4:-?}"
check "48 started idle vGPUs: none charged or withheld for ($((io1 - io0)) ns, $((iw1 - iw0)) ns)" \
	test "$started" = 48 -a $((io1 - io0)) = 0 -a $((iw1 - iw0)) = 0
check "16 busy vGPUs beside 48 idle divide the engine by weight (min_max $mm >= 0.95)" \
	awk -v m="$mm" 'BEGIN { exit !(m + 0 == m && m >= 0.95) }'
# shellcheck disable=SC2086
vgpus_remove $VGPUS
wait
check "no vGPU left" test "$(cat "$GVT_GPU/vgpus")" = 0
echo "# figure: idle-beside-busy took $(($(uptime_s) - t_start)) s"
set_attr "$GVT_GPU/gm_allocator" static
set_attr "$GVT_GPU/policy" tbs
ktap_finished
