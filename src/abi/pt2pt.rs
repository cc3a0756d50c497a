//! Point-to-point: argument checks, handle translation, status writing.

use super::env::TAG_UB;
use super::handles::{self, request_handle, request_id, REQUEST_NULL};
use super::{mpi_fn, out, with_state};
use crate::datatype::TypeInfo;
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::p2p::request::{ReqId, Status};
use crate::p2p::{ANY_SOURCE, ANY_TAG, PROC_NULL};
use crate::runtime::State;
use std::os::raw::{c_int, c_void};

/// MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE.
const STATUS_IGNORE: usize = 1;

/// MPICH's MPI_Status: five ints.
#[repr(C)]
pub struct CStatus {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
}

/// Write `s` to a C status unless it is MPI_STATUS_IGNORE.
///
/// # Safety
/// `p` must be MPI_STATUS_IGNORE or valid for a write of MPI_Status.
pub unsafe fn write_status(p: *mut CStatus, s: &Status) {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return;
    }
    let bytes = s.bytes as u64;
    // SAFETY: valid per the caller's contract.
    unsafe {
        (*p).count_lo = bytes as u32 as c_int;
        (*p).count_hi_and_cancelled =
            ((bytes >> 32) as c_int & 0x7fff_ffff) | ((s.cancelled as c_int) << 31);
        (*p).source = s.source;
        (*p).tag = s.tag;
        (*p).error = s.error;
    }
}

/// Bytes recorded in a C status.
pub fn status_bytes(s: &CStatus) -> u64 {
    (s.count_lo as u32 as u64) | (((s.count_hi_and_cancelled & 0x7fff_ffff) as u64) << 32)
}

pub struct Checked {
    pub ty: &'static TypeInfo,
    pub count: usize,
}

/// Checks shared by every send and receive.
fn check_buffer(buf: *const c_void, count: c_int, datatype: c_int) -> MpiResult<Checked> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    let ty = handles::datatype(datatype)?;
    if buf.is_null() && count > 0 && ty.size > 0 {
        return err!(Buffer, "buffer is a null pointer but count is {count}");
    }
    Ok(Checked {
        ty,
        count: count as usize,
    })
}

fn check_peer(st: &State, comm: c_int, rank: c_int, what: &str) -> MpiResult<Option<usize>> {
    let c = handles::comm(st, comm)?;
    if rank == PROC_NULL {
        return Ok(None);
    }
    if rank == ANY_SOURCE && what == "source" {
        return Ok(None);
    }
    if rank < 0 || rank as usize >= c.size() {
        return err!(
            Rank,
            "{what} rank {rank} is out of range: {} has {} ranks (0..{}){}",
            c.name,
            c.size(),
            c.size() - 1,
            if what == "source" {
                ", MPI_ANY_SOURCE or MPI_PROC_NULL"
            } else {
                " or MPI_PROC_NULL"
            }
        );
    }
    Ok(Some(c.group.world_rank(rank as usize)))
}

fn check_tag(tag: c_int, receiving: bool) -> MpiResult<Option<i32>> {
    if receiving && tag == ANY_TAG {
        return Ok(None);
    }
    if !(0..=TAG_UB).contains(&tag) {
        return err!(
            Tag,
            "tag {tag} is invalid: tags run from 0 to MPI_TAG_UB ({TAG_UB}){}",
            if receiving { " or are MPI_ANY_TAG" } else { "" }
        );
    }
    Ok(Some(tag))
}

/// Start a standard-mode send; the request completes when the buffer may
/// be reused.
///
/// # Safety
/// `buf` must stay valid for the items until the request completes.
pub unsafe fn start_send(
    st: &mut State,
    buf: *const c_void,
    count: c_int,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
) -> MpiResult<ReqId> {
    let b = check_buffer(buf, count, datatype)?;
    let to = check_peer(st, comm, dest, "destination")?;
    let tag = check_tag(tag, false)?.unwrap_or(0);
    let ctx = handles::comm(st, comm)?.ctx_p2p;
    // SAFETY: forwarded from the caller.
    unsafe {
        st.engine
            .isend(buf as *const u8, b.count, b.ty, to, tag, ctx)
    }
}

/// Start a receive.
///
/// # Safety
/// `buf` must stay valid for the items until the request completes.
pub unsafe fn start_recv(
    st: &mut State,
    buf: *mut c_void,
    count: c_int,
    datatype: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
) -> MpiResult<ReqId> {
    let b = check_buffer(buf, count, datatype)?;
    let from = check_peer(st, comm, source, "source")?;
    let tag = check_tag(tag, true)?;
    if source == PROC_NULL {
        return Ok(st.engine.null_request(Status {
            source: PROC_NULL,
            tag: ANY_TAG,
            ..Default::default()
        }));
    }
    let c = handles::comm(st, comm)?;
    let (ctx, group) = (c.ctx_p2p, c.group.clone());
    // SAFETY: forwarded from the caller.
    Ok(unsafe {
        st.engine
            .irecv(buf as *mut u8, b.count, b.ty, from, tag, ctx, group)
    })
}

/// The error a completed receive carries, if any.
pub fn status_error(s: &Status) -> MpiResult<()> {
    if s.error == ErrorClass::Truncate.code() {
        return Err(MpiError::new(
            ErrorClass::Truncate,
            format!("message from rank {} with tag {} has {} bytes but the receive buffer holds only {}; post a larger receive", s.source, s.tag, s.sent_bytes, s.bytes),
        ));
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Send / PMPI_Send(buf: *const c_void, count: c_int, datatype: c_int, dest: c_int, tag: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            // SAFETY: the buffer is valid for the call's duration, which
            // covers the request's life (we wait for it here).
            let id = unsafe { start_send(st, buf, count, datatype, dest, tag, comm)? };
            st.engine.wait(id);
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Recv / PMPI_Recv(buf: *mut c_void, count: c_int, datatype: c_int, source: c_int, tag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        let s = with_state(|st| {
            // SAFETY: as in MPI_Send.
            let id = unsafe { start_recv(st, buf, count, datatype, source, tag, comm)? };
            Ok(st.engine.wait(id))
        })?;
        // SAFETY: status is MPI_STATUS_IGNORE or valid per the standard.
        unsafe { write_status(status, &s) };
        status_error(&s)
    }
}

mpi_fn! {
    Initialized fn MPI_Isend / PMPI_Isend(buf: *const c_void, count: c_int, datatype: c_int, dest: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: the standard requires the buffer to stay valid until the
        // request completes.
        let id = with_state(|st| unsafe { start_send(st, buf, count, datatype, dest, tag, comm) })?;
        // SAFETY: checked non-null.
        unsafe { out(request, "request", request_handle(id)) }
    }
}

mpi_fn! {
    Initialized fn MPI_Irecv / PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: c_int, source: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: as in MPI_Isend.
        let id = with_state(|st| unsafe { start_recv(st, buf, count, datatype, source, tag, comm) })?;
        // SAFETY: checked non-null.
        unsafe { out(request, "request", request_handle(id)) }
    }
}

/// Look up a request handle: Ok(None) for MPI_REQUEST_NULL.
fn live_request(st: &State, h: c_int) -> MpiResult<Option<ReqId>> {
    if h == REQUEST_NULL {
        return Ok(None);
    }
    let id = request_id(h)?;
    if !st.engine.is_request(id) {
        return err!(
            Request,
            "request handle 0x{h:08x} is not an active request (already completed or freed?)"
        );
    }
    Ok(Some(id))
}

/// The status of an inactive request (MPI_REQUEST_NULL).
fn empty_status() -> Status {
    Status {
        source: ANY_SOURCE,
        tag: ANY_TAG,
        ..Default::default()
    }
}

mpi_fn! {
    Initialized fn MPI_Wait / PMPI_Wait(request: *mut c_int, status: *mut CStatus) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        let s = with_state(|st| {
            // SAFETY: checked non-null.
            match live_request(st, unsafe { *request })? {
                None => Ok(empty_status()),
                Some(id) => Ok(st.engine.wait(id)),
            }
        })?;
        // SAFETY: valid per the standard.
        unsafe {
            *request = REQUEST_NULL;
            write_status(status, &s);
        }
        status_error(&s)
    }
}

mpi_fn! {
    Initialized fn MPI_Test / PMPI_Test(request: *mut c_int, flag: *mut c_int, status: *mut CStatus) errors(None) {
        if request.is_null() || flag.is_null() {
            return err!(Arg, "request and flag must not be null pointers");
        }
        let done = with_state(|st| {
            // SAFETY: checked non-null.
            match live_request(st, unsafe { *request })? {
                None => Ok(Some(empty_status())),
                Some(id) => Ok(st.engine.test(id)),
            }
        })?;
        // SAFETY: valid per the standard.
        unsafe {
            *flag = done.is_some() as c_int;
            if let Some(s) = done {
                *request = REQUEST_NULL;
                write_status(status, &s);
                return status_error(&s);
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Waitall / PMPI_Waitall(count: c_int, requests: *mut c_int, statuses: *mut CStatus) errors(None) {
        if count < 0 {
            return err!(Count, "count {count} is negative");
        }
        if count > 0 && requests.is_null() {
            return err!(Arg, "array_of_requests is a null pointer");
        }
        let n = count as usize;
        // SAFETY: the standard requires `count` request handles.
        let handles = unsafe { std::slice::from_raw_parts_mut(requests, n) };
        let mut done = vec![empty_status(); n];
        with_state(|st| {
            let mut ids = Vec::with_capacity(n);
            let mut slots = Vec::with_capacity(n);
            for (k, &h) in handles.iter().enumerate() {
                if let Some(id) = live_request(st, h)? {
                    ids.push(id);
                    slots.push(k);
                }
            }
            let mut got = vec![Status::default(); ids.len()];
            st.engine.wait_all(&ids, &mut got);
            for (k, s) in slots.into_iter().zip(got) {
                done[k] = s;
            }
            Ok(())
        })?;
        let failed = done.iter().any(|s| s.error != 0);
        for (k, s) in done.iter().enumerate() {
            handles[k] = REQUEST_NULL;
            if statuses as usize != STATUS_IGNORE && !statuses.is_null() {
                // SAFETY: the standard requires `count` statuses.
                unsafe { write_status(statuses.add(k), s) };
            }
        }
        if failed {
            let first = done.iter().find(|s| s.error != 0).unwrap();
            let e = status_error(first).unwrap_err();
            return Err(MpiError::new(ErrorClass::InStatus, format!("a request failed, see each status's MPI_ERROR: {}", e.msg)));
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Sendrecv / PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, source: c_int, recvtag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        let s = with_state(|st| {
            // SAFETY: both buffers are valid for the call, and we wait for
            // both requests before returning.
            let r = unsafe { start_recv(st, recvbuf, recvcount, recvtype, source, recvtag, comm)? };
            // SAFETY: as above.
            let w = unsafe { start_send(st, sendbuf, sendcount, sendtype, dest, sendtag, comm)? };
            let mut got = [Status::default(); 2];
            st.engine.wait_all(&[r, w], &mut got);
            Ok(got[0])
        })?;
        // SAFETY: valid per the standard.
        unsafe { write_status(status, &s) };
        status_error(&s)
    }
}

/// Basic elements in `bytes` bytes of items of `ty`; None when the bytes
/// end inside a basic element.
fn elements_in(ty: &TypeInfo, bytes: u64) -> MpiResult<Option<u64>> {
    if ty.size == 0 {
        return Ok(Some(0));
    }
    let full = bytes / ty.size as u64;
    let mut n = full * ty.elem_sizes.len() as u64;
    let mut left = (bytes % ty.size as u64) as usize;
    for &e in &ty.elem_sizes {
        if left == 0 {
            break;
        }
        if left < e {
            return Ok(None);
        }
        left -= e;
        n += 1;
    }
    Ok(Some(n))
}

mpi_fn! {
    Initialized fn MPI_Get_count / PMPI_Get_count(status: *const CStatus, datatype: c_int, count: *mut c_int) errors(None) {
        if status.is_null() || status as usize == STATUS_IGNORE {
            return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
        }
        let ty = handles::datatype(datatype)?;
        // SAFETY: checked to be a real status.
        let bytes = status_bytes(unsafe { &*status });
        let n = if ty.size == 0 {
            0
        } else if bytes % ty.size as u64 != 0 || bytes / ty.size as u64 > i32::MAX as u64 {
            -32766 // MPI_UNDEFINED
        } else {
            (bytes / ty.size as u64) as c_int
        };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(count, "count", n) }
    }
}

mpi_fn! {
    Initialized fn MPI_Get_elements / PMPI_Get_elements(status: *const CStatus, datatype: c_int, count: *mut c_int) errors(None) {
        if status.is_null() || status as usize == STATUS_IGNORE {
            return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
        }
        let ty = handles::datatype(datatype)?;
        // SAFETY: checked to be a real status.
        let bytes = status_bytes(unsafe { &*status });
        let n = match elements_in(ty, bytes)? {
            Some(n) if n <= i32::MAX as u64 => n as c_int,
            _ => -32766,
        };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(count, "count", n) }
    }
}

mpi_fn! {
    Initialized fn MPI_Get_elements_x / PMPI_Get_elements_x(status: *const CStatus, datatype: c_int, count: *mut i64) errors(None) {
        if status.is_null() || status as usize == STATUS_IGNORE {
            return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
        }
        let ty = handles::datatype(datatype)?;
        // SAFETY: checked to be a real status.
        let bytes = status_bytes(unsafe { &*status });
        let n = elements_in(ty, bytes)?.map_or(-32766, |n| n as i64);
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(count, "count", n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_count_pairs_and_partial_items() {
        let di = handles::datatype(0x8c000001u32 as i32).unwrap(); // MPI_DOUBLE_INT, size 12
        assert_eq!(elements_in(di, 24).unwrap(), Some(4));
        assert_eq!(
            elements_in(di, 32).unwrap(),
            Some(5),
            "two pairs and a double"
        );
        assert_eq!(elements_in(di, 30).unwrap(), None);
        let int = handles::datatype(0x4c000405).unwrap();
        assert_eq!(elements_in(int, 40).unwrap(), Some(10));
        assert_eq!(elements_in(int, 6).unwrap(), None);
    }
}
