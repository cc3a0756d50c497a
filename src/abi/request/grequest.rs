//! Generalized requests (MPI 4.0 §13.2): an operation of the program's
//! own behind a request, completed by MPI_Grequest_complete.

use super::*;
use std::os::raw::c_void;

/// A blocking wait for `ids` (every one of them, or with `all` false
/// one) that only generalized requests not yet complete hold up could
/// never end: only MPI_Grequest_complete completes them, and at
/// MPI_THREAD_SERIALIZED no other thread may call it meanwhile.
pub(super) fn never_completes(st: &State, ids: &[ReqId], all: bool) -> MpiResult<()> {
    let pending = |&id: &ReqId| st.engine.is_pending_general(id);
    let stuck = if all { ids.iter().any(pending) } else { ids.iter().all(pending) };
    if stuck {
        return err!(
            Request,
            "this wait would never return: it waits for a generalized request not yet complete, which only MPI_Grequest_complete completes, and no other thread may call that while this call waits (oxmpi provides MPI_THREAD_SERIALIZED at most); complete it first, or poll with MPI_Test"
        );
    }
    Ok(())
}

/// The program's functions of a generalized request (MPI 4.0 §13.2).
type QueryFn = unsafe extern "C" fn(*mut c_void, *mut CStatus) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// An error code one of the program's functions returned: the code and
/// the number of an error that raises it as it is (`schedule::remember`),
/// or zeros for MPI_SUCCESS.
fn returned(code: c_int, what: &str) -> (i32, u32) {
    if code == 0 {
        return (0, 0);
    }
    let class = crate::abi::errhan::class_of(code).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other);
    let e =
        MpiError::coded(code, class, format!("the generalized request's {what} function returned error code {code}"));
    (code, crate::p2p::schedule::remember(e))
}

/// What one of the program's functions returned (`returned`), as the
/// result of the call that ran it.
pub(super) fn callback_result((code, failure): (i32, u32), what: &str) -> MpiResult<()> {
    if code == 0 {
        return Ok(());
    }
    let lost = || MpiError::coded(code, ErrorClass::Other, format!("the generalized request's {what} function failed"));
    Err(crate::p2p::schedule::failure(failure).unwrap_or_else(lost))
}

mpi_fn! {
    /// MPI_Grequest_start: a request for an operation of the program's
    /// own, complete once it calls MPI_Grequest_complete. Its functions
    /// run inside the library's call that completes (query, then free),
    /// frees or cancels it: there they may call MPI_Status_set_elements(_x)
    /// and MPI_Status_set_cancelled, and the cancel function (run outside
    /// the library's lock) MPI_Grequest_complete too.
    Initialized fn MPI_Grequest_start / PMPI_Grequest_start(query_fn: Option<QueryFn>, free_fn: Option<FreeFn>, cancel_fn: Option<CancelFn>, extra_state: *mut c_void, request: *mut c_int) errors(None) {
        let (Some(query), Some(free), Some(cancel)) = (query_fn, free_fn, cancel_fn) else {
            return err!(Arg, "query_fn, free_fn and cancel_fn must all be functions, not null pointers");
        };
        if request.is_null() {
            return err!(Arg, "request is a null pointer");
        }
        // the program's state, handed back to its functions as it came
        let extra = extra_state as usize;
        let g = crate::p2p::request::General {
            query: std::sync::Arc::new(move || {
                let e = empty_status();
                let mut c = CStatus { count_lo: 0, count_hi_and_cancelled: 0, source: e.source, tag: e.tag, error: 0 };
                // SAFETY: the program's function and state, as given to MPI_Grequest_start
                let code = unsafe { query(extra as *mut c_void, &mut c) };
                let bytes = status_bytes(&c) as usize;
                let (error, failure) = returned(code, "query");
                let cancelled = status_cancelled(&c);
                Status { source: c.source, tag: c.tag, bytes, sent_bytes: bytes, cancelled, error, failure, ..Default::default() }
            }),
            // SAFETY: as above
            free: std::sync::Arc::new(move || returned(unsafe { free(extra as *mut c_void) }, "free")),
            // SAFETY: as above
            cancel: std::sync::Arc::new(move |complete| returned(unsafe { cancel(extra as *mut c_void, complete as c_int) }, "cancel")),
            complete: false,
            freed: false,
        };
        let id = with_state(|st| Ok(st.engine.general(g)))?;
        // SAFETY: checked non-null.
        unsafe { out(request, "request", handles::request_handle(id)) }
    }
}

mpi_fn! {
    Initialized fn MPI_Grequest_complete / PMPI_Grequest_complete(request: c_int) errors(None) {
        let id = request_id(request)?;
        // (a freed request's free function runs here)
        let freed = with_state(|st| st.engine.complete_general(id))?;
        callback_result(freed, "free")
    }
}
