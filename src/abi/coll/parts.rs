//! Where each rank's part of a collective's buffer lies: `Part` (count,
//! datatype, offset), read from the count and displacement arrays the
//! caller passes (`Arr`) for the v and w forms, checked.

use super::*;

/// Where one rank's part of a buffer lies: `count` items of `ty` starting
/// `offset` bytes into the buffer.
#[derive(Clone)]
pub(in crate::abi) struct Part {
    pub(super) ty: TypeRef,
    pub(super) count: usize,
    pub(super) offset: isize,
}

impl Part {
    pub(in crate::abi) fn bytes(&self) -> usize {
        self.ty.size * self.count
    }

    /// Where the part starts in `buf`.
    pub(super) fn at(&self, buf: usize) -> usize {
        buf.wrapping_add_signed(self.offset)
    }

    pub(super) fn pack(&self, buf: usize) -> Scratch {
        packed(self.at(buf), &self.ty, self.count)
    }

    /// The part as a block to send: see `source`.
    pub(in crate::abi) fn source(&self, p: &mut Plan, buf: usize) -> Block {
        source(p, self.at(buf), &self.ty, self.count)
    }

    /// Where the part is received: see `landing`.
    pub(in crate::abi) fn landing(&self, p: &mut Plan, buf: usize) -> Block {
        landing(p, self.at(buf), &self.ty, self.count)
    }

    /// After the transfers: unpack `b` if it was a scratch landing.
    pub(in crate::abi) fn finish(&self, p: &mut Plan, buf: usize, b: Block) {
        finish_landing(p, self.at(buf), &self.ty, b)
    }
}

/// A per-rank argument (counts, displacements): one value for every
/// rank, or an array of `int`, `MPI_Count` or `MPI_Aint`.
#[derive(Clone, Copy)]
pub(in crate::abi) enum Arr {
    One(i64),
    Int(*const c_int),
    Count(*const i64),
    Aint(*const isize),
}

impl Arr {
    /// The one value for every rank, when it is one and not negative.
    pub(super) fn one(self) -> Option<i64> {
        match self {
            Arr::One(v) if v >= 0 => Some(v),
            _ => None,
        }
    }

    /// The `n` values; `what` and `name` say which argument it is ("the
    /// counts for", "recvbuf") in an error.
    pub(super) fn read(self, n: usize, what: &str, name: &str) -> MpiResult<Vec<i64>> {
        let a = self.checked(what, name)?;
        Ok((0..n).map(|r| a.get(r)).collect())
    }

    /// Itself, once seen not to be a null pointer.
    pub(super) fn checked(self, what: &str, name: &str) -> MpiResult<Arr> {
        let null = match self {
            Arr::One(_) => false,
            Arr::Int(p) => p.is_null(),
            Arr::Count(p) => p.is_null(),
            Arr::Aint(p) => p.is_null(),
        };
        if null {
            return err!(Arg, "{what} {name} is a null pointer");
        }
        Ok(self)
    }

    /// Rank r's value (of an array `checked`).
    pub(super) fn get(self, r: usize) -> i64 {
        // SAFETY: not null (`checked`), and the standard has the caller
        // pass one entry per rank.
        unsafe {
            match self {
                Arr::One(v) => v,
                Arr::Int(p) => (*p.add(r)).into(),
                Arr::Count(p) => *p.add(r),
                Arr::Aint(p) => *p.add(r) as i64,
            }
        }
    }
}

/// Rank r's part is `counts[r]` items at `displs[r]` extents (or, with no
/// displacements, packed one after another: `r * count` items).
pub(in crate::abi) fn parts(
    n: usize,
    ty: &TypeRef,
    counts: Arr,
    displs: Option<Arr>,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.checked("the counts for", name)?;
    let displs = match displs {
        Some(d) => Some(d.checked("the displacements for", name)?),
        None => None,
    };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let (count, offset) = part_at(r, ty, counts, displs, buf, name)?;
        out.push(Part { ty: ty.clone(), count, offset });
    }
    Ok(out)
}

/// Rank r's part of a layout `parts` describes, checked: its count and
/// its offset in bytes.
pub(super) fn part_at(
    r: usize,
    ty: &TypeInfo,
    counts: Arr,
    displs: Option<Arr>,
    buf: *const c_void,
    name: &str,
) -> MpiResult<(usize, isize)> {
    let count = counts.get(r);
    if count < 0 {
        return err!(Count, "{name} count for rank {r} is {count}, negative");
    }
    let items = match displs {
        Some(d) => d.get(r) as isize,
        None => (r * count as usize) as isize,
    };
    let offset = items * ty.extent;
    check_part_buf(buf, offset, count as usize, ty, name)?;
    Ok((count as usize, offset))
}

/// `check_buf` for a part `offset` bytes into `buf`: MPI_BOTTOM (a null
/// pointer) with a displacement that is the part's absolute address, as
/// MPI_Get_address gives it, is a buffer (MPI 4.0 §5.1.12).
fn check_part_buf(buf: *const c_void, offset: isize, count: usize, ty: &TypeInfo, name: &str) -> MpiResult<()> {
    if buf.is_null() && offset != 0 {
        return Ok(());
    }
    check_buf(buf, count, ty, name)
}

/// Whether every one of `n` ranks' parts passes `part_at`'s checks: its
/// count is not negative, and the buffer is neither MPI_IN_PLACE nor a
/// null pointer under items. It tells no more (a fast path's test: the
/// general one, through `part_at`, then says what fails and where), in a
/// tenth of the instructions `part_at` takes for each part.
pub(super) fn parts_pass(n: usize, ty: &TypeInfo, counts: Arr, buf: *const c_void) -> bool {
    let mut items = false;
    for r in 0..n {
        let count = counts.get(r);
        if count < 0 {
            return false;
        }
        items |= count > 0;
    }
    check_buf(buf, items as usize, ty, "").is_ok()
}

/// The send (or receive) side of a rooted or all-to-all collective: a
/// count and a committed datatype, checked.
pub(in crate::abi) fn side(count: i64, datatype: c_int, buf: *const c_void, name: &str) -> MpiResult<Part> {
    let (count, ty) = check_count(count, datatype)?;
    check_buf(buf, count, &ty, name)?;
    Ok(Part { ty, count, offset: 0 })
}

/// A part's bytes in a row: the user's own when contiguous, else packed.
pub(super) fn in_a_row<'a>(part: &Part, buf: usize) -> std::borrow::Cow<'a, [u8]> {
    if part.ty.is_contiguous() {
        std::borrow::Cow::Borrowed(as_is(part, buf))
    } else {
        std::borrow::Cow::Owned(part.pack(buf).to_vec())
    }
}

/// A contiguous part's bytes where they lie in the user's buffer.
pub(super) fn as_is<'a>(part: &Part, buf: usize) -> &'a [u8] {
    debug_assert!(part.ty.is_contiguous());
    // SAFETY: checked to hold the part's items, contiguous.
    unsafe { Block { addr: part.at(buf), len: part.bytes() }.bytes() }
}

/// A buffer, count and datatype: one side of a collective.
pub(super) type Side = (*const c_void, i64, c_int);

/// Alltoallw's layout: per-rank types, displacements in bytes.
pub(in crate::abi) fn wparts(
    n: usize,
    counts: Arr,
    displs: Arr,
    types: *const c_int,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.read(n, "the counts for", name)?;
    let displs = displs.read(n, "the displacements for", name)?;
    if types.is_null() {
        return err!(Arg, "the datatype array of {name} is a null pointer");
    }
    // SAFETY: the standard has the caller pass one datatype per rank.
    let types = unsafe { std::slice::from_raw_parts(types, n) };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let (count, ty) = check_count(counts[r], types[r])?;
        let offset = displs[r] as isize;
        check_part_buf(buf, offset, count, &ty, name)?;
        out.push(Part { ty, count, offset });
    }
    Ok(out)
}
