// SPDX-License-Identifier: GPL-2.0

//! Stage 03: a misc character device, `/dev/rmisc`, with shared state.
//!
//! Every opener shares one bounded in-kernel buffer: writes append to it
//! (whole or not at all), reads return it from the file position, and two
//! ioctls empty it or report its length.
//!
//! How to run: `make run STEP=03`, then in the VM
//! `echo hello > /dev/rmisc; cat /dev/rmisc`.

use kernel::{
    fs::{
        File,
        Kiocb, //
    },
    ioctl::{
        _IO,
        _IOR, //
    },
    iov::{
        IovIterDest,
        IovIterSource, //
    },
    miscdevice::{
        MiscDevice,
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    prelude::*,
    sync::global_lock,
    uaccess::{
        UserPtr,
        UserSlice, //
    }, //
};

module! {
    type: RMiscModule,
    name: "rmisc",
    authors: ["rust-kernel-workshop"],
    description: "Stage 03: a misc device with a shared, bounded buffer",
    license: "GPL",
    params: {
        capacity: u32 {
            default: 65536,
            description: "Buffer capacity in bytes, 1..=1048576",
        },
    },
}

// ANCHOR: ioctls
/// ioctl: empty the buffer.
const RMISC_CLEAR: u32 = _IO('r' as u32, 0x01);
/// ioctl: store the buffer's length in bytes at the `u64` the argument points to.
const RMISC_GET_LEN: u32 = _IOR::<u64>('r' as u32, 0x02);
/// ioctl: store the buffer's capacity in bytes at the `u64` the argument points to.
const RMISC_GET_CAPACITY: u32 = _IOR::<u64>('r' as u32, 0x03);
// ANCHOR_END: ioctls

/// The largest capacity the `capacity` parameter may ask for.
const MAX_CAPACITY: u32 = 1 << 20;

// ANCHOR: buffer
global_lock! {
    // SAFETY: `RMiscModule::init` calls `BUFFER.init()` before it registers
    // the device, and nothing else can reach `BUFFER` before that.
    unsafe(uninit) static BUFFER: Mutex<KVec<u8>> = KVec::new();
}
// ANCHOR_END: buffer

/// The buffer's capacity, from the (checked) module parameter.
fn capacity() -> usize {
    // `init` refused anything above MAX_CAPACITY, so this fits any usize.
    module_parameters::capacity.value() as usize
}

// ANCHOR: module
#[pin_data(PinnedDrop)]
struct RMiscModule {
    #[pin]
    _miscdev: MiscDeviceRegistration<RMisc>,
}

impl kernel::InPlaceModule for RMiscModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // `pin_init_scope` lets the checks below fail with `?` or `Err`
        // before anything is initialised in place.
        pin_init::pin_init_scope(move || {
            let cap = module_parameters::capacity.value();
            if !(1..=MAX_CAPACITY).contains(&cap) {
                pr_err!(
                    "capacity={} refused: must be between 1 and {}\n",
                    cap,
                    MAX_CAPACITY
                );
                return Err(EINVAL);
            }
            // SAFETY: Called once, before the device (the only user of
            // `BUFFER`) exists.
            unsafe { BUFFER.init() };
            pr_info!("/dev/rmisc ready, {} bytes of buffer\n", cap);

            Ok(try_pin_init!(Self {
                _miscdev <- MiscDeviceRegistration::register(MiscDeviceOptions { name: c"rmisc" }),
            }))
        })
    }
}

#[pinned_drop]
impl PinnedDrop for RMiscModule {
    fn drop(self: Pin<&mut Self>) {
        // A static is never dropped: free the buffer's memory by hand, or it
        // leaks at every unload. No file can be open: each holds a reference
        // on this module, so rmmod waits for the last close.
        *BUFFER.lock() = KVec::new();
        pr_info!("/dev/rmisc removed\n");
    }
}
// ANCHOR_END: module

/// The device. Openers need no state of their own: everything is in `BUFFER`.
struct RMisc;

#[vtable]
impl MiscDevice for RMisc {
    type Ptr = ();

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result {
        Ok(())
    }

    // ANCHOR: read
    fn read_iter(mut kiocb: Kiocb<'_, ()>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let buffer = BUFFER.lock();
        // Copies from the file position on and advances it: `cat` sees the
        // whole buffer, then end of file.
        iov.simple_read_from_buffer(kiocb.ki_pos_mut(), &buffer)
    }
    // ANCHOR_END: read

    // ANCHOR: write
    fn write_iter(mut kiocb: Kiocb<'_, ()>, iov: &mut IovIterSource<'_>) -> Result<usize> {
        let len = iov.len();
        // One lock for the whole write: concurrent writers never interleave.
        let mut buffer = BUFFER.lock();
        let old_len = buffer.len();

        // All or nothing: a write that does not fit is refused whole, never
        // silently cut short.
        if len > capacity() - old_len {
            return Err(ENOSPC);
        }
        let copied = iov.copy_from_iter_vec(&mut buffer, GFP_KERNEL)?;
        if copied < len {
            // Part of the user's buffer was not readable: undo the partial
            // append and report the bad address.
            buffer.truncate(old_len);
            return Err(EFAULT);
        }

        // Writes append; a later read on this file starts after what it wrote.
        *kiocb.ki_pos_mut() = i64::try_from(buffer.len())?;
        Ok(copied)
    }
    // ANCHOR_END: write

    // ANCHOR: ioctl
    fn ioctl(_device: (), _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            RMISC_CLEAR => BUFFER.lock().clear(),
            RMISC_GET_LEN | RMISC_GET_CAPACITY => {
                let value = if cmd == RMISC_GET_LEN {
                    BUFFER.lock().len()
                } else {
                    capacity()
                };
                // The argument is a user-space address: `UserSlice` checks
                // it, and a bad one gives EFAULT instead of an oops.
                let mut writer = UserSlice::new(UserPtr::from_addr(arg), size_of::<u64>()).writer();
                writer.write(&u64::try_from(value)?)?;
            }
            _ => return Err(ENOTTY),
        }
        Ok(0)
    }
    // ANCHOR_END: ioctl
}
