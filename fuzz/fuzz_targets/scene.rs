//! The scene parser on arbitrary text: an error or a scene, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = suture::scene::parse("fuzz.toml", text, suture::scene::Overrides::default());
    }
});
