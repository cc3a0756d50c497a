//! Type constructors (MPI 4.0 §5.1.2-5.1.4). Each places copies of its
//! input types at displacements; `Layout` accumulates the merged blocks,
//! the run-length encoded elements and the bounds. Results are
//! uncommitted until `commit`.

use super::{Basic, Class, Contents, Elem, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;

/// MPI_COMBINER_* values (MPICH's).
pub mod combiner {
    pub const NAMED: i32 = 1;
    pub const DUP: i32 = 2;
    pub const CONTIGUOUS: i32 = 3;
    pub const VECTOR: i32 = 4;
    pub const HVECTOR: i32 = 6;
    pub const INDEXED: i32 = 7;
    pub const HINDEXED: i32 = 9;
    pub const INDEXED_BLOCK: i32 = 10;
    pub const STRUCT: i32 = 12;
    pub const SUBARRAY: i32 = 13;
    pub const DARRAY: i32 = 14;
    pub const F90_REAL: i32 = 15;
    pub const F90_COMPLEX: i32 = 16;
    pub const F90_INTEGER: i32 = 17;
    pub const RESIZED: i32 = 18;
    pub const HINDEXED_BLOCK: i32 = 19;
}

#[derive(Default)]
struct Layout {
    blocks: Vec<(isize, usize)>,
    elems: Vec<(Elem, u64)>,
    size: usize,
    bounds: Option<(isize, isize)>,
    true_bounds: Option<(isize, isize)>,
    align: usize,
}

fn alignment(e: &Elem) -> usize {
    match e.basic {
        Basic::Complex { bytes } => (bytes as usize / 2).max(1),
        Basic::LongDouble | Basic::LongDoubleComplex => 16,
        Basic::Pair(_) => e.first.clamp(4, 16),
        _ => e.size.clamp(1, 16),
    }
}

impl Layout {
    /// `n` copies of `t`, back to back (t.extent apart), from `disp`.
    fn place(&mut self, disp: isize, n: usize, t: &TypeInfo) -> MpiResult<()> {
        if n == 0 {
            return Ok(());
        }
        let span = (n - 1) as isize * t.extent;
        match t.blocks.as_slice() {
            // Copies of a gapless type merge into one block: no loop, so
            // MPI_Type_contiguous(2^31, MPI_BYTE) costs nothing.
            [(o, l)] if *l as isize == t.extent => self.push_block(disp + o, l * n),
            _ => {
                for k in 0..n {
                    let at = disp + k as isize * t.extent;
                    for &(o, l) in &t.blocks {
                        self.push_block(at + o, l);
                    }
                }
            }
        }
        let (lo, hi) = (disp + t.lb + span.min(0), disp + t.lb + t.extent + span.max(0));
        self.bounds = Some(self.bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        if t.size > 0 {
            let (lo, hi) = (disp + t.true_lb + span.min(0), disp + t.true_lb + t.true_extent + span.max(0));
            self.true_bounds = Some(self.true_bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
        if n > 0 {
            for _ in 0..n.min(2) {
                for &(e, c) in &t.elems {
                    self.push_elem(e, c);
                }
            }
            if n > 2 {
                // The repeated middle copies, folded into counts.
                let extra = (n - 2) as u64;
                if t.elems.len() == 1 {
                    self.elems.last_mut().unwrap().1 += extra * t.elems[0].1;
                } else {
                    for _ in 0..n - 2 {
                        for &(e, c) in &t.elems {
                            self.push_elem(e, c);
                        }
                    }
                }
            }
            self.size = self.size.checked_add(t.size.checked_mul(n).ok_or_else(too_big)?).ok_or_else(too_big)?;
            for (e, _) in &t.elems {
                self.align = self.align.max(alignment(e));
            }
        }
        Ok(())
    }

    fn push_block(&mut self, o: isize, l: usize) {
        if l == 0 {
            return;
        }
        if let Some(last) = self.blocks.last_mut() {
            if last.0 + last.1 as isize == o {
                last.1 += l;
                return;
            }
        }
        self.blocks.push((o, l));
    }

    fn push_elem(&mut self, e: Elem, c: u64) {
        if let Some(last) = self.elems.last_mut() {
            if last.0 == e {
                last.1 += c;
                return;
            }
        }
        self.elems.push((e, c));
    }

    fn finish(self, combiner: i32, ints: Vec<i64>, addresses: Vec<isize>, types: Vec<TypeRef>) -> TypeInfo {
        let (lb, ub) = self.bounds.unwrap_or((0, 0));
        let (tlb, tub) = self.true_bounds.unwrap_or((0, 0));
        let mut t = TypeInfo {
            name: String::new(),
            size: self.size,
            lb,
            extent: ub - lb,
            true_lb: tlb,
            true_extent: tub - tlb,
            blocks: self.blocks,
            basic: Basic::Derived,
            elems: self.elems,
            contents: Some(Box::new(Contents { combiner, ints, addresses, large: vec![], types })),
            committed: false,
            class: Class::Irregular,
        };
        t.class = t.classify();
        t
    }
}

fn too_big() -> crate::error::MpiError {
    crate::error::MpiError::new(
        crate::error::ErrorClass::Count,
        "the type would hold more bytes than the address space",
    )
}

fn count(n: i64, what: &str) -> MpiResult<usize> {
    if n < 0 {
        return err!(Count, "{what} {n} is negative");
    }
    Ok(n as usize)
}

pub fn contiguous(n: i64, old: &TypeRef) -> MpiResult<TypeInfo> {
    let c = count(n, "count")?;
    let mut l = Layout::default();
    l.place(0, c, old)?;
    Ok(l.finish(combiner::CONTIGUOUS, vec![n], vec![], vec![old.clone()]))
}

/// MPI_Type_vector (stride in items, `bytes` false) and
/// MPI_Type_create_hvector (stride in bytes).
pub fn vector(n: i64, blocklen: i64, stride: isize, bytes: bool, old: &TypeRef) -> MpiResult<TypeInfo> {
    let c = count(n, "count")?;
    let b = count(blocklen, "blocklength")?;
    let step = if bytes { stride } else { stride * old.extent };
    let mut l = Layout::default();
    for i in 0..c {
        l.place(i as isize * step, b, old)?;
    }
    Ok(if bytes {
        l.finish(combiner::HVECTOR, vec![n, blocklen], vec![stride], vec![old.clone()])
    } else {
        l.finish(combiner::VECTOR, vec![n, blocklen, stride as i64], vec![], vec![old.clone()])
    })
}

/// MPI_Type_indexed (displacements in items) and MPI_Type_create_hindexed
/// (in bytes).
pub fn indexed(blocklens: &[i64], disps: &[isize], bytes: bool, old: &TypeRef) -> MpiResult<TypeInfo> {
    let mut l = Layout::default();
    for (&b, &d) in blocklens.iter().zip(disps) {
        let at = if bytes { d } else { d * old.extent };
        l.place(at, count(b, "blocklength")?, old)?;
    }
    let n = blocklens.len() as i64;
    Ok(if bytes {
        l.finish(combiner::HINDEXED, [vec![n], blocklens.to_vec()].concat(), disps.to_vec(), vec![old.clone()])
    } else {
        let ints = [vec![n], blocklens.to_vec(), disps.iter().map(|&d| d as i64).collect()].concat();
        l.finish(combiner::INDEXED, ints, vec![], vec![old.clone()])
    })
}

/// MPI_Type_create_indexed_block and MPI_Type_create_hindexed_block.
pub fn indexed_block(blocklen: i64, disps: &[isize], bytes: bool, old: &TypeRef) -> MpiResult<TypeInfo> {
    let b = count(blocklen, "blocklength")?;
    let mut l = Layout::default();
    for &d in disps {
        l.place(if bytes { d } else { d * old.extent }, b, old)?;
    }
    let n = disps.len() as i64;
    Ok(if bytes {
        l.finish(combiner::HINDEXED_BLOCK, vec![n, blocklen], disps.to_vec(), vec![old.clone()])
    } else {
        let ints = [vec![n, blocklen], disps.iter().map(|&d| d as i64).collect()].concat();
        l.finish(combiner::INDEXED_BLOCK, ints, vec![], vec![old.clone()])
    })
}

/// MPI_Type_create_struct. The extent is padded to the strictest
/// alignment of the members, as a C compiler pads a struct.
pub fn structure(blocklens: &[i64], disps: &[isize], types: &[TypeRef]) -> MpiResult<TypeInfo> {
    let mut l = Layout::default();
    for ((&b, &d), t) in blocklens.iter().zip(disps).zip(types) {
        l.place(d, count(b, "blocklength")?, t)?;
    }
    let align = l.align.max(1) as isize;
    if let Some((lb, ub)) = l.bounds {
        let ext = ub - lb;
        let padded = (ext + align - 1) / align * align;
        l.bounds = Some((lb, lb + padded.max(ext)));
    }
    let n = blocklens.len() as i64;
    Ok(l.finish(combiner::STRUCT, [vec![n], blocklens.to_vec()].concat(), disps.to_vec(), types.to_vec()))
}

/// MPI_Type_create_resized.
pub fn resized(old: &TypeRef, lb: isize, extent: isize) -> MpiResult<TypeInfo> {
    let mut l = Layout::default();
    l.place(0, 1, old)?;
    l.bounds = Some((lb, lb + extent));
    Ok(l.finish(combiner::RESIZED, vec![], vec![lb, extent], vec![old.clone()]))
}

pub fn dup(old: &TypeRef) -> TypeInfo {
    let mut t = (**old).clone();
    t.name = String::new();
    t.contents = Some(Box::new(Contents {
        combiner: combiner::DUP,
        ints: vec![],
        addresses: vec![],
        large: vec![],
        types: vec![old.clone()],
    }));
    t
}

/// Row-major (C) or column-major (Fortran) linear index.
fn linear(idx: &[usize], sizes: &[usize], fortran: bool) -> usize {
    let n = idx.len();
    let mut lin = 0;
    for k in 0..n {
        let d = if fortran { n - 1 - k } else { k };
        lin = lin * sizes[d] + idx[d];
    }
    lin
}

/// Visit every index tuple of per-dimension index lists, the fastest
/// dimension last for C order, first for Fortran order.
fn each_index(lists: &[Vec<usize>], fortran: bool, mut f: impl FnMut(&[usize])) {
    let n = lists.len();
    if lists.iter().any(|l| l.is_empty()) {
        return;
    }
    let mut pos = vec![0usize; n];
    let mut idx: Vec<usize> = lists.iter().map(|l| l[0]).collect();
    loop {
        f(&idx);
        // advance the fastest dimension first
        let mut k = 0;
        loop {
            if k == n {
                return;
            }
            let d = if fortran { k } else { n - 1 - k };
            pos[d] += 1;
            if pos[d] < lists[d].len() {
                idx[d] = lists[d][pos[d]];
                break;
            }
            pos[d] = 0;
            idx[d] = lists[d][0];
            k += 1;
        }
    }
}

/// Place one element of `old` for every index tuple, at its linear
/// position in the full array, and give the type the full array's extent.
fn array_layout(lists: &[Vec<usize>], sizes: &[usize], fortran: bool, old: &TypeRef) -> MpiResult<Layout> {
    let mut l = Layout::default();
    let mut err = Ok(());
    each_index(lists, fortran, |idx| {
        if err.is_ok() {
            err = l.place(linear(idx, sizes, fortran) as isize * old.extent, 1, old);
        }
    });
    err?;
    let total: usize = sizes.iter().product();
    l.bounds = Some((0, total as isize * old.extent));
    Ok(l)
}

pub const ORDER_C: i32 = 56;
pub const ORDER_FORTRAN: i32 = 57;

fn order(o: i32) -> MpiResult<bool> {
    match o {
        ORDER_C => Ok(false),
        ORDER_FORTRAN => Ok(true),
        _ => err!(Arg, "order {o} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
    }
}

/// MPI_Type_create_subarray.
pub fn subarray(sizes: &[i64], subsizes: &[i64], starts: &[i64], ord: i32, old: &TypeRef) -> MpiResult<TypeInfo> {
    let fortran = order(ord)?;
    if sizes.is_empty() {
        return err!(Arg, "ndims must be at least 1");
    }
    let mut lists = Vec::new();
    for d in 0..sizes.len() {
        let (n, s, st) = (sizes[d], subsizes[d], starts[d]);
        if n < 1 || s < 1 || s > n || st < 0 || st > n - s {
            return err!(Arg, "dimension {d}: subarray of {s} from {st} does not fit an array of {n} (need 1 <= subsize <= size, 0 <= start <= size - subsize)");
        }
        lists.push((st as usize..(st + s) as usize).collect());
    }
    let us: Vec<usize> = sizes.iter().map(|&x| x as usize).collect();
    let l = array_layout(&lists, &us, fortran, old)?;
    let n = sizes.len() as i64;
    let ints = [vec![n], sizes.to_vec(), subsizes.to_vec(), starts.to_vec(), vec![ord as i64]].concat();
    Ok(l.finish(combiner::SUBARRAY, ints, vec![], vec![old.clone()]))
}

pub const DISTRIBUTE_BLOCK: i32 = 121;
pub const DISTRIBUTE_CYCLIC: i32 = 122;
pub const DISTRIBUTE_NONE: i32 = 123;
pub const DISTRIBUTE_DFLT_DARG: i32 = -49767;

/// MPI_Type_create_darray: the elements process `rank` of a `psizes`
/// process grid (row-major) owns under the per-dimension distributions.
#[allow(clippy::too_many_arguments)]
pub fn darray(
    size: i64,
    rank: i64,
    gsizes: &[i64],
    distribs: &[i32],
    dargs: &[i32],
    psizes: &[i64],
    ord: i32,
    old: &TypeRef,
) -> MpiResult<TypeInfo> {
    let fortran = order(ord)?;
    let nd = gsizes.len();
    if psizes.iter().product::<i64>() != size {
        return err!(Arg, "the process grid {psizes:?} does not have {size} processes");
    }
    if rank < 0 || rank >= size {
        return err!(Rank, "rank {rank} is not in 0..{size}");
    }
    // process coordinates, row-major over psizes
    let mut coords = vec![0i64; nd];
    let mut r = rank;
    for d in (0..nd).rev() {
        coords[d] = r % psizes[d];
        r /= psizes[d];
    }
    let mut lists = Vec::new();
    for d in 0..nd {
        let (g, p, c) = (gsizes[d], psizes[d], coords[d]);
        if g < 1 || p < 1 {
            return err!(Arg, "dimension {d}: global size {g} and process count {p} must be positive");
        }
        let list: Vec<usize> = match distribs[d] {
            DISTRIBUTE_NONE => {
                if p != 1 {
                    return err!(Arg, "dimension {d}: MPI_DISTRIBUTE_NONE needs 1 process, not {p}");
                }
                (0..g as usize).collect()
            }
            DISTRIBUTE_BLOCK => {
                let b = if dargs[d] == DISTRIBUTE_DFLT_DARG { (g + p - 1) / p } else { dargs[d] as i64 };
                if b * p < g || b < 1 {
                    return err!(Arg, "dimension {d}: block size {b} times {p} processes does not cover {g} elements");
                }
                let lo = (c * b).min(g);
                let hi = ((c + 1) * b).min(g);
                (lo as usize..hi as usize).collect()
            }
            DISTRIBUTE_CYCLIC => {
                let b = if dargs[d] == DISTRIBUTE_DFLT_DARG { 1 } else { dargs[d] as i64 };
                if b < 1 {
                    return err!(Arg, "dimension {d}: cyclic block size {b} must be positive");
                }
                let mut v = Vec::new();
                let mut start = c * b;
                while start < g {
                    v.extend(start as usize..(start + b).min(g) as usize);
                    start += p * b;
                }
                v
            }
            x => return err!(Arg, "dimension {d}: distribution {x} is not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE"),
        };
        lists.push(list);
    }
    let us: Vec<usize> = gsizes.iter().map(|&x| x as usize).collect();
    let l = array_layout(&lists, &us, fortran, old)?;
    let n = nd as i64;
    let ints = [
        vec![size, rank, n],
        gsizes.to_vec(),
        distribs.iter().map(|&x| x as i64).collect(),
        dargs.iter().map(|&x| x as i64).collect(),
        psizes.to_vec(),
        vec![ord as i64],
    ]
    .concat();
    Ok(l.finish(combiner::DARRAY, ints, vec![], vec![old.clone()]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::TypeInfo;

    fn int() -> TypeRef {
        static INT: std::sync::OnceLock<TypeInfo> = std::sync::OnceLock::new();
        TypeRef::Builtin(INT.get_or_init(|| TypeInfo::basic("MPI_INT", Basic::Int { bytes: 4, signed: true }, 4)))
    }

    #[test]
    fn vector_is_strided_and_contiguous_merges() {
        let v = vector(3, 2, 5, false, &int()).unwrap();
        assert_eq!(v.blocks, vec![(0, 8), (20, 8), (40, 8)]);
        assert_eq!((v.size, v.lb, v.extent), (24, 0, 48));
        assert_eq!(v.class, Class::Strided { offset: 0, count: 3, len: 8, stride: 20 });
        let c = contiguous(4, &int()).unwrap();
        assert_eq!(c.blocks, vec![(0, 16)]);
        assert!(matches!(c.class, Class::Contiguous { offset: 0 }));
        assert_eq!(c.elems.len(), 1);
        assert_eq!(c.elems[0].1, 4);
    }

    #[test]
    fn nested_vectors_and_3d_faces_are_recognised() {
        let v = TypeRef::Derived(std::sync::Arc::new(vector(3, 1, 4, false, &int()).unwrap()));
        let vv = vector(2, 1, 10, true, &v).unwrap();
        assert_eq!(vv.class, Class::Nested { offset: 0, outer: 2, outer_stride: 10, count: 3, len: 4, stride: 16 });
        // a 4x3x1 block of a 4x5x6 array: 4 groups of 3 single elements
        let face = subarray(&[4, 5, 6], &[4, 3, 1], &[0, 0, 0], ORDER_C, &int()).unwrap();
        assert_eq!(face.class, Class::Nested { offset: 0, outer: 4, outer_stride: 120, count: 3, len: 4, stride: 24 });
        // the whole z = 0 face is one stride: (i, j, 0) at 120 i + 24 j = 24 (5 i + j)
        let z0 = subarray(&[4, 5, 6], &[4, 5, 1], &[0, 0, 0], ORDER_C, &int()).unwrap();
        assert_eq!(z0.class, Class::Strided { offset: 0, count: 20, len: 4, stride: 24 });
        let rows = subarray(&[4, 5, 6], &[4, 1, 6], &[0, 2, 0], ORDER_C, &int()).unwrap();
        assert!(matches!(rows.class, Class::Strided { count: 4, len: 24, .. }));
    }

    #[test]
    fn negative_displacements_and_resized_bounds() {
        let t = indexed(&[1, 1], &[-2, 1], false, &int()).unwrap();
        assert_eq!((t.lb, t.extent, t.true_lb, t.true_extent), (-8, 16, -8, 16));
        let r = resized(&TypeRef::Derived(std::sync::Arc::new(t)), -4, 40).unwrap();
        assert_eq!((r.lb, r.extent, r.true_lb, r.true_extent), (-4, 40, -8, 16));
    }

    #[test]
    fn struct_extent_is_padded_like_c() {
        let dbl = TypeRef::Derived(std::sync::Arc::new(TypeInfo::basic("MPI_DOUBLE", Basic::Float { bytes: 8 }, 8)));
        let ch = TypeRef::Derived(std::sync::Arc::new(TypeInfo::basic("MPI_CHAR", Basic::Char, 1)));
        let s = structure(&[1, 1], &[0, 8], &[dbl, ch]).unwrap();
        assert_eq!((s.size, s.extent), (9, 16));
    }

    #[test]
    fn subarray_in_both_orders() {
        // 4x5 array, 2x3 block from (1,1)
        let c = subarray(&[4, 5], &[2, 3], &[1, 1], ORDER_C, &int()).unwrap();
        assert_eq!(c.blocks, vec![(24, 12), (44, 12)]);
        assert_eq!((c.lb, c.extent), (0, 80));
        let f = subarray(&[4, 5], &[2, 3], &[1, 1], ORDER_FORTRAN, &int()).unwrap();
        // column-major: element (i,j) at i + 4j
        assert_eq!(f.blocks, vec![(20, 8), (36, 8), (52, 8)]);
        assert!(subarray(&[4], &[5], &[0], ORDER_C, &int()).is_err());
    }

    #[test]
    fn darray_block_and_cyclic_cover_the_array_once() {
        let mut seen = vec![0; 10 * 6];
        for rank in 0..4 {
            let t = darray(
                4,
                rank,
                &[10, 6],
                &[DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC],
                &[DISTRIBUTE_DFLT_DARG, 2],
                &[2, 2],
                ORDER_C,
                &int(),
            )
            .unwrap();
            assert_eq!(t.extent, 240);
            for &(o, l) in &t.blocks {
                for k in 0..l / 4 {
                    seen[o as usize / 4 + k] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    }
}
