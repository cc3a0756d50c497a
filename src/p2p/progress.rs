//! The progress engine: move the sockets' bytes (TCP peers), drain the
//! frames from every peer (its ring to us or its connection), act on each,
//! flush frames that waited for room, push rendezvous data.

use super::landing::finish_recv;
use super::matching::{Body, Envelope, Unexpected};
use super::protocol::{FLAG_HELPS, FLAG_READY, FLAG_SIG, FLAG_SYNC};
use super::request::{RecvState, Request, SendState};
use super::wire::Route;
use super::Engine;
use crate::datatype::pack;
use crate::error::ErrorClass;
use crate::transport::{FrameHeader, FrameKind};

impl Engine {
    /// Make all the progress possible without blocking.
    pub fn progress(&mut self) {
        self.progress_but(usize::MAX);
    }

    /// Whether any request is live: started, or inactive persistent, and
    /// not yet freed (the progress thread's sign of work).
    pub fn has_requests(&self) -> bool {
        self.requests.any_live()
    }

    /// Whether some peers are reached over TCP (they ring no doorbell).
    pub fn has_tcp_peers(&self) -> bool {
        self.tcp.is_some()
    }

    /// This rank's doorbell, where the progress thread sleeps.
    pub fn doorbell(&self) -> &crate::transport::shm::Doorbell {
        self.seg.doorbell(self.seg.me)
    }

    /// As `progress`, leaving the frames from `skip` in its ring (a
    /// blocking receive takes them from there).
    pub(super) fn progress_but(&mut self, skip: usize) {
        if !self.to_read.is_empty() {
            self.read_matched();
        }
        if self.tcp.is_some() {
            self.poll_tcp();
        }
        if self.outbox_frames > 0 {
            self.flush_outboxes();
        }
        for src in 0..self.size {
            if src != skip {
                self.drain(src);
            }
        }
        if !self.pushing.is_empty() {
            self.push_data();
        }
        if !self.schedules.is_empty() {
            self.advance_schedules();
        }
        if !self.open_arrivals.is_empty() {
            self.advance_arrivals();
        }
        if !self.orphans.is_empty() {
            self.reap_orphans();
        }
    }

    /// Act on the frames from `src`. Once a frame has completed a posted
    /// receive, an eager message that no posted receive wants is left in
    /// the ring for the next call: a program receiving a stream of
    /// messages one by one then takes each straight from its slot into its
    /// buffer, instead of copying it out and back in as unexpected.
    fn drain(&mut self, src: usize) {
        let mut matched = false;
        let mut took = false;
        let mut waiting = None;
        loop {
            if self.queues.unexpected_bytes > self.unexpected_budget
                && !self.queues.wants_from(src)
                && self.probing.is_none_or(|p| p.is_some_and(|p| p != src))
                && self.outbox_frames == 0
                && self.head_queues_up(src)
                && !*waiting.get_or_insert_with(|| self.waits_on(src))
            {
                // Over budget: leave this sender's messages in its ring
                // (it waits) until we post a receive they can fill or probe
                // for them, unless
                // our own frames wait for room (the sends they finish may
                // be what we wait for, and the ranks we send to may wait in
                // turn for room to us, or to a rank that waits for us), or
                // we wait on a reply to a send of ours or the data of a
                // long message from it, which may be behind them. Replies
                // and data are taken: they queue nothing.
                break;
            }
            let Some((h, payload)) = self.peek_frame(src) else { break };
            let payload = (payload.as_ptr(), payload.len());
            // once a receive was filled, an eager frame no receive wants
            // waits in the ring (the posted queue is scanned twice only then)
            if matched && h.kind == FrameKind::Eager as u32 {
                let env = Envelope { ctx: h.ctx, src: h.src as usize, tag: h.tag, check: None };
                if !self.queues.is_posted(&env) {
                    break;
                }
            }
            // SAFETY: `payload` points into the shared slot or the
            // connection's read buffer, which stay as they are until
            // `pop_frame`: `handle` never reads frames.
            let payload = unsafe { std::slice::from_raw_parts(payload.0, payload.1) };
            matched |= self.handle(h, payload);
            self.pop_frame(src);
            took = true;
        }
        if took {
            if let Route::Shm(l) = self.route[src] {
                // the sender may sleep until its ring to us has room
                self.seg.took_frames(l);
            }
        }
    }

    /// Whether the next frame from `src`, which no posted receive wants,
    /// would join the unexpected queue: a message, or the first part of a
    /// long one whose receive is not yet matched.
    fn head_queues_up(&mut self, src: usize) -> bool {
        let Some((h, _)) = self.peek_frame(src) else { return false };
        match FrameKind::from_u32(h.kind) {
            Some(FrameKind::Eager | FrameKind::Rts) => true,
            Some(FrameKind::Early) => !self.early_to.contains_key(&(h.src as usize, h.a)),
            _ => false,
        }
    }

    /// Whether we wait on frames from `src` that no posted receive shows:
    /// the reply to a send of ours (an Ack, Cts or Fin), or the data of a
    /// long message a receive (or MPI_Mrecv) has matched. Only asked over
    /// the unexpected-message budget.
    fn waits_on(&self, src: usize) -> bool {
        self.requests.live().any(|(_, r)| match r {
            Request::Send(s) => s.dst == src && matches!(s.state, SendState::AwaitingAck | SendState::AwaitingReceiver),
            Request::Recv(r) => {
                matches!(r.state, RecvState::Receiving { .. } | RecvState::Split { .. })
                    && usize::try_from(r.status.source).is_ok_and(|q| r.group.world_rank(q) == src)
            }
            _ => false,
        })
    }

    /// Act on one frame; true when it was an eager message that filled a
    /// posted receive.
    fn handle(&mut self, h: FrameHeader, payload: &[u8]) -> bool {
        let check = (h.flags & FLAG_SIG != 0).then_some((h.sig, h.label));
        let env = Envelope { ctx: h.ctx, src: h.src as usize, tag: h.tag, check };
        match FrameKind::from_u32(h.kind) {
            Some(FrameKind::Eager) => {
                let ack = (h.flags & (FLAG_SYNC | FLAG_READY) != 0).then_some(h.a);
                match self.queues.take_posted(&env) {
                    Some(id) => {
                        self.deliver_eager(id, &env, payload);
                        if let Some(sreq) = ack {
                            self.reply(env.src, FrameKind::Ack, sreq, 0);
                        }
                        return true;
                    }
                    None if h.flags & FLAG_READY != 0 => self.reply(env.src, FrameKind::Nack, h.a, 0),
                    None => self
                        .queues
                        .push_unexpected(Unexpected { env, body: Body::Eager { data: payload.to_vec(), ack } }),
                }
            }
            Some(FrameKind::Rts) => {
                let (len, sreq, addr, helps) = (h.len as usize, h.a, h.b, h.flags & FLAG_HELPS != 0);
                match self.queues.take_posted(&env) {
                    Some(id) => self.match_rts(id, &env, len, sreq, addr, helps),
                    None if h.flags & FLAG_READY != 0 => self.reply(env.src, FrameKind::Nack, sreq, 0),
                    None => self.queues.push_unexpected(Unexpected { env, body: Body::Rts { len, sreq, addr, helps } }),
                }
            }
            Some(FrameKind::Fin | FrameKind::Ack) => self.send_done(h.a, 0),
            Some(FrameKind::Nack) => self.send_done(h.a, ErrorClass::Other.code()),
            Some(FrameKind::Cts) => {
                if let Some(Request::Send(s)) = self.requests.get_mut(h.a as u32) {
                    s.state = SendState::Pushing { rreq: h.b, sent: s.early };
                    self.pushing.push(h.a as u32);
                }
            }
            Some(FrameKind::Early) => {
                // the first part of a long message, sent with its RTS
                let key = (h.src as usize, h.a);
                match self.early_to.get(&key) {
                    Some(&rreq) => self.accept_data(FrameHeader { a: rreq as u64, ..h }, payload),
                    None => self.early_stash.entry(key).or_default().extend_from_slice(payload),
                }
            }
            Some(FrameKind::Data) => self.accept_data(h, payload),
            Some(FrameKind::Put) => self.put(h),
            Some(FrameKind::PutDone) => self.put_done(h.a as u32, h.b == 1, env.src),
            Some(FrameKind::CancelReq) => {
                let removed = self.queues.cancel_unexpected(env.src, h.a);
                if removed {
                    self.early_stash.remove(&(env.src, h.a));
                }
                self.reply(env.src, FrameKind::CancelReply, h.a, removed as u64);
            }
            // taken by the TCP transport; never reaches the engine
            Some(FrameKind::Bye) => {}
            Some(FrameKind::CancelReply) => {
                if let Some(Request::Send(s)) = self.requests.get_mut(h.a as u32) {
                    s.cancel_pending = false;
                    if h.b == 1 {
                        s.finish(&mut self.long_sends);
                        s.status.cancelled = true;
                    }
                }
            }
            None => crate::runtime::report(&format!(
                "oxmpi: rank {}: dropped a frame of unknown kind {} from rank {}\n",
                self.rank, h.kind, h.src
            )),
        }
        false
    }

    /// The receiver asks us to write our part of a long message into its
    /// buffer: bytes `h.len..` of the message, at `h.b + h.len`.
    fn put(&mut self, h: FrameHeader) {
        let dst = h.src as usize;
        let pid = self.pids[dst];
        let wrote = match self.requests.get_mut(h.a as u32) {
            Some(Request::Send(s)) if s.state == SendState::AwaitingReceiver => {
                let from = h.len as usize;
                // SAFETY: the message bytes stay readable until this send
                // completes.
                let part = unsafe { std::slice::from_raw_parts((s.addr + from) as *const u8, s.len - from) };
                // The send completes on the receiver's Fin, not here: the
                // receiver may still be reading the first part.
                crate::transport::shm::write_remote(pid, h.b + from as u64, part)
            }
            _ => false,
        };
        self.reply(dst, FrameKind::PutDone, h.ctx as u64, wrote as u64);
    }

    /// The receiver acknowledged (or refused, with `error`) a send.
    fn send_done(&mut self, sreq: u64, error: i32) {
        if let Some(Request::Send(s)) = self.requests.get_mut(sreq as u32) {
            s.finish(&mut self.long_sends);
            s.status.error = error;
        }
    }

    pub(super) fn accept_data(&mut self, h: FrameHeader, payload: &[u8]) {
        let Some(Request::Recv(r)) = self.requests.get_mut(h.a as u32) else {
            return;
        };
        let RecvState::Receiving { got, len } = r.state else {
            return;
        };
        let off = h.b as usize;
        let cap = r.capacity();
        let landed = h.flags & crate::transport::tcp::FLAG_LANDED != 0;
        let payload_len = if landed { h.frag_len as usize } else { payload.len() };
        if off < cap && !landed {
            // Bytes past the receive buffer (a truncated message) are dropped.
            let n = payload.len().min(cap - off);
            // SAFETY: the receive buffer's items are writable over `cap`
            // bytes of stream and off + n <= cap.
            unsafe { pack::unpack_range(&r.ty, &payload[..n], off, r.buf as *mut u8) };
        }
        let got = got + payload_len;
        if got < len {
            r.state = RecvState::Receiving { got, len };
            return;
        }
        if let Some(t) = self.tcp.as_mut() {
            t.forget(h.src as usize, h.a);
            let id = h.a as u32;
            self.early_to.retain(|_, r| *r != id);
        }
        let env = Envelope {
            ctx: r.ctx,
            src: r.group.world_rank(r.status.source.max(0) as usize),
            tag: r.status.tag,
            check: None,
        };
        finish_recv(r, &env, len);
    }

    fn flush_outboxes(&mut self) {
        for dst in 0..self.size {
            while let Some(o) = self.outbox[dst].pop_front() {
                if !self.try_push(dst, &o.header, o.payload.len(), |b| b.copy_from_slice(&o.payload)) {
                    self.outbox[dst].push_front(o);
                    break;
                }
                self.outbox_frames -= 1;
                self.moved += 1;
                if let Some(Request::Send(s)) = o.done.and_then(|id| self.requests.get_mut(id)) {
                    s.state = SendState::Done;
                }
            }
        }
    }

    fn push_data(&mut self) {
        let me = self.rank as u32;
        let mut i = 0;
        while i < self.pushing.len() {
            let id = self.pushing[i];
            let Some(Request::Send(s)) = self.requests.get(id) else {
                self.pushing.swap_remove(i);
                continue;
            };
            let SendState::Pushing { rreq, mut sent } = s.state else {
                self.pushing.swap_remove(i);
                continue;
            };
            let (dst, len, addr, layout) = (s.dst, s.len, s.addr, s.layout.clone());
            if !self.outbox[dst].is_empty() {
                i += 1;
                continue;
            }
            // Pieces of an eighth of the message (at least 1 KiB) let the
            // two sides copy at the same time even for medium messages.
            let chunk = if self.is_local(dst) {
                self.chunk_for(dst).min((len / 8).max(1024).next_multiple_of(64))
            } else {
                self.chunk_for(dst)
            };
            while sent < len {
                let n = chunk.min(len - sent);
                let h = FrameHeader {
                    kind: FrameKind::Data as u32,
                    src: me,
                    a: rreq,
                    b: sent as u64,
                    frag_len: n as u32,
                    ..Default::default()
                };
                let pushed = match &layout {
                    // SAFETY: the user's buffer stays readable until this
                    // send completes.
                    Some(t) => {
                        self.try_push(dst, &h, n, |b| unsafe { pack::pack_range(t, addr as *const u8, sent, b) })
                    }
                    // SAFETY: as above (the send completes once nothing it
                    // lent is queued); contiguous data is `len` bytes at `addr`.
                    None => self.try_push_bytes(
                        dst,
                        &h,
                        unsafe { std::slice::from_raw_parts((addr + sent) as *const u8, n) },
                        true,
                    ),
                };
                if !pushed {
                    break;
                }
                sent += n;
                self.moved += 1;
            }
            let lent = self.lends_to(dst);
            let Some(Request::Send(s)) = self.requests.get_mut(id) else { unreachable!("looked up above") };
            if sent == len && !lent {
                s.finish(&mut self.long_sends);
                self.pushing.swap_remove(i);
            } else {
                s.state = SendState::Pushing { rreq, sent };
                i += 1;
            }
        }
    }
}
