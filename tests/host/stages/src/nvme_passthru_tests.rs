//! Stage 15: `passthru.rs`, the NVMe passthrough ioctls nvme-cli uses, against
//! `include/uapi/linux/nvme_ioctl.h`, `include/uapi/asm-generic/ioctl.h` and
//! the NVMe 1.4 specification, with every expected value built by the test
//! (never by the code under test).
//!
//! The ioctl numbers (asm-generic/ioctl.h): the number in bits 7:0, the
//! type (`'N'`) in 15:8, the argument's size in 29:16, the direction in
//! 31:30 (`_IO` 0, `_IOW` 1, `_IOR` 2, `_IOWR` 3). nvme_ioctl.h:
//!
//! ```text
//!  NVME_IOCTL_ID            _IO('N', 0x40)
//!  NVME_IOCTL_ADMIN_CMD     _IOWR('N', 0x41, struct nvme_admin_cmd)       72 bytes
//!  NVME_IOCTL_SUBMIT_IO     _IOW('N', 0x42, struct nvme_user_io)          48 bytes
//!  NVME_IOCTL_IO_CMD        _IOWR('N', 0x43, struct nvme_passthru_cmd)    72 bytes
//!  NVME_IOCTL_RESET         _IO('N', 0x44)
//!  NVME_IOCTL_SUBSYS_RESET  _IO('N', 0x45)
//!  NVME_IOCTL_RESCAN        _IO('N', 0x46)
//!  NVME_IOCTL_ADMIN64_CMD   _IOWR('N', 0x47, struct nvme_passthru_cmd64)  80 bytes
//!  NVME_IOCTL_IO64_CMD      _IOWR('N', 0x48, struct nvme_passthru_cmd64)
//!  NVME_IOCTL_IO64_CMD_VEC  _IOWR('N', 0x49, struct nvme_passthru_cmd64)
//!  NVME_URING_CMD_IO ...    _IOWR('N', 0x80..0x83, struct nvme_uring_cmd) 72 bytes
//! ```
//!
//! Only ADMIN_CMD, IO_CMD, ADMIN64_CMD and IO64_CMD are passthrough
//! commands `decode` answers; the rest are `ENOTTY` (`NVME_IOCTL_ID` is the
//! driver's own business, before `decode`).
//!
//! `struct nvme_passthru_cmd` (`_cmd64` differs from `timeout_ms` on):
//!
//! ```text
//!  offset  size  field                offset  size  field (cmd64)
//!  0       1     opcode               64      4     timeout_ms
//!  1       1     flags                68      4     rsvd2
//!  2       2     rsvd1                72      8     result
//!  4       4     nsid                 size 80
//!  8       4     cdw2
//!  12      4     cdw3
//!  16      8     metadata
//!  24      8     addr
//!  32      4     metadata_len
//!  36      4     data_len
//!  40..64  4     cdw10 .. cdw15
//!  64      4     timeout_ms
//!  68      4     result
//!  size 72
//! ```
//!
//! What the commands transfer (NVMe 1.4): an opcode's bits 1:0 are its data
//! direction (00 none, 01 host to controller, 10 controller to host, 11
//! both). Admin: Get Log Page (02h) NUMDL in CDW10 31:16 and NUMDU in CDW11
//! 15:0, a 0's based count of dwords (LID 7:0, LSP 11:8, RAE 15 of CDW10 and
//! LSI 31:16 of CDW11 do not count); Identify (06h) always one 4 KiB data
//! structure, CNS in CDW10 7:0; Get Features (0Ah) and Set Features (09h),
//! FID in CDW10 7:0, a data structure of at most 4 KiB for some features
//! (LBA Range Type 4 KiB, Timestamp 8 bytes, Host Identifier 16 bytes) and
//! none for most (Arbitration, Number of Queues, Volatile Write Cache:
//! their value is in CDW11 / the completion's DW0); Keep Alive (18h), no
//! data. Those five are the admin commands user space may send; every
//! other admin opcode is `Forbidden`: the queues (Delete I/O SQ 00h,
//! Create I/O SQ 01h, Delete I/O CQ 04h, Create I/O CQ 05h), Abort (08h),
//! Asynchronous Event Request (0Ch) and Doorbell Buffer Config (7Ch) are
//! the driver's; Format NVM (80h), Sanitize (84h), Namespace Management
//! (0Dh), Firmware Commit (10h) and Image Download (11h) change the
//! namespace or the controller under the driver; vendor-specific
//! (C0h-FFh) and reserved opcodes do what nothing tells. NVM I/O: Flush
//! 00h, Write 01h, Read 02h (SLBA in CDW10/11, NLB in CDW12 15:0, 0's based;
//! FUA 30, LR 31, PRINFO 29:26 do not count), Write Uncorrectable 04h,
//! Compare 05h, Write Zeroes 08h, Dataset Management 09h (NR in CDW10 7:0, 0's
//! based, ranges of 16 bytes), Verify 0Ch, Reservation Report 0Eh.
//!
//! The rules `check` implements are in its doc comment; the expectations
//! below are those rules applied by hand to these commands.

use crate::nvme_passthru::{
    check, decode, parse, Direction, Layout, Passthru, PassthruCmd, PassthruCmd64, Refused, Target,
    NVME_IOCTL_ADMIN64_CMD, NVME_IOCTL_ADMIN_CMD, NVME_IOCTL_ID, NVME_IOCTL_IO64_CMD,
    NVME_IOCTL_IO_CMD,
};
use core::mem::{offset_of, size_of};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::path::Path;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- C layouts, from the header's field types --------------------------------------

/// The offsets of a C struct of these naturally aligned scalar fields (their
/// sizes, in order) and its size, as the x86-64 ABI lays it out.
fn c_layout(sizes: &[usize]) -> (Vec<usize>, usize) {
    let (mut at, mut align, mut offsets) = (0usize, 1, Vec::new());
    for &size in sizes {
        at = at.next_multiple_of(size);
        offsets.push(at);
        at += size;
        align = align.max(size);
    }
    (offsets, at.next_multiple_of(align))
}

/// `struct nvme_passthru_cmd`'s fields: opcode, flags, rsvd1, nsid, cdw2,
/// cdw3, metadata, addr, metadata_len, data_len, cdw10..cdw15, timeout_ms,
/// result.
const PASSTHRU_FIELDS: [usize; 18] = [1, 1, 2, 4, 4, 4, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4];
/// `struct nvme_passthru_cmd64`: the same, then rsvd2 and a 64-bit result.
const PASSTHRU64_FIELDS: [usize; 19] = [1, 1, 2, 4, 4, 4, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8];
/// `struct nvme_user_io`: opcode, flags, control, nblocks, rsvd, metadata,
/// addr, slba, dsmgmt, reftag, apptag, appmask.
const USER_IO_FIELDS: [usize; 12] = [1, 1, 2, 2, 2, 8, 8, 8, 4, 4, 2, 2];
/// `struct nvme_uring_cmd`: opcode, flags, rsvd1, nsid, cdw2, cdw3,
/// metadata, addr, metadata_len, data_len, cdw10..cdw15, timeout_ms, rsvd2.
const URING_CMD_FIELDS: [usize; 18] = [1, 1, 2, 4, 4, 4, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4];

/// The header's offsets, as the module doc lists them (index = field).
const OFFSETS: [usize; 18] = [
    0, 1, 2, 4, 8, 12, 16, 24, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68,
];

#[test]
fn nvme_passthru_c_layouts_are_the_headers() {
    let (offsets, size) = c_layout(&PASSTHRU_FIELDS);
    assert_eq!((offsets.as_slice(), size), (&OFFSETS[..], 72));
    let (offsets64, size64) = c_layout(&PASSTHRU64_FIELDS);
    assert_eq!(
        &offsets64[..17],
        &OFFSETS[..17],
        "cmd64 is cmd up to timeout_ms"
    );
    assert_eq!(
        (offsets64[17], offsets64[18], size64),
        (68, 72, 80),
        "rsvd2, result, size"
    );
    assert_eq!(
        c_layout(&USER_IO_FIELDS).1,
        48,
        "nvme_user_io: 44 bytes, padded to 8"
    );
    assert_eq!(c_layout(&URING_CMD_FIELDS).1, 72);
}

/// `PassthruCmd` and `PassthruCmd64` mirror the header field by field.
#[test]
fn nvme_passthru_mirrored_structs_have_the_headers_offsets() {
    let got = [
        offset_of!(PassthruCmd, opcode),
        offset_of!(PassthruCmd, flags),
        offset_of!(PassthruCmd, rsvd1),
        offset_of!(PassthruCmd, nsid),
        offset_of!(PassthruCmd, cdw2),
        offset_of!(PassthruCmd, cdw3),
        offset_of!(PassthruCmd, metadata),
        offset_of!(PassthruCmd, addr),
        offset_of!(PassthruCmd, metadata_len),
        offset_of!(PassthruCmd, data_len),
        offset_of!(PassthruCmd, cdw10),
        offset_of!(PassthruCmd, cdw10) + 4,
        offset_of!(PassthruCmd, cdw10) + 8,
        offset_of!(PassthruCmd, cdw10) + 12,
        offset_of!(PassthruCmd, cdw10) + 16,
        offset_of!(PassthruCmd, cdw10) + 20,
        offset_of!(PassthruCmd, timeout_ms),
        offset_of!(PassthruCmd, result),
    ];
    assert_eq!(got, OFFSETS);
    assert_eq!(size_of::<PassthruCmd>(), 72);
    let got64 = [
        offset_of!(PassthruCmd64, opcode),
        offset_of!(PassthruCmd64, flags),
        offset_of!(PassthruCmd64, rsvd1),
        offset_of!(PassthruCmd64, nsid),
        offset_of!(PassthruCmd64, cdw2),
        offset_of!(PassthruCmd64, cdw3),
        offset_of!(PassthruCmd64, metadata),
        offset_of!(PassthruCmd64, addr),
        offset_of!(PassthruCmd64, metadata_len),
        offset_of!(PassthruCmd64, data_len),
        offset_of!(PassthruCmd64, cdw10),
        offset_of!(PassthruCmd64, timeout_ms),
        // The header's `rsvd2` (68..72) is the padding before the `u64`.
        offset_of!(PassthruCmd64, result),
    ];
    assert_eq!(got64, [0, 1, 2, 4, 8, 12, 16, 24, 32, 36, 40, 64, 72]);
    assert_eq!(size_of::<PassthruCmd64>(), 80);
}

#[test]
fn nvme_passthru_layout_size_and_result_field() {
    assert_eq!(Layout::Short.size(), 72);
    assert_eq!(Layout::Long.size(), 80);
    assert_eq!(
        Layout::Short.result_field(),
        (68, 4),
        "nvme_passthru_cmd's __u32 result"
    );
    assert_eq!(
        Layout::Long.result_field(),
        (72, 8),
        "nvme_passthru_cmd64's __u64 result"
    );
    for layout in [Layout::Short, Layout::Long] {
        let (at, len) = layout.result_field();
        assert_eq!(
            at + len,
            layout.size(),
            "{layout:?}: the result is the last field"
        );
    }
}

// ---- ioctl numbers -----------------------------------------------------------------

const IOC_NONE: u32 = 0;
const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// `_IOC(dir, type, nr, size)`: asm-generic/ioctl.h, 8 number bits, 8 type
/// bits, 14 size bits, 2 direction bits.
fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    assert!(dir < 4 && size < 1 << 14);
    dir << 30 | (size as u32) << 16 | u32::from(ty) << 8 | u32::from(nr)
}

fn io(nr: u8) -> u32 {
    ioc(IOC_NONE, b'N', nr, 0)
}

fn iow(nr: u8, size: usize) -> u32 {
    ioc(IOC_WRITE, b'N', nr, size)
}

fn iowr(nr: u8, size: usize) -> u32 {
    ioc(IOC_READ | IOC_WRITE, b'N', nr, size)
}

fn cmd_size() -> usize {
    c_layout(&PASSTHRU_FIELDS).1
}

fn cmd64_size() -> usize {
    c_layout(&PASSTHRU64_FIELDS).1
}

/// The four passthrough ioctls and what they ask for.
fn passthru_ioctls() -> [(u32, Target, Layout); 4] {
    [
        (iowr(0x41, cmd_size()), Target::Admin, Layout::Short),
        (iowr(0x43, cmd_size()), Target::Io, Layout::Short),
        (iowr(0x47, cmd64_size()), Target::Admin, Layout::Long),
        (iowr(0x48, cmd64_size()), Target::Io, Layout::Long),
    ]
}

/// Numbers the driver does not answer with a passthrough command.
fn other_ioctls() -> Vec<(&'static str, u32)> {
    let uring = c_layout(&URING_CMD_FIELDS).1;
    vec![
        ("NVME_IOCTL_ID", io(0x40)),
        (
            "NVME_IOCTL_SUBMIT_IO",
            iow(0x42, c_layout(&USER_IO_FIELDS).1),
        ),
        ("NVME_IOCTL_RESET", io(0x44)),
        ("NVME_IOCTL_SUBSYS_RESET", io(0x45)),
        ("NVME_IOCTL_RESCAN", io(0x46)),
        ("NVME_IOCTL_IO64_CMD_VEC", iowr(0x49, cmd64_size())),
        ("NVME_URING_CMD_IO", iowr(0x80, uring)),
        ("NVME_URING_CMD_IO_VEC", iowr(0x81, uring)),
        ("NVME_URING_CMD_ADMIN", iowr(0x82, uring)),
        ("NVME_URING_CMD_ADMIN_VEC", iowr(0x83, uring)),
        ("_IO('N', 0x7f)", io(0x7f)),
        ("ADMIN_CMD's number with 64 bytes", iowr(0x41, 64)),
        ("ADMIN_CMD's number with cmd64's 80 bytes", iowr(0x41, 80)),
        ("ADMIN64_CMD's number with cmd's 72 bytes", iowr(0x47, 72)),
        ("IO_CMD's number with 80 bytes", iowr(0x43, 80)),
        ("IO64_CMD's number with 72 bytes", iowr(0x48, 72)),
        ("_IOW('N', 0x41, 72)", iow(0x41, 72)),
        ("_IOR('N', 0x43, 72)", ioc(IOC_READ, b'N', 0x43, 72)),
        ("_IO('N', 0x41)", io(0x41)),
        ("_IOWR('M', 0x41, 72)", ioc(3, b'M', 0x41, 72)),
        ("_IOWR('n', 0x48, 80)", ioc(3, b'n', 0x48, 80)),
        ("0", 0),
        ("u32::MAX", u32::MAX),
        ("ADMIN_CMD's bits 15:0 alone", 0x4e41),
    ]
}

#[test]
fn nvme_passthru_ioctl_numbers() {
    // The values nvme-cli and the C driver use, by hand.
    assert_eq!(io(0x40), 0x4e40);
    assert_eq!(iowr(0x41, cmd_size()), 0xc048_4e41);
    assert_eq!(iow(0x42, c_layout(&USER_IO_FIELDS).1), 0x4030_4e42);
    assert_eq!(iowr(0x43, cmd_size()), 0xc048_4e43);
    assert_eq!(io(0x44), 0x4e44);
    assert_eq!(iowr(0x47, cmd64_size()), 0xc050_4e47);
    assert_eq!(iowr(0x48, cmd64_size()), 0xc050_4e48);
    // The module's constants.
    assert_eq!(NVME_IOCTL_ID, io(0x40));
    assert_eq!(NVME_IOCTL_ADMIN_CMD, iowr(0x41, cmd_size()));
    assert_eq!(NVME_IOCTL_IO_CMD, iowr(0x43, cmd_size()));
    assert_eq!(NVME_IOCTL_ADMIN64_CMD, iowr(0x47, cmd64_size()));
    assert_eq!(NVME_IOCTL_IO64_CMD, iowr(0x48, cmd64_size()));
}

#[test]
fn nvme_passthru_decode_vectors() {
    for (cmd, target, layout) in passthru_ioctls() {
        assert_eq!(decode(cmd), Some((target, layout)), "{cmd:#010x}");
    }
    for (what, cmd) in other_ioctls() {
        assert_eq!(decode(cmd), None, "{what} ({cmd:#010x}) is ENOTTY");
    }
}

proptest! {
    #![proptest_config(config(20000))]

    /// Any number: one of the four, or `None`.
    #[test]
    fn nvme_passthru_decode_any_number(
        cmd in prop_oneof![
            any::<u32>(),
            // 'N' numbers of any size and direction.
            (0u32..4, 0u8..=0xff, 0usize..1 << 14).prop_map(|(d, nr, s)| ioc(d, b'N', nr, s)),
            // One bit off a passthrough ioctl.
            (0usize..4, 0u32..32).prop_map(|(i, bit)| passthru_ioctls()[i].0 ^ 1 << bit),
        ],
    ) {
        let want = passthru_ioctls().iter().find(|p| p.0 == cmd).map(|&(_, t, l)| (t, l));
        prop_assert_eq!(decode(cmd), want, "{:#010x}", cmd);
    }
}

// ---- parse -------------------------------------------------------------------------

/// The bytes user space passes for `c`, laid out at the header's offsets
/// (native endian, as the struct is in memory), with `rsvd1` and the
/// result fields (`result`, or `rsvd2` and the 64-bit `result`) as given.
fn user_bytes(c: &Passthru, layout: Layout, rsvd1: u16, tail: u64) -> Vec<u8> {
    let size = match layout {
        Layout::Short => 72,
        Layout::Long => 80,
    };
    let mut b = vec![0u8; size];
    let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &[c.opcode]);
    put(1, &[c.flags]);
    put(2, &rsvd1.to_ne_bytes());
    put(4, &c.nsid.to_ne_bytes());
    put(8, &c.cdw2.to_ne_bytes());
    put(12, &c.cdw3.to_ne_bytes());
    put(16, &c.metadata.to_ne_bytes());
    put(24, &c.addr.to_ne_bytes());
    put(32, &c.metadata_len.to_ne_bytes());
    put(36, &c.data_len.to_ne_bytes());
    for (i, w) in c.cdw.iter().enumerate() {
        put(40 + 4 * i, &w.to_ne_bytes());
    }
    put(64, &c.timeout_ms.to_ne_bytes());
    match layout {
        Layout::Short => put(68, &(tail as u32).to_ne_bytes()),
        Layout::Long => {
            put(68, &((tail >> 32) as u32).to_ne_bytes()); // rsvd2
            put(72, &tail.to_ne_bytes());
        }
    }
    b
}

/// A command with a different value in every field.
fn distinct() -> Passthru {
    Passthru {
        opcode: 0x06,
        flags: 0x5a,
        nsid: 0x1122_3344,
        cdw2: 0x0202_2020,
        cdw3: 0x0303_3030,
        metadata: 0x0123_4567_89ab_cdef,
        addr: 0x7ffd_dead_beef_1000,
        metadata_len: 0x3232_0032,
        data_len: 0x0000_1000,
        cdw: [
            0x1010_a0a0,
            0x1111_b1b1,
            0x1212_c2c2,
            0x1313_d3d3,
            0x1414_e4e4,
            0x1515_f5f5,
        ],
        timeout_ms: 0x6464_0064,
    }
}

#[test]
fn nvme_passthru_parse_vectors() {
    let c = distinct();
    let short = user_bytes(&c, Layout::Short, 0xa5a5, 0xdead_beef);
    let long = user_bytes(&c, Layout::Long, 0x5a5a, 0xfeed_face_dead_beef);
    assert_eq!(short.len(), 72);
    assert_eq!(long.len(), 80);
    assert_eq!(parse(&short), Some(c), "72 bytes");
    assert_eq!(parse(&long), Some(c), "80 bytes");
    // Byte by byte at the header's offsets (little endian on x86-64).
    #[cfg(target_endian = "little")]
    {
        assert_eq!(
            &short[..8],
            &[0x06, 0x5a, 0xa5, 0xa5, 0x44, 0x33, 0x22, 0x11]
        );
        assert_eq!(
            &short[36..44],
            &[0x00, 0x10, 0x00, 0x00, 0xa0, 0xa0, 0x10, 0x10]
        );
        let mut by_hand = [0u8; 72];
        by_hand[0] = 0x02; // Read
        by_hand[4] = 1; // nsid 1
        by_hand[24..32].copy_from_slice(&[0x00, 0x20, 0x40, 0x00, 0x00, 0x7f, 0x00, 0x00]);
        by_hand[37] = 0x10; // data_len 4096
        by_hand[40..44].copy_from_slice(&[0x78, 0x56, 0x34, 0x12]); // SLBA 0x12345678
        by_hand[48] = 7; // NLB 7: 8 blocks
        by_hand[64..68].copy_from_slice(&[0xe8, 0x03, 0, 0]); // 1000 ms
        by_hand[68..72].copy_from_slice(&[0xef, 0xbe, 0xad, 0xde]); // result: ignored
        let want = Passthru {
            opcode: 0x02,
            nsid: 1,
            addr: 0x7f00_0040_2000,
            data_len: 4096,
            cdw: [0x1234_5678, 0, 7, 0, 0, 0],
            timeout_ms: 1000,
            ..Passthru::default()
        };
        assert_eq!(parse(&by_hand), Some(want));
    }
    // All zeros: a command of zeros.
    assert_eq!(parse(&[0u8; 72]), Some(Passthru::default()));
    assert_eq!(parse(&[0u8; 80]), Some(Passthru::default()));
}

#[test]
fn nvme_passthru_parse_too_short() {
    let long = user_bytes(&distinct(), Layout::Long, 0, 0);
    // Everything before `result` is needed (timeout_ms ends at 68).
    for len in 0..68 {
        assert_eq!(parse(&long[..len]), None, "{len} bytes");
    }
    assert_eq!(parse(&[]), None);
}

prop_compose! {
    fn any_passthru()(
        opcode in prop_oneof![any::<u8>(), prop::sample::select(OPCODES.to_vec())],
        flags in prop_oneof![3 => Just(0u8), 1 => any::<u8>()],
        nsid in prop_oneof![Just(1u32), any::<u32>()],
        cdw2 in prop_oneof![Just(0u32), any::<u32>()],
        cdw3 in prop_oneof![Just(0u32), any::<u32>()],
        metadata in prop_oneof![3 => Just(0u64), 1 => any::<u64>()],
        addr in any::<u64>(),
        metadata_len in prop_oneof![3 => Just(0u32), 1 => any::<u32>()],
        data_len in data_len(),
        cdw in prop::array::uniform6(cdw()),
        timeout_ms in any::<u32>(),
    ) -> Passthru {
        Passthru {
            opcode, flags, nsid, cdw2, cdw3, metadata, addr, metadata_len, data_len, cdw,
            timeout_ms,
        }
    }
}

proptest! {
    #![proptest_config(config(5000))]

    /// Any command in either layout, with anything in `rsvd1` and the result
    /// fields: `parse` gives it back.
    #[test]
    fn nvme_passthru_parse_round_trip(
        c in any_passthru(),
        long in any::<bool>(),
        rsvd1 in any::<u16>(),
        tail in any::<u64>(),
    ) {
        let layout = if long { Layout::Long } else { Layout::Short };
        prop_assert_eq!(parse(&user_bytes(&c, layout, rsvd1, tail)), Some(c));
    }

    /// Any bytes: no panic; `None` when short of `timeout_ms`'s end, the
    /// fields at the header's offsets when a whole struct is there.
    #[test]
    fn nvme_passthru_parse_any_bytes(b in prop::collection::vec(any::<u8>(), 0..=160)) {
        let got = parse(&b);
        if b.len() < 68 {
            prop_assert_eq!(got, None);
        } else if b.len() >= 72 {
            let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap());
            let u64_at = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().unwrap());
            let want = Passthru {
                opcode: b[0],
                flags: b[1],
                nsid: u32_at(4),
                cdw2: u32_at(8),
                cdw3: u32_at(12),
                metadata: u64_at(16),
                addr: u64_at(24),
                metadata_len: u32_at(32),
                data_len: u32_at(36),
                cdw: [u32_at(40), u32_at(44), u32_at(48), u32_at(52), u32_at(56), u32_at(60)],
                timeout_ms: u32_at(64),
            };
            prop_assert_eq!(got, Some(want));
        }
    }
}

// ---- check: commands, from the specification -----------------------------------

/// rnvme's bounce buffer (`chardev.rs`'s `BUFFER_SIZE`): the `max_len` the
/// driver passes.
const MAX: u32 = 128 * 1024;
const KIB: u32 = 1024;

// Admin opcodes.
const DELETE_IO_SQ: u8 = 0x00;
const CREATE_IO_SQ: u8 = 0x01;
const GET_LOG_PAGE: u8 = 0x02;
const DELETE_IO_CQ: u8 = 0x04;
const CREATE_IO_CQ: u8 = 0x05;
const IDENTIFY: u8 = 0x06;
const ABORT: u8 = 0x08;
const SET_FEATURES: u8 = 0x09;
const GET_FEATURES: u8 = 0x0a;
const ASYNC_EVENT_REQUEST: u8 = 0x0c;
const NS_MANAGEMENT: u8 = 0x0d;
const FW_COMMIT: u8 = 0x10;
const FW_IMAGE_DOWNLOAD: u8 = 0x11;
const DEVICE_SELF_TEST: u8 = 0x14;
const NS_ATTACHMENT: u8 = 0x15;
const KEEP_ALIVE: u8 = 0x18;
const DIRECTIVE_SEND: u8 = 0x19;
const DIRECTIVE_RECEIVE: u8 = 0x1a;
const DOORBELL_BUFFER_CONFIG: u8 = 0x7c;
const FORMAT_NVM: u8 = 0x80;
const SECURITY_SEND: u8 = 0x81;
const SECURITY_RECEIVE: u8 = 0x82;
const SANITIZE: u8 = 0x84;
// NVM I/O opcodes.
const FLUSH: u8 = 0x00;
const WRITE: u8 = 0x01;
const READ: u8 = 0x02;
const WRITE_UNCORRECTABLE: u8 = 0x04;
const COMPARE: u8 = 0x05;
const WRITE_ZEROES: u8 = 0x08;
const DSM: u8 = 0x09;
const VERIFY: u8 = 0x0c;
const RESERVATION_REPORT: u8 = 0x0e;

/// The admin commands user space may send: every other admin opcode is
/// `Forbidden`.
const ADMIN_ALLOWED: [u8; 5] = [
    GET_LOG_PAGE,
    IDENTIFY,
    GET_FEATURES,
    SET_FEATURES,
    KEEP_ALIVE,
];

/// Admin commands that are the driver's, or change the namespace or the
/// controller under it: with or without data, `Forbidden`.
const ADMIN_FORBIDDEN: [u8; 14] = [
    DELETE_IO_SQ,
    CREATE_IO_SQ,
    DELETE_IO_CQ,
    CREATE_IO_CQ,
    ABORT,
    ASYNC_EVENT_REQUEST,
    NS_MANAGEMENT,
    FW_COMMIT,
    FW_IMAGE_DOWNLOAD,
    DEVICE_SELF_TEST,
    NS_ATTACHMENT,
    DOORBELL_BUFFER_CONFIG,
    FORMAT_NVM,
    SANITIZE,
];

/// The NVM commands user space may send: every other I/O opcode is
/// `Forbidden` (vendor-specific 80h-FFh, reserved, and the ones `check`
/// knows no bound for: Compare, the reservations).
const IO_ALLOWED: [u8; 7] = [
    FLUSH,
    WRITE,
    READ,
    WRITE_UNCORRECTABLE,
    WRITE_ZEROES,
    DSM,
    VERIFY,
];

/// Whether `check` must refuse `c` on `target` as `Forbidden`: its opcode,
/// or (Get/Set Features) its feature, is not on the allow-list.
fn forbidden(target: Target, c: &Passthru) -> bool {
    let fid = c.cdw[0] as u8;
    match target {
        Admin => match c.opcode {
            GET_FEATURES => !get_allowed(fid),
            SET_FEATURES => !set_allowed(fid),
            op => !ADMIN_ALLOWED.contains(&op),
        },
        Io => !IO_ALLOWED.contains(&c.opcode),
    }
}

/// Opcodes the generators favour: the ones `check` knows, their neighbours,
/// both-ways ones, the forbidden ones.
const OPCODES: [u8; 21] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0c, 0x0e, 0x10, 0x18, 0x7c, 0x7f,
    0x80, 0x84, 0xc0, 0xc2, 0xff,
];

/// Features (FID).
const FID_ARBITRATION: u8 = 0x01;
const FID_LBA_RANGE_TYPE: u8 = 0x03;
const FID_VOLATILE_WRITE_CACHE: u8 = 0x06;
const FID_NUMBER_OF_QUEUES: u8 = 0x07;
const FID_HOST_MEMORY_BUFFER: u8 = 0x0d;
const FID_TIMESTAMP: u8 = 0x0e;
const FID_HOST_IDENTIFIER: u8 = 0x81;

/// The features user space may get: 01h-0Ch (Arbitration to Autonomous
/// Power State Transition), Timestamp, Host Identifier.
fn get_allowed(fid: u8) -> bool {
    matches!(fid, 0x01..=0x0c | FID_TIMESTAMP | FID_HOST_IDENTIFIER)
}

/// The features user space may set: Arbitration, Temperature Threshold,
/// Timestamp, Host Identifier.
fn set_allowed(fid: u8) -> bool {
    matches!(
        fid,
        FID_ARBITRATION | 0x04 | FID_TIMESTAMP | FID_HOST_IDENTIFIER
    )
}

/// A command as nvme-cli fills it in: a user buffer when there is data.
fn cmd(opcode: u8, nsid: u32, data_len: u32, cdw: [u32; 6]) -> Passthru {
    Passthru {
        opcode,
        nsid,
        addr: if data_len > 0 { 0x7f3a_5c40_0000 } else { 0 },
        data_len,
        cdw,
        ..Passthru::default()
    }
}

fn identify(cns: u8, data_len: u32) -> Passthru {
    let nsid = if cns == 0 { 1 } else { 0 };
    cmd(IDENTIFY, nsid, data_len, [u32::from(cns), 0, 0, 0, 0, 0])
}

/// Get Log Page of `dwords` dwords (NUMD is that, 0's based).
fn get_log_page(lid: u8, dwords: u32, data_len: u32) -> Passthru {
    let numd = dwords - 1;
    cmd(
        GET_LOG_PAGE,
        0xffff_ffff,
        data_len,
        [numd << 16 | u32::from(lid), numd >> 16, 0, 0, 0, 0],
    )
}

fn get_features(fid: u8, data_len: u32) -> Passthru {
    cmd(GET_FEATURES, 0, data_len, [u32::from(fid), 0, 0, 0, 0, 0])
}

fn set_features(fid: u8, value: u32, data_len: u32) -> Passthru {
    cmd(
        SET_FEATURES,
        0,
        data_len,
        [u32::from(fid), value, 0, 0, 0, 0],
    )
}

/// An LBA command (Read, Write, Compare, Write Zeroes...) of `blocks`
/// blocks from LBA 0x1_0000_2000 of namespace 1.
fn lba_cmd(opcode: u8, blocks: u32, data_len: u32) -> Passthru {
    let slba: u64 = 0x1_0000_2000;
    cmd(
        opcode,
        1,
        data_len,
        [slba as u32, (slba >> 32) as u32, blocks - 1, 0, 0, 0],
    )
}

/// Dataset Management (deallocate) of `ranges` ranges.
fn dsm(ranges: u32, data_len: u32) -> Passthru {
    cmd(DSM, 1, data_len, [ranges - 1, 1 << 2, 0, 0, 0, 0])
}

fn no_data(opcode: u8) -> Passthru {
    cmd(opcode, 0, 0, [0; 6])
}

fn with(c: Passthru, f: impl FnOnce(&mut Passthru)) -> Passthru {
    let mut c = c;
    f(&mut c);
    c
}

use Direction::{FromDevice, None as NoData, ToDevice};
use Refused::{Forbidden, Invalid};
use Target::{Admin, Io};

/// One case: what, the command, its queue, `max_len`, the block size, the
/// answer the rules give.
type Case = (
    String,
    Passthru,
    Target,
    u32,
    u32,
    Result<Direction, Refused>,
);

fn case(
    what: impl Into<String>,
    c: Passthru,
    target: Target,
    max_len: u32,
    block_size: u32,
    want: Result<Direction, Refused>,
) -> Case {
    (what.into(), c, target, max_len, block_size, want)
}

fn admin_cases() -> Vec<Case> {
    let a = |what: &str, c, want| case(what, c, Admin, MAX, 512, want);
    let mut v = vec![
        a(
            "Identify Controller (CNS 1), 4096 bytes",
            identify(1, 4096),
            Ok(FromDevice),
        ),
        a(
            "Identify Namespace (CNS 0), 4096 bytes",
            identify(0, 4096),
            Ok(FromDevice),
        ),
        a(
            "Identify, 1024 bytes (of the 4096 it writes)",
            identify(1, 1024),
            Ok(FromDevice),
        ),
        a("Identify, 1 byte", identify(1, 1), Ok(FromDevice)),
        a("Identify, 4097 bytes", identify(1, 4097), Err(Invalid)),
        a("Identify, 8192 bytes", identify(1, 8192), Err(Invalid)),
        a("Identify, data_len 0", identify(1, 0), Err(Invalid)),
        a(
            "Identify, data_len u32::MAX",
            identify(1, u32::MAX),
            Err(Invalid),
        ),
        case(
            "Identify, 4096 bytes, max_len 4096",
            identify(1, 4096),
            Admin,
            4096,
            512,
            Ok(FromDevice),
        ),
        // The controller writes 4096 bytes whatever data_len says.
        case(
            "Identify, 1024 bytes, max_len 2048",
            identify(1, 1024),
            Admin,
            2048,
            512,
            Err(Invalid),
        ),
        case(
            "Identify, 4096 bytes, max_len 2048",
            identify(1, 4096),
            Admin,
            2048,
            512,
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART (LID 2, NUMD 127): 512 bytes",
            get_log_page(2, 128, 512),
            Ok(FromDevice),
        ),
        a(
            "Get Log Page SMART, data_len 508",
            get_log_page(2, 128, 508),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART, data_len 511",
            get_log_page(2, 128, 511),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART, data_len 513",
            get_log_page(2, 128, 513),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART, data_len 516",
            get_log_page(2, 128, 516),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART, data_len 4096",
            get_log_page(2, 128, 4096),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART, data_len 0",
            get_log_page(2, 128, 0),
            Err(Invalid),
        ),
        a(
            "Get Log Page Error Information, 64 entries: 4096 bytes",
            get_log_page(1, 1024, 4096),
            Ok(FromDevice),
        ),
        a(
            "Get Log Page of 1 dword (NUMD 0)",
            get_log_page(2, 1, 4),
            Ok(FromDevice),
        ),
        a(
            "Get Log Page of 32768 dwords: 128 KiB, all of max_len",
            get_log_page(2, 32768, MAX),
            Ok(FromDevice),
        ),
        a(
            "Get Log Page of 32769 dwords (data_len > max_len)",
            get_log_page(2, 32769, MAX + 4),
            Err(Invalid),
        ),
        a(
            "Get Log Page of 32769 dwords, data_len max_len",
            get_log_page(2, 32769, MAX),
            Err(Invalid),
        ),
        // NUMDU counts: 0x1_ffff + 1 dwords are 512 KiB, NUMDL alone 256 KiB.
        case(
            "Get Log Page, NUMDU 1 NUMDL 0xffff: 512 KiB",
            get_log_page(2, 0x2_0000, 512 * KIB),
            Admin,
            512 * KIB,
            512,
            Ok(FromDevice),
        ),
        case(
            "Get Log Page, NUMDL 0xffff, NUMDU 0, data_len 512 KiB",
            with(get_log_page(2, 0x2_0000, 512 * KIB), |c| c.cdw[1] = 0),
            Admin,
            512 * KIB,
            512,
            Err(Invalid),
        ),
        a(
            "Get Log Page, NUMDU 1 NUMDL 0: 65537 dwords, data_len 128 KiB",
            get_log_page(2, 0x1_0001, MAX),
            Err(Invalid),
        ),
        a(
            "Get Log Page SMART with RAE, LSP and LSI set (they do not count)",
            with(get_log_page(2, 128, 512), |c| {
                c.cdw[0] |= 1 << 15 | 0xf << 8;
                c.cdw[1] |= 0xabcd << 16;
            }),
            Ok(FromDevice),
        ),
        a(
            "Get Log Page with LPOL/LPOU (an offset does not count)",
            with(get_log_page(2, 128, 512), |c| {
                (c.cdw[2], c.cdw[3]) = (0x1000, 1)
            }),
            Ok(FromDevice),
        ),
        a(
            "Get Features LBA Range Type, 4096 bytes",
            get_features(FID_LBA_RANGE_TYPE, 4096),
            Ok(FromDevice),
        ),
        a(
            "Get Features Timestamp, 8 bytes",
            get_features(FID_TIMESTAMP, 8),
            Ok(FromDevice),
        ),
        a(
            "Get Features, 4097 bytes",
            get_features(FID_LBA_RANGE_TYPE, 4097),
            Err(Invalid),
        ),
        a(
            "Get Features, 8192 bytes",
            get_features(FID_LBA_RANGE_TYPE, 8192),
            Err(Invalid),
        ),
        case(
            "Get Features, 64 bytes, max_len 2048",
            get_features(FID_LBA_RANGE_TYPE, 64),
            Admin,
            2048,
            512,
            Err(Invalid),
        ),
        a(
            "Set Features Timestamp, 8 bytes",
            set_features(FID_TIMESTAMP, 0, 8),
            Ok(ToDevice),
        ),
        a(
            "Set Features Host Identifier, 16 bytes",
            set_features(FID_HOST_IDENTIFIER, 0, 16),
            Ok(ToDevice),
        ),
        a(
            "Set Features LBA Range Type, 4096 bytes (not a setting for user space)",
            set_features(FID_LBA_RANGE_TYPE, 0, 4096),
            Err(Forbidden),
        ),
        a(
            "Set Features Timestamp, 4097 bytes",
            set_features(FID_TIMESTAMP, 0, 4097),
            Err(Invalid),
        ),
        // Host Memory Buffer: CDW13/14 point to a descriptor list, host
        // memory the controller may then use as its own.
        a(
            "Set Features Host Memory Buffer, enable, descriptor list at 0x1000",
            with(set_features(FID_HOST_MEMORY_BUFFER, 1, 0), |c| {
                (c.cdw[2], c.cdw[3], c.cdw[4], c.cdw[5]) = (0x100, 0x1000, 0, 1)
            }),
            Err(Forbidden),
        ),
        a(
            "Get Features Host Memory Buffer, 4096 bytes",
            get_features(FID_HOST_MEMORY_BUFFER, 4096),
            Err(Forbidden),
        ),
        a(
            "Set Features Volatile Write Cache on (the disk turned it off)",
            set_features(FID_VOLATILE_WRITE_CACHE, 1, 0),
            Err(Forbidden),
        ),
        a(
            "Set Features Number of Queues (the driver's)",
            set_features(FID_NUMBER_OF_QUEUES, 0x0003_0003, 0),
            Err(Forbidden),
        ),
        a(
            "Get Features of vendor feature 0xc0",
            get_features(0xc0, 0),
            Err(Forbidden),
        ),
        a(
            "Set Features of vendor feature 0xc0",
            set_features(0xc0, 1, 0),
            Err(Forbidden),
        ),
        a("Keep Alive (no data)", no_data(KEEP_ALIVE), Ok(NoData)),
        a(
            "Keep Alive with data_len 4096",
            with(no_data(KEEP_ALIVE), |c| c.data_len = 4096),
            Err(Invalid),
        ),
        // Commands that change the namespace or the controller under the
        // driver, or that are the driver's: refused, with or without data.
        a(
            "Format NVM to LBA format 4 (4096-byte blocks)",
            cmd(FORMAT_NVM, 1, 0, [4, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Format NVM to LBA format 1 (8 bytes of metadata)",
            cmd(FORMAT_NVM, 1, 0, [1, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Sanitize (block erase)",
            cmd(SANITIZE, 0, 0, [2, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Firmware Commit (no data)",
            no_data(FW_COMMIT),
            Err(Forbidden),
        ),
        a(
            "Firmware Commit, activate at once (CA 3)",
            cmd(FW_COMMIT, 0, 0, [3 << 3, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Asynchronous Event Request",
            no_data(ASYNC_EVENT_REQUEST),
            Err(Forbidden),
        ),
        a(
            "Device Self-test",
            cmd(DEVICE_SELF_TEST, 0, 0, [1, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Namespace Management, delete (SEL 1, no data)",
            cmd(NS_MANAGEMENT, 1, 0, [1, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "reserved admin opcode 0x3c (no data)",
            no_data(0x3c),
            Err(Forbidden),
        ),
        a(
            "vendor admin opcode 0xc0 (no data)",
            no_data(0xc0),
            Err(Forbidden),
        ),
        a(
            "Format NVM with flags 1: the unsupported field first",
            with(cmd(FORMAT_NVM, 1, 0, [4, 0, 0, 0, 0, 0]), |c| c.flags = 1),
            Err(Invalid),
        ),
        // Data commands, refused before their data is looked at.
        a(
            "Namespace Management, 4096 bytes",
            cmd(NS_MANAGEMENT, 0, 4096, [0; 6]),
            Err(Forbidden),
        ),
        a(
            "Firmware Image Download, 4096 bytes",
            cmd(FW_IMAGE_DOWNLOAD, 0, 4096, [1023, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Namespace Attachment, 4096 bytes",
            cmd(NS_ATTACHMENT, 1, 4096, [0; 6]),
            Err(Forbidden),
        ),
        a(
            "Directive Send, 4096 bytes",
            cmd(DIRECTIVE_SEND, 1, 4096, [1023, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Directive Receive, 4096 bytes",
            cmd(DIRECTIVE_RECEIVE, 1, 4096, [1023, 0, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Security Send, 512 bytes",
            cmd(SECURITY_SEND, 0, 512, [0, 512, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "Security Receive, 512 bytes",
            cmd(SECURITY_RECEIVE, 0, 512, [0, 512, 0, 0, 0, 0]),
            Err(Forbidden),
        ),
        a(
            "vendor admin opcode 0xc2 (from the device), 4096 bytes",
            cmd(0xc2, 0, 4096, [0; 6]),
            Err(Forbidden),
        ),
        a(
            "vendor admin opcode 0xc1 (to the device), 1 byte",
            cmd(0xc1, 0, 1, [0; 6]),
            Err(Forbidden),
        ),
        // Both ways, with data or without.
        a(
            "admin opcode 0xff (both ways), 4096 bytes",
            cmd(0xff, 0, 4096, [0; 6]),
            Err(Forbidden),
        ),
        a(
            "admin opcode 0x03 (both ways), 4096 bytes",
            cmd(0x03, 0, 4096, [0; 6]),
            Err(Forbidden),
        ),
        a(
            "admin opcode 0xff (both ways), no data",
            no_data(0xff),
            Err(Forbidden),
        ),
        // Unsupported fields.
        a(
            "Identify with flags 1",
            with(identify(1, 4096), |c| c.flags = 1),
            Err(Invalid),
        ),
        a(
            "Identify with flags 0x80",
            with(identify(1, 4096), |c| c.flags = 0x80),
            Err(Invalid),
        ),
        a(
            "Identify with a metadata pointer",
            with(identify(1, 4096), |c| c.metadata = 0x7f00_0000_0000),
            Err(Invalid),
        ),
        a(
            "Identify with metadata_len 8",
            with(identify(1, 4096), |c| c.metadata_len = 8),
            Err(Invalid),
        ),
        a(
            "Identify with a metadata pointer and metadata_len 8",
            with(identify(1, 4096), |c| {
                (c.metadata, c.metadata_len) = (0x7f00_0000_0000, 8)
            }),
            Err(Invalid),
        ),
        a(
            "Get Log Page with flags 2",
            with(get_log_page(2, 128, 512), |c| c.flags = 2),
            Err(Invalid),
        ),
        a(
            "Keep Alive with a metadata pointer",
            with(no_data(KEEP_ALIVE), |c| c.metadata = 8),
            Err(Invalid),
        ),
        a(
            "Keep Alive with metadata_len 1",
            with(no_data(KEEP_ALIVE), |c| c.metadata_len = 1),
            Err(Invalid),
        ),
    ];
    // The driver's own commands, and those that change what it drives,
    // with or without data.
    for op in ADMIN_FORBIDDEN {
        v.push(a(
            &format!("admin opcode {op:#04x} (forbidden), no data"),
            no_data(op),
            Err(Forbidden),
        ));
        v.push(a(
            &format!("admin opcode {op:#04x} (forbidden), 4096 bytes"),
            cmd(op, 0, 4096, [0x003f_0001, 0x0001_0001, 0, 0, 0, 0]),
            Err(Forbidden),
        ));
    }
    v.push(a(
        "Create I/O SQ 2 of 64 entries on CQ 1",
        cmd(CREATE_IO_SQ, 0, 0, [0x003f_0002, 0x0001_0001, 0, 0, 0, 0]),
        Err(Forbidden),
    ));
    v.push(a(
        "Abort of command 5 on SQ 1",
        cmd(ABORT, 0, 0, [0x0005_0001, 0, 0, 0, 0, 0]),
        Err(Forbidden),
    ));
    v
}

fn io_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for bs in [512u32, 4096] {
        let k =
            |what: &str, c, want| case(format!("{what} ({bs}-byte blocks)"), c, Io, MAX, bs, want);
        let per_4k = 4096 / bs;
        v.extend([
            k("Read of 4 KiB", lba_cmd(READ, per_4k, 4096), Ok(FromDevice)),
            k("Write of 4 KiB", lba_cmd(WRITE, per_4k, 4096), Ok(ToDevice)),
            k("Read of 1 block", lba_cmd(READ, 1, bs), Ok(FromDevice)),
            k("Write of 1 block", lba_cmd(WRITE, 1, bs), Ok(ToDevice)),
            k(
                "Read of 128 KiB (max_len)",
                lba_cmd(READ, MAX / bs, MAX),
                Ok(FromDevice),
            ),
            k(
                "Write of 128 KiB (max_len)",
                lba_cmd(WRITE, MAX / bs, MAX),
                Ok(ToDevice),
            ),
            k(
                "Read of one block more than data_len",
                lba_cmd(READ, per_4k + 1, 4096),
                Err(Invalid),
            ),
            k(
                "Write of one block more than data_len",
                lba_cmd(WRITE, per_4k + 1, 4096),
                Err(Invalid),
            ),
            k(
                "Read of 4 KiB with one block more in data_len",
                lba_cmd(READ, per_4k, 4096 + bs),
                Err(Invalid),
            ),
            k(
                "Write of 4 KiB with one block less in data_len",
                lba_cmd(WRITE, per_4k, 4096 - bs),
                Err(Invalid),
            ),
            k(
                "Read of 4 KiB with data_len one byte short",
                lba_cmd(READ, per_4k, 4095),
                Err(Invalid),
            ),
            k(
                "Write of 4 KiB with data_len one byte over",
                lba_cmd(WRITE, per_4k, 4097),
                Err(Invalid),
            ),
            k(
                "Read of 128 KiB + one block",
                lba_cmd(READ, MAX / bs + 1, MAX + bs),
                Err(Invalid),
            ),
            k(
                "Read of 128 KiB + one block, data_len 128 KiB",
                lba_cmd(READ, MAX / bs + 1, MAX),
                Err(Invalid),
            ),
            k(
                "Read of 65536 blocks (NLB 0xffff), data_len 128 KiB",
                lba_cmd(READ, 65536, MAX),
                Err(Invalid),
            ),
            k("Read, data_len 0", lba_cmd(READ, 1, 0), Err(Invalid)),
            k("Write, data_len 0", lba_cmd(WRITE, 1, 0), Err(Invalid)),
            k(
                "Read, data_len u32::MAX",
                lba_cmd(READ, 65536, u32::MAX),
                Err(Invalid),
            ),
            k(
                "Write of 4 KiB with FUA, LR and PRINFO (they do not count)",
                with(lba_cmd(WRITE, per_4k, 4096), |c| {
                    c.cdw[2] |= 1 << 31 | 1 << 30 | 0xf << 26
                }),
                Ok(ToDevice),
            ),
            k(
                "Read of 4 KiB with DSM hints in CDW13 and tags in CDW14/15",
                with(lba_cmd(READ, per_4k, 4096), |c| {
                    (c.cdw[3], c.cdw[4], c.cdw[5]) = (0xff, 0xdead_beef, 0xffff_ffff)
                }),
                Ok(FromDevice),
            ),
            k("Flush", no_data(FLUSH), Ok(NoData)),
            k("Flush of namespace 1", cmd(FLUSH, 1, 0, [0; 6]), Ok(NoData)),
            k(
                "Flush with data_len 4096",
                cmd(FLUSH, 1, 4096, [0; 6]),
                Err(Invalid),
            ),
            k(
                "Flush with data_len 1",
                cmd(FLUSH, 1, 1, [0; 6]),
                Err(Invalid),
            ),
            k(
                "Write Zeroes of 8 blocks (no data)",
                lba_cmd(WRITE_ZEROES, 8, 0),
                Ok(NoData),
            ),
            k(
                "Write Zeroes with data_len 4096",
                lba_cmd(WRITE_ZEROES, per_4k, 4096),
                Err(Invalid),
            ),
            k(
                "Write Uncorrectable (no data)",
                lba_cmd(WRITE_UNCORRECTABLE, 1, 0),
                Ok(NoData),
            ),
            k("Verify (no data)", lba_cmd(VERIFY, 8, 0), Ok(NoData)),
            k(
                "Dataset Management, 1 range: 16 bytes",
                dsm(1, 16),
                Ok(ToDevice),
            ),
            k(
                "Dataset Management, 256 ranges: 4096 bytes",
                dsm(256, 4096),
                Ok(ToDevice),
            ),
            k(
                "Dataset Management, 2 ranges, data_len 16",
                dsm(2, 16),
                Err(Invalid),
            ),
            k(
                "Dataset Management, 1 range, data_len 32",
                dsm(1, 32),
                Err(Invalid),
            ),
            k(
                "Dataset Management, 1 range, data_len 4096",
                dsm(1, 4096),
                Err(Invalid),
            ),
            k(
                "Dataset Management, 256 ranges, data_len 4080",
                dsm(256, 4080),
                Err(Invalid),
            ),
            k("Dataset Management, data_len 0", dsm(1, 0), Err(Invalid)),
            k(
                "Dataset Management, 1 range, CDW10 31:8 (reserved) set: 16 bytes",
                with(dsm(1, 16), |c| c.cdw[0] |= 0xffff_ff00),
                Ok(ToDevice),
            ),
            // Opcodes that are the driver's on the admin queue are other
            // commands here.
            k(
                "opcode 0x01 (Write, not Create I/O SQ)",
                lba_cmd(0x01, per_4k, 4096),
                Ok(ToDevice),
            ),
            k(
                "opcode 0x00 (Flush, not Delete I/O SQ)",
                no_data(0x00),
                Ok(NoData),
            ),
            k(
                "opcode 0x04 (Write Uncorrectable, not Delete I/O CQ)",
                lba_cmd(0x04, 1, 0),
                Ok(NoData),
            ),
            k(
                "opcode 0x08 (Write Zeroes, not Abort)",
                lba_cmd(0x08, 1, 0),
                Ok(NoData),
            ),
            k(
                "opcode 0x7c, no data (reserved, not Doorbell Buffer Config)",
                no_data(0x7c),
                Err(Forbidden),
            ),
            k(
                "opcode 0x05 (Compare, not Create I/O CQ), 4096 bytes",
                lba_cmd(COMPARE, per_4k, 4096),
                Err(Forbidden),
            ),
            // Admin commands' numbers mean other things here.
            k(
                "opcode 0x06 (not Identify), 4096 bytes",
                cmd(0x06, 1, 4096, [1, 0, 0, 0, 0, 0]),
                Err(Forbidden),
            ),
            k(
                "opcode 0x0a (not Get Features), 8 bytes",
                cmd(0x0a, 1, 8, [FID_TIMESTAMP.into(), 0, 0, 0, 0, 0]),
                Err(Forbidden),
            ),
            k(
                "opcode 0x02 with Get Log Page's fields (a Read of 1 block), 4096 bytes",
                with(get_log_page(2, 1024, 4096), |c| c.nsid = 1),
                if bs == 4096 {
                    Ok(FromDevice)
                } else {
                    Err(Invalid)
                },
            ),
            k(
                "opcode 0x09 with Set Features' fields (DSM of 4 ranges), 4096 bytes",
                set_features(FID_LBA_RANGE_TYPE, 0, 4096),
                Err(Invalid),
            ),
            k(
                "Reservation Report, 4096 bytes",
                cmd(RESERVATION_REPORT, 1, 4096, [1023, 1, 0, 0, 0, 0]),
                Err(Forbidden),
            ),
            k(
                "I/O opcode 0x03 (both ways), 4096 bytes",
                lba_cmd(0x03, per_4k, 4096),
                Err(Forbidden),
            ),
            k(
                "I/O opcode 0x03 (both ways), no data",
                lba_cmd(0x03, per_4k, 0),
                Err(Forbidden),
            ),
            k(
                "vendor I/O opcode 0x80 (no data)",
                cmd(0x80, 1, 0, [0; 6]),
                Err(Forbidden),
            ),
            k(
                "vendor I/O opcode 0x82 (from the device), 4096 bytes",
                cmd(0x82, 1, 4096, [0; 6]),
                Err(Forbidden),
            ),
            k(
                "Write with flags 1",
                with(lba_cmd(WRITE, per_4k, 4096), |c| c.flags = 1),
                Err(Invalid),
            ),
            k(
                "Write with a metadata pointer",
                with(lba_cmd(WRITE, per_4k, 4096), |c| {
                    c.metadata = 0x7f00_0000_0000
                }),
                Err(Invalid),
            ),
            k(
                "Write with metadata_len 8",
                with(lba_cmd(WRITE, per_4k, 4096), |c| c.metadata_len = 8),
                Err(Invalid),
            ),
            k(
                "Read with metadata_len 8 per block",
                with(lba_cmd(READ, per_4k, 4096), |c| c.metadata_len = 8 * per_4k),
                Err(Invalid),
            ),
            k(
                "Flush with a metadata pointer",
                with(no_data(FLUSH), |c| c.metadata = 0x7f00_0000_0000),
                Err(Invalid),
            ),
            k(
                "Flush with flags 0x40",
                with(no_data(FLUSH), |c| c.flags = 0x40),
                Err(Invalid),
            ),
        ]);
    }
    // Block size matters: 8 blocks are 4 KiB of 512 and 32 KiB of 4096.
    v.push(case(
        "Read of 8 blocks of 4096, data_len 4096",
        lba_cmd(READ, 8, 4096),
        Io,
        MAX,
        4096,
        Err(Invalid),
    ));
    v.push(case(
        "Read of 8 blocks of 4096, data_len 32 KiB",
        lba_cmd(READ, 8, 32 * KIB),
        Io,
        MAX,
        4096,
        Ok(FromDevice),
    ));
    v.push(case(
        "Read of 1 block of 512, data_len 4096",
        lba_cmd(READ, 1, 4096),
        Io,
        MAX,
        512,
        Err(Invalid),
    ));
    v.push(case(
        "Read, block size 0",
        lba_cmd(READ, 1, 512),
        Io,
        MAX,
        0,
        Err(Invalid),
    ));
    v.push(case(
        "Read of 1 block of 64 KiB",
        lba_cmd(READ, 1, 64 * KIB),
        Io,
        MAX,
        64 * KIB,
        Ok(FromDevice),
    ));
    v.push(case(
        "Read of 4 KiB, max_len 2048",
        lba_cmd(READ, 8, 4096),
        Io,
        2048,
        512,
        Err(Invalid),
    ));
    v.push(case(
        "Read of 2 KiB, max_len 2048",
        lba_cmd(READ, 4, 2048),
        Io,
        2048,
        512,
        Ok(FromDevice),
    ));
    v.push(case(
        "Read of 512 bytes, max_len 0",
        lba_cmd(READ, 1, 512),
        Io,
        0,
        512,
        Err(Invalid),
    ));
    v.push(case(
        "Flush, max_len 0",
        no_data(FLUSH),
        Io,
        0,
        512,
        Ok(NoData),
    ));
    v
}

fn run_cases(cases: Vec<Case>) {
    let total = cases.len();
    let mut wrong = Vec::new();
    for (what, c, target, max_len, bs, want) in cases {
        let got = check(&c, target, max_len, bs);
        if got != want {
            wrong.push(format!(
                "{what} ({target:?}, max_len {max_len}): expected {want:?}, got {got:?}\n    {c:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {total} cases wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn nvme_passthru_check_admin_commands() {
    run_cases(admin_cases());
}

/// Every admin opcode, without data and with a page of it: the five user
/// space may send get past rule 2 (whatever the data rules then say), every
/// other is `Forbidden`: the driver's, Format NVM, Sanitize, Firmware
/// Commit, vendor-specific (C0h-FFh) and reserved ones alike. Every I/O
/// opcode: the seven NVM commands pass, vendor-specific (80h-FFh) and the
/// rest are `Forbidden`.
#[test]
fn nvme_passthru_check_admin_allow_list() {
    let mut wrong = Vec::new();
    for op in 0..=255u8 {
        // CDW10 1: for Get and Set Features, Arbitration, a feature both allow.
        for c in [
            cmd(op, 0, 0, [1, 0, 0, 0, 0, 0]),
            cmd(op, 0, 4096, [1, 0, 0, 0, 0, 0]),
        ] {
            let got = check(&c, Admin, MAX, 512);
            let allowed = ADMIN_ALLOWED.contains(&op);
            if allowed == (got == Err(Forbidden)) {
                wrong.push(format!(
                    "admin opcode {op:#04x}, data_len {}: {}, got {got:?}",
                    c.data_len,
                    if allowed {
                        "allowed"
                    } else {
                        "expected Err(Forbidden)"
                    }
                ));
            }
        }
        // On an I/O queue the same numbers are other commands, with an
        // allow-list of their own.
        let allowed = IO_ALLOWED.contains(&op);
        if allowed == (check(&no_data(op), Io, MAX, 512) == Err(Forbidden)) {
            wrong.push(format!(
                "I/O opcode {op:#04x}: {}",
                if allowed {
                    "allowed, yet Forbidden"
                } else {
                    "expected Err(Forbidden)"
                }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every feature, by Get Features and by Set Features, without data: only
/// the allowed ones get through; a Host Memory Buffer (whose CDW13/14 give
/// the controller a list of host memory) never does, whatever the CDWs say.
#[test]
fn nvme_passthru_check_feature_allow_lists() {
    let mut wrong = Vec::new();
    for fid in 0..=255u8 {
        for (what, c, allowed) in [
            ("Get", get_features(fid, 0), get_allowed(fid)),
            ("Set", set_features(fid, 1, 0), set_allowed(fid)),
        ] {
            let got = check(&c, Admin, MAX, 512);
            if allowed == (got == Err(Forbidden)) {
                wrong.push(format!(
                    "{what} Features of FID {fid:#04x}: {}, got {got:?}",
                    if allowed {
                        "allowed"
                    } else {
                        "expected Err(Forbidden)"
                    }
                ));
            }
        }
        // Select (SEL), Save (SV) and the value do not change the answer.
        let other = with(set_features(fid, u32::MAX, 0), |c| c.cdw[0] |= 0xffff_ff00);
        if check(&other, Admin, MAX, 512) != check(&set_features(fid, 1, 0), Admin, MAX, 512) {
            wrong.push(format!(
                "Set Features of FID {fid:#04x}: CDW10 31:8 changed the answer"
            ));
        }
    }
    for cdw in [[0u32; 4], [0x100, 0x1000, 0, 1], [u32::MAX; 4]] {
        let hmb = with(set_features(FID_HOST_MEMORY_BUFFER, 1, 0), |c| {
            c.cdw[2..].copy_from_slice(&cdw)
        });
        if check(&hmb, Admin, MAX, 512) != Err(Forbidden) {
            wrong.push(format!(
                "Set Features Host Memory Buffer, CDW12-15 {cdw:x?}: let through"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn nvme_passthru_check_io_commands() {
    run_cases(io_cases());
}

/// Most features have no data structure: their value is in CDW11 (Set) or
/// the completion's DW0 (Get), and nvme-cli sends them with `data_len` 0
/// (`nvme get-feature -f 7`, `nvme set-feature -f 6 -v 1`; stage 16's
/// `ioctls.py` and `nvme_cli.py` do). Nothing moves, so they must pass.
#[test]
fn nvme_passthru_check_features_without_data() {
    let cases = [
        (
            "Get Features Number of Queues",
            get_features(FID_NUMBER_OF_QUEUES, 0),
            FromDevice,
        ),
        (
            "Get Features Arbitration",
            get_features(FID_ARBITRATION, 0),
            FromDevice,
        ),
        (
            "Get Features Volatile Write Cache",
            get_features(FID_VOLATILE_WRITE_CACHE, 0),
            FromDevice,
        ),
        (
            "Get Features Number of Queues, supported capabilities (SEL 3)",
            with(get_features(FID_NUMBER_OF_QUEUES, 0), |c| {
                c.cdw[0] |= 3 << 8
            }),
            FromDevice,
        ),
        (
            "Set Features Arbitration",
            set_features(FID_ARBITRATION, 0x0303, 0),
            ToDevice,
        ),
        (
            "Set Features Temperature Threshold",
            set_features(0x04, 0x0157, 0),
            ToDevice,
        ),
    ];
    let mut wrong = Vec::new();
    for (what, c, dir) in cases {
        // No data moves: `None`, or the opcode's direction with nothing to copy.
        let got = check(&c, Admin, MAX, 512);
        if got != Ok(NoData) && got != Ok(dir) {
            wrong.push(format!(
                "{what}, data_len 0: expected Ok(None) or Ok({dir:?}), got {got:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

// ---- check: properties ---------------------------------------------------------------

/// What a command transfers, by the specification (not by `check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transfer {
    /// The opcode moves no data.
    Nothing,
    /// Exactly this many bytes (the command's own fields say).
    Exact(u64),
    /// Always this many bytes, of which user space may take fewer (Identify).
    Whole(u64),
    /// Up to this many bytes, depending on the feature (Get/Set Features).
    UpTo(u64),
    /// Both ways, or a data command whose fields do not bound its transfer.
    Unbounded,
}

fn spec_transfer(c: &Passthru, target: Target, block_size: u32) -> Transfer {
    match c.opcode & 0b11 {
        0b00 => return Transfer::Nothing,
        0b11 => return Transfer::Unbounded,
        _ => {}
    }
    let dw = |i: usize| u64::from(c.cdw[i]);
    match (target, c.opcode) {
        (Io, READ | WRITE) => Transfer::Exact((dw(2) % 65536 + 1) * u64::from(block_size)),
        (Io, DSM) => Transfer::Exact((dw(0) % 256 + 1) * 16),
        (Admin, GET_LOG_PAGE) => Transfer::Exact(((dw(0) >> 16) + (dw(1) % 65536) * 65536 + 1) * 4),
        (Admin, IDENTIFY) => Transfer::Whole(4096),
        (Admin, GET_FEATURES | SET_FEATURES) => Transfer::UpTo(4096),
        _ => Transfer::Unbounded,
    }
}

fn opcode_direction(opcode: u8) -> Option<Direction> {
    match opcode & 0b11 {
        0b00 => Some(NoData),
        0b01 => Some(ToDevice),
        0b10 => Some(FromDevice),
        _ => None,
    }
}

fn data_len() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(4096),
        Just(512),
        any::<u32>(),
        1u32..=256 * KIB,
        (1u32..=1024).prop_map(|n| n * 4),
        (1u32..=512).prop_map(|n| n * 16),
        (1u32..=512).prop_map(|n| n * 512),
        (1u32..=64).prop_map(|n| n * 4096),
    ]
}

fn cdw() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        Just(0u32),
        0u32..=0xff,
        0u32..=0x1_0000,
        (0u32..=0x1_ffff, 0u32..=0xffff).prop_map(|(n, low)| n << 16 | low),
    ]
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![Just(Admin), Just(Io)]
}

fn max_len() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => Just(MAX),
        1 => any::<u32>(),
        1 => 0u32..=8192,
        1 => (0u32..=32).prop_map(|n| n * 4096),
    ]
}

fn block_size() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => (9u32..=16).prop_map(|s| 1 << s),
        1 => any::<u32>(),
        1 => Just(0u32),
    ]
}

/// A command whose `data_len` is often what its own fields transfer, and
/// whose unsupported fields are often 0, so that `check` says yes now and then.
fn plausible() -> impl Strategy<Value = (Passthru, Target, u32, u32)> {
    (
        any_passthru(),
        target(),
        max_len(),
        block_size(),
        0u8..4,
        1u32..=4096,
        any::<bool>(),
    )
        .prop_map(|(mut c, target, max_len, bs, fix, small, clean)| {
            if clean {
                (c.flags, c.metadata, c.metadata_len) = (0, 0, 0);
            }
            if fix > 0 {
                c.data_len = match spec_transfer(&c, target, bs) {
                    Transfer::Nothing => 0,
                    Transfer::Exact(n) => n.min(u64::from(u32::MAX)) as u32,
                    Transfer::Whole(n) | Transfer::UpTo(n) => small.min(n as u32),
                    Transfer::Unbounded => c.data_len,
                };
            }
            (c, target, max_len, bs)
        })
}

/// What must hold of `check`'s answer for any command (see the module doc).
fn check_is_sound(
    c: &Passthru,
    target: Target,
    max_len: u32,
    bs: u32,
) -> Result<(), TestCaseError> {
    let got = check(c, target, max_len, bs);
    let clean = c.flags == 0 && c.metadata == 0 && c.metadata_len == 0;
    let refused = forbidden(target, c);
    match got {
        Err(Forbidden) => {
            prop_assert!(
                refused,
                "Forbidden for opcode {:#04x} on {:?}",
                c.opcode,
                target
            );
            prop_assert!(
                clean,
                "Forbidden before the unsupported fields were looked at"
            );
        }
        Err(Invalid) => {
            prop_assert!(
                !(clean && refused),
                "Invalid for forbidden opcode {:#04x}",
                c.opcode
            );
        }
        Ok(dir) => {
            prop_assert!(clean, "flags, metadata or metadata_len set, yet Ok");
            prop_assert!(!refused, "forbidden opcode {:#04x} let through", c.opcode);
            prop_assert!(
                c.data_len <= max_len,
                "data_len {} > max_len {}",
                c.data_len,
                max_len
            );
            let transfer = spec_transfer(c, target, bs);
            if c.data_len == 0 {
                // Nothing to copy: a no-data opcode (or one both ways, which
                // the controller then refuses), or Get/Set Features of a
                // feature without data.
                match transfer {
                    Transfer::Nothing | Transfer::Unbounded => {
                        prop_assert_eq!(dir, NoData);
                    }
                    Transfer::UpTo(_) => {
                        prop_assert!(dir == NoData || Some(dir) == opcode_direction(c.opcode));
                    }
                    t => {
                        prop_assert!(false, "data_len 0 for {:?}, yet {:?}", t, dir);
                    }
                }
                if transfer == Transfer::Unbounded {
                    prop_assert_eq!(
                        c.opcode & 0b11,
                        0b11,
                        "data command {:#04x} without data",
                        c.opcode
                    );
                }
            } else {
                prop_assert_eq!(Some(dir), opcode_direction(c.opcode), "direction");
                prop_assert!(dir != NoData);
                let len = u64::from(c.data_len);
                match transfer {
                    Transfer::Exact(n) => {
                        prop_assert_eq!(len, n, "data_len is not the transfer");
                    }
                    Transfer::Whole(n) | Transfer::UpTo(n) => {
                        prop_assert!(len <= n, "data_len {} > {}", len, n);
                        prop_assert!(
                            n <= u64::from(max_len),
                            "{} bytes into max_len {}",
                            n,
                            max_len
                        );
                    }
                    t => {
                        prop_assert!(false, "Ok({:?}) with data for {:?}", dir, t);
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(20000))]

    /// Any command, queue, `max_len` and block size: no panic; a refusal
    /// for unsupported fields and the driver's commands; and when `check`
    /// lets data through, the transfer the command asks for (by the
    /// specification) fits in `max_len` and `data_len` is that transfer
    /// (at most, for Identify and Features).
    #[test]
    fn nvme_passthru_check_is_sound((c, target, max_len, bs) in plausible()) {
        check_is_sound(&c, target, max_len, bs)?;
    }

    /// The same for wholly arbitrary values.
    #[test]
    fn nvme_passthru_check_is_sound_for_anything(
        c in any_passthru(),
        target in target(),
        max_len in any::<u32>(),
        bs in any::<u32>(),
    ) {
        check_is_sound(&c, target, max_len, bs)?;
    }

    /// What the driver passes through unchanged (CDW2/3, the buffer's
    /// address, the timeout) does not change the answer.
    #[test]
    fn nvme_passthru_check_ignores_pass_through_fields(
        (c, target, max_len, bs) in plausible(),
        cdw2 in any::<u32>(),
        cdw3 in any::<u32>(),
        addr in any::<u64>(),
        timeout_ms in any::<u32>(),
    ) {
        let other = Passthru { cdw2, cdw3, addr, timeout_ms, ..c };
        prop_assert_eq!(check(&c, target, max_len, bs), check(&other, target, max_len, bs));
    }

    /// A well-formed command of a kind with a rule, whose `data_len` is what
    /// it transfers and fits in `max_len`: accepted, in the opcode's direction.
    #[test]
    fn nvme_passthru_check_accepts_well_formed(
        kind in 0u8..7,
        raw in any::<u32>(),
        small in 1u32..=4096,
        cdw in prop::array::uniform6(any::<u32>()),
        bs in (9u32..=16).prop_map(|s| 1 << s),
        max_len in prop_oneof![Just(MAX), 64 * KIB..=1 << 24, Just(1 << 24)],
    ) {
        // As much as fits in max_len (and the command's field), at least 1.
        let pick = |most: u32| 1 + raw % most;
        let blocks = pick((max_len / bs).min(65536));
        let (ranges, dwords) = (pick(256), pick(max_len / 4));
        let (c, target, dir) = match kind {
            0 => (lba_cmd(READ, blocks, blocks * bs), Io, FromDevice),
            1 => (lba_cmd(WRITE, blocks, blocks * bs), Io, ToDevice),
            2 => (dsm(ranges, ranges * 16), Io, ToDevice),
            3 => (get_log_page(cdw[0] as u8, dwords, dwords * 4), Admin, FromDevice),
            4 => (identify(cdw[0] as u8, small), Admin, FromDevice),
            5 => {
                let fids: Vec<u8> = (0..=255).filter(|&f| get_allowed(f)).collect();
                (get_features(fids[raw as usize % fids.len()], small), Admin, FromDevice)
            }
            _ => {
                let fids: Vec<u8> = (0..=255).filter(|&f| set_allowed(f)).collect();
                (set_features(fids[raw as usize % fids.len()], cdw[1], small), Admin, ToDevice)
            }
        };
        // Fields that do not count: FUA, LR, PRINFO, DTYPE and CDW13-15 of
        // a Read/Write; DSM's reserved CDW10 31:8 and its attributes; RAE,
        // LSP, LSI, the offset and CDW14/15 of Get Log Page; CNTID, SEL, SV,
        // the value and the rest of Identify and Features.
        let c = with(c, |c| match kind {
            0 | 1 => {
                c.cdw[2] |= cdw[2] & 0xffff_0000;
                c.cdw[3..].copy_from_slice(&cdw[3..]);
            }
            2 => {
                c.cdw[0] |= cdw[0] & 0xffff_ff00;
                c.cdw[1] = cdw[1];
            }
            3 => {
                c.cdw[0] |= cdw[0] & 0xff00;
                c.cdw[1] |= cdw[1] & 0xffff_0000;
                c.cdw[2..].copy_from_slice(&cdw[2..]);
            }
            _ => {
                c.cdw[0] |= cdw[0] & 0xffff_ff00;
                c.cdw[1..].copy_from_slice(&cdw[1..]);
            }
        });
        prop_assert!(c.data_len <= max_len);
        prop_assert_eq!(check(&c, target, max_len, bs), Ok(dir), "{:?}", c);
    }
}

// ---- the file: core only, no unsafe, the kernel's rustc and clippy lints -------------

fn passthru_file() -> &'static Path {
    Path::new(crate::NVME_PASSTHRU_FILE)
}

#[test]
fn nvme_passthru_uses_core_only_and_no_unsafe() {
    crate::p9_kernel_lints::assert_core_only_and_no_unsafe(passthru_file());
}

/// A `no_std` crate that includes `passthru.rs` the way `rnvme.rs` does.
fn lint_wrapper(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    // passthru.rs takes its opcodes from the NVMe library's command.rs.
    let command = Path::new(crate::REPO).join("solutions/lib/nvme/command.rs");
    let body = format!(
        "#[allow(dead_code)] // chardev.rs is not here\n\
         #[path = {:?}]\nmod passthru;\n\
         #[allow(dead_code)] // passthru.rs uses the opcodes only\n\
         mod nvme {{\n    #[path = {:?}]\n    pub(crate) mod command;\n}}\n",
        passthru_file().display().to_string(),
        command.display().to_string()
    );
    crate::p9_kernel_lints::stand_in_crate(&format!("nvme-passthru-lints-{name}"), &body)
}

#[test]
fn nvme_passthru_builds_with_the_kernel_rustc_lints() {
    let (dir, lib) = lint_wrapper("rustc");
    crate::p9_kernel_lints::check_rustc_lints(&dir, &lib);
}

#[test]
fn nvme_passthru_is_clippy_clean_with_the_kernel_lints() {
    let (dir, lib) = lint_wrapper("clippy");
    crate::p9_kernel_lints::check_clippy_lints(&dir, &lib);
}
