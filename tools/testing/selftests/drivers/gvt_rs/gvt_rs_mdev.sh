#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The simulated GPU's mdev parent: GVT-g shaped types, create/remove,
# available_instances under the static and a sharing allocator, and module
# unload with and without (open) vGPUs.

. "$(dirname "$0")/gvt_rs_lib.sh"

ktap_print_header
ktap_set_plan 21

check "gvt_rs loads with its simulated GPU" sim_ready
for t in GVTg_V5_8 GVTg_V5_4 GVTg_V5_2 GVTg_V5_1; do
	d=$(type_dir $t)
	check "type $t: name, device_api, description" sh -c \
		"[ \"\$(cat $d/name)\" = $t ] && [ \"\$(cat $d/device_api)\" = vfio-pci ] && grep -q '^weight: ' $d/description"
done
check "V5_4 description is GVT-g's" sh -c \
	"grep -qx 'low_gm_size: 128MB' $(type_dir GVTg_V5_4)/description && grep -qx 'weight: 4' $(type_dir GVTg_V5_4)/description"

a8=$(cat "$(type_dir GVTg_V5_8)/available_instances")
a1=$(cat "$(type_dir GVTg_V5_1)/available_instances")
echo "# static: available V5_8=$a8 V5_1=$a1"
check "static allocator: 9 x V5_8 and 1 x V5_1 fit" test "$a8" = 9 -a "$a1" = 1

u=$(vgpu_create GVTg_V5_4)
check "create a V5_4 vGPU" test -d "/sys/bus/mdev/devices/$u"
check "its gvt_rs directory shows the type's weight" sh -c "[ \$(cat $(vgpu_attr "$u" weight)) = 4 ]"
check "available_instances of V5_4 dropped to 5" sh -c "[ \$(cat $(type_dir GVTg_V5_4)/available_instances) = 5 ]"
check "allocator cannot change while a vGPU exists (EBUSY)" write_fails "busy" "$GVT_GPU/gm_allocator" gscale
check "remove the vGPU" vgpu_remove "$u"
check "its device and directory are gone" test ! -e "/sys/bus/mdev/devices/$u"

# Fill the GPU with V5_1 under static: the second one does not fit.
u1=$(vgpu_create GVTg_V5_1)
u2=$(new_uuid)
check "static: a second V5_1 is refused (ENOSPC)" write_fails "No space" "$(type_dir GVTg_V5_1)/create" "$u2"
vgpu_remove "$u1"

set_attr "$GVT_GPU/gm_allocator" gscale
s8=$(cat "$(type_dir GVTg_V5_8)/available_instances")
s1=$(cat "$(type_dir GVTg_V5_1)/available_instances")
echo "# gscale: available V5_8=$s8 V5_1=$s1 (static: $a8, $a1)"
check "sharing allocator fits more vGPUs than static" test "$s8" -gt "$a8" -a "$s1" -gt "$a1"
ok=true
list=
for _ in 1 2 3 4; do
	x=$(vgpu_create GVTg_V5_1) || ok=false
	list="$list $x"
done
check "gscale: four V5_1 vGPUs share the slots" $ok
check "shared slots are reported" eval "[ \$(gpu_stat gm_shared_slots) -gt 0 ]"
for x in $list; do vgpu_remove "$x"; done
set_attr "$GVT_GPU/gm_allocator" static
# Unload with vGPUs: the parent removes them.
vgpu_create GVTg_V5_8 >/dev/null
vgpu_create GVTg_V5_2 >/dev/null
check "rmmod with two vGPUs removes them" rmmod gvt_rs_sim
check "mdev parent gone" test ! -e "$GVT_PARENT"

# Unload with an open vGPU: refused while the VM holds it. The VM holds it
# until it is killed, however long the check takes.
modprobe gvt_rs_sim
u=$(vgpu_create GVTg_V5_4)
guest "$u" /tmp/mdev_idle.out -p idle -t 600
check "rmmod with an open vGPU fails" sh -c "! rmmod gvt_rs_sim 2>/dev/null"
kill "$GUEST_PID"
wait "$GUEST_PID"
check "rmmod after the VM closed it" rmmod gvt_rs_sim
ktap_finished
