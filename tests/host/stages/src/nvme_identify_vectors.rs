//! Stage 07: `IdCtrl::parse` and `IdNs::parse` on Identify pages built by
//! hand, byte by byte, from the NVMe 1.4 data structures (section 5.15,
//! figures 247 and 249):
//!
//! ```text
//!  Identify Controller              Identify Namespace
//!  bytes    field                   bytes        field
//!  1:0      VID    PCI vendor ID    7:0          NSZE   size in blocks
//!  3:2      SSVID                   ...
//!  23:4     SN     serial, ASCII    26           FLBAS  3:0 format in use,
//!  63:24    MN     model, ASCII                         4 metadata at end
//!  71:64    FR     firmware, ASCII  ...
//!  ...                              128+4i..+3   LBAF i (i = 0..15):
//!  77       MDTS   max transfer                  15:0 MS, 23:16 LBADS,
//!  79:78    CNTLID                               25:24 RP
//!  ...
//!  519:516  NN     namespaces       33           DLFEAT what a deallocated
//!  521:520  ONCS   2: DSM                        block reads as
//!  525      VWC    0: write cache
//!  539:536  SGLS
//! ```
//!
//! Every byte the parser must not read is filled with `FILL`, so a field
//! read one byte off shows as 0xee in the result.

use crate::nvme_identify::{ascii, IdCtrl, IdNs, IDENTIFY_SIZE};

const FILL: u8 = 0xee;

/// A page with `bytes` written at `at`, everything else `FILL`.
fn put(page: &mut [u8], at: usize, bytes: &[u8]) {
    page[at..at + bytes.len()].copy_from_slice(bytes);
}

/// QEMU's Identify Controller, as far as the driver reads it.
fn ctrl_page() -> Vec<u8> {
    let mut p = vec![FILL; 4096];
    put(&mut p, 0, &[0x36, 0x1b]); // VID 0x1b36, little-endian
    put(&mut p, 4, b"rkw0001             "); // SN: 20 bytes, space padded
    put(&mut p, 24, b"QEMU NVMe Ctrl                          "); // MN: 40 bytes
    put(&mut p, 64, b"7.2.0   "); // FR: 8 bytes
    p[77] = 7; // MDTS: 4 KiB << 7 = 512 KiB
    put(&mut p, 78, &[0x34, 0x12]); // CNTLID 0x1234
    put(&mut p, 516, &[0x01, 0x02, 0x03, 0x04]); // NN 0x04030201
    put(&mut p, 520, &[0x5d, 0x01]); // ONCS 0x015d: Dataset Management (bit 2), ...
    p[525] = 0x07; // VWC: present (bit 0), flush of all namespaces
    put(&mut p, 536, &[0x01, 0x00, 0x10, 0x80]); // SGLS 0x80100001
    p
}

#[test]
fn nvme_identify_size_is_a_page() {
    assert_eq!(IDENTIFY_SIZE, 4096);
}

#[test]
fn nvme_id_ctrl_fields_at_the_spec_offsets() {
    let id = IdCtrl::parse(&ctrl_page()).expect("a full page parses");
    assert_eq!(id.vid, 0x1b36);
    assert_eq!(&id.sn, b"rkw0001             ");
    assert_eq!(&id.mn, b"QEMU NVMe Ctrl                          ");
    assert_eq!(&id.fr, b"7.2.0   ");
    assert_eq!(id.mdts, 7);
    assert_eq!(id.cntlid, 0x1234);
    assert_eq!(id.nn, 0x0403_0201);
    assert_eq!(id.sgls, 0x8010_0001);
    assert!(id.supports_sgl());
    assert_eq!((id.oncs, id.vwc), (0x015d, 0x07));
    assert!(id.supports_dsm() && id.has_write_cache());
    assert_eq!(ascii(&id.sn), "rkw0001");
    assert_eq!(ascii(&id.mn), "QEMU NVMe Ctrl");
    assert_eq!(ascii(&id.fr), "7.2.0");
}

#[test]
fn nvme_id_ctrl_field_edges() {
    // The first and last byte of each text field are its own.
    let mut p = ctrl_page();
    p[4] = b'<';
    p[23] = b'>';
    p[24] = b'[';
    p[63] = b']';
    p[64] = b'(';
    p[71] = b')';
    let id = IdCtrl::parse(&p).unwrap();
    assert_eq!((id.sn[0], id.sn[19]), (b'<', b'>'));
    assert_eq!((id.mn[0], id.mn[39]), (b'[', b']'));
    assert_eq!((id.fr[0], id.fr[7]), (b'(', b')'));
    // The bytes between the fields are not read: 2..4 (SSVID), 72..77,
    // 80..516, 522..525, 526..536, 540.. stay FILL and change nothing.
    let mut q = ctrl_page();
    for b in [2, 3, 72, 76, 80, 515, 522, 524, 526, 535, 540, 4095] {
        q[b] = 0x00;
    }
    assert_eq!(IdCtrl::parse(&q), IdCtrl::parse(&ctrl_page()));
}

#[test]
fn nvme_id_ctrl_short_pages() {
    let p = ctrl_page();
    // SGLS ends at byte 539: 540 bytes are the least that parse.
    assert!(IdCtrl::parse(&p[..540]).is_some());
    assert_eq!(IdCtrl::parse(&p[..540]), IdCtrl::parse(&p));
    for len in [0, 1, 2, 23, 63, 77, 78, 79, 80, 516, 519, 520, 536, 539] {
        assert_eq!(IdCtrl::parse(&p[..len]), None, "{len} bytes");
    }
}

#[test]
fn nvme_id_ctrl_max_transfer() {
    let mut id = IdCtrl::parse(&ctrl_page()).unwrap();
    // MDTS 7, in units of the minimum page size: 4096 << 7 = 524288.
    assert_eq!(id.max_transfer(4096), Some(524_288));
    assert_eq!(id.max_transfer(8192), Some(1 << 20));
    // MDTS 0: no limit.
    id.mdts = 0;
    assert_eq!(id.max_transfer(4096), None);
    id.mdts = 1;
    assert_eq!(id.max_transfer(4096), Some(8192));
}

/// An Identify Namespace page: `nsze` blocks, format `flbas`, and LBA
/// format descriptors `lbaf` (MS, LBADS, RP) from byte 128.
fn ns_page(nsze: u64, flbas: u8, lbaf: &[(u16, u8, u8)]) -> Vec<u8> {
    let mut p = vec![FILL; 4096];
    put(&mut p, 0, &nsze.to_le_bytes());
    p[26] = flbas;
    for (i, &(ms, lbads, rp)) in lbaf.iter().enumerate() {
        let [ms0, ms1] = ms.to_le_bytes();
        put(&mut p, 128 + 4 * i, &[ms0, ms1, lbads, rp]);
    }
    p
}

#[test]
fn nvme_id_ns_qemu_default() {
    // QEMU's default namespace: format 0, 512-byte blocks (LBADS 9), no
    // metadata. 0x20000 blocks = 64 MiB.
    let mut p = ns_page(0x2_0000, 0, &[(0, 9, 0)]);
    p[33] = 0x09; // DLFEAT: deallocated blocks read as zeroes
    let ns = IdNs::parse(&p).expect("parses");
    assert_eq!(
        ns,
        IdNs {
            nsze: 0x2_0000,
            format: 0,
            lbads: 9,
            ms: 0,
            dlfeat: 0x09
        }
    );
    assert_eq!(ns.block_size(), Some(512));
}

#[test]
fn nvme_id_ns_nsze_is_64_bit_little_endian() {
    let p = ns_page(0x0102_0304_0506_0708, 0, &[(0, 12, 0)]);
    assert_eq!(&p[..8], &[0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]);
    assert_eq!(IdNs::parse(&p).unwrap().nsze, 0x0102_0304_0506_0708);
}

#[test]
fn nvme_id_ns_format_selects_the_descriptor() {
    // Formats 0..=3 with LBADS 9, 10, 12, 13 and metadata sizes that would
    // confuse a parser reading the wrong byte of the descriptor.
    let lbaf = [(8, 9, 0), (16, 10, 1), (0, 12, 2), (64, 13, 3)];
    for (format, lbads, ms) in [(0u8, 9u8, 8u16), (1, 10, 16), (2, 12, 0), (3, 13, 64)] {
        let ns = IdNs::parse(&ns_page(1000, format, &lbaf)).unwrap();
        assert_eq!(
            (ns.format, ns.lbads, ns.ms),
            (format, lbads, ms),
            "FLBAS {format}"
        );
        // Only the format without metadata has a block size the driver
        // can use.
        let want = if ms == 0 { Some(1 << lbads) } else { None };
        assert_eq!(ns.block_size(), want, "FLBAS {format}");
    }
    // FLBAS bit 4 (metadata at the end of the block) and bits 7:5 are not
    // part of the index: 0x13 and 0xf3 are format 3.
    for flbas in [0x13, 0xf3] {
        assert_eq!(
            IdNs::parse(&ns_page(1000, flbas, &lbaf)).unwrap().lbads,
            13,
            "{flbas:#x}"
        );
    }
}

/// QEMU's LBA formats (hw/nvme/ns.c): 512 or 4096 bytes, each with 0, 8,
/// 16 or 64 bytes of metadata. A namespace formatted with metadata (by the
/// C driver's `nvme format -l 1`, say) has no block size the driver can
/// use: it moves data alone, so the metadata would go to bus address 0, or
/// (extended LBAs, FLBAS bit 4) every block would be longer than it thinks.
#[test]
fn nvme_id_ns_metadata_has_no_block_size() {
    let lbaf = [
        (0, 9, 0),
        (8, 9, 0),
        (16, 9, 0),
        (64, 9, 0),
        (0, 12, 0),
        (8, 12, 0),
        (16, 12, 0),
        (64, 12, 0),
    ];
    for (flbas, want) in [
        (0u8, Some(512)),
        (1, None),
        (2, None),
        (3, None),
        (4, Some(4096)),
        (5, None),
        (7, None),
        // Extended LBAs (bit 4): the metadata at the end of each block.
        (0x11, None),
        (0x15, None),
        // Bit 4 without metadata changes nothing.
        (0x10, Some(512)),
    ] {
        let ns = IdNs::parse(&ns_page(1000, flbas, &lbaf)).unwrap();
        assert_eq!(ns.block_size(), want, "FLBAS {flbas:#x}: {ns:?}");
    }
    // MS is 16 bits, little endian: 0x0100 is 256 bytes, not 0 or 1.
    let ns = IdNs::parse(&ns_page(1, 0, &[(0x100, 9, 0)])).unwrap();
    assert_eq!((ns.ms, ns.block_size()), (256, None));
}

#[test]
fn nvme_id_ns_format_15_is_the_last_descriptor() {
    // LBAF 15 is bytes 188..192; LBADS at byte 190.
    let mut p = ns_page(1, 15, &[]);
    p[188..191].copy_from_slice(&[0, 0, 12]);
    let ns = IdNs::parse(&p).unwrap();
    assert_eq!((ns.format, ns.lbads, ns.block_size()), (15, 12, Some(4096)));
}

#[test]
fn nvme_id_ns_short_pages() {
    let p = ns_page(7, 0, &[(0, 9, 0)]);
    // Format 0's LBADS is byte 130: 131 bytes are the least that parse.
    assert_eq!(IdNs::parse(&p[..131]), IdNs::parse(&p));
    for len in [0, 7, 8, 26, 27, 128, 130] {
        assert_eq!(IdNs::parse(&p[..len]), None, "{len} bytes");
    }
    // Format 15's LBADS is byte 190.
    let mut p = ns_page(7, 15, &[]);
    p[190] = 9;
    assert!(IdNs::parse(&p[..191]).is_some());
    assert_eq!(IdNs::parse(&p[..190]), None);
}

#[test]
fn nvme_id_ns_block_size_bounds() {
    let ns = |lbads| IdNs {
        nsze: 1,
        format: 0,
        lbads,
        ms: 0,
        dlfeat: 0,
    };
    // Below 512 bytes the specification does not allow a block size.
    for lbads in [0, 1, 8] {
        assert_eq!(ns(lbads).block_size(), None, "LBADS {lbads}");
    }
    assert_eq!(ns(9).block_size(), Some(512));
    assert_eq!(ns(12).block_size(), Some(4096));
    assert_eq!(ns(31).block_size(), Some(0x8000_0000));
    // 2^32 does not fit the u32.
    for lbads in [32, 33, 64, 255] {
        assert_eq!(ns(lbads).block_size(), None, "LBADS {lbads}");
    }
    // And through the parser: FILL (0xee) as LBADS is refused, not a panic.
    let p = ns_page(1, 0, &[(0, FILL, 0)]);
    assert_eq!(IdNs::parse(&p).unwrap().block_size(), None);
}

#[test]
fn nvme_ascii_trims_the_padding() {
    assert_eq!(ascii(b"QEMU NVMe Ctrl      "), "QEMU NVMe Ctrl");
    assert_eq!(ascii(b"rkw0001"), "rkw0001");
    assert_eq!(ascii(b"        "), "");
    assert_eq!(ascii(b""), "");
    // Only trailing spaces go: leading and inner ones are part of the text.
    assert_eq!(ascii(b"  a b  "), "  a b");
}

#[test]
fn nvme_ascii_stops_at_non_printable_bytes() {
    // A NUL, a control character, DEL or a byte >= 0x80 ends the text; what
    // comes before it is kept, without trailing spaces.
    assert_eq!(ascii(b"abc\0def"), "abc");
    assert_eq!(ascii(b"abc \0   "), "abc");
    assert_eq!(ascii(b"ab\ncd"), "ab");
    assert_eq!(ascii(b"ab\x7fcd"), "ab");
    assert_eq!(ascii(b"ab\xc3\xa9cd"), "ab"); // UTF-8 "é": not ASCII
    assert_eq!(ascii(b"\xffabc"), "");
    assert_eq!(ascii(&[FILL; 20]), "");
    // The printable range is 0x20 (space) ..= 0x7e (tilde).
    assert_eq!(ascii(b" ~}"), " ~}");
}

#[test]
fn nvme_id_ctrl_sgl_support_is_bits_1_0() {
    // SGLS bits 1:0: 00 no SGLs, 01 SGLs of any alignment, 10 dword-aligned
    // SGLs, 11 reserved (treated as support, as the C driver does). Other
    // bits (keyed SGL, bit bucket, ...) alone say nothing about NVM commands.
    for (sgls, supported) in [
        (0u32, false),
        (1, true),
        (2, true),
        (3, true),
        (0xffff_fffc, false),
    ] {
        let mut p = ctrl_page();
        put(&mut p, 536, &sgls.to_le_bytes());
        let id = IdCtrl::parse(&p).expect("a full page parses");
        assert_eq!(id.supports_sgl(), supported, "SGLS {sgls:#x}");
    }
}
