//! Point-to-point: requests, matching and the protocols of `protocol`
//! (DESIGN.md §3-4) over the shared-memory rings and TCP connections
//! (`wire`). Here the sending side; the receiving side in `landing`,
//! completion (test, wait) in `completion`.

mod agreed;
pub mod arrival;
mod bsend;
mod completion;
mod landing;
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
use landing::land_eager;
use matching::{Body, Envelope, Queues, Want};
use protocol::{Mode, Protocol};
use request::{RecvArgs, ReqId, Request, SendReq, SendState, Slab, Status};
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
    /// The eager limit of a send that a collective posts beside others
    /// and receives (`Fan`): one ring slot on a crowded host.
    fan_eager_limit: usize,
    /// `Config::calm_eager_limit` (at most `eager_limit`).
    calm_eager_limit: usize,
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
    /// Receives posted where a long message waited for them: its copy
    /// starts at the next progress (`Engine::deliver`).
    to_read: Vec<Matched>,
    /// Requests freed by the user while still active: removed when done.
    orphans: Vec<ReqId>,
    /// Live schedules, advanced by `progress`.
    schedules: Vec<ReqId>,
    /// Places where schedules kept to run again wait (`schedule::Place`):
    /// each one's holder's token (0: free) and what waits there.
    places: Vec<(u64, Option<Box<schedule::Schedule>>)>,
    /// Places given so far (the last token).
    places_given: u64,
    bsend: bsend::Attached,
    /// This rank's bookkeeping of its short and long mailboxes (see
    /// `mailbox`).
    mailboxes: [mailbox::Tally; 2],
    /// How this rank's long blocks went to one reader lately
    /// (`mailbox::Ways`).
    ways: mailbox::Ways,
    /// How a crowded host's ranks' long blocks went lately, alike on
    /// every member (`agreed`).
    agreed: agreed::Agreed,
    /// Collectives of the whole world this rank has posted on its
    /// arrival lines (`arrival`), of each set (`arrival::LineSet`).
    arrivals: [u64; crate::transport::shm::SETS],
    /// Nonblocking collectives and started persistent ones on the arrival
    /// lines not yet complete, with their lines, in the order they were
    /// started (`arrival::Arrival`): each set's in its own order, the sets
    /// apart.
    open_arrivals: VecDeque<(crate::transport::shm::LineSet, ReqId)>,
    /// Persistent collectives given lines of their own so far, on the
    /// holders of each `arrival::LineSet::Started` set's lines
    /// (`arrival::KEPT` at most each).
    kept_lines: [usize; crate::transport::shm::STARTED],
    /// Per `arrival::LineSet::Started` set: the kept sets (a bit each)
    /// whose persistent collective this rank has freed since they were
    /// last given out (`arrival::Engine::agree_kept_lines`).
    kept_freed: [u8; crate::transport::shm::STARTED],
    /// When a waiting rank last checked that its peers on this host live.
    last_roll_call: std::cell::Cell<std::time::Instant>,
    /// Early data (`FrameKind::Early`) by (source, sender request): where it
    /// goes once the RTS matched a receive, or what came before that.
    early_to: std::collections::HashMap<(usize, u64), ReqId>,
    early_stash: std::collections::HashMap<(usize, u64), Vec<u8>>,
    /// What a blocking receive taking its message straight from the ring
    /// (`recv`) waits for: it is in no queue, so the hang dump names it.
    receiving: Option<Want>,
    /// Per world rank: receives to post before `irecv` looks at the head
    /// of its ring again (0: at the next), as its messages tend to come
    /// after their receives (`match_or_post`).
    head_looks: Vec<u8>,
}

pub struct Config {
    pub check_types: bool,
    pub eager_limit: usize,
    /// `Engine::fan_eager_limit` (at most `eager_limit`).
    pub fan_eager_limit: usize,
    /// The eager limit of a send to a rank of this host while the ranks
    /// that want a core there are no more than its cores (the same as
    /// `eager_limit` but on a crowded host whose long-eager limit is
    /// `auto`).
    pub calm_eager_limit: usize,
    pub tcp_eager_limit: usize,
    pub unexpected_budget: usize,
    pub single_copy: bool,
    /// Contiguous local messages from this size on are single-copied.
    pub single_copy_min: usize,
}

/// How a send stands among its caller's transfers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Alone {
    /// An ordinary send (neither below).
    No,
    /// The caller waits for this send alone (a blocking send): its
    /// receiver may have it copy half (`protocol::FLAG_HELPS`).
    Helps,
    /// One of several sends a collective posts at once beside receives
    /// (an Alltoall's or Allgather's linear step): on a crowded host one
    /// longer than a ring slot, that its receiver would read by one
    /// cross-memory copy, goes by rendezvous, where alone it would go
    /// eagerly in several slots (copied in and out: `runtime::init` says
    /// why). 4 ranks on 2 cores, medians of 5-7 alternated runs, 64 KiB
    /// blocks at two times of the machine: Ialltoall 67.1 -> 43.2 and
    /// 80.4 -> 45.8 us, Iallgather 62.8 -> 57.2 and 60.5 -> 45.9 (Open MPI
    /// 41-63 and 77-82); Ialltoall of 48 KiB 46.6 -> 37.6, 40 KiB even
    /// (42.0 -> 43.5), Iallgather of 40 KiB 38.4 -> 34.6; Ialltoall of 64
    /// KiB at 5, 6 and 8 ranks 148 -> 93, 179 -> 133, 361 -> 313; at 3
    /// ranks 40 and 48 KiB 28.3 -> 21.6 and 27.1 -> 24.4 but 64 KiB 35.4
    /// -> 41.2 (not understood: not the single-copy threshold). Shorter ones,
    /// which the receiver would have pushed through the slots after a
    /// handshake, stay eager (24 KiB: 25.0 us eager, 38.5 so); so does
    /// everything where cross-memory copies are off (64 KiB: 74.6 against
    /// 84.1). An Ibcast's root, whose sends have no receives beside them,
    /// lost by rendezvous (11-14 -> 12-24 us) and keeps the slots.
    Fan,
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

/// Receives from a source `irecv` posts without looking at the head of
/// its ring after a look found nothing there (`look_at_head`).
const HEAD_LOOKS_AFTER_MISS: u8 = 15;

/// Land in `r` the message at the head of the ring (in `seg`) of `want`'s
/// source, a peer on this host by `route`, when it is the next one for
/// `want`: an eager one, with no acknowledgement asked, that `want`
/// matches and no receive posted before (in `queues`) takes (the caller
/// found no unexpected message to match: only taking frames from that
/// ring could queue one). Some(whether it did), None: not a peer on this
/// host, or its ring is empty.
fn take_head(seg: &Segment, route: &[Route], queues: &Queues, want: &Want, r: &mut request::RecvReq) -> Option<bool> {
    let Some(Route::Shm(l)) = want.src.map(|s| route[s]) else { return None };
    let ring = seg.ring(l, seg.me);
    let (h, data) = ring.peek()?;
    let env = Envelope { ctx: h.ctx, src: h.src as usize, tag: h.tag, check: None };
    if h.kind != FrameKind::Eager as u32 || h.flags != 0 || !want.matches(&env) || queues.is_posted(&env) {
        return Some(false);
    }
    land_eager(r, &env, data);
    ring.pop();
    seg.took_frames(l);
    Some(true)
}

impl Engine {
    pub fn new(rank: usize, seg: Segment, route: Vec<Route>, tcp: Option<Tcp>, pids: Vec<i32>, cfg: Config) -> Engine {
        let eager_limit = cfg.eager_limit.min(seg.max_frame());
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
            fan_eager_limit: cfg.fan_eager_limit.min(eager_limit),
            calm_eager_limit: cfg.calm_eager_limit.min(eager_limit),
            tcp_eager_limit: cfg.tcp_eager_limit,
            unexpected_budget: cfg.unexpected_budget,
            probing: None,
            queues: Queues::default(),
            requests: Slab::default(),
            outbox: (0..size).map(|_| VecDeque::new()).collect(),
            outbox_frames: 0,
            moved: 0,
            pushing: Vec::new(),
            to_read: Vec::new(),
            orphans: Vec::new(),
            schedules: Vec::new(),
            places: Vec::new(),
            places_given: 0,
            bsend: bsend::Attached::default(),
            mailboxes: [Boxes::Short, Boxes::Long].map(|kind| mailbox::Tally::new(kind, size)),
            ways: mailbox::Ways::default(),
            agreed: agreed::Agreed::default(),
            arrivals: [0; crate::transport::shm::SETS],
            kept_lines: [0; crate::transport::shm::STARTED],
            kept_freed: [0; crate::transport::shm::STARTED],
            open_arrivals: VecDeque::new(),
            last_roll_call: std::cell::Cell::new(std::time::Instant::now()),
            early_to: Default::default(),
            early_stash: Default::default(),
            receiving: None,
            head_looks: vec![0; size],
        }
    }

    /// Start a send.
    ///
    /// # Safety
    /// `a.buf` must stay readable over the items until the request
    /// completes (for buffered mode: until this call returns).
    pub unsafe fn isend(&mut self, a: SendArgs) -> MpiResult<ReqId> {
        // SAFETY: forwarded from the caller.
        unsafe { self.isend_as(a, Alone::No) }
    }

    /// `isend`, as one of the caller's sends (`alone`).
    ///
    /// # Safety
    /// As `isend`.
    pub(super) unsafe fn isend_as(&mut self, a: SendArgs, alone: Alone) -> MpiResult<ReqId> {
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
        let limit = self.eager_limit_for(&a.ty, dst, len, alone);
        let proto = protocol::choose(len, a.mode, limit);
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
        if alone == Alone::Helps {
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

    /// The longest message of `len` bytes of type `ty` to `dst`, sent as
    /// one of its caller's transfers (`alone`), that goes eagerly.
    /// Non-contiguous messages above a few KiB go rendezvous: their data is
    /// then packed and unpacked in pieces that overlap on the two sides.
    /// Over TCP the handshake costs a round trip of the network, so
    /// messages up to `tcp_eager_limit` go whole.
    fn eager_limit_for(&self, ty: &TypeInfo, dst: usize, len: usize, alone: Alone) -> usize {
        if !self.is_local(dst) {
            return self.tcp_eager_limit;
        }
        let limit = if ty.is_contiguous() { self.eager_limit } else { self.eager_limit.min(NONCONTIG_EAGER) };
        // (its receiver, with sends of its own under way, reads it from a
        // quarter of `single_copy_min` on: `match_rts`)
        if alone == Alone::Fan && self.single_copy && len >= self.single_copy_min / 4 {
            return limit.min(self.fan_eager_limit);
        }
        if alone == Alone::Helps && len > self.calm_eager_limit && len <= limit {
            // a crowded host: eager up to 64 KiB, since a rendezvous waits
            // for its receiver to run; but while the ranks that want a
            // core have one each (the others in a long wait) the receiver
            // runs, and a blocking send's sender and receiver copy half
            // each (4 ranks on 2 cores, two in a barrier, ping-pong of
            // 64 KiB, 7 alternations: 9.06-9.44 -> 7.64-9.01 us). Not a
            // nonblocking send's, or a Sendrecv's: eager, its message
            // needs nothing more of a sender that goes on to compute
            // (`c-tests/p2p_progress.c`).
            if !backoff::outnumbered(|| self.seg.busy(backoff::now_ns())) {
                return self.calm_eager_limit;
            }
        }
        limit
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
        self.match_or_post(want, id);
        id
    }

    /// Match receive request `id`, which `want` matches for, or post it.
    /// While no unexpected message matches, an eager message at the head
    /// of its source's ring on this host lands at once (`look_at_head`):
    /// the request is done before `irecv` returns, and its wait has
    /// nothing to poll for. Where the message mostly comes later, as in
    /// exchanges, a look that finds the ring empty costs more than its
    /// instructions, so the next 15 receives from that source do not look.
    /// Measured against posting every receive, medians of 6-10 alternated
    /// runs: 2 ranks, a stream of 8-byte messages, Isend + Wait against
    /// Irecv + Wait, 0.168 -> 0.121 us a message (Open MPI 0.107, MPICH
    /// 0.120); Ibcast of 8 bytes 0.255 -> 0.196, Bcast_init's Start + Wait
    /// 0.231 -> 0.173; 8-byte Ibarrier, Iallreduce, Ialltoall and
    /// Iallgather 0.97-1.03 of the time (looking at every receive, and with
    /// the request built aside and moved in, 1.04-1.09); 4 ranks on 2
    /// cores, Ibcast and Bcast_init 0.83 and 0.91, the others 0.91-1.01.
    fn match_or_post(&mut self, want: Want, id: ReqId) {
        match self.queues.take_unexpected(&want) {
            Some(u) => self.deliver(id, u),
            None if self.look_at_head(&want, id) => {}
            None => self.queues.post(want, id),
        }
    }

    /// `take_head` into receive request `id` for `match_or_post`, but
    /// after a look that found the ring empty not for the next
    /// `HEAD_LOOKS_AFTER_MISS` receives from that source.
    fn look_at_head(&mut self, want: &Want, id: ReqId) -> bool {
        let Some(src) = want.src else { return false };
        if self.head_looks[src] > 0 {
            self.head_looks[src] -= 1;
            return false;
        }
        let Some(Request::Recv(r)) = self.requests.get_mut(id) else { return false };
        match take_head(&self.seg, &self.route, &self.queues, want, r) {
            Some(landed) => landed,
            None => {
                self.head_looks[src] = HEAD_LOOKS_AFTER_MISS;
                false
            }
        }
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
        let want = a.want();
        let mut r = a.into_request();
        if let Some((s, Route::Shm(_))) = want.src.map(|s| (s, self.route[s])) {
            // Only taking frames from `s` could queue a message for us as
            // unexpected, and the loop leaves them in its ring: one look.
            if self.queues.peek_unexpected(&want).is_none() {
                let mut backoff = Backoff::new();
                self.receiving = Some(want);
                loop {
                    match take_head(&self.seg, &self.route, &self.queues, &want, &mut r) {
                        Some(true) => {
                            self.receiving = None;
                            return r.status;
                        }
                        Some(false) => break,
                        // the sender's frames wait in its ring for the next look
                        None => {
                            self.progress_but(s);
                            self.idle(&mut backoff);
                        }
                    }
                }
                self.receiving = None;
            }
        }
        let id = self.requests.insert(Request::Recv(r));
        self.match_or_post(want, id);
        self.wait(id)
    }

    /// Hand a matched unexpected message to receive request `id`: an
    /// eager one at once; a long one at the next progress, not in the
    /// call that posts the receive, which would copy all of it before it
    /// returns. A program that posts its receives and then its sends (a
    /// halo exchange) would keep its peers waiting for its sends'
    /// announcements until that copy is done, and they it for theirs.
    /// A collective's plan posts each step's receives before its sends
    /// too. Measured, 2 ranks, medians of 6 alternations, copying at once
    /// against at the next progress: Irecv + Isend + Waitall of 4 MiB,
    /// 1019 against 572 us (Open MPI 633); Alltoall of 4 MiB blocks 1445
    /// against 850 (Open MPI 838), 16 MiB 8182 against 4961 (4802).
    fn deliver(&mut self, id: ReqId, u: matching::Unexpected) {
        match u.body {
            Body::Eager { data, ack } => {
                self.deliver_eager(id, &u.env, &data);
                if let Some(sreq) = ack {
                    self.reply(u.env.src, FrameKind::Ack, sreq, 0);
                }
            }
            Body::Rts { len, sreq, addr, helps } => {
                self.to_read.push(Matched { id, env: u.env, len, sreq, addr, helps })
            }
        }
    }

    /// Start the copies of the long messages matched by receives posted
    /// since the last progress (`deliver`).
    fn read_matched(&mut self) {
        for m in std::mem::take(&mut self.to_read) {
            self.match_rts(m.id, &m.env, m.len, m.sreq, m.addr, m.helps);
        }
    }
}

/// A receive matched with a long message waiting at its sender, whose
/// copy starts at the next progress (`Engine::deliver`): the request and
/// the announcement's envelope and fields (`matching::Body::Rts`).
struct Matched {
    id: ReqId,
    env: Envelope,
    len: usize,
    sreq: u64,
    addr: u64,
    helps: bool,
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
