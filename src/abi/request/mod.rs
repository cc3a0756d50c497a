//! Completing requests (wait, test and their any/all/some forms), cancel,
//! free, persistent start; statuses in `status`, generalized requests in
//! `grequest`.

mod grequest;
mod status;

use grequest::{callback_result, never_completes};

use super::handles::{self, request_id, REQUEST_NULL};
use super::pt2pt::status_error;
use super::{mpi_fn, out, with_state};

use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::p2p::request::{ReqId, Status};
use crate::p2p::{empty_status, null_status, SENT};
use crate::runtime::State;
use std::os::raw::c_int;

/// MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE.
const STATUS_IGNORE: usize = 1;
/// MPI_UNDEFINED
pub const UNDEFINED: c_int = -32766;

/// MPICH's MPI_Status: five ints.
#[repr(C)]
pub struct CStatus {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub source: c_int,
    pub tag: c_int,
    pub error: c_int,
}

/// Write `s` to a C status unless it is MPI_STATUS_IGNORE, all but its
/// MPI_ERROR field, which a call completing one operation leaves as it
/// was (MPI 4.0 §3.2.5: the call's own return value says it; only the
/// calls completing several set the field, with MPI_ERR_IN_STATUS, see
/// `write_statuses`).
///
/// # Safety
/// `p` must be MPI_STATUS_IGNORE, null, or valid for a write of MPI_Status.
pub unsafe fn write_status(p: *mut CStatus, s: &Status) {
    if p.is_null() || p as usize == STATUS_IGNORE {
        return;
    }
    // SAFETY: valid per the caller's contract.
    let c = unsafe { &mut *p };
    put_count(c, s.bytes as u64, s.cancelled);
    c.source = s.source;
    c.tag = s.tag;
}

/// Write the status of a single completed operation and return its error.
///
/// # Safety
/// As `write_status`.
pub unsafe fn finish_one(p: *mut CStatus, s: &Status) -> MpiResult<()> {
    // SAFETY: per the caller's contract.
    unsafe { write_status(p, s) };
    status_error(s)
}

/// Bytes recorded in a C status.
pub fn status_bytes(s: &CStatus) -> u64 {
    (s.count_lo as u32 as u64) | (((s.count_hi_and_cancelled & 0x7fff_ffff) as u64) << 32)
}

/// Whether a C status says its operation was cancelled (the top bit of
/// its second word, MPICH's layout).
pub fn status_cancelled(s: &CStatus) -> bool {
    s.count_hi_and_cancelled < 0
}

/// Record `bytes` (below 2^63) and the cancelled flag in a C status.
fn put_count(s: &mut CStatus, bytes: u64, cancelled: bool) {
    s.count_lo = bytes as u32 as c_int;
    s.count_hi_and_cancelled = ((bytes >> 32) as c_int & 0x7fff_ffff) | ((cancelled as c_int) << 31);
}

/// A request handle that may take part in a completion call: None for
/// MPI_REQUEST_NULL and for inactive persistent requests.
fn active(st: &State, h: c_int) -> MpiResult<Option<ReqId>> {
    if h == REQUEST_NULL {
        return Ok(None);
    }
    let id = request_id(h)?;
    if !st.engine.is_request(id) || st.engine.is_message(id) {
        return err!(Request, "request handle 0x{h:08x} is not an active request (already completed or freed?)");
    }
    if st.engine.is_inactive_persistent(id) {
        // An inactive persistent request: it completes at once, empty.
        return Ok(None);
    }
    Ok(Some(id))
}

/// A list an array completion keeps: on the stack up to 8 entries (a
/// loop of MPI_Irecv, MPI_Isend and MPI_Waitall of two allocated three
/// lists per call).
type List<T> = smallvec::SmallVec<[T; 8]>;

/// The active requests among `hs` (`active`), with their places in it.
/// (Filled in place: lists returned in a Result were copied out whole,
/// stack arrays and all.)
fn active_among(st: &State, hs: &[c_int], ids: &mut List<ReqId>, slots: &mut List<usize>) -> MpiResult<()> {
    ids.reserve(hs.len());
    slots.reserve(hs.len());
    for (k, &h) in hs.iter().enumerate() {
        if let Some(id) = active(st, h)? {
            ids.push(id);
            slots.push(k);
        }
    }
    Ok(())
}

/// After completion: a persistent request keeps its handle, others become
/// MPI_REQUEST_NULL.
fn release_handle(st: &mut State, h: &mut c_int) {
    if *h != REQUEST_NULL && request_id(*h).is_ok_and(|id| !st.engine.is_persistent(id)) {
        if let Ok(id) = request_id(*h) {
            // an MPI_Comm_idup completing: its communicator comes to life
            super::comm::idup_complete(st, id);
        }
        *h = REQUEST_NULL;
    }
}

/// # Safety
/// `requests` must hold `count` handles.
unsafe fn handles_of<'a>(count: c_int, requests: *mut c_int) -> MpiResult<&'a mut [c_int]> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    if count > 0 && requests.is_null() {
        return err!(Arg, "array_of_requests is a null pointer");
    }
    if count == 0 {
        return Ok(&mut []);
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(requests, count as usize) })
}

/// The error of an array completion: MPI_ERR_IN_STATUS if any failed.
fn array_error(done: &[Status]) -> MpiResult<()> {
    match done.iter().find(|s| s.error != 0) {
        None => Ok(()),
        Some(s) => {
            let e = status_error(s).err().map_or_else(String::new, |e| e.into_msg());
            Err(MpiError::new(ErrorClass::InStatus, format!("a request failed, see each status's MPI_ERROR: {e}")))
        }
    }
}

/// Write the statuses of the operations an array completion completed
/// (`done`, in order) and return its error: MPI_ERR_IN_STATUS if any
/// failed, and then every status's MPI_ERROR field says which (MPI_SUCCESS
/// for the others); on success the fields are left as they were, as a
/// single completion leaves its status's.
///
/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE or holds `done.len()` statuses.
unsafe fn write_statuses(statuses: *mut CStatus, done: &[Status]) -> MpiResult<()> {
    let result = array_error(done);
    if statuses.is_null() || statuses as usize == STATUS_IGNORE {
        return result;
    }
    for (k, s) in done.iter().enumerate() {
        // SAFETY: per the caller's contract.
        unsafe {
            let p = statuses.add(k);
            write_status(p, s);
            if result.is_err() {
                (*p).error = s.error;
            }
        }
    }
    result
}

mpi_fn! {
    Initialized fn MPI_Wait / PMPI_Wait(request: *mut c_int, status: *mut CStatus) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: checked non-null.
        if unsafe { *request } == handles::request_handle(SENT) {
            // an eager send, complete since it started: nothing to look up
            // SAFETY: as above; `status` valid per the standard.
            unsafe {
                *request = REQUEST_NULL;
                return finish_one(status, &null_status());
            }
        }
        with_state(|st| {
            // SAFETY: checked non-null.
            let h = unsafe { &mut *request };
            let s = match active(st, *h)? {
                None => empty_status(),
                Some(id) => {
                    never_completes(st, &[id], true)?;
                    st.engine.wait(id)
                }
            };
            release_handle(st, h);
            // (written here, not returned in a Result: the status read
            // back whole from the fields just stored stalled each call)
            // SAFETY: valid per the standard.
            unsafe { finish_one(status, &s) }
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Test / PMPI_Test(request: *mut c_int, flag: *mut c_int, status: *mut CStatus) errors(None) {
        if request.is_null() || flag.is_null() {
            return err!(Arg, "request and flag must not be null pointers");
        }
        with_state(|st| {
            // SAFETY: checked non-null.
            let h = unsafe { &mut *request };
            let done = match active(st, *h)? {
                None => Some(empty_status()),
                Some(id) => st.engine.test(id),
            };
            if done.is_some() {
                release_handle(st, h);
            }
            // (written here, as MPI_Wait's)
            // SAFETY: checked non-null; `status` valid per the standard.
            unsafe {
                *flag = done.is_some() as c_int;
                match done {
                    Some(s) => finish_one(status, &s),
                    None => Ok(()),
                }
            }
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Waitall / PMPI_Waitall(count: c_int, requests: *mut c_int, statuses: *mut CStatus) errors(None) {
        // SAFETY: the standard requires `count` handles.
        let hs = unsafe { handles_of(count, requests)? };
        with_state(|st| {
            let (mut ids, mut slots) = (List::new(), List::new());
            active_among(st, hs, &mut ids, &mut slots)?;
            never_completes(st, &ids, true)?;
            // (filled in place, not moved out of a macro's value)
            let mut done: List<Status> = List::new();
            done.resize(hs.len(), empty_status());
            if slots.len() == hs.len() {
                // (every one active: their statuses in place)
                st.engine.wait_all(&ids, &mut done);
            } else {
                // (not `resize` as above: a second use of it had the
                // compiler call it out of line, 46 instructions more for
                // every Waitall)
                let mut got: List<Status> = smallvec::smallvec![Status::default(); ids.len()];
                st.engine.wait_all(&ids, &mut got);
                for (&k, &s) in slots.iter().zip(got.iter()) {
                    done[k] = s;
                }
            }
            for h in hs.iter_mut() {
                release_handle(st, h);
            }
            // (here: the list stays where it is)
            // SAFETY: the standard requires `count` statuses (or IGNORE).
            unsafe { write_statuses(statuses, &done) }
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Testall / PMPI_Testall(count: c_int, requests: *mut c_int, flag: *mut c_int, statuses: *mut CStatus) errors(None) {
        if flag.is_null() {
            return err!(Arg, "flag is a null pointer");
        }
        // SAFETY: the standard requires `count` handles.
        let hs = unsafe { handles_of(count, requests)? };
        let done = with_state(|st| {
            let mut ids = Vec::new();
            for &h in hs.iter() {
                ids.push(active(st, h)?);
            }
            st.engine.progress();
            if !ids.iter().flatten().all(|&id| st.engine.peek_done(id)) {
                return Ok(None);
            }
            let mut done = vec![empty_status(); hs.len()];
            for (k, id) in ids.iter().enumerate() {
                if let Some(id) = id {
                    done[k] = st.engine.test(*id).unwrap_or_default();
                }
            }
            for h in hs.iter_mut() {
                release_handle(st, h);
            }
            Ok(Some(done))
        })?;
        // SAFETY: flag checked non-null.
        unsafe { *flag = done.is_some() as c_int };
        let Some(done) = done else { return Ok(()) };
        // SAFETY: the standard requires `count` statuses (or IGNORE).
        unsafe { write_statuses(statuses, &done) }
    }
}

/// Shared by Waitany and Testany: Some((index or UNDEFINED, status)) when
/// done, None when `block` is false and nothing completed.
fn any(count: c_int, requests: *mut c_int, block: bool) -> MpiResult<Option<(c_int, Status)>> {
    // SAFETY: the standard requires `count` handles.
    let hs = unsafe { handles_of(count, requests)? };
    with_state(|st| {
        let (mut ids, mut slots) = (List::new(), List::new());
        active_among(st, hs, &mut ids, &mut slots)?;
        if ids.is_empty() {
            return Ok(Some((UNDEFINED, empty_status())));
        }
        let got = if block {
            never_completes(st, &ids, false)?;
            Some(st.engine.wait_any(&ids))
        } else {
            st.engine.progress();
            ids.iter().position(|&id| st.engine.peek_done(id)).map(|p| (p, st.engine.test(ids[p]).unwrap_or_default()))
        };
        Ok(got.map(|(p, s)| {
            release_handle(st, &mut hs[slots[p]]);
            (slots[p] as c_int, s)
        }))
    })
}

mpi_fn! {
    Initialized fn MPI_Waitany / PMPI_Waitany(count: c_int, requests: *mut c_int, index: *mut c_int, status: *mut CStatus) errors(None) {
        if index.is_null() {
            return err!(Arg, "index is a null pointer");
        }
        let (k, s) = any(count, requests, true)?.expect("blocking");
        // SAFETY: valid per the standard.
        unsafe {
            *index = k;
            finish_one(status, &s)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Testany / PMPI_Testany(count: c_int, requests: *mut c_int, index: *mut c_int, flag: *mut c_int, status: *mut CStatus) errors(None) {
        if index.is_null() || flag.is_null() {
            return err!(Arg, "index and flag must not be null pointers");
        }
        let got = any(count, requests, false)?;
        // SAFETY: valid per the standard.
        unsafe {
            *flag = got.is_some() as c_int;
            *index = got.map_or(UNDEFINED, |(k, _)| k);
            match got {
                Some((_, s)) => finish_one(status, &s),
                None => Ok(()),
            }
        }
    }
}

/// Shared by Waitsome and Testsome.
///
/// # Safety
/// Arrays as the standard requires.
unsafe fn some(
    count: c_int,
    requests: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut CStatus,
    block: bool,
) -> MpiResult<()> {
    if outcount.is_null() || (count > 0 && indices.is_null()) {
        return err!(Arg, "outcount and array_of_indices must not be null pointers");
    }
    // SAFETY: the standard requires `count` handles.
    let hs = unsafe { handles_of(count, requests)? };
    let done = with_state(|st| {
        let (mut ids, mut slots) = (List::new(), List::new());
        active_among(st, hs, &mut ids, &mut slots)?;
        if ids.is_empty() {
            return Ok(None);
        }
        if block {
            never_completes(st, &ids, false)?;
        }
        let got = if block { st.engine.wait_some(&ids) } else { st.engine.test_some(&ids) };
        let done: Vec<(usize, Status)> = got.into_iter().map(|(p, s)| (slots[p], s)).collect();
        for &(k, _) in &done {
            release_handle(st, &mut hs[k]);
        }
        Ok(Some(done))
    })?;
    let Some(done) = done else {
        // SAFETY: checked non-null.
        unsafe { *outcount = UNDEFINED };
        return Ok(());
    };
    // SAFETY: checked non-null; arrays hold `count` entries.
    unsafe {
        *outcount = done.len() as c_int;
        for (i, (k, _)) in done.iter().enumerate() {
            *indices.add(i) = *k as c_int;
        }
        write_statuses(statuses, &done.iter().map(|&(_, s)| s).collect::<Vec<_>>())
    }
}

mpi_fn! {
    Initialized fn MPI_Waitsome / PMPI_Waitsome(incount: c_int, requests: *mut c_int, outcount: *mut c_int, indices: *mut c_int, statuses: *mut CStatus) errors(None) {
        // SAFETY: arrays as the standard requires.
        unsafe { some(incount, requests, outcount, indices, statuses, true) }
    }
}

mpi_fn! {
    Initialized fn MPI_Testsome / PMPI_Testsome(incount: c_int, requests: *mut c_int, outcount: *mut c_int, indices: *mut c_int, statuses: *mut CStatus) errors(None) {
        // SAFETY: arrays as the standard requires.
        unsafe { some(incount, requests, outcount, indices, statuses, false) }
    }
}

mpi_fn! {
    Initialized fn MPI_Request_get_status / PMPI_Request_get_status(request: c_int, flag: *mut c_int, status: *mut CStatus) errors(None) {
        if flag.is_null() {
            return err!(Arg, "flag is a null pointer");
        }
        let s = with_state(|st| match active(st, request)? {
            None => Ok(Some(empty_status())),
            Some(id) => {
                st.engine.progress();
                Ok(st.engine.peek_done(id).then(|| st.engine.done_status(id)))
            }
        })?;
        // SAFETY: valid per the standard.
        unsafe {
            *flag = s.is_some() as c_int;
            if let Some(s) = s {
                write_status(status, &s);
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Request_free / PMPI_Request_free(request: *mut c_int) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        with_state(|st| {
            // SAFETY: checked non-null.
            let h = unsafe { &mut *request };
            if *h == REQUEST_NULL {
                return err!(Request, "the request is MPI_REQUEST_NULL");
            }
            let id = request_id(*h)?;
            if !st.engine.is_request(id) {
                return err!(Request, "request handle 0x{:08x} is not an active request", *h);
            }
            let freed = st.engine.free(id);
            *h = REQUEST_NULL;
            callback_result(freed, "free")
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Cancel / PMPI_Cancel(request: *mut c_int) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        let general = with_state(|st| {
            // SAFETY: checked non-null.
            let h = unsafe { *request };
            let id = request_id(h)?;
            if !st.engine.is_request(id) {
                return err!(Request, "request handle 0x{h:08x} is not an active request");
            }
            if st.engine.is_pair(id) {
                return err!(Request, "an MPI_Isendrecv cannot be cancelled (its send and its receive would not be undone together)");
            }
            if let Some(general) = st.engine.general_cancel(id) {
                return Ok(Some(general));
            }
            st.engine.cancel(id);
            Ok(None)
        })?;
        // a generalized request's cancel function, outside the lock: it
        // may call MPI_Grequest_complete
        if let Some((cancel, complete)) = general {
            return callback_result(cancel(complete), "cancel");
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Test_cancelled / PMPI_Test_cancelled(status: *const CStatus, flag: *mut c_int) errors(None) {
        if status.is_null() || status as usize == STATUS_IGNORE {
            return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
        }
        // SAFETY: checked to be a real status.
        let c = status_cancelled(unsafe { &*status });
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(flag, "flag", c as c_int) }
    }
}

fn start_one(st: &mut State, h: c_int) -> MpiResult<()> {
    let id = request_id(h)?;
    if !st.engine.is_persistent(id) {
        return err!(Request, "MPI_Start needs a persistent request (from MPI_Send_init, MPI_Recv_init, ...)");
    }
    st.engine.start(id)
}

mpi_fn! {
    Initialized fn MPI_Start / PMPI_Start(request: *mut c_int) errors(None) {
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // SAFETY: checked non-null.
        let h = unsafe { *request };
        with_state(|st| start_one(st, h))
    }
}

mpi_fn! {
    Initialized fn MPI_Startall / PMPI_Startall(count: c_int, requests: *mut c_int) errors(None) {
        // SAFETY: the standard requires `count` handles.
        let hs = unsafe { handles_of(count, requests)? };
        with_state(|st| hs.iter().try_for_each(|&h| start_one(st, h)))
    }
}
