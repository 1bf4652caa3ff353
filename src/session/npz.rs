//! NumPy `.npz` export and import: a ZIP archive (stored, no compression) of `.npy` v1.0
//! arrays of little-endian f64 (`<f8`, C order). Readable by `numpy.load`.

use std::collections::BTreeMap;
use std::io::{self, Write};

/// An f64 array with its shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Shape, C order.
    pub shape: Vec<usize>,
    /// Values, C order.
    pub data: Vec<f64>,
}

/// Errors reading an `.npz` file.
#[derive(Debug, thiserror::Error)]
pub enum NpzError {
    /// I/O.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// Not an archive this module writes (stored ZIP of `<f8` .npy).
    #[error("malformed .npz: {0}")]
    Format(String),
}

fn npy_bytes(a: &Array) -> Vec<u8> {
    let shape = match a.shape.len() {
        1 => format!("({},)", a.shape[0]),
        _ => format!(
            "({})",
            a.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
    // magic(6) + version(2) + len(2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 8 * a.data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in &a.data {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Write named arrays as an `.npz` archive (each stored as `<name>.npy`).
pub fn write<W: Write>(mut w: W, arrays: &[(String, Array)]) -> io::Result<()> {
    let mut central = Vec::new();
    let mut offset: u32 = 0;
    for (name, a) in arrays {
        assert_eq!(
            a.shape.iter().product::<usize>(),
            a.data.len(),
            "invariant: shape matches data"
        );
        let file = format!("{name}.npy");
        let body = npy_bytes(a);
        let crc = crc32fast::hash(&body);
        let size = u32::try_from(body.len())
            .map_err(|_| io::Error::other("array larger than 4 GiB (no ZIP64)"))?;
        let mut local = Vec::new();
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&20u16.to_le_bytes()); // version needed
        local.extend_from_slice(&0u16.to_le_bytes()); // flags
        local.extend_from_slice(&0u16.to_le_bytes()); // stored
        local.extend_from_slice(&0u16.to_le_bytes()); // time
        local.extend_from_slice(&0x21u16.to_le_bytes()); // date 1980-01-01
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&(file.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(file.as_bytes());
        w.write_all(&local)?;
        w.write_all(&body)?;
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes()); // made by
        central.extend_from_slice(&local[4..30]); // version needed .. extra len
        central.extend_from_slice(&0u16.to_le_bytes()); // comment len
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attrs
        central.extend_from_slice(&0u32.to_le_bytes()); // external attrs
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(file.as_bytes());
        offset = offset
            .checked_add((local.len() + body.len()) as u32)
            .ok_or_else(|| io::Error::other("archive larger than 4 GiB (no ZIP64)"))?;
    }
    w.write_all(&central)?;
    let mut end = Vec::new();
    end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    end.extend_from_slice(&[0, 0, 0, 0]);
    end.extend_from_slice(&(arrays.len() as u16).to_le_bytes());
    end.extend_from_slice(&(arrays.len() as u16).to_le_bytes());
    end.extend_from_slice(&(central.len() as u32).to_le_bytes());
    end.extend_from_slice(&offset.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    w.write_all(&end)?;
    w.flush()
}

fn u16_at(b: &[u8], i: usize) -> Result<u16, NpzError> {
    b.get(i..i + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| NpzError::Format("truncated".into()))
}
fn u32_at(b: &[u8], i: usize) -> Result<u32, NpzError> {
    b.get(i..i + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| NpzError::Format("truncated".into()))
}

fn parse_npy(b: &[u8]) -> Result<Array, NpzError> {
    let bad = |m: &str| NpzError::Format(m.to_string());
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return Err(bad("array without .npy magic"));
    }
    let hlen = u16_at(b, 8)? as usize;
    let header = std::str::from_utf8(
        b.get(10..10 + hlen)
            .ok_or_else(|| bad("truncated header"))?,
    )
    .map_err(|_| bad("header not UTF-8"))?;
    if !header.contains("'descr': '<f8'") || !header.contains("'fortran_order': False") {
        return Err(bad("only C-order <f8 arrays are supported"));
    }
    let s = header.find("'shape': (").ok_or_else(|| bad("no shape"))? + 10;
    let e = header[s..].find(')').ok_or_else(|| bad("no shape"))? + s;
    let shape: Vec<usize> = header[s..e]
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_, _>>()?;
    let n: usize = shape.iter().product();
    let data_bytes = b.get(10 + hlen..).ok_or_else(|| bad("truncated data"))?;
    if data_bytes.len() != 8 * n {
        return Err(bad("data length does not match shape"));
    }
    let data = data_bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("invariant: chunk of 8")))
        .collect();
    Ok(Array { shape, data })
}

/// Read every array of an `.npz` archive written with stored (uncompressed) entries.
pub fn read(bytes: &[u8]) -> Result<BTreeMap<String, Array>, NpzError> {
    let eocd = (0..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(bytes, i).ok() == Some(0x0605_4b50))
        .ok_or_else(|| NpzError::Format("no end-of-central-directory record".into()))?;
    let count = u16_at(bytes, eocd + 10)? as usize;
    let mut at = u32_at(bytes, eocd + 16)? as usize;
    let mut out = BTreeMap::new();
    for _ in 0..count {
        if u32_at(bytes, at)? != 0x0201_4b50 {
            return Err(NpzError::Format("bad central directory entry".into()));
        }
        let method = u16_at(bytes, at + 10)?;
        let crc = u32_at(bytes, at + 16)?;
        let size = u32_at(bytes, at + 20)? as usize;
        let nlen = u16_at(bytes, at + 28)? as usize;
        let xlen = u16_at(bytes, at + 30)? as usize;
        let clen = u16_at(bytes, at + 32)? as usize;
        let local = u32_at(bytes, at + 42)? as usize;
        let name = String::from_utf8_lossy(
            bytes
                .get(at + 46..at + 46 + nlen)
                .ok_or_else(|| NpzError::Format("truncated name".into()))?,
        )
        .to_string();
        if method != 0 {
            return Err(NpzError::Format(format!(
                "{name}: compressed entries are not supported"
            )));
        }
        let lname = u16_at(bytes, local + 26)? as usize;
        let lextra = u16_at(bytes, local + 28)? as usize;
        let start = local + 30 + lname + lextra;
        let body = bytes
            .get(start..start + size)
            .ok_or_else(|| NpzError::Format(format!("{name}: truncated")))?;
        if crc32fast::hash(body) != crc {
            return Err(NpzError::Format(format!("{name}: CRC mismatch")));
        }
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        out.insert(key, parse_npy(body)?);
        at += 46 + nlen + xlen + clen;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let arrays = vec![
            (
                "times".to_string(),
                Array {
                    shape: vec![3],
                    data: vec![0.0, 0.5, 1.0],
                },
            ),
            (
                "rod0".to_string(),
                Array {
                    shape: vec![3, 2, 3],
                    data: (0..18).map(|i| i as f64 * 0.1 - 1.0).collect(),
                },
            ),
        ];
        let mut buf = Vec::new();
        write(&mut buf, &arrays).unwrap();
        let back = read(&buf).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back["times"], arrays[0].1);
        assert_eq!(back["rod0"], arrays[1].1);
        // A flipped data byte is caught by the CRC.
        let mut bad = buf.clone();
        bad[39 + 128 + 4] ^= 1; // inside the data of times.npy
        assert!(read(&bad).is_err());
    }
}
