//! Datatypes (DESIGN.md §6): what a type's bytes are (its basic elements,
//! for reductions, `MPI_Get_elements` and signatures) and where they lie
//! (its blocks, for packing). Derived types are built in `build`,
//! classified at commit (`Class`), and moved by `pack`.

pub mod build;
pub mod external32;
pub mod pack;
pub mod signature;

use std::sync::Arc;

/// The kind of the basic elements of a type, which decides what a
/// reduction may do with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Basic {
    /// C integer types (signed or not), `bytes` wide.
    Int {
        bytes: u8,
        signed: bool,
    },
    /// Fortran INTEGER, and the multi-language MPI_AINT, MPI_OFFSET and
    /// MPI_COUNT, which reduce alike (MPI 4.0 §6.9.2): allowed for
    /// MIN/MAX/SUM/PROD/bitwise, not logical ops.
    FortranInt {
        bytes: u8,
    },
    Float {
        bytes: u8,
    },
    LongDouble,
    Complex {
        bytes: u8,
    },
    LongDoubleComplex,
    CBool,
    FortranLogical {
        bytes: u8,
    },
    Byte,
    /// Character types (MPI_CHAR, MPI_WCHAR, MPI_CHARACTER): no predefined
    /// operator reduces them.
    Char,
    Packed,
    /// A value-index pair for MAXLOC/MINLOC.
    Pair(PairKind),
    /// Markers with no data (MPI_LB, MPI_UB).
    Marker,
    /// A derived type: see `TypeInfo::elems` for what it holds.
    Derived,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairKind {
    FloatInt,
    DoubleInt,
    LongInt,
    TwoInt,
    ShortInt,
    LongDoubleInt,
    TwoFloat,
    TwoDouble,
    TwoFortranInt,
}

/// One basic element kind of a type map: a predefined type, by kind and
/// size. A pair type is one `Elem` that counts as two elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Elem {
    pub basic: Basic,
    /// Bytes of data (for pairs: value + index).
    pub size: usize,
    /// For pairs: bytes of the value part; else `size`.
    pub first: usize,
    /// Bytes in the external32 representation (MPI 4.0 §5.1.11, Table
    /// 5.1 sizes: e.g. 4 for MPI_LONG, 2 for MPI_WCHAR).
    pub ext: usize,
}

impl Elem {
    pub fn elements(&self) -> u64 {
        if matches!(self.basic, Basic::Pair(_)) {
            2
        } else {
            1
        }
    }
}

/// How a committed type's data lies, which picks the copy loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// One run of `size` bytes at `offset`, items back to back.
    Contiguous { offset: isize },
    /// `count` runs of `len` bytes, `stride` apart, from `offset`.
    Strided { offset: isize, count: usize, len: usize, stride: isize },
    /// `outer` groups `outer_stride` apart, each a Strided layout of
    /// `count` runs (a vector of vectors: a face of a 3-D array).
    Nested { offset: isize, outer: usize, outer_stride: isize, count: usize, len: usize, stride: isize },
    /// Any other layout: the blocks as they are.
    Irregular,
}

/// How a derived type was made (MPI_Type_get_envelope/contents).
#[derive(Clone, Debug)]
pub struct Contents {
    /// MPI_COMBINER_* value.
    pub combiner: i32,
    pub ints: Vec<i64>,
    pub addresses: Vec<isize>,
    /// The MPI_Count arguments of a large-count constructor (MPI_Type_..._c).
    pub large: Vec<i64>,
    pub types: Vec<TypeRef>,
}

impl Contents {
    /// The arguments as a large-count constructor took them: every count
    /// and displacement an MPI_Count, in the order of the int variant
    /// (integers, then addresses), but for a subarray's ndims and order
    /// and a darray's ints but its global sizes, which stay ints (MPI 4.0
    /// section 5.1.13).
    pub fn to_large(&mut self) {
        let ints = std::mem::take(&mut self.ints);
        let addresses = std::mem::take(&mut self.addresses);
        match self.combiner {
            build::combiner::SUBARRAY => {
                // ndims, sizes, subsizes, starts, order
                let n = ints.len() - 2;
                self.ints = vec![ints[0], ints[n + 1]];
                self.large = ints[1..=n].to_vec();
            }
            build::combiner::DARRAY => {
                // size, rank, ndims, gsizes, distribs, dargs, psizes, order
                let nd = ints[2] as usize;
                self.large = ints[3..3 + nd].to_vec();
                self.ints = [&ints[..3], &ints[3 + nd..]].concat();
            }
            _ => self.large = ints.into_iter().chain(addresses.into_iter().map(|a| a as i64)).collect(),
        }
    }
}

/// Everything the library knows about a type.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    pub name: String,
    /// Bytes of data in one item (no gaps).
    pub size: usize,
    pub lb: isize,
    /// ub - lb: the distance between consecutive items.
    pub extent: isize,
    pub true_lb: isize,
    pub true_extent: isize,
    /// (offset, length) of the data blocks of one item, in type-map order,
    /// adjacent blocks merged.
    pub blocks: Vec<(isize, usize)>,
    /// For predefined types their kind; `Derived` otherwise.
    pub basic: Basic,
    /// The basic elements of one item, run-length encoded, in order.
    pub elems: Vec<(Elem, u64)>,
    /// None for predefined (named) types.
    pub contents: Option<Box<Contents>>,
    pub committed: bool,
    pub class: Class,
}

/// A type as requests and derived types hold it: predefined types are
/// static, derived ones shared (MPI_Type_free while in use is allowed).
#[derive(Clone, Debug)]
pub enum TypeRef {
    Builtin(&'static TypeInfo),
    Derived(Arc<TypeInfo>),
}

impl std::ops::Deref for TypeRef {
    type Target = TypeInfo;
    fn deref(&self) -> &TypeInfo {
        match self {
            TypeRef::Builtin(t) => t,
            TypeRef::Derived(t) => t,
        }
    }
}

impl TypeInfo {
    /// A basic type of `size` bytes: one contiguous element.
    pub fn basic(name: &str, basic: Basic, size: usize) -> TypeInfo {
        let blocks = if size == 0 { vec![] } else { vec![(0, size)] };
        let elems = if size == 0 { vec![] } else { vec![(Elem { basic, size, first: size, ext: size }, 1)] };
        TypeInfo {
            name: name.to_string(),
            size,
            lb: 0,
            extent: size as isize,
            true_lb: 0,
            true_extent: size as isize,
            blocks,
            basic,
            elems,
            contents: None,
            committed: true,
            class: Class::Contiguous { offset: 0 },
        }
    }

    /// A value-index pair laid out as the C struct { value; index; } is.
    pub fn pair(name: &str, kind: PairKind, value: usize, value_align: usize, index: usize) -> TypeInfo {
        let idx_off = value.div_ceil(index) * index;
        let align = value_align.max(index);
        let extent = (idx_off + index).div_ceil(align) * align;
        let blocks =
            if idx_off == value { vec![(0, value + index)] } else { vec![(0, value), (idx_off as isize, index)] };
        let ext = if matches!(kind, PairKind::LongInt) { 8 } else { value + index };
        let elem = Elem { basic: Basic::Pair(kind), size: value + index, first: value, ext };
        let mut t = TypeInfo {
            name: name.to_string(),
            size: value + index,
            lb: 0,
            extent: extent as isize,
            true_lb: 0,
            true_extent: (idx_off + index) as isize,
            blocks,
            basic: Basic::Pair(kind),
            elems: vec![(elem, 1)],
            contents: None,
            committed: true,
            class: Class::Irregular,
        };
        t.class = t.classify();
        t
    }

    /// The same pair without holes: how pairs travel packed.
    pub fn packed_pair(kind: PairKind, value: usize, index: usize) -> TypeInfo {
        let elem = Elem { basic: Basic::Pair(kind), size: value + index, first: value, ext: value + index };
        TypeInfo { elems: vec![(elem, 1)], ..TypeInfo::basic("packed pair", Basic::Pair(kind), value + index) }
    }

    /// True when `count` items are one run of `count * size` bytes.
    pub fn is_contiguous(&self) -> bool {
        matches!(self.class, Class::Contiguous { offset: 0 }) && self.extent == self.size as isize
    }

    /// Bytes in `count` items, or None on overflow.
    pub fn bytes(&self, count: usize) -> Option<usize> {
        self.size.checked_mul(count)
    }

    /// A basic type whose external32 size differs from its native one.
    pub fn with_external_size(mut self, ext: usize) -> TypeInfo {
        for (e, _) in &mut self.elems {
            e.ext = ext;
        }
        self
    }

    /// Bytes of `count` items in external32.
    pub fn external_size(&self, count: usize) -> usize {
        self.elems.iter().map(|(e, n)| e.ext * *n as usize).sum::<usize>() * count
    }

    /// Basic elements in one item.
    pub fn element_count(&self) -> u64 {
        self.elems.iter().map(|(e, n)| e.elements() * n).sum()
    }

    /// Decide the copy loop from the blocks (at commit).
    pub fn classify(&self) -> Class {
        let b = &self.blocks;
        match b.as_slice() {
            [] => Class::Contiguous { offset: 0 },
            [(o, l)] if *l as isize == self.extent => Class::Contiguous { offset: *o },
            [(o, l)] => Class::Strided { offset: *o, count: 1, len: *l, stride: *l as isize },
            _ => {
                let (o0, l0) = b[0];
                if b.iter().any(|&(_, l)| l != l0) {
                    return Class::Irregular;
                }
                let s1 = b[1].0 - o0;
                // the first run of equally spaced blocks
                let n1 = 1 + b.windows(2).take_while(|w| w[1].0 - w[0].0 == s1).count();
                if s1 <= 0 {
                    Class::Irregular
                } else if n1 == b.len() {
                    Class::Strided { offset: o0, count: n1, len: l0, stride: s1 }
                } else if b.len().is_multiple_of(n1) {
                    // runs repeated at a second stride: a nested vector
                    let s2 = b[n1].0 - o0;
                    let grid = b
                        .iter()
                        .enumerate()
                        .all(|(k, &(o, _))| o == o0 + (k / n1) as isize * s2 + (k % n1) as isize * s1);
                    if grid && s2 > 0 {
                        Class::Nested {
                            offset: o0,
                            outer: b.len() / n1,
                            outer_stride: s2,
                            count: n1,
                            len: l0,
                            stride: s1,
                        }
                    } else {
                        Class::Irregular
                    }
                } else {
                    Class::Irregular
                }
            }
        }
    }

    /// The predefined type a reduction on this type works on, packed:
    /// None when the type mixes basic kinds.
    pub fn reduction_unit(&self) -> Option<TypeInfo> {
        let first = self.elems.first()?.0;
        if self.elems.iter().any(|(e, _)| *e != first) {
            return None;
        }
        Some(match first.basic {
            Basic::Pair(kind) => TypeInfo::packed_pair(kind, first.first, first.size - first.first),
            b => TypeInfo::basic(&self.name, b, first.size),
        })
    }
}

/// MPI_BYTE, for the library's own byte transfers.
pub fn byte() -> TypeRef {
    static BYTE: std::sync::OnceLock<TypeInfo> = std::sync::OnceLock::new();
    TypeRef::Builtin(BYTE.get_or_init(|| TypeInfo::basic("MPI_BYTE", Basic::Byte, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_layouts_match_c_structs() {
        let di = TypeInfo::pair("MPI_DOUBLE_INT", PairKind::DoubleInt, 8, 8, 4);
        assert_eq!((di.size, di.extent), (12, 16));
        assert_eq!(di.blocks, vec![(0, 12)]);
        let si = TypeInfo::pair("MPI_SHORT_INT", PairKind::ShortInt, 2, 2, 4);
        assert_eq!((si.size, si.extent), (6, 8));
        assert_eq!(si.blocks, vec![(0, 2), (4, 4)]);
        let ldi = TypeInfo::pair("MPI_LONG_DOUBLE_INT", PairKind::LongDoubleInt, 16, 16, 4);
        assert_eq!((ldi.size, ldi.extent), (20, 32));
        assert!(!ldi.is_contiguous());
        assert!(TypeInfo::basic("MPI_INT", Basic::Int { bytes: 4, signed: true }, 4).is_contiguous());
        assert_eq!(di.element_count(), 2);
    }
}
