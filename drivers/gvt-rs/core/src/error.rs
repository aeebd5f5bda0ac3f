// SPDX-License-Identifier: GPL-2.0

//! The one error type of the core's calls.

/// Why a call of the scheduler or the slot pool was refused. On every
/// error nothing was changed. The kernel engine maps each to an errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A malformed request: an unknown id or engine, a wrong lifecycle
    /// state, a size of zero, a size in MB that is not a multiple of 64.
    Invalid,
    /// A value outside its documented range: an id not below the capacity,
    /// a weight, a tunable, a vGPU larger than the pool.
    OutOfRange,
    /// Not now: the object is in use (a started vGPU, work in flight, an
    /// allocator change while vGPUs exist).
    Busy,
    /// The vGPU does not fit: `static` has no free window, or the vGPU
    /// table is full (upstream GVT-g reports "No space left on device").
    NoSpace,
    /// The id is already in use.
    Exists,
}

impl Error {
    /// A short lower-case name, for logs and the simulator.
    pub const fn name(self) -> &'static str {
        match self {
            Error::Invalid => "invalid",
            Error::OutOfRange => "out of range",
            Error::Busy => "busy",
            Error::NoSpace => "no space",
            Error::Exists => "exists",
        }
    }
}
