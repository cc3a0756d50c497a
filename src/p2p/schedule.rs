//! Schedules: an operation made of steps of point-to-point transfers and
//! local computations, advanced by the progress engine without ever
//! blocking. A computation may add steps (a retry round). MPI_Comm_idup's
//! context-id agreement runs on one; nonblocking collectives will too.

use super::protocol::Mode;
use super::request::{ReqId, Request, Status};
use super::{Engine, SendArgs};
use crate::comm::Group;
use crate::error::MpiResult;
use std::collections::VecDeque;

pub enum Transfer {
    /// Send buffer `buf` to world rank `to`.
    Send { buf: usize, to: usize },
    /// Receive into buffer `buf` from world rank `from`.
    Recv { buf: usize, from: usize },
}

/// A local step; the steps it returns run next.
pub type Compute = Box<dyn FnMut(&mut [Vec<u8>]) -> Vec<Step> + Send>;

pub enum Step {
    Transfers(Vec<Transfer>),
    Compute(Compute),
}

pub struct Schedule {
    /// Buffers the transfers use; their heap storage never moves.
    bufs: Vec<Vec<u8>>,
    steps: VecDeque<Step>,
    ctx: u32,
    tag: i32,
    group: Group,
    /// Transfers of the step under way.
    active: Vec<ReqId>,
    done: bool,
}

impl Schedule {
    /// Transfers use context `ctx` and `tag`; `group` maps sources.
    pub fn new(bufs: Vec<Vec<u8>>, steps: Vec<Step>, ctx: u32, tag: i32, group: Group) -> Schedule {
        Schedule { bufs, steps: steps.into(), ctx, tag, group, active: Vec::new(), done: false }
    }

    pub fn is_done(&self) -> bool {
        self.done
    }
}

/// The status a completed schedule reports.
pub fn schedule_status() -> Status {
    Status { source: super::PROC_NULL, tag: super::ANY_TAG, ..Default::default() }
}

impl Engine {
    /// Start a schedule; its request completes when its last step has run.
    pub fn start_schedule(&mut self, s: Schedule) -> MpiResult<ReqId> {
        let id = self.requests.insert(Request::Schedule(Box::new(s)));
        self.schedules.push(id);
        self.advance(id)?;
        Ok(id)
    }

    /// Run the steps of schedule `id` that can run now.
    fn advance(&mut self, id: ReqId) -> MpiResult<()> {
        loop {
            let Some(Request::Schedule(s)) = self.requests.get_mut(id) else { return Ok(()) };
            let active = std::mem::take(&mut s.active);
            if !active.iter().all(|&r| self.peek_done(r)) {
                if let Some(Request::Schedule(s)) = self.requests.get_mut(id) {
                    s.active = active;
                }
                return Ok(());
            }
            for r in active {
                self.finish(r);
            }
            let Some(Request::Schedule(s)) = self.requests.get_mut(id) else { return Ok(()) };
            match s.steps.pop_front() {
                None => {
                    s.done = true;
                    return Ok(());
                }
                Some(Step::Compute(mut f)) => {
                    for step in f(&mut s.bufs).into_iter().rev() {
                        s.steps.push_front(step);
                    }
                }
                Some(Step::Transfers(ts)) => {
                    let (ctx, tag, group) = (s.ctx, s.tag, s.group.clone());
                    let plans: Vec<(bool, usize, usize, usize)> = ts
                        .iter()
                        .map(|t| match *t {
                            Transfer::Send { buf, to } => (true, s.bufs[buf].as_ptr() as usize, s.bufs[buf].len(), to),
                            Transfer::Recv { buf, from } => {
                                (false, s.bufs[buf].as_mut_ptr() as usize, s.bufs[buf].len(), from)
                            }
                        })
                        .collect();
                    let mut started = Vec::with_capacity(plans.len());
                    for (send, addr, len, peer) in plans {
                        let byte = crate::datatype::byte();
                        // SAFETY: the buffers belong to the schedule, whose
                        // heap storage stays put until it completes.
                        let r = unsafe {
                            if send {
                                let a = SendArgs {
                                    buf: addr as *const u8,
                                    count: len,
                                    ty: byte,
                                    dst: Some(peer),
                                    tag,
                                    ctx,
                                    mode: Mode::Standard,
                                    label: 0,
                                    sig: None,
                                };
                                self.isend(a)?
                            } else {
                                self.irecv(addr as *mut u8, len, byte, Some(peer), Some(tag), ctx, group.clone(), 0)
                            }
                        };
                        started.push(r);
                    }
                    if let Some(Request::Schedule(s)) = self.requests.get_mut(id) {
                        s.active = started;
                    }
                }
            }
        }
    }

    /// Advance every live schedule (from `progress`).
    pub(super) fn advance_schedules(&mut self) {
        let ids = std::mem::take(&mut self.schedules);
        let mut keep = Vec::with_capacity(ids.len());
        for id in ids {
            let _ = self.advance(id);
            if matches!(self.requests.get(id), Some(Request::Schedule(s)) if !s.is_done()) {
                keep.push(id);
            }
        }
        self.schedules.extend(keep);
    }
}
