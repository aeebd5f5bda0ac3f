#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gvt_rs_libvirt.sh's checks with Debian 13's libvirt, udev, mdevctl and
# QEMU (/debian13 in this VM: scripts/bootstrap.sh builds the root,
# scripts/vm-run.sh boots it in a run of its own). Where that libvirt can
# attach a host device through iommufd, the domain's vGPU is attached so
# (gvt_rs_libvirt.sh says which it did).

GVT_RS_DEBIAN=/debian13 exec "$(dirname "$0")/gvt_rs_libvirt.sh"
