//! Moving typed data between user buffers and packed byte streams. The
//! loop is picked by the type's class: one copy for contiguous types, a
//! fixed-size block loop for strided ones, the block list otherwise.

use super::{Class, TypeInfo};

/// Copy one block of `len` bytes; small fixed sizes avoid a memcpy call.
///
/// # Safety
/// Both ranges valid for `len` bytes, not overlapping.
#[inline(always)]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: per the caller's contract.
    unsafe {
        match len {
            4 => std::ptr::write_unaligned(dst as *mut u32, std::ptr::read_unaligned(src as *const u32)),
            8 => std::ptr::write_unaligned(dst as *mut u64, std::ptr::read_unaligned(src as *const u64)),
            16 => std::ptr::write_unaligned(dst as *mut u128, std::ptr::read_unaligned(src as *const u128)),
            _ => std::ptr::copy_nonoverlapping(src, dst, len),
        }
    }
}

/// Pack `count` items of `ty` starting at `src` into `dst` (exactly
/// `ty.size * count` bytes).
///
/// # Safety
/// The items' blocks at `src` must be readable.
pub unsafe fn pack(ty: &TypeInfo, count: usize, src: *const u8, dst: &mut [u8]) {
    let out = dst.as_mut_ptr();
    // SAFETY (all arms): every block read lies in an item the caller
    // guarantees readable; writes stay within `ty.size * count` bytes.
    unsafe {
        match ty.class {
            Class::Contiguous { offset } if ty.extent == ty.size as isize => {
                std::ptr::copy_nonoverlapping(src.wrapping_offset(offset), out, dst.len());
            }
            Class::Strided { offset, count: n, len, stride } => {
                let mut o = 0;
                for i in 0..count {
                    let base = src.wrapping_offset(i as isize * ty.extent + offset);
                    for k in 0..n {
                        copy(base.wrapping_offset(k as isize * stride), out.add(o), len);
                        o += len;
                    }
                }
            }
            Class::Nested { offset, outer, outer_stride, count: n, len, stride } => {
                let mut o = 0;
                for i in 0..count {
                    for g in 0..outer {
                        let base = src.wrapping_offset(i as isize * ty.extent + offset + g as isize * outer_stride);
                        for k in 0..n {
                            copy(base.wrapping_offset(k as isize * stride), out.add(o), len);
                            o += len;
                        }
                    }
                }
            }
            _ => {
                let mut o = 0;
                for i in 0..count {
                    let base = src.wrapping_offset(i as isize * ty.extent);
                    for &(off, len) in &ty.blocks {
                        copy(base.wrapping_offset(off), out.add(o), len);
                        o += len;
                    }
                }
            }
        }
    }
}

/// Unpack `src` (a whole number of items' worth of bytes, or a prefix of
/// them as after a short message) into items of `ty` at `dst`.
///
/// # Safety
/// The blocks of the items the bytes cover must be writable at `dst`.
pub unsafe fn unpack(ty: &TypeInfo, src: &[u8], dst: *mut u8) {
    let n = src.len();
    let inp = src.as_ptr();
    // SAFETY (all arms): writes go to blocks of items the bytes cover
    // (caller's contract); reads stay within `src`.
    unsafe {
        match ty.class {
            Class::Contiguous { offset } if ty.extent == ty.size as isize => {
                std::ptr::copy_nonoverlapping(inp, dst.wrapping_offset(offset), n);
            }
            Class::Nested { offset, outer, outer_stride, count: nb, len, stride }
                if ty.size > 0 && n.is_multiple_of(ty.size) =>
            {
                let mut o = 0;
                for i in 0..n / ty.size {
                    for g in 0..outer {
                        let base = dst.wrapping_offset(i as isize * ty.extent + offset + g as isize * outer_stride);
                        for k in 0..nb {
                            copy(inp.add(o), base.wrapping_offset(k as isize * stride), len);
                            o += len;
                        }
                    }
                }
            }
            Class::Strided { offset, count: nb, len, stride } if ty.size > 0 && n.is_multiple_of(ty.size) => {
                let mut o = 0;
                for i in 0..n / ty.size {
                    let base = dst.wrapping_offset(i as isize * ty.extent + offset);
                    for k in 0..nb {
                        copy(inp.add(o), base.wrapping_offset(k as isize * stride), len);
                        o += len;
                    }
                }
            }
            _ => {
                let mut o = 0;
                let mut item = 0;
                while o < n {
                    let base = dst.wrapping_offset(item as isize * ty.extent);
                    for &(off, len) in &ty.blocks {
                        let take = len.min(n - o);
                        std::ptr::copy_nonoverlapping(inp.add(o), base.wrapping_offset(off), take);
                        o += take;
                        if o == n {
                            return;
                        }
                    }
                    item += 1;
                }
            }
        }
    }
}

/// Visit the memory pieces holding bytes `from..from + n` of the packed
/// stream of items of `ty`: `f(memory offset, stream offset relative to
/// from, length)`. Lets a long message be packed and unpacked piece by
/// piece, straight between user memory and the transport's slots.
fn for_range(ty: &TypeInfo, from: usize, n: usize, mut f: impl FnMut(isize, usize, usize)) {
    if ty.size == 0 || n == 0 {
        return;
    }
    if let Some(offset) = gapless(ty) {
        // items follow each other without gaps: one piece
        f(offset + from as isize, 0, n);
        return;
    }
    let mut item = from / ty.size;
    let mut within = from % ty.size;
    let mut done = 0;
    while done < n {
        let base = item as isize * ty.extent;
        match ty.class {
            Class::Contiguous { offset } => {
                let take = (ty.size - within).min(n - done);
                f(base + offset + within as isize, done, take);
                done += take;
            }
            Class::Strided { offset, count, len, stride } => {
                let (mut k, mut inb) = (within / len, within % len);
                while k < count && done < n {
                    let take = (len - inb).min(n - done);
                    f(base + offset + k as isize * stride + inb as isize, done, take);
                    done += take;
                    k += 1;
                    inb = 0;
                }
            }
            Class::Nested { offset, outer, outer_stride, count, len, stride } => {
                let (mut k, mut inb) = (within / len, within % len);
                while k < outer * count && done < n {
                    let take = (len - inb).min(n - done);
                    let at = offset + (k / count) as isize * outer_stride + (k % count) as isize * stride;
                    f(base + at + inb as isize, done, take);
                    done += take;
                    k += 1;
                    inb = 0;
                }
            }
            Class::Irregular => {
                let mut skip = within;
                for &(o, l) in &ty.blocks {
                    if skip >= l {
                        skip -= l;
                        continue;
                    }
                    let take = (l - skip).min(n - done);
                    f(base + o + skip as isize, done, take);
                    done += take;
                    skip = 0;
                    if done == n {
                        break;
                    }
                }
            }
        }
        item += 1;
        within = 0;
    }
}

/// Pack bytes `from..from + dst.len()` of the packed stream of the items
/// at `src`.
///
/// # Safety
/// The items those bytes come from must be readable at `src`.
pub unsafe fn pack_range(ty: &TypeInfo, src: *const u8, from: usize, dst: &mut [u8]) {
    let out = dst.as_mut_ptr();
    // SAFETY: each piece lies in a readable item (caller) and in `dst`.
    for_range(ty, from, dst.len(), |mem, rel, len| unsafe { copy(src.wrapping_offset(mem), out.add(rel), len) });
}

/// Unpack `src` as bytes `from..from + src.len()` of the packed stream
/// into the items at `dst`.
///
/// # Safety
/// The items those bytes go to must be writable at `dst`.
pub unsafe fn unpack_range(ty: &TypeInfo, src: &[u8], from: usize, dst: *mut u8) {
    let inp = src.as_ptr();
    // SAFETY: each piece lies in a writable item (caller) and in `src`.
    for_range(ty, from, src.len(), |mem, rel, len| unsafe { copy(inp.add(rel), dst.wrapping_offset(mem), len) });
}

/// Where the data of any number of items starts, relative to the buffer,
/// when it is one gapless run (contiguous items whose extent is their size).
pub fn gapless(ty: &TypeInfo) -> Option<isize> {
    match ty.class {
        Class::Contiguous { offset } if ty.extent == ty.size as isize => Some(offset),
        _ => None,
    }
}

/// Whether a long message into this layout is better moved by the
/// kernel's cross-memory copy (few, large blocks) than pushed through the
/// slots: each block costs an iovec and every touched page a pin.
pub fn coarse(ty: &TypeInfo) -> bool {
    ty.is_contiguous() || (ty.blocks.len() <= 64 && ty.size / ty.blocks.len().max(1) >= 8192)
}

/// Whether the blocks of `count` items overlap: such a type may be sent
/// from but not received into (MPI 4.0 §5.1.11).
pub fn overlaps(ty: &TypeInfo, count: usize) -> bool {
    if ty.size == 0 || count == 0 {
        return false;
    }
    if count > 1 && (ty.extent.unsigned_abs() < ty.true_extent as usize) {
        // Items closer than their data span: they may overlap; check.
        if count.saturating_mul(ty.blocks.len()) > 1 << 20 {
            return true;
        }
    }
    let mut spans: Vec<(isize, isize)> = Vec::with_capacity(ty.blocks.len() * count.min(1 << 20));
    for i in 0..count {
        if spans.len() > 1 << 20 {
            break;
        }
        for &(o, l) in &ty.blocks {
            let at = i as isize * ty.extent + o;
            spans.push((at, at + l as isize));
        }
    }
    spans.sort_unstable();
    spans.windows(2).any(|w| w[1].0 < w[0].1)
}

#[cfg(test)]
mod tests {
    use super::super::build;
    use super::super::{Basic, PairKind, TypeInfo, TypeRef};
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pairs_with_gaps_round_trip() {
        let si = TypeInfo::pair("MPI_SHORT_INT", PairKind::ShortInt, 2, 2, 4);
        let src: Vec<u8> = (0..24).collect();
        let mut packed = vec![0u8; 18];
        // SAFETY: 3 items of extent 8 = 24 readable bytes.
        unsafe { pack(&si, 3, src.as_ptr(), &mut packed) };
        assert_eq!(packed, vec![0, 1, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23]);
        let mut back = vec![0xffu8; 24];
        // SAFETY: 24 writable bytes.
        unsafe { unpack(&si, &packed, back.as_mut_ptr()) };
        for (i, &b) in back.iter().enumerate() {
            let gap = matches!(i % 8, 2 | 3);
            assert_eq!(b, if gap { 0xff } else { i as u8 }, "byte {i}");
        }
    }

    /// A small deterministic generator (xorshift), so the property test
    /// needs no crate and replays the same cases.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> i64 {
            (self.next() % n) as i64
        }
    }

    fn leaf(r: &mut Rng) -> TypeRef {
        let sizes = [1usize, 2, 4, 8];
        let s = sizes[r.below(4) as usize];
        TypeRef::Derived(Arc::new(TypeInfo::basic("leaf", Basic::Int { bytes: s as u8, signed: true }, s)))
    }

    /// A random type of nesting depth up to `depth`, with non-negative
    /// displacements and no overlapping blocks.
    fn random_type(r: &mut Rng, depth: u32) -> TypeRef {
        if depth == 0 || r.below(4) == 0 {
            return leaf(r);
        }
        let old = random_type(r, depth - 1);
        let ext = old.extent.max(1);
        let t = match r.below(6) {
            0 => build::contiguous(r.below(4) + 1, &old),
            1 => {
                let b = r.below(3) + 1;
                build::vector(r.below(4) + 1, b, (b + r.below(3)) as isize, false, &old)
            }
            2 => {
                let n = r.below(4) as usize + 1;
                let bl: Vec<i64> = (0..n).map(|_| r.below(3) + 1).collect();
                let mut at = 0;
                let ds: Vec<isize> = bl
                    .iter()
                    .map(|&b| {
                        let d = at + r.below(3) as isize;
                        at = d + b as isize;
                        d
                    })
                    .collect();
                build::indexed(&bl, &ds, false, &old)
            }
            3 => {
                let other = random_type(r, depth - 1);
                let d1 = ext + r.below(16) as isize;
                let d1 = (d1 - other.lb - other.true_lb.min(0)).max(old.true_lb + old.true_extent - other.true_lb);
                build::structure(&[1, 1], &[0, d1], &[old.clone(), other])
            }
            4 => build::resized(&old, 0, ext + r.below(8) as isize),
            _ => build::subarray(
                &[3, 4],
                &[2, 2],
                &[r.below(2), r.below(3)],
                if r.below(2) == 0 { build::ORDER_C } else { build::ORDER_FORTRAN },
                &old,
            ),
        };
        TypeRef::Derived(Arc::new(t.unwrap()))
    }

    /// The naive reference: walk the blocks byte by byte.
    fn naive_pack(t: &TypeInfo, count: usize, buf: &[u8], base: isize) -> Vec<u8> {
        let mut out = Vec::new();
        for i in 0..count {
            for &(o, l) in &t.blocks {
                for b in 0..l as isize {
                    out.push(buf[(base + i as isize * t.extent + o + b) as usize]);
                }
            }
        }
        out
    }

    /// A random type and count, and the buffer geometry that covers them:
    /// (type, count, offset of item 0, buffer length). None when the
    /// layout overlaps itself or is empty.
    fn random_case(r: &mut Rng) -> Option<(TypeRef, usize, isize, usize)> {
        let t = random_type(r, 3);
        let count = r.below(3) as usize + 1;
        if super::overlaps(&t, count) || t.size == 0 {
            return None;
        }
        let lo = (t.true_lb.min(0) + (count as isize - 1) * t.extent.min(0)).min(0);
        let hi = t.true_lb + t.true_extent + (count as isize - 1) * t.extent.max(0);
        let base = -lo + 8;
        Some((t, count, base, (base + hi + 8) as usize))
    }

    #[test]
    fn random_nested_types_pack_and_unpack_like_the_naive_reference() {
        let mut r = Rng(0x9e3779b97f4a7c15);
        for case in 0..400 {
            let Some((t, count, base, len)) = random_case(&mut r) else { continue };
            let buf: Vec<u8> = (0..len).map(|i| (i * 31 + case) as u8).collect();
            let mut packed = vec![0u8; t.size * count];
            // SAFETY: the buffer covers every block of the items (bounds above).
            unsafe { pack(&t, count, buf.as_ptr().offset(base), &mut packed) };
            assert_eq!(packed, naive_pack(&t, count, &buf, base), "case {case}: pack of {:?}", t.blocks);
            let mut back = vec![0u8; len];
            // SAFETY: as above, writable.
            unsafe { unpack(&t, &packed, back.as_mut_ptr().offset(base)) };
            assert_eq!(naive_pack(&t, count, &back, base), packed, "case {case}: unpack");
        }
    }

    #[test]
    fn packing_by_pieces_equals_packing_whole() {
        let mut r = Rng(0x2545f4914f6cdd1d);
        for case in 0..200 {
            let Some((t, count, base, len)) = random_case(&mut r) else { continue };
            let buf: Vec<u8> = (0..len).map(|i| (i * 13 + case) as u8).collect();
            let total = t.size * count;
            let mut whole = vec![0u8; total];
            // SAFETY: the buffer covers the items.
            unsafe { pack(&t, count, buf.as_ptr().offset(base), &mut whole) };
            let piece = r.below(40) as usize + 1;
            let mut pieces = vec![0u8; total];
            let mut back = vec![0u8; len];
            let mut at = 0;
            while at < total {
                let n = piece.min(total - at);
                // SAFETY: as above.
                unsafe {
                    pack_range(&t, buf.as_ptr().offset(base), at, &mut pieces[at..at + n]);
                    unpack_range(&t, &whole[at..at + n], at, back.as_mut_ptr().offset(base));
                }
                at += n;
            }
            assert_eq!(pieces, whole, "case {case}: pack_range");
            assert_eq!(naive_pack(&t, count, &back, base), whole, "case {case}: unpack_range");
        }
    }

    #[test]
    fn overlapping_layouts_are_detected() {
        let int = TypeRef::Derived(Arc::new(TypeInfo::basic("MPI_INT", Basic::Int { bytes: 4, signed: true }, 4)));
        let t = build::indexed(&[2, 1], &[0, 1], false, &int).unwrap();
        assert!(overlaps(&t, 1));
        let ok = build::vector(2, 1, 2, false, &int).unwrap();
        assert!(!overlaps(&ok, 3));
    }
}
