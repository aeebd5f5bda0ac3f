// SPDX-License-Identifier: GPL-2.0

//! `static`: upstream GVT-g's exclusive allocation, the reference.
//!
//! Each vGPU gets the leftmost window of free slots (first fit, like
//! `drm_mm`'s default bottom-up search). When no window is free the create
//! fails with [`Error::NoSpace`], which is the "No space left on device"
//! upstream users hit.

use super::plan::first_free_window;
use super::Error;

/// Start slot for a new vGPU of `size` slots, or `NoSpace`.
pub(crate) fn place(occ: &[u8], size: u16, m: u16) -> Result<u16, Error> {
    first_free_window(occ, size, m).ok_or(Error::NoSpace)
}
