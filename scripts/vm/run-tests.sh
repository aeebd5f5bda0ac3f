#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs every installed kselftest (kselftest-list.txt) inside the VM, framing
# each one's TAP output with markers for the host-side parser
# (scripts/vm_results.py). The kernel command line option gvt_rs_vm.tests=a,b
# limits the set to the named tests; gvt_rs_vm.skip=a,b leaves the named ones
# out of a full run.
#
# Each test gets GVT_RS_TEST_TIMEOUT seconds (1200; gvt_rs_vm.timeout=N sets
# it), exported to the tests so that they can end on their own before it:
# then `timeout` sends SIGTERM, and SIGKILL GRACE_S (60) seconds later if the
# test is still there (its trap has that long to print its results and stop
# what it started). A test stopped so is named in a @@GVT_RS_TEST_TIMEOUT
# line, which scripts/vm_results.py reports.

filter=
skip=
GVT_RS_TEST_TIMEOUT=1200
GRACE_S=60
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case "$arg" in
	gvt_rs_vm.tests=*) filter=$(echo "${arg#gvt_rs_vm.tests=}" | tr , ' ') ;;
	gvt_rs_vm.skip=*) skip=$(echo "${arg#gvt_rs_vm.skip=}" | tr , ' ') ;;
	gvt_rs_vm.timeout=*) GVT_RS_TEST_TIMEOUT=${arg#gvt_rs_vm.timeout=} ;;
	esac
done
export GVT_RS_TEST_TIMEOUT

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
	(cd "$dir" && timeout -k "$GRACE_S" "$GVT_RS_TEST_TIMEOUT" "./$name" 2>&1)
	trc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	# busybox's timeout execs the test, so the status is the test's own
	# (143 after a SIGTERM it did not catch, 137 after the SIGKILL): the
	# time it ran tells that the timeout stopped it.
	if awk -v s="$start" -v e="$end" -v t="$GVT_RS_TEST_TIMEOUT" 'BEGIN { exit !(e - s >= t) }'; then
		echo "@@GVT_RS_TEST_TIMEOUT $name limit=$GVT_RS_TEST_TIMEOUT rc=$trc: still running after $GVT_RS_TEST_TIMEOUT s, stopped by the runner (SIGTERM, SIGKILL $GRACE_S s later if still there)"
	fi
	echo "@@GVT_RS_TEST_END $name rc=$trc start=$start end=$end"
	[ $trc -eq 0 ] || rc=1
done
exit $rc
