#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian's libvirt against gvt-rs: the libvirt daemon (libvirtd, with its
# node-device and QEMU drivers), virsh, udev and mdevctl of a Debian root
# file system (/debian in this VM: scripts/bootstrap.sh builds it with
# debootstrap, scripts/vm-run.sh boots it in a run of its own), on the
# simulated GPU's PCI parent. Checked, as an admin or a cloud's compute
# agent uses them:
#  - nodedev-list --cap mdev_types finds the GPU, nodedev-dumpxml lists its
#    four types with name, device API and available instances as in sysfs;
#  - nodedev-create of an mdev with <attr name='gvt_rs/weight' value='8'/>
#    creates a vGPU with that weight, which libvirt then lists and describes;
#    a weight gvt-rs refuses makes nodedev-create fail and leaves nothing;
#  - nodedev-define / nodedev-start / nodedev-destroy / nodedev-undefine of a
#    persistent vGPU with the attribute;
#  - a domain with the vGPU as <hostdev mode='subsystem' type='mdev'>
#    starts (libvirt runs QEMU with -device vfio-pci,sysfsdev=...), its
#    guest's driver binds and runs work that gvt-rs charges to that vGPU;
#  - nodedev-destroy removes the vGPU once the domain is gone.
# The daemons run chrooted in /debian, started by hand as a boot script
# would (the VM has no systemd); libvirt's configuration is Debian's own.
# GVT_RS_DEBIAN names another root: gvt_rs_libvirt13.sh runs these checks
# with Debian 13's libvirt and QEMU (/debian13).

. "$(dirname "$0")/gvt_rs_lib.sh"

D=${GVT_RS_DEBIAN:-/debian}
P=$GVT_PCI_ADDR
NODE=pci_$(echo "$P" | tr :. __)
T=gvtsim-GVTg_V5_4
TYPES=$GVT_PCI_DEV/mdev_supported_types
# The domain boots the test kernel under TCG inside TCG.
BOOT_S=${GVT_RS_L2_BOOT_S:-900}

ktap_print_header
if [ ! -x "$D/usr/sbin/libvirtd" ] || [ ! -x /l2/qemu ]; then
	ktap_skip_all "no Debian root with libvirt at $D in this image (make check boots one)"
	exit "$KSFT_SKIP"
fi
need_spare_pci
ktap_set_plan 22

virsh() {
	in_debian virsh -c qemu:///system "$@"
}

# qemu_cmdline NAME: the command line of the QEMU running domain NAME
# (its pid in $qpid).
qemu_cmdline() {
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)
		case "$c" in *qemu-system*guest="$1"*)
			echo "$c"
			qpid=${p#/proc/}
			return 0
			;;
		esac
	done
	return 1
}

# Daemons are stopped and mounts undone whatever happens to the test.
trap debian_release EXIT

check "gvt_rs ready" sim_ready
check "the spare function $P is a simulated GPU" pci_gpu_bind
# As on a real host, the root a mount point of its own: the QEMU driver
# makes it a slave mount in the private namespace it runs each QEMU in.
check "the Debian root is mounted" debian_mount host

# udev first: libvirt's node-device driver reads devices through it and
# follows its events (a new mdev appears in libvirt through udev).
in_debian /lib/systemd/systemd-udevd --daemon
in_debian udevadm trigger --action=add
in_debian udevadm settle --timeout=120
# Debian's qemu.conf but for one line: QEMU runs in the VM's mount
# namespace. In libvirt's own per-domain /dev (namespaces = ["mount"], the
# default) QEMU found no /dev/vfio/<group> in this chroot, a VM whose /dev
# is the kernel's devtmpfs without udev's boot-time setup.
echo 'namespaces = []' >>"$D/etc/libvirt/qemu.conf"
in_debian virtlogd --daemon --pid-file=/run/virtlogd.pid
in_debian libvirtd --daemon --pid-file=/run/libvirtd.pid
i=0
until virsh version >/tmp/virsh_version.out 2>&1 || [ $i -ge 120 ]; do
	sleep 1
	i=$((i + 1))
done
sed 's/^/# /' /tmp/virsh_version.out
progress "libvirtd up"
check "libvirtd runs and virsh connects to qemu:///system" \
	grep -q "Running hypervisor: QEMU" /tmp/virsh_version.out

virsh nodedev-list --cap mdev_types >/tmp/virsh_types.out 2>&1
sed 's/^/# nodedev-list --cap mdev_types: /' /tmp/virsh_types.out
check "nodedev-list --cap mdev_types shows the GPU $NODE" grep -qx "$NODE" /tmp/virsh_types.out

# dump_ok: the parent's XML shows every type as sysfs does.
dump_ok() {
	virsh nodedev-dumpxml "$NODE" >/tmp/virsh_parent.xml 2>&1 || return 1
	for t in 1 2 4 8; do
		x=$(tr -d '\n ' </tmp/virsh_parent.xml | grep -o "<typeid='gvtsim-GVTg_V5_$t'>.*" |
			sed 's|</type>.*||')
		avail=$(cat "$TYPES/gvtsim-GVTg_V5_$t/available_instances")
		n="<availableInstances>$avail</availableInstances>"
		if ! echo "$x" | grep -q "<name>GVTg_V5_$t</name>" ||
			! echo "$x" | grep -q "<deviceAPI>vfio-pci</deviceAPI>" ||
			! echo "$x" | grep -q "$n"; then
			echo "# type GVTg_V5_$t: '$x' (sysfs available_instances $avail)"
			return 1
		fi
	done
}
dump_ok
rc=$?
sed -n '/<capability type=.mdev_types.>/,/<\/capability>/p' /tmp/virsh_parent.xml | sed 's/^/# /'
check "nodedev-dumpxml shows the four types: name, vfio-pci, available instances as in sysfs" \
	test $rc = 0

# mdev_xml UUID WEIGHT: a libvirt mdev node device of type $T on the GPU.
mdev_xml() {
	cat <<EOF
<device>
  <parent>$NODE</parent>
  <capability type='mdev'>
    <type id='$T'/>
    <uuid>$1</uuid>
    <attr name='gvt_rs/weight' value='$2'/>
  </capability>
</device>
EOF
}

echo "# $(ls -l "$D/dev/stdin")"
avail=$(cat "$TYPES/$T/available_instances")
u=$(new_uuid)
mdev_xml "$u" 8 >"$D/tmp/vgpu.xml"
virsh nodedev-create /tmp/vgpu.xml >/tmp/virsh_create.out 2>&1
sed 's/^/# nodedev-create: /' /tmp/virsh_create.out
name=$(sed -n "s/^Node device \(mdev_[^ ]*\) created.*/\1/p" /tmp/virsh_create.out)
check "nodedev-create with gvt_rs/weight=8 creates the vGPU" \
	sh -c "[ -n '$name' ] && [ -d $GVT_PCI_DEV/$u ]"
check "it has weight 8 (its type's is 4)" sh -c \
	"[ \$(cat $(vgpu_attr "$u" weight)) = 8 ] && [ \$(cat $(vgpu_attr "$u" type_weight)) = 4 ]"
virsh nodedev-dumpxml "$name" >/tmp/virsh_mdev.xml 2>&1
sed 's/^/# /' /tmp/virsh_mdev.xml
check "libvirt describes it: type, uuid, IOMMU group" sh -c \
	"grep -q \"<type id='$T'/>\" /tmp/virsh_mdev.xml &&
	 grep -q '<uuid>$u</uuid>' /tmp/virsh_mdev.xml &&
	 grep -q '<iommuGroup number=' /tmp/virsh_mdev.xml"
# libvirt reads available_instances from sysfs whenever it describes the
# parent: a manager sizing its inventory sees what gvt-rs says.
now=$(cat "$TYPES/$T/available_instances")
seen=$(virsh nodedev-dumpxml "$NODE" | tr -d '\n ' | grep -o "<typeid='$T'>.*" |
	sed 's|</type>.*||' | sed -n 's|.*<availableInstances>\([0-9]*\)<.*|\1|p')
echo "# available instances of $T: $avail before, $now after in sysfs, $seen in libvirt"
check "available instances fall with the vGPU, and libvirt shows sysfs's number" sh -c \
	"[ '$now' -lt '$avail' ] && [ '$seen' = '$now' ]"

# A weight gvt-rs refuses: nodedev-create fails, nothing is left.
ub=$(new_uuid)
mdev_xml "$ub" 0 >"$D/tmp/bad.xml"
virsh nodedev-create /tmp/bad.xml >/tmp/virsh_bad.out 2>&1
rc=$?
sed 's/^/# nodedev-create with gvt_rs\/weight=0: /' /tmp/virsh_bad.out
check "a refused weight (0) fails nodedev-create (gvt-rs's error) and leaves no vGPU" sh -c \
	"[ $rc != 0 ] && grep -q 'attribute gvt_rs/weight' /tmp/virsh_bad.out &&
	 [ ! -e /sys/bus/mdev/devices/$ub ] &&
	 [ \$(cat $TYPES/$T/available_instances) = $now ]"

# The guest's kernel command line: the lib's L2_CMDLINE, and 20 s of
# 20 ms workloads, four queued.
L2_CMDLINE="$L2_CMDLINE gvt_l2.run=-p,compute,-d,20000,-q,4,-t,20"
# The domain: the test kernel with the guest driver and its client, the
# vGPU as an mdev host device. on_reboot=destroy: the guest's init ends
# with a reboot once its client is done.
cat >"$D/tmp/gvt-l2.xml" <<EOF
<domain type='qemu'>
  <name>gvt-l2</name>
  <memory unit='MiB'>160</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>/l2/bzImage</kernel>
    <initrd>/l2/initramfs.cpio</initrd>
    <cmdline>$L2_CMDLINE</cmdline>
  </os>
  <features><acpi/></features>
  <on_reboot>destroy</on_reboot>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <serial type='file'>
      <source path='/tmp/gvt-l2.console'/>
      <target port='0'/>
    </serial>
    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source>
        <address uuid='$u'/>
      </source>
    </hostdev>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
c0=$(cat "$(vgpu_attr "$u" completed)")
virsh define /tmp/gvt-l2.xml >/tmp/virsh_define.out 2>&1 &&
	virsh start gvt-l2 >>/tmp/virsh_define.out 2>&1
rc=$?
sed 's/^/# /' /tmp/virsh_define.out
check "a domain with the vGPU as <hostdev type='mdev'> starts" test $rc = 0
started=$rc
qpid=''
qemu_cmdline gvt-l2 >/tmp/qemu_cmdline.txt
tr ' ' '\n' </tmp/qemu_cmdline.txt | grep vfio-pci >/tmp/qemu_vfio.txt
sed 's/^/# QEMU: -device /' /tmp/qemu_vfio.txt
# libvirt writes -device as JSON when QEMU takes it: match either syntax.
check "libvirt runs QEMU with the vGPU as a vfio-pci device (sysfsdev)" \
	grep -q "sysfsdev.\{1,3\}/sys/bus/mdev/devices/$u" /tmp/qemu_vfio.txt
# Through which VFIO interface. This domain asks for no iommufd, so QEMU
# holds the container and the vGPU's group: libvirt's iommufd for host
# devices came in libvirt 12, for PCI host devices, after Debian 13's
# 11.3, whose domain schema has no iommufd at all (said here).
schema=$D/usr/share/libvirt/schemas/domaincommon.rng
echo "# libvirt's domain schema names iommufd: $(grep -c iommufd "$schema" 2>/dev/null) time(s)"
grp=$(basename "$(readlink "/sys/bus/mdev/devices/$u/iommu_group")")
for f in /proc/"$qpid"/fd/*; do
	readlink "$f"
done 2>/dev/null | sed "s|^$D/|/|" | grep '^/dev/\(vfio\|iommu\)' | sort -u >/tmp/qemu_fds.txt
sed 's/^/# QEMU holds /' /tmp/qemu_fds.txt
check "QEMU holds the vGPU through the container: /dev/vfio/vfio and its group /dev/vfio/$grp" \
	sh -c "[ -n '$qpid' ] && grep -qx /dev/vfio/vfio /tmp/qemu_fds.txt &&
	 grep -qx /dev/vfio/$grp /tmp/qemu_fds.txt && ! grep -qx /dev/iommu /tmp/qemu_fds.txt"
progress "domain started"

console=$D/tmp/gvt-l2.console
end=$(($(uptime_s) + BOOT_S))
[ "$started" = 0 ] || end=0
while ! grep -q "@@L2_DONE" "$console" 2>/dev/null && [ "$(uptime_s)" -lt $end ]; do
	sleep 2
done
if grep -q "@@L2_DONE" "$console" 2>/dev/null; then
	progress "guest done"
else
	# The checks below fail on what is missing; this says what was waited
	# for, and where the guest was (enough of a console for an oops).
	progress "gave up waiting for @@L2_DONE in the domain's console after $BOOT_S s"
	echo "# the console: $(wc -c <"$console" 2>/dev/null || echo no file) bytes; its end:"
	tail -n 40 "$console" 2>/dev/null | sed 's/^/# console: /'
	virsh domstate --reason gvt-l2 2>&1 | sed 's/^/# domstate: /'
fi
grep -h "gvt_rs_guest .*: vGPU\|^gvt_gpu_client:\|@@L2_RUN_END\|@@L2_DONE" "$console" 2>/dev/null |
	sed 's/^/# guest: /'
c1=$(cat "$(vgpu_attr "$u" completed)")
echo "# gvt-rs charged the domain's vGPU $((c1 - c0)) completed workloads"
check "the domain's guest driver binds to the vGPU" \
	grep -q "gvt_rs_guest .*: vGPU .* irq" "$console"
done_guest=$(sed -n 's/^gvt_gpu_client: profile=.* completed=\([0-9]*\) .*/\1/p' "$console" |
	head -n 1)
check "its work completes with every fence, each workload counted by gvt-rs on that vGPU" sh -c \
	"grep -q '@@L2_RUN_END rc=0' $console && grep -q 'profile=compute.*fences_bad=0' $console &&
	 [ $((c1 - c0)) -gt 0 ] && [ '$done_guest' = $((c1 - c0)) ]"
i=0
while virsh domstate gvt-l2 2>/dev/null | grep -q running && [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
done
virsh domstate gvt-l2 2>/dev/null | grep -q running && virsh destroy gvt-l2 >/dev/null 2>&1
virsh undefine gvt-l2 >/dev/null 2>&1
tail -n 5 "$D/var/log/libvirt/qemu/gvt-l2.log" 2>/dev/null | sed 's/^/# qemu log: /'
# virsh is a function of this shell, not a command an `sh -c` finds.
virsh list --all --name >/tmp/virsh_list.out 2>&1
rc=$?
check "the domain shuts down and is undefined" sh -c \
	"[ $rc = 0 ] && ! grep -qx gvt-l2 /tmp/virsh_list.out"

virsh nodedev-destroy "$name" >/tmp/virsh_destroy.out 2>&1
rc=$?
sed 's/^/# nodedev-destroy: /' /tmp/virsh_destroy.out
check "nodedev-destroy removes the vGPU" sh -c \
	"[ $rc = 0 ] && [ ! -e /sys/bus/mdev/devices/$u ] &&
	 [ \$(cat $TYPES/$T/available_instances) = $avail ]"

# Persistent: defined through libvirt (an mdevctl definition), started,
# stopped and undefined.
up=$(new_uuid)
mdev_xml "$up" 6 >"$D/tmp/persist.xml"
virsh nodedev-define /tmp/persist.xml >/tmp/virsh_pdefine.out 2>&1
sed 's/^/# nodedev-define: /' /tmp/virsh_pdefine.out
pname=$(sed -n "s/^Node device '\{0,1\}\(mdev_[^ ']*\)'\{0,1\} defined.*/\1/p" \
	/tmp/virsh_pdefine.out)
check "nodedev-define makes an mdevctl definition with the attribute, creates nothing" sh -c \
	"[ -n '$pname' ] && [ ! -e /sys/bus/mdev/devices/$up ] &&
	 chroot $D mdevctl list --defined --dumpjson | grep '\"gvt_rs/weight\": \"6\"' >/dev/null"
virsh nodedev-start "$pname" >/tmp/virsh_pstart.out 2>&1
sed 's/^/# nodedev-start: /' /tmp/virsh_pstart.out
check "nodedev-start creates it with weight 6" sh -c \
	"[ -d /sys/bus/mdev/devices/$up ] && [ \$(cat $(vgpu_attr "$up" weight)) = 6 ]"
virsh nodedev-destroy "$pname" >/dev/null 2>&1
virsh nodedev-undefine "$pname" >/tmp/virsh_pundefine.out 2>&1
sed 's/^/# nodedev-undefine: /' /tmp/virsh_pundefine.out
check "nodedev-destroy and nodedev-undefine leave neither vGPU nor definition" sh -c \
	"[ ! -e /sys/bus/mdev/devices/$up ] &&
	 ! chroot $D mdevctl list --defined | grep -F '$up' >/dev/null &&
	 [ \$(cat $TYPES/$T/available_instances) = $avail ]"

debian_release
trap - EXIT
pci_gpu_unbind
check "the GPU is unbound, no vGPU left" sh -c "[ -z \"\$(ls /sys/bus/mdev/devices)\" ]"
ktap_finished
