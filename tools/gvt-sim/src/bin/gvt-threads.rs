// SPDX-License-Identifier: GPL-2.0

//! `gvt-threads`: Kang & Yu's thread division (Eq. 1, Eq. 2, Algorithm 2,
//! the 2x throttle) on a model compute engine shared spatially by 6 VMs,
//! against whole-kernel FIFO: the deviation experiments of their Figs. 3,
//! 4 and 7-10. Deterministic; no options.

#[path = "../threads/mod.rs"]
mod threads;

fn main() {
    if std::env::args().len() > 1 {
        eprintln!("usage: gvt-threads");
        std::process::exit(2);
    }
    print!("{}", threads::report::all());
}
