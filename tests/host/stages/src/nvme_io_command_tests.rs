//! Stage 12: `io_command.rs`'s Read, Write and Flush commands, transfer
//! pieces and I/O error mapping, against the NVMe 1.4 specification, with
//! every expected value built by the test (never by the code under test).
//!
//! Read (6.9, opcode 02h), Write (6.15, opcode 01h) and Flush (6.8, opcode
//! 00h) in a submission queue entry (4.2):
//!
//! ```text
//!  dword  bits    field
//!  0      7:0     OPC    opcode
//!         9:8     FUSE   0, 15:14 PSDT 0 (PRPs), 31:16 CID
//!  1              NSID
//!  2-5            reserved, MPTR: 0
//!  6-7            PRP1   (Flush: 0)
//!  8-9            PRP2   (Flush: 0)
//!  10             SLBA   bits 31:0   (Read/Write; Flush: 0)
//!  11             SLBA   bits 63:32
//!  12     15:0    NLB    number of logical blocks, 0's based
//!         30      FUA    force unit access (the other bits: 0 here)
//!  13-15          DSM, EILBRT, ELBAT/ELBATM: 0 here
//! ```
//!
//! Status (4.6.1), the completion's DW3 bits 31:17 (bit 16 is the phase
//! tag): SC 24:17, SCT 27:25, CRD 29:28, M 30, DNR 31. Success is SCT 0,
//! SC 0, whatever CRD, M and DNR say. The codes the block layer tells
//! apart (4.6.1.2.1 generic, 4.6.1.2.4 media and data integrity errors):
//!
//! ```text
//!  SCT SC   meaning                                  IoError
//!  0   01h  Invalid Command Opcode                   NotSupported
//!  0   02h  Invalid Field in Command                 NotSupported
//!  0   0Bh  Invalid Namespace or Format              NotSupported
//!  0   80h  LBA Out of Range                         Target
//!  0   81h  Capacity Exceeded                        NoSpace
//!  2   80h  Write Fault                              Medium
//!  2   81h  Unrecovered Read Error                   Medium
//!  2   86h  Access Denied                            Medium
//!  2   87h  Deallocated or Unwritten Logical Block   Medium
//!  anything else that is not a success               Io
//! ```

use crate::nvme::command::{nvm_opc, Command, Completion, Status};
use crate::nvme::prp::Prps;
use crate::nvme_io_command::{flush, io_error, next_chunk, read_write, IoError};
use proptest::prelude::*;

/// The SQE of a Read or Write, from the layout above.
#[allow(clippy::too_many_arguments)]
fn rw_sqe(
    opcode: u8,
    cid: u16,
    nsid: u32,
    prp1: u64,
    prp2: u64,
    slba: u64,
    blocks: u32,
    fua: bool,
) -> [u32; 16] {
    let mut dw = [0u32; 16];
    dw[0] = u32::from(cid) << 16 | u32::from(opcode);
    dw[1] = nsid;
    dw[6] = (prp1 & 0xffff_ffff) as u32;
    dw[7] = (prp1 >> 32) as u32;
    dw[8] = (prp2 & 0xffff_ffff) as u32;
    dw[9] = (prp2 >> 32) as u32;
    dw[10] = (slba & 0xffff_ffff) as u32;
    dw[11] = (slba >> 32) as u32;
    dw[12] = (blocks - 1) | if fua { 1 << 30 } else { 0 };
    dw
}

/// A completion's DW3 with these status fields, through the CQE decoder.
fn status(sct: u8, sc: u8, crd: u8, more: bool, dnr: bool, phase: bool, cid: u16) -> Status {
    let dw3 = u32::from(cid)
        | u32::from(phase) << 16
        | u32::from(sc) << 17
        | u32::from(sct & 7) << 25
        | u32::from(crd & 3) << 28
        | u32::from(more) << 30
        | u32::from(dnr) << 31;
    Completion::from_dwords([0, 0, 0, dw3]).status
}

/// What the block layer must be told, from the table above.
fn expected(sct: u8, sc: u8) -> Result<(), IoError> {
    match (sct, sc) {
        (0, 0x00) => Ok(()),
        (0, 0x01 | 0x02 | 0x0b) => Err(IoError::NotSupported),
        (0, 0x80) => Err(IoError::Target),
        (0, 0x81) => Err(IoError::NoSpace),
        (2, 0x80 | 0x81 | 0x86 | 0x87) => Err(IoError::Medium),
        _ => Err(IoError::Io),
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- commands -------------------------------------------------------------------

#[test]
fn nvme_io_opcodes_are_the_spec_values() {
    assert_eq!(
        (nvm_opc::FLUSH, nvm_opc::WRITE, nvm_opc::READ),
        (0x00, 0x01, 0x02)
    );
}

#[test]
fn nvme_io_read_sqe_dwords() {
    // Read 8 blocks of namespace 1 from LBA 0x1_2345_6789, cid 0x42, into
    // two pages.
    let prps = Prps {
        prp1: 0x1000_0200,
        prp2: 0x1000_1000,
        list_entries: 0,
    };
    let cmd = read_write(nvm_opc::READ, 1, 0x1_2345_6789, 8, false, prps).expect("8 blocks");
    let expected: [u32; 16] = [
        0x0042_0002, // CID 0x42, OPC 02h
        1,           // NSID
        0,
        0,
        0,
        0,
        0x1000_0200, // PRP1
        0,
        0x1000_1000, // PRP2
        0,
        0x2345_6789, // SLBA 31:0
        0x0000_0001, // SLBA 63:32
        0x0000_0007, // NLB 7: 8 blocks
        0,
        0,
        0,
    ];
    assert_eq!(cmd.to_dwords(0x42), expected);
}

#[test]
fn nvme_io_write_fua_sqe_dwords() {
    // Write 65536 blocks (the most one command carries) with FUA, LBA
    // 0xffff_ffff_0000_0000 of namespace 0xffff_fffe, cid 0xffff, the PRP2
    // a list in high memory.
    let prps = Prps {
        prp1: 0x8_0000_0ffc,
        prp2: 0x9_8765_4000,
        list_entries: 7,
    };
    let cmd = read_write(
        nvm_opc::WRITE,
        0xffff_fffe,
        0xffff_ffff_0000_0000,
        65536,
        true,
        prps,
    )
    .expect("65536 blocks");
    let expected: [u32; 16] = [
        0xffff_0001, // CID 0xffff, OPC 01h
        0xffff_fffe,
        0,
        0,
        0,
        0,
        0x0000_0ffc,
        0x0000_0008,
        0x8765_4000,
        0x0000_0009,
        0x0000_0000,
        0xffff_ffff,
        0x4000_ffff, // FUA, NLB 0xffff
        0,
        0,
        0,
    ];
    assert_eq!(cmd.to_dwords(0xffff), expected);
}

#[test]
fn nvme_io_block_count_limits() {
    let prps = Prps {
        prp1: 0x1000,
        prp2: 0,
        list_entries: 0,
    };
    assert_eq!(
        read_write(nvm_opc::READ, 1, 0, 0, false, prps),
        None,
        "0 blocks"
    );
    assert_eq!(
        read_write(nvm_opc::READ, 1, 0, 65537, false, prps),
        None,
        "65537 blocks"
    );
    assert_eq!(
        read_write(nvm_opc::WRITE, 1, 0, u32::MAX, true, prps),
        None,
        "u32::MAX blocks"
    );
    let one = read_write(nvm_opc::READ, 1, 0, 1, false, prps).expect("1 block");
    assert_eq!(one.cdw[2], 0, "NLB 0 is one block");
}

#[test]
fn nvme_io_flush_sqe_dwords() {
    let dw = flush(1).to_dwords(7);
    assert_eq!(
        dw,
        [0x0007_0000, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        flush(0xffff_ffff),
        Command {
            opcode: 0,
            nsid: 0xffff_ffff,
            prp1: 0,
            prp2: 0,
            cdw: [0; 6],
            sgl: false
        }
    );
}

proptest! {
    #![proptest_config(config(4000))]

    /// Any Read or Write of 1..=65536 blocks: the SQE of the layout above.
    #[test]
    fn nvme_io_read_write_layout(
        opcode in prop_oneof![Just(nvm_opc::READ), Just(nvm_opc::WRITE)],
        nsid in any::<u32>(),
        lba in any::<u64>(),
        blocks in prop_oneof![1u32..=65536, Just(1), Just(65536), Just(256)],
        fua in any::<bool>(),
        prp1 in any::<u64>(),
        prp2 in any::<u64>(),
        list_entries in 0usize..2048,
        cid in any::<u16>(),
    ) {
        let prps = Prps { prp1, prp2, list_entries };
        let cmd = read_write(opcode, nsid, lba, blocks, fua, prps);
        let cmd = cmd.ok_or_else(|| TestCaseError::fail(format!("None for {blocks} blocks")))?;
        prop_assert_eq!((cmd.opcode, cmd.nsid, cmd.prp1, cmd.prp2), (opcode, nsid, prp1, prp2));
        let sqe = rw_sqe(opcode, cid, nsid, prp1, prp2, lba, blocks, fua);
        prop_assert_eq!(cmd.to_dwords(cid), sqe);
    }

    /// A block count the command cannot carry: `None`.
    #[test]
    fn nvme_io_read_write_too_many_blocks(
        opcode in prop_oneof![Just(nvm_opc::READ), Just(nvm_opc::WRITE)],
        lba in any::<u64>(),
        blocks in prop_oneof![Just(0u32), 65537u32..=u32::MAX, Just(65537), Just(u32::MAX)],
        fua in any::<bool>(),
    ) {
        let prps = Prps { prp1: 0x1000, prp2: 0x2000, list_entries: 0 };
        prop_assert_eq!(read_write(opcode, 1, lba, blocks, fua, prps), None);
    }

    /// Flush: opcode and namespace, nothing else.
    #[test]
    fn nvme_io_flush_layout(nsid in any::<u32>(), cid in any::<u16>()) {
        let mut dw = [0u32; 16];
        dw[0] = u32::from(cid) << 16;
        dw[1] = nsid;
        prop_assert_eq!(flush(nsid).to_dwords(cid), dw);
    }
}

// ---- transfer pieces ------------------------------------------------------------

#[test]
fn nvme_io_next_chunk_vectors() {
    // 1 MiB at an MDTS of 16 KiB: 64 pieces of 16 KiB.
    let mut done = 0;
    let mut pieces = 0;
    while let Some(n) = next_chunk(done, 1 << 20, 16 << 10) {
        assert_eq!(n, 16 << 10);
        done += n;
        pieces += 1;
    }
    assert_eq!((done, pieces), (1 << 20, 64));
    assert_eq!(next_chunk(0, 5000, 4096), Some(4096));
    assert_eq!(next_chunk(4096, 5000, 4096), Some(904));
    assert_eq!(next_chunk(5000, 5000, 4096), None);
    assert_eq!(next_chunk(6000, 5000, 4096), None, "done past the end");
    assert_eq!(next_chunk(0, 5000, 0), None, "max 0");
    assert_eq!(next_chunk(0, 0, 4096), None, "nothing to do");
    assert_eq!(next_chunk(0, u32::MAX, u32::MAX), Some(u32::MAX));
}

proptest! {
    #![proptest_config(config(4000))]

    /// Any (done, len, max): the rest, at most `max`; `None` when nothing
    /// is left or `max` is 0.
    #[test]
    fn nvme_io_next_chunk_is_the_rest_up_to_max(
        done in prop_oneof![any::<u32>(), 0u32..65536],
        len in prop_oneof![any::<u32>(), 0u32..65536],
        max in prop_oneof![any::<u32>(), 0u32..65536, Just(0)],
    ) {
        let want = if max == 0 || done >= len { None } else { Some((len - done).min(max)) };
        prop_assert_eq!(next_chunk(done, len, max), want);
    }

    /// Taking pieces from 0 until `None`: they add up to `len` exactly,
    /// each in 1..=max, all but the last exactly `max` (as few commands as
    /// the limit allows).
    #[test]
    fn nvme_io_next_chunk_covers_len(
        (len, max) in prop_oneof![
            (any::<u32>(), 1u32..=u32::MAX),
            (0u32..=1 << 20, 1u32..=1 << 20),
            (any::<u32>(), 1u32..=16).prop_map(|(l, k)| (l, (l / k).max(1))),
            (1u32..=64, 1u32..=8).prop_map(|(k, m)| (k * 4096 * m, 4096 * m)),
        ]
        .prop_filter("at most 200000 pieces", |&(l, m)| l / m <= 200_000),
    ) {
        let mut done = 0u32;
        let mut pieces = Vec::new();
        while let Some(n) = next_chunk(done, len, max) {
            let i = pieces.len();
            prop_assert!((1..=max).contains(&n), "piece {} of {} bytes, max {}", i, n, max);
            pieces.push(n);
            done = done.checked_add(n).ok_or_else(|| TestCaseError::fail("done overflows"))?;
            prop_assert!(done <= len, "{} done of {}", done, len);
        }
        prop_assert_eq!(done, len);
        prop_assert_eq!(pieces.len() as u64, u64::from(len).div_ceil(u64::from(max)));
        if let Some((_, first)) = pieces.split_last() {
            prop_assert!(first.iter().all(|&n| n == max), "a piece before the last is short");
        }
    }
}

// ---- I/O errors -----------------------------------------------------------------

#[test]
fn nvme_io_error_vectors() {
    let st = |sct, sc| status(sct, sc, 0, false, false, true, 0);
    assert_eq!(io_error(st(0, 0x00)), Ok(()));
    assert_eq!(
        io_error(st(0, 0x80)),
        Err(IoError::Target),
        "LBA Out of Range"
    );
    assert_eq!(
        io_error(st(0, 0x81)),
        Err(IoError::NoSpace),
        "Capacity Exceeded"
    );
    assert_eq!(
        io_error(st(0, 0x01)),
        Err(IoError::NotSupported),
        "Invalid Command Opcode"
    );
    assert_eq!(
        io_error(st(0, 0x02)),
        Err(IoError::NotSupported),
        "Invalid Field in Command"
    );
    assert_eq!(
        io_error(st(0, 0x0b)),
        Err(IoError::NotSupported),
        "Invalid Namespace or Format"
    );
    assert_eq!(io_error(st(2, 0x80)), Err(IoError::Medium), "Write Fault");
    assert_eq!(
        io_error(st(2, 0x81)),
        Err(IoError::Medium),
        "Unrecovered Read Error"
    );
    assert_eq!(io_error(st(2, 0x86)), Err(IoError::Medium), "Access Denied");
    assert_eq!(
        io_error(st(2, 0x87)),
        Err(IoError::Medium),
        "Deallocated or Unwritten Logical Block"
    );
    assert_eq!(
        io_error(st(2, 0x82)),
        Err(IoError::Io),
        "End-to-end Guard Check Error"
    );
    assert_eq!(
        io_error(st(0, 0x04)),
        Err(IoError::Io),
        "Data Transfer Error"
    );
    assert_eq!(io_error(st(0, 0x06)), Err(IoError::Io), "Internal Error");
    assert_eq!(
        io_error(st(1, 0x80)),
        Err(IoError::Io),
        "command specific 80h: Conflicting Attributes"
    );
    assert_eq!(
        io_error(st(1, 0x00)),
        Err(IoError::Io),
        "command specific 00h"
    );
    assert_eq!(
        io_error(st(2, 0x00)),
        Err(IoError::Io),
        "SCT 2, SC 0 is no success"
    );
    assert_eq!(io_error(st(7, 0x00)), Err(IoError::Io), "vendor specific");
    // DNR, More and CRD do not make a success a failure, nor the reverse.
    assert_eq!(io_error(status(0, 0, 3, true, true, false, 0xffff)), Ok(()));
    assert_eq!(
        io_error(status(0, 0x80, 3, true, true, false, 0xffff)),
        Err(IoError::Target)
    );
    // The raw field as the CQE decoder keeps it: DNR | LBA Out of Range.
    assert_eq!(io_error(Status(1 << 14 | 0x80)), Err(IoError::Target));
}

/// Every status field (15 bits) with either phase tag: `io_error` is the
/// table's answer, `Ok` exactly for SCT 0 / SC 0.
#[test]
fn nvme_io_error_every_status() {
    for field in 0u32..1 << 15 {
        for phase in [false, true] {
            let (sc, sct) = ((field & 0xff) as u8, ((field >> 8) & 7) as u8);
            let (crd, more, dnr) = (
                ((field >> 11) & 3) as u8,
                field >> 13 & 1 == 1,
                field >> 14 & 1 == 1,
            );
            let st = status(sct, sc, crd, more, dnr, phase, field as u16);
            assert_eq!(
                (st.sct(), st.sc()),
                (sct, sc),
                "decoding of field {field:#06x}"
            );
            assert_eq!(
                io_error(st),
                expected(sct, sc),
                "status field {field:#06x}, phase {phase}"
            );
            assert_eq!(
                io_error(st).is_ok(),
                sct == 0 && sc == 0,
                "field {field:#06x}"
            );
        }
    }
}
