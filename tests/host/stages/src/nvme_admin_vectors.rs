//! Stage 07: commands, completions and doorbells against the NVMe 1.4
//! specification, with every expected value worked out by hand in the test
//! (never produced by the code under test).
//!
//! A submission queue entry (section 4.2, "Submission Queue Entry - Command
//! Format"), 16 little-endian dwords:
//!
//! ```text
//!  dword  bits    field
//!  0      7:0     OPC   opcode
//!         9:8     FUSE  fused operation (0: normal)
//!         13:10   reserved
//!         15:14   PSDT  0: the data pointer holds PRPs
//!         31:16   CID   command identifier
//!  1              NSID  namespace identifier
//!  2-3            reserved (for the commands this driver sends)
//!  4-5            MPTR  metadata pointer
//!  6-7            PRP1  data pointer, first PRP entry
//!  8-9            PRP2  data pointer, second PRP entry
//!  10-15          CDW10-CDW15, command specific (Identify: CNS in CDW10 7:0)
//! ```
//!
//! A completion queue entry (section 4.6, "Completion Queue Entry"), 4
//! dwords:
//!
//! ```text
//!  dword  bits    field
//!  0              command specific result
//!  1              reserved
//!  2      15:0    SQHD  submission queue head pointer
//!         31:16   SQID  submission queue identifier
//!  3      15:0    CID   command identifier
//!         16      P     phase tag
//!         31:17   status field: SC 24:17, SCT 27:25, CRD 29:28, M 30, DNR 31
//! ```

use crate::nvme_admin_spec::Cap;
use crate::nvme_command::{admin_opc, cns, phase_of, Command, Completion, Status};

/// The 64 bytes of an SQE as the controller reads them from memory.
fn sqe_bytes(dwords: [u32; 16]) -> [u8; 64] {
    let mut bytes = [0u8; 64];
    for (i, dw) in dwords.iter().enumerate() {
        bytes[4 * i..4 * i + 4].copy_from_slice(&dw.to_le_bytes());
    }
    bytes
}

// ---- commands -----------------------------------------------------------------

#[test]
fn nvme_identify_constants_are_the_spec_values() {
    // Section 5 (admin command set): Identify is opcode 06h. Section 5.15
    // (Identify), the CNS values: 00h namespace, 01h controller.
    assert_eq!(
        (admin_opc::IDENTIFY, cns::NAMESPACE, cns::CONTROLLER),
        (0x06, 0x00, 0x01)
    );
}

#[test]
fn nvme_identify_sqe_dwords() {
    // Identify Controller (CNS 1), cid 0x1234, nsid 1, into the page at bus
    // address 0x1_2345_6000.
    let dw = Command::identify(cns::CONTROLLER, 1, 0x1_2345_6000).to_dwords(0x1234);
    let expected: [u32; 16] = [
        // CDW0: CID 0x1234 in 31:16, PSDT 0, FUSE 0, OPC 0x06 in 7:0.
        0x1234_0006,
        // NSID.
        0x0000_0001,
        // Reserved.
        0,
        0,
        // MPTR: no metadata.
        0,
        0,
        // PRP1, low dword then high dword.
        0x2345_6000,
        0x0000_0001,
        // PRP2: one page needs no second entry.
        0,
        0,
        // CDW10: CNTID 0 in 31:16, CNS 1 in 7:0.
        0x0000_0001,
        // CDW11-15: CSI, NVM set, UUID index: 0.
        0,
        0,
        0,
        0,
        0,
    ];
    assert_eq!(dw, expected);
}

#[test]
fn nvme_identify_sqe_bytes() {
    // The same entry as the controller's DMA sees it: 64 bytes,
    // little-endian.
    let mut expected = [0u8; 64];
    expected[0] = 0x06; // OPC
    expected[1] = 0x00; // FUSE 0, PSDT 0
    expected[2] = 0x34; // CID, low byte first
    expected[3] = 0x12;
    expected[4] = 0x01; // NSID = 1
    expected[24..32].copy_from_slice(&[0x00, 0x60, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00]); // PRP1
    expected[40] = 0x01; // CDW10: CNS 1
    let dw = Command::identify(cns::CONTROLLER, 1, 0x1_2345_6000).to_dwords(0x1234);
    assert_eq!(sqe_bytes(dw), expected);
}

#[test]
fn nvme_identify_namespace_sqe() {
    // Identify Namespace (CNS 0) of nsid 1: CDW10 is 0, so the only
    // difference from a zeroed entry is the opcode, CID, NSID and PRP1.
    let dw = Command::identify(cns::NAMESPACE, 1, 0x8000).to_dwords(7);
    let mut expected = [0u32; 16];
    expected[0] = 0x0007_0006;
    expected[1] = 1;
    expected[6] = 0x8000;
    assert_eq!(dw, expected);
}

#[test]
fn nvme_every_sqe_field_lands_in_its_dword() {
    let cmd = Command {
        opcode: 0xab,
        nsid: 0xdead_beef,
        prp1: 0x0123_4567_89ab_c000,
        prp2: 0xfedc_ba98_7654_3000,
        cdw: [
            0x1010_1010,
            0x1111_1111,
            0x1212_1212,
            0x1313_1313,
            0x1414_1414,
            0x1515_1515,
        ],
        sgl: false,
    };
    let dw = cmd.to_dwords(0xffff);
    assert_eq!(
        dw[0], 0xffff_00ab,
        "CDW0: CID 0xffff, FUSE/PSDT 0, OPC 0xab"
    );
    assert_eq!(dw[1], 0xdead_beef, "NSID");
    assert_eq!(dw[2..6], [0, 0, 0, 0], "reserved and MPTR");
    assert_eq!(dw[6..8], [0x89ab_c000, 0x0123_4567], "PRP1 low, high");
    assert_eq!(dw[8..10], [0x7654_3000, 0xfedc_ba98], "PRP2 low, high");
    assert_eq!(
        dw[10..16],
        [
            0x1010_1010,
            0x1111_1111,
            0x1212_1212,
            0x1313_1313,
            0x1414_1414,
            0x1515_1515
        ],
        "CDW10-15"
    );
}

#[test]
fn nvme_sgl_sets_psdt_01b_and_nothing_else() {
    // PSDT is CDW0 bits 15:14: 01b says PRP1/PRP2 hold an SGL descriptor.
    // Nothing else of the entry changes.
    let prp = Command {
        opcode: 0x02,
        nsid: 1,
        prp1: 0x1000,
        prp2: 0x10,
        ..Command::default()
    };
    let sgl = Command { sgl: true, ..prp };
    let (a, b) = (prp.to_dwords(7), sgl.to_dwords(7));
    assert_eq!(b[0], a[0] | 1 << 14, "CDW0 gains bit 14 only");
    assert_eq!((b[0] >> 14) & 0b11, 0b01, "PSDT 01b");
    assert_eq!(a[1..], b[1..], "dwords 1-15 unchanged");
    assert_eq!(prp.to_dwords(7)[0] >> 14 & 0b11, 0, "PSDT 00b: PRPs");
}

#[test]
fn nvme_sqe_cid_does_not_touch_the_opcode_byte() {
    // FUSE (9:8) and PSDT (15:14) must stay 0 whatever the CID and opcode.
    for (opcode, cid) in [(0xff, 0), (0, 0xffff), (0xff, 0xffff), (0x06, 0x8001)] {
        let cmd = Command {
            opcode,
            ..Command::default()
        };
        let cdw0 = cmd.to_dwords(cid)[0];
        assert_eq!(
            cdw0 & 0xff,
            u32::from(opcode),
            "OPC of {opcode:#x}/{cid:#x}"
        );
        assert_eq!(cdw0 & 0xff00, 0, "FUSE and PSDT of {opcode:#x}/{cid:#x}");
        assert_eq!(cdw0 >> 16, u32::from(cid), "CID of {opcode:#x}/{cid:#x}");
    }
}

#[test]
fn nvme_sqe_is_built_at_compile_time() {
    // `identify` and `to_dwords` are `const fn`.
    const DW: [u32; 16] = Command::identify(cns::CONTROLLER, 0, 0x1000).to_dwords(1);
    assert_eq!((DW[0], DW[6], DW[10]), (0x0001_0006, 0x1000, 1));
}

// ---- completions ----------------------------------------------------------------

#[test]
fn nvme_cqe_success() {
    // Result 0, SQ head 5 of SQ 0, cid 0x1234, phase 1, status 0.
    let dw3 = 0x1234 | 1 << 16;
    let c = Completion::from_dwords([0, 0, 5, dw3]);
    assert_eq!(
        (c.result, c.sq_head, c.sq_id, c.cid, c.phase),
        (0, 5, 0, 0x1234, true)
    );
    assert_eq!(c.status, Status(0));
    assert!(c.status.is_success());
    assert_eq!(c.status.describe(), "success");
}

#[test]
fn nvme_cqe_every_field() {
    // DW0 result 0xcafe_f00d; DW1 reserved (junk the decoder must ignore);
    // DW2: SQHD 0x0102, SQID 0x0304; DW3: CID 0xbeef, phase 1, SC 0x02
    // (invalid field in command), SCT 0 (generic), DNR 1.
    //   DW3 = 0xbeef | 1 << 16 | 0x02 << 17 | 1 << 31
    //       = 0x0000_beef | 0x0001_0000 | 0x0004_0000 | 0x8000_0000
    //       = 0x8005_beef
    let dw = [0xcafe_f00d, 0xffff_ffff, 0x0304_0102, 0x8005_beef];
    let c = Completion::from_dwords(dw);
    assert_eq!(c.result, 0xcafe_f00d);
    assert_eq!(c.sq_head, 0x0102);
    assert_eq!(c.sq_id, 0x0304);
    assert_eq!(c.cid, 0xbeef);
    assert!(c.phase);
    // The status field is DW3 31:17: 0x8005_beef >> 17 = 0x4002.
    assert_eq!(c.status, Status(0x4002));
    assert_eq!(
        (c.status.sc(), c.status.sct(), c.status.dnr()),
        (0x02, 0, true)
    );
    assert!(!c.status.is_success());
    assert_eq!(c.status.describe(), "invalid field in command");
}

#[test]
fn nvme_cqe_phase_0_and_status_bits() {
    // Phase 0, SCT 2 (media errors), SC 0x81 (unrecovered read error), CRD
    // 3, More 1, DNR 0: DW3 = 0x81 << 17 | 2 << 25 | 3 << 28 | 1 << 30, cid 1.
    let dw3: u32 = 1 | 0x81 << 17 | 2 << 25 | 3 << 28 | 1 << 30;
    assert_eq!(dw3, 0x7502_0001);
    let c = Completion::from_dwords([0, 0, 0, dw3]);
    assert!(!c.phase);
    assert_eq!(c.cid, 1);
    // CRD and M sit between SCT and DNR: they must not leak into either.
    assert_eq!(
        (c.status.sc(), c.status.sct(), c.status.dnr()),
        (0x81, 2, false)
    );
    assert_eq!(c.status.describe(), "media error");
}

#[test]
fn nvme_status_descriptions() {
    // Status field values (bits 14:0, without the phase): SCT << 8 | SC.
    let cases: [(u16, &str, bool); 12] = [
        (0x000, "success", true),
        (0x001, "invalid command opcode", false),
        (0x002, "invalid field in command", false),
        (0x004, "data transfer error", false),
        (0x006, "internal error", false),
        (0x00b, "invalid namespace or format", false),
        (0x013, "PRP offset invalid", false),
        (0x003, "other error", false), // generic 03h, command ID conflict: not described
        (0x101, "command specific error", false), // SCT 1, SC 01h: invalid queue identifier
        (0x280, "media error", false), // SCT 2, SC 80h: write fault
        (0x300, "other error", false), // SCT 3: path related
        (0x700, "other error", false), // SCT 7: vendor specific
    ];
    for (raw, text, ok) in cases {
        let s = Status(raw);
        assert_eq!(s.describe(), text, "status {raw:#05x}");
        assert_eq!(s.is_success(), ok, "status {raw:#05x}");
    }
    // Do Not Retry alone does not make a success a failure.
    assert!(Status(1 << 14).is_success());
    assert!(Status(1 << 14).dnr());
}

#[test]
fn nvme_cqe_phase_of() {
    assert!(!phase_of(0));
    assert!(phase_of(1 << 16));
    assert!(phase_of(0x0001_0000));
    // Only bit 16 counts: the CID below it and the status above it do not.
    assert!(!phase_of(0xfffe_ffff));
    assert!(phase_of(u32::MAX));
    assert!(!phase_of(0x0000_ffff));
    assert!(!phase_of(0x0002_0000));
    // The same answer as the full decode, for every single bit.
    for bit in 0..32 {
        let dw3 = 1u32 << bit;
        assert_eq!(phase_of(dw3), bit == 16, "bit {bit}");
        assert_eq!(
            Completion::from_dwords([0, 0, 0, dw3]).phase,
            bit == 16,
            "bit {bit}"
        );
    }
}

#[test]
fn nvme_cqe_each_dw3_bit_lands_in_one_field() {
    for bit in 0..32 {
        let c = Completion::from_dwords([0, 0, 0, 1 << bit]);
        let expected = match bit {
            0..=15 => (1u16 << bit, false, 0u16),
            16 => (0, true, 0),
            17..=31 => (0, false, 1u16 << (bit - 17)),
            _ => unreachable!(),
        };
        assert_eq!((c.cid, c.phase, c.status.0), expected, "DW3 bit {bit}");
    }
}

// ---- doorbells --------------------------------------------------------------------

/// A CAP whose only non-zero field is DSTRD.
fn cap_with_dstrd(dstrd: u64) -> Cap {
    Cap::from_raw(dstrd << 32)
}

#[test]
fn nvme_doorbells_dstrd_0() {
    // Stride 4 << 0 = 4 bytes: SQ0 tail 0x1000, CQ0 head 0x1004, SQ1 tail
    // 0x1008, ...; queue 3: 0x1000 + 6 * 4 = 0x1018 and 0x1000 + 7 * 4 = 0x101c.
    let cap = cap_with_dstrd(0);
    assert_eq!(
        (cap.sq_tail_doorbell(0), cap.cq_head_doorbell(0)),
        (0x1000, 0x1004)
    );
    assert_eq!(
        (cap.sq_tail_doorbell(1), cap.cq_head_doorbell(1)),
        (0x1008, 0x100c)
    );
    assert_eq!(
        (cap.sq_tail_doorbell(3), cap.cq_head_doorbell(3)),
        (0x1018, 0x101c)
    );
}

#[test]
fn nvme_doorbells_dstrd_2() {
    // Stride 4 << 2 = 16 bytes: queue 0 at 0x1000 and 0x1010; queue 3 at
    // 0x1000 + 6 * 16 = 0x1060 and 0x1000 + 7 * 16 = 0x1070.
    let cap = cap_with_dstrd(2);
    assert_eq!(
        (cap.sq_tail_doorbell(0), cap.cq_head_doorbell(0)),
        (0x1000, 0x1010)
    );
    assert_eq!(
        (cap.sq_tail_doorbell(3), cap.cq_head_doorbell(3)),
        (0x1060, 0x1070)
    );
}

#[test]
fn nvme_doorbells_qemu_and_extremes() {
    // QEMU 7.2's CAP (DSTRD 0): the admin doorbells are the first two.
    let qemu = Cap::from_raw(0x0040_1820_0f01_07ff);
    assert_eq!(
        (qemu.sq_tail_doorbell(0), qemu.cq_head_doorbell(0)),
        (0x1000, 0x1004)
    );
    // The largest queue id with the largest stride does not overflow usize:
    // 0x1000 + (2 * 65535 + 1) * (4 << 15) = 0x1000 + 131071 * 131072.
    let widest = cap_with_dstrd(15);
    assert_eq!(
        widest.cq_head_doorbell(u16::MAX),
        0x1000 + 131_071 * 131_072
    );
    assert_eq!(
        widest.sq_tail_doorbell(u16::MAX),
        0x1000 + 131_070 * 131_072
    );
}

#[test]
fn nvme_doorbells_interleave_without_gaps() {
    // For every stride: SQ y tail, CQ y head, SQ y+1 tail, ... exactly one
    // stride apart, starting at 0x1000.
    for dstrd in 0..16 {
        let cap = cap_with_dstrd(dstrd);
        let stride = 4usize << dstrd;
        for qid in 0..64u16 {
            let n = 2 * usize::from(qid);
            assert_eq!(
                cap.sq_tail_doorbell(qid),
                0x1000 + n * stride,
                "DSTRD {dstrd} SQ {qid}"
            );
            assert_eq!(
                cap.cq_head_doorbell(qid),
                0x1000 + (n + 1) * stride,
                "DSTRD {dstrd} CQ {qid}"
            );
        }
    }
}

#[test]
fn nvme_doorbells_at_compile_time() {
    const CAP: Cap = Cap::from_raw(2 << 32);
    const CQ3: usize = CAP.cq_head_doorbell(3);
    assert_eq!(CQ3, 0x1070);
}

// ---- CAP as stage 07 and later use it ------------------------------------------------

#[test]
fn nvme_admin_spec_decodes_qemu_cap() {
    // QEMU 7.2's CAP (see nvme_vectors.rs for the value assembled bit by
    // bit), with the doorbell stride stage 07 uses.
    let cap = Cap::from_raw(0x0040_1820_0f01_07ff);
    assert_eq!(
        (cap.mqes, cap.cqr, cap.to, cap.dstrd, cap.css, cap.mpsmin, cap.mpsmax),
        (2047, true, 15, 0, 0xc1, 0, 4)
    );
    assert_eq!(cap.doorbell_stride(), 4);
}
