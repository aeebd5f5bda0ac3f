#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own VFIO selftests (tools/testing/selftests/vfio, written for
# any vfio-pci device) against vGPUs of the simulated GPU, each named by its
# sysfs directory, /sys/bus/mdev/devices/<uuid>, in the legacy VFIO
# container and in iommufd:
#
#   vfio_pci_device_test            config space, BARs, MSI and MSI-X, reset;
#                                   in the container (vfio_type1v2_iommu) and
#                                   in iommufd
#   vfio_iommufd_setup_test         the VFIO device file with an iommufd: bind,
#                                   IOAS attach and detach, and the ioctls that
#                                   must fail; iommufd only, by what it tests
#   vfio_pci_device_init_perf_test  two vGPUs opened at once, in each of the
#                                   library's five IOMMU modes (type1 and
#                                   type1v2 containers, the same through
#                                   iommufd's container compatibility, and
#                                   iommufd)
#   vfio_pci_driver_test            the library's gvt_sim driver (patch
#                                   0011) makes the vGPU copy memory through
#                                   its ring, by DMA through VFIO, and send
#                                   an MSI: copies checked byte for byte,
#                                   copies from and to IOVAs not mapped
#                                   (faults, no MSI), a storm of 63 copies;
#                                   in each of the five IOMMU modes
#
# Each must exit 0 with every test passed but those named here as skipped,
# with why: the vGPU has MSI and INTx, no MSI-X. The copies from unmapped
# IOVAs fail the vGPU ten times a second or more: the host logs at most one
# line a second for it.

. "$(dirname "$0")/gvt_rs_lib.sh"

VFIO_ST=$(dirname "$0")/../../vfio

ktap_print_header
ktap_set_plan 11

# selftest NAME MODE PASSED [SKIPPED...]: runs the VFIO selftest NAME on
# the devices in DEVS with MODE as its default IOMMU mode; it must exit 0
# with PASSED tests passed, none failed, and exactly the tests SKIPPED
# skipped.
selftest() {
	name=$1 mode=$2 npass=$3
	shift 3
	out=/tmp/vfio_st_${name}_$mode.out
	# shellcheck disable=SC2086 # DEVS: a list of paths without spaces
	VFIO_SELFTESTS_IOMMU_MODE=$mode "$VFIO_ST/$name" $DEVS >"$out" 2>&1
	rc=$?
	sed 's/^/# /' "$out"
	skipped=$(sed -n 's/^ok [0-9]* \([^ ]*\) # SKIP.*/\1/p' "$out" | sort | tr '\n' ' ')
	want=
	if [ $# -gt 0 ]; then
		want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	fi
	totals=$(grep '^# Totals:' "$out")
	echo "# $name ($mode): exit $rc, ${totals#\# }, skipped: ${skipped:-none}"
	[ "$rc" = 0 ] &&
		[ "$totals" = "# Totals: pass:$npass fail:0 xfail:0 xpass:0 skip:$# error:0" ] &&
		[ "$skipped" = "$want" ]
}

check "gvt_rs ready" sim_ready
check "the kernel's VFIO selftests are installed" test -x "$VFIO_ST/vfio_pci_device_test"
u1=$(vgpu_create GVTg_V5_4)
u2=$(vgpu_create GVTg_V5_4)
DEVS=/sys/bus/mdev/devices/$u1

for mode in vfio_type1v2_iommu iommufd; do
	check "vfio_pci_device_test ($mode): config space, BARs, MSI, reset; no MSI-X to test" \
		selftest vfio_pci_device_test $mode 4 vfio_pci_irq_test.msix.enable_trigger_disable
done
check "vfio_iommufd_setup_test: bind, attach, detach and the calls that must fail" \
	selftest vfio_iommufd_setup_test iommufd 6
DEVS="/sys/bus/mdev/devices/$u1 /sys/bus/mdev/devices/$u2"
check "vfio_pci_device_init_perf_test: two vGPUs opened at once, in all five IOMMU modes" \
	selftest vfio_pci_device_init_perf_test iommufd 5

# driver_mode MODE: every vfio_pci_driver_test test passed in IOMMU mode MODE.
driver_mode() {
	out=/tmp/vfio_st_vfio_pci_driver_test_iommufd.out
	for t in init_remove memcpy_success memcpy_from_unmapped_iova \
		memcpy_to_unmapped_iova send_msi mix_and_match memcpy_storm; do
		grep -q "^ok [0-9]* vfio_pci_driver_test\.$1\.$t\$" "$out" || {
			echo "# vfio_pci_driver_test.$1.$t did not pass"
			return 1
		}
	done
}

# failed_lines: the host's log lines of a failed vGPU, so far.
failed_lines() {
	dmesg | grep -c ': vGPU [0-9]* failed:'
}

DEVS=/sys/bus/mdev/devices/$u1
logged0=$(failed_lines)
t0=$(uptime_s)
check "vfio_pci_driver_test: the gvt_sim driver's copies, faults and MSI, in all five IOMMU modes" \
	selftest vfio_pci_driver_test iommufd 35
secs=$(($(uptime_s) - t0 + 1))
for mode in vfio_type1v2_iommu iommufd; do
	check "vfio_pci_driver_test ($mode): memcpy, unmapped IOVAs, send_msi, storm" \
		driver_mode $mode
done
logged=$(($(failed_lines) - logged0))
echo "# the host logged $logged line(s) of a failed vGPU in the $secs s of vfio_pci_driver_test"
check "the copies from and to unmapped IOVAs did not flood the host's log" \
	test "$logged" -ge 1 -a "$logged" -le "$secs"

# Whatever the selftests did to the vGPU, the next tenant finds it as new.
"$GVT_GUEST" -c "$u1" >/tmp/vfio_st_check.out 2>&1
rc=$?
grep -v '^# PASS' /tmp/vfio_st_check.out | sed 's/^/# /'
check "a guest's protocol self-check passes on the vGPU after the selftests" test $rc = 0
vgpu_remove "$u1"
vgpu_remove "$u2"
ktap_finished
