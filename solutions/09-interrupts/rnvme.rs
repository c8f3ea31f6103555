// SPDX-License-Identifier: GPL-2.0

//! Stage 09: interrupts. Stage 07's admin queue, with completions reaped by
//! an interrupt handler (MSI-X, else MSI, else INTx) and submitters that
//! sleep until their command completes or their time is up.
//!
//! How to run: `make run STEP=09`, then `grep rnvme /proc/interrupts` in the
//! VM: one line, whose count grows with every admin command.

use kernel::{
    device::Core,
    dma::{
        Device as _,
        DmaMask, //
    },
    pci,
    prelude::*, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;

use nvme::{
    ctrl::{
        BringUpTests,
        Controller, //
    },
    identify::{
        ascii,
        IdCtrl, //
    },
    interrupts::Interrupts,
    late_answers::{
        answered_late,
        woken_while_waiting, //
    },
    map::map,
    queue::NoRequests, //
};

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller. Fields drop in the order
/// they are declared: the handler is unregistered before the controller's
/// admin queue (which disables it) is dropped.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The interrupt vector and the admin queue's handler on it, kept for
    /// their drop (`free_irq`, then `pci_free_irq_vectors`).
    _irqs: Interrupts<'b, NoRequests>,
    /// The registers and the admin queue pair.
    ctrl: Controller,
    /// What Identify Controller said.
    id: IdCtrl,
}
// ANCHOR_END: data

/// The driver: `probe` and `unbind` for every matching device.
struct RNvmeDriver;

impl pci::Driver for RNvmeDriver {
    type IdInfo = ();
    type Data<'b> = RNvme<'b>;
    const ID_TABLE: pci::IdTable<()> = &PCI_TABLE;

    // ANCHOR: probe
    fn probe<'b>(
        pdev: &'b pci::Device<Core<'_>>,
        _info: Option<&'b ()>,
    ) -> impl PinInit<RNvme<'b>, Error> + 'b {
        // Stage 04's `map`: the registers in reach, CAP and VS logged.
        let (bar, cap) = map(pdev)?;

        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        // Disabled, the registers shared, the admin queue pair allocated.
        let ctrl = Controller::new(pdev, bar, cap)?;
        // For the test: `fault` asks for a controller that fails to start.
        let page_shift = ctrl.page_shift_for(pdev, module_parameters::fault.value())?;
        // ANCHOR_END: probe

        // ANCHOR: register
        // One vector (MSI-X, else MSI, else INTx), the admin queue's
        // handler on it: before the controller starts, which sets up the
        // admin completion queue's interrupt.
        // SAFETY: `irqs` goes into the driver data, which the driver core
        // drops at unbind, or is dropped on an error.
        let irqs = unsafe { Interrupts::new(pdev, 1, ctrl.admin()) }?;
        ctrl.start(pdev, page_shift)?;
        // Commands can complete now.
        let id = ctrl.bring_up(
            pdev,
            Some(irqs.vectors()),
            BringUpTests {
                aer_wait_ms: module_parameters::aer_wait_ms.value(),
                repeat: module_parameters::repeat.value(),
            },
        )?;
        // For the test: a wait woken by other completions; commands
        // abandoned, answered late.
        woken_while_waiting(pdev, ctrl.admin(), module_parameters::woken_ms.value())
            .and_then(|()| answered_late(pdev, ctrl.admin(), module_parameters::late.value()))
            .inspect_err(|_| {
                // Stopped before its handler goes (with `irqs`, right after
                // this): no interrupt nobody handles.
                let _ = ctrl.admin().disable_controller();
            })?;
        Ok(RNvme {
            pdev,
            _irqs: irqs,
            ctrl,
            id,
        })
        // ANCHOR_END: register
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        this.ctrl.stop(pdev);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 09: NVMe admin queue with interrupts",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 = ask for an unsupported page size, 2 = wait for a ready state that never comes",
        },
        repeat: u32 {
            default: 0,
            description: "For the tests: send Identify this many more times (0..=10000), so the admin queues wrap",
        },
        aer_wait_ms: u32 {
            default: 0,
            description: "For the tests: send an Asynchronous Event Request and wait this long for it (0: do not)",
        },
        late: u32 {
            default: 0,
            description: "For the tests: abandon this many Asynchronous Event Requests (0..=1000), each answered later",
        },
        woken_ms: u32 {
            default: 0,
            description: "For the tests: wait this long (0..=10000 ms) for an Asynchronous Event Request while other commands complete",
        },
    },
}
