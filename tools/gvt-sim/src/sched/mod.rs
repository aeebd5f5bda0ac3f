// SPDX-License-Identifier: GPL-2.0

//! The scheduling simulator: engine, scenarios, reports and plots.

pub mod drm;
pub mod drmfair;
pub mod drmtune;
pub mod engine;
pub mod plot;
pub mod report;
pub mod scenarios;
pub mod tunables;
