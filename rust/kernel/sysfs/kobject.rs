// SPDX-License-Identifier: GPL-2.0

//! sysfs directories backed by a kobject of their own.
//!
//! Per-device files do not belong here: they are attribute groups of the
//! device ([`super::AttributeGroup`], installed through the driver's
//! `dev_groups`), which the driver core creates before user space hears of
//! the bound device. This module serves what has no device yet, such as
//! `/sys/kernel/<module>/`.
//!
//! A [`Dir<T>`] is a directory in sysfs backed by a `struct kobject` that owns a
//! value of type `T`. Its files are the [`Attribute<T>`]s of a static
//! [`AttributeGroup<T, N>`], the directory's default group: the kobject core
//! creates them together with the directory (`kobj_type.default_groups`), so
//! they exist before user space hears of it (`KOBJ_ADD`).
//!
//! Every attribute carries a `T::Knob`, a value that says what the file is
//! (which setting or statistic, its unit, its range). `T` implements
//! [`AttributeOperations`]: one `show` and one `store` for all its files, which
//! dispatch on the knob, so that a directory is described by one table.
//! Because they receive a shared reference and may run concurrently on several
//! CPUs, `T` must be [`Sync`]: mutable state goes behind a lock or in atomics.
//! Stores parse with the helpers of [`super`].
//!
//! C header: [`include/linux/kobject.h`](srctree/include/linux/kobject.h)
//!
//! # Examples
//!
//! ```ignore
//! use core::sync::atomic::{AtomicU32, Ordering};
//! use kernel::sysfs::{
//!     self,
//!     kobject::{
//!         Attribute,
//!         AttributeGroup,
//!         AttributeOperations,
//!         Buffer,
//!         Dir,
//!         Parent, //
//!     },
//!     Input, //
//! };
//!
//! struct Knobs {
//!     level: AtomicU32,
//! }
//!
//! enum Knob {
//!     Level,
//!     Double,
//! }
//!
//! impl AttributeOperations for Knobs {
//!     type Knob = Knob;
//!
//!     fn show(&self, knob: &Knob, buf: &mut Buffer<'_>) -> Result {
//!         let level = self.level.load(Ordering::Relaxed);
//!         match knob {
//!             Knob::Level => buf.emit(fmt!("{level}\n")),
//!             Knob::Double => buf.emit(fmt!("{}\n", 2 * level)),
//!         }
//!     }
//!
//!     fn store(&self, _knob: &Knob, input: &Input<'_>) -> Result {
//!         // Only `level` is writable.
//!         let v = sysfs::parse_uint_in::<u32>(input, 0..=10)?;
//!         self.level.store(v, Ordering::Relaxed);
//!         Ok(())
//!     }
//! }
//!
//! // The group names itself so that its C structures can point at each other.
//! static KNOBS: AttributeGroup<Knobs, 2> = AttributeGroup::new(
//!     &KNOBS,
//!     [
//!         Attribute::read_write(c"level", Knob::Level),
//!         Attribute::read_only(c"double", Knob::Double),
//!     ],
//! );
//!
//! // Creates /sys/kernel/knobs/{level,double}.
//! let knobs = Knobs {
//!     level: AtomicU32::new(0),
//! };
//! let dir = Dir::new(c"knobs", Parent::kernel()?, knobs, &KNOBS)?;
//! ```

use super::Input;
use crate::{
    alloc::{
        flags::GFP_KERNEL,
        KBox, //
    },
    bindings,
    container_of,
    error::{
        to_result,
        Error,
        Result, //
    },
    ffi::c_char,
    fmt,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    types::Opaque, //
};
use core::{
    marker::PhantomData,
    pin::Pin,
    ptr::NonNull, //
};

/// How the value of a [`Dir`] shows and stores its files.
///
/// One implementation serves every file of the directory: each [`Attribute`]
/// carries a [`Knob`](AttributeOperations::Knob) that says which file it is,
/// and both functions dispatch on it.
pub trait AttributeOperations: Send + Sync + Sized {
    /// What an attribute says about its file: which setting or statistic it
    /// shows, its unit, its range.
    type Knob: Sync;

    /// Writes the contents of the file `knob` into `buf`; an error is returned
    /// to the reader. Called only for readable attributes.
    fn show(&self, knob: &Self::Knob, buf: &mut Buffer<'_>) -> Result;

    /// Applies what was written to the file `knob`; an error is returned to
    /// the writer and must leave the state unchanged. Called only for
    /// writable attributes; the default refuses with `EIO`.
    fn store(&self, _knob: &Self::Knob, _input: &Input<'_>) -> Result {
        Err(EIO)
    }
}

/// A file of a [`Dir<T>`]: its name, its mode and the knob `T` dispatches on.
///
/// Attributes live in an [`AttributeGroup`] declared as a `static`: sysfs keeps
/// pointers to them while the files exist, and lockdep requires their lock
/// class key to be in static storage.
///
/// # Invariants
///
/// `attr` is a valid `struct attribute` whose `name` points to a `'static`
/// NUL-terminated string; `readable` and `writable` say what its mode allows.
#[repr(C)]
pub struct Attribute<T: AttributeOperations> {
    attr: Opaque<bindings::attribute>,
    readable: bool,
    writable: bool,
    knob: T::Knob,
}

// SAFETY: sysfs only reads the `Opaque` part, and Rust code never accesses it
// after construction; the knob is `Sync`.
unsafe impl<T: AttributeOperations> Sync for Attribute<T> {}

impl<T: AttributeOperations> Attribute<T> {
    /// A file with the permissions `mode`; the constructors below name the
    /// usual ones.
    pub const fn new(name: &'static CStr, mode: u16, knob: T::Knob) -> Self {
        // The fields other than `name` and `mode` exist only with
        // CONFIG_DEBUG_LOCK_ALLOC (lockdep's key and static key) and are valid
        // zeroed: a NULL key makes sysfs use the static key. Starting from a
        // zeroed value and assigning the two fields builds the same attribute
        // in both configurations.
        let mut attr: bindings::attribute = pin_init::zeroed();
        attr.name = crate::str::as_char_ptr_in_const_context(name);
        attr.mode = mode;
        // INVARIANT: `name` is `'static` and NUL-terminated; the flags are
        // read from the mode.
        Self {
            attr: Opaque::new(attr),
            readable: mode & 0o444 != 0,
            writable: mode & 0o222 != 0,
            knob,
        }
    }

    /// A file readable by everyone (mode 0444).
    pub const fn read_only(name: &'static CStr, knob: T::Knob) -> Self {
        Self::new(name, 0o444, knob)
    }

    /// A file only root may read (mode 0400, C's `DEVICE_ATTR_ADMIN_RO`),
    /// for what other users must not see.
    pub const fn admin_read_only(name: &'static CStr, knob: T::Knob) -> Self {
        Self::new(name, 0o400, knob)
    }

    /// A file readable by everyone and writable by root (mode 0644).
    pub const fn read_write(name: &'static CStr, knob: T::Knob) -> Self {
        Self::new(name, 0o644, knob)
    }

    /// A file only root may write and nobody may read (mode 0200), for actions.
    pub const fn write_only(name: &'static CStr, knob: T::Knob) -> Self {
        Self::new(name, 0o200, knob)
    }

    /// The knob this file shows.
    pub fn knob(&self) -> &T::Knob {
        &self.knob
    }

    /// # Safety
    ///
    /// `attr` must be the `attr` field of an `Attribute<T>` that lives for `'a`.
    unsafe fn from_raw<'a>(attr: *mut bindings::attribute) -> &'a Self {
        let attr = Opaque::cast_from(attr).cast_mut();
        // SAFETY: By the safety requirements, `attr` is embedded in an
        // `Attribute<T>` that lives for `'a`.
        unsafe { &*container_of!(attr, Self, attr) }
    }
}

/// The NULL-terminated pointer array of `attribute_group.attrs`.
#[repr(C)]
struct AttributePointers<const N: usize> {
    attrs: [*mut bindings::attribute; N],
    // `repr(C)` places the terminator right after the array.
    end: *mut bindings::attribute,
}

/// A static table of attributes: a `struct attribute_group` and the
/// `struct kobj_type` of the directories that have it as default group.
///
/// A group names itself in its initializer, so that the C structures it holds
/// can point at each other:
///
/// ```ignore
/// static FILES: AttributeGroup<Knobs, 2> = AttributeGroup::new(
///     &FILES,
///     [
///         Attribute::read_write(c"level", Knob::Level),
///         Attribute::read_only(c"double", Knob::Double),
///     ],
/// );
/// ```
///
/// # Invariants
///
/// `ptrs` points to the `attr` of every element of `files` and ends with NULL;
/// `group` is an attribute group whose `attrs` is `ptrs`; `groups` is `group`
/// followed by NULL; `ktype` releases with `release_allocation`, has `ops`
/// (`Inner::<T>::show` and `store`) and `groups` as its default groups. All of
/// these belong to the same `'static` `AttributeGroup<T, N>`, which need not
/// be `self` (see [`AttributeGroup::new`]).
#[repr(C)]
pub struct AttributeGroup<T: AttributeOperations, const N: usize> {
    files: [Attribute<T>; N],
    ptrs: AttributePointers<N>,
    group: Opaque<bindings::attribute_group>,
    groups: [*const bindings::attribute_group; 2],
    ops: bindings::sysfs_ops,
    ktype: Opaque<bindings::kobj_type>,
}

// SAFETY: The raw pointers point to `'static` data that nothing writes after
// initialisation; the attributes are `Sync`.
unsafe impl<T: AttributeOperations, const N: usize> Sync for AttributeGroup<T, N> {}

impl<T: AttributeOperations, const N: usize> AttributeGroup<T, N> {
    /// The default group of a directory: the files appear in the directory.
    ///
    /// `this` is the `static` being initialised. Passing another group of the
    /// same type makes a group that shows that one's files.
    pub const fn new(this: &'static Self, files: [Attribute<T>; N]) -> Self {
        Self::build(this, core::ptr::null(), files)
    }

    /// A named group: the files appear in the subdirectory `name`, as with a
    /// named group in a device's `dev_groups`. `this` as for
    /// [`AttributeGroup::new`].
    pub const fn named(this: &'static Self, name: &'static CStr, files: [Attribute<T>; N]) -> Self {
        Self::build(this, crate::str::as_char_ptr_in_const_context(name), files)
    }

    const fn build(this: &'static Self, name: *const c_char, files: [Attribute<T>; N]) -> Self {
        // Only addresses of `this` are taken: it may be the static being
        // initialised, which cannot be read yet.
        let mut attrs = [core::ptr::null_mut(); N];
        let mut i = 0;
        while i < N {
            attrs[i] = this.files[i].attr.get();
            i += 1;
        }
        let mut group: bindings::attribute_group = pin_init::zeroed();
        group.name = name;
        group.__bindgen_anon_2.attrs = (&raw const this.ptrs)
            .cast::<*mut bindings::attribute>()
            .cast_mut();
        let mut ktype: bindings::kobj_type = pin_init::zeroed();
        // Unused: a `Dir` switches its kobject to `RELEASED` before it lets go.
        ktype.release = Some(release_allocation);
        ktype.sysfs_ops = &raw const this.ops;
        ktype.default_groups = (&raw const this.groups)
            .cast::<*const bindings::attribute_group>()
            .cast_mut();
        // INVARIANT: Every pointer above leads into `this`, a `'static` group
        // of this type built by this function.
        Self {
            files,
            ptrs: AttributePointers {
                attrs,
                end: core::ptr::null_mut(),
            },
            group: Opaque::new(group),
            groups: [this.group.get().cast_const(), core::ptr::null()],
            ops: bindings::sysfs_ops {
                show: Some(Inner::<T>::show),
                store: Some(Inner::<T>::store),
            },
            ktype: Opaque::new(ktype),
        }
    }

    /// The attributes of this group.
    pub fn files(&self) -> &[Attribute<T>; N] {
        &self.files
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
        super::write_choices(self, choices, current)
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
/// `kobj` is initialised with the `ktype` of an `AttributeGroup<T, _>` once
/// [`Dir::new`] called `kobject_init_and_add()`; from then on the allocation is
/// freed by `release_allocation` when the last reference to `kobj` is dropped,
/// which [`Inner::let_go`] lets happen after it dropped `data`.
#[repr(C)]
#[pin_data]
struct Inner<T> {
    #[pin]
    kobj: Opaque<bindings::kobject>,
    #[pin]
    data: T,
}

impl<T: AttributeOperations> Inner<T> {
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
    /// Called by sysfs with a kobject whose type is the `ktype` of an
    /// `AttributeGroup<T, _>`, one of that group's attributes and a page-sized
    /// buffer.
    unsafe extern "C" fn show(
        kobj: *mut bindings::kobject,
        attr: *mut bindings::attribute,
        buf: *mut c_char,
    ) -> isize {
        // SAFETY: Only kobjects of such a type reach this function, and
        // `Dir::new` embeds them all in an `Inner<T>`.
        let this = unsafe { Self::from_kobj(kobj) };
        // SAFETY: The type's only group holds `Attribute<T>`s, in a static.
        let attr = unsafe { Attribute::<T>::from_raw(attr) };
        if !attr.readable {
            return EIO.to_errno() as isize;
        }
        // SAFETY: sysfs passes a zeroed buffer of `PAGE_SIZE` bytes that nobody
        // else accesses during the call.
        let page = unsafe { &mut *buf.cast::<[u8; PAGE_SIZE]>() };
        let mut buffer = Buffer::new(page);
        match this.data.show(&attr.knob, &mut buffer) {
            // A page is far below `isize::MAX`.
            Ok(()) => buffer.len() as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// # Safety
    ///
    /// Called by sysfs as `show`, with `count` readable bytes at `buf`
    /// followed by a NUL byte.
    unsafe extern "C" fn store(
        kobj: *mut bindings::kobject,
        attr: *mut bindings::attribute,
        buf: *const c_char,
        count: usize,
    ) -> isize {
        // SAFETY: As in `show`.
        let this = unsafe { Self::from_kobj(kobj) };
        // SAFETY: As in `show`.
        let attr = unsafe { Attribute::<T>::from_raw(attr) };
        if !attr.writable {
            return EIO.to_errno() as isize;
        }
        // SAFETY: sysfs passes `count` bytes (at most a page) and a NUL after
        // them (`kernfs_fop_write_iter()` allocates one more byte for it).
        let input = unsafe { Input::from_raw(buf, count) };
        match this.data.store(&attr.knob, &input) {
            // `count` is at most a page.
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    /// Drops the value and gives up the caller's reference to the kobject,
    /// which from then on has the type [`RELEASED`]: whatever holds it
    /// afterwards (a child directory, a release that
    /// `CONFIG_DEBUG_KOBJECT_RELEASE` delays) reaches no code or data of the
    /// module that made it, which may be gone by then.
    ///
    /// # Safety
    ///
    /// `this` is an `Inner<T>` made by [`Dir::new`], whose kobject is
    /// initialised and not in sysfs (so no `show` or `store` runs on it);
    /// nothing uses `data` any more; the caller owns a reference to the
    /// kobject, which it gives up.
    unsafe fn let_go(this: *mut Self) {
        // SAFETY: `data` is initialised and nothing uses it any more.
        unsafe { core::ptr::drop_in_place(&raw mut (*this).data) };
        // SAFETY: `this` is valid; `kobj` is a field of it.
        let kobj = unsafe { Opaque::cast_into(&raw const (*this).kobj) };
        // SAFETY: The kobject is initialised and we hold a reference to it.
        // Outside sysfs, the kobject core reads its type only in the release
        // that follows the last reference, which our `kobject_put()` orders
        // after this write.
        unsafe { (*kobj).ktype = &RELEASED.0 };
        // INVARIANT: The allocation is freed by `release_allocation`, which
        // does not drop `data` a second time.
        // SAFETY: We own a reference and give it up.
        unsafe { bindings::kobject_put(kobj) };
    }
}

/// The type of a kobject of a [`Dir`] once the handle let go of it
/// ([`Inner::let_go`]): it only frees the allocation. Built into the kernel,
/// not generic, unlike the types of the attribute groups.
static RELEASED: ReleasedType = ReleasedType({
    let mut ktype: bindings::kobj_type = pin_init::zeroed();
    ktype.release = Some(release_allocation);
    ktype
});

/// A `kobj_type` in a `static`.
#[repr(transparent)]
struct ReleasedType(bindings::kobj_type);

// SAFETY: Nothing writes it, and it points only to a function.
unsafe impl Sync for ReleasedType {}

/// `kobj_type::release` of [`RELEASED`]: frees the allocation of an `Inner<_>`
/// whose value was dropped. Not generic, so built into the kernel.
///
/// # Safety
///
/// Called by the kobject core once, when the last reference to a kobject of
/// an `Inner<_>` made by [`Dir::new`] is gone, after [`Inner::let_go`] dropped
/// its value.
#[inline(never)]
unsafe extern "C" fn release_allocation(kobj: *mut bindings::kobject) {
    // SAFETY: The kobject is the first field of the `Inner<_>` (`repr(C)`),
    // which `KBox` allocated with `kmalloc()`; it has nothing left to drop, and
    // this is its last user.
    unsafe { bindings::kfree(kobj.cast()) };
}

/// A sysfs directory that owns a `T` and shows it through the files of an
/// [`AttributeGroup<T, N>`].
///
/// Dropping the handle removes the directory (waiting for running `show` and
/// `store` calls to return) and drops the value. The kobject may live on (a
/// child directory holds a reference to its parent), but nothing of it leads
/// back into the module that made it, which may be unloaded meanwhile.
///
/// # Invariants
///
/// `inner` points to an `Inner<T>` whose kobject was added to sysfs, and this
/// handle owns one reference to that kobject.
pub struct Dir<T: AttributeOperations> {
    inner: NonNull<Inner<T>>,
}

// SAFETY: The handle only gives out `&T`, and `T: Send + Sync`; the kobject
// functions it calls on drop may run on any thread.
unsafe impl<T: AttributeOperations> Send for Dir<T> {}

// SAFETY: `&Dir<T>` only gives out `&T`, and `T: Sync`.
unsafe impl<T: AttributeOperations> Sync for Dir<T> {}

impl<T: AttributeOperations> Dir<T> {
    /// Creates the directory `name` under `parent` with the files of `files`.
    ///
    /// The kobject core creates the files with the directory, before the
    /// `KOBJ_ADD` uevent, and they may be read before this function returns,
    /// so `data` must be fully usable when passed in.
    pub fn new<E, const N: usize>(
        name: &CStr,
        parent: Parent<'_>,
        data: impl PinInit<T, E>,
        files: &'static AttributeGroup<T, N>,
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
        // by `release_allocation`.
        let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(boxed) });
        // SAFETY: `raw` is valid; `kobj` is a field of it.
        let kobj = unsafe { Opaque::cast_into(&raw const (*raw).kobj) };
        // By the invariants of `AttributeGroup`, the static type's callbacks
        // and default group are those of `Inner<T>` and `Attribute<T>`s.
        // SAFETY: `kobj` is zeroed as `kobject_init_and_add()` requires, the
        // type is static and matches (above), `parent` is a live kobject, and
        // "%s" consumes exactly one NUL-terminated string argument.
        let ret = unsafe {
            bindings::kobject_init_and_add(
                kobj,
                files.ktype.get(),
                parent.kobj.as_ptr(),
                c"%s".as_char_ptr(),
                name.as_char_ptr(),
            )
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: `kobject_init_and_add()` initialised the kobject even on
            // failure, outside sysfs; nothing else has `data`; we own the
            // initial reference.
            unsafe { Inner::let_go(raw) };
            return Err(e);
        }
        // The files exist now: announce the directory. Outside a kset (as
        // under /sys/kernel) or under a device, whose kset filters out other
        // kobjects, no event goes out, which is not an error of the directory.
        // SAFETY: `kobj` is in sysfs.
        unsafe { bindings::kobject_uevent(kobj, bindings::kobject_action_KOBJ_ADD) };
        // INVARIANT: The kobject is in sysfs and we own its initial reference.
        Ok(Self {
            // SAFETY: `raw` came from `KBox::into_raw`, so it is not NULL.
            inner: unsafe { NonNull::new_unchecked(raw) },
        })
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

impl<T: AttributeOperations> Drop for Dir<T> {
    fn drop(&mut self) {
        let kobj = self.kobj();
        // SAFETY: By the type invariant the kobject is in sysfs. This removes
        // its files and waits for running `show`/`store` callbacks.
        unsafe { bindings::kobject_del(kobj) };
        // SAFETY: The kobject left sysfs above; only this handle gives out
        // `data`, and it goes; we own a reference (type invariant).
        unsafe { Inner::let_go(self.inner.as_ptr()) };
    }
}

#[macros::kunit_tests(rust_kernel_sysfs_kobject)]
mod tests {
    use super::*;
    use crate::sysfs::parse_uint_in;
    use core::sync::atomic::{
        AtomicU32,
        Ordering, //
    };

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

    struct Knobs {
        level: AtomicU32,
    }

    enum Knob {
        Level,
        Double,
    }

    impl AttributeOperations for Knobs {
        type Knob = Knob;

        fn show(&self, knob: &Knob, buf: &mut Buffer<'_>) -> Result {
            let level = self.level.load(Ordering::Relaxed);
            match knob {
                Knob::Level => buf.emit(fmt!("{level}\n")),
                Knob::Double => buf.emit(fmt!("{}\n", 2 * level)),
            }
        }

        fn store(&self, _knob: &Knob, input: &Input<'_>) -> Result {
            let v = parse_uint_in::<u32>(input, 0..=10)?;
            self.level.store(v, Ordering::Relaxed);
            Ok(())
        }
    }

    static FILES: AttributeGroup<Knobs, 2> = AttributeGroup::new(
        &FILES,
        [
            Attribute::read_write(c"level", Knob::Level),
            Attribute::read_only(c"double", Knob::Double),
        ],
    );

    static NAMED: AttributeGroup<Knobs, 1> = AttributeGroup::named(
        &NAMED,
        c"sub",
        [Attribute::read_only(c"double", Knob::Double)],
    );

    /// Whether `parent` (a kobject's directory) has an entry `name`.
    ///
    /// # Safety
    ///
    /// `parent` must be a live kernfs node.
    unsafe fn has_entry(parent: *mut bindings::kernfs_node, name: &CStr) -> bool {
        // SAFETY: `parent` is live; `name` is NUL-terminated; no namespace.
        let kn = unsafe {
            bindings::kernfs_find_and_get_ns(parent, name.as_char_ptr(), core::ptr::null())
        };
        if kn.is_null() {
            return false;
        }
        // SAFETY: `kernfs_find_and_get_ns()` took a reference for us.
        unsafe { bindings::kernfs_put(kn) };
        true
    }

    /// Reads `attr` of `dir` through the directory's sysfs operations.
    fn read(dir: &Dir<Knobs>, attr: &Attribute<Knobs>, page: &mut [u8; PAGE_SIZE]) -> isize {
        page.fill(0);
        // SAFETY: `dir` is a live directory of `Knobs`, `attr` one of its
        // attributes, `page` a page nobody else uses.
        unsafe { Inner::<Knobs>::show(dir.kobj(), attr.attr.get(), page.as_mut_ptr().cast()) }
    }

    /// Writes `input` to `attr` of `dir` through its sysfs operations.
    fn write(dir: &Dir<Knobs>, attr: &Attribute<Knobs>, input: &CStr) -> isize {
        let count = input.to_bytes().len();
        // SAFETY: As in `read`; `input` has `count` bytes and a NUL after them.
        unsafe { Inner::<Knobs>::store(dir.kobj(), attr.attr.get(), input.as_char_ptr(), count) }
    }

    #[test]
    fn group_table_is_terminated() {
        assert_eq!(FILES.ptrs.attrs[0], FILES.files[0].attr.get());
        assert_eq!(FILES.ptrs.attrs[1], FILES.files[1].attr.get());
        assert!(FILES.ptrs.end.is_null());
        assert!(FILES.groups[1].is_null());
    }

    #[test]
    fn files_exist_with_the_directory_and_dispatch_on_their_knob() -> Result {
        let knobs = Knobs {
            level: AtomicU32::new(3),
        };
        let dir = Dir::new(c"rust_kernel_sysfs", Parent::kernel()?, knobs, &FILES)?;
        // SAFETY: `dir` keeps its kobject, and so its kernfs node, alive.
        let sd = unsafe { (*dir.kobj()).sd };
        // SAFETY: `sd` is live.
        assert!(unsafe { has_entry(sd, c"level") && has_entry(sd, c"double") });

        let mut page = KBox::new([0u8; PAGE_SIZE], GFP_KERNEL)?;
        let [level, double] = FILES.files();
        assert_eq!(read(&dir, level, &mut page), 2);
        assert_eq!(&page[..2], b"3\n");
        assert_eq!(write(&dir, level, c"7\n"), 2);
        assert_eq!(read(&dir, double, &mut page), 3);
        assert_eq!(&page[..3], b"14\n");
        assert_eq!(write(&dir, level, c"11"), ERANGE.to_errno() as isize);
        assert_eq!(write(&dir, level, c"x"), EINVAL.to_errno() as isize);
        assert_eq!(write(&dir, double, c"1"), EIO.to_errno() as isize);
        assert_eq!(dir.data().level.load(Ordering::Relaxed), 7);

        let sub = Dir::new(
            c"named",
            dir.as_parent(),
            Knobs {
                level: AtomicU32::new(1),
            },
            &NAMED,
        )?;
        // SAFETY: `sub` keeps its kobject alive.
        let sd = unsafe { (*sub.kobj()).sd };
        // SAFETY: `sd` is live.
        assert!(unsafe { has_entry(sd, c"sub") && !has_entry(sd, c"double") });
        Ok(())
    }
}
