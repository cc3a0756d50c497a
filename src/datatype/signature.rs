//! Type signatures (MPI 4.0 §3.3.1): the sequence of basic types a message
//! carries. With `OXMPI_CHECK_TYPES=1` the sender's signature hash travels
//! with each message and the receiver compares it with its own, so a
//! send/receive type mismatch is reported instead of silently garbling
//! data. Signatures are hashed in run-length form, so "10 ints" hashes the
//! same whether it was sent as 10 x MPI_INT or 2 x contiguous(5, MPI_INT).

use super::{Basic, Elem, TypeInfo};

struct Hasher {
    h: u64,
    run: Option<(Elem, u64)>,
}

impl Hasher {
    fn new() -> Hasher {
        Hasher { h: 0xcbf29ce484222325, run: None }
    }

    fn mix(&mut self, v: u64) {
        // FNV-1a over the 8 bytes of v
        for b in v.to_le_bytes() {
            self.h ^= b as u64;
            self.h = self.h.wrapping_mul(0x100000001b3);
        }
    }

    fn key(e: &Elem) -> u64 {
        let (kind, a) = match e.basic {
            Basic::Int { bytes, signed } => (1, bytes as u64 * 2 + signed as u64),
            Basic::FortranInt { bytes } => (1, bytes as u64 * 2 + 1),
            Basic::Float { bytes } => (2, bytes as u64),
            Basic::LongDouble => (3, 0),
            Basic::Complex { bytes } => (4, bytes as u64),
            Basic::LongDoubleComplex => (5, 0),
            Basic::CBool => (6, 0),
            Basic::FortranLogical { bytes } => (7, bytes as u64),
            Basic::Byte => (8, 0),
            Basic::Char => (9, e.size as u64),
            Basic::Packed => (10, 0),
            Basic::Pair(k) => (11, k as u64),
            Basic::Marker | Basic::Derived => (12, 0),
        };
        kind << 32 | a
    }

    fn push(&mut self, e: Elem, n: u64) {
        if n == 0 {
            return;
        }
        match &mut self.run {
            Some((cur, c)) if *cur == e => *c += n,
            _ => {
                self.flush();
                self.run = Some((e, n));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((e, n)) = self.run.take() {
            let k = Self::key(&e);
            self.mix(k);
            self.mix(n);
        }
    }

    fn finish(mut self) -> u64 {
        self.flush();
        self.h
    }
}

/// True if either side's type is MPI_PACKED, which matches any signature.
pub fn is_packed(t: &TypeInfo) -> bool {
    t.elems.iter().any(|(e, _)| e.basic == Basic::Packed)
}

/// The signature hash of `count` items of `t`.
pub fn of_message(t: &TypeInfo, count: usize) -> u64 {
    let mut h = Hasher::new();
    if let [(e, n)] = t.elems.as_slice() {
        h.push(*e, n * count as u64);
    } else {
        for _ in 0..count {
            for &(e, n) in &t.elems {
                h.push(e, n);
            }
        }
    }
    h.finish()
}

/// The signature hash of the first `bytes` bytes of `count` items of `t`
/// (what a receive of `count` items holds when `bytes` arrive); None if
/// the bytes end inside a basic element, which no matching send can do.
pub fn of_prefix(t: &TypeInfo, count: usize, bytes: usize) -> Option<u64> {
    let mut h = Hasher::new();
    let mut left = bytes;
    'items: for _ in 0..count {
        for &(e, n) in &t.elems {
            if left == 0 {
                break 'items;
            }
            let take = (left / e.size).min(n as usize);
            h.push(e, take as u64);
            left -= take * e.size;
            if (take as u64) < n {
                if left != 0 {
                    return None;
                }
                break 'items;
            }
        }
    }
    (left == 0).then(|| h.finish())
}

#[cfg(test)]
mod tests {
    use super::super::{build, TypeRef};
    use super::*;
    use std::sync::Arc;

    fn t(basic: Basic, size: usize) -> TypeRef {
        TypeRef::Derived(Arc::new(TypeInfo::basic("t", basic, size)))
    }

    #[test]
    fn the_same_sequence_hashes_alike_however_it_was_built() {
        let int = t(Basic::Int { bytes: 4, signed: true }, 4);
        let five = build::contiguous(5, &int).unwrap();
        assert_eq!(of_message(&int, 10), of_message(&five, 2));
        assert_eq!(of_prefix(&five, 4, 40), Some(of_message(&int, 10)));
        let dbl = t(Basic::Float { bytes: 8 }, 8);
        assert_ne!(of_message(&int, 2), of_message(&dbl, 1));
        assert_eq!(of_prefix(&int, 4, 6), None, "ends inside an int");
        let s = build::structure(&[1, 1], &[0, 8], &[dbl.clone(), int.clone()]).unwrap();
        let s2 = build::structure(&[1, 1], &[0, 8], &[int.clone(), dbl.clone()]).unwrap();
        assert_ne!(of_message(&s, 1), of_message(&s2, 1), "order matters");
        assert_eq!(of_prefix(&s, 3, 24), Some(of_message(&s, 2)));
    }
}
