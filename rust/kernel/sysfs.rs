// SPDX-License-Identifier: GPL-2.0

//! sysfs directories and attributes.
//!
//! A [`Dir<T>`] is a directory in sysfs backed by a `struct kobject` that owns a
//! value of type `T`. Its files are [`Attribute<T>`]s declared as `static`s:
//! reading a file calls the attribute's `show` function with `&T` and a
//! [`Buffer`], writing it calls `store` with `&T` and the bytes written.
//! Because the callbacks receive a shared reference and may run concurrently
//! on several CPUs, `T` must be [`Sync`]: mutable state goes behind a lock or
//! in atomics.
//!
//! Files follow the sysfs rules of `Documentation/filesystems/sysfs.rst`: one
//! value per file, text, at most one page. The parsing helpers in this module
//! ([`parse_uint`], [`parse_int`], [`parse_bool`], [`match_choice`]) are strict:
//! they accept one trailing newline (as `echo` writes it) and nothing else
//! around the value, and return `EINVAL` for malformed input and `ERANGE` for
//! values that do not fit, so that a store either applies a valid value or
//! changes nothing.
//!
//! C header: [`include/linux/sysfs.h`](srctree/include/linux/sysfs.h) and
//! [`include/linux/kobject.h`](srctree/include/linux/kobject.h).
//!
//! # Examples
//!
//! ```ignore
//! use core::sync::atomic::{AtomicU32, Ordering};
//! use kernel::sysfs::{self, Attribute, Buffer, Dir, Parent};
//!
//! struct Knobs {
//!     level: AtomicU32,
//! }
//!
//! fn show_level(k: &Knobs, buf: &mut Buffer<'_>) -> Result {
//!     buf.emit(fmt!("{}\n", k.level.load(Ordering::Relaxed)))
//! }
//!
//! fn store_level(k: &Knobs, input: &[u8]) -> Result {
//!     let v = sysfs::parse_uint_in::<u32>(input, 0..=10)?;
//!     k.level.store(v, Ordering::Relaxed);
//!     Ok(())
//! }
//!
//! static LEVEL: Attribute<Knobs> = Attribute::read_write(c"level", show_level, store_level);
//! static KNOBS_ATTRS: [&Attribute<Knobs>; 1] = [&LEVEL];
//!
//! // Creates /sys/kernel/knobs/level.
//! let knobs = Knobs {
//!     level: AtomicU32::new(0),
//! };
//! let dir = Dir::new(c"knobs", Parent::kernel()?, knobs, &KNOBS_ATTRS)?;
//! ```

use crate::{
    alloc::{flags::GFP_KERNEL, KBox},
    bindings, container_of,
    error::{to_result, Error, Result},
    ffi::c_char,
    fmt,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    types::Opaque,
};
use core::{marker::PhantomData, ops::RangeInclusive, pin::Pin, ptr::NonNull};

/// The function called when a sysfs file is read.
///
/// It writes the file's contents into the buffer; an error is returned to the
/// reader.
pub type ShowFn<T> = fn(&T, &mut Buffer<'_>) -> Result;

/// The function called when a sysfs file is written.
///
/// It receives the bytes written (without a terminating NUL); an error is
/// returned to the writer and must leave the state unchanged.
pub type StoreFn<T> = fn(&T, &[u8]) -> Result;

/// A sysfs file of a [`Dir<T>`].
///
/// Attributes are declared as `static` items: sysfs keeps a pointer to them for
/// as long as the file exists, and lockdep requires their lock class key to live
/// in static storage.
///
/// # Invariants
///
/// `attr` is a valid `struct attribute` whose `name` points to a `'static`
/// NUL-terminated string, and whose mode allows reading only if `show` is
/// `Some` and writing only if `store` is `Some`.
#[repr(C)]
pub struct Attribute<T> {
    attr: Opaque<bindings::attribute>,
    show: Option<ShowFn<T>>,
    store: Option<StoreFn<T>>,
}

// SAFETY: `Attribute` is only handed to sysfs, which reads it; Rust code never
// accesses the `Opaque` part after construction. The function pointers are
// `Sync`.
unsafe impl<T> Sync for Attribute<T> {}

// SAFETY: Same reasoning as for `Sync`: no thread-bound state.
unsafe impl<T> Send for Attribute<T> {}

impl<T> Attribute<T> {
    const fn new(
        name: &'static CStr,
        mode: u16,
        show: Option<ShowFn<T>>,
        store: Option<StoreFn<T>>,
    ) -> Self {
        // The fields other than `name` and `mode` exist only with
        // CONFIG_DEBUG_LOCK_ALLOC (lockdep's key and static key) and are valid
        // zeroed: a NULL key makes sysfs use the static key. Starting from a
        // zeroed value and assigning the two fields builds the same attribute
        // in both configurations.
        let mut attr: bindings::attribute = pin_init::zeroed();
        attr.name = crate::str::as_char_ptr_in_const_context(name);
        attr.mode = mode;
        // INVARIANT: `name` is `'static` and NUL-terminated; the callers below
        // pick the mode that matches `show` and `store`.
        Self {
            attr: Opaque::new(attr),
            show,
            store,
        }
    }

    /// A file readable by everyone (mode 0444).
    pub const fn read_only(name: &'static CStr, show: ShowFn<T>) -> Self {
        Self::new(name, 0o444, Some(show), None)
    }

    /// A file readable by everyone and writable by root (mode 0644).
    pub const fn read_write(name: &'static CStr, show: ShowFn<T>, store: StoreFn<T>) -> Self {
        Self::new(name, 0o644, Some(show), Some(store))
    }

    /// A file only root may write and nobody may read (mode 0200), for actions.
    pub const fn write_only(name: &'static CStr, store: StoreFn<T>) -> Self {
        Self::new(name, 0o200, None, Some(store))
    }
}

/// The page a `show` function writes into.
///
/// Formatting past the end of the page fails with `EFBIG` instead of
/// truncating silently, so that an oversized file is a visible bug.
pub struct Buffer<'a> {
    page: &'a mut [u8; PAGE_SIZE],
    len: usize,
}

impl<'a> Buffer<'a> {
    /// Wraps an empty page.
    pub fn new(page: &'a mut [u8; PAGE_SIZE]) -> Self {
        Self { page, len: 0 }
    }

    /// Number of bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.page[..self.len]
    }

    /// Appends formatted text, as `sysfs_emit_at()` does.
    ///
    /// Use it with the [`fmt!`] macro: `buf.emit(fmt!("{}\n", value))`.
    pub fn emit(&mut self, args: fmt::Arguments<'_>) -> Result {
        fmt::Write::write_fmt(self, args).map_err(|_| EFBIG)
    }

    /// Appends a list of choices with the current one in brackets and a
    /// newline, the format of `/sys/block/*/queue/scheduler`: `a [b] c`.
    pub fn emit_choices<S: AsRef<str>>(&mut self, choices: &[S], current: usize) -> Result {
        for (i, c) in choices.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            if i == current {
                self.emit(fmt!("{sep}[{}]", c.as_ref()))?;
            } else {
                self.emit(fmt!("{sep}{}", c.as_ref()))?;
            }
        }
        self.emit(fmt!("\n"))
    }
}

impl fmt::Write for Buffer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.page.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Where a [`Dir`] is created.
///
/// The lifetime ties the parent's handle to the borrow it came from; the
/// kobject core additionally keeps the parent alive while a child exists.
pub struct Parent<'a> {
    kobj: NonNull<bindings::kobject>,
    _p: PhantomData<&'a ()>,
}

impl Parent<'static> {
    /// `/sys/kernel`.
    pub fn kernel() -> Result<Self> {
        // SAFETY: `kernel_kobj` is written once during boot (`ksysfs_init()`)
        // and only read afterwards.
        let kobj = unsafe { bindings::kernel_kobj };
        Ok(Self {
            kobj: NonNull::new(kobj).ok_or(ENODEV)?,
            _p: PhantomData,
        })
    }
}

impl<'a> Parent<'a> {
    /// The directory of a device, for example `/sys/bus/mdev/devices/<uuid>`.
    pub fn device<Ctx: crate::device::DeviceContext>(dev: &'a crate::device::Device<Ctx>) -> Self {
        // SAFETY: `dev.as_raw()` is a valid `struct device` for the lifetime
        // `'a`, so its embedded kobject is too.
        let kobj = unsafe { &raw mut (*dev.as_raw()).kobj };
        Self {
            // SAFETY: A field of a valid object is not NULL.
            kobj: unsafe { NonNull::new_unchecked(kobj) },
            _p: PhantomData,
        }
    }
}

/// The allocation behind a [`Dir<T>`]: the kobject and the value it owns.
///
/// # Invariants
///
/// `kobj` is initialised with `Inner::<T>::KTYPE` once [`Dir::new`] called
/// `kobject_init_and_add()`; from then on the allocation is freed by
/// [`Inner::release`] when the last reference to `kobj` is dropped.
#[repr(C)]
#[pin_data]
struct Inner<T> {
    #[pin]
    kobj: Opaque<bindings::kobject>,
    #[pin]
    data: T,
}

impl<T: Send + Sync> Inner<T> {
    const SYSFS_OPS: bindings::sysfs_ops = bindings::sysfs_ops {
        show: Some(Self::show),
        store: Some(Self::store),
    };

    const KTYPE: bindings::kobj_type = bindings::kobj_type {
        release: Some(Self::release),
        sysfs_ops: &Self::SYSFS_OPS,
        // SAFETY: NULL groups and namespace callbacks are valid.
        ..unsafe { core::mem::zeroed() }
    };

    /// # Safety
    ///
    /// `kobj` must be the `kobj` field of a live `Inner<T>`.
    unsafe fn from_kobj<'b>(kobj: *mut bindings::kobject) -> &'b Self {
        let kobj = Opaque::cast_from(kobj).cast_mut();
        // SAFETY: By the safety requirements, `kobj` is embedded in an
        // `Inner<T>`, which stays alive while sysfs can call into it.
        unsafe { &*container_of!(kobj, Self, kobj) }
    }

    /// # Safety
    ///
    /// `attr` must be the `attr` field of an `Attribute<T>`.
    unsafe fn attribute<'b>(attr: *mut bindings::attribute) -> &'b Attribute<T> {
        let attr = Opaque::cast_from(attr).cast_mut();
        // SAFETY: By the safety requirements, `attr` is embedded in an
        // `Attribute<T>`, which is `'static`.
        unsafe { &*container_of!(attr, Attribute<T>, attr) }
    }

    /// # Safety
    ///
    /// Called by sysfs with a kobject of type `KTYPE`, one of its attributes
    /// and a page-sized buffer.
    unsafe extern "C" fn show(
        kobj: *mut bindings::kobject,
        attr: *mut bindings::attribute,
        buf: *mut c_char,
    ) -> isize {
        // SAFETY: Only kobjects initialised with `KTYPE` reach this function,
        // and they are all embedded in an `Inner<T>`.
        let this = unsafe { Self::from_kobj(kobj) };
        // SAFETY: `Dir::new` only creates files for `Attribute<T>`s.
        let attr = unsafe { Self::attribute(attr) };
        let Some(show) = attr.show else {
            return EIO.to_errno() as isize;
        };
        // SAFETY: sysfs passes a zeroed buffer of `PAGE_SIZE` bytes that nobody
        // else accesses during the call.
        let page = unsafe { &mut *buf.cast::<[u8; PAGE_SIZE]>() };
        let mut buffer = Buffer::new(page);
        match show(&this.data, &mut buffer) {
            // A page is far below `isize::MAX`.
            Ok(()) => buffer.len() as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by sysfs with a kobject of type `KTYPE`, one of its attributes
    /// and `count` readable bytes at `buf`.
    unsafe extern "C" fn store(
        kobj: *mut bindings::kobject,
        attr: *mut bindings::attribute,
        buf: *const c_char,
        count: usize,
    ) -> isize {
        // SAFETY: As in `show`.
        let this = unsafe { Self::from_kobj(kobj) };
        // SAFETY: As in `show`.
        let attr = unsafe { Self::attribute(attr) };
        let Some(store) = attr.store else {
            return EIO.to_errno() as isize;
        };
        // SAFETY: sysfs passes `count` readable bytes (at most a page).
        let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
        match store(&this.data, input) {
            // `count` is at most a page.
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by the kobject core once, when the last reference to a kobject
    /// of type `KTYPE` is gone.
    unsafe extern "C" fn release(kobj: *mut bindings::kobject) {
        let kobj = Opaque::cast_from(kobj).cast_mut();
        // SAFETY: The kobject is embedded in an `Inner<T>` allocated by
        // `Dir::new` with `KBox` and leaked there; this is the last user.
        drop(unsafe { KBox::from_raw(container_of!(kobj, Self, kobj)) });
    }
}

/// A sysfs directory that owns a `T` and shows it through [`Attribute<T>`]s.
///
/// Dropping the handle removes the directory (waiting for running `show` and
/// `store` calls to return) and drops the value once the kobject core lets go
/// of it (child directories hold a reference to their parent).
///
/// # Invariants
///
/// `inner` points to an `Inner<T>` whose kobject was added to sysfs, and this
/// handle owns one reference to that kobject.
pub struct Dir<T: Send + Sync> {
    inner: NonNull<Inner<T>>,
}

// SAFETY: The handle only gives out `&T`, and `T: Send + Sync`; the kobject
// functions it calls on drop may run on any thread.
unsafe impl<T: Send + Sync> Send for Dir<T> {}

// SAFETY: `&Dir<T>` only gives out `&T`, and `T: Sync`.
unsafe impl<T: Send + Sync> Sync for Dir<T> {}

impl<T: Send + Sync> Dir<T> {
    /// Creates the directory `name` under `parent` with the given files.
    ///
    /// The files appear at once and may be read before this function returns,
    /// so `data` must be fully usable when passed in.
    pub fn new<E>(
        name: &CStr,
        parent: Parent<'_>,
        data: impl PinInit<T, E>,
        attrs: &'static [&'static Attribute<T>],
    ) -> Result<Self>
    where
        Error: From<E>,
    {
        let boxed: Pin<KBox<Inner<T>>> = KBox::pin_init::<Error>(
            try_pin_init!(Inner {
                kobj: Opaque::zeroed(),
                data <- data,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: The allocation is never moved out of: it is freed in place
        // by `Inner::release`.
        let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(boxed) });
        // SAFETY: `raw` is valid; `kobj` is a field of it.
        let kobj = unsafe { Opaque::cast_into(&raw const (*raw).kobj) };
        let ktype: &'static bindings::kobj_type = &Inner::<T>::KTYPE;
        // SAFETY: `kobj` is zeroed memory as `kobject_init_and_add()` requires,
        // `ktype` is static, `parent` is a live kobject, and the format string
        // consumes exactly one NUL-terminated string argument.
        let ret = unsafe {
            bindings::kobject_init_and_add(
                kobj,
                ktype,
                parent.kobj.as_ptr(),
                c"%s".as_char_ptr(),
                name.as_char_ptr(),
            )
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: `kobject_init_and_add()` initialised the kobject even on
            // failure; dropping the initial reference frees it via `release`.
            unsafe { bindings::kobject_put(kobj) };
            return Err(e);
        }
        // INVARIANT: The kobject is in sysfs and we own its initial reference.
        let dir = Self {
            // SAFETY: `raw` came from `KBox::into_raw`, so it is not NULL.
            inner: unsafe { NonNull::new_unchecked(raw) },
        };
        for attr in attrs {
            // SAFETY: `kobj` is in sysfs; `attr` is `'static` and belongs to
            // `T`, so `Inner::<T>::show/store` may interpret it.
            to_result(unsafe {
                bindings::sysfs_create_file_ns(kobj, attr.attr.get(), core::ptr::null())
            })?;
        }
        Ok(dir)
    }

    /// The value this directory shows.
    pub fn data(&self) -> &T {
        // SAFETY: By the type invariant the allocation lives as long as `self`.
        unsafe { &(*self.inner.as_ptr()).data }
    }

    /// Use this directory as the parent of another one.
    pub fn as_parent(&self) -> Parent<'_> {
        // SAFETY: By the type invariant `inner` is valid.
        let kobj = unsafe { Opaque::cast_into(&raw const (*self.inner.as_ptr()).kobj) };
        Parent {
            // SAFETY: A field of a valid allocation is not NULL.
            kobj: unsafe { NonNull::new_unchecked(kobj) },
            _p: PhantomData,
        }
    }

    fn kobj(&self) -> *mut bindings::kobject {
        self.as_parent().kobj.as_ptr()
    }
}

impl<T: Send + Sync> Drop for Dir<T> {
    fn drop(&mut self) {
        let kobj = self.kobj();
        // SAFETY: By the type invariant the kobject is in sysfs. This removes
        // its files and waits for running `show`/`store` callbacks.
        unsafe { bindings::kobject_del(kobj) };
        // SAFETY: We own a reference (type invariant) and give it up; this
        // frees the allocation unless a child still holds one.
        unsafe { bindings::kobject_put(kobj) };
    }
}

/// The text of a store: the bytes written without one trailing newline.
///
/// Fails with `EINVAL` on empty input, non-UTF-8, or leading/trailing
/// whitespace other than that one newline.
pub fn input_str(input: &[u8]) -> Result<&str> {
    let input = input.strip_suffix(b"\n").unwrap_or(input);
    let s = core::str::from_utf8(input).map_err(|_| EINVAL)?;
    if s.is_empty() || s.trim() != s || s.contains('\0') {
        return Err(EINVAL);
    }
    Ok(s)
}

fn parse_digits(digits: &str, radix: u32) -> Result<u64> {
    if digits.is_empty() {
        return Err(EINVAL);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(EINVAL)?;
        match value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            // Keep scanning: a later bad character is `EINVAL`, not `ERANGE`.
            None => overflow = true,
        }
    }
    if overflow {
        Err(ERANGE)
    } else {
        Ok(value)
    }
}

fn parse_magnitude(s: &str) -> Result<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => parse_digits(hex, 16),
        None => parse_digits(s, 10),
    }
}

/// Parses an unsigned integer, decimal or `0x` hexadecimal, as `kstrtouint()`.
///
/// `EINVAL` when malformed (including a sign), `ERANGE` when it does not fit
/// in `I`.
pub fn parse_uint<I: TryFrom<u64>>(input: &[u8]) -> Result<I> {
    let s = input_str(input)?;
    let s = s.strip_prefix('+').unwrap_or(s);
    I::try_from(parse_magnitude(s)?).map_err(|_| ERANGE)
}

/// Parses a signed integer, decimal or `0x` hexadecimal, as `kstrtoint()`.
///
/// `EINVAL` when malformed, `ERANGE` when it does not fit in `I`.
pub fn parse_int<I: TryFrom<i64>>(input: &[u8]) -> Result<I> {
    let s = input_str(input)?;
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let magnitude = parse_magnitude(digits)?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude).ok_or(ERANGE)?
    } else {
        i64::try_from(magnitude).map_err(|_| ERANGE)?
    };
    I::try_from(value).map_err(|_| ERANGE)
}

/// Parses an unsigned integer that must lie in `range` (`ERANGE` otherwise).
pub fn parse_uint_in<I>(input: &[u8], range: RangeInclusive<I>) -> Result<I>
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

/// Parses a boolean as `kstrtobool()`: `1 y Y on` or `0 n N off`.
pub fn parse_bool(input: &[u8]) -> Result<bool> {
    match input_str(input)? {
        "1" | "y" | "Y" | "on" | "On" | "ON" => Ok(true),
        "0" | "n" | "N" | "off" | "Off" | "OFF" => Ok(false),
        _ => Err(EINVAL),
    }
}

/// Finds the written text in a list of choices and returns its index, as
/// `sysfs_match_string()`. `EINVAL` if it is not one of them.
pub fn match_choice<S: AsRef<str>>(input: &[u8], choices: &[S]) -> Result<usize> {
    let s = input_str(input)?;
    choices.iter().position(|c| c.as_ref() == s).ok_or(EINVAL)
}

#[macros::kunit_tests(rust_kernel_sysfs)]
mod tests {
    use super::*;

    #[test]
    fn input_is_strict() {
        assert_eq!(input_str(b"abc\n"), Ok("abc"));
        assert_eq!(input_str(b"abc"), Ok("abc"));
        assert_eq!(input_str(b""), Err(EINVAL));
        assert_eq!(input_str(b"\n"), Err(EINVAL));
        assert_eq!(input_str(b"abc\n\n"), Err(EINVAL));
        assert_eq!(input_str(b" abc"), Err(EINVAL));
        assert_eq!(input_str(b"a\0"), Err(EINVAL));
        assert_eq!(input_str(&[0xff]), Err(EINVAL));
    }

    #[test]
    fn unsigned_integers() {
        assert_eq!(parse_uint::<u32>(b"42\n"), Ok(42));
        assert_eq!(parse_uint::<u32>(b"0x2a"), Ok(42));
        assert_eq!(parse_uint::<u32>(b"+7"), Ok(7));
        assert_eq!(parse_uint::<u8>(b"256"), Err(ERANGE));
        assert_eq!(parse_uint::<u64>(b"18446744073709551616"), Err(ERANGE));
        assert_eq!(parse_uint::<u64>(b"99999999999999999999x"), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(b"-1"), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(b"1 2"), Err(EINVAL));
        assert_eq!(parse_uint::<u32>(b"0x"), Err(EINVAL));
        assert_eq!(parse_uint_in::<u32>(b"5", 1..=4), Err(ERANGE));
        assert_eq!(parse_uint_in::<u32>(b"4", 1..=4), Ok(4));
    }

    #[test]
    fn signed_integers() {
        assert_eq!(parse_int::<i32>(b"-42\n"), Ok(-42));
        assert_eq!(parse_int::<i8>(b"-128"), Ok(-128));
        assert_eq!(parse_int::<i8>(b"-129"), Err(ERANGE));
        assert_eq!(parse_int::<i64>(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_int::<i64>(b"9223372036854775808"), Err(ERANGE));
        assert_eq!(parse_int::<i32>(b"--1"), Err(EINVAL));
    }

    #[test]
    fn booleans_and_choices() {
        assert_eq!(parse_bool(b"on\n"), Ok(true));
        assert_eq!(parse_bool(b"0"), Ok(false));
        assert_eq!(parse_bool(b"yes"), Err(EINVAL));
        assert_eq!(match_choice(b"sfq\n", &["tbs", "vmcg", "sfq"]), Ok(2));
        assert_eq!(match_choice(b"SFQ", &["tbs", "vmcg", "sfq"]), Err(EINVAL));
    }

    #[test]
    fn buffer_formats_and_refuses_overflow() -> Result {
        let mut page = KBox::new([0u8; PAGE_SIZE], GFP_KERNEL)?;
        let mut buf = Buffer::new(&mut page);
        buf.emit_choices(&["tbs", "vmcg", "sfq"], 1)?;
        assert_eq!(buf.as_bytes(), b"tbs [vmcg] sfq\n");
        let long = [b'x'; PAGE_SIZE];
        let long = core::str::from_utf8(&long).map_err(|_| EINVAL)?;
        assert_eq!(buf.emit(fmt!("{long}")), Err(EFBIG));
        Ok(())
    }
}
