// SPDX-License-Identifier: GPL-2.0

//! Device attributes: the files of a device in sysfs.
//!
//! A driver gives its bound devices files in sysfs as attribute groups in its
//! `dev_groups`, as C drivers do with `ATTRIBUTE_GROUPS()`: the driver core
//! creates them once `probe` returned, before the `KOBJ_BIND` uevent tells
//! user space about the binding, and removes them (waiting for `show` and
//! `store` calls in progress) before `remove` runs. A file therefore only
//! exists while the device is bound, and its callbacks get the bound device
//! ([`Device<Bound>`]) and the driver's data of that device.
//!
//! A device class gives the same to its devices with the class's
//! `dev_groups` ([`crate::class`]): the groups exist from before the device's
//! `KOBJ_ADD` uevent until it is unregistered, and their callbacks get the
//! device in the [`Normal`](crate::device::Normal) context and the data it was created with.
//!
//! * Each file is a [`DeviceAttribute<ID, O, Data>`]: `O` implements
//!   [`AttributeOperations<ID>`] for the file's `ID`, with `Data` the
//!   driver's data.
//! * The [`device_attribute_group!`] macro declares a static
//!   [`AttributeGroup<Data>`] of such files, named (a subdirectory of the
//!   device's directory) or not.
//! * A bus or class abstraction installs the groups its driver or class names
//!   in the `dev_groups` with [`Groups`].
//!
//! Files follow the sysfs rules of `Documentation/filesystems/sysfs.rst`: one
//! value per file, text, at most one page. `show` formats into the page with
//! [`kernel::str::Formatter`](crate::str::Formatter), or with [`emit`] for one
//! value, as `sysfs_emit()` does: a page that overflows is an error (`EFBIG`),
//! not silently truncated. `store` parses with the strict helpers of this
//! module ([`parse_uint`], [`parse_int`], [`parse_bool`], [`match_choice`]):
//! they accept one trailing newline (as `echo` writes it) and nothing else
//! around the value, and return `EINVAL` for malformed input and `ERANGE` for
//! values that do not fit, so that a store either applies a valid value or
//! changes nothing.
//!
//! [`kobject`] has directories backed by a kobject of their own, for what has
//! no device.
//!
//! C headers: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h) and
//! [`include/linux/device.h`](srctree/include/linux/device.h).
//!
//! # Examples
//!
//! A driver whose data is a `Counter` gives its devices the files
//! `counter/value` (read-write) and `counter/double` (read-only):
//!
//! ```
//! use core::sync::atomic::{
//!     AtomicU32,
//!     Ordering, //
//! };
//! use kernel::{
//!     device::{
//!         Bound,
//!         Device, //
//!     },
//!     device_attribute_group,
//!     page::PAGE_SIZE,
//!     sysfs::{
//!         self,
//!         AttributeOperations,
//!         Input, //
//!     },
//! };
//!
//! struct Counter {
//!     value: AtomicU32,
//! }
//!
//! const VALUE: u64 = 0;
//! const DOUBLE: u64 = 1;
//!
//! #[vtable]
//! impl AttributeOperations<VALUE> for Counter {
//!     type Data = Counter;
//!
//!     fn show(c: &Counter, _dev: &Device<Bound>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
//!         sysfs::emit(page, fmt!("{}\n", c.value.load(Ordering::Relaxed)))
//!     }
//!
//!     fn store(c: &Counter, _dev: &Device<Bound>, input: &Input<'_>) -> Result {
//!         c.value.store(sysfs::parse_uint_in(input, 0..=10)?, Ordering::Relaxed);
//!         Ok(())
//!     }
//! }
//!
//! #[vtable]
//! impl AttributeOperations<DOUBLE> for Counter {
//!     type Data = Counter;
//!
//!     fn show(c: &Counter, _dev: &Device<Bound>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
//!         sysfs::emit(page, fmt!("{}\n", 2 * c.value.load(Ordering::Relaxed)))
//!     }
//! }
//!
//! device_attribute_group! {
//!     /// `counter/value` and `counter/double`.
//!     static COUNTER_GROUP: AttributeGroup<Counter> = {
//!         name: c"counter",
//!         operations: Counter,
//!         attributes: [
//!             value: VALUE => sysfs::RW,
//!             double: DOUBLE => sysfs::RO,
//!         ],
//!     };
//! }
//! ```
//!
//! A bus abstraction's driver trait then takes the groups, for example
//! [`mdev::Driver::DEVICE_GROUPS`](crate::mdev::Driver::DEVICE_GROUPS):
//! `const DEVICE_GROUPS: &'static [Option<&'static AttributeGroup<Counter>>] =
//! &[Some(&COUNTER_GROUP), None];`, the C array's NULL as `None`
//! ([`static_groups_as_raw`]).

pub mod kobject;

use crate::{
    alloc::{
        flags::GFP_KERNEL,
        KVec, //
    },
    bindings,
    device::{
        Bound,
        Device,
        DeviceContext, //
    },
    error::{
        to_result,
        Result,
        VTABLE_DEFAULT_ERROR, //
    },
    ffi::{
        c_char,
        c_uint, //
    },
    fmt,
    page::PAGE_SIZE,
    prelude::*,
    str::{
        CStr,
        Formatter, //
    },
    types::Opaque, //
};
use core::{
    marker::PhantomData,
    ops::RangeInclusive, //
};

/// Mode of a file everyone may read (C's `DEVICE_ATTR_RO()`).
pub const RO: u16 = 0o444;
/// Mode of a file only root may read (`DEVICE_ATTR_ADMIN_RO()`), for what
/// other users must not see.
pub const ADMIN_RO: u16 = 0o400;
/// Mode of a file everyone may read and root may write (`DEVICE_ATTR_RW()`).
pub const RW: u16 = 0o644;
/// Mode of a file only root may write and nobody may read
/// (`DEVICE_ATTR_WO()`), for actions.
pub const WO: u16 = 0o200;

/// The operations of the device attribute `ID`.
///
/// Implement it once for each attribute of a group, the constant `ID` telling
/// the attributes apart (as with [`crate::configfs::AttributeOperations`]);
/// the [`device_attribute_group!`] macro gives each file its `ID`. `show` and
/// `store` may run concurrently on several CPUs, and with the driver's other
/// code: `Data` is [`Sync`], and mutable state is behind a lock or in atomics.
///
/// `Ctx` is the context of the device while it has the file: [`Bound`] for
/// the groups of a driver's devices, [`Normal`](crate::device::Normal) for those of a class's.
#[vtable]
pub trait AttributeOperations<const ID: u64 = 0, Ctx: DeviceContext = Bound> {
    /// The driver's data of the bound device, or the data of the class
    /// device.
    type Data: Sync;

    /// Writes the file's contents into `page` and returns their length, which
    /// must be below [`PAGE_SIZE`]; an error is returned to the reader.
    fn show(data: &Self::Data, dev: &Device<Ctx>, page: &mut [u8; PAGE_SIZE]) -> Result<usize>;

    /// Applies what was written to the file; an error is returned to the
    /// writer and must leave the state unchanged. Required for a writable
    /// file.
    fn store(_data: &Self::Data, _dev: &Device<Ctx>, _input: &Input<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// A file of the devices of a driver or class whose data is `Data`, in the
/// context `Ctx`: a C `struct device_attribute` whose `show` and `store` call
/// `O`'s.
///
/// Attributes live in `static`s, declared by [`device_attribute_group!`]:
/// sysfs keeps pointers to them while the files exist, and lockdep requires
/// their lock class key to be in static storage.
///
/// # Invariants
///
/// `attr` is a valid `struct device_attribute` whose name is a `'static`
/// NUL-terminated string, whose `show` is [`Self::show`], and whose `store`
/// is [`Self::store`] if its mode lets someone write and NULL otherwise.
#[repr(transparent)]
pub struct DeviceAttribute<const ID: u64, O, Data, Ctx: DeviceContext = Bound> {
    attr: Opaque<bindings::device_attribute>,
    _p: PhantomData<(O, Data, Ctx)>,
}

// SAFETY: sysfs only reads the attribute, and Rust code never accesses it
// after construction.
unsafe impl<const ID: u64, O, D, C: DeviceContext> Sync for DeviceAttribute<ID, O, D, C> {}

impl<const ID: u64, O, Data, Ctx> DeviceAttribute<ID, O, Data, Ctx>
where
    O: AttributeOperations<ID, Ctx, Data = Data>,
    Data: Sync,
    Ctx: DeviceContext,
{
    /// The file `name` with the permissions `mode` ([`RO`], [`ADMIN_RO`],
    /// [`RW`], [`WO`]). A mode that lets someone write needs
    /// [`AttributeOperations::store`]; declaring one without it does not
    /// build.
    pub const fn new(name: &'static CStr, mode: u16) -> Self {
        let writable = mode & 0o222 != 0;
        assert!(
            !writable || O::HAS_STORE,
            "a writable device attribute needs AttributeOperations::store"
        );
        // The fields other than these exist only with CONFIG_DEBUG_LOCK_ALLOC
        // (lockdep's key and static key) and are valid zeroed: a NULL key
        // makes sysfs use the static key.
        let mut attr: bindings::device_attribute = pin_init::zeroed();
        attr.attr.name = crate::str::as_char_ptr_in_const_context(name);
        attr.attr.mode = mode;
        attr.__bindgen_anon_1.show = Some(Self::show);
        if writable {
            attr.__bindgen_anon_2.store = Some(Self::store);
        }
        // INVARIANT: Set above.
        Self {
            attr: Opaque::new(attr),
            _p: PhantomData,
        }
    }

    /// The C `struct attribute` of this file, for an [`AttributeList`].
    pub const fn as_attribute(&'static self) -> *mut bindings::attribute {
        // CAST: `attr` is the first field of the `repr(C)` `device_attribute`.
        self.attr.get().cast()
    }

    /// The data of a device whose groups include this attribute.
    ///
    /// # Safety
    ///
    /// `dev` is valid and in the context `Ctx` for `'a`, and its driver data
    /// is a `Data` (or NULL) for `'a`.
    unsafe fn data<'a>(dev: *mut bindings::device) -> Option<(&'a Device<Ctx>, &'a Data)> {
        // CAST: `Device<Ctx>` is a transparent wrapper of `struct device` in
        // every context.
        // SAFETY: By the safety requirements `dev` is valid, and in the
        // context `Ctx`, for `'a`.
        let dev = unsafe { &*dev.cast::<Device<Ctx>>() };
        // SAFETY: `dev` is valid.
        let data = unsafe { bindings::dev_get_drvdata(dev.as_raw()) };
        // SAFETY: By the safety requirements a non-NULL driver data is a
        // `Data` that lives for `'a`; it is only shared (`Data: Sync`).
        let data = unsafe { data.cast::<Data>().as_ref() }?;
        Some((dev, data))
    }

    /// `device_attribute::show`.
    ///
    /// # Safety
    ///
    /// Called by the driver core for a device that has this attribute as a
    /// file of one of the `dev_groups` of its driver or class ([`Groups`]),
    /// so that the device is in the context `Ctx` and its driver data is a
    /// `Data` during the call; `buf` is a page that nothing else uses during
    /// the call.
    unsafe extern "C" fn show(
        dev: *mut bindings::device,
        _attr: *mut bindings::device_attribute,
        buf: *mut c_char,
    ) -> isize {
        // The group is only in the `dev_groups` (`Groups::as_raw`,
        // `static_groups_as_raw`) of a driver or class whose devices have a
        // `Data` (or NULL) as driver data, in the context `Ctx`, while they
        // have the groups: the driver core removes them, waiting for the
        // callbacks in progress, before it unbinds the device (or before the
        // class device's unregistration returns).
        // SAFETY: So `dev` and its driver data are as `data` requires.
        let found = unsafe { Self::data(dev) };
        let Some((dev, data)) = found else {
            return ENODEV.to_errno() as isize;
        };
        // SAFETY: sysfs passes a zeroed buffer of `PAGE_SIZE` bytes that
        // nothing else accesses during the call.
        let page = unsafe { &mut *buf.cast::<[u8; PAGE_SIZE]>() };
        match O::show(data, dev, page) {
            // Below a page, so far below `isize::MAX`.
            Ok(n) if n < PAGE_SIZE => n as isize,
            Ok(_) => EFBIG.to_errno() as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// `device_attribute::store`.
    ///
    /// # Safety
    ///
    /// Called by the driver core as `show`, with `count` readable bytes at
    /// `buf` followed by a NUL byte.
    unsafe extern "C" fn store(
        dev: *mut bindings::device,
        _attr: *mut bindings::device_attribute,
        buf: *const c_char,
        count: usize,
    ) -> isize {
        // SAFETY: As in `show`.
        let found = unsafe { Self::data(dev) };
        let Some((dev, data)) = found else {
            return ENODEV.to_errno() as isize;
        };
        // SAFETY: sysfs passes `count` bytes (at most a page) and a NUL after
        // them (`kernfs_fop_write_iter()` allocates one more byte for it).
        let input = unsafe { Input::from_raw(buf, count) };
        match O::store(data, dev, &input) {
            // `count` is at most a page.
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

/// The NULL-terminated array of `attribute_group.attrs`: the files of an
/// [`AttributeGroup<Data, Ctx>`]. Built by [`device_attribute_group!`].
///
/// # Invariants
///
/// Every pointer of `attrs` is the attribute of a `'static`
/// [`DeviceAttribute<_, _, Data, Ctx>`], and `end` is NULL.
#[repr(C)]
pub struct AttributeList<Data, const N: usize, Ctx: DeviceContext = Bound> {
    attrs: [*mut bindings::attribute; N],
    // `repr(C)` places the terminator right after the array.
    end: *mut bindings::attribute,
    _p: PhantomData<fn() -> (Data, Ctx)>,
}

// SAFETY: The pointers point to `'static` attributes, which are `Sync`, and
// nothing writes them.
unsafe impl<Data, const N: usize, Ctx: DeviceContext> Sync for AttributeList<Data, N, Ctx> {}

impl<Data, const N: usize, Ctx: DeviceContext> AttributeList<Data, N, Ctx> {
    /// The list of `attrs`.
    ///
    /// # Safety
    ///
    /// Every pointer of `attrs` is the [`DeviceAttribute::as_attribute`] of a
    /// `'static` [`DeviceAttribute<_, _, Data, Ctx>`].
    #[doc(hidden)]
    pub const unsafe fn new(attrs: [*mut bindings::attribute; N]) -> Self {
        // INVARIANT: By the safety requirements, with the terminator.
        Self {
            attrs,
            end: core::ptr::null_mut(),
            _p: PhantomData,
        }
    }
}

/// A group of files of the devices of a driver or class whose data is
/// `Data`, in the context `Ctx`: a C `struct attribute_group`. Declared by
/// [`device_attribute_group!`] and installed by a bus or class abstraction in
/// its `dev_groups` ([`Groups`]).
///
/// # Invariants
///
/// `group` is a valid attribute group whose `attrs` is a `'static`
/// [`AttributeList<Data, _, Ctx>`] and whose name, if any, is a `'static`
/// NUL-terminated string.
#[repr(transparent)]
pub struct AttributeGroup<Data, Ctx: DeviceContext = Bound> {
    group: Opaque<bindings::attribute_group>,
    _p: PhantomData<fn() -> (Data, Ctx)>,
}

// SAFETY: Nothing writes the group after construction, and what it points to
// is `Sync`.
unsafe impl<Data, Ctx: DeviceContext> Sync for AttributeGroup<Data, Ctx> {}

impl<Data, Ctx: DeviceContext> AttributeGroup<Data, Ctx> {
    /// The group of the files `attrs`: in the device's directory, or in its
    /// subdirectory `name`.
    pub const fn new<const N: usize>(
        name: Option<&'static CStr>,
        attrs: &'static AttributeList<Data, N, Ctx>,
    ) -> Self {
        let mut group: bindings::attribute_group = pin_init::zeroed();
        if let Some(name) = name {
            group.name = crate::str::as_char_ptr_in_const_context(name);
        }
        group.__bindgen_anon_2.attrs = (&raw const attrs.attrs)
            .cast::<*mut bindings::attribute>()
            .cast_mut();
        // INVARIANT: Set above.
        Self {
            group: Opaque::new(group),
            _p: PhantomData,
        }
    }

    fn as_raw(&self) -> *const bindings::attribute_group {
        self.group.get()
    }
}

/// Declares a static [`AttributeGroup`] of [`DeviceAttribute`]s.
///
/// Each line is `name: ID => MODE`: the file `name` (an identifier, which is
/// also the name of its `static`), the `ID` of its
/// [`AttributeOperations`] implementation by the `operations` type, and its
/// mode. `name:` names the group's subdirectory; without it the files are in
/// the device's directory. The group's type names the device context
/// (`AttributeGroup<Data, Normal>` for a class); it is [`Bound`] if it does
/// not. See the [module documentation](self).
#[macro_export]
macro_rules! device_attribute_group {
    (
        $(#[$meta:meta])*
        $vis:vis static $group:ident: AttributeGroup<$data:ty, $ctx:ty> = {
            $(name: $name:expr,)?
            operations: $ops:ty,
            attributes: [
                $($attr:ident: $id:tt => $mode:expr),+ $(,)?
            ] $(,)?
        };
    ) => {
        $(#[$meta])*
        $vis static $group: $crate::sysfs::AttributeGroup<$data, $ctx> = {
            $(
                #[allow(non_upper_case_globals)]
                static $attr: $crate::sysfs::DeviceAttribute<{ $id }, $ops, $data, $ctx> =
                    $crate::sysfs::DeviceAttribute::new(
                        $crate::c_str!(::core::stringify!($attr)),
                        $mode,
                    );
            )+
            const N: usize = [$(::core::stringify!($attr)),+].len();
            static ATTRS: $crate::sysfs::AttributeList<$data, N, $ctx> =
                // SAFETY: Each pointer is the attribute of a `static`
                // `DeviceAttribute` of this data and context above.
                unsafe { $crate::sysfs::AttributeList::new([$($attr.as_attribute()),+]) };
            $crate::sysfs::AttributeGroup::new(
                $crate::device_attribute_group!(@name $($name)?),
                &ATTRS,
            )
        };
    };
    (
        $(#[$meta:meta])*
        $vis:vis static $group:ident: AttributeGroup<$data:ty> = { $($body:tt)* };
    ) => {
        $crate::device_attribute_group! {
            $(#[$meta])*
            $vis static $group: AttributeGroup<$data, $crate::device::Bound> = { $($body)* };
        }
    };
    (@name $name:expr) => {
        ::core::option::Option::Some($name)
    };
    (@name) => {
        ::core::option::Option::None
    };
}

/// The `dev_groups` of a driver or class, for a bus or class abstraction: a
/// NULL-terminated array of [`AttributeGroup<Data, Ctx>`]s.
///
/// # Invariants
///
/// `ptrs` is empty or holds the C groups of `'static`
/// `AttributeGroup<Data, Ctx>`s followed by NULL.
pub struct Groups<Data, Ctx: DeviceContext = Bound> {
    ptrs: KVec<*const bindings::attribute_group>,
    _p: PhantomData<fn() -> (Data, Ctx)>,
}

// SAFETY: The pointers point to `'static` groups, which are `Sync`.
unsafe impl<Data, Ctx: DeviceContext> Send for Groups<Data, Ctx> {}

// SAFETY: As for `Send`; nothing writes through a shared reference.
unsafe impl<Data, Ctx: DeviceContext> Sync for Groups<Data, Ctx> {}

impl<Data, Ctx: DeviceContext> Groups<Data, Ctx> {
    /// The array of `groups`.
    pub fn new(groups: &[&'static AttributeGroup<Data, Ctx>]) -> Result<Self> {
        let mut ptrs = KVec::new();
        if !groups.is_empty() {
            ptrs.reserve(groups.len() + 1, GFP_KERNEL)?;
            for g in groups {
                ptrs.push(g.as_raw(), GFP_KERNEL)?;
            }
            ptrs.push(core::ptr::null(), GFP_KERNEL)?;
        }
        // INVARIANT: Built above.
        Ok(Self {
            ptrs,
            _p: PhantomData,
        })
    }

    /// The value of a `dev_groups`: NULL without groups.
    ///
    /// An abstraction installs it, and keeps `self` until no device has the
    /// groups any more, only
    ///
    /// * with `Ctx` = [`Bound`], in a driver whose bound devices' driver data
    ///   is a `Data` from before their `probe` returns until after their
    ///   `remove` was called (the driver core adds the groups between the
    ///   two);
    /// * with `Ctx` = [`Normal`](crate::device::Normal), in a class whose devices' driver data is a
    ///   `Data`, or NULL, from before they are added until they are
    ///   unregistered.
    pub fn as_raw(&self) -> *const *const bindings::attribute_group {
        if self.ptrs.is_empty() {
            core::ptr::null()
        } else {
            self.ptrs.as_ptr()
        }
    }
}

/// The `dev_groups` of a driver whose groups are known at build time: the
/// C array that `groups` is, the groups followed by `None`, which stands for
/// the array's NULL.
///
/// For a bus abstraction whose driver structure the driver core registers as
/// it is (`driver::RegistrationOps`), with no room for a [`Groups`]. The
/// same conditions as for [`Groups::as_raw`] apply. Evaluated in a constant,
/// a list that does not end with `None`, or has `None` before its end, fails
/// the build.
pub const fn static_groups_as_raw<Data, Ctx: DeviceContext>(
    groups: &'static [Option<&'static AttributeGroup<Data, Ctx>>],
) -> *const *const bindings::attribute_group {
    let mut i = 0;
    while i + 1 < groups.len() {
        assert!(groups[i].is_some(), "dev_groups: None before the end");
        i += 1;
    }
    assert!(
        matches!(groups.last(), Some(None)),
        "dev_groups: the list must end with None"
    );
    // CAST: `Option<&T>` is a nullable pointer to `T`, `None` NULL, and an
    // `AttributeGroup` a transparent wrapper of a `struct attribute_group`.
    groups.as_ptr().cast()
}

/// Formats `args` into `page` as `sysfs_emit()` does, and returns the length:
/// `EFBIG` if it does not fit.
pub fn emit(page: &mut [u8; PAGE_SIZE], args: fmt::Arguments<'_>) -> Result<usize> {
    let mut f = Formatter::new(&mut page[..PAGE_SIZE - 1]);
    fmt::Write::write_fmt(&mut f, args).map_err(|_| EFBIG)?;
    Ok(f.bytes_written())
}

/// Writes a list of choices with the current one in brackets and a newline,
/// the format of `/sys/block/*/queue/scheduler`: `a [b] c`.
pub fn write_choices<S: AsRef<str>>(
    w: &mut impl fmt::Write,
    choices: &[S],
    current: usize,
) -> Result {
    for (i, c) in choices.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let r = if i == current {
            w.write_fmt(fmt!("{sep}[{}]", c.as_ref()))
        } else {
            w.write_fmt(fmt!("{sep}{}", c.as_ref()))
        };
        r.map_err(|_| EFBIG)?;
    }
    w.write_str("\n").map_err(|_| EFBIG)
}

/// The bytes written to a sysfs file.
///
/// # Invariants
///
/// `bytes_with_nul` ends with a NUL byte, which is not part of the input: sysfs
/// adds one after the data of a store (`Documentation/filesystems/sysfs.rst`),
/// so the input can go to the kernel's C string parsers.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    bytes_with_nul: &'a [u8],
}

impl<'a> Input<'a> {
    /// An input from bytes that end with a NUL byte (`None` otherwise).
    pub fn from_bytes_with_nul(bytes_with_nul: &'a [u8]) -> Option<Self> {
        // INVARIANT: Checked here.
        match bytes_with_nul.last() {
            Some(0) => Some(Self { bytes_with_nul }),
            _ => None,
        }
    }

    /// The bytes written, without the terminating NUL.
    pub fn as_bytes(&self) -> &'a [u8] {
        let len = self.bytes_with_nul.len().saturating_sub(1);
        &self.bytes_with_nul[..len]
    }

    /// The input as a C string, for the `kstrto*()` parsers, which stop at the
    /// first NUL: `EINVAL` if there is one inside what was written.
    fn as_char_ptr(&self) -> Result<*const c_char> {
        if self.as_bytes().contains(&0) {
            return Err(EINVAL);
        }
        Ok(self.bytes_with_nul.as_ptr().cast())
    }
}

impl Input<'_> {
    /// The input of a store: `count` bytes at `buf`.
    ///
    /// # Safety
    ///
    /// `buf` points to `count` bytes followed by a NUL byte, all readable and
    /// unchanged for `'a`, as sysfs passes them to a store
    /// (`kernfs_fop_write_iter()` allocates one byte more for the NUL).
    pub(crate) unsafe fn from_raw<'a>(buf: *const c_char, count: usize) -> Input<'a> {
        // SAFETY: By the safety requirements, `count + 1` bytes are readable
        // for `'a`; a store gets at most a page, so the sum does not wrap.
        let bytes_with_nul = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count + 1) };
        // INVARIANT: The last byte is the NUL sysfs added.
        Input { bytes_with_nul }
    }
}

impl<'a> From<&'a CStr> for Input<'a> {
    fn from(s: &'a CStr) -> Self {
        // INVARIANT: A C string ends with its NUL.
        Self {
            bytes_with_nul: s.to_bytes_with_nul(),
        }
    }
}

/// The text of a store: the bytes written without one trailing newline.
///
/// Fails with `EINVAL` on empty input, non-UTF-8, or leading/trailing
/// whitespace other than that one newline.
///
/// The kernel's `sysfs_streq()` does this for C strings; the choices and words
/// matched here are Rust strings.
pub fn input_str<'a>(input: &Input<'a>) -> Result<&'a str> {
    let bytes = input.as_bytes();
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let s = core::str::from_utf8(bytes).map_err(|_| EINVAL)?;
    if s.is_empty() || s.trim() != s || s.contains('\0') {
        return Err(EINVAL);
    }
    Ok(s)
}

/// The base for `kstrto*()`: 16 after a `0x` prefix, otherwise 10. Base 0
/// would also read a leading `0` as octal, which sysfs files do not promise.
fn radix(input: &Input<'_>) -> c_uint {
    let s = input.as_bytes();
    let s = s
        .strip_prefix(b"-")
        .or_else(|| s.strip_prefix(b"+"))
        .unwrap_or(s);
    if s.starts_with(b"0x") || s.starts_with(b"0X") {
        16
    } else {
        10
    }
}

/// Parses an unsigned integer, decimal or `0x` hexadecimal, with the kernel's
/// `kstrtoull()` (one trailing newline allowed).
///
/// `EINVAL` when malformed (including a sign), `ERANGE` when it does not fit
/// in `I`.
pub fn parse_uint<I: TryFrom<u64>>(input: &Input<'_>) -> Result<I> {
    let s = input.as_char_ptr()?;
    let mut v: u64 = 0;
    // SAFETY: `s` is a NUL-terminated string and `v` a valid `u64`.
    to_result(unsafe { bindings::kstrtoull(s, radix(input), &mut v) })?;
    I::try_from(v).map_err(|_| ERANGE)
}

/// Parses a signed integer, decimal or `0x` hexadecimal, with the kernel's
/// `kstrtoll()` (one trailing newline allowed).
///
/// `EINVAL` when malformed, `ERANGE` when it does not fit in `I`.
pub fn parse_int<I: TryFrom<i64>>(input: &Input<'_>) -> Result<I> {
    let s = input.as_char_ptr()?;
    let mut v: i64 = 0;
    // SAFETY: `s` is a NUL-terminated string and `v` a valid `i64`.
    to_result(unsafe { bindings::kstrtoll(s, radix(input), &mut v) })?;
    I::try_from(v).map_err(|_| ERANGE)
}

/// Parses an unsigned integer that must lie in `range` (`ERANGE` otherwise).
pub fn parse_uint_in<I>(input: &Input<'_>, range: RangeInclusive<I>) -> Result<I>
where
    I: TryFrom<u64> + PartialOrd,
{
    let v = parse_uint::<I>(input)?;
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(ERANGE)
    }
}

/// Parses a boolean: `1 y Y on` or `0 n N off`, the whole word.
///
/// The kernel's `kstrtobool()` reads only the first two characters (it takes
/// `yes`, `1x` or `onion`); a sysfs store here must be exact.
pub fn parse_bool(input: &Input<'_>) -> Result<bool> {
    match input_str(input)? {
        "1" | "y" | "Y" | "on" | "On" | "ON" => Ok(true),
        "0" | "n" | "N" | "off" | "Off" | "OFF" => Ok(false),
        _ => Err(EINVAL),
    }
}

/// Finds the written text in a list of choices and returns its index, as
/// `sysfs_match_string()` does for C strings. `EINVAL` if it is not one of
/// them.
pub fn match_choice<S: AsRef<str>>(input: &Input<'_>, choices: &[S]) -> Result<usize> {
    let s = input_str(input)?;
    choices.iter().position(|c| c.as_ref() == s).ok_or(EINVAL)
}

#[macros::kunit_tests(rust_kernel_sysfs)]
mod tests {
    use super::*;
    use crate::alloc::KBox;
    use core::sync::atomic::{
        AtomicU32,
        Ordering, //
    };

    fn s(c: &CStr) -> Input<'_> {
        Input::from(c)
    }

    #[test]
    fn input_is_strict() {
        assert_eq!(input_str(&s(c"abc\n")), Ok("abc"));
        assert_eq!(input_str(&s(c"abc")), Ok("abc"));
        assert_eq!(input_str(&s(c"")), Err(EINVAL));
        assert_eq!(input_str(&s(c"\n")), Err(EINVAL));
        assert_eq!(input_str(&s(c"abc\n\n")), Err(EINVAL));
        assert_eq!(input_str(&s(c" abc")), Err(EINVAL));
        let nul = Input::from_bytes_with_nul(b"a\0\0");
        assert!(nul.is_some());
        if let Some(nul) = nul {
            assert_eq!(input_str(&nul), Err(EINVAL));
            assert_eq!(parse_uint::<u32>(&nul), Err(EINVAL));
        }
        assert!(Input::from_bytes_with_nul(b"1").is_none());
        assert_eq!(input_str(&s(c"\xff")), Err(EINVAL));
    }

    #[test]
    fn unsigned_integers() {
        assert_eq!(parse_uint::<u32>(&s(c"42\n")), Ok(42));
        assert_eq!(parse_uint::<u32>(&s(c"0x2a")), Ok(42));
        assert_eq!(parse_uint::<u32>(&s(c"+0x2a")), Ok(42));
        assert_eq!(parse_uint::<u32>(&s(c"010")), Ok(10));
        assert_eq!(parse_uint::<u32>(&s(c"+7")), Ok(7));
        assert_eq!(parse_uint::<u8>(&s(c"256")), Err(ERANGE));
        assert_eq!(parse_uint::<u64>(&s(c"18446744073709551616")), Err(ERANGE));
        assert_eq!(parse_uint::<u32>(&s(c"-1")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c"1 2")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c" 1")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c"1\n\n")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c"\n")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c"0x")), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(&s(c"1s")), Err(EINVAL));
        assert_eq!(parse_uint_in::<u32>(&s(c"5"), 1..=4), Err(ERANGE));
        assert_eq!(parse_uint_in::<u32>(&s(c"4"), 1..=4), Ok(4));
    }

    #[test]
    fn signed_integers() {
        assert_eq!(parse_int::<i32>(&s(c"-42\n")), Ok(-42));
        assert_eq!(parse_int::<i32>(&s(c"-0x2a")), Ok(-42));
        assert_eq!(parse_int::<i8>(&s(c"-128")), Ok(-128));
        assert_eq!(parse_int::<i8>(&s(c"-129")), Err(ERANGE));
        assert_eq!(parse_int::<i64>(&s(c"-9223372036854775808")), Ok(i64::MIN));
        assert_eq!(parse_int::<i64>(&s(c"9223372036854775808")), Err(ERANGE));
        assert_eq!(parse_int::<i32>(&s(c"--1")), Err(EINVAL));
    }

    #[test]
    fn booleans_and_choices() {
        assert_eq!(parse_bool(&s(c"on\n")), Ok(true));
        assert_eq!(parse_bool(&s(c"0")), Ok(false));
        assert_eq!(parse_bool(&s(c"yes")), Err(EINVAL));
        assert_eq!(match_choice(&s(c"sfq\n"), &["tbs", "vmcg", "sfq"]), Ok(2));
        assert_eq!(
            match_choice(&s(c"SFQ"), &["tbs", "vmcg", "sfq"]),
            Err(EINVAL)
        );
    }

    struct Counter {
        value: AtomicU32,
    }

    const VALUE: u64 = 0;
    const DOUBLE: u64 = 1;

    #[vtable]
    impl AttributeOperations<VALUE> for Counter {
        type Data = Counter;

        fn show(c: &Counter, _dev: &Device<Bound>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
            emit(page, fmt!("{}\n", c.value.load(Ordering::Relaxed)))
        }

        fn store(c: &Counter, _dev: &Device<Bound>, input: &Input<'_>) -> Result {
            c.value
                .store(parse_uint_in(input, 0..=10)?, Ordering::Relaxed);
            Ok(())
        }
    }

    #[vtable]
    impl AttributeOperations<DOUBLE> for Counter {
        type Data = Counter;

        fn show(c: &Counter, _dev: &Device<Bound>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
            emit(page, fmt!("{}\n", 2 * c.value.load(Ordering::Relaxed)))
        }
    }

    crate::device_attribute_group! {
        static COUNTER_GROUP: AttributeGroup<Counter> = {
            name: c"counter",
            operations: Counter,
            attributes: [
                value: VALUE => RW,
                double: DOUBLE => ADMIN_RO,
            ],
        };
    }

    crate::device_attribute_group! {
        static UNNAMED: AttributeGroup<Counter> = {
            operations: Counter,
            attributes: [double: DOUBLE => RO],
        };
    }

    /// The C attributes of `group`, up to its NULL terminator.
    fn attrs(group: &AttributeGroup<Counter>) -> KVec<*mut bindings::device_attribute> {
        let mut v = KVec::new();
        // SAFETY: The group is valid (type invariant).
        let mut p = unsafe { (*group.as_raw()).__bindgen_anon_2.attrs };
        // SAFETY: `attrs` is a NULL-terminated array of the attributes of
        // `DeviceAttribute`s (invariant of `AttributeList`), which are
        // `device_attribute`s starting with their `attribute`.
        unsafe {
            while !(*p).is_null() {
                if v.push((*p).cast(), GFP_KERNEL).is_err() {
                    break;
                }
                p = p.add(1);
            }
        }
        v
    }

    /// The name of a group or an attribute.
    ///
    /// # Safety
    ///
    /// `name` is NULL or a `'static` NUL-terminated string.
    unsafe fn name(name: *const c_char) -> Option<&'static CStr> {
        // SAFETY: By the safety requirements.
        (!name.is_null()).then(|| unsafe { CStr::from_char_ptr(name) })
    }

    /// Name, mode and whether it has a `store` of the attribute `a`.
    fn describe(a: *mut bindings::device_attribute) -> (Option<&'static CStr>, u16, bool) {
        // SAFETY: The attributes of a group are valid and `'static`.
        let a = unsafe { &*a };
        // SAFETY: Their names are `'static` strings.
        let name = unsafe { name(a.attr.name) };
        // SAFETY: Both members of the union are function pointers.
        let store = unsafe { a.__bindgen_anon_2.store }.is_some();
        (name, a.attr.mode, store)
    }

    #[test]
    fn group_tables_are_terminated_and_carry_modes() {
        // SAFETY: The groups are valid and `'static`, their names too.
        let (named, unnamed) = unsafe {
            (
                name((*COUNTER_GROUP.as_raw()).name),
                name((*UNNAMED.as_raw()).name),
            )
        };
        assert_eq!(named, Some(c"counter"));
        assert_eq!(unnamed, None);
        let a = attrs(&COUNTER_GROUP);
        assert_eq!(a.len(), 2);
        assert_eq!(describe(a[0]), (Some(c"value"), 0o644, true));
        assert_eq!(describe(a[1]), (Some(c"double"), 0o400, false));
        assert_eq!(attrs(&UNNAMED).len(), 1);
    }

    #[test]
    fn driver_groups_are_null_terminated() -> Result {
        let none = Groups::<Counter>::new(&[])?;
        assert!(none.as_raw().is_null());
        let two = Groups::new(&[&COUNTER_GROUP, &UNNAMED])?;
        let p = two.as_raw();
        // SAFETY: `p` is an array of three pointers.
        let (first, second, end) = unsafe { (*p, *p.add(1), *p.add(2)) };
        assert_eq!(first, COUNTER_GROUP.as_raw());
        assert_eq!(second, UNNAMED.as_raw());
        assert!(end.is_null());
        Ok(())
    }

    /// Calls the `show` of `attr` for `dev` as the driver core does.
    fn read(
        dev: &mut bindings::device,
        attr: *mut bindings::device_attribute,
        page: &mut [u8; PAGE_SIZE],
    ) -> isize {
        page.fill(0);
        // SAFETY: `attr` is a valid attribute.
        let show = unsafe { (*attr).__bindgen_anon_1.show };
        match show {
            // SAFETY: `dev` has a `Counter` as driver data, which the caller
            // keeps; `page` is a page nobody else uses.
            Some(show) => unsafe { show(dev, attr, page.as_mut_ptr().cast()) },
            None => EIO.to_errno() as isize,
        }
    }

    /// Calls the `store` of `attr` for `dev` with `input`.
    fn write(
        dev: &mut bindings::device,
        attr: *mut bindings::device_attribute,
        input: &CStr,
    ) -> isize {
        // SAFETY: `attr` is a valid attribute.
        let store = unsafe { (*attr).__bindgen_anon_2.store };
        match store {
            // SAFETY: As in `read`; `input` has its length in bytes and a NUL
            // after them.
            Some(store) => unsafe { store(dev, attr, input.as_char_ptr(), input.to_bytes().len()) },
            None => EIO.to_errno() as isize,
        }
    }

    #[test]
    fn callbacks_reach_the_drivers_data() -> Result {
        let counter = KBox::new(
            Counter {
                value: AtomicU32::new(3),
            },
            GFP_KERNEL,
        )?;
        // The callbacks only read the device's driver data: a zeroed device
        // with one stands for a bound device of the driver.
        let mut dev = KBox::<bindings::device>::init(pin_init::init_zeroed(), GFP_KERNEL)?;
        dev.driver_data = core::ptr::from_ref::<Counter>(&counter).cast_mut().cast();
        let mut page = KBox::new([0u8; PAGE_SIZE], GFP_KERNEL)?;
        let a = attrs(&COUNTER_GROUP);
        let (value, double) = (a[0], a[1]);
        assert_eq!(read(&mut dev, value, &mut page), 2);
        assert_eq!(&page[..2], b"3\n");
        assert_eq!(write(&mut dev, value, c"7\n"), 2);
        assert_eq!(read(&mut dev, double, &mut page), 3);
        assert_eq!(&page[..3], b"14\n");
        assert_eq!(write(&mut dev, value, c"11"), ERANGE.to_errno() as isize);
        assert_eq!(write(&mut dev, value, c"x"), EINVAL.to_errno() as isize);
        assert_eq!(write(&mut dev, double, c"1"), EIO.to_errno() as isize);
        assert_eq!(counter.value.load(Ordering::Relaxed), 7);
        // Without driver data (not bound): no access.
        dev.driver_data = core::ptr::null_mut();
        assert_eq!(read(&mut dev, value, &mut page), ENODEV.to_errno() as isize);
        Ok(())
    }

    #[test]
    fn emit_refuses_overflow() -> Result {
        let mut page = KBox::new([0u8; PAGE_SIZE], GFP_KERNEL)?;
        assert_eq!(emit(&mut page, fmt!("{}\n", 42)), Ok(3));
        assert_eq!(&page[..3], b"42\n");
        let long = [b'x'; PAGE_SIZE - 1];
        let long = core::str::from_utf8(&long).map_err(|_| EINVAL)?;
        assert_eq!(emit(&mut page, fmt!("{long}")), Ok(PAGE_SIZE - 1));
        assert_eq!(emit(&mut page, fmt!("{long}\n")), Err(EFBIG));
        let mut f = Formatter::new(&mut page[..]);
        write_choices(&mut f, &["tbs", "vmcg", "sfq"], 1)?;
        let n = f.bytes_written();
        assert_eq!(&page[..n], b"tbs [vmcg] sfq\n");
        Ok(())
    }
}
