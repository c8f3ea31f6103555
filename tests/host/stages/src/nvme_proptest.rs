//! Stage 04, property tests: `Cap::from_raw` against a test-local encoder
//! written from the NVMe 1.4 CAP layout. Random field values, encoded by
//! hand (with random noise in the fields and reserved bits the decoder
//! ignores), must decode to themselves; any raw value must decode to fields
//! that re-encode to exactly its decoded bits.

use crate::nvme_spec::Cap;
use proptest::prelude::*;

/// The bits `Cap` decodes: MQES 15:0, CQR 16, TO 31:24, DSTRD 35:32,
/// CSS 44:37, MPSMIN 51:48, MPSMAX 55:52.
const DECODED: u64 = 0x00ff_1fef_ff01_ffff;

/// Builds CAP from its fields (the encoder the driver never needs).
fn encode(c: &Cap) -> u64 {
    u64::from(c.mqes)
        | u64::from(c.cqr) << 16
        | u64::from(c.to) << 24
        | u64::from(c.dstrd) << 32
        | u64::from(c.css) << 37
        | u64::from(c.mpsmin) << 48
        | u64::from(c.mpsmax) << 52
}

prop_compose! {
    /// A CAP with every decoded field in its range.
    fn cap()(
        mqes in any::<u16>(),
        cqr in any::<bool>(),
        to in any::<u8>(),
        dstrd in 0u8..16,
        css in any::<u8>(),
        mpsmin in 0u8..16,
        mpsmax in 0u8..16,
    ) -> Cap {
        Cap { mqes, cqr, to, dstrd, css, mpsmin, mpsmax }
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn nvme_decoded_mask_is_the_spec_layout() {
    // DECODED, bit by bit from the layout, so that the constant is checked.
    let mask = 0xffff | 1 << 16 | 0xff << 24 | 0xf << 32 | 0xff << 37 | 0xf << 48 | 0xf << 52;
    assert_eq!(DECODED, mask);
}

proptest! {
    #![proptest_config(config(4000))]

    /// encode, then decode: every field comes back, whatever the undecoded
    /// bits (AMS, NSSRS, BPS, PMRS, CMBS, reserved) hold.
    #[test]
    fn nvme_fields_roundtrip(c in cap(), noise in any::<u64>()) {
        let raw = encode(&c) | (noise & !DECODED);
        let d = Cap::from_raw(raw);
        prop_assert_eq!(d.mqes, c.mqes, "MQES of {:#018x}", raw);
        prop_assert_eq!(d.cqr, c.cqr, "CQR of {:#018x}", raw);
        prop_assert_eq!(d.to, c.to, "TO of {:#018x}", raw);
        prop_assert_eq!(d.dstrd, c.dstrd, "DSTRD of {:#018x}", raw);
        prop_assert_eq!(d.css, c.css, "CSS of {:#018x}", raw);
        prop_assert_eq!(d.mpsmin, c.mpsmin, "MPSMIN of {:#018x}", raw);
        prop_assert_eq!(d.mpsmax, c.mpsmax, "MPSMAX of {:#018x}", raw);
    }

    /// decode, then encode: any register gives back exactly its decoded bits,
    /// and no field is ever out of its range.
    #[test]
    fn nvme_raw_roundtrip(raw in any::<u64>()) {
        let d = Cap::from_raw(raw);
        prop_assert_eq!(encode(&d), raw & DECODED, "{:#018x}", raw);
        prop_assert!(d.dstrd < 16 && d.mpsmin < 16 && d.mpsmax < 16, "{:?}", d);
    }

    /// The derived values follow the spec's formulas.
    #[test]
    fn nvme_derived_values(c in cap()) {
        let d = Cap::from_raw(encode(&c));
        prop_assert_eq!(u64::from(d.max_queue_entries()), u64::from(c.mqes) + 1);
        prop_assert_eq!(d.doorbell_stride() as u64, 2u64.pow(2 + u32::from(c.dstrd)));
        prop_assert_eq!(u64::from(d.timeout_ms()), u64::from(c.to) * 500);
        prop_assert_eq!(d.min_page_size() as u64, 2u64.pow(12 + u32::from(c.mpsmin)));
        prop_assert_eq!(d.max_page_size() as u64, 2u64.pow(12 + u32::from(c.mpsmax)));
        prop_assert_eq!(d.supports_nvm(), c.css % 2 == 1);
    }
}
