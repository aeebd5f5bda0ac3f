// SPDX-License-Identifier: GPL-2.0
/*
 * The version of gvt_rs.ko, for packagers: "modinfo -F version gvt_rs".
 *
 * The Rust module! macro has no version field, so it is set here. It is
 * the version of the newest entry of the gvt-rs CHANGELOG and changes
 * with it; the project's series check fails when the two differ.
 */

#include <linux/module.h>

MODULE_VERSION("0.1.0");
