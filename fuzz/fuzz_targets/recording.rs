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

#[path = "common/crc.rs"]
mod crc;
use crc::fix_crcs;

fuzz_target!(|data: &[u8]| {
    check(data);
    check(&fix_crcs(data));
});
