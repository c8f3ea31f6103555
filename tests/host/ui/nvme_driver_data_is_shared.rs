// Lesson: what probe stored is read-only afterwards. In Linux 7.3 `unbind`
// gets the driver data as `Pin<&RNvme<'b>>`, a shared reference, so it
// cannot change a field such as the decoded CAP: state that must change
// after probe needs a lock or an atomic. (`RNvme` here is a stand-in for
// stage 04's driver data with its `cap` field; the PCI parts need a kernel.)
#![allow(dead_code, unused)]

use core::pin::Pin;

#[path = "../../../solutions/04-pci-probe/cap.rs"]
mod cap;

struct RNvme {
    cap: cap::Cap,
}

fn unbind(this: Pin<&RNvme>) {
    this.cap.mqes = 0;
}

fn main() {}
