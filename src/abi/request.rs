//! Completing requests (wait, test and their any/all/some forms), cancel,
//! free, persistent start, and reading statuses.

use super::handles::{self, request_id, REQUEST_NULL};
use super::pt2pt::status_error;
use super::{mpi_fn, out, with_state};
use crate::datatype::TypeInfo;
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::p2p::request::{ReqId, Status};
use crate::p2p::{empty_status, null_status, SENT};
use crate::runtime::State;
use std::os::raw::{c_int, c_void};

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
        let s = with_state(|st| {
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
            Ok(s)
        })?;
        // SAFETY: valid per the standard.
        unsafe { finish_one(status, &s) }
    }
}

mpi_fn! {
    Initialized fn MPI_Test / PMPI_Test(request: *mut c_int, flag: *mut c_int, status: *mut CStatus) errors(None) {
        if request.is_null() || flag.is_null() {
            return err!(Arg, "request and flag must not be null pointers");
        }
        let done = with_state(|st| {
            // SAFETY: checked non-null.
            let h = unsafe { &mut *request };
            let s = match active(st, *h)? {
                None => Some(empty_status()),
                Some(id) => st.engine.test(id),
            };
            if s.is_some() {
                release_handle(st, h);
            }
            Ok(s)
        })?;
        // SAFETY: valid per the standard.
        unsafe {
            *flag = done.is_some() as c_int;
            match done {
                Some(s) => finish_one(status, &s),
                None => Ok(()),
            }
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Waitall / PMPI_Waitall(count: c_int, requests: *mut c_int, statuses: *mut CStatus) errors(None) {
        // SAFETY: the standard requires `count` handles.
        let hs = unsafe { handles_of(count, requests)? };
        let done = with_state(|st| {
            let mut ids = Vec::with_capacity(hs.len());
            let mut slots = Vec::with_capacity(hs.len());
            for (k, &h) in hs.iter().enumerate() {
                if let Some(id) = active(st, h)? {
                    ids.push(id);
                    slots.push(k);
                }
            }
            never_completes(st, &ids, true)?;
            let mut got = vec![Status::default(); ids.len()];
            st.engine.wait_all(&ids, &mut got);
            let mut done = vec![empty_status(); hs.len()];
            for (k, s) in slots.into_iter().zip(got) {
                done[k] = s;
            }
            for h in hs.iter_mut() {
                release_handle(st, h);
            }
            Ok(done)
        })?;
        // SAFETY: the standard requires `count` statuses (or IGNORE).
        unsafe { write_statuses(statuses, &done) }
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
        let mut ids = Vec::new();
        let mut slots = Vec::new();
        for (k, &h) in hs.iter().enumerate() {
            if let Some(id) = active(st, h)? {
                ids.push(id);
                slots.push(k);
            }
        }
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
        let mut ids = Vec::new();
        let mut slots = Vec::new();
        for (k, &h) in hs.iter().enumerate() {
            if let Some(id) = active(st, h)? {
                ids.push(id);
                slots.push(k);
            }
        }
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

/// A C status is five ints laid out as a Fortran one (MPICH's ABI), so
/// converting is copying; MPI_STATUS_IGNORE and MPI_F_STATUS_IGNORE are
/// not statuses to convert (MPI 4.0 section 19.3.5).
fn copy_status(from: *const c_int, to: *mut c_int, ignored: [usize; 2]) -> MpiResult<()> {
    for (p, what) in [(from as usize, "the status to convert"), (to as usize, "the status to fill")] {
        if p == 0 || ignored.contains(&p) {
            return err!(Arg, "{what} must be a real status, not null or a STATUS_IGNORE");
        }
    }
    // SAFETY: both point at five ints (checked to be real statuses).
    unsafe { std::ptr::copy(from, to, 5) };
    Ok(())
}

mpi_fn! {
    Always fn MPI_Status_c2f / PMPI_Status_c2f(c_status: *const CStatus, f_status: *mut c_int) errors(None) {
        copy_status(c_status as *const c_int, f_status, [STATUS_IGNORE, super::data::f_status_ignore()])
    }
}

mpi_fn! {
    Always fn MPI_Status_f2c / PMPI_Status_f2c(f_status: *const c_int, c_status: *mut CStatus) errors(None) {
        copy_status(f_status, c_status as *mut c_int, [STATUS_IGNORE, super::data::f_status_ignore()])
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

/// Items of `ty` in `bytes` bytes, or None when they are not whole.
fn whole_items(ty: &TypeInfo, bytes: u64) -> Option<u64> {
    if ty.size == 0 {
        return Some(0);
    }
    bytes.is_multiple_of(ty.size as u64).then(|| bytes / ty.size as u64)
}

/// Basic elements in `bytes` bytes of items of `ty`; None when the bytes
/// end inside a basic element (a pair counts its value alone).
pub fn elements_in(ty: &TypeInfo, bytes: u64) -> Option<u64> {
    if ty.size == 0 {
        return Some(0);
    }
    let full = bytes / ty.size as u64;
    let mut n = full * ty.element_count();
    let mut left = (bytes % ty.size as u64) as usize;
    for &(e, count) in &ty.elems {
        if left == 0 {
            break;
        }
        let whole = (left / e.size).min(count as usize);
        n += whole as u64 * e.elements();
        left -= whole * e.size;
        if (whole as u64) < count && left > 0 {
            // inside one element: a pair's value counts once it is whole
            return (e.elements() == 2 && left == e.first).then_some(n + 1);
        }
    }
    (left == 0).then_some(n)
}

/// The bytes of the first `n` basic elements of items of `ty` (the
/// inverse of `elements_in`: a pair's value alone is its first element);
/// None when no bytes hold that many (a type without elements).
pub fn bytes_of_elements(ty: &TypeInfo, n: u64) -> Option<u64> {
    let per_item = ty.element_count();
    if n == 0 || per_item == 0 {
        return (n == 0).then_some(0);
    }
    let mut bytes = n / per_item * ty.size as u64;
    let mut left = n % per_item;
    for &(e, count) in &ty.elems {
        if left == 0 {
            break;
        }
        let whole = (left / e.elements()).min(count);
        bytes += whole * e.size as u64;
        left -= whole * e.elements();
        if whole < count && left > 0 {
            // one more: a pair's value
            bytes += e.first as u64;
            left = 0;
        }
    }
    Some(bytes)
}

fn real_status<'a>(status: *const CStatus) -> MpiResult<&'a CStatus> {
    if status.is_null() || status as usize == STATUS_IGNORE {
        return err!(Arg, "status must be a real status, not null or MPI_STATUS_IGNORE");
    }
    // SAFETY: checked to be a real status; valid per the standard.
    Ok(unsafe { &*status })
}

/// Define a status query returning a count of `$t` computed by `$f`.
macro_rules! status_count {
    ($f:ident / $pf:ident, $t:ty, $compute:expr) => {
        mpi_fn! {
            Initialized fn $f / $pf(status: *const CStatus, datatype: c_int, count: *mut $t) errors(None) {
                let s = real_status(status)?;
                let ty = handles::datatype(datatype)?;
                let n: Option<u64> = $compute(&ty, status_bytes(s));
                let v = match n {
                    Some(n) if n <= <$t>::MAX as u64 => n as $t,
                    _ => UNDEFINED as $t,
                };
                // SAFETY: valid per the standard (checked non-null).
                unsafe { out(count, "count", v) }
            }
        }
    };
}

status_count!(MPI_Get_count / PMPI_Get_count, c_int, whole_items);
status_count!(MPI_Get_count_c / PMPI_Get_count_c, i64, whole_items);
status_count!(MPI_Get_elements / PMPI_Get_elements, c_int, elements_in);
status_count!(MPI_Get_elements_x / PMPI_Get_elements_x, i64, elements_in);
status_count!(MPI_Get_elements_c / PMPI_Get_elements_c, i64, elements_in);

/// A blocking wait for `ids` (every one of them, or with `all` false
/// one) that only generalized requests not yet complete hold up could
/// never end: only MPI_Grequest_complete completes them, and at
/// MPI_THREAD_SERIALIZED no other thread may call it meanwhile.
fn never_completes(st: &State, ids: &[ReqId], all: bool) -> MpiResult<()> {
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
    let class = super::errhan::class_of(code).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other);
    let e =
        MpiError::coded(code, class, format!("the generalized request's {what} function returned error code {code}"));
    (code, crate::p2p::schedule::remember(e))
}

/// What one of the program's functions returned (`returned`), as the
/// result of the call that ran it.
fn callback_result((code, failure): (i32, u32), what: &str) -> MpiResult<()> {
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

/// MPI_Status_set_elements(_x): `status` made to say `count` basic
/// elements of `datatype` arrived (MPI_Get_elements then returns it),
/// its other fields left as they are.
///
/// # Safety
/// `status` null, MPI_STATUS_IGNORE or valid.
unsafe fn set_elements(status: *mut CStatus, datatype: c_int, count: i64) -> MpiResult<()> {
    real_status(status)?;
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    let ty = handles::datatype(datatype)?;
    let Some(bytes) = bytes_of_elements(&ty, count as u64).filter(|&b| b < 1 << 63) else {
        return err!(
            Count,
            "{count} elements of {} do not fit a status (it has no elements, or they are too many)",
            ty.name
        );
    };
    // SAFETY: checked to be a real status; valid per the standard.
    let s = unsafe { &mut *status };
    put_count(s, bytes, status_cancelled(s));
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Status_set_elements / PMPI_Status_set_elements(status: *mut CStatus, datatype: c_int, count: c_int) errors(None) {
        // SAFETY: valid per the standard.
        unsafe { set_elements(status, datatype, count as i64) }
    }
}

mpi_fn! {
    Initialized fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x(status: *mut CStatus, datatype: c_int, count: i64) errors(None) {
        // SAFETY: valid per the standard.
        unsafe { set_elements(status, datatype, count) }
    }
}

mpi_fn! {
    Initialized fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled(status: *mut CStatus, flag: c_int) errors(None) {
        real_status(status)?;
        // SAFETY: checked to be a real status; valid per the standard.
        let s = unsafe { &mut *status };
        put_count(s, status_bytes(s), flag != 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_count_pairs_and_partial_items() {
        let di = handles::datatype(0x8c000001u32 as i32).unwrap(); // MPI_DOUBLE_INT, size 12
        assert_eq!(elements_in(&di, 24), Some(4));
        assert_eq!(elements_in(&di, 32), Some(5), "two pairs and a double");
        assert_eq!(elements_in(&di, 30), None);
        let int = handles::datatype(0x4c000405).unwrap();
        assert_eq!(elements_in(&int, 40), Some(10));
        assert_eq!(elements_in(&int, 6), None);
        assert_eq!(whole_items(&int, 6), None);
        assert_eq!(whole_items(&int, 8), Some(2));
    }

    #[test]
    fn bytes_of_elements_inverts_elements_in() {
        let di = handles::datatype(0x8c000001u32 as i32).unwrap(); // MPI_DOUBLE_INT
        for n in 0..9 {
            let b = bytes_of_elements(&di, n).unwrap();
            assert_eq!(elements_in(&di, b), Some(n), "{n} elements in {b} bytes");
        }
        assert_eq!(bytes_of_elements(&di, 5), Some(32), "two pairs and a double");
        let int = handles::datatype(0x4c000405).unwrap();
        assert_eq!(bytes_of_elements(&int, 10), Some(40));
    }

    #[test]
    fn statuses_carry_large_counts_and_the_cancelled_bit() {
        let mut c = CStatus { count_lo: 0, count_hi_and_cancelled: 0, source: 0, tag: 0, error: 0 };
        let s = Status { bytes: (5u64 << 32 | 7) as usize, cancelled: true, ..Default::default() };
        // SAFETY: a valid status on the stack.
        unsafe { write_status(&mut c, &s) };
        assert_eq!(status_bytes(&c), 5u64 << 32 | 7);
        assert!(c.count_hi_and_cancelled < 0, "cancelled is the top bit");
    }
}
