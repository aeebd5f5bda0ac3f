# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the gvt-rs shell selftests (sourced).

. "$(dirname "$0")/../../kselftest/ktap_helpers.sh"

GVT_SYSFS=/sys/kernel/gvt_rs

# check DESCRIPTION COMMAND...: one KTAP result from a command's status.
check() {
	desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

# write_fails ERRNO_TEXT FILE VALUE: the write must fail, with the given
# message fragment (e.g. "Invalid argument"), and leave the file unchanged.
write_fails() {
	expect=$1 file=$2 value=$3
	before=$(cat "$file")
	err=$( (printf '%s' "$value" >"$file") 2>&1) && return 1
	case "$err" in *"$expect"*) ;; *) echo "# $file <- '$value': $err" ; return 1 ;; esac
	[ "$(cat "$file")" = "$before" ]
}

module_loaded() {
	grep -q "^$1 " /proc/modules
}
