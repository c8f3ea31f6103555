//! Property tests: encode then decode gives the message back, byte-exactly,
//! for random messages; the dirent encoder respects its limits; decoding
//! random and mutated bytes never panics.

use crate::p9::dirent::{encode_rreaddir, Dirent};
use crate::p9::{decode_reply, decode_request, encode_reply, encode_request, Error, Frame, Reply};
use crate::p9_harness;
use crate::p9_model::{self, dirent_bytes, Entry};
use proptest::collection::vec;
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn request_roundtrip(m in p9_model::request(false), tag in any::<u16>()) {
        m.with(|req| {
            let mut buf = vec![0u8; 1024];
            let len = encode_request(tag, &req, &mut buf).unwrap();
            let bytes = &buf[..len];
            prop_assert_eq!(u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize, len);
            prop_assert_eq!(decode_request(bytes, len as u32), Ok(Frame { tag, body: req }));
            prop_assert_eq!(decode_request(bytes, len as u32 - 1).err(),
                Some(Error::TooLarge { size: len as u32, msize: len as u32 - 1 }));
            p9_harness::roundtrip(bytes);
            p9_harness::decode_any(bytes);
            Ok(())
        })?;
    }

    #[test]
    fn reply_roundtrip(m in p9_model::reply(false), tag in any::<u16>()) {
        m.with(|rep| {
            let mut buf = vec![0u8; 1024];
            let len = encode_reply(tag, &rep, &mut buf).unwrap();
            let bytes = &buf[..len];
            prop_assert_eq!(decode_reply(bytes, len as u32), Ok(Frame { tag, body: rep }));
            p9_harness::roundtrip(bytes);
            p9_harness::decode_any(bytes);
            Ok(())
        })?;
    }

    #[test]
    fn rreaddir_fills_up_to_the_limit(
        entries in vec(p9_model::entry(false), 0..24),
        count in 0u32..1200,
        buf_len in 0usize..1200,
        tag in any::<u16>(),
    ) {
        let mut buf = vec![0u8; buf_len];
        let dirents = entries.iter().map(|e| Dirent {
            qid: e.qid, offset: e.offset, ty: e.ty, name: &e.name,
        });
        let limit = (count as usize).min(buf_len.saturating_sub(11));
        match encode_rreaddir(tag, count, dirents, &mut buf) {
            Ok(outcome) => {
                let n = outcome.entries;
                let data = dirent_bytes(&entries[..n]);
                prop_assert!(data.len() <= limit);
                // Stopped only because the next entry did not fit.
                if let Some(next) = entries.get(n) {
                    prop_assert!(data.len() + dirent_bytes(std::slice::from_ref(next)).len() > limit);
                }
                let frame = decode_reply(&buf[..outcome.len], u32::MAX).unwrap();
                prop_assert_eq!(frame.tag, tag);
                let Reply::Readdir(readdir) = frame.body else { panic!("not Rreaddir") };
                prop_assert_eq!(readdir.data.as_bytes(), &data[..]);
                let back: Vec<Entry> = readdir.data.iter().map(|d| Entry {
                    qid: d.qid, offset: d.offset, ty: d.ty, name: d.name.to_vec(),
                }).collect();
                prop_assert_eq!(&back[..], &entries[..n]);
            }
            Err(e) => {
                prop_assert_eq!(e, Error::BufferTooSmall);
                let first = entries.first().map(|e| dirent_bytes(std::slice::from_ref(e)).len());
                prop_assert!(buf_len < 11 || first.is_some_and(|len| len > limit));
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..300)) {
        p9_harness::decode_any(&bytes);
        p9_harness::roundtrip(&bytes);
    }

    #[test]
    fn mutated_frames_never_panic(
        m in p9_model::reply(false),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        m.with(|rep| {
            let mut buf = vec![0u8; 1024];
            let len = encode_reply(7, &rep, &mut buf).unwrap();
            buf.truncate(len);
            for (at, byte) in &flips {
                let i = at.index(len);
                buf[i] = *byte;
            }
            p9_harness::decode_any(&buf);
            p9_harness::roundtrip(&buf);
        });
    }

    #[test]
    fn mutated_requests_never_panic(
        m in p9_model::request(false),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        m.with(|req| {
            let mut buf = vec![0u8; 1024];
            let len = encode_request(7, &req, &mut buf).unwrap();
            buf.truncate(len);
            for (at, byte) in &flips {
                let i = at.index(len);
                buf[i] = *byte;
            }
            p9_harness::decode_any(&buf);
            p9_harness::roundtrip(&buf);
        });
    }
}
