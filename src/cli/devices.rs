//! `suture devices`: the device profiles in a folder, the HID interfaces present, each with the
//! profile that matches it, and what each vendor SDK backend finds (or why it finds nothing:
//! its library missing, no device, no permission).

use std::process::ExitCode;

use suture::device::DeviceProfile;

/// `suture devices --profiles DIR`.
pub fn devices(dir: &str, libraries: &super::run::VendorLibraries) -> ExitCode {
    let profiles = match suture::device::load_dir(dir) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{} device profiles in {dir}/:", profiles.len());
    for (file, p) in &profiles {
        let ids: Vec<String> = p.product_ids.iter().map(|id| format!("{id:04x}")).collect();
        println!(
            "  {file}: {} ({:04x}:{}, {:?} mode, {})",
            p.name,
            p.vendor_id,
            ids.join("/"),
            p.mode,
            if p.output.is_some() {
                format!("force ≤ {} N", p.max_force)
            } else {
                "input only".to_string()
            }
        );
    }
    let hid = list_hid(&profiles);
    let vendor = list_vendor(dir, libraries);
    if hid != ExitCode::SUCCESS {
        hid
    } else {
        vendor
    }
}

/// The vendor profiles in DIR/vendor/, and what each SDK finds.
fn list_vendor(dir: &str, libraries: &super::run::VendorLibraries) -> ExitCode {
    use suture::device::vendor::{Backend, Probe, SdkError, load_profiles};
    use suture::device::{forcedimension, openhaptics};
    let vendor_dir = format!("{dir}/vendor");
    for backend in [Backend::OpenHaptics, Backend::ForceDimension] {
        let profiles = match load_profiles(&vendor_dir, backend) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let probe: Result<Probe, SdkError> = match backend {
            Backend::OpenHaptics => openhaptics::probe(libraries.openhaptics.as_deref()),
            Backend::ForceDimension => forcedimension::probe(libraries.forcedimension.as_deref()),
        };
        let names: Vec<String> = profiles
            .iter()
            .map(|(f, p)| format!("{f} ({}, force ≤ {} N)", p.name, p.max_force))
            .collect();
        println!(
            "{}: {} profiles in {vendor_dir}/: {}",
            backend.name(),
            profiles.len(),
            names.join(", ")
        );
        match probe {
            Err(e) => println!("  nothing found: {e}"),
            Ok(p) => {
                println!("  library {}", p.library);
                for (spec, model) in &p.devices {
                    println!("  --device {spec}: {model}");
                }
                if let Some(why) = &p.none {
                    println!("  no device: {why}");
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// The HID interfaces present, each with its matching profile (or none).
#[cfg(feature = "hid")]
fn list_hid(profiles: &[(String, DeviceProfile)]) -> ExitCode {
    let found = match suture::device::hid::enumerate() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if found.is_empty() {
        println!(
            "no HID devices found (plug one in, or check permissions on /dev/hidraw*); the mouse works without one"
        );
        return ExitCode::SUCCESS;
    }
    println!("{} HID interfaces:", found.len());
    for d in &found {
        let matched = profiles
            .iter()
            .find(|(_, p)| p.matches(d.vendor_id, d.product_id))
            .map_or("no profile".to_string(), |(f, _)| format!("profile {f}"));
        println!(
            "  {:04x}:{:04x} {} {} (interface {}, {}): {matched}",
            d.vendor_id, d.product_id, d.manufacturer, d.product, d.interface, d.path
        );
    }
    ExitCode::SUCCESS
}

#[cfg(not(feature = "hid"))]
fn list_hid(_: &[(String, DeviceProfile)]) -> ExitCode {
    println!("built without HID support (cargo feature `hid`): no devices can be listed");
    ExitCode::SUCCESS
}
