// SPDX-License-Identifier: GPL-2.0
/*
 * The Rust symbols of gvt_rs.ko's two crates (the policy core and the
 * engine), exported for the providers built as modules of their own
 * (gvt_rs_sim.ko), as rust/exports.c exports the kernel crate's. The list
 * is generated from the objects (Makefile) and needs the v0 mangling,
 * whose names are C identifiers. The symbols have no versions: the
 * kernel crate's get theirs from gendwarfksyms over the Rust objects
 * (rust/Makefile), which a module's build does not run, so
 * CONFIG_GVT_RS_SIM needs CONFIG_MODVERSIONS off.
 */

#include <linux/export.h>

#define EXPORT_SYMBOL_RUST_GPL(sym) extern int sym; EXPORT_SYMBOL_NS_GPL(sym, "GVT_RS")

#include "gvt_rs_exports_generated.h"
