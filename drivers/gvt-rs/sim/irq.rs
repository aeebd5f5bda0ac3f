// SPDX-License-Identifier: GPL-2.0

//! Interrupts with vfio-pci's semantics.
//!
//! QEMU drives a vGPU's interrupts exactly as it drives a vfio-pci device,
//! so every `VFIO_DEVICE_SET_IRQS` call is validated and acted on as
//! `drivers/vfio/pci/vfio_pci_intrs.c` does: one interrupt type at a time;
//! INTx is level triggered, masked automatically when it fires and unmasked
//! by user space (it fires again at unmask while the device still asserts
//! it); MSI has one vector; REQ carries device-removal requests. The device
//! model only reports its INTx level and MSI events ([`Irqs::signal`]).

use core::mem;
use kernel::{
    device::Device,
    eventfd::EventFd,
    new_mutex,
    new_spinlock_irq,
    prelude::*,
    sync::{
        Mutex,
        SpinLockIrq, //
    },
    vfio::{
        pci::IrqIndex,
        IrqAction,
        IrqData,
        IrqInfo,
        IrqSet, //
    }, //
};

/// The interrupt type user space enabled, as vfio-pci's `irq_type`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IrqType {
    None,
    Intx,
    Msi,
}

/// A trigger slot of the ERR or REQ index.
#[derive(Clone, Copy)]
enum Single {
    Err,
    Req,
}

/// Interrupt state, under [`Irqs::state`].
struct State {
    ty: IrqType,
    intx_trigger: Option<EventFd>,
    msi_trigger: Option<EventFd>,
    err_trigger: Option<EventFd>,
    req_trigger: Option<EventFd>,
    /// The device asserts INTx.
    intx_level: bool,
    /// Auto-masked or masked by user space.
    intx_masked: bool,
}

impl State {
    /// Fires INTx if the device asserts it and it is not masked; masks it.
    fn intx_fire(&mut self) {
        if self.ty != IrqType::Intx || !self.intx_level || self.intx_masked {
            return;
        }
        self.intx_masked = true;
        if let Some(t) = &self.intx_trigger {
            t.signal();
        }
    }

    fn single(&mut self, which: Single) -> &mut Option<EventFd> {
        match which {
            Single::Err => &mut self.err_trigger,
            Single::Req => &mut self.req_trigger,
        }
    }
}

/// The interrupts of one vGPU.
#[pin_data]
pub(super) struct Irqs {
    /// Serialises `VFIO_DEVICE_SET_IRQS` (vfio-pci's `igate`): the type
    /// changes only under it.
    #[pin]
    igate: Mutex<()>,
    /// Taken by the device model under its register lock.
    #[pin]
    state: SpinLockIrq<State>,
}

/// Vectors per index, as `vfio_pci_get_irq_count()` gives for our device:
/// the interrupt pin INTA, one MSI vector, ERR (never signalled: no AER
/// here) and REQ; no MSI-X.
fn irq_count(index: IrqIndex) -> u32 {
    match index {
        IrqIndex::Intx | IrqIndex::Msi | IrqIndex::Err | IrqIndex::Req => 1,
        IrqIndex::Msix => 0,
    }
}

/// `VFIO_DEVICE_GET_IRQ_INFO` of `index`: INTx is maskable and masks
/// itself when it fires; the others have their vectors enabled at once.
pub(super) fn info(index: u32) -> Result<IrqInfo> {
    let index = IrqIndex::from_raw(index).ok_or(EINVAL)?;
    let intx = index == IrqIndex::Intx;
    Ok(IrqInfo {
        eventfd: true,
        maskable: intx,
        automasked: intx,
        noresize: !intx,
        count: irq_count(index),
    })
}

/// An eventfd context from a user fd: `None` for `fd < 0`.
fn fdget(fd: i32) -> Result<Option<EventFd>> {
    if fd < 0 {
        return Ok(None);
    }
    EventFd::from_fd(fd).map(Some)
}

/// The eventfd of the first vector of `set` (`count` is at least 1).
fn fd_of(set: &IrqSet) -> Result<i32> {
    set.fd_at(0).ok_or(EINVAL)
}

/// The boolean of the first vector of `set` (`count` is at least 1).
fn bool_of(set: &IrqSet) -> bool {
    set.bool_at(0).unwrap_or(false)
}

impl Irqs {
    pub(super) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            igate <- new_mutex!((), "gvt_rs_sim_igate"),
            state <- new_spinlock_irq!(State {
                ty: IrqType::None,
                intx_trigger: None,
                msi_trigger: None,
                err_trigger: None,
                req_trigger: None,
                intx_level: false,
                intx_masked: false,
            }, "gvt_rs_sim_irq"),
        })
    }

    /// Reports the INTx level and, with `edge`, an MSI to send.
    pub(super) fn signal(&self, level: bool, edge: bool) {
        let mut s = self.state.lock();
        s.intx_level = level;
        if s.ty == IrqType::Msi {
            if edge {
                if let Some(t) = &s.msi_trigger {
                    t.signal();
                }
            }
        } else {
            s.intx_fire();
        }
    }

    fn ty(&self) -> IrqType {
        self.state.lock().ty
    }

    /// Switches to interrupt type `ty` with `trigger`; the old contexts are
    /// released outside the lock.
    fn set_type(&self, ty: IrqType, trigger: Option<EventFd>) {
        let old = {
            let mut s = self.state.lock();
            let old = (s.intx_trigger.take(), s.msi_trigger.take());
            match ty {
                IrqType::Intx => s.intx_trigger = trigger,
                IrqType::Msi => s.msi_trigger = trigger,
                IrqType::None => drop(trigger),
            }
            s.ty = ty;
            s.intx_masked = false;
            // A level already asserted fires as soon as INTx is enabled.
            s.intx_fire();
            old
        };
        drop(old);
    }

    fn swap_intx(&self, ctx: Option<EventFd>) -> Option<EventFd> {
        mem::replace(&mut self.state.lock().intx_trigger, ctx)
    }

    fn swap_msi(&self, ctx: Option<EventFd>) -> Option<EventFd> {
        mem::replace(&mut self.state.lock().msi_trigger, ctx)
    }

    fn swap_single(&self, which: Single, ctx: Option<EventFd>) -> Option<EventFd> {
        mem::replace(self.state.lock().single(which), ctx)
    }

    fn intx_mask(&self, set: &IrqSet, mask: bool) -> Result {
        if self.ty() != IrqType::Intx || set.start != 0 || set.count != 1 {
            return Err(EINVAL);
        }
        if set.data_type == IrqData::Eventfd {
            // As vfio-pci: no irqfd (un)masking here.
            return Err(ENOTTY);
        }
        if set.data_type == IrqData::Bool && !bool_of(set) {
            return Ok(());
        }
        let mut s = self.state.lock();
        if mask {
            s.intx_masked = true;
        } else if s.intx_masked {
            s.intx_masked = false;
            // Still asserted: it fires again (and masks) at once.
            s.intx_fire();
        }
        Ok(())
    }

    fn intx_trigger(&self, set: &IrqSet) -> Result {
        let ty = self.ty();
        let intx = ty == IrqType::Intx;
        if intx && set.count == 0 && set.data_type == IrqData::None {
            self.set_type(IrqType::None, None);
            return Ok(());
        }
        if !(intx || ty == IrqType::None) || set.start != 0 || set.count != 1 {
            return Err(EINVAL);
        }
        if set.data_type == IrqData::Eventfd {
            let ctx = fdget(fd_of(set)?)?;
            if intx {
                drop(self.swap_intx(ctx));
            } else {
                self.set_type(IrqType::Intx, ctx);
            }
            return Ok(());
        }
        if !intx {
            return Err(EINVAL);
        }
        // DATA_NONE and DATA_BOOL: loopback test, no masking.
        if set.data_type == IrqData::None || bool_of(set) {
            if let Some(t) = &self.state.lock().intx_trigger {
                t.signal();
            }
        }
        Ok(())
    }

    fn msi_trigger(&self, set: &IrqSet) -> Result {
        let ty = self.ty();
        let msi = ty == IrqType::Msi;
        if msi && set.count == 0 && set.data_type == IrqData::None {
            self.set_type(IrqType::None, None);
            return Ok(());
        }
        if !(msi || ty == IrqType::None) {
            return Err(EINVAL);
        }
        if set.data_type == IrqData::Eventfd {
            // Enabling no vector fails as pci_alloc_irq_vectors() does.
            if !msi && set.start.wrapping_add(set.count) == 0 {
                return Err(ERANGE);
            }
            if set.count == 0 {
                return Ok(());
            }
            let ctx = match fdget(fd_of(set)?) {
                Ok(ctx) => ctx,
                Err(e) => {
                    // vfio-pci frees the vector before it looks the fd up,
                    // and leaves a type it just enabled disabled.
                    if msi {
                        drop(self.swap_msi(None));
                    }
                    return Err(e);
                }
            };
            if msi {
                drop(self.swap_msi(ctx));
            } else {
                self.set_type(IrqType::Msi, ctx);
            }
            return Ok(());
        }
        if !msi {
            return Err(EINVAL);
        }
        if set.count != 0 && (set.data_type == IrqData::None || bool_of(set)) {
            if let Some(t) = &self.state.lock().msi_trigger {
                t.signal();
            }
        }
        Ok(())
    }

    /// `vfio_pci_set_ctx_trigger_single()`: the ERR and REQ indexes.
    fn single_trigger(&self, which: Single, set: &IrqSet) -> Result {
        if set.start != 0 || set.count > 1 {
            return Err(EINVAL);
        }
        if set.data_type == IrqData::None {
            let present = {
                let mut s = self.state.lock();
                let slot = s.single(which);
                if let (Some(t), true) = (&*slot, set.count != 0) {
                    t.signal();
                }
                slot.is_some()
            };
            if !present {
                return Err(EINVAL);
            }
            if set.count == 0 {
                drop(self.swap_single(which, None));
            }
            return Ok(());
        }
        if set.count == 0 {
            return Err(EINVAL);
        }
        if set.data_type == IrqData::Bool {
            if bool_of(set) {
                if let Some(t) = &*self.state.lock().single(which) {
                    t.signal();
                }
            }
            return Ok(());
        }
        let fd = fd_of(set)?;
        if fd < -1 {
            return Err(EINVAL);
        }
        let ctx = fdget(fd)?;
        drop(self.swap_single(which, ctx));
        Ok(())
    }

    /// `VFIO_DEVICE_SET_IRQS` after `vfio_set_irqs_validate_and_prepare()`.
    pub(super) fn set_irqs(&self, set: &IrqSet) -> Result {
        let _gate = self.igate.lock();
        match (IrqIndex::from_raw(set.index), set.action) {
            (Some(IrqIndex::Intx), IrqAction::Trigger) => self.intx_trigger(set),
            (Some(IrqIndex::Intx), IrqAction::Mask) => self.intx_mask(set, true),
            (Some(IrqIndex::Intx), IrqAction::Unmask) => self.intx_mask(set, false),
            (Some(IrqIndex::Msi), IrqAction::Trigger) => self.msi_trigger(set),
            (Some(IrqIndex::Err), IrqAction::Trigger) => self.single_trigger(Single::Err, set),
            (Some(IrqIndex::Req), IrqAction::Trigger) => self.single_trigger(Single::Req, set),
            _ => Err(ENOTTY),
        }
    }

    /// Close: every trigger released and interrupts off, as vfio-pci does;
    /// the INTx level is the power-on one, so the next user gets no
    /// interrupt the last one left asserted.
    pub(super) fn release(&self) {
        let _gate = self.igate.lock();
        self.set_type(IrqType::None, None);
        self.state.lock().intx_level = false;
        drop(self.swap_single(Single::Err, None));
        drop(self.swap_single(Single::Req, None));
    }

    /// The vGPU is being removed while open: ask user space to release it.
    pub(super) fn request(&self, dev: &Device, count: u32) {
        let sent = match &self.state.lock().req_trigger {
            Some(t) => {
                t.signal();
                true
            }
            None => false,
        };
        if sent && count % 10 == 0 {
            dev_notice!(dev, "Relaying device request to user (#{})\n", count);
        } else if !sent && count == 0 {
            dev_warn!(
                dev,
                "No device request channel registered, blocked until released by user\n"
            );
        }
    }
}
