//! HID report fields: a little-endian bit field of a report, with an affine map to SI units.
//!
//! A field is `bits` wide (1..=32), starts `bit` bits into byte `byte` of the report (byte 0 is
//! the report id when the device uses numbered reports, as hidapi delivers it), and is signed
//! (two's complement) or unsigned. Its SI value is `raw · scale + offset`. Encoding rounds to
//! the nearest raw value and saturates at the field's range, so a force command can never wrap
//! around to the opposite sign.

/// One field of a HID report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// Byte index of the field's first bit.
    pub byte: usize,
    /// Bit index within that byte (0 = least significant), 0..=7.
    pub bit: u32,
    /// Width in bits, 1..=32.
    pub bits: u32,
    /// Two's complement signed.
    pub signed: bool,
    /// SI units per raw count (e.g. m/count, N/count).
    pub scale: f64,
    /// SI value at raw 0.
    pub offset: f64,
}

/// A field that cannot be read from or written to a report.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FieldError {
    /// The field is malformed (width, bit index or scale).
    #[error("field is malformed: {0}")]
    Malformed(&'static str),
    /// The report is shorter than the field needs.
    #[error("report of {len} bytes is too short for a field ending in byte {need}")]
    TooShort {
        /// Report length [bytes].
        len: usize,
        /// Last byte the field touches (0-based).
        need: usize,
    },
    /// Encoding a non-finite value.
    #[error("cannot encode a non-finite value")]
    NonFinite,
}

impl Field {
    /// Check the field's shape: `1 ≤ bits ≤ 32`, `bit ≤ 7`, finite non-zero scale, finite offset.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(1..=32).contains(&self.bits) {
            return Err(FieldError::Malformed("bits must be in 1..=32"));
        }
        if self.bit > 7 {
            return Err(FieldError::Malformed("bit must be in 0..=7"));
        }
        if !self.scale.is_finite() || self.scale == 0.0 {
            return Err(FieldError::Malformed("scale must be finite and non-zero"));
        }
        if !self.offset.is_finite() {
            return Err(FieldError::Malformed("offset must be finite"));
        }
        Ok(())
    }

    /// Last byte the field touches.
    pub fn last_byte(&self) -> usize {
        self.byte + (self.bit + self.bits - 1) as usize / 8
    }

    /// Smallest and largest raw values.
    pub fn raw_range(&self) -> (i64, i64) {
        if self.signed {
            (-(1i64 << (self.bits - 1)), (1i64 << (self.bits - 1)) - 1)
        } else {
            (0, (1i64 << self.bits) - 1)
        }
    }

    /// The raw value in `report`.
    pub fn raw(&self, report: &[u8]) -> Result<i64, FieldError> {
        self.validate()?;
        let need = self.last_byte();
        if need >= report.len() {
            return Err(FieldError::TooShort {
                len: report.len(),
                need,
            });
        }
        let mut acc: u64 = 0;
        for (k, b) in report[self.byte..=need].iter().enumerate() {
            acc |= (*b as u64) << (8 * k);
        }
        let v = (acc >> self.bit) & ((1u64 << self.bits) - 1);
        Ok(if self.signed && v >> (self.bits - 1) == 1 {
            v as i64 - (1i64 << self.bits)
        } else {
            v as i64
        })
    }

    /// The SI value in `report`: `raw · scale + offset`.
    pub fn decode(&self, report: &[u8]) -> Result<f64, FieldError> {
        Ok(self.raw(report)? as f64 * self.scale + self.offset)
    }

    /// Write the SI value `v` into `report`, rounded to the nearest count and saturated at the
    /// field's range; the other bits of the report are kept. Returns whether it saturated.
    pub fn encode(&self, v: f64, report: &mut [u8]) -> Result<bool, FieldError> {
        self.validate()?;
        if !v.is_finite() {
            return Err(FieldError::NonFinite);
        }
        let need = self.last_byte();
        if need >= report.len() {
            return Err(FieldError::TooShort {
                len: report.len(),
                need,
            });
        }
        let (lo, hi) = self.raw_range();
        let want = ((v - self.offset) / self.scale).round();
        let raw = want.clamp(lo as f64, hi as f64) as i64;
        let saturated = want < lo as f64 || want > hi as f64;
        let mask = ((1u64 << self.bits) - 1) << self.bit;
        let bits = ((raw as u64) << self.bit) & mask;
        for (k, b) in report[self.byte..=need].iter_mut().enumerate() {
            let m = (mask >> (8 * k)) as u8;
            let x = (bits >> (8 * k)) as u8;
            *b = (*b & !m) | (x & m);
        }
        Ok(saturated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(byte: usize, bit: u32, bits: u32, signed: bool) -> Field {
        Field {
            byte,
            bit,
            bits,
            signed,
            scale: 1.0,
            offset: 0.0,
        }
    }

    #[test]
    fn decodes_little_endian_signed_and_unsigned() {
        // SpaceMouse-style report 1: id, then x, y, z as int16 LE.
        let r = [0x01, 0x5e, 0x01, 0xa2, 0xfe, 0x00, 0x80];
        assert_eq!(field(1, 0, 16, true).raw(&r), Ok(350));
        assert_eq!(field(3, 0, 16, true).raw(&r), Ok(-350));
        assert_eq!(field(5, 0, 16, true).raw(&r), Ok(-32768));
        assert_eq!(field(5, 0, 16, false).raw(&r), Ok(32768));
        // A 12-bit field straddling bytes at bit 4: bytes 0x5e 0x01 → bits 4..16 of 0x015e.
        assert_eq!(field(1, 4, 12, false).raw(&r), Ok(0x015));
        // Single bits (buttons).
        let b = [0x03, 0b0000_0101];
        assert_eq!(field(1, 0, 1, false).raw(&b), Ok(1));
        assert_eq!(field(1, 1, 1, false).raw(&b), Ok(0));
        assert_eq!(field(1, 2, 1, false).raw(&b), Ok(1));
        // 32-bit signed.
        let w = [0xff, 0xff, 0xff, 0x7f];
        assert_eq!(field(0, 0, 32, true).raw(&w), Ok(i32::MAX as i64));
    }

    #[test]
    fn scale_and_offset_map_to_si() {
        let f = Field {
            scale: 1e-5, // 10 µm per count
            offset: -0.1,
            ..field(1, 0, 16, true)
        };
        let r = [0x01, 0x10, 0x27]; // 10000 counts
        assert!((f.decode(&r).unwrap() - 0.0).abs() < 1e-15);
    }

    #[test]
    fn encode_round_trips_and_keeps_neighbouring_bits() {
        for (bit, bits, signed) in [(0, 16, true), (3, 11, true), (5, 7, false), (0, 32, true)] {
            let f = Field {
                scale: 0.01,
                offset: 0.5,
                ..field(2, bit, bits, signed)
            };
            let (lo, hi) = f.raw_range();
            for raw in [lo, lo + 1, (-1i64).max(lo), 0, 1, hi - 1, hi] {
                let mut r = [0xa5u8; 8];
                let v = raw as f64 * 0.01 + 0.5;
                assert_eq!(f.encode(v, &mut r), Ok(false));
                assert_eq!(f.raw(&r), Ok(raw), "bit {bit} bits {bits} raw {raw}");
                // Bits outside the field are untouched.
                let mask: u64 = ((1u64 << bits) - 1) << bit; // relative to byte 2
                for (k, byte) in r.iter().enumerate() {
                    let m = if k >= 2 {
                        (mask >> (8 * (k - 2))) as u8
                    } else {
                        0
                    };
                    assert_eq!(byte & !m, 0xa5 & !m, "byte {k} outside the field changed");
                }
            }
        }
    }

    #[test]
    fn encode_saturates_instead_of_wrapping() {
        let f = Field {
            scale: 0.001, // 1 mN per count, int16: ±32.767 N
            ..field(1, 0, 16, true)
        };
        let mut r = [0u8; 3];
        assert_eq!(f.encode(100.0, &mut r), Ok(true));
        assert_eq!(f.raw(&r), Ok(32767));
        assert_eq!(f.encode(-100.0, &mut r), Ok(true));
        assert_eq!(f.raw(&r), Ok(-32768));
        assert_eq!(f.encode(f64::NAN, &mut r), Err(FieldError::NonFinite));
        assert_eq!(
            f.raw(&r),
            Ok(-32768),
            "a refused value leaves the report alone"
        );
    }

    #[test]
    fn short_reports_and_bad_fields_are_errors() {
        assert_eq!(
            field(1, 0, 16, true).raw(&[1, 2]),
            Err(FieldError::TooShort { len: 2, need: 2 })
        );
        assert!(matches!(
            field(0, 0, 33, false).raw(&[0; 8]),
            Err(FieldError::Malformed(_))
        ));
        assert!(matches!(
            field(0, 8, 1, false).raw(&[0; 8]),
            Err(FieldError::Malformed(_))
        ));
        let zero = Field {
            scale: 0.0,
            ..field(0, 0, 8, false)
        };
        assert!(matches!(zero.decode(&[0]), Err(FieldError::Malformed(_))));
    }
}
