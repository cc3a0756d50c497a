//! Datatypes: what a type's bytes are (its basic elements, for reductions)
//! and where they lie (its blocks, for packing). Only predefined types exist
//! so far; derived types and commit-time classification come later.

pub mod pack;

/// The kind of the basic elements of a type, which decides what a
/// reduction may do with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basic {
    /// C integer types (signed or not), `bytes` wide.
    Int {
        bytes: u8,
        signed: bool,
    },
    /// Fortran INTEGER: allowed for MIN/MAX/SUM/PROD/bitwise, not logical ops.
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
    /// Character types: only MPI_REPLACE/NO_OP reduce them.
    Char,
    Packed,
    /// A value-index pair for MAXLOC/MINLOC.
    Pair(PairKind),
    /// Markers with no data (MPI_LB, MPI_UB).
    Marker,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Everything the library knows about a type.
#[derive(Clone, Debug)]
pub struct TypeInfo {
    pub name: &'static str,
    /// Bytes of data in one item (no gaps).
    pub size: usize,
    /// Distance between consecutive items.
    pub extent: usize,
    /// (offset, length) of the data blocks of one item, in order.
    pub blocks: Vec<(usize, usize)>,
    pub basic: Basic,
    /// Sizes of the basic elements of one item, in order (MPI_Get_elements).
    pub elem_sizes: Vec<usize>,
}

impl TypeInfo {
    /// A basic type of `size` bytes: one contiguous element.
    pub fn basic(name: &'static str, basic: Basic, size: usize) -> TypeInfo {
        let blocks = if size == 0 { vec![] } else { vec![(0, size)] };
        let elem_sizes = if size == 0 { vec![] } else { vec![size] };
        TypeInfo {
            name,
            size,
            extent: size,
            blocks,
            basic,
            elem_sizes,
        }
    }

    /// A value-index pair laid out as the C struct { value; index; } is.
    pub fn pair(name: &'static str, kind: PairKind, value: usize, value_align: usize, index: usize) -> TypeInfo {
        let idx_off = value.div_ceil(index) * index;
        let align = value_align.max(index);
        let extent = (idx_off + index).div_ceil(align) * align;
        let blocks = if idx_off == value {
            vec![(0, value + index)]
        } else {
            vec![(0, value), (idx_off, index)]
        };
        TypeInfo {
            name,
            size: value + index,
            extent,
            blocks,
            basic: Basic::Pair(kind),
            elem_sizes: vec![value, index],
        }
    }

    /// True when `count` items are one run of `count * size` bytes.
    pub fn is_contiguous(&self) -> bool {
        self.size == self.extent && self.blocks.len() <= 1
    }

    /// Bytes in `count` items, or None on overflow.
    pub fn bytes(&self, count: usize) -> Option<usize> {
        self.size.checked_mul(count)
    }
}

/// MPI_BYTE, for the library's own byte transfers.
pub fn byte() -> &'static TypeInfo {
    static BYTE: std::sync::OnceLock<TypeInfo> = std::sync::OnceLock::new();
    BYTE.get_or_init(|| TypeInfo::basic("MPI_BYTE", Basic::Byte, 1))
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
    }
}
