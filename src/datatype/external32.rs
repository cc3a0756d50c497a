//! The external32 representation (MPI 4.0 §5.1.11 and §14.5.2): every
//! basic element big-endian, at the standard's size. Packing first packs
//! natively (type map order), then converts element by element using the
//! type's run-length element list.

use super::{Basic, Elem, PairKind, TypeInfo};

/// Convert `n` bytes of native integer `src` (little-endian) to `dst`
/// big-endian, truncating or sign-extending to `dst.len()`.
fn int_out(src: &[u8], dst: &mut [u8], signed: bool) {
    let neg = signed && src.last().is_some_and(|b| b & 0x80 != 0);
    let m = dst.len();
    for (i, d) in dst.iter_mut().enumerate() {
        let k = m - 1 - i; // significance of this output byte
        *d = if k < src.len() {
            src[k]
        } else if neg {
            0xff
        } else {
            0
        };
    }
}

fn int_in(src: &[u8], dst: &mut [u8], signed: bool) {
    let neg = signed && src.first().is_some_and(|b| b & 0x80 != 0);
    let m = src.len();
    for (k, d) in dst.iter_mut().enumerate() {
        *d = if k < m {
            src[m - 1 - k]
        } else if neg {
            0xff
        } else {
            0
        };
    }
}

/// x87 80-bit extended (stored in 16 bytes) to IEEE binary128, big-endian.
fn long_double_out(src: &[u8], dst: &mut [u8]) {
    let mant = u64::from_le_bytes(src[0..8].try_into().unwrap());
    let se = u16::from_le_bytes(src[8..10].try_into().unwrap());
    // Same exponent bias (16383); binary128 drops the explicit integer bit.
    let frac = (mant & 0x7fff_ffff_ffff_ffff) as u128;
    let q: u128 = (se as u128) << 112 | frac << 49;
    dst.copy_from_slice(&q.to_be_bytes());
}

fn long_double_in(src: &[u8], dst: &mut [u8]) {
    let q = u128::from_be_bytes(src.try_into().unwrap());
    let se = (q >> 112) as u16;
    let frac = ((q >> 49) as u64) & 0x7fff_ffff_ffff_ffff;
    let exp = se & 0x7fff;
    let int_bit = if exp != 0 { 1u64 << 63 } else { 0 };
    dst[0..8].copy_from_slice(&(frac | int_bit).to_le_bytes());
    dst[8..10].copy_from_slice(&se.to_le_bytes());
    dst[10..16].fill(0);
}

fn index_ext(kind: PairKind) -> (usize, bool) {
    match kind {
        PairKind::TwoFloat => (4, false),
        PairKind::TwoDouble => (8, false),
        _ => (4, true),
    }
}

/// One element, native -> external (`out` true) or back.
fn convert(e: &Elem, src: &[u8], dst: &mut [u8], out: bool) {
    let flip = |s: &[u8], d: &mut [u8]| {
        for (i, b) in s.iter().rev().enumerate() {
            d[i] = *b;
        }
    };
    match e.basic {
        Basic::Float { .. } => flip(src, dst),
        Basic::Complex { bytes } => {
            let h = bytes as usize / 2;
            flip(&src[..h], &mut dst[..h]);
            flip(&src[h..], &mut dst[h..]);
        }
        Basic::LongDouble => {
            if out {
                long_double_out(src, dst)
            } else {
                long_double_in(src, dst)
            }
        }
        Basic::LongDoubleComplex => {
            for h in [0, 16] {
                if out {
                    long_double_out(&src[h..h + 16], &mut dst[h..h + 16])
                } else {
                    long_double_in(&src[h..h + 16], &mut dst[h..h + 16])
                }
            }
        }
        Basic::Pair(kind) => {
            let (idx, int_index) = index_ext(kind);
            let (vn, vx) = (e.first, e.ext - idx);
            let (sv, dv) = if out { (vn, vx) } else { (vx, vn) };
            let value = Elem { basic: pair_value(kind), size: vn, first: vn, ext: vx };
            convert(&value, &src[..sv], &mut dst[..dv], out);
            let index = Elem {
                basic: if int_index { Basic::Int { bytes: 4, signed: true } } else { pair_value(kind) },
                size: idx,
                first: idx,
                ext: idx,
            };
            convert(&index, &src[sv..], &mut dst[dv..], out);
        }
        Basic::Int { signed, .. } => {
            if out {
                int_out(src, dst, signed)
            } else {
                int_in(src, dst, signed)
            }
        }
        _ => {
            if out {
                int_out(src, dst, false)
            } else {
                int_in(src, dst, false)
            }
        }
    }
}

fn pair_value(kind: PairKind) -> Basic {
    match kind {
        PairKind::FloatInt | PairKind::TwoFloat => Basic::Float { bytes: 4 },
        PairKind::DoubleInt | PairKind::TwoDouble => Basic::Float { bytes: 8 },
        PairKind::LongDoubleInt => Basic::LongDouble,
        PairKind::LongInt => Basic::Int { bytes: 8, signed: true },
        PairKind::ShortInt => Basic::Int { bytes: 2, signed: true },
        PairKind::TwoInt | PairKind::TwoFortranInt => Basic::Int { bytes: 4, signed: true },
    }
}

/// Convert a natively packed stream of `count` items of `t` to external32.
pub fn to_external(t: &TypeInfo, count: usize, native: &[u8], ext: &mut [u8]) {
    let (mut i, mut o) = (0, 0);
    for _ in 0..count {
        for (e, n) in &t.elems {
            for _ in 0..*n {
                convert(e, &native[i..i + e.size], &mut ext[o..o + e.ext], true);
                i += e.size;
                o += e.ext;
            }
        }
    }
}

/// Convert external32 data of `count` items of `t` to a native packed stream.
pub fn from_external(t: &TypeInfo, count: usize, ext: &[u8], native: &mut [u8]) {
    let (mut i, mut o) = (0, 0);
    for _ in 0..count {
        for (e, n) in &t.elems {
            for _ in 0..*n {
                convert(e, &ext[i..i + e.ext], &mut native[o..o + e.size], false);
                i += e.ext;
                o += e.size;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: &TypeInfo, native: &[u8]) -> Vec<u8> {
        let mut ext = vec![0u8; t.external_size(1)];
        to_external(t, 1, native, &mut ext);
        let mut back = vec![0u8; native.len()];
        from_external(t, 1, &ext, &mut back);
        assert_eq!(back, native, "{}", t.name);
        ext
    }

    #[test]
    fn integers_and_floats_are_big_endian_at_standard_sizes() {
        let int = TypeInfo::basic("MPI_INT", Basic::Int { bytes: 4, signed: true }, 4);
        assert_eq!(round_trip(&int, &1i32.to_le_bytes()), vec![0, 0, 0, 1]);
        let long = TypeInfo::basic("MPI_LONG", Basic::Int { bytes: 8, signed: true }, 8).with_external_size(4);
        let mut ext = vec![0u8; 4];
        to_external(&long, 1, &0x0102030405060708i64.to_le_bytes(), &mut ext);
        assert_eq!(ext, vec![5, 6, 7, 8], "as MPICH packs it");
        assert_eq!(round_trip(&long, &(-3i64).to_le_bytes()), vec![0xff, 0xff, 0xff, 0xfd]);
        let dbl = TypeInfo::basic("MPI_DOUBLE", Basic::Float { bytes: 8 }, 8);
        assert_eq!(round_trip(&dbl, &1.0f64.to_le_bytes()), vec![0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn long_double_becomes_binary128() {
        let ld = TypeInfo::basic("MPI_LONG_DOUBLE", Basic::LongDouble, 16);
        // 1.0L in x87 extended: mantissa 0x8000000000000000, exponent 0x3fff
        let one: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f, 0, 0, 0, 0, 0, 0];
        let ext = round_trip(&ld, &one);
        assert_eq!(&ext[..2], &[0x3f, 0xff]);
        assert!(ext[2..].iter().all(|&b| b == 0));
    }

    #[test]
    fn pairs_convert_both_parts() {
        let di = TypeInfo::packed_pair(PairKind::DoubleInt, 8, 4);
        let mut native = 2.0f64.to_le_bytes().to_vec();
        native.extend(7i32.to_le_bytes());
        let ext = round_trip(&di, &native);
        assert_eq!(ext, vec![0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]);
    }
}
