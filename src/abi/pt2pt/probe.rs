//! Probes (MPI_Probe, MPI_Iprobe) and matched probes with their receives
//! (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv).

use super::*;
use crate::p2p::matching::Want;
use crate::p2p::null_status;

/// The matching criteria of a probe, checked. None for MPI_PROC_NULL.
fn probe_want(st: &State, source: c_int, tag: c_int, comm: c_int) -> MpiResult<Option<(Want, crate::comm::Group)>> {
    let c = handles::comm(st, comm)?;
    let peer = check_peer(c, source, true)?;
    let tag = check_tag(tag, true)?;
    Ok(match peer {
        Peer::Null => None,
        Peer::Any => Some((Want { ctx: c.ctx_p2p, src: None, tag }, c.peers().clone())),
        Peer::Rank(w) => Some((Want { ctx: c.ctx_p2p, src: Some(w), tag }, c.peers().clone())),
    })
}

mpi_fn! {
    Initialized fn MPI_Probe / PMPI_Probe(source: c_int, tag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        let s = with_state(|st| Ok(match probe_want(st, source, tag, comm)? {
            None => null_status(),
            Some((w, g)) => st.engine.probe(w, &g),
        }))?;
        // SAFETY: valid per the standard.
        unsafe { crate::abi::request::write_status(status, &s) };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Iprobe / PMPI_Iprobe(source: c_int, tag: c_int, comm: c_int, flag: *mut c_int, status: *mut CStatus) errors(Some(comm)) {
        if flag.is_null() {
            return err!(Arg, "flag is a null pointer");
        }
        let s = with_state(|st| Ok(match probe_want(st, source, tag, comm)? {
            None => Some(null_status()),
            Some((w, g)) => st.engine.iprobe(w, &g),
        }))?;
        // SAFETY: valid per the standard (flag checked non-null).
        unsafe {
            *flag = s.is_some() as c_int;
            if let Some(s) = s {
                crate::abi::request::write_status(status, &s);
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Mprobe / PMPI_Mprobe(source: c_int, tag: c_int, comm: c_int, message: *mut c_int, status: *mut CStatus) errors(Some(comm)) {
        if message.is_null() {
            return err!(Arg, "message is a null pointer");
        }
        let (h, s) = with_state(|st| Ok(match probe_want(st, source, tag, comm)? {
            None => (MESSAGE_NO_PROC, null_status()),
            Some((w, g)) => {
                let (id, s) = st.engine.mprobe(w, &g);
                (request_handle(id), s)
            }
        }))?;
        // SAFETY: valid per the standard (message checked non-null).
        unsafe {
            *message = h;
            crate::abi::request::write_status(status, &s);
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Improbe / PMPI_Improbe(source: c_int, tag: c_int, comm: c_int, flag: *mut c_int, message: *mut c_int, status: *mut CStatus) errors(Some(comm)) {
        if message.is_null() || flag.is_null() {
            return err!(Arg, "flag and message must not be null pointers");
        }
        let got = with_state(|st| Ok(match probe_want(st, source, tag, comm)? {
            None => Some((MESSAGE_NO_PROC, null_status())),
            Some((w, g)) => st.engine.improbe(w, &g).map(|(id, s)| (request_handle(id), s)),
        }))?;
        // SAFETY: valid per the standard (pointers checked non-null).
        unsafe {
            *flag = got.is_some() as c_int;
            if let Some((h, s)) = got {
                *message = h;
                crate::abi::request::write_status(status, &s);
            }
        }
        Ok(())
    }
}

/// # Safety
/// `buf` valid for the items until the request completes.
unsafe fn start_mrecv(buf: *mut c_void, count: i64, datatype: c_int, message: *mut c_int) -> MpiResult<ReqId> {
    if message.is_null() {
        return err!(Arg, "message is a null pointer");
    }
    let b = check_buffer(buf, count, datatype)?;
    // SAFETY: checked non-null.
    let h = unsafe { *message };
    let id = with_state(|st| {
        if h == MESSAGE_NO_PROC {
            return Ok(st.engine.null_request(null_status()));
        }
        if h == MESSAGE_NULL {
            return err!(Request, "the message is MPI_MESSAGE_NULL");
        }
        let msg = handles::request_id(h)?;
        if !st.engine.is_message(msg) {
            return err!(
                Request,
                "message handle 0x{h:08x} does not come from MPI_Mprobe or MPI_Improbe, or was already received"
            );
        }
        // SAFETY: forwarded from the caller.
        unsafe { st.engine.imrecv(msg, buf as *mut u8, b.count, b.ty) }
    })?;
    // SAFETY: checked non-null.
    unsafe { *message = MESSAGE_NULL };
    Ok(id)
}

mpi_fn! {
    Initialized fn MPI_Mrecv / PMPI_Mrecv(buf: *mut c_void, count: c_int, datatype: c_int, message: *mut c_int, status: *mut CStatus) errors(None) {
        // SAFETY: valid per the standard; we wait before returning.
        let id = unsafe { start_mrecv(buf, count as i64, datatype, message)? };
        let s = with_state(|st| Ok(st.engine.wait(id)))?;
        // SAFETY: valid per the standard.
        unsafe { finish_one(status, &s) }
    }
}

mpi_fn! {
    Initialized fn MPI_Mrecv_c / PMPI_Mrecv_c(buf: *mut c_void, count: i64, datatype: c_int, message: *mut c_int, status: *mut CStatus) errors(None) {
        // SAFETY: valid per the standard; we wait before returning.
        let id = unsafe { start_mrecv(buf, count, datatype, message)? };
        let s = with_state(|st| Ok(st.engine.wait(id)))?;
        // SAFETY: valid per the standard.
        unsafe { finish_one(status, &s) }
    }
}

mpi_fn! {
    Initialized fn MPI_Imrecv / PMPI_Imrecv(buf: *mut c_void, count: c_int, datatype: c_int, message: *mut c_int, request: *mut c_int) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: the buffer stays valid until completion (MPI's rule).
        let id = unsafe { start_mrecv(buf, count as i64, datatype, message)? };
        // SAFETY: checked non-null.
        unsafe { out(request, "request", request_handle(id)) }
    }
}

mpi_fn! {
    Initialized fn MPI_Imrecv_c / PMPI_Imrecv_c(buf: *mut c_void, count: i64, datatype: c_int, message: *mut c_int, request: *mut c_int) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: the buffer stays valid until completion (MPI's rule).
        let id = unsafe { start_mrecv(buf, count, datatype, message)? };
        // SAFETY: checked non-null.
        unsafe { out(request, "request", request_handle(id)) }
    }
}
