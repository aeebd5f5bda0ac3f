#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `make run`: load gvt-rs in the VM and show what it offers.

show_tree() {
	for f in $(find "$1" -type f 2>/dev/null | sort); do
		if [ -r "$f" ] && v=$(cat "$f" 2>/dev/null); then
			printf '  %-50s %s\n' "${f#$1/}" "$(echo "$v" | head -n 1)"
		else
			printf '  %-50s (write-only)\n' "${f#$1/}"
		fi
	done
}

echo "== modprobe gvt_rs"
modprobe gvt_rs || exit 1
dmesg | grep gvt-rs | tail -n 3
echo "== /sys/kernel/gvt_rs"
show_tree /sys/kernel/gvt_rs
if [ -d /sys/class/mdev_bus ]; then
	echo "== mdev types offered"
	for t in /sys/class/mdev_bus/*/mdev_supported_types/*; do
		[ -d "$t" ] || continue
		printf '  %-28s %s, available %s\n' "$(basename "$t")" \
			"$(cat "$t/name" 2>/dev/null)" "$(cat "$t/available_instances")"
	done
fi
echo "== rmmod gvt_rs"
rmmod gvt_rs
