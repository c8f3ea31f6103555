// SPDX-License-Identifier: GPL-2.0

//! Stage 03: a misc character device, `/dev/rmisc`, with shared state.
//!
//! Every opener shares one bounded in-kernel buffer: writes append to it
//! (whole or not at all), reads return it from the file position, and two
//! ioctls empty it or report its length.
//!
//! How to run: `make run STEP=03`, then in the VM
//! `echo hello > /dev/rmisc; cat /dev/rmisc`.
//! Check your work with `make check STEP=03`.

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
        // TODO (exercise 1): Append the user's data to `BUFFER`, whole or not
        // at all:
        // - hold `BUFFER.lock()` for the whole write, so that concurrent
        //   writers never interleave;
        // - a write that does not fit in `capacity()` bytes fails with ENOSPC
        //   and changes nothing;
        // - a write from memory the user cannot read (fewer bytes copied than
        //   `iov.len()`) fails with EFAULT and changes nothing either;
        // - a write that succeeds leaves the file position at the buffer's new
        //   end, and returns the number of bytes written.
        // You have: `iov.len()`, `iov.copy_from_iter_vec(&mut vec, GFP_KERNEL)`
        // (appends, returns how many bytes it copied), `KVec::truncate`,
        // `kiocb.ki_pos_mut()`, `capacity()`.
        // Tests: the checks that write: "writing ... succeeds", "echo + cat
        // round trip", "writes append", "a write then a read ...", "10000
        // random bytes ...", "4 concurrent writers ...", "filling the buffer to
        // capacity works", "with ENOSPC ..." and "write() from a bad address
        // fails with EFAULT".
        let _ = (kiocb.ki_pos_mut(), iov.len());
        Err(ENOSYS)
    }
    // ANCHOR_END: write

    // ANCHOR: ioctl
    fn ioctl(_device: (), _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        // TODO (exercise 2): Implement the three ioctls defined at the top of
        // this file:
        // - RMISC_CLEAR empties the buffer;
        // - RMISC_GET_LEN and RMISC_GET_CAPACITY write a `u64` (the buffer's
        //   length, or `capacity()`) to the user address `arg`: build a
        //   writer with `UserSlice::new(UserPtr::from_addr(arg), size)` and
        //   let its `write` turn a bad address into EFAULT;
        // - any other command fails with ENOTTY.
        // Tests: "RMISC_GET_LEN reports the length", "RMISC_GET_CAPACITY
        // reports the capacity", "RMISC_CLEAR succeeds", "the buffer is empty
        // after RMISC_CLEAR", "RMISC_GET_LEN to a bad address fails with
        // EFAULT", and the checks that read the length ("and the length is
        // exactly ...", "and nothing of it was kept", ...) or need the buffer
        // cleared first.
        let _ = (cmd, arg);
        Err(ENOTTY)
    }
    // ANCHOR_END: ioctl
}
