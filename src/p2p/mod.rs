//! Point-to-point: requests, matching and the eager/rendezvous protocols
//! (DESIGN.md §3-4) over the shared-memory rings.
//!
//! A message of at most the eager limit travels whole in one `Eager` frame.
//! A longer one sends an `Rts` envelope; the receiver, once it matches,
//! reads the data straight from the sender's memory (single copy) and
//! answers `Fin`, or, when that is refused or switched off, answers `Cts`
//! and the sender pushes the data through the ring in `Data` frames.

pub mod matching;
mod progress;
pub mod request;

use crate::comm::Group;
use crate::datatype::{pack, TypeInfo};
use crate::err;
use crate::error::MpiResult;
use crate::runtime::backoff::Backoff;
use crate::transport::shm::Segment;
use crate::transport::{FrameHeader, FrameKind};
use matching::{Body, Envelope, Queues, Want};
use request::{RecvReq, RecvState, ReqId, Request, SendReq, SendState, Slab, Status};
use std::collections::VecDeque;

pub const PROC_NULL: i32 = -1;
pub const ANY_SOURCE: i32 = -2;
pub const ANY_TAG: i32 = -1;

/// A frame waiting for room in its ring, with its payload copied.
struct Outgoing {
    header: FrameHeader,
    payload: Vec<u8>,
}

pub struct Engine {
    pub rank: usize,
    pub size: usize,
    seg: Segment,
    pids: Vec<i32>,
    pub single_copy: bool,
    pub eager_limit: usize,
    unexpected_budget: usize,
    queues: Queues,
    requests: Slab,
    /// Per destination: frames that found the ring full, oldest first.
    outbox: Vec<VecDeque<Outgoing>>,
    /// Sends whose data we push (their receiver answered Cts).
    pushing: Vec<ReqId>,
}

pub struct Config {
    pub eager_limit: usize,
    pub unexpected_budget: usize,
    pub single_copy: bool,
}

impl Engine {
    pub fn new(rank: usize, size: usize, seg: Segment, pids: Vec<i32>, cfg: Config) -> Engine {
        let eager_limit = cfg.eager_limit.min(seg.payload());
        Engine {
            rank,
            size,
            seg,
            pids,
            single_copy: cfg.single_copy,
            eager_limit,
            unexpected_budget: cfg.unexpected_budget,
            queues: Queues::default(),
            requests: Slab::default(),
            outbox: (0..size).map(|_| VecDeque::new()).collect(),
            pushing: Vec::new(),
        }
    }

    /// Start a send of `count` items of `ty` at `buf` to world rank `dst`
    /// (None: MPI_PROC_NULL).
    ///
    /// # Safety
    /// `buf` must stay readable over the items until the request completes.
    pub unsafe fn isend(
        &mut self,
        buf: *const u8,
        count: usize,
        ty: &'static TypeInfo,
        dst: Option<usize>,
        tag: i32,
        ctx: u32,
    ) -> MpiResult<ReqId> {
        let Some(dst) = dst else {
            return Ok(self.requests.insert(Request::Null(Status {
                source: PROC_NULL,
                tag: ANY_TAG,
                ..Default::default()
            })));
        };
        let Some(len) = ty.bytes(count) else {
            return err!(
                Count,
                "count {count} of {} overflows the address space",
                ty.name
            );
        };
        let header = FrameHeader {
            ctx,
            src: self.rank as u32,
            tag,
            len: len as u64,
            ..Default::default()
        };
        if len <= self.eager_limit {
            let header = FrameHeader {
                kind: FrameKind::Eager as u32,
                frag_len: len as u32,
                ..header
            };
            // SAFETY: the caller guarantees `buf` readable over the items.
            let fill = |slot: &mut [u8]| unsafe { pack::pack(ty, count, buf, slot) };
            if !(self.outbox[dst].is_empty()
                && self.seg.ring(self.rank, dst).try_push(&header, len, fill))
            {
                let mut payload = vec![0u8; len];
                // SAFETY: as above.
                unsafe { pack::pack(ty, count, buf, &mut payload) };
                self.outbox[dst].push_back(Outgoing { header, payload });
            } else {
                self.seg.ring_bell(dst);
            }
            return Ok(self.requests.insert(Request::Null(Status::default())));
        }
        // Rendezvous: the receiver reads from `addr` (our memory) or asks
        // us to push. A non-contiguous buffer is packed once, here.
        let packed = (!ty.is_contiguous()).then(|| {
            let mut v = vec![0u8; len];
            // SAFETY: as above.
            unsafe { pack::pack(ty, count, buf, &mut v) };
            v
        });
        let addr = packed
            .as_ref()
            .map_or(buf as usize, |v| v.as_ptr() as usize);
        let id = self.requests.insert(Request::Send(SendReq {
            dst,
            packed,
            addr,
            len,
            state: SendState::AwaitingReceiver,
        }));
        let header = FrameHeader {
            kind: FrameKind::Rts as u32,
            sreq: id as u64,
            addr: addr as u64,
            ..header
        };
        self.send_control(dst, header);
        Ok(id)
    }

    /// Post a receive of up to `count` items of `ty` into `buf`.
    /// `src`: world rank, None for any; PROC_NULL is the caller's concern.
    ///
    /// # Safety
    /// `buf` must stay writable over the items until the request completes.
    pub unsafe fn irecv(
        &mut self,
        buf: *mut u8,
        count: usize,
        ty: &'static TypeInfo,
        src: Option<usize>,
        tag: Option<i32>,
        ctx: u32,
        group: Group,
    ) -> ReqId {
        let want = Want { ctx, src, tag };
        let req = RecvReq {
            buf: buf as usize,
            count,
            ty,
            src,
            tag,
            ctx,
            group,
            state: RecvState::Posted,
            staging: None,
            status: Status::default(),
        };
        let id = self.requests.insert(Request::Recv(req));
        match self.queues.take_unexpected(&want) {
            Some(u) => match u.body {
                Body::Eager(data) => self.deliver_eager(id, &u.env, &data),
                Body::Rts { len, sreq, addr } => self.match_rts(id, &u.env, len, sreq, addr),
            },
            None => self.queues.post(want, id),
        }
        id
    }

    /// A request that is complete from the start (MPI_PROC_NULL receive).
    pub fn null_request(&mut self, status: Status) -> ReqId {
        self.requests.insert(Request::Null(status))
    }

    pub fn is_request(&self, id: ReqId) -> bool {
        self.requests.get(id).is_some()
    }

    /// Complete and free `id` if it is done.
    pub fn test(&mut self, id: ReqId) -> Option<Status> {
        if !self.requests.get(id)?.is_done() {
            self.progress();
        }
        if self.requests.get(id)?.is_done() {
            return self.requests.remove(id).map(|r| r.status());
        }
        None
    }

    /// Block until `id` completes; free it and return its status.
    pub fn wait(&mut self, id: ReqId) -> Status {
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
        let mut left = ids
            .iter()
            .filter(|&&i| self.requests.get(i).is_some())
            .count();
        while left > 0 {
            self.progress();
            for (k, &id) in ids.iter().enumerate() {
                if self.requests.get(id).is_some_and(|r| r.is_done()) {
                    statuses[k] = self.requests.remove(id).unwrap().status();
                    left -= 1;
                    backoff = Backoff::new();
                }
            }
            if left > 0 {
                self.idle(&mut backoff);
            }
        }
    }

    fn idle(&mut self, backoff: &mut Backoff) {
        let seg = &self.seg;
        let me = self.rank;
        let n = self.size;
        backoff.idle(|timeout| seg.sleep(timeout, || (0..n).all(|s| seg.ring(s, me).is_empty())));
    }

    /// One line per pending request and unexpected message (hang diagnosis).
    pub fn describe_queues(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (w, id) in self.queues.posted() {
            out.push(format!(
                "posted receive #{id}: ctx {} source {:?} tag {:?}",
                w.ctx, w.src, w.tag
            ));
        }
        for (id, r) in self.requests.live() {
            if let Request::Send(s) = r {
                let state = match s.state {
                    SendState::AwaitingReceiver => "waiting for the receiver to match",
                    SendState::Pushing { .. } => "pushing data",
                    SendState::Done => "done",
                };
                out.push(format!(
                    "send #{id}: to rank {} {} bytes, {state}",
                    s.dst, s.len
                ));
            }
        }
        for u in self.queues.unexpected() {
            let what = match &u.body {
                Body::Eager(d) => format!("{} bytes eager", d.len()),
                Body::Rts { len, .. } => format!("{len} bytes waiting at the sender"),
            };
            out.push(format!(
                "unexpected: ctx {} from rank {} tag {}: {what}",
                u.env.ctx, u.env.src, u.env.tag
            ));
        }
        out
    }

    /// Send a frame without payload, queueing it if the ring is full.
    fn send_control(&mut self, dst: usize, header: FrameHeader) {
        if self.outbox[dst].is_empty() && self.seg.ring(self.rank, dst).try_push(&header, 0, |_| {})
        {
            self.seg.ring_bell(dst);
        } else {
            self.outbox[dst].push_back(Outgoing {
                header,
                payload: Vec::new(),
            });
        }
    }

    fn deliver_eager(&mut self, id: ReqId, env: &Envelope, data: &[u8]) {
        let Some(Request::Recv(r)) = self.requests.get_mut(id) else {
            return;
        };
        let n = data.len().min(r.capacity());
        // SAFETY: the receive's buffer is writable over `capacity()` bytes
        // of items (irecv's contract) and n <= capacity.
        unsafe { pack::unpack(r.ty, &data[..n], r.buf as *mut u8) };
        finish_recv(r, env, data.len());
    }

    fn match_rts(&mut self, id: ReqId, env: &Envelope, len: usize, sreq: u64, addr: u64) {
        let pid = self.pids[env.src];
        let single_copy = self.single_copy;
        let Some(Request::Recv(r)) = self.requests.get_mut(id) else {
            return;
        };
        let n = len.min(r.capacity());
        if single_copy {
            let ok = if r.ty.is_contiguous() {
                // SAFETY: the buffer is writable over n <= capacity bytes.
                let dst = unsafe { std::slice::from_raw_parts_mut(r.buf as *mut u8, n) };
                crate::transport::shm::read_remote(pid, addr, dst)
            } else {
                let mut tmp = vec![0u8; n];
                let ok = crate::transport::shm::read_remote(pid, addr, &mut tmp);
                // SAFETY: as in deliver_eager.
                if ok {
                    unsafe { pack::unpack(r.ty, &tmp, r.buf as *mut u8) };
                }
                ok
            };
            if ok {
                finish_recv(r, env, len);
                let fin = FrameHeader {
                    kind: FrameKind::Fin as u32,
                    src: self.rank as u32,
                    sreq,
                    ..Default::default()
                };
                self.send_control(env.src, fin);
                return;
            }
            // Refused (ptrace policy, a container): push from now on.
            self.single_copy = false;
        }
        r.state = RecvState::Receiving { got: 0, len };
        r.status.source = r.group.rank_of(env.src).map_or(-1, |x| x as i32);
        r.status.tag = env.tag;
        if !r.ty.is_contiguous() {
            r.staging = Some(vec![0u8; len]);
        }
        let cts = FrameHeader {
            kind: FrameKind::Cts as u32,
            src: self.rank as u32,
            sreq,
            rreq: id as u64,
            ..Default::default()
        };
        self.send_control(env.src, cts);
    }
}

/// Fill in the status of a receive that got a message of `len` bytes.
fn finish_recv(r: &mut RecvReq, env: &Envelope, len: usize) {
    let cap = r.capacity();
    r.status.source = r.group.rank_of(env.src).map_or(-1, |x| x as i32);
    r.status.tag = env.tag;
    r.status.bytes = len.min(cap);
    r.status.sent_bytes = len;
    if len > cap {
        r.status.error = crate::error::ErrorClass::Truncate.code();
    }
    r.state = RecvState::Done;
}
