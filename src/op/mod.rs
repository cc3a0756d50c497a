//! Reduction operators and their kernels. `apply` computes
//! inout[i] = in[i] op inout[i], the order the standard defines for user
//! functions, so non-commutative use is well defined.

use crate::datatype::{Basic, PairKind, TypeInfo};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::{c_int, c_void};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Maxloc,
    Minloc,
    Replace,
    NoOp,
    /// An `MPI_Op_create` operator, resolved for one call's datatype.
    User(UserOp),
}

/// `MPI_User_function`: inoutvec[i] = invec[i] op inoutvec[i].
pub type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// `MPI_User_function_c` (MPI_Op_create_c): the same with an `MPI_Count`
/// length.
pub type UserCountFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut i64, *mut c_int);

/// A user function, as `MPI_Op_create` or `MPI_Op_create_c` gave it.
#[derive(Clone, Copy, Debug)]
pub enum UserFunc {
    Int(UserFn),
    Count(UserCountFn),
}

#[derive(Clone, Copy, Debug)]
pub struct UserOp {
    pub f: UserFunc,
    pub commute: bool,
    /// The datatype handle the function is given (set per call).
    pub datatype: c_int,
}

impl PartialEq for UserOp {
    fn eq(&self, o: &UserOp) -> bool {
        self.f.address() == o.f.address() && self.commute == o.commute && self.datatype == o.datatype
    }
}

impl UserFunc {
    /// The function's address and which kind it is.
    fn address(self) -> (usize, bool) {
        match self {
            UserFunc::Int(f) => (f as usize, false),
            UserFunc::Count(f) => (f as usize, true),
        }
    }
}

impl Eq for UserOp {}

impl Op {
    /// Whether `a op b` equals `b op a` bit for bit (the predefined
    /// reductions: IEEE addition and multiplication commute exactly, and
    /// MAXLOC/MINLOC break ties by the lower index either way).
    pub fn symmetric(self) -> bool {
        !matches!(self, Op::Replace | Op::NoOp | Op::User(_))
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Max => "MPI_MAX",
            Op::Min => "MPI_MIN",
            Op::Sum => "MPI_SUM",
            Op::Prod => "MPI_PROD",
            Op::Land => "MPI_LAND",
            Op::Band => "MPI_BAND",
            Op::Lor => "MPI_LOR",
            Op::Bor => "MPI_BOR",
            Op::Lxor => "MPI_LXOR",
            Op::Bxor => "MPI_BXOR",
            Op::Maxloc => "MPI_MAXLOC",
            Op::Minloc => "MPI_MINLOC",
            Op::Replace => "MPI_REPLACE",
            Op::NoOp => "MPI_NO_OP",
            Op::User(_) => "a user-defined operation",
        }
    }

    /// Whether the standard defines this operator on this type in a
    /// reduction (MPI 4.0 §6.9.2; MPI_REPLACE and MPI_NO_OP belong to
    /// one-sided accumulates only, §12.3.4).
    pub fn check(self, ty: &TypeInfo) -> MpiResult<()> {
        use Basic::*;
        let ok = match self {
            Op::Replace | Op::NoOp => {
                return err!(
                    Op,
                    "{} is for one-sided accumulate operations only, not for reductions (MPI 4.0 §12.3.4)",
                    self.name()
                )
            }
            Op::User(_) => true,
            Op::Max | Op::Min => matches!(ty.basic, Int { .. } | FortranInt { .. } | Float { .. } | LongDouble),
            Op::Sum | Op::Prod => {
                matches!(
                    ty.basic,
                    Int { .. } | FortranInt { .. } | Float { .. } | LongDouble | Complex { .. } | LongDoubleComplex
                )
            }
            Op::Land | Op::Lor | Op::Lxor => {
                matches!(ty.basic, Int { .. } | CBool | FortranLogical { .. })
            }
            Op::Band | Op::Bor | Op::Bxor => {
                matches!(ty.basic, Int { .. } | FortranInt { .. } | Byte)
            }
            Op::Maxloc | Op::Minloc => matches!(ty.basic, Pair(_)),
        };
        if ok {
            Ok(())
        } else {
            err!(Op, "{} is not defined for datatype {}", self.name(), ty.name)
        }
    }
}

extern "C" {
    fn oxmpi_long_double_op(op: i32, inp: *const u8, inout: *mut u8, n: usize) -> i32;
    fn oxmpi_long_double_complex_op(op: i32, inp: *const u8, inout: *mut u8, n: usize) -> i32;
    fn oxmpi_float128_op(op: i32, inp: *const u8, inout: *mut u8, n: usize) -> i32;
    fn oxmpi_float128_complex_op(op: i32, inp: *const u8, inout: *mut u8, n: usize) -> i32;
    fn oxmpi_long_double_int_loc(op: i32, inp: *const u8, inout: *mut u8, n: usize, stride: usize) -> i32;
}

/// `fn each(a, b, f)`: b[i] = f(a[i], b[i]) over the items of type `$t`,
/// one loop per operator, so it vectorizes.
macro_rules! each_item {
    ($t:ty) => {
        fn each(a: &[u8], b: &mut [u8], f: impl Fn($t, $t) -> $t) {
            const S: usize = std::mem::size_of::<$t>();
            for (x, y) in a.chunks_exact(S).zip(b.chunks_exact_mut(S)) {
                let (x, yv) =
                    (<$t>::from_ne_bytes(x.try_into().unwrap()), <$t>::from_ne_bytes((&*y).try_into().unwrap()));
                y.copy_from_slice(&f(x, yv).to_ne_bytes());
            }
        }
    };
}

macro_rules! arith {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {{
        each_item!($t);
        match $op {
            Op::Max => each($a, $b, |x, y| if x > y { x } else { y }),
            Op::Min => each($a, $b, |x, y| if x < y { x } else { y }),
            Op::Sum => each($a, $b, |x, y| x.wrapping_add_(y)),
            Op::Prod => each($a, $b, |x, y| x.wrapping_mul_(y)),
            _ => unreachable!(),
        }
    }};
}

macro_rules! bits {
    ($t:ty, $op:expr, $a:expr, $b:expr) => {{
        each_item!($t);
        match $op {
            Op::Band => each($a, $b, |x, y| x & y),
            Op::Bor => each($a, $b, |x, y| x | y),
            Op::Bxor => each($a, $b, |x, y| x ^ y),
            Op::Land => each($a, $b, |x, y| (x != 0 && y != 0) as $t),
            Op::Lor => each($a, $b, |x, y| (x != 0 || y != 0) as $t),
            Op::Lxor => each($a, $b, |x, y| ((x != 0) != (y != 0)) as $t),
            _ => unreachable!(),
        }
    }};
}

/// Arithmetic that wraps for integers, as C's unsigned arithmetic and
/// every MPI implementation do, and is plain for floats.
trait Arith: Copy {
    fn wrapping_add_(self, o: Self) -> Self;
    fn wrapping_mul_(self, o: Self) -> Self;
}
macro_rules! int_arith { ($($t:ty),*) => { $(impl Arith for $t {
    fn wrapping_add_(self, o: Self) -> Self { self.wrapping_add(o) }
    fn wrapping_mul_(self, o: Self) -> Self { self.wrapping_mul(o) }
})* } }
int_arith!(i8, i16, i32, i64, u8, u16, u32, u64);
impl Arith for f32 {
    fn wrapping_add_(self, o: Self) -> Self {
        self + o
    }
    fn wrapping_mul_(self, o: Self) -> Self {
        self * o
    }
}
impl Arith for f64 {
    fn wrapping_add_(self, o: Self) -> Self {
        self + o
    }
    fn wrapping_mul_(self, o: Self) -> Self {
        self * o
    }
}

fn read<T: Copy>(b: &[u8], i: usize) -> T {
    assert!((i + 1) * std::mem::size_of::<T>() <= b.len());
    // SAFETY: bounds checked above; unaligned read of a plain number.
    unsafe { std::ptr::read_unaligned((b.as_ptr() as *const T).add(i)) }
}

fn write<T: Copy>(b: &mut [u8], i: usize, v: T) {
    assert!((i + 1) * std::mem::size_of::<T>() <= b.len());
    // SAFETY: bounds checked above.
    unsafe { std::ptr::write_unaligned((b.as_mut_ptr() as *mut T).add(i), v) }
}

fn c_code(op: Op) -> i32 {
    match op {
        Op::Max => 1,
        Op::Min => 2,
        Op::Sum => 3,
        Op::Prod => 4,
        Op::Maxloc => 11,
        Op::Minloc => 12,
        _ => 0,
    }
}

/// inout = in op inout over `count` items of `ty`, both in the type's
/// memory layout (extent-spaced). The pairing must have passed `check`.
pub fn apply(op: Op, ty: &TypeInfo, inp: &[u8], inout: &mut [u8]) -> MpiResult<()> {
    op.check(ty)?;
    debug_assert_eq!(inp.len(), inout.len());
    if let Op::User(u) = op {
        apply_user(u, ty, inp, inout);
        return Ok(());
    }
    use Basic::*;
    match (ty.basic, op) {
        (Int { .. } | FortranInt { .. } | Float { .. }, Op::Max | Op::Min | Op::Sum | Op::Prod) => match ty.basic {
            Int { bytes: 1, signed: true } => arith!(i8, op, inp, inout),
            Int { bytes: 2, signed: true } => arith!(i16, op, inp, inout),
            Int { bytes: 4, signed: true } | FortranInt { bytes: 4 } => arith!(i32, op, inp, inout),
            Int { bytes: 8, signed: true } | FortranInt { bytes: 8 } => arith!(i64, op, inp, inout),
            FortranInt { bytes: 1 } => arith!(i8, op, inp, inout),
            FortranInt { bytes: 2 } => arith!(i16, op, inp, inout),
            Int { bytes: 1, signed: false } => arith!(u8, op, inp, inout),
            Int { bytes: 2, signed: false } => arith!(u16, op, inp, inout),
            Int { bytes: 4, signed: false } => arith!(u32, op, inp, inout),
            Int { bytes: 8, signed: false } => arith!(u64, op, inp, inout),
            Float { bytes: 4 } => arith!(f32, op, inp, inout),
            Float { bytes: 8 } => arith!(f64, op, inp, inout),
            Float { bytes: 16 } => {
                // SAFETY: both buffers hold whole 16-byte items; the helper copies each.
                unsafe { oxmpi_float128_op(c_code(op), inp.as_ptr(), inout.as_mut_ptr(), inout.len() / 16) };
            }
            _ => return err!(Op, "{} is not supported for datatype {}", op.name(), ty.name),
        },
        (Int { .. } | FortranInt { .. } | Byte | CBool | FortranLogical { .. }, _) => {
            let bytes = match ty.basic {
                Int { bytes, .. } | FortranInt { bytes } | FortranLogical { bytes } => bytes,
                _ => 1,
            };
            match bytes {
                1 => bits!(u8, op, inp, inout),
                2 => bits!(u16, op, inp, inout),
                4 => bits!(u32, op, inp, inout),
                _ => bits!(u64, op, inp, inout),
            }
        }
        (Complex { bytes: bytes @ (8 | 16) }, Op::Sum | Op::Prod) => complex(op, bytes, inp, inout),
        (Complex { bytes: 32 }, Op::Sum | Op::Prod) => {
            // SAFETY: both buffers hold whole 32-byte items; the helper copies each.
            unsafe { oxmpi_float128_complex_op(c_code(op), inp.as_ptr(), inout.as_mut_ptr(), inout.len() / 32) };
        }
        (LongDouble, _) => {
            // SAFETY: both buffers hold whole long doubles (16 bytes each).
            unsafe { oxmpi_long_double_op(c_code(op), inp.as_ptr(), inout.as_mut_ptr(), inout.len() / 16) };
        }
        (LongDoubleComplex, _) => {
            // SAFETY: both buffers hold whole long double complexes (32 bytes).
            unsafe { oxmpi_long_double_complex_op(c_code(op), inp.as_ptr(), inout.as_mut_ptr(), inout.len() / 32) };
        }
        (Pair(kind), Op::Maxloc | Op::Minloc) => loc(op, kind, ty, inp, inout),
        _ => return err!(Op, "{} is not defined for datatype {}", op.name(), ty.name),
    }
    Ok(())
}

fn complex(op: Op, bytes: u8, a: &[u8], b: &mut [u8]) {
    macro_rules! cplx {
        ($t:ty) => {{
            let n = b.len() / (2 * std::mem::size_of::<$t>());
            for i in 0..n {
                let (ar, ai) = (read::<$t>(a, 2 * i), read::<$t>(a, 2 * i + 1));
                let (br, bi) = (read::<$t>(b, 2 * i), read::<$t>(b, 2 * i + 1));
                let (r, im) = if op == Op::Sum { (ar + br, ai + bi) } else { (ar * br - ai * bi, ar * bi + ai * br) };
                write::<$t>(b, 2 * i, r);
                write::<$t>(b, 2 * i + 1, im);
            }
        }};
    }
    if bytes == 8 {
        cplx!(f32)
    } else {
        cplx!(f64)
    }
}

/// MAXLOC/MINLOC: keep the better value; on a tie, the smaller index.
/// MAXLOC/MINLOC on packed pairs (value, then index, no hole): keep the
/// better value; on a tie, the smaller index.
fn loc(op: Op, kind: PairKind, ty: &TypeInfo, a: &[u8], b: &mut [u8]) {
    let e = ty.elems[0].0;
    let (idx_off, stride) = (e.first, e.size);
    macro_rules! pairs {
        ($v:ty, $i:ty) => {{
            for k in 0..b.len() / stride {
                let base = k * stride;
                let av: $v = read(&a[base..], 0);
                let bv: $v = read(&b[base..], 0);
                let ai: $i = read(&a[base + idx_off..], 0);
                let bi: $i = read(&b[base + idx_off..], 0);
                let better = if op == Op::Maxloc { av > bv } else { av < bv };
                if better || (av == bv && ai < bi) {
                    write(&mut b[base..], 0, av);
                    write(&mut b[base + idx_off..], 0, ai);
                }
            }
        }};
    }
    match kind {
        PairKind::FloatInt => pairs!(f32, i32),
        PairKind::DoubleInt => pairs!(f64, i32),
        PairKind::LongInt => pairs!(i64, i32),
        PairKind::TwoInt | PairKind::TwoFortranInt => pairs!(i32, i32),
        PairKind::ShortInt => pairs!(i16, i32),
        PairKind::TwoFloat => pairs!(f32, f32),
        PairKind::TwoDouble => pairs!(f64, f64),
        PairKind::LongDoubleInt => {
            // SAFETY: whole packed pairs of `stride` bytes in both buffers.
            unsafe { oxmpi_long_double_int_loc(c_code(op), a.as_ptr(), b.as_mut_ptr(), b.len() / stride, stride) };
        }
    }
}

/// Items of `ty` in their memory layout, in 16-byte aligned storage, as a
/// user function expects them.
struct Image {
    store: Vec<u128>,
    /// Where item 0 starts (the type's lower bound is at `base + lb`).
    base: *mut u8,
}

impl Image {
    fn of(ty: &TypeInfo, count: usize, packed: &[u8]) -> Image {
        let span = ty.true_extent.max(0) as usize + ty.extent.max(0) as usize * count.saturating_sub(1);
        let mut store = vec![0u128; span.div_ceil(16).max(1)];
        let base = (store.as_mut_ptr() as *mut u8).wrapping_offset(-ty.true_lb);
        // SAFETY: `store` covers every byte the `count` items occupy.
        unsafe { crate::datatype::pack::unpack(ty, packed, base) };
        Image { store, base }
    }
}

/// Run a user function over packed items, through memory images, in
/// chunks of at most `i32::MAX` items.
fn apply_user(u: UserOp, ty: &TypeInfo, inp: &[u8], inout: &mut [u8]) {
    if ty.size == 0 || inp.is_empty() {
        return;
    }
    // an int length tells at most i32::MAX items at a time
    let most = if let UserFunc::Int(_) = u.f { i32::MAX as usize } else { i64::MAX as usize };
    let chunk = most.saturating_mul(ty.size);
    for (i, o) in inp.chunks(chunk).zip(inout.chunks_mut(chunk)) {
        let count = i.len() / ty.size;
        let a = Image::of(ty, count, i);
        let b = Image::of(ty, count, o);
        let (x, y, mut dt) = (a.base as *mut c_void, b.base as *mut c_void, u.datatype);
        // SAFETY: both images hold `count` items of the datatype the
        // function is told about.
        unsafe {
            match u.f {
                UserFunc::Int(f) => f(x, y, &mut (count as c_int), &mut dt),
                UserFunc::Count(f) => f(x, y, &mut (count as i64), &mut dt),
            }
        };
        // SAFETY: as above; the result is read back out of the image.
        unsafe { crate::datatype::pack::pack(ty, count, b.base, o) };
        drop((a.store, b.store));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> TypeInfo {
        TypeInfo::basic("MPI_INT", Basic::Int { bytes: 4, signed: true }, 4)
    }
    fn bytes(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn integer_ops_combine_elementwise() {
        let a = bytes(&[1, -5, 7]);
        let mut b = bytes(&[3, 2, 7]);
        apply(Op::Sum, &int(), &a, &mut b).unwrap();
        assert_eq!(b, bytes(&[4, -3, 14]));
        let mut b = bytes(&[3, 2, 7]);
        apply(Op::Max, &int(), &a, &mut b).unwrap();
        assert_eq!(b, bytes(&[3, 2, 7]));
        let mut b = bytes(&[0, 2, 0]);
        apply(Op::Land, &int(), &a, &mut b).unwrap();
        assert_eq!(b, bytes(&[0, 1, 0]));
    }

    #[test]
    fn wrong_pairings_are_op_errors() {
        let f = TypeInfo::basic("MPI_DOUBLE", Basic::Float { bytes: 8 }, 8);
        let e = apply(Op::Band, &f, &[0; 8], &mut [0; 8]).unwrap_err();
        assert_eq!(e.class, crate::error::ErrorClass::Op);
        assert!(e.msg.contains("MPI_BAND") && e.msg.contains("MPI_DOUBLE"));
        assert!(Op::Maxloc.check(&int()).is_err());
        for op in [Op::Replace, Op::NoOp] {
            let e = apply(op, &int(), &[0; 4], &mut [0; 4]).unwrap_err();
            assert_eq!(e.class, crate::error::ErrorClass::Op);
            assert!(e.msg.contains(op.name()) && e.msg.contains("accumulate"));
        }
    }

    #[test]
    fn maxloc_prefers_lower_index_on_ties() {
        let t = TypeInfo::packed_pair(PairKind::TwoInt, 4, 4);
        let a = bytes(&[5, 3, 9, 1]);
        let mut b = bytes(&[5, 1, 2, 0]);
        apply(Op::Maxloc, &t, &a, &mut b).unwrap();
        assert_eq!(b, bytes(&[5, 1, 9, 1]));
    }

    #[test]
    fn long_double_sum_uses_the_c_helper() {
        let t = TypeInfo::basic("MPI_LONG_DOUBLE", Basic::LongDouble, 16);
        // 1.0L and 2.0L as x87 extended precision, padded to 16 bytes.
        let one: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f, 0, 0, 0, 0, 0, 0];
        let two: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0x00, 0x40, 0, 0, 0, 0, 0, 0];
        let three: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0xc0, 0x00, 0x40, 0, 0, 0, 0, 0, 0];
        let mut b = two;
        apply(Op::Sum, &t, &one, &mut b).unwrap();
        assert_eq!(b[..10], three[..10]);
    }

    /// A binary128 number from the top 64 bits of its encoding.
    fn quad(top: u64) -> [u8; 16] {
        ((top as u128) << 64).to_le_bytes()
    }

    #[test]
    fn real16_and_complex32_are_binary128_even_unaligned() {
        let t = TypeInfo::basic("MPI_REAL16", Basic::Float { bytes: 16 }, 16);
        // one byte in: the helper must not assume 16-byte alignment
        let mut a = [0u8; 33];
        let mut b = [0u8; 33];
        a[1..17].copy_from_slice(&quad(0x3fff_0000_0000_0000)); // 1
        a[17..33].copy_from_slice(&quad(0x4000_0000_0000_0000)); // 2
        b[1..17].copy_from_slice(&quad(0x4000_0000_0000_0000)); // 2
        b[17..33].copy_from_slice(&quad(0x4000_8000_0000_0000)); // 3
        apply(Op::Sum, &t, &a[1..], &mut b[1..]).unwrap();
        assert_eq!(b[1..17], quad(0x4000_8000_0000_0000)); // 3
        assert_eq!(b[17..33], quad(0x4001_4000_0000_0000)); // 5
        apply(Op::Max, &t, &a[1..], &mut b[1..]).unwrap();
        assert_eq!(b[1..17], quad(0x4000_8000_0000_0000));
        let c = TypeInfo::basic("MPI_COMPLEX32", Basic::Complex { bytes: 32 }, 32);
        let x = [quad(0x3fff_0000_0000_0000), quad(0x4000_0000_0000_0000)].concat(); // 1+2i
        let mut y = [quad(0x4000_8000_0000_0000), quad(0x4001_0000_0000_0000)].concat(); // 3+4i
        apply(Op::Prod, &c, &x, &mut y).unwrap();
        assert_eq!(y, [quad(0xc001_4000_0000_0000), quad(0x4002_4000_0000_0000)].concat()); // -5+10i
        assert!(apply(Op::Max, &c, &x, &mut y).is_err());
    }
}
