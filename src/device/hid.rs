//! HID enumeration and report I/O through hidapi (cargo feature `hid`, on by default; the pure-Rust
//! `linux-native-basic-udev` backend on Linux, so no system packages are needed).

/// One HID interface present on the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HidInfo {
    /// USB vendor id.
    pub vendor_id: u16,
    /// USB product id.
    pub product_id: u16,
    /// Manufacturer string, if the device reports one.
    pub manufacturer: String,
    /// Product string, if the device reports one.
    pub product: String,
    /// OS path of the interface.
    pub path: String,
    /// Interface number (-1 if unknown).
    pub interface: i32,
}

/// The HID subsystem could not be opened (hidapi's message).
#[derive(Debug, thiserror::Error)]
#[error("cannot open the HID subsystem: {0}")]
pub struct EnumerateError(String);

/// The HID interfaces present, or why they cannot be listed.
pub fn enumerate() -> Result<Vec<HidInfo>, EnumerateError> {
    let api = hidapi::HidApi::new().map_err(|e| EnumerateError(e.to_string()))?;
    Ok(api
        .device_list()
        .map(|d| HidInfo {
            vendor_id: d.vendor_id(),
            product_id: d.product_id(),
            manufacturer: d.manufacturer_string().unwrap_or("").to_string(),
            product: d.product_string().unwrap_or("").to_string(),
            path: d.path().to_string_lossy().into_owned(),
            interface: d.interface_number(),
        })
        .collect())
}

/// Report I/O over an open hidapi device (non-blocking reads).
pub struct HidapiTransport {
    dev: hidapi::HidDevice,
}

impl super::Transport for HidapiTransport {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, super::DeviceError> {
        self.dev
            .read_timeout(buf, 0)
            .map_err(|e| super::DeviceError::Io(e.to_string()))
    }

    fn write(&mut self, report: &[u8]) -> Result<(), super::DeviceError> {
        self.dev
            .write(report)
            .map(|_| ())
            .map_err(|e| super::DeviceError::Io(e.to_string()))
    }
}

/// Open the device at `path` (an [`HidInfo::path`] from [`enumerate`]) with `profile`: two
/// devices of one model (one per hand) are told apart by their paths.
pub fn open_path(
    profile: super::DeviceProfile,
    path: &str,
) -> Result<super::HidDevice<HidapiTransport>, super::DeviceError> {
    let api = hidapi::HidApi::new().map_err(|e| super::DeviceError::Io(e.to_string()))?;
    let c = std::ffi::CString::new(path)
        .map_err(|_| super::DeviceError::Io(format!("bad device path {path:?}")))?;
    let dev = api
        .open_path(&c)
        .map_err(|e| super::DeviceError::Io(format!("{path}: {e}")))?;
    Ok(super::HidDevice::new(profile, HidapiTransport { dev }))
}

/// Open the first present device that `profile` serves.
pub fn open(
    profile: super::DeviceProfile,
) -> Result<super::HidDevice<HidapiTransport>, super::DeviceError> {
    let api = hidapi::HidApi::new().map_err(|e| super::DeviceError::Io(e.to_string()))?;
    for &pid in &profile.product_ids {
        if let Ok(dev) = api.open(profile.vendor_id, pid) {
            return Ok(super::HidDevice::new(profile, HidapiTransport { dev }));
        }
    }
    Err(super::DeviceError::Io(format!(
        "no device for profile \"{}\" ({:04x}:{:04x?}) is present",
        profile.name, profile.vendor_id, profile.product_ids
    )))
}
