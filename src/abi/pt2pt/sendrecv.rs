//! A send and a receive in one call: MPI_Sendrecv, MPI_Sendrecv_replace
//! and their nonblocking forms.

use super::*;

/// # Safety
/// Buffers valid for their items; `status` MPI_STATUS_IGNORE or valid.
#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: c_int,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: c_int,
    source: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut CStatus,
) -> MpiResult<()> {
    let s = with_state(|st| {
        let r = recv_template(st, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let w = Template::from(send_args(st, sendbuf, sendcount, sendtype, dest, sendtag, comm, Mode::Standard)?);
        // SAFETY: both buffers are valid for the call; we wait for both.
        let w = unsafe { start(st, w)? };
        // SAFETY: as above.
        let got = unsafe { recv_now(st, r)? };
        st.engine.wait(w);
        Ok(got)
    })?;
    // SAFETY: per the caller's contract.
    unsafe { finish_one(status, &s) }
}

mpi_fn! {
    Initialized fn MPI_Sendrecv / PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, source: c_int, recvtag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { sendrecv(sendbuf, sendcount as i64, sendtype, dest, sendtag, recvbuf, recvcount as i64, recvtype, source, recvtag, comm, status) }
    }
}

mpi_fn! {
    Initialized fn MPI_Sendrecv_c / PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, source: c_int, recvtag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status) }
    }
}

/// `count` items of `dt` at `buf` packed into a buffer of our own, for a
/// `*_replace` call to send (as MPI_PACKED, `handles::PACKED`) while the
/// receive overwrites `buf`.
///
/// # Safety
/// `buf` valid for the items.
unsafe fn packed_copy(buf: *mut c_void, count: i64, dt: c_int) -> MpiResult<Vec<u8>> {
    let b = check_buffer(buf, count, dt)?;
    let mut copy = vec![0u8; b.ty.size * b.count];
    // SAFETY: per the caller's contract.
    unsafe { crate::datatype::pack::pack(&b.ty, b.count, buf as *const u8, &mut copy) };
    Ok(copy)
}

/// Send from and receive into one buffer: the outgoing message is packed
/// first, so the receive may overwrite the buffer.
///
/// # Safety
/// `buf` valid for the items; `status` MPI_STATUS_IGNORE or valid.
#[allow(clippy::too_many_arguments)]
unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: i64,
    dt: c_int,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: c_int,
    status: *mut CStatus,
) -> MpiResult<()> {
    // SAFETY: `buf` is valid per the contract.
    let copy = unsafe { packed_copy(buf, count, dt)? };
    // SAFETY: `copy` outlives the call; `buf` is valid per the contract.
    unsafe {
        sendrecv(
            copy.as_ptr() as *const c_void,
            copy.len() as i64,
            handles::PACKED,
            dest,
            sendtag,
            buf,
            count,
            dt,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

mpi_fn! {
    Initialized fn MPI_Sendrecv_replace / PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: c_int, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { sendrecv_replace(buf, count as i64, datatype, dest, sendtag, source, recvtag, comm, status) }
    }
}

mpi_fn! {
    Initialized fn MPI_Sendrecv_replace_c / PMPI_Sendrecv_replace_c(buf: *mut c_void, count: i64, datatype: c_int, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status) }
    }
}

/// MPI_Isendrecv: the receive is started before the send (as in
/// `sendrecv`, so that a message to this rank itself matches it), and
/// one request stands for both.
///
/// # Safety
/// Buffers valid for their items until the request completes; `hold`
/// the storage `sendbuf` points into, if ours.
unsafe fn isendrecv(
    (sendbuf, sendcount, sendtype, dest, sendtag): (*const c_void, i64, c_int, c_int, c_int),
    (recvbuf, recvcount, recvtype, source, recvtag): (*mut c_void, i64, c_int, c_int, c_int),
    comm: c_int,
    hold: Option<Vec<u8>>,
    request: *mut c_int,
) -> MpiResult<()> {
    if request.is_null() {
        return err!(Arg, "request is a null pointer");
    }
    let id = with_state(|st| {
        let r = recv_template(st, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let w = Template::from(send_args(st, sendbuf, sendcount, sendtype, dest, sendtag, comm, Mode::Standard)?);
        // SAFETY: both buffers stay valid until the request completes.
        let r = unsafe { start(st, r)? };
        // SAFETY: as above.
        match unsafe { start(st, w) } {
            Ok(w) => Ok(st.engine.pair(r, w, hold)),
            Err(e) => {
                st.engine.cancel(r);
                st.engine.free(r);
                Err(e)
            }
        }
    })?;
    // SAFETY: checked non-null.
    unsafe { out(request, "request", request_handle(id)) }
}

mpi_fn! {
    Initialized fn MPI_Isendrecv / PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, source: c_int, recvtag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        let send = (sendbuf, sendcount as i64, sendtype, dest, sendtag);
        // SAFETY: valid until completion per the standard.
        unsafe { isendrecv(send, (recvbuf, recvcount as i64, recvtype, source, recvtag), comm, None, request) }
    }
}

mpi_fn! {
    Initialized fn MPI_Isendrecv_c / PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, dest: c_int, sendtag: c_int,
        recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, source: c_int, recvtag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        // SAFETY: valid until completion per the standard.
        unsafe { isendrecv((sendbuf, sendcount, sendtype, dest, sendtag), (recvbuf, recvcount, recvtype, source, recvtag), comm, None, request) }
    }
}

/// MPI_Isendrecv_replace: the outgoing message is packed at the call and
/// sent from that copy (kept with the request), so the receive may
/// overwrite the buffer.
///
/// # Safety
/// `buf` valid for the items until the request completes.
unsafe fn isendrecv_replace(
    buf: *mut c_void,
    count: i64,
    dt: c_int,
    (dest, sendtag): (c_int, c_int),
    (source, recvtag): (c_int, c_int),
    comm: c_int,
    request: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: `buf` is valid per the contract.
    let copy = unsafe { packed_copy(buf, count, dt)? };
    let send = (copy.as_ptr() as *const c_void, copy.len() as i64, handles::PACKED, dest, sendtag);
    // SAFETY: `copy` goes with the request, its heap storage unmoved;
    // `buf` is valid per the contract.
    unsafe { isendrecv(send, (buf, count, dt, source, recvtag), comm, Some(copy), request) }
}

mpi_fn! {
    Initialized fn MPI_Isendrecv_replace / PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: c_int, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        // SAFETY: valid until completion per the standard.
        unsafe { isendrecv_replace(buf, count as i64, datatype, (dest, sendtag), (source, recvtag), comm, request) }
    }
}

mpi_fn! {
    Initialized fn MPI_Isendrecv_replace_c / PMPI_Isendrecv_replace_c(buf: *mut c_void, count: i64, datatype: c_int, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        // SAFETY: valid until completion per the standard.
        unsafe { isendrecv_replace(buf, count, datatype, (dest, sendtag), (source, recvtag), comm, request) }
    }
}
