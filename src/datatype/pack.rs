//! Moving typed data between user buffers and packed byte streams.

use super::TypeInfo;

/// Pack `count` items of `ty` starting at `src` into `dst` (exactly
/// `ty.size * count` bytes).
///
/// # Safety
/// `src` must be readable over the items' extents (`count * ty.extent`
/// bytes, blocks only).
pub unsafe fn pack(ty: &TypeInfo, count: usize, src: *const u8, dst: &mut [u8]) {
    if ty.is_contiguous() {
        // SAFETY: contiguous: the caller guarantees dst.len() readable bytes.
        unsafe { std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        return;
    }
    let mut out = 0;
    for i in 0..count {
        for &(off, len) in &ty.blocks {
            // SAFETY: the block lies inside item i, which the caller
            // guarantees readable; `out + len <= dst.len()` by size.
            unsafe { std::ptr::copy_nonoverlapping(src.add(i * ty.extent + off), dst.as_mut_ptr().add(out), len) };
            out += len;
        }
    }
}

/// Unpack `src` (a whole number of items' worth of bytes or a prefix of
/// them, as after a short message) into items of `ty` at `dst`.
///
/// # Safety
/// `dst` must be writable over the items the bytes cover.
pub unsafe fn unpack(ty: &TypeInfo, src: &[u8], dst: *mut u8) {
    if ty.is_contiguous() {
        // SAFETY: per the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        return;
    }
    let mut inp = 0;
    let mut item = 0;
    while inp < src.len() {
        for &(off, len) in &ty.blocks {
            let n = len.min(src.len() - inp);
            // SAFETY: the block lies inside an item the bytes cover.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(inp), dst.add(item * ty.extent + off), n) };
            inp += n;
            if inp == src.len() {
                return;
            }
        }
        item += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PairKind, TypeInfo};
    use super::*;

    #[test]
    fn pairs_with_gaps_round_trip() {
        let si = TypeInfo::pair("MPI_SHORT_INT", PairKind::ShortInt, 2, 2, 4);
        let src: Vec<u8> = (0..24).collect();
        let mut packed = vec![0u8; 18];
        // SAFETY: 3 items of extent 8 = 24 readable bytes.
        unsafe { pack(&si, 3, src.as_ptr(), &mut packed) };
        assert_eq!(
            packed,
            vec![0, 1, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23]
        );
        let mut back = vec![0xffu8; 24];
        // SAFETY: 24 writable bytes.
        unsafe { unpack(&si, &packed, back.as_mut_ptr()) };
        for i in 0..24 {
            let gap = matches!(i % 8, 2 | 3);
            assert_eq!(back[i], if gap { 0xff } else { i as u8 }, "byte {i}");
        }
    }
}
