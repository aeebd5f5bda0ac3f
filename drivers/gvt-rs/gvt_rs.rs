// SPDX-License-Identifier: GPL-2.0

//! gvt-rs: vGPU scheduling policies and graphics-memory placement.
//!
//! The policy logic lives in the `core/` crate, which is compiled both here
//! and on the host (`cargo test`); this module wraps it with the kernel's
//! locking, timers and sysfs.

use kernel::{
    prelude::*,
    sysfs::{Attribute, Buffer, Dir, Parent},
};

#[path = "core/src/gvt_core.rs"]
pub mod gvt_core;

module! {
    type: GvtRs,
    name: "gvt_rs",
    authors: ["gvt-rs developers"],
    description: "Fair vGPU scheduling and shared graphics memory for mediated GPUs",
    license: "GPL",
}

/// Module-wide state shown in `/sys/kernel/gvt_rs/`.
struct Global;

fn show_version(_: &Global, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", gvt_core::VERSION))
}

static VERSION_ATTR: Attribute<Global> = Attribute::read_only(c"version", show_version);
static GLOBAL_ATTRS: [&Attribute<Global>; 1] = [&VERSION_ATTR];

struct GvtRs {
    _sysfs: Dir<Global>,
}

impl kernel::Module for GvtRs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let sysfs = Dir::new(c"gvt_rs", Parent::kernel()?, Global, &GLOBAL_ATTRS)?;
        pr_info!("gvt-rs {} loaded\n", gvt_core::VERSION);
        Ok(Self { _sysfs: sysfs })
    }
}

impl Drop for GvtRs {
    fn drop(&mut self) {
        pr_info!("gvt-rs unloaded\n");
    }
}
