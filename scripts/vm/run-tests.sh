#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs every installed kselftest (kselftest-list.txt) inside the VM, framing
# each one's TAP output with markers for the host-side parser
# (scripts/vm_results.py). The kernel command line option gvt_rs_vm.tests=a,b
# limits the set to the named tests; gvt_rs_vm.skip=a,b leaves the named ones
# out of a full run.

filter=
skip=
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case "$arg" in
	gvt_rs_vm.tests=*) filter=$(echo "${arg#gvt_rs_vm.tests=}" | tr , ' ') ;;
	gvt_rs_vm.skip=*) skip=$(echo "${arg#gvt_rs_vm.skip=}" | tr , ' ') ;;
	esac
done

rc=0
cd /tests/kselftest || exit 1
# One dir:name entry a word; the tests keep the console as their stdin.
list=$(cat kselftest-list.txt)
for entry in $list; do
	dir=${entry%%:*}
	name=${entry#*:}
	if [ -n "$filter" ]; then
		case " $filter " in *" $name "*) ;; *) continue ;; esac
	else
		case " $skip " in *" $name "*) continue ;; esac
	fi
	echo "@@GVT_RS_TEST_BEGIN $name"
	start=$(cut -d' ' -f1 /proc/uptime)
	(cd "$dir" && timeout 1200 "./$name" 2>&1)
	trc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "@@GVT_RS_TEST_END $name rc=$trc start=$start end=$end"
	[ $trc -eq 0 ] || rc=1
done
exit $rc
