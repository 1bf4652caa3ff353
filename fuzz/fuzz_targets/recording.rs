//! The recording decoder on arbitrary bytes: never panics, never allocates beyond the input's
//! size, and whatever it decodes re-encodes to a file that decodes to the same bytes. Each
//! input is decoded twice: as it is (exercising the framing and CRC checks) and with every
//! chunk's CRC recomputed (so mutations reach the payload parser behind the CRC).
#![no_main]
use libfuzzer_sys::fuzz_target;
use suture::session::format::{decode, encode, salvage};

fn check(data: &[u8]) {
    let (part, _) = salvage(data);
    if let Ok(r) = decode(data) {
        assert_eq!(encode(&r), encode(&part));
        let again = encode(&r);
        assert_eq!(
            encode(&decode(&again).expect("a re-encoded recording decodes")),
            again
        );
    }
}

/// The same bytes with each whole chunk's CRC set right.
fn fix_crcs(data: &[u8]) -> Vec<u8> {
    let mut b = data.to_vec();
    let mut at = 12;
    while b.len() >= at + 9 {
        let n = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        if b.len() - at - 9 < n {
            break;
        }
        let crc = crc32fast::hash(&b[at + 4..at + 5 + n]);
        b[at + 5 + n..at + 9 + n].copy_from_slice(&crc.to_le_bytes());
        at += 9 + n;
    }
    b
}

fuzz_target!(|data: &[u8]| {
    check(data);
    check(&fix_crcs(data));
});
