//! Addresses and their arithmetic, and MPI_Pack/MPI_Unpack in the native
//! and the external32 representation, with their size queries.

use super::query::int_or_undefined;
use super::*;
use crate::abi::{out, with_state};
use std::os::raw::{c_char, c_void};

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
