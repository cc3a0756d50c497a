//! Point-to-point communication: sends in the four modes, receives,
//! persistent requests, the attached buffer; send-receives in `sendrecv`,
//! probes and matched receives in `probe`. Request completion (wait/test)
//! is in `request.rs`.

mod probe;
mod sendrecv;

use super::env::TAG_UB;
use super::handles::{self, request_handle};
use super::request::{finish_one, CStatus};
use super::{mpi_fn, out, with_state};
use crate::comm::Comm;
use crate::datatype::TypeRef;
use crate::err;
use crate::error::MpiResult;

use crate::p2p::protocol::Mode;
use crate::p2p::request::{RecvArgs, ReqId, Status, Template};
use crate::p2p::SendArgs;
use crate::p2p::{ANY_SOURCE, ANY_TAG, PROC_NULL};
use crate::runtime::State;
use std::os::raw::{c_int, c_void};

/// MPI_MESSAGE_NO_PROC: what MPI_Mprobe returns for MPI_PROC_NULL.
pub const MESSAGE_NO_PROC: c_int = 0x6c000000;
pub const MESSAGE_NULL: c_int = 0x2c000000;

pub struct Checked {
    pub ty: TypeRef,
    pub count: usize,
}

/// Checks shared by every send and receive.
#[inline]
pub fn check_buffer(buf: *const c_void, count: i64, datatype: c_int) -> MpiResult<Checked> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    let ty = handles::committed(datatype)?;
    if super::coll::is_in_place(buf) {
        return err!(Buffer, "the buffer is MPI_IN_PLACE, which point-to-point calls do not take");
    }
    // A derived type may address absolute memory from MPI_BOTTOM (null).
    if buf.is_null() && count > 0 && ty.size > 0 && ty.contents.is_none() {
        return err!(Buffer, "buffer is a null pointer but count is {count}");
    }
    Ok(Checked { ty, count: count as usize })
}

/// Who a message goes to or comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Null,
    Any,
    Rank(usize),
}

#[inline]
pub fn check_peer(c: &Comm, rank: c_int, receiving: bool) -> MpiResult<Peer> {
    match rank {
        PROC_NULL => return Ok(Peer::Null),
        ANY_SOURCE if receiving => return Ok(Peer::Any),
        _ => {}
    }
    let n = c.peers().size();
    if rank < 0 || rank as usize >= n {
        let (what, extra) = if receiving { ("source", ", MPI_ANY_SOURCE") } else { ("destination", "") };
        let remote = if c.remote.is_some() { "the remote group of " } else { "" };
        return err!(
            Rank,
            "{what} rank {rank} is out of range: {remote}{} has {n} ranks (0..{}){extra} or MPI_PROC_NULL",
            if c.name.is_empty() { "the communicator" } else { &c.name },
            n as i64 - 1
        );
    }
    Ok(Peer::Rank(c.peers().world_rank(rank as usize)))
}

#[inline]
pub fn check_tag(tag: c_int, receiving: bool) -> MpiResult<Option<i32>> {
    if receiving && tag == ANY_TAG {
        return Ok(None);
    }
    if !(0..=TAG_UB).contains(&tag) {
        let any = if receiving { " or are MPI_ANY_TAG" } else { "" };
        return err!(Tag, "tag {tag} is invalid: tags run from 0 to MPI_TAG_UB ({TAG_UB}){any}");
    }
    Ok(Some(tag))
}

/// What a send will do, checked, as the engine takes it (a `Template`
/// of it for a send started later or waited for).
#[allow(clippy::too_many_arguments)]
fn send_args(
    st: &State,
    buf: *const c_void,
    count: i64,
    datatype: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    mode: Mode,
) -> MpiResult<SendArgs> {
    let b = check_buffer(buf, count, datatype)?;
    let c = handles::comm(st, comm)?;
    let dst = match check_peer(c, dest, false)? {
        Peer::Rank(w) => Some(w),
        _ => None,
    };
    let tag = check_tag(tag, false)?.unwrap_or(0);
    let (ctx, label) = (c.ctx_p2p, datatype as u32);
    Ok(SendArgs { buf: buf as *const u8, count: b.count, ty: b.ty, dst, tag, ctx, mode, label, sig: None })
}

/// What a receive will do, checked.
#[inline(always)]
fn recv_template(
    st: &State,
    buf: *mut c_void,
    count: i64,
    datatype: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
) -> MpiResult<Template> {
    let b = check_buffer(buf, count, datatype)?;
    if b.ty.contents.is_some() && crate::datatype::pack::overlaps(&b.ty, b.count) {
        return err!(Type, "the receive datatype's blocks overlap: a receive buffer must not hold the same byte twice (MPI 4.0 §5.1.11)");
    }
    let c = handles::comm(st, comm)?;
    let peer = check_peer(c, source, true)?;
    let tag = check_tag(tag, true)?;
    let src = if let Peer::Rank(w) = peer { Some(w) } else { None };
    if peer == Peer::Null {
        return Ok(Template::NullRecv);
    }
    Ok(Template::Recv(RecvArgs {
        buf: buf as usize,
        count: b.count,
        ty: b.ty,
        src,
        tag,
        ctx: c.ctx_p2p,
        group: c.peers().clone(),
        label: datatype as u32,
    }))
}

/// Start what a template describes.
///
/// # Safety
/// The template's buffer must stay valid until the request completes.
pub unsafe fn start(st: &mut State, t: Template) -> MpiResult<ReqId> {
    st.engine.start_template(t)
}

/// Receive what a receive template describes, blocking.
///
/// # Safety
/// The template's buffer must be valid for the call.
unsafe fn recv_now(st: &mut State, t: Template) -> MpiResult<Status> {
    match t {
        Template::Recv(a) => {
            // SAFETY: per the caller's contract.
            Ok(unsafe { st.engine.recv(a) })
        }
        t => {
            // SAFETY: as above; we wait for the request.
            let id = unsafe { start(st, t)? };
            Ok(st.engine.wait(id))
        }
    }
}

/// Blocking send in `mode`.
///
/// # Safety
/// `buf` valid for the items (the call waits for completion).
unsafe fn send_blocking(
    buf: *const c_void,
    count: i64,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    mode: Mode,
) -> MpiResult<()> {
    // the buffer is valid for the call, which waits for the send
    let s = with_state(|st| {
        let t = Template::from(send_args(st, buf, count, dt, dest, tag, comm, mode)?);
        st.engine.send(t)
    })?;
    status_error(&s)
}

/// Nonblocking send in `mode`.
///
/// # Safety
/// `buf` valid until the request completes (MPI's rule).
#[allow(clippy::too_many_arguments)]
unsafe fn send_nonblocking(
    buf: *const c_void,
    count: i64,
    dt: c_int,
    dest: c_int,
    tag: c_int,
    comm: c_int,
    mode: Mode,
    request: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded from the caller (straight to the engine: no
    // template, which only requests started later need).
    unsafe {
        nonblocking(request, |st| {
            let a = send_args(st, buf, count, dt, dest, tag, comm, mode)?;
            st.engine.isend(a)
        })
    }
}

/// A datatype handle as a reader knows it: its name if predefined.
fn describe_type(h: c_int, whose: &str) -> String {
    match handles::datatype(h) {
        Ok(t) if t.contents.is_none() => t.name.clone(),
        Ok(t) if !t.name.is_empty() => format!("{} (a derived datatype)", t.name),
        _ => format!("{whose} derived datatype 0x{:08x}", h as u32),
    }
}

/// Start an operation by `begin` and write its request handle.
///
/// # Safety
/// The operation's buffer stays valid until the request completes.
unsafe fn nonblocking(request: *mut c_int, begin: impl FnOnce(&mut State) -> MpiResult<ReqId>) -> MpiResult<()> {
    if request.is_null() {
        return err!(Arg, "request is a null pointer");
    }
    let id = with_state(begin)?;
    // SAFETY: checked non-null.
    unsafe { out(request, "request", request_handle(id)) }
}

/// The error a completed operation carries, if any.
pub fn status_error(s: &Status) -> MpiResult<()> {
    use crate::error::ErrorClass;
    if s.error == 0 {
        return Ok(());
    }
    if let Some(e) = crate::p2p::schedule::failure(s.failure) {
        return Err(e);
    }
    if s.error == ErrorClass::Truncate.code() {
        return err!(
            Truncate,
            "message from rank {} with tag {} has {} bytes but the receive buffer holds only {}; post a larger receive",
            s.source,
            s.tag,
            s.sent_bytes,
            s.bytes
        );
    }
    if s.error == ErrorClass::Type.code() {
        return err!(
            Type,
            "type signature mismatch: rank {} sent {} but this receive's datatype is {} (checked because OXMPI_CHECK_TYPES=1)",
            s.source,
            describe_type(s.peer_type as c_int, "the sender's"),
            describe_type(s.own_type as c_int, "this rank's")
        );
    }
    if s.error == ErrorClass::Other.code() {
        return err!(Other, "ready-mode send found no matching receive posted at the destination (MPI_Rsend needs the receive posted first); the message was dropped");
    }
    // any other code (one whose error was kept no longer): raised as it is
    let class = super::errhan::class_of(s.error).and_then(ErrorClass::from_code).unwrap_or(ErrorClass::Other);
    Err(crate::error::MpiError::coded(s.error, class, format!("the operation failed with error code {}", s.error)))
}

/// Define the blocking and nonblocking sends of one mode, int and _c counts.
macro_rules! sends {
    ($mode:expr, $b:ident / $pb:ident, $bc:ident / $pbc:ident, $i:ident / $pi:ident, $ic:ident / $pic:ident) => {
        mpi_fn! {
            Initialized fn $b / $pb(buf: *const c_void, count: c_int, datatype: c_int, dest: c_int, tag: c_int, comm: c_int) errors(Some(comm)) {
                // SAFETY: the buffer is valid for the call (MPI's rule).
                unsafe { send_blocking(buf, count as i64, datatype, dest, tag, comm, $mode) }
            }
        }
        mpi_fn! {
            Initialized fn $bc / $pbc(buf: *const c_void, count: i64, datatype: c_int, dest: c_int, tag: c_int, comm: c_int) errors(Some(comm)) {
                // SAFETY: as above.
                unsafe { send_blocking(buf, count, datatype, dest, tag, comm, $mode) }
            }
        }
        mpi_fn! {
            Initialized fn $i / $pi(buf: *const c_void, count: c_int, datatype: c_int, dest: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
                // SAFETY: the buffer stays valid until completion (MPI's rule).
                unsafe { send_nonblocking(buf, count as i64, datatype, dest, tag, comm, $mode, request) }
            }
        }
        mpi_fn! {
            Initialized fn $ic / $pic(buf: *const c_void, count: i64, datatype: c_int, dest: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
                // SAFETY: as above.
                unsafe { send_nonblocking(buf, count, datatype, dest, tag, comm, $mode, request) }
            }
        }
    };
}

sends!(
    Mode::Standard,
    MPI_Send / PMPI_Send,
    MPI_Send_c / PMPI_Send_c,
    MPI_Isend / PMPI_Isend,
    MPI_Isend_c / PMPI_Isend_c
);
sends!(
    Mode::Buffered,
    MPI_Bsend / PMPI_Bsend,
    MPI_Bsend_c / PMPI_Bsend_c,
    MPI_Ibsend / PMPI_Ibsend,
    MPI_Ibsend_c / PMPI_Ibsend_c
);
sends!(
    Mode::Synchronous,
    MPI_Ssend / PMPI_Ssend,
    MPI_Ssend_c / PMPI_Ssend_c,
    MPI_Issend / PMPI_Issend,
    MPI_Issend_c / PMPI_Issend_c
);
sends!(
    Mode::Ready,
    MPI_Rsend / PMPI_Rsend,
    MPI_Rsend_c / PMPI_Rsend_c,
    MPI_Irsend / PMPI_Irsend,
    MPI_Irsend_c / PMPI_Irsend_c
);

/// # Safety
/// `buf` valid for the items; `status` MPI_STATUS_IGNORE or valid.
unsafe fn recv_blocking(
    buf: *mut c_void,
    count: i64,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    status: *mut CStatus,
) -> MpiResult<()> {
    let s = with_state(|st| {
        let t = recv_template(st, buf, count, dt, source, tag, comm)?;
        // SAFETY: the buffer is valid for the call.
        unsafe { recv_now(st, t) }
    })?;
    // SAFETY: per the caller's contract.
    unsafe { finish_one(status, &s) }
}

/// # Safety
/// `buf` valid until the request completes.
unsafe fn recv_nonblocking(
    buf: *mut c_void,
    count: i64,
    dt: c_int,
    source: c_int,
    tag: c_int,
    comm: c_int,
    request: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: forwarded from the caller.
    unsafe {
        nonblocking(request, |st| {
            let t = recv_template(st, buf, count, dt, source, tag, comm)?;
            start(st, t)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Recv / PMPI_Recv(buf: *mut c_void, count: c_int, datatype: c_int, source: c_int, tag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { recv_blocking(buf, count as i64, datatype, source, tag, comm, status) }
    }
}

mpi_fn! {
    Initialized fn MPI_Recv_c / PMPI_Recv_c(buf: *mut c_void, count: i64, datatype: c_int, source: c_int, tag: c_int, comm: c_int, status: *mut CStatus) errors(Some(comm)) {
        // SAFETY: valid per the standard.
        unsafe { recv_blocking(buf, count, datatype, source, tag, comm, status) }
    }
}

mpi_fn! {
    Initialized fn MPI_Irecv / PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: c_int, source: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        // SAFETY: valid until completion per the standard.
        unsafe { recv_nonblocking(buf, count as i64, datatype, source, tag, comm, request) }
    }
}

mpi_fn! {
    Initialized fn MPI_Irecv_c / PMPI_Irecv_c(buf: *mut c_void, count: i64, datatype: c_int, source: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        // SAFETY: valid until completion per the standard.
        unsafe { recv_nonblocking(buf, count, datatype, source, tag, comm, request) }
    }
}

/// Persistent send requests of one mode, int and _c counts.
macro_rules! send_inits {
    ($mode:expr, $f:ident / $pf:ident, $fc:ident / $pfc:ident) => {
        mpi_fn! {
            Initialized fn $f / $pf(buf: *const c_void, count: c_int, datatype: c_int, dest: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
                persistent(request, |st| send_args(st, buf, count as i64, datatype, dest, tag, comm, $mode).map(Template::from))
            }
        }
        mpi_fn! {
            Initialized fn $fc / $pfc(buf: *const c_void, count: i64, datatype: c_int, dest: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
                persistent(request, |st| send_args(st, buf, count, datatype, dest, tag, comm, $mode).map(Template::from))
            }
        }
    };
}

fn persistent(request: *mut c_int, template: impl FnOnce(&State) -> MpiResult<Template>) -> MpiResult<()> {
    if request.is_null() {
        return err!(Arg, "request is a null pointer");
    }
    let id = with_state(|st| {
        let t = template(st)?;
        Ok(st.engine.persistent(t))
    })?;
    // SAFETY: checked non-null.
    unsafe { out(request, "request", request_handle(id)) }
}

send_inits!(Mode::Standard, MPI_Send_init / PMPI_Send_init, MPI_Send_init_c / PMPI_Send_init_c);
send_inits!(Mode::Buffered, MPI_Bsend_init / PMPI_Bsend_init, MPI_Bsend_init_c / PMPI_Bsend_init_c);
send_inits!(Mode::Synchronous, MPI_Ssend_init / PMPI_Ssend_init, MPI_Ssend_init_c / PMPI_Ssend_init_c);
send_inits!(Mode::Ready, MPI_Rsend_init / PMPI_Rsend_init, MPI_Rsend_init_c / PMPI_Rsend_init_c);

mpi_fn! {
    Initialized fn MPI_Recv_init / PMPI_Recv_init(buf: *mut c_void, count: c_int, datatype: c_int, source: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        persistent(request, |st| recv_template(st, buf, count as i64, datatype, source, tag, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Recv_init_c / PMPI_Recv_init_c(buf: *mut c_void, count: i64, datatype: c_int, source: c_int, tag: c_int, comm: c_int, request: *mut c_int) errors(Some(comm)) {
        persistent(request, |st| recv_template(st, buf, count, datatype, source, tag, comm))
    }
}

fn attach(buffer: *mut c_void, size: i64) -> MpiResult<()> {
    if size < 0 {
        return err!(Arg, "buffer size {size} is negative");
    }
    if buffer.is_null() && size > 0 {
        return err!(Buffer, "buffer is a null pointer");
    }
    with_state(|st| st.engine.buffer_attach(buffer as usize, size as usize))
}

mpi_fn! {
    Initialized fn MPI_Buffer_attach / PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) errors(None) {
        attach(buffer, size as i64)
    }
}

mpi_fn! {
    Initialized fn MPI_Buffer_attach_c / PMPI_Buffer_attach_c(buffer: *mut c_void, size: i64) errors(None) {
        attach(buffer, size)
    }
}

mpi_fn! {
    Initialized fn MPI_Buffer_detach / PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) errors(None) {
        let (base, n) = with_state(|st| st.engine.buffer_detach())?;
        // SAFETY: for C callers buffer_addr is a `void **` (checked below).
        unsafe {
            out(buffer_addr as *mut usize, "buffer_addr", base)?;
            out(size, "size", n.min(i32::MAX as usize) as c_int)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Buffer_detach_c / PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut i64) errors(None) {
        let (base, n) = with_state(|st| st.engine.buffer_detach())?;
        // SAFETY: for C callers buffer_addr is a `void **` (checked below).
        unsafe {
            out(buffer_addr as *mut usize, "buffer_addr", base)?;
            out(size, "size", n as i64)
        }
    }
}
