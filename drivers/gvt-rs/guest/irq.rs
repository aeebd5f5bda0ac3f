// SPDX-License-Identifier: GPL-2.0

//! The vGPU's interrupt: one vector, MSI if the platform offers it, else INTx.

use crate::device::{
    Gpu,
    IrqKind, //
};
use kernel::{
    device::Bound,
    irq::{
        self,
        Flags,
        IrqReturn, //
    },
    pci::{
        self,
        IrqType,
        IrqTypes, //
    },
    prelude::*,
    sync::Arc, //
};

/// The interrupt handler.
pub(crate) struct Handler {
    gpu: Arc<Gpu>,
}

impl irq::Handler for Handler {
    fn handle(&self) -> IrqReturn {
        if self.gpu.handle_irq() {
            IrqReturn::Handled
        } else {
            IrqReturn::None
        }
    }
}

/// The vGPU's interrupt vector and the handler requested on it.
///
/// # Invariants
///
/// `handler` was requested on vector 0 of `vectors`. It is declared first,
/// so it is freed before the vectors are.
#[pin_data]
pub(crate) struct Interrupt<'bound> {
    #[pin]
    handler: irq::Registration<'bound, Handler>,
    vectors: pci::IrqVectorRegistration<'bound>,
}

impl<'bound> Interrupt<'bound> {
    /// Allocates one vector (MSI preferred, INTx otherwise) and requests
    /// `gpu`'s handler on it.
    pub(crate) fn new(
        pdev: &'bound pci::Device<Bound>,
        gpu: Arc<Gpu>,
    ) -> impl PinInit<Self, Error> + 'bound {
        let types = IrqTypes::default().with(IrqType::Msi).with(IrqType::Intx);
        try_pin_init!(Self {
            vectors: pdev.alloc_irq_vectors(1, 1, types)?,
            handler <- {
                let vectors_ptr = core::ptr::from_mut(vectors);
                // `vectors` is an initialised field of the pinned `Self`. `handler`, the only
                // user of this reference, is declared before it, so it is dropped (its
                // interrupt freed) first, and nothing moves or mutates `vectors` meanwhile.
                // SAFETY: The reference is valid and does not outlive its referent (above).
                let vectors: &'bound pci::IrqVectorRegistration<'bound> = unsafe { &*vectors_ptr };
                let request = vectors.index(0)?.into();
                let handler = Ok::<_, Error>(Handler { gpu });
                // SAFETY: The registration is a field of `Self`, which is dropped, never
                // forgotten: the driver data owning it is dropped when the device is unbound.
                unsafe { irq::Registration::new(request, Flags::SHARED, c"gvt_rs_guest", handler) }
            },
        }? Error)
    }

    /// The kind of interrupt the PCI core allocated.
    pub(crate) fn kind(&self) -> IrqKind {
        self.vectors.irq_type().into()
    }
}
