//! Datatypes: constructors, commit and free, queries, pack and unpack
//! (native and external32), addresses. The layouts are built by
//! `datatype::build`; this file checks arguments and manages handles.

use super::env::write_c_string;
use super::handles::{self, DATATYPE_NULL};
use super::{mpi_fn, out, with_state};
use crate::datatype::{build, external32, pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::{c_char, c_int, c_void};

const UNDEFINED: c_int = -32766;
const MAX_OBJECT_NAME: usize = 128;

/// Read `n` values of a C array, widened to i64.
///
/// # Safety
/// `p` must hold `n` values (or `n` be 0).
unsafe fn arr<T: Copy + Into<i64>>(p: *const T, n: usize, what: &str) -> MpiResult<Vec<i64>> {
    if n == 0 {
        return Ok(vec![]);
    }
    if p.is_null() {
        return err!(Arg, "{what} is a null pointer");
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&x| x.into()).collect())
}

fn count_of(n: i64) -> MpiResult<usize> {
    if n < 0 {
        return err!(Count, "count {n} is negative");
    }
    Ok(n as usize)
}

fn as_isize(v: Vec<i64>) -> Vec<isize> {
    v.into_iter().map(|x| x as isize).collect()
}

/// Register the new type and write its handle.
fn emit(newtype: *mut c_int, t: TypeInfo) -> MpiResult<()> {
    if newtype.is_null() {
        return err!(Arg, "newtype is a null pointer");
    }
    let h = handles::new_datatype(t);
    // SAFETY: checked non-null.
    unsafe { *newtype = h };
    Ok(())
}

/// Register a type made by a large-count constructor (MPI_Type_..._c),
/// which keeps its arguments as MPI_Count ones, and write its handle.
fn emit_large(newtype: *mut c_int, mut t: TypeInfo) -> MpiResult<()> {
    if let Some(c) = &mut t.contents {
        c.to_large();
    }
    emit(newtype, t)
}

fn old(h: c_int) -> MpiResult<TypeRef> {
    handles::datatype(h)
}

mpi_fn! {
    Initialized fn MPI_Type_contiguous / PMPI_Type_contiguous(count: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit(newtype, build::contiguous(count as i64, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_contiguous_c / PMPI_Type_contiguous_c(count: i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit_large(newtype, build::contiguous(count, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_vector / PMPI_Type_vector(count: c_int, blocklength: c_int, stride: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit(newtype, build::vector(count as i64, blocklength as i64, stride as isize, false, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_vector_c / PMPI_Type_vector_c(count: i64, blocklength: i64, stride: i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit_large(newtype, build::vector(count, blocklength, stride as isize, false, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hvector / PMPI_Type_create_hvector(count: c_int, blocklength: c_int, stride: isize, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit(newtype, build::vector(count as i64, blocklength as i64, stride, true, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_hvector / PMPI_Type_hvector(count: c_int, blocklength: c_int, stride: isize, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit(newtype, build::vector(count as i64, blocklength as i64, stride, true, &old(oldtype)?)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c(count: i64, blocklength: i64, stride: i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit_large(newtype, build::vector(count, blocklength, stride as isize, true, &old(oldtype)?)?)
    }
}

/// Shared by the indexed family: `disps` in items (bytes=false) or bytes.
///
/// # Safety
/// Arrays hold `count` values.
unsafe fn indexed<B: Copy + Into<i64>, D: Copy + Into<i64>>(
    count: i64,
    bl: *const B,
    d: *const D,
    bytes: bool,
    oldtype: c_int,
) -> MpiResult<TypeInfo> {
    let n = count_of(count)?;
    // SAFETY: per the caller's contract.
    let (bl, d) = unsafe { (arr(bl, n, "array_of_blocklengths")?, arr(d, n, "array_of_displacements")?) };
    build::indexed(&bl, &as_isize(d), bytes, &old(oldtype)?)
}

mpi_fn! {
    Initialized fn MPI_Type_indexed / PMPI_Type_indexed(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: arrays of `count` per the standard.
        emit(newtype, unsafe { indexed(count as i64, array_of_blocklengths, array_of_displacements, false, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_indexed_c / PMPI_Type_indexed_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { indexed(count, array_of_blocklengths, array_of_displacements, false, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hindexed / PMPI_Type_create_hindexed(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit(newtype, unsafe { indexed(count as i64, array_of_blocklengths, array_of_displacements, true, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_hindexed / PMPI_Type_hindexed(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit(newtype, unsafe { indexed(count as i64, array_of_blocklengths, array_of_displacements, true, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hindexed_c / PMPI_Type_create_hindexed_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { indexed(count, array_of_blocklengths, array_of_displacements, true, oldtype) }?)
    }
}

/// # Safety
/// `d` holds `count` values.
unsafe fn indexed_block<D: Copy + Into<i64>>(
    count: i64,
    blocklength: i64,
    d: *const D,
    bytes: bool,
    oldtype: c_int,
) -> MpiResult<TypeInfo> {
    let n = count_of(count)?;
    // SAFETY: per the caller's contract.
    let d = unsafe { arr(d, n, "array_of_displacements")? };
    build::indexed_block(blocklength, &as_isize(d), bytes, &old(oldtype)?)
}

mpi_fn! {
    Initialized fn MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block(count: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: arrays of `count` per the standard.
        emit(newtype, unsafe { indexed_block(count as i64, blocklength as i64, array_of_displacements, false, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_indexed_block_c / PMPI_Type_create_indexed_block_c(count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { indexed_block(count, blocklength, array_of_displacements, false, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hindexed_block / PMPI_Type_create_hindexed_block(count: c_int, blocklength: c_int, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit(newtype, unsafe { indexed_block(count as i64, blocklength as i64, array_of_displacements, true, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_hindexed_block_c / PMPI_Type_create_hindexed_block_c(count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { indexed_block(count, blocklength, array_of_displacements, true, oldtype) }?)
    }
}

/// # Safety
/// Arrays hold `count` values.
unsafe fn structure<B: Copy + Into<i64>>(
    count: i64,
    bl: *const B,
    d: *const i64,
    types: *const c_int,
) -> MpiResult<TypeInfo> {
    let n = count_of(count)?;
    // SAFETY: per the caller's contract.
    let (bl, d, ts) = unsafe {
        (arr(bl, n, "array_of_blocklengths")?, arr(d, n, "array_of_displacements")?, arr(types, n, "array_of_types")?)
    };
    let ts: Vec<TypeRef> = ts.iter().map(|&h| old(h as c_int)).collect::<MpiResult<_>>()?;
    build::structure(&bl, &as_isize(d), &ts)
}

mpi_fn! {
    Initialized fn MPI_Type_create_struct / PMPI_Type_create_struct(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const i64, array_of_types: *const c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: arrays of `count` per the standard.
        emit(newtype, unsafe { structure(count as i64, array_of_blocklengths, array_of_displacements, array_of_types) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_struct / PMPI_Type_struct(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const i64, array_of_types: *const c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit(newtype, unsafe { structure(count as i64, array_of_blocklengths, array_of_displacements, array_of_types) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_struct_c / PMPI_Type_create_struct_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, array_of_types: *const c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { structure(count, array_of_blocklengths, array_of_displacements, array_of_types) }?)
    }
}

/// # Safety
/// Arrays hold `ndims` values.
unsafe fn subarray<T: Copy + Into<i64>>(
    ndims: c_int,
    sizes: *const T,
    subsizes: *const T,
    starts: *const T,
    order: c_int,
    oldtype: c_int,
) -> MpiResult<TypeInfo> {
    if ndims < 1 {
        return err!(Arg, "ndims {ndims} must be at least 1");
    }
    let n = ndims as usize;
    // SAFETY: per the caller's contract.
    let (a, b, c) = unsafe {
        (arr(sizes, n, "array_of_sizes")?, arr(subsizes, n, "array_of_subsizes")?, arr(starts, n, "array_of_starts")?)
    };
    build::subarray(&a, &b, &c, order, &old(oldtype)?)
}

mpi_fn! {
    Initialized fn MPI_Type_create_subarray / PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: arrays of `ndims` per the standard.
        emit(newtype, unsafe { subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_subarray_c / PMPI_Type_create_subarray_c(ndims: c_int, array_of_sizes: *const i64, array_of_subsizes: *const i64, array_of_starts: *const i64, order: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype) }?)
    }
}

/// # Safety
/// Arrays hold `ndims` values.
#[allow(clippy::too_many_arguments)]
unsafe fn darray<G: Copy + Into<i64>>(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const G,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: c_int,
) -> MpiResult<TypeInfo> {
    if ndims < 1 {
        return err!(Arg, "ndims {ndims} must be at least 1");
    }
    let n = ndims as usize;
    // SAFETY: per the caller's contract.
    let (g, di, da, p) = unsafe {
        (
            arr(gsizes, n, "array_of_gsizes")?,
            arr(distribs, n, "array_of_distribs")?,
            arr(dargs, n, "array_of_dargs")?,
            arr(psizes, n, "array_of_psizes")?,
        )
    };
    let di: Vec<i32> = di.into_iter().map(|x| x as i32).collect();
    let da: Vec<i32> = da.into_iter().map(|x| x as i32).collect();
    build::darray(size as i64, rank as i64, &g, &di, &da, &p, order, &old(oldtype)?)
}

mpi_fn! {
    Initialized fn MPI_Type_create_darray / PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: arrays of `ndims` per the standard.
        emit(newtype, unsafe { darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype) }?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_darray_c / PMPI_Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const i64, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: c_int, newtype: *mut c_int) errors(None) {
        // SAFETY: as above.
        emit_large(newtype, unsafe { darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype) }?)
    }
}

mpi_fn! {
    Initialized fn MPI_Type_create_resized / PMPI_Type_create_resized(oldtype: c_int, lb: isize, extent: isize, newtype: *mut c_int) errors(None) {
        emit(newtype, build::resized(&old(oldtype)?, lb, extent)?)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_create_resized_c / PMPI_Type_create_resized_c(oldtype: c_int, lb: i64, extent: i64, newtype: *mut c_int) errors(None) {
        emit_large(newtype, build::resized(&old(oldtype)?, lb as isize, extent as isize)?)
    }
}

mpi_fn! {
    Initialized fn MPI_Type_dup / PMPI_Type_dup(oldtype: c_int, newtype: *mut c_int) errors(None) {
        emit(newtype, build::dup(&old(oldtype)?))?;
        // SAFETY: emit checked newtype non-null and wrote it.
        super::attr::copy_all(super::attr::Kind::Type, oldtype, unsafe { *newtype })
    }
}

mpi_fn! {
    Initialized fn MPI_Type_commit / PMPI_Type_commit(datatype: *mut c_int) errors(None) {
        if datatype.is_null() {
            return err!(Arg, "datatype is a null pointer");
        }
        // SAFETY: checked non-null.
        let h = unsafe { *datatype };
        if handles::datatype(h)?.contents.is_none() {
            return Ok(()); // predefined types are committed
        }
        handles::update_datatype(h, |t| {
            t.class = t.classify();
            t.committed = true;
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Type_free / PMPI_Type_free(datatype: *mut c_int) errors(None) {
        if datatype.is_null() {
            return err!(Arg, "datatype is a null pointer");
        }
        // SAFETY: checked non-null.
        let h = unsafe { *datatype };
        handles::datatype(h)?;
        if handles::datatype(h)?.contents.is_some() {
            super::attr::delete_all(super::attr::Kind::Type, h)?;
        }
        handles::free_datatype(h)?;
        // SAFETY: as above.
        unsafe { *datatype = DATATYPE_NULL };
        Ok(())
    }
}

/// Define a query writing one value derived from the type.
macro_rules! query {
    ($f:ident / $pf:ident, $t:ty, $name:literal, |$ty:ident| $v:expr) => {
        mpi_fn! {
            Initialized fn $f / $pf(datatype: c_int, value: *mut $t) errors(None) {
                let $ty = handles::datatype(datatype)?;
                // SAFETY: valid per the standard (checked non-null).
                unsafe { out(value, $name, $v) }
            }
        }
    };
}

fn int_or_undefined(v: usize) -> c_int {
    if v > i32::MAX as usize {
        UNDEFINED
    } else {
        v as c_int
    }
}

query!(MPI_Type_size / PMPI_Type_size, c_int, "size", |t| int_or_undefined(t.size));
query!(MPI_Type_size_x / PMPI_Type_size_x, i64, "size", |t| t.size as i64);
query!(MPI_Type_size_c / PMPI_Type_size_c, i64, "size", |t| t.size as i64);
query!(MPI_Type_extent / PMPI_Type_extent, isize, "extent", |t| t.extent);
query!(MPI_Type_lb / PMPI_Type_lb, isize, "displacement", |t| t.lb);
query!(MPI_Type_ub / PMPI_Type_ub, isize, "displacement", |t| t.lb + t.extent);

/// Define a query writing two values.
macro_rules! query2 {
    ($f:ident / $pf:ident, $t:ty, |$ty:ident| ($a:expr, $b:expr)) => {
        mpi_fn! {
            Initialized fn $f / $pf(datatype: c_int, first: *mut $t, second: *mut $t) errors(None) {
                let $ty = handles::datatype(datatype)?;
                // SAFETY: valid per the standard (checked non-null).
                unsafe {
                    out(first, "lb", $a as $t)?;
                    out(second, "extent", $b as $t)
                }
            }
        }
    };
}

query2!(MPI_Type_get_extent / PMPI_Type_get_extent, isize, |t| (t.lb, t.extent));
query2!(MPI_Type_get_extent_x / PMPI_Type_get_extent_x, i64, |t| (t.lb, t.extent));
query2!(MPI_Type_get_extent_c / PMPI_Type_get_extent_c, i64, |t| (t.lb, t.extent));
query2!(MPI_Type_get_true_extent / PMPI_Type_get_true_extent, isize, |t| (t.true_lb, t.true_extent));
query2!(MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x, i64, |t| (t.true_lb, t.true_extent));
query2!(MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c, i64, |t| (t.true_lb, t.true_extent));

/// How many integers, addresses, large counts and datatypes a type was
/// made from, and its combiner.
struct Envelope {
    ints: usize,
    addresses: usize,
    large: usize,
    types: usize,
    combiner: c_int,
}

fn envelope(t: &TypeInfo) -> Envelope {
    match &t.contents {
        None => Envelope { ints: 0, addresses: 0, large: 0, types: 0, combiner: build::combiner::NAMED },
        Some(c) => Envelope {
            ints: c.ints.len(),
            addresses: c.addresses.len(),
            large: c.large.len(),
            types: c.types.len(),
            combiner: c.combiner,
        },
    }
}

/// The int variants cannot tell a large-count constructor's arguments.
fn no_large(e: &Envelope, f: &str) -> MpiResult<()> {
    if e.large > 0 {
        return err!(Type, "this datatype was made by a large-count constructor (MPI_Type_..._c): query it with {f}_c");
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_get_envelope / PMPI_Type_get_envelope(datatype: c_int, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) errors(None) {
        let e = envelope(&*handles::datatype(datatype)?);
        no_large(&e, "MPI_Type_get_envelope")?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(num_integers, "num_integers", e.ints as c_int)?;
            out(num_addresses, "num_addresses", e.addresses as c_int)?;
            out(num_datatypes, "num_datatypes", e.types as c_int)?;
            out(combiner, "combiner", e.combiner)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c(datatype: c_int, num_integers: *mut i64, num_addresses: *mut i64, num_large_counts: *mut i64, num_datatypes: *mut i64, combiner: *mut c_int) errors(None) {
        let e = envelope(&*handles::datatype(datatype)?);
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(num_integers, "num_integers", e.ints as i64)?;
            out(num_addresses, "num_addresses", e.addresses as i64)?;
            out(num_large_counts, "num_large_counts", e.large as i64)?;
            out(num_datatypes, "num_datatypes", e.types as i64)?;
            out(combiner, "combiner", e.combiner)
        }
    }
}

/// Where MPI_Type_get_contents(_c) writes, and how much room each array has.
struct Arrays {
    ints: (*mut c_int, i64),
    addresses: (*mut isize, i64),
    large: (*mut i64, i64),
    types: (*mut c_int, i64),
}

/// # Safety
/// Each array holds as many values as its room says.
unsafe fn contents(datatype: c_int, out: Arrays) -> MpiResult<()> {
    let t = handles::datatype(datatype)?;
    let Some(c) = &t.contents else {
        return err!(
            Type,
            "MPI_Type_get_contents on a predefined (named) datatype; check MPI_Type_get_envelope's combiner first"
        );
    };
    let fits = |n: usize, room: i64| room >= 0 && room as usize >= n;
    if !fits(c.ints.len(), out.ints.1)
        || !fits(c.addresses.len(), out.addresses.1)
        || !fits(c.large.len(), out.large.1)
        || !fits(c.types.len(), out.types.1)
    {
        return err!(
            Arg,
            "arrays too small: the type has {} integers, {} addresses, {} large counts, {} datatypes (see MPI_Type_get_envelope)",
            c.ints.len(),
            c.addresses.len(),
            c.large.len(),
            c.types.len()
        );
    }
    // SAFETY: sizes checked against the caller's room.
    unsafe {
        for (k, &v) in c.ints.iter().enumerate() {
            *out.ints.0.add(k) = v as c_int;
        }
        for (k, &v) in c.addresses.iter().enumerate() {
            *out.addresses.0.add(k) = v;
        }
        for (k, &v) in c.large.iter().enumerate() {
            *out.large.0.add(k) = v;
        }
        for (k, ty) in c.types.iter().enumerate() {
            *out.types.0.add(k) = handles::handle_of(ty);
        }
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_get_contents / PMPI_Type_get_contents(datatype: c_int, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_datatypes: *mut c_int) errors(None) {
        no_large(&envelope(&*handles::datatype(datatype)?), "MPI_Type_get_contents")?;
        let out = Arrays {
            ints: (array_of_integers, max_integers.into()),
            addresses: (array_of_addresses, max_addresses.into()),
            large: (std::ptr::null_mut(), 0),
            types: (array_of_datatypes, max_datatypes.into()),
        };
        // SAFETY: arrays as the standard requires.
        unsafe { contents(datatype, out) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c(datatype: c_int, max_integers: i64, max_addresses: i64, max_large_counts: i64, max_datatypes: i64, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_large_counts: *mut i64, array_of_datatypes: *mut c_int) errors(None) {
        let out = Arrays {
            ints: (array_of_integers, max_integers),
            addresses: (array_of_addresses, max_addresses),
            large: (array_of_large_counts, max_large_counts),
            types: (array_of_datatypes, max_datatypes),
        };
        // SAFETY: arrays as the standard requires.
        unsafe { contents(datatype, out) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_name / PMPI_Type_get_name(datatype: c_int, type_name: *mut c_char, resultlen: *mut c_int) errors(None) {
        let t = handles::datatype(datatype)?;
        if type_name.is_null() {
            return err!(Arg, "type_name is a null pointer");
        }
        let renamed = renamed().get(&datatype).cloned();
        // SAFETY: the standard requires MPI_MAX_OBJECT_NAME bytes.
        let n = unsafe { write_c_string(type_name, MAX_OBJECT_NAME, renamed.as_deref().unwrap_or(&t.name)) };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_set_name / PMPI_Type_set_name(datatype: c_int, type_name: *const c_char) errors(None) {
        if type_name.is_null() {
            return err!(Arg, "type_name is a null pointer");
        }
        // SAFETY: a C string per the standard.
        let name = unsafe { std::ffi::CStr::from_ptr(type_name) }.to_string_lossy();
        let name: String = name.chars().take(MAX_OBJECT_NAME - 1).collect();
        if let TypeRef::Builtin(_) = handles::datatype(datatype)? {
            renamed().insert(datatype, name);
            return Ok(());
        }
        handles::update_datatype(datatype, |t| t.name = name)
    }
}

/// The names the program gave predefined datatypes (MPI_Type_set_name
/// may rename them, as MPICH and Open MPI allow); oxmpi's own error
/// messages keep the standard's names.
fn renamed() -> std::sync::MutexGuard<'static, std::collections::HashMap<c_int, String>> {
    static RENAMED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<c_int, String>>> =
        std::sync::OnceLock::new();
    RENAMED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner())
}

/// MPI_TYPECLASS_*: (class, size) -> the Fortran sized type's handle.
fn match_size(class: c_int, size: c_int) -> Option<c_int> {
    Some(match (class, size) {
        (1, 4) => 0x4c000427,  // MPI_REAL4
        (1, 8) => 0x4c000829,  // MPI_REAL8
        (1, 16) => 0x4c00102b, // MPI_REAL16
        (2, 1) => 0x4c00012d,  // MPI_INTEGER1
        (2, 2) => 0x4c00022f,  // MPI_INTEGER2
        (2, 4) => 0x4c000430,  // MPI_INTEGER4
        (2, 8) => 0x4c000831,  // MPI_INTEGER8
        (3, 8) => 0x4c000828,  // MPI_COMPLEX8
        (3, 16) => 0x4c00102a, // MPI_COMPLEX16
        (3, 32) => 0x4c00202c, // MPI_COMPLEX32
        _ => return None,
    })
}

mpi_fn! {
    Initialized fn MPI_Type_match_size / PMPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut c_int) errors(None) {
        let Some(h) = match_size(typeclass, size) else {
            return err!(Arg, "no predefined type of class {typeclass} (MPI_TYPECLASS_REAL=1, _INTEGER=2, _COMPLEX=3) has {size} bytes");
        };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(datatype, "datatype", h) }
    }
}

/// A parameterized Fortran 90 type: the sized type, remembered with its
/// parameters (MPI 4.0 §19.1.9); one handle per parameter set.
fn f90(key: (c_int, c_int, c_int), base: c_int, combiner: i32, ints: Vec<i64>, newtype: *mut c_int) -> MpiResult<()> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// (kind: 0 integer, 1 real, 2 complex; p; r) -> the handle made.
    type Made = HashMap<(c_int, c_int, c_int), c_int>;
    static CACHE: Mutex<Option<Made>> = Mutex::new(None);
    if newtype.is_null() {
        return err!(Arg, "newtype is a null pointer");
    }
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let h = *cache.get_or_insert_with(HashMap::new).entry(key).or_insert_with(|| {
        let b = handles::datatype(base).expect("predefined");
        let mut t = build::dup(&b);
        t.contents = Some(Box::new(crate::datatype::Contents {
            combiner,
            ints,
            addresses: vec![],
            large: vec![],
            types: vec![],
        }));
        t.committed = true;
        handles::new_datatype(t)
    });
    // SAFETY: checked non-null.
    unsafe { *newtype = h };
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer(r: c_int, newtype: *mut c_int) errors(None) {
        let base = match r {
            ..=2 => 0x4c00012d,
            3..=4 => 0x4c00022f,
            5..=9 => 0x4c000430,
            10..=18 => 0x4c000831,
            _ => return err!(Arg, "no integer kind has a decimal range of {r} digits (at most 18)"),
        };
        f90((0, r, 0), base, build::combiner::F90_INTEGER, vec![r as i64], newtype)
    }
}

/// The REAL kind for precision `p` and exponent range `r` (either may be
/// MPI_UNDEFINED): 0 for 4 bytes, 1 for 8, 2 for 16.
fn real_kind(p: c_int, r: c_int) -> Option<usize> {
    let p = if p == UNDEFINED { 0 } else { p };
    let r = if r == UNDEFINED { 0 } else { r };
    [(6, 37), (15, 307), (33, 4931)].iter().position(|&(mp, mr)| p <= mp && r <= mr)
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut c_int) errors(None) {
        let Some(k) = real_kind(p, r) else {
            return err!(Arg, "no real kind has precision {p} and exponent range {r}");
        };
        let base = [0x4c000427, 0x4c000829, 0x4c00102b][k];
        f90((1, p, r), base, build::combiner::F90_REAL, vec![p as i64, r as i64], newtype)
    }
}

mpi_fn! {
    Initialized fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut c_int) errors(None) {
        let Some(k) = real_kind(p, r) else {
            return err!(Arg, "no complex kind has precision {p} and exponent range {r}");
        };
        let base = [0x4c000828, 0x4c00102a, 0x4c00202c][k];
        f90((2, p, r), base, build::combiner::F90_COMPLEX, vec![p as i64, r as i64], newtype)
    }
}

mpi_fn! {
    Initialized fn MPI_Get_address / PMPI_Get_address(location: *const c_void, address: *mut isize) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(address, "address", location as isize) }
    }
}

mpi_fn! {
    Initialized fn MPI_Address / PMPI_Address(location: *const c_void, address: *mut isize) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(address, "address", location as isize) }
    }
}

/// MPI_Aint_add: address arithmetic that never traps.
#[no_mangle]
pub extern "C" fn PMPI_Aint_add(base: isize, disp: isize) -> isize {
    base.wrapping_add(disp)
}

#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: isize, disp: isize) -> isize {
    PMPI_Aint_add(base, disp)
}

/// MPI_Aint_diff.
#[no_mangle]
pub extern "C" fn PMPI_Aint_diff(addr1: isize, addr2: isize) -> isize {
    addr1.wrapping_sub(addr2)
}

#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: isize, addr2: isize) -> isize {
    PMPI_Aint_diff(addr1, addr2)
}

/// Checks shared by packing and unpacking: the type, the count, and that
/// the packed bytes fit `size` from `*position`. Returns (type, count,
/// position, bytes). `typed` is the user-layout buffer (may be
/// MPI_BOTTOM for derived types), `packed` the byte buffer.
///
/// # Safety
/// `position` null or valid.
#[allow(clippy::too_many_arguments)]
unsafe fn window(
    count: i64,
    datatype: c_int,
    position: *mut i64,
    size: i64,
    external: bool,
    what: &str,
    typed: *const c_void,
    packed: *const c_void,
) -> MpiResult<(TypeRef, usize, i64, usize)> {
    let n = count_of(count)?;
    let t = handles::committed(datatype)?;
    if position.is_null() {
        return err!(Arg, "position is a null pointer");
    }
    // SAFETY: checked non-null.
    let pos = unsafe { *position };
    let need = if external { t.external_size(n) } else { t.size * n };
    if pos < 0 || size < 0 || pos as u64 + need as u64 > size as u64 {
        return err!(Truncate, "{what} {need} bytes at position {pos} runs past the {size}-byte packed buffer (size it with MPI_Pack_size)");
    }
    if need > 0 && (packed.is_null() || (typed.is_null() && t.contents.is_none())) {
        return err!(Buffer, "a buffer is a null pointer");
    }
    Ok((t, n, pos, need))
}

/// Pack `count` items into `outbuf[*position..outsize]`, native or
/// external32, advancing the position.
///
/// # Safety
/// Buffers valid as the standard requires.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_into(
    inbuf: *const c_void,
    count: i64,
    datatype: c_int,
    outbuf: *mut c_void,
    outsize: i64,
    position: *mut i64,
    external: bool,
) -> MpiResult<()> {
    // SAFETY: forwarded from the caller.
    let (t, n, pos, need) = unsafe { window(count, datatype, position, outsize, external, "packing", inbuf, outbuf)? };
    if need > 0 {
        // SAFETY: pos + need <= outsize bytes of `outbuf`; `inbuf` holds the items.
        unsafe {
            let dst = std::slice::from_raw_parts_mut((outbuf as *mut u8).add(pos as usize), need);
            if external {
                let mut native = vec![0u8; t.size * n];
                pack::pack(&t, n, inbuf as *const u8, &mut native);
                external32::to_external(&t, n, &native, dst);
            } else {
                pack::pack(&t, n, inbuf as *const u8, dst);
            }
        }
    }
    // SAFETY: checked non-null.
    unsafe { *position = pos + need as i64 };
    Ok(())
}

/// Unpack `count` items from `inbuf[*position..insize]`.
///
/// # Safety
/// Buffers valid as the standard requires.
#[allow(clippy::too_many_arguments)]
unsafe fn unpack_from(
    inbuf: *const c_void,
    insize: i64,
    position: *mut i64,
    outbuf: *mut c_void,
    count: i64,
    datatype: c_int,
    external: bool,
) -> MpiResult<()> {
    // SAFETY: forwarded from the caller.
    let (t, n, pos, need) = unsafe { window(count, datatype, position, insize, external, "unpacking", outbuf, inbuf)? };
    if need > 0 {
        // SAFETY: pos + need <= insize bytes; the output holds the items.
        unsafe {
            let src = std::slice::from_raw_parts((inbuf as *const u8).add(pos as usize), need);
            if external {
                let mut native = vec![0u8; t.size * n];
                external32::from_external(&t, n, src, &mut native);
                pack::unpack(&t, &native, outbuf as *mut u8);
            } else {
                pack::unpack(&t, src, outbuf as *mut u8);
            }
        }
    }
    // SAFETY: checked non-null.
    unsafe { *position = pos + need as i64 };
    Ok(())
}

fn check_comm(comm: c_int) -> MpiResult<()> {
    with_state(|st| handles::comm(st, comm).map(|_| ()))
}

/// An int position, widened for the shared code and narrowed back.
///
/// # Safety
/// `position` null or valid.
unsafe fn with_int_position(position: *mut c_int, f: impl FnOnce(*mut i64) -> MpiResult<()>) -> MpiResult<()> {
    if position.is_null() {
        return err!(Arg, "position is a null pointer");
    }
    // SAFETY: checked non-null.
    let mut p = unsafe { *position } as i64;
    f(&mut p)?;
    if p > i32::MAX as i64 {
        return err!(Count, "the position {p} does not fit an int: use the _c variant");
    }
    // SAFETY: checked non-null.
    unsafe { *position = p as c_int };
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Pack / PMPI_Pack(inbuf: *const c_void, incount: c_int, datatype: c_int, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: c_int) errors(Some(comm)) {
        check_comm(comm)?;
        // SAFETY: buffers valid per the standard.
        unsafe { with_int_position(position, |p| pack_into(inbuf, incount as i64, datatype, outbuf, outsize as i64, p, false)) }
    }
}
mpi_fn! {
    Initialized fn MPI_Pack_c / PMPI_Pack_c(inbuf: *const c_void, incount: i64, datatype: c_int, outbuf: *mut c_void, outsize: i64, position: *mut i64, comm: c_int) errors(Some(comm)) {
        check_comm(comm)?;
        // SAFETY: buffers valid per the standard.
        unsafe { pack_into(inbuf, incount, datatype, outbuf, outsize, position, false) }
    }
}
mpi_fn! {
    Initialized fn MPI_Unpack / PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: c_int, comm: c_int) errors(Some(comm)) {
        check_comm(comm)?;
        // SAFETY: buffers valid per the standard.
        unsafe { with_int_position(position, |p| unpack_from(inbuf, insize as i64, p, outbuf, outcount as i64, datatype, false)) }
    }
}
mpi_fn! {
    Initialized fn MPI_Unpack_c / PMPI_Unpack_c(inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, outcount: i64, datatype: c_int, comm: c_int) errors(Some(comm)) {
        check_comm(comm)?;
        // SAFETY: buffers valid per the standard.
        unsafe { unpack_from(inbuf, insize, position, outbuf, outcount, datatype, false) }
    }
}

mpi_fn! {
    Initialized fn MPI_Pack_size / PMPI_Pack_size(incount: c_int, datatype: c_int, comm: c_int, size: *mut c_int) errors(Some(comm)) {
        check_comm(comm)?;
        let n = count_of(incount as i64)?;
        let t = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", int_or_undefined(t.size * n)) }
    }
}
mpi_fn! {
    Initialized fn MPI_Pack_size_c / PMPI_Pack_size_c(incount: i64, datatype: c_int, comm: c_int, size: *mut i64) errors(Some(comm)) {
        check_comm(comm)?;
        let n = count_of(incount)?;
        let t = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", (t.size * n) as i64) }
    }
}

fn check_datarep(datarep: *const c_char) -> MpiResult<()> {
    if datarep.is_null() {
        return err!(Arg, "datarep is a null pointer");
    }
    // SAFETY: a C string per the standard.
    let d = unsafe { std::ffi::CStr::from_ptr(datarep) };
    if d.to_bytes() != b"external32" {
        return err!(Arg, "data representation {:?} is not supported: MPI_Pack_external knows only \"external32\"", d);
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Pack_external / PMPI_Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: c_int, outbuf: *mut c_void, outsize: isize, position: *mut isize) errors(None) {
        check_datarep(datarep)?;
        // SAFETY: buffers valid per the standard; MPI_Aint is 64-bit.
        unsafe { pack_into(inbuf, incount as i64, datatype, outbuf, outsize as i64, position as *mut i64, true) }
    }
}
mpi_fn! {
    Initialized fn MPI_Pack_external_c / PMPI_Pack_external_c(datarep: *const c_char, inbuf: *const c_void, incount: i64, datatype: c_int, outbuf: *mut c_void, outsize: i64, position: *mut i64) errors(None) {
        check_datarep(datarep)?;
        // SAFETY: buffers valid per the standard.
        unsafe { pack_into(inbuf, incount, datatype, outbuf, outsize, position, true) }
    }
}
mpi_fn! {
    Initialized fn MPI_Unpack_external / PMPI_Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: isize, position: *mut isize, outbuf: *mut c_void, outcount: c_int, datatype: c_int) errors(None) {
        check_datarep(datarep)?;
        // SAFETY: buffers valid per the standard; MPI_Aint is 64-bit.
        unsafe { unpack_from(inbuf, insize as i64, position as *mut i64, outbuf, outcount as i64, datatype, true) }
    }
}
mpi_fn! {
    Initialized fn MPI_Unpack_external_c / PMPI_Unpack_external_c(datarep: *const c_char, inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, outcount: i64, datatype: c_int) errors(None) {
        check_datarep(datarep)?;
        // SAFETY: buffers valid per the standard.
        unsafe { unpack_from(inbuf, insize, position, outbuf, outcount, datatype, true) }
    }
}
mpi_fn! {
    Initialized fn MPI_Pack_external_size / PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, datatype: c_int, size: *mut isize) errors(None) {
        check_datarep(datarep)?;
        let n = count_of(incount as i64)?;
        let t = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", t.external_size(n) as isize) }
    }
}
mpi_fn! {
    Initialized fn MPI_Pack_external_size_c / PMPI_Pack_external_size_c(datarep: *const c_char, incount: i64, datatype: c_int, size: *mut i64) errors(None) {
        check_datarep(datarep)?;
        let n = count_of(incount)?;
        let t = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", t.external_size(n) as i64) }
    }
}
