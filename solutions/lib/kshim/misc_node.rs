// SPDX-License-Identifier: GPL-2.0

//! A misc device node (`/dev/<name>`) that leads to a value of the
//! driver's: every file opened on it holds an `Arc` of that value, and its
//! ioctls go to the value's [`NodeOps::ioctl`].
//!
//! 7.3's `MiscDevice::open` is handed the registration only, not data of
//! the driver's, so the way from one to the other is `container_of!`: this
//! file holds that unsafe, and the privacy that makes it sound.
//!
//! Part of the kernel shim (`kshim::misc_node`), from stage 16 on. TODO:
//! replace with the misc device's registration data (upstream proposals
//! add `MiscDevice::RegistrationData`, handed to `open`), once the `kernel`
//! crate has it.

use core::marker::PhantomData;

use kernel::{
    fs::File,
    miscdevice::{
        MiscDevice,
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    }, //
};

/// What a node leads to.
pub(crate) trait NodeOps: Send + Sync + Sized + 'static {
    /// One ioctl on a file open on the node.
    fn ioctl(this: ArcBorrow<'_, Self>, cmd: u32, arg: usize) -> Result<isize>;
}

// ANCHOR: node
/// A registered node and the value its files lead to.
///
/// # Invariants
///
/// - Every `MiscDeviceRegistration<NodeDevice<D>>` is the `reg` field of a
///   `Node<D>`: `NodeDevice` is private to this file, and only
///   [`Node::new`] registers one.
/// - `data` lives whenever `reg` is registered: it is initialised before
///   `reg` registers (`new`), and dropped after `reg` is deregistered
///   (fields drop in the order they are declared: `reg` first).
#[pin_data]
pub(crate) struct Node<D: NodeOps> {
    #[pin]
    reg: MiscDeviceRegistration<NodeDevice<D>>,
    data: Arc<D>,
}
// ANCHOR_END: node

impl<D: NodeOps> Node<D> {
    /// Registers `/dev/<name>`, whose files lead to `data`.
    pub(crate) fn new(name: &'static CStr, data: Arc<D>) -> impl PinInit<Self, Error> {
        // INVARIANT: the registration is made as the `reg` field of a
        // `Node`, after `data` (fields are initialised in the order written
        // here), so an `open` that comes at once finds it.
        try_pin_init!(Node {
            data,
            reg <- MiscDeviceRegistration::register(MiscDeviceOptions { name }),
        }? Error)
    }
}

/// The misc device type of a `Node<D>`'s registration (private: see
/// `Node`'s invariants).
struct NodeDevice<D>(PhantomData<D>);

// ANCHOR: open
#[vtable]
impl<D: NodeOps> MiscDevice for NodeDevice<D> {
    type Ptr = Arc<D>;

    fn open(_file: &File, misc: &MiscDeviceRegistration<Self>) -> Result<Arc<D>> {
        // SAFETY: `misc` is the `reg` field of a `Node<D>` (its type
        // invariant), and a misc device is opened only while it is
        // registered (`misc_open` runs under `misc_mtx`, which
        // `misc_deregister` takes too), and while it is registered its
        // `Node`'s `data` lives (type invariant).
        let node = unsafe { &*kernel::container_of!(core::ptr::from_ref(misc), Node<D>, reg) };
        Ok(node.data.clone())
    }

    fn ioctl(this: ArcBorrow<'_, D>, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        D::ioctl(this, cmd, arg)
    }
}
// ANCHOR_END: open
