//! The device-profile parser on arbitrary text: an error or a profile, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = suture::device::DeviceProfile::parse("fuzz.toml", text);
    }
});
