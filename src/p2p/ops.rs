//! The rest of point-to-point: probe and matched probe, cancel, freeing
//! active requests, persistent requests.

use super::matching::{Body, Want};
use super::request::{Persistent, RecvState, ReqId, Request, SendState, Status, Template};
use super::{Engine, SendArgs};
use crate::comm::Group;
use crate::err;
use crate::error::MpiResult;
use crate::runtime::backoff::Backoff;
use crate::transport::FrameKind;

impl Engine {
    fn probe_status(&self, w: &Want, group: &Group) -> Option<Status> {
        self.queues.peek_unexpected(w).map(|u| {
            let len = match &u.body {
                Body::Eager { data, .. } => data.len(),
                Body::Rts { len, .. } => *len,
            };
            Status {
                source: group.rank_of(u.env.src).map_or(-1, |r| r as i32),
                tag: u.env.tag,
                bytes: len,
                sent_bytes: len,
                ..Default::default()
            }
        })
    }

    /// MPI_Iprobe: the status of a matching message, if one has arrived.
    pub fn iprobe(&mut self, w: Want, group: &Group) -> Option<Status> {
        self.progress_probing(&w);
        self.probe_status(&w, group)
    }

    /// `progress` for a probe: over the unexpected-message budget, the
    /// messages of its sources are taken all the same (a probe must find a
    /// message that was sent, and it looks only at the unexpected queue).
    fn progress_probing(&mut self, w: &Want) {
        self.probing = Some(w.src);
        self.progress();
        self.probing = None;
    }

    /// MPI_Probe: block until a matching message has arrived.
    pub fn probe(&mut self, w: Want, group: &Group) -> Status {
        let mut backoff = Backoff::new();
        loop {
            if let Some(s) = self.iprobe(w, group) {
                return s;
            }
            self.idle(&mut backoff);
        }
    }

    /// MPI_Improbe: take a matching message out of the queues, so only the
    /// MPI_Mrecv of its handle can receive it.
    pub fn improbe(&mut self, w: Want, group: &Group) -> Option<(ReqId, Status)> {
        self.progress_probing(&w);
        let status = self.probe_status(&w, group)?;
        let u = self.queues.take_unexpected(&w)?;
        if let Body::Eager { ack: Some(sreq), .. } = u.body {
            // Matched now: a synchronous sender may complete.
            self.reply(u.env.src, FrameKind::Ack, sreq, 0);
        }
        let u = match u.body {
            Body::Eager { data, .. } => {
                super::matching::Unexpected { env: u.env, body: Body::Eager { data, ack: None } }
            }
            body => super::matching::Unexpected { env: u.env, body },
        };
        Some((self.requests.insert(Request::Message(u, group.clone())), status))
    }

    pub fn mprobe(&mut self, w: Want, group: &Group) -> (ReqId, Status) {
        let mut backoff = Backoff::new();
        loop {
            if let Some(r) = self.improbe(w, group) {
                return r;
            }
            self.idle(&mut backoff);
        }
    }

    pub fn is_message(&self, id: ReqId) -> bool {
        matches!(self.requests.get(id), Some(Request::Message(..)))
    }

    /// MPI_Imrecv: receive the message `msg` took by MPI_Mprobe.
    ///
    /// # Safety
    /// As `irecv`.
    pub unsafe fn imrecv(
        &mut self,
        msg: ReqId,
        buf: *mut u8,
        count: usize,
        ty: crate::datatype::TypeRef,
    ) -> MpiResult<ReqId> {
        let Some(Request::Message(u, group)) = self.requests.remove(msg) else {
            return err!(Request, "the message handle does not come from MPI_Mprobe or was already received");
        };
        let req = super::request::RecvReq {
            buf: buf as usize,
            count,
            ty,
            label: 0,
            ctx: u.env.ctx,
            group,
            state: RecvState::Posted,
            status: Status::default(),
        };
        let id = self.requests.insert(Request::Recv(req));
        self.deliver(id, u);
        Ok(id)
    }

    /// MPI_Cancel. A posted receive is withdrawn at once; an unmatched send
    /// asks its receiver to drop the message and completes cancelled if it
    /// could. Completed or matched operations are not affected.
    pub fn cancel(&mut self, id: ReqId) {
        let id = match self.requests.get(id) {
            Some(Request::Persistent(p)) => match p.active {
                Some(a) => a,
                None => return,
            },
            _ => id,
        };
        match self.requests.get_mut(id) {
            // a posted receive is cancelled if still unmatched
            Some(Request::Recv(r)) if matches!(r.state, RecvState::Posted) && self.queues.cancel_posted(id) => {
                r.state = RecvState::Done;
                r.status = Status { cancelled: true, ..super::null_status() };
            }
            Some(Request::Send(s))
                if matches!(s.state, SendState::AwaitingAck | SendState::AwaitingReceiver) && !s.cancel_pending =>
            {
                s.cancel_pending = true;
                let dst = s.dst;
                self.reply(dst, FrameKind::CancelReq, id as u64, 0);
            }
            _ => {}
        }
    }

    /// MPI_Request_free: forget the request; an active one finishes in the
    /// background and is removed then.
    /// A generalized request's free function runs once it is both freed
    /// and complete (MPI 4.0 §13.2), its query function never: what it
    /// returned (error code, failure number), or zeros.
    pub fn free(&mut self, id: ReqId) -> (i32, u32) {
        if let Some(Request::General(g)) = self.requests.get_mut(id) {
            g.freed = true;
            return self.free_general_if_done(id);
        }
        if let Some(Request::Persistent(p)) = self.requests.get(id) {
            let place = p.place;
            match (p.active, &p.template) {
                (Some(a), _) => self.orphans.push(a),
                (None, Template::Arrival(lines)) => {
                    let set = lines.set;
                    self.free_kept_lines(set);
                }
                (None, _) => {}
            }
            if let Some(place) = place {
                // (an activation under way is dropped when it completes)
                self.leave_place(place);
            }
            self.requests.remove(id);
            return (0, 0);
        }
        if self.peek_done(id) {
            self.finish(id);
        } else {
            self.orphans.push(id);
        }
        (0, 0)
    }

    /// Remove freed requests that have completed.
    pub(super) fn reap_orphans(&mut self) {
        let mut i = 0;
        while i < self.orphans.len() {
            let id = self.orphans[i];
            if self.peek_done(id) {
                self.finish(id);
                self.orphans.swap_remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// MPI_Send_init and friends: an inactive persistent request.
    pub fn persistent(&mut self, template: Template) -> ReqId {
        let place = matches!(template, Template::Coll(_)).then(|| self.keep_place());
        self.requests.insert(Request::Persistent(Persistent { template, active: None, place }))
    }

    pub fn is_persistent(&self, id: ReqId) -> bool {
        matches!(self.requests.get(id), Some(Request::Persistent(_)))
    }

    /// Start what a template describes (a persistent request's activation,
    /// or a plain nonblocking operation).
    pub fn start_template(&mut self, t: Template) -> MpiResult<ReqId> {
        self.start_template_as(t, super::Alone::No)
    }

    /// The blocking send `t` describes: it completes before this returns,
    /// and while it waits the receiver may have it copy half of a long
    /// message (`protocol::FLAG_HELPS`).
    pub fn send(&mut self, t: Template) -> MpiResult<Status> {
        let id = self.start_template_as(t, super::Alone::Helps)?;
        Ok(self.wait(id))
    }

    /// `start_template`, a send as one of the caller's (`alone`).
    fn start_template_as(&mut self, t: Template, alone: super::Alone) -> MpiResult<ReqId> {
        Ok(match t {
            Template::Send { buf, count, ty, dst, tag, ctx, mode, label } => {
                let a = SendArgs { buf: buf as *const u8, count, ty, dst, tag, ctx, mode, label, sig: None };
                // SAFETY: the user keeps the buffer valid while the request
                // is active (MPI's rule).
                unsafe { self.isend_as(a, alone)? }
            }
            Template::NullRecv => self.null_request(super::null_status()),
            Template::Recv(a) => {
                // SAFETY: as above.
                unsafe { self.irecv(a) }
            }
            Template::Coll(start) => {
                let s = start.lock().unwrap_or_else(|p| p.into_inner()).activation()?;
                self.start_boxed(s)?
            }
            Template::Arrival(lines) => self.start_lines(&lines),
        })
    }

    /// A persistent request that has not been started (or has completed).
    pub fn is_inactive_persistent(&self, id: ReqId) -> bool {
        matches!(self.requests.get(id), Some(Request::Persistent(p)) if p.active.is_none())
    }

    /// MPI_Start.
    pub fn start(&mut self, id: ReqId) -> MpiResult<()> {
        let place = match self.requests.get(id) {
            Some(Request::Persistent(p)) if p.active.is_some() => {
                return err!(Request, "MPI_Start on a persistent request that is already active")
            }
            Some(Request::Persistent(p)) => p.place,
            _ => return err!(Request, "MPI_Start needs a persistent request (from MPI_Send_init, MPI_Recv_init, ...)"),
        };
        // the last activation's schedule again, or what the template starts
        let inner = match place.and_then(|p| self.take_kept(p)) {
            Some(mut again) => {
                again.restart();
                self.start_boxed(again)?
            }
            None => {
                // (looked up above; taking a kept schedule touches no request)
                let Some(Request::Persistent(p)) = self.requests.get(id) else {
                    return err!(Request, "the persistent request is gone");
                };
                let inner = self.start_template(p.template.clone())?;
                if let (Some(place), Some(Request::Schedule(Some(s)))) = (place, self.requests.get_mut(inner)) {
                    s.returns_to(place);
                }
                inner
            }
        };
        if let Some(Request::Persistent(p)) = self.requests.get_mut(id) {
            p.active = Some(inner);
        }
        Ok(())
    }
}
