//! Shared by the recording fuzz targets (included with `#[path]`).

/// The same bytes with each whole chunk's CRC set right.
pub fn fix_crcs(data: &[u8]) -> Vec<u8> {
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
