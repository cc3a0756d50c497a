//! Point-to-point: requests, matching and the protocols of `protocol`
//! (DESIGN.md §3-4) over the shared-memory rings and TCP connections (`wire`).

pub mod arrival;
mod bsend;
pub mod mailbox;
pub mod matching;
mod ops;
mod progress;
pub mod protocol;
pub mod request;
pub mod schedule;
mod waits;
mod wire;

use crate::datatype::{pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use crate::runtime::backoff::{self, Backoff};
use crate::transport::shm::{Boxes, Segment};
use crate::transport::tcp::Tcp;
use crate::transport::{FrameHeader, FrameKind};
pub use bsend::BSEND_OVERHEAD;
use matching::{Body, Envelope, Queues, Want};
use protocol::{Mode, Protocol};
use request::{RecvArgs, RecvReq, RecvState, ReqId, Request, SendReq, SendState, Slab, Status};
use std::collections::VecDeque;
pub use wire::Route;

/// The request of every send that completed at once (standard and
/// buffered eager sends): one shared id, never stored or freed, so the
/// commonest send costs no request bookkeeping.
pub const SENT: ReqId = 0x03ff_ffff;

pub const PROC_NULL: i32 = -1;
pub const ANY_SOURCE: i32 = -2;
pub const ANY_TAG: i32 = -1;

/// A frame waiting for room in its ring, with its payload copied.
struct Outgoing {
    header: FrameHeader,
    payload: Vec<u8>,
    /// The send request done once this frame goes out (`SendState::Queued`).
    done: Option<ReqId>,
}

pub struct Engine {
    pub rank: usize,
    pub size: usize,
    /// This host's shared segment (the ranks of `route` marked Shm).
    seg: Segment,
    /// Per world rank: how frames reach it.
    route: Vec<Route>,
    /// The sockets to ranks on other hosts (None: all ranks on this one).
    tcp: Option<Tcp>,
    /// Per world rank: its process id (for cross-memory copies; 0 off-host).
    pids: Vec<i32>,
    pub single_copy: bool,
    /// OXMPI_CHECK_TYPES: send type signatures and check them on receipt.
    pub check_types: bool,
    /// A cross-memory read has worked once: the kernel lets us, so long
    /// messages may be split between receiver and sender.
    single_copy_works: bool,
    /// Shorter contiguous messages take the pipelined push even when a
    /// cross-memory read would work: two overlapping memcpys beat the
    /// kernel's copy (which pins pages and costs microseconds to set up)
    /// up to a few hundred KiB.
    single_copy_min: usize,
    /// Sends of this rank's that offered a long message (an RTS) and are
    /// not done: waiting for their receiver, or pushing (`match_rts`).
    long_sends: usize,
    pub eager_limit: usize,
    /// The eager limit towards ranks reached over TCP.
    tcp_eager_limit: usize,
    unexpected_budget: usize,
    /// The source a probe under way looks for (Some(None): any): over the
    /// budget, its messages are still taken (`progress::drain`), since a
    /// probe sees only the unexpected queue.
    probing: Option<Option<usize>>,
    queues: Queues,
    requests: Slab,
    /// Per destination: frames that found the ring full, oldest first.
    outbox: Vec<VecDeque<Outgoing>>,
    /// Frames in all outboxes (0 on the fast path: nothing to flush).
    outbox_frames: usize,
    /// Frames that waited for room and went out since init: outbox frames
    /// and pieces of pushed messages (`idle_unless`).
    moved: u64,
    /// Sends whose data we push (their receiver answered Cts).
    pushing: Vec<ReqId>,
    /// Requests freed by the user while still active: removed when done.
    orphans: Vec<ReqId>,
    /// Live schedules, advanced by `progress`.
    schedules: Vec<ReqId>,
    bsend: bsend::Attached,
    /// This rank's bookkeeping of its short and long mailboxes (see
    /// `mailbox`).
    mailboxes: [mailbox::Tally; 2],
    /// Collectives of the whole world this rank has posted on its
    /// arrival lines (`arrival`).
    arrivals: u64,
    /// When a waiting rank last checked that its peers on this host live.
    last_roll_call: std::cell::Cell<std::time::Instant>,
    /// Early data (`FrameKind::Early`) by (source, sender request): where it
    /// goes once the RTS matched a receive, or what came before that.
    early_to: std::collections::HashMap<(usize, u64), ReqId>,
    early_stash: std::collections::HashMap<(usize, u64), Vec<u8>>,
    /// What a blocking receive taking its message straight from the ring
    /// (`recv`) waits for: it is in no queue, so the hang dump names it.
    receiving: Option<Want>,
}

pub struct Config {
    pub check_types: bool,
    pub eager_limit: usize,
    pub tcp_eager_limit: usize,
    pub unexpected_budget: usize,
    pub single_copy: bool,
    /// Contiguous local messages from this size on are single-copied.
    pub single_copy_min: usize,
}

/// What a send needs to know about its message.
pub struct SendArgs {
    pub buf: *const u8,
    pub count: usize,
    pub ty: TypeRef,
    /// World rank, or None for MPI_PROC_NULL.
    pub dst: Option<usize>,
    pub tag: i32,
    pub ctx: u32,
    pub mode: Mode,
    /// Opaque label of the datatype, for type-mismatch reports.
    pub label: u32,
    /// The signature to announce, when the data travels re-typed (a
    /// buffered send's packed copy); None: the signature of `ty` x `count`.
    pub sig: Option<u32>,
}

impl Engine {
    pub fn new(rank: usize, seg: Segment, route: Vec<Route>, tcp: Option<Tcp>, pids: Vec<i32>, cfg: Config) -> Engine {
        let eager_limit = cfg.eager_limit.min(seg.payload());
        let size = route.len();
        Engine {
            rank,
            size,
            seg,
            route,
            tcp,
            pids,
            single_copy: cfg.single_copy,
            check_types: cfg.check_types,
            single_copy_works: false,
            single_copy_min: cfg.single_copy_min,
            long_sends: 0,
            eager_limit,
            tcp_eager_limit: cfg.tcp_eager_limit,
            unexpected_budget: cfg.unexpected_budget,
            probing: None,
            queues: Queues::default(),
            requests: Slab::default(),
            outbox: (0..size).map(|_| VecDeque::new()).collect(),
            outbox_frames: 0,
            moved: 0,
            pushing: Vec::new(),
            orphans: Vec::new(),
            schedules: Vec::new(),
            bsend: bsend::Attached::default(),
            mailboxes: [Boxes::Short, Boxes::Long].map(|kind| mailbox::Tally::new(kind, size)),
            arrivals: 0,
            last_roll_call: std::cell::Cell::new(std::time::Instant::now()),
            early_to: Default::default(),
            early_stash: Default::default(),
            receiving: None,
        }
    }

    /// Start a send.
    ///
    /// # Safety
    /// `a.buf` must stay readable over the items until the request
    /// completes (for buffered mode: until this call returns).
    pub unsafe fn isend(&mut self, a: SendArgs) -> MpiResult<ReqId> {
        // SAFETY: forwarded from the caller.
        unsafe { self.isend_as(a, false) }
    }

    /// `isend`; `helps`: the caller waits for this send alone.
    ///
    /// # Safety
    /// As `isend`.
    pub(super) unsafe fn isend_as(&mut self, a: SendArgs, helps: bool) -> MpiResult<ReqId> {
        let Some(dst) = a.dst else {
            return Ok(self.requests.insert(Request::Done(Status {
                source: PROC_NULL,
                tag: ANY_TAG,
                ..Default::default()
            })));
        };
        let Some(len) = a.ty.bytes(a.count) else {
            return err!(Count, "count {} of {} overflows the address space", a.count, a.ty.name);
        };
        if a.mode == Mode::Buffered {
            // SAFETY: forwarded from the caller.
            return unsafe { self.bsend_start(a, dst, len) };
        }
        let proto = protocol::choose(len, a.mode, self.eager_limit_for(&a.ty, dst));
        let mut header = FrameHeader {
            ctx: a.ctx,
            src: self.rank as u32,
            tag: a.tag,
            len: len as u64,
            flags: protocol::flags(a.mode),
            ..Default::default()
        };
        if self.check_types && !crate::datatype::signature::is_packed(&a.ty) {
            // Off by default: then this branch is the whole cost.
            header.flags |= protocol::FLAG_SIG;
            header.sig = a.sig.unwrap_or_else(|| crate::datatype::signature::of_message(&a.ty, a.count) as u32);
            header.label = a.label;
        }
        if proto != Protocol::Rta {
            header.kind = FrameKind::Eager as u32;
            header.frag_len = len as u32;
            let id = if proto == Protocol::TA {
                let id =
                    self.requests.insert(Request::Send(self.send_req(&a, dst, len, None, 0, SendState::AwaitingAck)));
                header.a = id as u64;
                Some(id)
            } else {
                None
            };
            // SAFETY: the caller guarantees `buf` readable over the items.
            let queued = unsafe { self.send_eager(dst, header, &a.ty, a.count, a.buf) };
            if queued && id.is_none() {
                // Done once it goes out: a sender that keeps sending waits
                // for its receiver rather than queue without end (on a
                // host with more ranks than cores its running ahead would
                // keep the core from the receiver).
                let id = self.requests.insert(Request::Send(self.send_req(&a, dst, len, None, 0, SendState::Queued)));
                if let Some(o) = self.outbox[dst].back_mut() {
                    o.done = Some(id);
                }
                return Ok(id);
            }
            return Ok(id.unwrap_or(SENT));
        }
        // Rendezvous. A contiguous message offers its address: the receiver
        // may read it (RTA). A non-contiguous one offers address 0: the
        // receiver asks us to push (RAT), and we pack piece by piece
        // straight into the slots, no staging copy.
        let layout = (!a.ty.is_contiguous()).then(|| a.ty.clone());
        let addr = a.buf as usize;
        let offered = if layout.is_some() { 0 } else { addr };
        let id =
            self.requests.insert(Request::Send(self.send_req(&a, dst, len, layout, addr, SendState::AwaitingReceiver)));
        self.long_sends += 1;
        if self.is_local(dst) {
            // (its receiver splits the copy only with a sender elsewhere)
            self.seg.note_core();
        }
        header.kind = FrameKind::Rts as u32;
        if helps {
            header.flags |= protocol::FLAG_HELPS;
        }
        header.a = id as u64;
        header.b = offered as u64;
        self.send_control(dst, header);
        if !self.is_local(dst) && offered != 0 && pack::gapless(&a.ty) == Some(0) && self.outbox[dst].is_empty() {
            // Over the network the first part follows the RTS at once, so
            // the data flows while the receiver's answer is on its way.
            let early = len.min(self.tcp_eager_limit);
            let h = FrameHeader {
                kind: FrameKind::Early as u32,
                src: self.rank as u32,
                a: id as u64,
                frag_len: early as u32,
                ..Default::default()
            };
            // SAFETY: the items are `len` gapless bytes at `addr` (checked),
            // readable until the send completes, which waits until nothing
            // it lent is queued.
            let data = unsafe { std::slice::from_raw_parts(addr as *const u8, early) };
            if self.try_push_bytes(dst, &h, data, true) {
                if let Some(Request::Send(s)) = self.requests.get_mut(id) {
                    s.early = early;
                }
            }
        }
        Ok(id)
    }

    /// Non-contiguous messages above a few KiB go rendezvous: their data is
    /// then packed and unpacked in pieces that overlap on the two sides.
    /// Over TCP the handshake costs a round trip of the network, so
    /// messages up to `tcp_eager_limit` go whole.
    fn eager_limit_for(&self, ty: &TypeInfo, dst: usize) -> usize {
        if !self.is_local(dst) {
            self.tcp_eager_limit
        } else if ty.is_contiguous() {
            self.eager_limit
        } else {
            self.eager_limit.min(NONCONTIG_EAGER)
        }
    }

    fn send_req(
        &self,
        a: &SendArgs,
        dst: usize,
        len: usize,
        layout: Option<TypeRef>,
        addr: usize,
        state: SendState,
    ) -> SendReq {
        SendReq {
            dst,
            tag: a.tag,
            ctx: a.ctx,
            mode: a.mode,
            layout,
            addr,
            len,
            state,
            cancel_pending: false,
            status: null_status(),
            bsend_block: None,
            early: 0,
        }
    }

    /// Put an eager frame in the ring, or in the outbox if the ring is full
    /// or older frames wait there (order must be kept): then, at its back,
    /// and true.
    ///
    /// # Safety
    /// `buf` must be readable over `count` items of `ty`.
    unsafe fn send_eager(
        &mut self,
        dst: usize,
        header: FrameHeader,
        ty: &TypeInfo,
        count: usize,
        buf: *const u8,
    ) -> bool {
        let len = header.frag_len as usize;
        // SAFETY: the caller guarantees `buf` readable over the items.
        let fill = |slot: &mut [u8]| unsafe { pack::pack(ty, count, buf, slot) };
        if self.outbox[dst].is_empty() {
            let sent = match pack::gapless(ty) {
                // one run of bytes (over TCP written from there)
                // SAFETY: the items are `len` gapless bytes there (caller).
                Some(offset) => self.try_push_bytes(
                    dst,
                    &header,
                    unsafe { std::slice::from_raw_parts(buf.offset(offset), len) },
                    false,
                ),
                None => self.try_push(dst, &header, len, fill),
            };
            if sent {
                return false;
            }
        }
        let mut payload = vec![0u8; len];
        // SAFETY: as above.
        unsafe { pack::pack(ty, count, buf, &mut payload) };
        self.outbox[dst].push_back(Outgoing { header, payload, done: None });
        self.outbox_frames += 1;
        true
    }

    /// Post a receive (MPI_PROC_NULL is the caller's concern).
    ///
    /// # Safety
    /// `a.buf` must stay writable over the items until the request
    /// completes.
    pub unsafe fn irecv(&mut self, a: RecvArgs) -> ReqId {
        let want = a.want();
        let id = self.requests.insert(Request::Recv(a.into_request()));
        match self.queues.take_unexpected(&want) {
            Some(u) => self.deliver(id, u),
            None => self.queues.post(want, id),
        }
        id
    }

    /// A blocking receive. While no receive posted before could take it
    /// and no unexpected message matches, an eager message from a peer on
    /// this host goes from its slot straight into the buffer: no request,
    /// no queue. Anything else at the head of the sender's ring (a long
    /// message, a synchronous one, another tag, a control frame) sends the
    /// receive the general way, `irecv` + `wait`.
    ///
    /// # Safety
    /// `a.buf` must be writable over the items.
    pub unsafe fn recv(&mut self, a: RecvArgs) -> Status {
        if let Some((s, Route::Shm(l))) = a.src.map(|s| (s, self.route[s])) {
            let want = a.want();
            // Only taking frames from `s` could queue a message for us as
            // unexpected, and the loop leaves them in its ring: one look.
            if self.queues.peek_unexpected(&want).is_none() {
                let mut backoff = Backoff::new();
                self.receiving = Some(want);
                loop {
                    let ring = self.seg.ring(l, self.seg.me);
                    if let Some((h, data)) = ring.peek() {
                        let env = Envelope { ctx: h.ctx, src: h.src as usize, tag: h.tag, check: None };
                        if h.kind != FrameKind::Eager as u32 || h.flags != 0 || !want.matches(&env) {
                            break;
                        }
                        if self.queues.is_posted(&env) {
                            break;
                        }
                        let mut r = a.into_request();
                        land_eager(&mut r, &env, data);
                        ring.pop();
                        self.seg.took_frames(l);
                        self.receiving = None;
                        return r.status;
                    }
                    // the sender's frames wait in its ring for the next look
                    self.progress_but(s);
                    self.idle(&mut backoff);
                }
                self.receiving = None;
            }
        }
        // SAFETY: per the caller's contract; we wait for the request.
        let id = unsafe { self.irecv(a) };
        self.wait(id)
    }

    /// Hand a matched unexpected message to receive request `id`.
    fn deliver(&mut self, id: ReqId, u: matching::Unexpected) {
        match u.body {
            Body::Eager { data, ack } => {
                self.deliver_eager(id, &u.env, &data);
                if let Some(sreq) = ack {
                    self.reply(u.env.src, FrameKind::Ack, sreq, 0);
                }
            }
            Body::Rts { len, sreq, addr, helps } => self.match_rts(id, &u.env, len, sreq, addr, helps),
        }
    }

    /// A request that is complete from the start (MPI_PROC_NULL receive).
    pub fn null_request(&mut self, status: Status) -> ReqId {
        self.requests.insert(Request::Done(status))
    }

    pub fn is_request(&self, id: ReqId) -> bool {
        id == SENT || self.requests.get(id).is_some()
    }

    /// If `id` is complete: its status, and the request freed (a
    /// persistent request is made inactive instead). Inactive persistent
    /// requests report an empty status at once.
    pub fn test(&mut self, id: ReqId) -> Option<Status> {
        if !self.peek_done(id) {
            self.progress();
            if !self.peek_done(id) {
                return None;
            }
        }
        Some(self.take_done(id))
    }

    /// Whether `id` would complete now (no progress, nothing freed).
    pub fn peek_done(&self, id: ReqId) -> bool {
        match self.requests.get(id) {
            None => true,
            Some(Request::Persistent(p)) => p.active.is_none_or(|a| self.requests.get(a).is_none_or(|r| r.is_done())),
            Some(Request::Pair(p)) => self.peek_done(p.recv) && self.peek_done(p.send),
            Some(r) => r.is_done(),
        }
    }

    /// The status of a request known to be done, without freeing it.
    pub fn done_status(&self, id: ReqId) -> Status {
        match self.requests.get(id) {
            Some(Request::Persistent(p)) => {
                p.active.and_then(|a| self.requests.get(a)).map_or(empty_status(), |r| r.status())
            }
            Some(Request::Pair(p)) => pair_status(self.done_status(p.recv), self.done_status(p.send)),
            Some(r) => r.status(),
            None => empty_status(),
        }
    }

    /// MPI_Isendrecv: one request for receive `recv` and send `send`,
    /// started already (`hold`: storage the send reads, kept until done).
    pub fn pair(&mut self, recv: ReqId, send: ReqId, hold: Option<Vec<u8>>) -> ReqId {
        self.requests.insert(Request::Pair(request::Pair { recv, send, hold }))
    }

    pub fn is_pair(&self, id: ReqId) -> bool {
        matches!(self.requests.get(id), Some(Request::Pair(_)))
    }

    /// MPI_Grequest_start: a generalized request, not complete.
    pub fn general(&mut self, g: request::General) -> ReqId {
        self.requests.insert(Request::General(g))
    }

    /// MPI_Grequest_complete: `id` is done; freed already, its free
    /// function runs now (what it returned, or zeros).
    pub fn complete_general(&mut self, id: ReqId) -> MpiResult<(i32, u32)> {
        let Some(Request::General(g)) = self.requests.get_mut(id) else {
            return err!(Request, "the request is not a generalized request (MPI_Grequest_start)");
        };
        if g.complete {
            return err!(Request, "MPI_Grequest_complete was called for this request already");
        }
        g.complete = true;
        Ok(self.free_general_if_done(id))
    }

    /// Generalized request `id` once both freed and complete: removed, its
    /// free function run (what it returned); else zeros.
    fn free_general_if_done(&mut self, id: ReqId) -> (i32, u32) {
        match self.requests.get(id) {
            Some(Request::General(g)) if g.freed && g.complete => {
                let free = g.free.clone();
                self.requests.discard(id);
                free()
            }
            _ => (0, 0),
        }
    }

    /// Whether `id` is a generalized request not yet complete.
    pub fn is_pending_general(&self, id: ReqId) -> bool {
        matches!(self.requests.get(id), Some(Request::General(g)) if !g.complete)
    }

    /// The cancel function of generalized request `id` and whether it is
    /// complete, for MPI_Cancel to call (outside the library's lock: it
    /// may complete the request); None for other requests.
    pub fn general_cancel(&self, id: ReqId) -> Option<(request::CancelFn, bool)> {
        match self.requests.get(id) {
            Some(Request::General(g)) => Some((g.cancel.clone(), g.complete)),
            _ => None,
        }
    }

    fn take_done(&mut self, id: ReqId) -> Status {
        if let Some(Request::Persistent(p)) = self.requests.get_mut(id) {
            return match p.active.take() {
                Some(a) => self.finish(a),
                None => empty_status(),
            };
        }
        self.finish(id)
    }

    /// Free a completed request and return its status.
    fn finish(&mut self, id: ReqId) -> Status {
        if id == SENT {
            return null_status();
        }
        // read in place and dropped there: a request is too big to move
        let (status, block) = match self.requests.get(id) {
            Some(Request::Send(s)) => (s.status, s.bsend_block),
            Some(&Request::Pair(request::Pair { recv, send, .. })) => {
                let status = pair_status(self.finish(recv), self.finish(send));
                self.requests.discard(id);
                return status;
            }
            Some(Request::General(g)) => {
                // the query function, then the free function, whose error
                // is the call's (MPI 4.0 §13.2: "the last callback"), or
                // else the query function's
                let mut status = (g.query)();
                let (code, failure) = (g.free)();
                if code != 0 {
                    (status.error, status.failure) = (code, failure);
                }
                self.requests.discard(id);
                return status;
            }
            Some(r) => (r.status(), None),
            None => return empty_status(),
        };
        self.requests.discard(id);
        if let Some(block) = block {
            self.bsend.release(block);
        }
        status
    }

    /// Block until `id` completes; free it and return its status.
    pub fn wait(&mut self, id: ReqId) -> Status {
        if id == SENT {
            return null_status();
        }
        let mut backoff = Backoff::new();
        loop {
            if let Some(s) = self.test(id) {
                return s;
            }
            self.idle(&mut backoff);
        }
    }

    /// Block until every request of `ids` completes.
    pub fn wait_all(&mut self, ids: &[ReqId], statuses: &mut [Status]) {
        let mut backoff = Backoff::new();
        let mut left: Vec<usize> = (0..ids.len()).collect();
        while !left.is_empty() {
            self.progress();
            let before = left.len();
            left.retain(|&k| {
                if self.peek_done(ids[k]) {
                    statuses[k] = self.take_done(ids[k]);
                    false
                } else {
                    true
                }
            });
            if left.len() < before {
                backoff = Backoff::new();
            } else {
                self.idle(&mut backoff);
            }
        }
    }

    /// Block until one of `ids` completes: its index and status.
    pub fn wait_any(&mut self, ids: &[ReqId]) -> (usize, Status) {
        let mut backoff = Backoff::new();
        loop {
            self.progress();
            if let Some(k) = ids.iter().position(|&id| self.peek_done(id)) {
                return (k, self.take_done(ids[k]));
            }
            self.idle(&mut backoff);
        }
    }

    /// Complete every request of `ids` that is done now.
    pub fn test_some(&mut self, ids: &[ReqId]) -> Vec<(usize, Status)> {
        self.progress();
        let done: Vec<usize> = (0..ids.len()).filter(|&k| self.peek_done(ids[k])).collect();
        done.into_iter().map(|k| (k, self.take_done(ids[k]))).collect()
    }

    /// Block until at least one of `ids` completes; complete all that are.
    pub fn wait_some(&mut self, ids: &[ReqId]) -> Vec<(usize, Status)> {
        let mut backoff = Backoff::new();
        loop {
            let got = self.test_some(ids);
            if !got.is_empty() {
                return got;
            }
            self.idle(&mut backoff);
        }
    }

    /// On SIGUSR2: print what this rank waits for.
    fn dump_if_requested(&self, waiting_for: impl FnOnce() -> Option<String>) {
        if crate::runtime::dump_requested() {
            if let Some(w) = waiting_for() {
                crate::runtime::report(&format!("oxmpi: rank {}: waiting for {w}\n", self.rank));
            }
            for line in self.describe_queues() {
                crate::runtime::report(&format!("oxmpi: rank {}: {line}\n", self.rank));
            }
            crate::runtime::report(&format!("oxmpi: rank {}: end of queues\n", self.rank));
        }
    }

    #[inline]
    fn idle(&mut self, backoff: &mut Backoff) {
        self.idle_unless(backoff, || None, |_| false, None);
    }

    /// A poll found nothing to do: spin, yield or sleep as `backoff` says,
    /// not sleeping once `done` holds; `waiting_for` names the wait for the
    /// SIGUSR2 dump.
    #[inline]
    fn idle_unless(
        &mut self,
        backoff: &mut Backoff,
        waiting_for: impl FnOnce() -> Option<String>,
        done: impl Fn(&Segment) -> bool,
        parked: Option<(usize, u64)>,
    ) {
        self.dump_if_requested(waiting_for);
        backoff.restart_if_moved(self.moved);
        let seg = &self.seg;
        backoff.idle(
            |now| seg.awake(now),
            |timeout| self.sleep(timeout, || done(seg)),
            |now, dozing| {
                if dozing {
                    seg.doze();
                }
                seg.spread(now);
            },
            |now| parked.map(|(writer, op)| seg.core_spare(writer, op, now)),
        );
    }

    /// One line per pending request and unexpected message (hang diagnosis).
    pub fn describe_queues(&self) -> Vec<String> {
        let mut out = Vec::new();
        let direct = self.receiving.iter().map(|w| (w, "(blocking)".to_string()));
        for (w, id) in direct.chain(self.queues.posted().map(|(w, id)| (w, format!("#{id}")))) {
            let src = w.src.map_or("any".to_string(), |s| s.to_string());
            let tag = w.tag.map_or("any".to_string(), |t| t.to_string());
            out.push(format!("pending receive {id}: from world rank {src}, tag {tag}, context {}", w.ctx));
        }
        for (id, r) in self.requests.live() {
            match r {
                Request::Send(s) => {
                    let state = match s.state {
                        SendState::Queued => "eager, waiting for room in the receiver's ring",
                        SendState::AwaitingAck => "eager, waiting for the match (ack)",
                        SendState::AwaitingReceiver => "rendezvous, waiting for the receiver to match",
                        SendState::Pushing { .. } => "rendezvous, pushing data",
                        SendState::Done => "done",
                    };
                    out.push(format!(
                        "pending send #{id}: to world rank {}, tag {}, context {}, {} bytes, {:?} mode, {state}",
                        s.dst, s.tag, s.ctx, s.len, s.mode
                    ));
                }
                Request::Recv(r) => {
                    if let RecvState::Receiving { got, len } = r.state {
                        out.push(format!("receive #{id}: context {}, {got} of {len} bytes pushed so far", r.ctx));
                    }
                }
                _ => {}
            }
        }
        for u in self.queues.unexpected() {
            let what = match &u.body {
                Body::Eager { data, .. } => format!("{} bytes eager", data.len()),
                Body::Rts { len, .. } => format!("{len} bytes waiting at the sender"),
            };
            out.push(format!(
                "unexpected message: from world rank {}, tag {}, context {}: {what}",
                u.env.src, u.env.tag, u.env.ctx
            ));
        }
        if out.is_empty() {
            out.push("no pending requests, no unexpected messages".into());
        }
        out
    }

    /// Send a frame without payload, queueing it if the ring is full.
    fn send_control(&mut self, dst: usize, header: FrameHeader) {
        if !(self.outbox[dst].is_empty() && self.try_push(dst, &header, 0, |_| {})) {
            self.outbox[dst].push_back(Outgoing { header, payload: Vec::new(), done: None });
            self.outbox_frames += 1;
        }
    }

    /// A control frame about sender request `sreq` (Ack, Nack, Fin, ...).
    fn reply(&mut self, dst: usize, kind: FrameKind, sreq: u64, result: u64) {
        let h = FrameHeader { kind: kind as u32, src: self.rank as u32, a: sreq, b: result, ..Default::default() };
        self.send_control(dst, h);
    }

    fn deliver_eager(&mut self, id: ReqId, env: &Envelope, data: &[u8]) {
        if let Some(Request::Recv(r)) = self.requests.get_mut(id) {
            land_eager(r, env, data);
        }
    }

    /// A receive matched a long message at the sender (`sreq`, `len`
    /// bytes at `addr` there, 0: none offered): read it, or ask for it.
    /// With `helps` (the sender waits for this send alone) a long enough
    /// contiguous one is copied by both at once, the sender writing its
    /// second half; so is one that would otherwise be pipelined (below
    /// `single_copy_min`), since a pipeline needs the sender as much (an
    /// Isend then Wait, 2 ranks, 64 KiB: 4.67 us split against 8.58
    /// pipelined, Open MPI 6.99). From `single_copy_min` on, a sender not
    /// helping may be busy (copying a message of its own, as both sides
    /// of an exchange are, or computing after an Isend) and the receiver
    /// reads it all. Measured, 2 ranks,
    /// Sendrecv of 1 MiB, best of 60: 94.4-95.0 us split against
    /// 90.6-91.2 read whole (Open MPI 93-101); with another process
    /// holding one of the two cores, 230-240 against 102-111, each rank's
    /// half waiting for the other's copy. A receiver whose sender went on
    /// computing after an Isend waited for its next MPI call.
    ///
    /// A receiver with a long send of its own under way (both sides of
    /// an exchange) reads from a quarter of `single_copy_min` on:
    /// pipelined, each core would copy twice, its own message in and the
    /// other's out, while the pipeline's gain one way is the two cores
    /// copying at once. Measured, 2 ranks, Sendrecv, best of 8
    /// alternations, read against pipelined (Open MPI): 16 KiB 2.63
    /// against 2.62 us (3.47), 32 KiB 4.50 against 5.62 (4.70), 48 KiB
    /// 5.60 against 7.95 (5.80), 64 KiB 6.76 against 10.18 (6.99), 96 KiB
    /// 8.86 against 15.03 (9.05).
    fn match_rts(&mut self, id: ReqId, env: &Envelope, len: usize, sreq: u64, addr: u64, helps: bool) {
        let pid = self.pids[env.src];
        let single_copy = self.single_copy && self.is_local(env.src);
        let from = if len < self.single_copy_min && len >= self.single_copy_min / 4 && self.long_sends > 0 {
            self.single_copy_min / 4
        } else {
            self.single_copy_min
        };
        let split_ok = self.single_copy_works;
        let me = self.rank as u32;
        // where the sender would have to wait for a core to copy its half:
        // more ranks want one than the host has (not counting those parked
        // in a short collective, which give theirs up), or it last ran on
        // ours
        // (looked at only for a message that may split)
        let (crowd, together) = if single_copy && len >= SPLIT_MIN && (helps || len < from) {
            let src = self.local_index(env.src);
            (backoff::outnumbered(|| self.seg.busy(backoff::now_ns())), self.seg.shares_core(src))
        } else {
            (false, false)
        };
        let Some(Request::Recv(r)) = self.requests.get_mut(id) else {
            return;
        };
        let n = len.min(r.capacity());
        r.status.source = r.group.rank_of(env.src).map_or(-1, |x| x as i32);
        r.status.tag = env.tag;
        verify_signature(r, env, len);
        // From SPLIT_MIN on, a helping sender's message, and one that the
        // pipeline would take, are split (the first one read whole, which
        // shows that cross-memory copies work here); but read whole while
        // more ranks want a core than the host has (the reader then needs
        // nothing more of the sender), and below `from` pipelined when
        // both run on one core (copies through its caches beat the
        // kernel's). See SPLIT_MIN.
        let eligible = (helps || len < from) && n == len && len >= SPLIT_MIN && r.ty.is_contiguous();
        let readable = single_copy && addr != 0 && pack::coarse(&r.ty) && (len >= from || eligible && !together);
        let splits = eligible && !crowd && !together;
        if readable && splits && split_ok {
            // Both copy at once: the sender writes the second half while
            // we read the first.
            let split = (len / 2).next_multiple_of(4096).min(len);
            let put = FrameHeader {
                kind: FrameKind::Put as u32,
                src: me,
                ctx: id,
                len: split as u64,
                a: sreq,
                b: r.buf as u64,
                ..Default::default()
            };
            let buf = r.buf;
            let ty = r.ty.clone();
            self.send_control(env.src, put);
            // SAFETY: the receive buffer is writable over `len` bytes.
            let read_first = unsafe { crate::transport::shm::read_remote_into(pid, addr, split, &ty, buf as *mut u8) };
            if let Some(Request::Recv(r)) = self.requests.get_mut(id) {
                // a failed read is tried again with the sender's answer
                r.state = RecvState::Split { split, len, sreq, addr, read_first };
            }
            return;
        }
        // SAFETY: the receive buffer is writable over the items n bytes
        // cover (irecv's contract).
        if readable && unsafe { crate::transport::shm::read_remote_into(pid, addr, n, &r.ty, r.buf as *mut u8) } {
            finish_recv(r, env, len);
            self.single_copy_works = true;
            self.reply(env.src, FrameKind::Fin, sreq, 0);
            return;
        }
        if readable {
            // Refused (ptrace policy, a container): push from now on.
            self.single_copy = false;
        }
        // RAT: the sender pushes through the ring; pieces are unpacked
        // straight into place as they arrive.
        r.state = RecvState::Receiving { got: 0, len };
        if let (Some(t), Some(offset)) = (self.tcp.as_mut(), pack::gapless(&r.ty)) {
            if self.route[env.src] == Route::Tcp {
                // SAFETY: the receive buffer stays writable over its
                // capacity until the receive completes (irecv's contract),
                // when accept_data forgets it.
                unsafe { t.expect(env.src, id as u64, (r.buf as isize + offset) as *mut u8, r.capacity()) };
            }
        }
        let cts = FrameHeader { kind: FrameKind::Cts as u32, src: me, a: sreq, b: id as u64, ..Default::default() };
        self.send_control(env.src, cts);
        if self.route[env.src] == Route::Tcp {
            // the first part may have come already, or be on its way
            self.early_to.insert((env.src, sreq), id);
            if let Some(bytes) = self.early_stash.remove(&(env.src, sreq)) {
                let h = FrameHeader {
                    kind: FrameKind::Data as u32,
                    src: env.src as u32,
                    a: id as u64,
                    frag_len: bytes.len() as u32,
                    ..Default::default()
                };
                self.accept_data(h, &bytes);
            }
        }
    }

    /// The sender answered our Put: it wrote its part (`wrote`), or we read
    /// it ourselves now.
    fn put_done(&mut self, id: ReqId, wrote: bool, src: usize) {
        let pid = self.pids[src];
        let Some(Request::Recv(r)) = self.requests.get_mut(id) else {
            return;
        };
        let RecvState::Split { split, len, sreq, addr, read_first } = r.state else {
            return;
        };
        let env = Envelope { ctx: r.ctx, src, tag: r.status.tag, check: None };
        // SAFETY: the buffer is writable over `len` bytes, contiguous.
        let read = |from: usize, to: usize| unsafe {
            crate::transport::shm::read_remote_into(
                pid,
                addr + from as u64,
                to - from,
                &r.ty,
                (r.buf as *mut u8).add(from),
            )
        };
        let ok = (read_first || read(0, split)) && (wrote || read(split, len));
        let failed = (!ok).then(std::io::Error::last_os_error);
        finish_recv(r, &env, len);
        // Both parts are in (or never will be): the sender may reuse its buffer.
        self.reply(src, FrameKind::Fin, sreq, 0);
        if let Some(why) = failed {
            self.fail_recv(id, src, len, why);
        }
    }

    /// A long message could not be copied (the kernel refused a copy that
    /// worked before): the receive completes with MPI_ERR_OTHER, and one
    /// line says why (silently wrong data would be worse).
    fn fail_recv(&mut self, id: ReqId, src: usize, len: usize, why: std::io::Error) {
        crate::runtime::report(&format!(
            "oxmpi: rank {}: copying a message of {len} bytes from rank {src} by cross-memory attach failed ({why}); the receive ends with MPI_ERR_OTHER\n",
            self.rank
        ));
        if let Some(Request::Recv(r)) = self.requests.get_mut(id) {
            r.status.error = crate::error::ErrorClass::Other.code();
        }
    }
}

/// The eager limit for non-contiguous data (see `eager_limit_for`).
const NONCONTIG_EAGER: usize = 4096;

/// Messages from this size on are copied by both sides at once
/// (`Engine::match_rts`) when the sender helps or the message is below
/// `single_copy_min`, by cross-memory copies: each side copies half,
/// where the pipeline through the slots has each copy all of it once,
/// the receiver's copy pulling every line across from the sender's core.
/// Measured, 2 ranks on 2 cores, ping-pong (half round trip), best of 3
/// alternations, split against pipelined (Open MPI): 20 KiB 3.21 against
/// 3.28 us (3.94), 32 KiB 3.60 against 4.70 (4.87), 48 KiB 4.47 against
/// 6.84 (7.19), 64 KiB 4.67 against 8.57 (6.80), 96 KiB 6.21 against
/// 12.95 (9.77).
///
/// Not while the host's ranks that want a core outnumber its cores (but
/// for those parked in a short collective's wait, which give theirs up
/// at once): a sender then often waits for one to copy its half, so the
/// receiver reads it all. Measured, 4 ranks on 2 cores, a ring of
/// blocking sends (even ranks send first), medians of the best of 6
/// alternations, read whole against split (pipelined before splits; Open
/// MPI): 40000 bytes 23.5 against 33.0 us (24.5; 15.6), 64 KiB 22.8
/// against 32.0 (33.3; 35.5), 256 KiB 54.4 against 75.6 split as before
/// (76.2). Counting the parked ranks too, the 4-rank ping-pong with two
/// ranks waiting in a barrier read its 4 MiB whole, 220-280 us against
/// 173-183 split. Nor, below `single_copy_min`, with a sender last seen
/// on the receiver's core, where the pipeline copies through that core's
/// caches.
pub const SPLIT_MIN: usize = 32 * 1024;

/// Source MPI_PROC_NULL, tag MPI_ANY_TAG, no data: the status of a
/// completed send and of a receive from MPI_PROC_NULL (MPI 4.0 §3.11).
pub fn null_status() -> Status {
    Status { source: PROC_NULL, tag: ANY_TAG, ..Default::default() }
}

pub fn empty_status() -> Status {
    Status { source: ANY_SOURCE, tag: ANY_TAG, ..Default::default() }
}

/// What an MPI_Isendrecv reports: its receive's status, with its send's
/// error when only the send failed.
fn pair_status(recv: Status, send: Status) -> Status {
    if recv.error == 0 && send.error != 0 {
        return Status { error: send.error, ..recv };
    }
    recv
}

/// With type checking on: compare the sender's signature with what this
/// receive's type holds for the bytes that arrive; a mismatch fails the
/// receive with MPI_ERR_TYPE naming both types.
fn verify_signature(r: &mut RecvReq, env: &Envelope, len: usize) {
    let Some((sig, label)) = env.check else { return };
    // A truncated message is reported as truncated; MPI_PACKED matches all.
    if len > r.capacity() || crate::datatype::signature::is_packed(&r.ty) {
        return;
    }
    let mine = crate::datatype::signature::of_prefix(&r.ty, r.count, len.min(r.capacity()));
    if mine.map(|h| h as u32) != Some(sig) {
        r.status.error = crate::error::ErrorClass::Type.code();
        r.status.peer_type = label;
        r.status.own_type = r.label;
    }
}

/// Put an eager message's bytes in the receive's buffer and complete it.
fn land_eager(r: &mut RecvReq, env: &Envelope, data: &[u8]) {
    let n = data.len().min(r.capacity());
    // SAFETY: the receive's buffer is writable over `capacity()` bytes
    // of items (irecv's contract) and n <= capacity.
    unsafe { pack::unpack(&r.ty, &data[..n], r.buf as *mut u8) };
    verify_signature(r, env, data.len());
    finish_recv(r, env, data.len());
}

/// Fill in the status of a receive that got a message of `len` bytes.
fn finish_recv(r: &mut RecvReq, env: &Envelope, len: usize) {
    let cap = r.capacity();
    r.status.source = r.group.rank_of(env.src).map_or(-1, |x| x as i32);
    r.status.tag = env.tag;
    r.status.bytes = len.min(cap);
    r.status.sent_bytes = len;
    if len > cap && r.status.error == 0 {
        r.status.error = crate::error::ErrorClass::Truncate.code();
    }
    r.state = RecvState::Done;
}
