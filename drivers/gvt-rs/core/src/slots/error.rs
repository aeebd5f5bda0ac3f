// SPDX-License-Identifier: GPL-2.0

//! Errors of the slot pool and how the kernel maps them to errno values.

/// Why a slot-pool operation failed. On every error the pool is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotError {
    /// A malformed argument: a size of zero, a size in MB that is not a
    /// multiple of 64, an id that is not in use. Maps to `-EINVAL`.
    Invalid,
    /// A value outside its documented range: an id not below the capacity,
    /// a vGPU larger than the pool, a tunable out of bounds. Maps to `-ERANGE`.
    OutOfRange,
    /// The operation is not allowed now, for example changing the allocator
    /// while vGPUs exist. Maps to `-EBUSY`.
    Busy,
    /// The allocator cannot place the vGPU: `static` has no free window, or
    /// the vGPU table is full. Maps to `-ENOSPC` ("No space left on device",
    /// which is what upstream GVT-g reports).
    NoSpace,
    /// The id is already in use. Maps to `-EEXIST`.
    Exists,
}

impl SlotError {
    /// The negative errno the kernel returns for this error.
    pub const fn to_errno(self) -> i32 {
        match self {
            SlotError::Invalid => -22,    // EINVAL
            SlotError::OutOfRange => -34, // ERANGE
            SlotError::Busy => -16,       // EBUSY
            SlotError::NoSpace => -28,    // ENOSPC
            SlotError::Exists => -17,     // EEXIST
        }
    }

    /// A short lower-case name, for logs and the simulator.
    pub const fn name(self) -> &'static str {
        match self {
            SlotError::Invalid => "invalid",
            SlotError::OutOfRange => "out of range",
            SlotError::Busy => "busy",
            SlotError::NoSpace => "no space",
            SlotError::Exists => "exists",
        }
    }
}
