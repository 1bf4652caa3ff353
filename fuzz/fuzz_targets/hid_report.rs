//! HID input-report decoding with the shipped profiles on arbitrary reports: an error or a
//! state, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use suture::device::{DeviceProfile, InputState};

static PROFILES: OnceLock<Vec<DeviceProfile>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let profiles = PROFILES.get_or_init(|| {
        [
            include_str!("../../devices/open_stylus.toml"),
            include_str!("../../devices/spacemouse.toml"),
            include_str!("../../devices/spacemouse_6axis.toml"),
        ]
        .iter()
        .map(|t| DeviceProfile::parse("profile.toml", t).expect("shipped profile"))
        .collect()
    });
    for p in profiles {
        let mut state = InputState::default();
        let _ = p.decode(data, &mut state);
    }
});
