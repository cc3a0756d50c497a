//! Datatypes: constructors, commit and free; the queries in `query`,
//! addresses, pack and unpack (native and external32) in `packing`. The
//! layouts are built by `datatype::build`; this checks arguments and
//! manages handles.

mod packing;
mod query;

use super::handles::{self, DATATYPE_NULL};
use super::mpi_fn;
use crate::datatype::{build, external32, pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::c_int;

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
