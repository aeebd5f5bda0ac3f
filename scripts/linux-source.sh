# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The pinned Linux source: Debian's linux-source .deb, fetched with apt-get
# download (no root, no package installed) and unpacked. Sourced, after
# common.sh, by bootstrap.sh, export-patches.sh and check-series.sh.
#
#   fetch_linux_source      the shared build tree in $SRC_DIR, which
#                           scripts/prepare-tree.sh lays gvt-rs into
#   pristine_linux_source   a second, pristine copy that no script modifies:
#                           the base of the exported series

debian_mirror() {
	local uri
	uri=$(grep -hoE '^(URIs:|deb) +[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
		grep -v security | head -n1 | awk '{print $2}') || true
	echo "${uri:-http://deb.debian.org/debian}"
}

# The pinned .deb in $SRC_DIR, downloaded and checked if missing.
linux_source_deb() {
	local deb=$SRC_DIR/${LINUX_SOURCE_PKG}_${LINUX_SOURCE_VERSION//:/%3a}_all.deb
	mkdir -p "$SRC_DIR"
	if [ ! -f "$deb" ]; then
		local mirror apt_dir suite
		mirror=$(debian_mirror)
		apt_dir=$(mktemp -d)
		mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
		for suite in $LINUX_SOURCE_SUITES; do
			echo "deb [trusted=yes] $mirror $suite main" >>"$apt_dir/sources.list"
		done
		local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
			-o Dir::Etc::SourceParts=/dev/null
			-o "Dir::State::Lists=$apt_dir/lists"
			-o "Dir::Cache::Archives=$apt_dir/archives"
			-o APT::Sandbox::User=root)
		log "fetching $LINUX_SOURCE_PKG=$LINUX_SOURCE_VERSION from $mirror ($LINUX_SOURCE_SUITES)"
		run_logged "$GVT_RS_CACHE/apt-src-update.log" apt-get "${apt_opts[@]}" update -q
		if ! (cd "$SRC_DIR" && apt-get "${apt_opts[@]}" download \
			"$LINUX_SOURCE_PKG=$LINUX_SOURCE_VERSION" >"$GVT_RS_CACHE/apt-src-download.log" 2>&1); then
			local offered
			offered=$(apt-cache "${apt_opts[@]}" -o "Dir::Cache=$apt_dir" madison "$LINUX_SOURCE_PKG" 2>/dev/null |
				awk -F'|' '{print $2}' | tr -d ' ' | tr '\n' ' ') || true
			rm -rf "$apt_dir"
			die "$LINUX_SOURCE_PKG=$LINUX_SOURCE_VERSION is no longer offered by $mirror (offered: ${offered:-none}).
  Either pass a prepared Linux 7.3 tree with KDIR=/path/to/linux, or set
  LINUX_SOURCE_VERSION=<version> LINUX_SOURCE_SHA256=<sha256 of the .deb> and test again."
		fi
		rm -rf "$apt_dir"
	fi
	if [ -n "$LINUX_SOURCE_SHA256" ]; then
		echo "$LINUX_SOURCE_SHA256  $deb" | sha256sum -c --quiet - >&2 ||
			die "sha256 mismatch for $deb (remove it to download again)"
	fi
	echo "$deb"
}

# Unpack the .deb's source tarball into $1 (replaced), unless a complete
# unpack is already there; print $1.
unpack_linux_source() {
	local dir=$1 deb tmp
	if [ -f "$dir/.gvt-rs-extracted" ]; then
		echo "$dir"
		return
	fi
	deb=$(linux_source_deb)
	log "unpacking $LINUX_SOURCE_PKG into $dir (about 1 minute)"
	mkdir -p "$(dirname "$dir")"
	tmp=$(mktemp -d -p "$(dirname "$dir")")
	chmod 755 "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - --wildcards './usr/src/linux-source-*.tar.xz' |
		tar -C "$tmp" --strip-components=1 -xJf - ||
		die "cannot unpack $deb"
	touch "$tmp/.gvt-rs-extracted"
	rm -rf --one-file-system "$dir"
	mv "$tmp" "$dir"
	echo "$dir"
}

fetch_linux_source() {
	unpack_linux_source "$SRC_DIR/linux-${LINUX_SOURCE_VERSION//[~:]/_}"
}

pristine_linux_source() {
	unpack_linux_source "$GVT_RS_CACHE/pristine/linux-${LINUX_SOURCE_VERSION//[~:]/_}"
}
