//! Requests' completion: test and wait, their all, any and some forms,
//! paired (MPI_Isendrecv) and generalized requests, and what a wait
//! prints of the queues when it seems to hang.

use super::request::RecvState;
use super::*;

impl Engine {
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
    pub(super) fn free_general_if_done(&mut self, id: ReqId) -> (i32, u32) {
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
            let Some(a) = p.active.take() else { return empty_status() };
            return self.finish(a);
        }
        self.finish(id)
    }

    /// Free a completed request and return its status.
    pub(super) fn finish(&mut self, id: ReqId) -> Status {
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
            Some(Request::Schedule(Some(s))) => {
                // a schedule that may run again goes back (`retire`)
                let status = s.status();
                if let Some(Request::Schedule(Some(s))) = self.requests.remove(id) {
                    self.retire(s);
                }
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
    /// The requests are freed together once all are done; the wait starts
    /// its spin over whenever one more is.
    pub fn wait_all(&mut self, ids: &[ReqId], statuses: &mut [Status]) {
        let mut backoff = Backoff::new();
        let mut done = 0;
        loop {
            self.progress();
            let now = ids.iter().filter(|&&id| self.peek_done(id)).count();
            if now == ids.len() {
                break;
            }
            if now > done {
                (done, backoff) = (now, Backoff::new());
            } else {
                self.idle(&mut backoff);
            }
        }
        for (s, &id) in statuses.iter_mut().zip(ids) {
            *s = self.take_done(id);
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
    pub(super) fn idle(&mut self, backoff: &mut Backoff) {
        self.idle_unless(backoff, || None, |_| false, None);
    }

    /// A poll found nothing to do: spin, yield or sleep as `backoff` says,
    /// not sleeping once `done` holds; `waiting_for` names the wait for the
    /// SIGUSR2 dump.
    #[inline]
    pub(super) fn idle_unless(
        &mut self,
        backoff: &mut Backoff,
        waiting_for: impl FnOnce() -> Option<String>,
        done: impl Fn(&Segment) -> bool,
        parked: Option<(usize, u64)>,
    ) {
        if self.owes_marks() {
            // a writer may wait for them: never while we wait
            self.store_marks();
        }
        self.dump_if_requested(waiting_for);
        backoff.restart_if_moved(self.moved);
        let seg = &self.seg;
        backoff.idle(
            |now| seg.awake(now),
            |timeout| self.sleep(timeout, || done(seg)),
            |now, dozing| {
                if seg.cores_taken(now) {
                    return false;
                }
                if dozing {
                    seg.doze();
                }
                seg.spread(now);
                true
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
                Request::Arrival(Some(a)) if !a.is_done() => {
                    out.push(format!("pending collective #{id}: {}", a.describe()))
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
}

/// What an MPI_Isendrecv reports: its receive's status, with its send's
/// error when only the send failed.
fn pair_status(recv: Status, send: Status) -> Status {
    if recv.error == 0 && send.error != 0 {
        return Status { error: send.error, ..recv };
    }
    recv
}
