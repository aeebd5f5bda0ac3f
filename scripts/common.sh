# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared settings for the gvt-rs build scripts. Sourced, not executed.

set -euo pipefail

GVT_RS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GVT_RS_CACHE=${GVT_RS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gvt-rs}

# Pinned inputs. Bump together with the sha256 after testing.
# shellcheck disable=SC2034 # used by the sourcing scripts
LINUX_SOURCE_PKG=linux-source-7.3
LINUX_SOURCE_VERSION=${LINUX_SOURCE_VERSION:-7.3.4-1~bpo13+1}
LINUX_SOURCE_SHA256=${LINUX_SOURCE_SHA256:-703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3}
LINUX_SOURCE_SUITES=${LINUX_SOURCE_SUITES:-"trixie-backports sid"}
# shellcheck disable=SC2034 # used by the sourcing scripts
BINDGEN_VERSION=0.72.1
# Clang/LLVM of the KASAN test kernel (Debian's clang-N, lld-N, llvm-N).
# shellcheck disable=SC2034 # used by the sourcing scripts
LLVM_VERSION=19
# shellcheck disable=SC2034 # used by the sourcing scripts
LIBCLANG_WHEEL_VERSION=18.1.1

TOOLS_DIR=$GVT_RS_CACHE/tools
# shellcheck disable=SC2034 # used by the sourcing scripts
SRC_DIR=$GVT_RS_CACHE/src
BUILD_DIR=${BUILD_DIR:-$GVT_RS_CACHE/build}

export PATH=$TOOLS_DIR/bindgen/bin:$PATH

log() {
	printf '\033[1m[gvt-rs]\033[0m %s\n' "$*" >&2
}

die() {
	printf '\033[1;31m[gvt-rs] error:\033[0m %s\n' "$*" >&2
	exit 1
}

# Run a long command with its output in a log file; print the tail on failure.
run_logged() {
	local logfile=$1
	shift
	if ! "$@" >"$logfile" 2>&1; then
		tail -n 60 "$logfile" >&2
		die "'$*' failed (full log: $logfile)"
	fi
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*' (install the packages yourself or run as root)"
	fi
}

# The project's new kernel files, relative to the repository and to a kernel
# tree, sorted: what scripts/prepare-tree.sh copies into the build tree and
# the series commits. Extra top-level directories may be named (the series
# adds Documentation, which the build does not need).
overlay_files() {
	(cd "$GVT_RS_ROOT" && find rust drivers/gvt-rs tools/testing/selftests/drivers/gvt_rs include "$@" \
		-type f -not -path '*/target/*' -not -name Cargo.lock -not -name '*.orig' 2>/dev/null |
		LC_ALL=C sort)
}

# Serialise everything that touches the shared kernel tree or a build folder:
# concurrent builds would corrupt each other (and there are only 2 cores).
take_build_lock() {
	mkdir -p "$GVT_RS_CACHE"
	exec 9>"$GVT_RS_CACHE/build.lock"
	if ! flock -n 9; then
		log "waiting for another gvt-rs build or VM run to finish"
		flock 9
	fi
}
