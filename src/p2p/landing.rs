//! The receiving side of the protocols: an eager message landing in its
//! receive, a rendezvous matched and its data pulled or pushed, the
//! control frames that answer the sender.

use super::request::{RecvReq, RecvState};
use super::*;

impl Engine {
    /// Send a frame without payload, queueing it if the ring is full.
    pub(super) fn send_control(&mut self, dst: usize, header: FrameHeader) {
        if !(self.outbox[dst].is_empty() && self.try_push(dst, &header, 0, |_| {})) {
            self.outbox[dst].push_back(Outgoing { header, payload: Vec::new(), done: None });
            self.outbox_frames += 1;
        }
    }

    /// A control frame about sender request `sreq` (Ack, Nack, Fin, ...).
    pub(super) fn reply(&mut self, dst: usize, kind: FrameKind, sreq: u64, result: u64) {
        let h = FrameHeader { kind: kind as u32, src: self.rank as u32, a: sreq, b: result, ..Default::default() };
        self.send_control(dst, h);
    }

    pub(super) fn deliver_eager(&mut self, id: ReqId, env: &Envelope, data: &[u8]) {
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
    pub(super) fn match_rts(&mut self, id: ReqId, env: &Envelope, len: usize, sreq: u64, addr: u64, helps: bool) {
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
    pub(super) fn put_done(&mut self, id: ReqId, wrote: bool, src: usize) {
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
pub(super) fn land_eager(r: &mut RecvReq, env: &Envelope, data: &[u8]) {
    let n = data.len().min(r.capacity());
    // SAFETY: the receive's buffer is writable over `capacity()` bytes
    // of items (irecv's contract) and n <= capacity.
    unsafe { pack::unpack(&r.ty, &data[..n], r.buf as *mut u8) };
    verify_signature(r, env, data.len());
    finish_recv(r, env, data.len());
}

/// Fill in the status of a receive that got a message of `len` bytes.
pub(super) fn finish_recv(r: &mut RecvReq, env: &Envelope, len: usize) {
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
