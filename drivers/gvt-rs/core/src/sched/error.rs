// SPDX-License-Identifier: GPL-2.0

//! Errors of the scheduler's calls.

/// Error of a rejected call; nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Malformed request: unknown id or engine, wrong lifecycle state (`-EINVAL`).
    Invalid,
    /// Value outside its documented range (`-ERANGE`).
    OutOfRange,
    /// Not now: the object is in use (`-EBUSY`).
    Busy,
}

impl Error {
    /// The positive errno the kernel returns negated.
    pub const fn errno(self) -> i32 {
        match self {
            Error::Invalid => 22,
            Error::OutOfRange => 34,
            Error::Busy => 16,
        }
    }
}
