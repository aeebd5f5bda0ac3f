#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The simulated GPU on a PCI function, where managers (libvirt, Nova) look
# for mdev types: the gvtsim PCI driver binds only through driver_override,
# its GPU is independent of gvtsim0, runs guests, and goes away cleanly on
# unbind (with vGPUs, open or not) and on module unload; the class GPU is
# optional (gvt_rs_sim.class_gpu).

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
need_spare_pci
ktap_set_plan 23

PCI_TYPES=$GVT_PCI_DEV/mdev_supported_types
PCI_GPU=$GVT_SYSFS/$GVT_PCI_ADDR

check "gvt_rs ready" sim_ready
pci_gpu_unbind 2>/dev/null
echo "# spare function $GVT_PCI_ADDR: $(cat "$GVT_PCI_DEV/vendor" 2>/dev/null):$(cat "$GVT_PCI_DEV/device" 2>/dev/null)"
check "the spare function exists and no driver claimed it" \
	sh -c "[ -d $GVT_PCI_DEV ] && [ ! -e $GVT_PCI_DEV/driver ]"
err=$( (echo "$GVT_PCI_ADDR" >/sys/bus/pci/drivers/gvtsim/bind) 2>&1)
rc=$?
echo "# bind without driver_override: $err"
check "gvtsim does not bind without driver_override (ENODEV)" sh -c \
	"[ $rc != 0 ] && echo '$err' | grep -q 'No such device' && [ ! -e $GVT_PCI_DEV/driver ]"
check "driver_override + drivers_probe bind gvtsim" pci_gpu_bind
check "its mdev types are under the PCI device" sh -c \
	"[ \"\$(ls $PCI_TYPES)\" = \"\$(printf 'gvtsim-GVTg_V5_1\ngvtsim-GVTg_V5_2\ngvtsim-GVTg_V5_4\ngvtsim-GVTg_V5_64\ngvtsim-GVTg_V5_8')\" ]"
check "it is an mdev parent (/sys/class/mdev_bus/$GVT_PCI_ADDR)" \
	test -e "/sys/class/mdev_bus/$GVT_PCI_ADDR/mdev_supported_types"
check "its GPU directory is named by its address" sh -c \
	"grep -q '\[tbs\]' $PCI_GPU/policy && [ \"\$(cat $PCI_GPU/vgpus)\" = 0 ]"
check "type name and description as GVT-g's" sh -c \
	"[ \"\$(cat $PCI_TYPES/gvtsim-GVTg_V5_4/name)\" = GVTg_V5_4 ] && grep -qx 'high_gm_size: 512MB' $PCI_TYPES/gvtsim-GVTg_V5_4/description"

# Two GPUs, separate pools and policies.
a_pci=$(cat "$PCI_TYPES/gvtsim-GVTg_V5_4/available_instances")
a_cls=$(cat "$(type_dir GVTg_V5_4)/available_instances")
u=$(new_uuid)
echo "$u" >"$PCI_TYPES/gvtsim-GVTg_V5_4/create"
check "create a vGPU on the PCI GPU" test -d "$GVT_PCI_DEV/$u"
check "only the PCI GPU's available_instances dropped" sh -c \
	"[ \$(cat $PCI_TYPES/gvtsim-GVTg_V5_4/available_instances) = $((a_pci - 1)) ] && [ \$(cat $(type_dir GVTg_V5_4)/available_instances) = $a_cls ]"
set_attr "$PCI_GPU/policy" sfq
picks_cls=$(gpu_stat picks)
check "policies are per GPU" sh -c "grep -q '\[sfq\]' $PCI_GPU/policy && grep -q '\[tbs\]' $GVT_GPU/policy"
"$GVT_GUEST" -p compute -t 2 "$u" >/tmp/pci_guest.out 2>&1
rc=$?
sed 's/^/# /' /tmp/pci_guest.out
c=$(report_field /tmp/pci_guest.out completed)
check "a guest runs work on the PCI GPU's vGPU" test $rc = 0 -a "${c:-0}" -gt 0
echo "# PCI GPU: vgpus=$(cat "$PCI_GPU/vgpus") picks=$(gpu_stat picks "$PCI_GPU"); gvtsim0: vgpus=$(cat "$GVT_GPU/vgpus") picks $picks_cls -> $(gpu_stat picks)"
check "the PCI GPU scheduled it; gvtsim0 has no vGPU" eval \
	"[ \$(cat $(vgpu_attr "$u" completed)) = $c ] && [ \$(gpu_stat picks $PCI_GPU) -gt 0 ] && [ \$(cat $GVT_GPU/vgpus) = 0 ]"

check "unbind removes its vGPUs, types and GPU directory" sh -c \
	"echo $GVT_PCI_ADDR >$GVT_PCI_DEV/driver/unbind &&
	 [ ! -e /sys/bus/mdev/devices/$u ] && [ ! -e $PCI_TYPES ] && [ ! -e $PCI_GPU ] && [ ! -e /sys/class/mdev_bus/$GVT_PCI_ADDR ]"
check "driver_override still names gvtsim: rebinding works" sh -c \
	"echo $GVT_PCI_ADDR >/sys/bus/pci/drivers_probe && [ -d $PCI_TYPES ]"

# available_instances is what managers size their inventory from: it must
# not change while nothing is created or removed, even while a re-placing
# allocator moves vGPUs.
set_attr "$PCI_GPU/gm_allocator" dymgpu-util
set_attr "$PCI_GPU/gm_replace_period_ms" 1000
set_attr "$PCI_GPU/gm_relocation" 1
ua=$(new_uuid)
ub=$(new_uuid)
echo "$ua" >"$PCI_TYPES/gvtsim-GVTg_V5_2/create"
echo "$ub" >"$PCI_TYPES/gvtsim-GVTg_V5_8/create"
# Sampled for as long as a guest runs, however slowly the loop goes.
guest "$ua" /tmp/pci_avail_a.out -p compute -t 3
pa=$GUEST_PID
guest "$ub" /tmp/pci_avail_b.out -p frames -t 3
pb=$GUEST_PID
samples=$(while running "$pa" || running "$pb"; do
	cat "$PCI_TYPES"/*/available_instances | tr '\n' ' '
	echo
	sleep 0.2
done | sort -u)
wait
# dymgpu-util shares any slot, so every type can have as many more as the
# GPU takes vGPUs: max_vgpus less the two.
left=$(($(cat "$PCI_GPU/max_vgpus") - 2))
expect=''
for t in "$PCI_TYPES"/*; do
	[ -d "$t" ] && expect="$expect$left "
done
echo "# available_instances ($(cd "$PCI_TYPES" && echo *)) seen while 2 guests ran: $samples; relocations: $(gpu_stat events_relocations "$PCI_GPU")"
check "available_instances steady while 2 guests run under dymgpu-util ($left of each type)" \
	test "$samples" = "$expect"
echo 1 >"/sys/bus/mdev/devices/$ua/remove"
echo 1 >"/sys/bus/mdev/devices/$ub/remove"
set_attr "$PCI_GPU/gm_allocator" static

# Unbinding a GPU whose vGPU a VM holds asks the VM to let go (device
# request), as removing the vGPU does.
u=$(new_uuid)
echo "$u" >"$PCI_TYPES/gvtsim-GVTg_V5_8/create"
guest "$u" /tmp/pci_req.out -p compute -t 60
echo "$GVT_PCI_ADDR" >"$GVT_PCI_DEV/driver/unbind"
wait
sed 's/^/# /' /tmp/pci_req.out
check "unbind with an open vGPU: device request, the VM lets go" sh -c \
	"grep -q 'device request' /tmp/pci_req.out && [ ! -e /sys/bus/mdev/devices/$u ] && [ ! -e $GVT_PCI_DEV/driver ]"

# Module unload unbinds the function.
pci_gpu_bind
u=$(new_uuid)
echo "$u" >"$PCI_TYPES/gvtsim-GVTg_V5_4/create"
check "rmmod gvt_rs_sim with a bound PCI GPU and a vGPU" rmmod gvt_rs_sim
check "the function is unbound, its vGPU gone" sh -c \
	"[ ! -e $GVT_PCI_DEV/driver ] && [ ! -e /sys/bus/mdev/devices/$u ]"

# class_gpu=0: only PCI GPUs.
check "class_gpu=bogus is refused" sh -c "! modprobe gvt_rs_sim class_gpu=bogus 2>/dev/null && ! grep -q '^gvt_rs_sim ' /proc/modules"
modprobe gvt_rs_sim class_gpu=0
check "class_gpu=0: no gvtsim0" sh -c "[ ! -e $GVT_PARENT ] && [ ! -e $GVT_GPU ] && [ -d $GVT_SYSFS ]"
check "class_gpu=0: the PCI GPU works (driver_override kept)" sh -c \
	"echo $GVT_PCI_ADDR >/sys/bus/pci/drivers_probe && [ -d $PCI_TYPES ] && [ -d $PCI_GPU ]"
rmmod gvt_rs_sim
pci_gpu_unbind 2>/dev/null
modprobe gvt_rs_sim
check "default: gvtsim0 is back, the function stays unbound" sh -c \
	"[ -d $GVT_PARENT ] && [ ! -e $GVT_PCI_DEV/driver ]"
ktap_finished
