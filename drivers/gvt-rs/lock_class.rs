// SPDX-License-Identifier: GPL-2.0

//! Lock classes that are this crate's, whichever module runs the code that
//! initialises the lock.
//!
//! `new_mutex!`, `new_spinlock!` and `new_work!` put a lock class's key in
//! a `static`, one for the crate, and its name in a string literal, copied
//! wherever the code is compiled. Generic functions (`Timer::new`) and
//! closures (the initializer that `Engine::new` returns) are compiled into
//! the crate that uses them, so gvt_rs_sim.ko has its own copy of the name:
//! lockdep wants one name per key (`look_up_lock_class` warns), and a class
//! whose name was in a module since unloaded would name freed memory.
//! [`lock_class!`] takes both from a function of this crate that is never
//! inlined into another.

use kernel::{
    prelude::*,
    sync::LockClassKey, //
};

/// A lock class's name and key, as `Mutex::new`, `SpinLock::new` and
/// `Work::new` take them.
pub(crate) type LockClass = (&'static CStr, Pin<&'static LockClassKey>);

/// The [`LockClass`] named `$name`, made by this crate's code.
macro_rules! lock_class {
    ($name:literal) => {{
        #[inline(never)]
        fn lock_class() -> $crate::lock_class::LockClass {
            (kernel::c_str!($name), kernel::static_lock_class!())
        }
        lock_class()
    }};
}
pub(crate) use lock_class;
