//! Stage 04: `Cap::from_raw` against CAP values worked out by hand from the
//! NVMe 1.4 specification (section 3.1.1, "Offset 0h: CAP - Controller
//! Capabilities"), never produced by our decoder:
//!
//! ```text
//!  63  58 57 56 55    52 51    48 47  46 45 44  37 36 35   32 31  24 23  19 18  17 16 15   0
//! +------+--+--+--------+--------+------+--+------+--+-------+------+------+------+--+------+
//! | rsvd |CM|PM| MPSMAX | MPSMIN | rsvd |BP| CSS  |NS| DSTRD |  TO  | rsvd | AMS  |CQ| MQES |
//! +------+--+--+--------+--------+------+--+------+--+-------+------+------+------+--+------+
//! ```
//!
//! CM = CMBS, PM = PMRS, BP = BPS, NS = NSSRS, CQ = CQR: single bits. `spec::Cap`
//! decodes MQES, CQR, TO, DSTRD, CSS, MPSMIN and MPSMAX; the other fields
//! (AMS, NSSRS, BPS, PMRS, CMBS) and the reserved bits must not show up in
//! any decoded field.

use crate::nvme_spec::Cap;

/// Every field zero.
const ZERO: Cap = Cap {
    mqes: 0,
    cqr: false,
    to: 0,
    dstrd: 0,
    css: 0,
    mpsmin: 0,
    mpsmax: 0,
};

/// QEMU 7.2's `-device nvme` as our VM shows it (`hw/nvme/ctrl.c`,
/// `nvme_init_ctrl`, with no CMB and no PMR), assembled bit by bit.
fn qemu_7_2_cap() -> u64 {
    let mut raw = 0u64;
    // MQES, bits 15:0 = 0x7ff: 2048 entries per queue (the field is 0's based).
    raw |= 2047;
    // CQR, bit 16: queues must be physically contiguous.
    raw |= 1 << 16;
    // AMS, bits 18:17 = 0: only round-robin arbitration.
    raw |= 0 << 17;
    // TO, bits 31:24 = 15: 15 x 500 ms = 7.5 s to become ready.
    raw |= 15 << 24;
    // DSTRD, bits 35:32 = 0: doorbells 4 << 0 = 4 bytes apart.
    raw |= 0 << 32;
    // NSSRS, bit 36 = 0: no NVM subsystem reset.
    raw |= 0 << 36;
    // CSS, bits 44:37 = 0xc1: bit 0 (CAP bit 37), the NVM command set; bit 6
    // (CAP bit 43), I/O command sets by identifier; bit 7 (CAP bit 44),
    // admin-only controllers.
    raw |= 1 << 37;
    raw |= 1 << 43;
    raw |= 1 << 44;
    // BPS, bit 45 = 0: no boot partitions.
    raw |= 0 << 45;
    // MPSMIN, bits 51:48 = 0: pages of at least 4096 << 0 = 4 KiB.
    raw |= 0 << 48;
    // MPSMAX, bits 55:52 = 4: pages of at most 4096 << 4 = 64 KiB.
    raw |= 4 << 52;
    // PMRS, bit 56 and CMBS, bit 57 = 0: no persistent memory region, no
    // controller memory buffer.
    raw |= 0 << 56;
    raw
}

#[test]
fn nvme_qemu_7_2_cap_is_the_hand_assembled_value() {
    // The same value written as one hex literal, nibble by nibble:
    //   0x0040_1820_0f01_07ff
    //   bits 55:52 = 4 (MPSMAX); bits 44:37 = 0xc1 -> 0xc1 << 5 = 0x1820 in
    //   the high word; bits 31:24 = 0x0f (TO); bit 16 (CQR); 0x07ff (MQES).
    assert_eq!(qemu_7_2_cap(), 0x0040_1820_0f01_07ff);
}

#[test]
fn nvme_decodes_qemu_7_2_cap() {
    let cap = Cap::from_raw(qemu_7_2_cap());
    assert_eq!(
        cap,
        Cap {
            mqes: 2047,
            cqr: true,
            to: 15,
            dstrd: 0,
            css: 0xc1,
            mpsmin: 0,
            mpsmax: 4
        }
    );
    assert_eq!(cap.max_queue_entries(), 2048);
    assert_eq!(cap.doorbell_stride(), 4);
    assert_eq!(cap.timeout_ms(), 7500);
    assert_eq!(cap.min_page_size(), 4096);
    assert_eq!(cap.max_page_size(), 65536);
    assert!(cap.supports_nvm());
}

#[test]
fn nvme_decodes_at_compile_time() {
    // `from_raw` and the helpers are `const fn`: the compiler can decode.
    const CAP: Cap = Cap::from_raw(0x0040_1820_0f01_07ff);
    const ENTRIES: u32 = CAP.max_queue_entries();
    const STRIDE: usize = CAP.doorbell_stride();
    assert_eq!((CAP.mqes, ENTRIES, STRIDE), (2047, 2048, 4));
}

#[test]
fn nvme_all_zeros() {
    let cap = Cap::from_raw(0);
    assert_eq!(cap, ZERO);
    // MQES is 0's based: 0 means one entry (the spec calls it invalid).
    assert_eq!(cap.max_queue_entries(), 1);
    assert_eq!(cap.doorbell_stride(), 4);
    assert_eq!(cap.timeout_ms(), 0);
    assert_eq!((cap.min_page_size(), cap.max_page_size()), (4096, 4096));
    assert!(!cap.supports_nvm());
}

#[test]
fn nvme_all_ones() {
    let cap = Cap::from_raw(u64::MAX);
    assert_eq!(
        cap,
        Cap {
            mqes: 0xffff,
            cqr: true,
            to: 0xff,
            dstrd: 0xf,
            css: 0xff,
            mpsmin: 0xf,
            mpsmax: 0xf
        }
    );
    // 0xffff + 1 does not fit a u16: max_queue_entries widens first.
    assert_eq!(cap.max_queue_entries(), 65536);
    assert_eq!(cap.doorbell_stride(), 4 << 15); // 128 KiB between doorbells
    assert_eq!(cap.timeout_ms(), 255 * 500); // 127.5 s
    assert_eq!(cap.min_page_size(), 128 << 20); // 4 KiB << 15 = 128 MiB
    assert_eq!(cap.max_page_size(), 128 << 20);
    assert!(cap.supports_nvm());
}

/// What setting only bit `bit` of CAP must decode to, from the layout above.
fn one_bit(bit: u32) -> Cap {
    let mut c = ZERO;
    match bit {
        0..=15 => c.mqes = 1 << bit,
        16 => c.cqr = true,
        17..=18 => {} // AMS
        19..=23 => {} // reserved
        24..=31 => c.to = 1 << (bit - 24),
        32..=35 => c.dstrd = 1 << (bit - 32),
        36 => {} // NSSRS
        37..=44 => c.css = 1 << (bit - 37),
        45 => {}      // BPS
        46..=47 => {} // reserved
        48..=51 => c.mpsmin = 1 << (bit - 48),
        52..=55 => c.mpsmax = 1 << (bit - 52),
        56 | 57 => {} // PMRS, CMBS
        58..=63 => {} // reserved
        _ => unreachable!(),
    }
    c
}

#[test]
fn nvme_each_bit_lands_in_its_field_only() {
    for bit in 0..64 {
        assert_eq!(
            Cap::from_raw(1 << bit),
            one_bit(bit),
            "CAP with only bit {bit} set"
        );
    }
}

#[test]
fn nvme_each_bit_cleared_from_all_ones() {
    // The other way round: clearing one bit of an all-ones CAP must clear
    // exactly that bit of exactly one field.
    let all = Cap::from_raw(u64::MAX);
    for bit in 0..64 {
        let b = one_bit(bit);
        let expected = Cap {
            mqes: all.mqes & !b.mqes,
            cqr: all.cqr && !b.cqr,
            to: all.to & !b.to,
            dstrd: all.dstrd & !b.dstrd,
            css: all.css & !b.css,
            mpsmin: all.mpsmin & !b.mpsmin,
            mpsmax: all.mpsmax & !b.mpsmax,
        };
        assert_eq!(
            Cap::from_raw(!(1 << bit)),
            expected,
            "CAP with all bits but {bit} set"
        );
    }
}

#[test]
fn nvme_undecoded_fields_do_not_bleed_into_neighbours() {
    // AMS (18:17) sits between CQR and TO; NSSRS (36) between DSTRD and CSS;
    // BPS (45) between CSS and MPSMIN; PMRS and CMBS (56, 57) above MPSMAX.
    let ams = 0b11 << 17;
    let nssrs = 1 << 36;
    let bps = 1 << 45;
    let pmrs_cmbs = 0b11 << 56;
    for (name, raw) in [
        ("AMS", ams),
        ("NSSRS", nssrs),
        ("BPS", bps),
        ("PMRS+CMBS", pmrs_cmbs),
    ] {
        assert_eq!(Cap::from_raw(raw), ZERO, "{name} alone");
        assert_eq!(
            Cap::from_raw(raw | qemu_7_2_cap()),
            Cap::from_raw(qemu_7_2_cap()),
            "{name} next to QEMU's fields"
        );
    }
    // All undecoded and reserved bits together: bits 23:17, 36, 47:45, 63:56.
    let undecoded: u64 = 0x7f << 17 | 1 << 36 | 0b111 << 45 | 0xff << 56;
    assert_eq!(Cap::from_raw(undecoded), ZERO);
    assert_eq!(Cap::from_raw(!undecoded), Cap::from_raw(u64::MAX));
}

#[test]
fn nvme_neighbouring_fields_at_their_maximum() {
    // Each decoded field all ones on its own: only that field changes.
    let fields: [(&str, u64, Cap); 7] = [
        (
            "MQES",
            0xffff,
            Cap {
                mqes: 0xffff,
                ..ZERO
            },
        ),
        ("CQR", 1 << 16, Cap { cqr: true, ..ZERO }),
        ("TO", 0xff << 24, Cap { to: 0xff, ..ZERO }),
        ("DSTRD", 0xf << 32, Cap { dstrd: 0xf, ..ZERO }),
        ("CSS", 0xff << 37, Cap { css: 0xff, ..ZERO }),
        (
            "MPSMIN",
            0xf << 48,
            Cap {
                mpsmin: 0xf,
                ..ZERO
            },
        ),
        (
            "MPSMAX",
            0xf << 52,
            Cap {
                mpsmax: 0xf,
                ..ZERO
            },
        ),
    ];
    for (name, raw, expected) in fields {
        assert_eq!(Cap::from_raw(raw), expected, "{name} = all ones");
    }
}

#[test]
fn nvme_field_edges() {
    // The highest and lowest bit of each multi-bit field.
    assert_eq!(Cap::from_raw(1 << 15).mqes, 0x8000);
    assert_eq!(Cap::from_raw(1 << 24).to, 1);
    assert_eq!(Cap::from_raw(1 << 31).to, 0x80);
    assert_eq!(Cap::from_raw(1 << 32).dstrd, 1);
    assert_eq!(Cap::from_raw(1 << 35).dstrd, 8);
    assert_eq!(Cap::from_raw(1 << 37).css, 1);
    assert_eq!(Cap::from_raw(1 << 44).css, 0x80);
    assert_eq!(Cap::from_raw(1 << 48).mpsmin, 1);
    assert_eq!(Cap::from_raw(1 << 51).mpsmin, 8);
    assert_eq!(Cap::from_raw(1 << 52).mpsmax, 1);
    assert_eq!(Cap::from_raw(1 << 55).mpsmax, 8);
}

#[test]
fn nvme_nvm_command_set_is_css_bit_0() {
    // CSS bit 0 is CAP bit 37. Bits 6 and 7 alone (QEMU's others) are not NVM.
    assert!(Cap::from_raw(1 << 37).supports_nvm());
    assert!(!Cap::from_raw(0b1100_0000 << 37).supports_nvm());
    assert!(
        !Cap::from_raw(1 << 36).supports_nvm(),
        "NSSRS is not CSS bit 0"
    );
    assert!(
        !Cap::from_raw(1 << 38).supports_nvm(),
        "CSS bit 1 is not the NVM set"
    );
}

#[test]
fn nvme_derived_values_per_field() {
    // Doorbell stride: 2^(2 + DSTRD) bytes (4, 8, 16, ...).
    let strides = [
        4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
    ];
    for (dstrd, stride) in strides.into_iter().enumerate() {
        assert_eq!(
            Cap::from_raw((dstrd as u64) << 32).doorbell_stride(),
            stride,
            "DSTRD {dstrd}"
        );
    }
    // Page sizes: 2^(12 + MPS) bytes.
    assert_eq!(Cap::from_raw(1 << 48).min_page_size(), 8192);
    assert_eq!(Cap::from_raw(2 << 48).min_page_size(), 16384);
    assert_eq!(Cap::from_raw(4 << 52).max_page_size(), 65536);
    assert_eq!(Cap::from_raw(8 << 52).max_page_size(), 1 << 20);
    // Timeout: 500 ms units.
    assert_eq!(Cap::from_raw(1 << 24).timeout_ms(), 500);
    assert_eq!(Cap::from_raw(60 << 24).timeout_ms(), 30_000);
    // MQES: entries = MQES + 1.
    assert_eq!(Cap::from_raw(1).max_queue_entries(), 2);
    assert_eq!(Cap::from_raw(63).max_queue_entries(), 64);
}
