#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian 13's libvirt (11.3) saving and restoring a domain with a vGPU, the
# single-host route of a migration (virsh save / virsh restore: QEMU
# migrates to a file and a new QEMU loads it), in the Debian 13 root
# (/debian13) as gvt_rs_libvirt13.sh runs libvirt.
#
# libvirt 11.3 asks QEMU whether the domain can migrate (query-migrate's
# blocked-reasons, qemuMigrationSrcIsAllowed()) instead of refusing every
# <hostdev type='mdev'> itself, as it did before QEMU could tell. QEMU 10
# blocks the migration of a vfio-pci device without device or IOMMU dirty
# tracking unless its enable-migration property is on
# (gvt_rs_migration13.sh), and libvirt 11.3's domain XML has no element for
# that property. Checked:
#  - the domain as libvirt writes it: virsh save is refused with QEMU's
#    reason, the domain runs on (the exact message is printed);
#  - the same domain with enable-migration=on set on its hostdev through
#    libvirt's QEMU namespace (<qemu:override>): virsh save stops it and releases the vGPU,
#    virsh restore starts it again from the file on the same vGPU, its
#    stream accepted (the kernel logs no refusal, QEMU no error).
# The guest is saved while it boots: its vGPU's state then is its driver's
# probe, or the power-on state. The guest's work across a migration is
# gvt_rs_migration13.sh's.

. "$(dirname "$0")/gvt_rs_lib.sh"

D=/debian13

ktap_print_header
if [ ! -x "$D/usr/sbin/libvirtd" ] || [ ! -x /l2/qemu ]; then
	ktap_skip_all "no Debian 13 root with libvirt in this image (make check boots one for it)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 8

virsh() {
	in_debian virsh -c qemu:///system "$@"
}

u=''
cleanup() {
	virsh destroy gvt-save >/dev/null 2>&1
	virsh undefine gvt-save >/dev/null 2>&1
	debian_release
	[ -n "$u" ] && [ -e "/sys/bus/mdev/devices/$u" ] && vgpu_remove "$u"
}
trap cleanup EXIT

check "gvt_rs ready" sim_ready
# The root as gvt_rs_libvirt.sh mounts it (as on a host).
check "the Debian 13 root is mounted" debian_mount host
# QEMU in the VM's mount namespace (gvt_rs_libvirt.sh says why).
grep -qx 'namespaces = \[\]' "$D/etc/libvirt/qemu.conf" ||
	echo 'namespaces = []' >>"$D/etc/libvirt/qemu.conf"
in_debian virtlogd --daemon --pid-file=/run/virtlogd.pid
in_debian libvirtd --daemon --pid-file=/run/libvirtd.pid
wait_until "$GVT_WAIT_S" sh -c \
	"chroot $D virsh -c qemu:///system version >/tmp/lvs_version.out 2>&1"
sed -n 's/^\(Using library\|Running hypervisor\): /# /p' /tmp/lvs_version.out
check "libvirtd runs" grep -q "Running hypervisor: QEMU" /tmp/lvs_version.out
u=$(vgpu_create GVTg_V5_4) || ktap_exit_fail_msg "vGPU not created"

# domain_xml [OVERRIDE]: the domain, the vGPU as an mdev host device (alias
# ua-vgpu); OVERRIDE sets enable-migration=on on it.
domain_xml() {
	ns='' extra=''
	if [ -n "$1" ]; then
		ns=" xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'"
		extra="<qemu:override><qemu:device alias='ua-vgpu'><qemu:frontend>
      <qemu:property name='enable-migration' type='string' value='on'/>
    </qemu:frontend></qemu:device></qemu:override>"
	fi
	cat <<EOF
<domain type='qemu'$ns>
  <name>gvt-save</name>
  <memory unit='MiB'>160</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>/l2/bzImage</kernel>
    <initrd>/l2/initramfs.cpio</initrd>
    <cmdline>$L2_CMDLINE</cmdline>
  </os>
  <features><acpi/></features>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <serial type='file'><source path='/tmp/gvt-save.console'/><target port='0'/></serial>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='$u'/></source>
      <alias name='ua-vgpu'/>
    </hostdev>
    <memballoon model='none'/>
  </devices>
  $extra
</domain>
EOF
}

# The domain as libvirt writes it: refused.
domain_xml >"$D/tmp/gvt-save.xml"
virsh create /tmp/gvt-save.xml >/tmp/lvs_create.out 2>&1
sed 's/^/# /' /tmp/lvs_create.out
virsh save gvt-save /tmp/gvt-save.img >/tmp/lvs_save.out 2>&1
rc=$?
sed 's/^/# virsh save: /' /tmp/lvs_save.out
state=$(virsh domstate gvt-save 2>&1)
check "virsh save of the domain as written is refused with QEMU's reason; it runs on" sh -c \
	"[ $rc != 0 ] && grep -q 'cannot migrate domain' /tmp/lvs_save.out &&
	 grep -q 'dirty tracking' /tmp/lvs_save.out && [ '$state' = running ]"
virsh destroy gvt-save >/dev/null 2>&1

# With enable-migration=on: saved and restored.
domain_xml override >"$D/tmp/gvt-save.xml"
virsh create /tmp/gvt-save.xml >/tmp/lvs_create.out 2>&1
rc=$?
sed 's/^/# /' /tmp/lvs_create.out
check "the domain with enable-migration=on (<qemu:override>) starts" test $rc = 0
mark=$(dmesg | wc -l)
virsh save gvt-save /tmp/gvt-save.img >/tmp/lvs_save.out 2>&1
rc=$?
sed 's/^/# virsh save: /' /tmp/lvs_save.out
echo "# figure: the saved image: $(wc -c <"$D/tmp/gvt-save.img" 2>/dev/null) bytes"
# The domain is gone and its vGPU free: removed and created again at once
# (a removal waits for the VMM that holds the device).
saved() {
	[ "$rc" = 0 ] && ! virsh list --name | grep -qx gvt-save &&
		timeout 30 sh -c "echo 1 >/sys/bus/mdev/devices/$u/remove" &&
		echo "$u" >"$(type_dir GVTg_V5_4)/create"
}
check "virsh save stops the domain and releases its vGPU" saved
virsh restore /tmp/gvt-save.img >/tmp/lvs_restore.out 2>&1
rc=$?
sed 's/^/# virsh restore: /' /tmp/lvs_restore.out
state=$(virsh domstate gvt-save 2>&1)
tail -n 5 "$D/var/log/libvirt/qemu/gvt-save.log" 2>/dev/null | sed 's/^/# qemu log: /'
dmesg | tail -n +$((mark + 1)) | grep 'migration stream refused' | sed 's/^/# /'
check "virsh restore runs it again on the vGPU, the vGPU's stream accepted" sh -c \
	"[ $rc = 0 ] && [ '$state' = running ] &&
	 ! dmesg | tail -n +$((mark + 1)) | grep -q 'migration stream refused' &&
	 ! grep -qi 'error' $D/var/log/libvirt/qemu/gvt-save.log"
virsh destroy gvt-save >/dev/null 2>&1
cleanup
trap - EXIT
check "no vGPU left" sh -c "[ -z \"\$(ls /sys/bus/mdev/devices)\" ]"
ktap_finished
