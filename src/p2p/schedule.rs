//! Schedules: an operation made of steps of point-to-point transfers and
//! local computations, advanced by the progress engine without ever
//! blocking. A computation may add steps (a retry round). MPI_Comm_idup's
//! context-id agreement and every collective run on one: a blocking
//! collective runs its schedule to the end at once (`run_schedule`), a
//! nonblocking one leaves it to progress behind a request.

use super::protocol::Mode;
use super::request::{RecvArgs, ReqId, Request, Status};
use super::{Engine, SendArgs};
use crate::comm::Group;
use crate::error::{MpiError, MpiResult};
use std::collections::VecDeque;

/// Where a schedule kept to run again waits between its runs, with the
/// engine (`Engine::keep_place`): a persistent collective's (`request::
/// Persistent::place`), or a nonblocking collective's that `abi::coll`
/// keeps for the same call again. A finished schedule goes back there
/// (`Engine::retire`) while the place is still held. (Through a shared
/// slot reached by a weak reference, that took a lock, a weak upgrade
/// and an Arc drop a call.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    index: usize,
    /// Which holder of the place (0: none): a schedule of an earlier one,
    /// still under way when the place was given up, is dropped instead.
    token: u64,
}

/// The bytes a transfer moves.
#[derive(Clone, Copy, Debug)]
pub enum Buf {
    /// The schedule's own buffer of this index.
    Own(usize),
    /// `len` bytes at address `addr`: the user's memory or storage the
    /// schedule holds (see `Schedule::hold`), valid until it completes.
    At { addr: usize, len: usize },
}

#[derive(Clone, Copy)]
pub enum Transfer {
    /// Send `buf` to world rank `to`.
    Send { buf: Buf, to: usize },
    /// Receive into `buf` from world rank `from`.
    Recv { buf: Buf, from: usize },
}

/// A local step; the steps it returns run next.
pub type Compute = Box<dyn FnMut(&mut [Vec<u8>]) -> MpiResult<Vec<Step>> + Send>;

pub enum Step {
    Transfers(Vec<Transfer>),
    Compute(Compute),
    /// A local step that runs as soon as the transfers before it are
    /// started, while they move (a local copy overlapping a message).
    Alongside(Compute),
}

pub struct Schedule {
    /// Buffers the transfers use; their heap storage never moves.
    bufs: Vec<Vec<u8>>,
    /// Storage that `Buf::At` transfers and computations point into, kept
    /// alive until the schedule is dropped.
    hold: Vec<Box<dyn Send>>,
    steps: VecDeque<Step>,
    /// The steps run so far, in order, kept when the schedule `repeats`.
    ran: VecDeque<Step>,
    /// It can run again (`restart`): a persistent collective's, whose
    /// steps read no data when built and add none while they run.
    repeats: bool,
    /// Where it goes when its request is freed, to run again (`Engine::
    /// retire`).
    home: Option<Place>,
    ctx: u32,
    tag: i32,
    group: Group,
    /// Transfers of the step under way, and for each receive its source
    /// and length.
    active: Vec<(ReqId, Option<(usize, usize)>)>,
    /// The first failure; the remaining steps still run so that no peer
    /// is left waiting.
    error: Option<MpiError>,
    /// Its number in `FAILURES`, for the request's status (0: none).
    failure: u32,
    done: bool,
    /// For a collective a user started on an intracommunicator: how the
    /// mailboxes and arrival lines would name it (`coll::shm::stamp`),
    /// to notice members that took them (a blocking one) or that gave
    /// them up in it (a nonblocking one, whose members took the arrival
    /// lines: `arrival::Arrival`).
    stamp: Option<u64>,
    /// Run to its end on the caller's stack (`run_schedule`): the rank
    /// does nothing else meanwhile.
    blocking: bool,
    /// How often a nonblocking one was advanced while it waited: now and
    /// then it looks for a source gone to MPI_Finalize (`advance`).
    looks: u32,
}

impl Schedule {
    /// Transfers use context `ctx` and `tag`; `group` maps sources.
    pub fn new(bufs: Vec<Vec<u8>>, steps: Vec<Step>, ctx: u32, tag: i32, group: Group) -> Schedule {
        Schedule {
            bufs,
            hold: Vec::new(),
            steps: steps.into(),
            ran: VecDeque::new(),
            repeats: false,
            home: None,
            ctx,
            tag,
            group,
            active: Vec::new(),
            error: None,
            failure: 0,
            done: false,
            stamp: None,
            blocking: false,
            looks: 0,
        }
    }

    /// The receives of the step under way: request and world rank of
    /// the source.
    fn receives(&self) -> impl Iterator<Item = (ReqId, usize)> + '_ {
        self.active.iter().filter_map(|&(r, recv)| recv.map(|(from, _)| (r, from)))
    }

    /// A collective that the mailboxes would name `stamp` (None: of an
    /// intercommunicator, which never goes there).
    pub fn named(&mut self, stamp: Option<u64>) {
        self.stamp = stamp;
    }

    /// Keep the steps as they run, so that `restart` can run them again.
    pub fn repeating(&mut self) {
        self.repeats = true;
    }

    /// Whether `restart` may run it again (it repeats, and ran to its end).
    pub fn can_restart(&self) -> bool {
        self.repeats && self.done
    }

    /// Once done, go back to `home` to run again (`Engine::retire`).
    pub fn returns_to(&mut self, home: Place) {
        self.home = Some(home);
    }

    /// `restart`, its transfers under a new tag (a nonblocking collective's
    /// next call takes the communicator's next collective tag).
    pub fn restart_tagged(&mut self, tag: i32) {
        self.restart();
        self.tag = tag;
    }

    /// Run the steps again from the first, as new (`can_restart`).
    pub fn restart(&mut self) {
        debug_assert!(self.can_restart() && self.steps.is_empty() && self.active.is_empty());
        std::mem::swap(&mut self.steps, &mut self.ran);
        self.error = None;
        self.failure = 0;
        self.done = false;
    }

    /// A step that has run: kept if the schedule repeats.
    fn ran(&mut self, step: Step) {
        if self.repeats {
            self.ran.push_back(step);
        }
    }

    /// What a computation returned: the steps it adds run next (a
    /// schedule that gains steps no longer repeats), or its failure.
    fn insert(&mut self, more: MpiResult<Vec<Step>>) {
        match more {
            Ok(more) if more.is_empty() => {}
            Ok(more) => {
                self.repeats &= more.is_empty();
                for step in more.into_iter().rev() {
                    self.steps.push_front(step);
                }
            }
            Err(e) => self.fail(e),
        }
    }

    /// Keep `storage` alive as long as the schedule.
    pub fn hold(&mut self, storage: Box<dyn Send>) {
        self.hold.push(storage);
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What the schedule's request reports on completion.
    pub fn status(&self) -> Status {
        Status {
            source: super::PROC_NULL,
            tag: super::ANY_TAG,
            error: self.error.as_ref().map_or(0, |e| e.class.code()),
            failure: self.failure,
            ..Default::default()
        }
    }

    fn fail(&mut self, e: MpiError) {
        if self.error.is_none() {
            self.failure = remember(e.clone());
            self.error = Some(e);
        }
    }

    fn resolve(&mut self, b: Buf) -> (usize, usize) {
        match b {
            Buf::Own(i) => (self.bufs[i].as_mut_ptr() as usize, self.bufs[i].len()),
            Buf::At { addr, len } => (addr, len),
        }
    }
}

/// The errors of failed schedules, so that the completion call that
/// reports one can say what went wrong: a status carries a number for it.
/// The latest few are kept.
static FAILURES: std::sync::Mutex<VecDeque<(u32, MpiError)>> = std::sync::Mutex::new(VecDeque::new());
static NEXT_FAILURE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// Keep `e` for a status to name by the number returned (`failure`).
pub fn remember(e: MpiError) -> u32 {
    let n = NEXT_FAILURE.fetch_add(1, std::sync::atomic::Ordering::Relaxed).max(1);
    let mut f = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
    if f.len() >= 64 {
        f.pop_front();
    }
    f.push_back((n, e));
    n
}

/// The error a status's `failure` number stands for.
pub fn failure(n: u32) -> Option<MpiError> {
    let f = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
    f.iter().find(|(k, _)| *k == n).map(|(_, e)| e.clone())
}

impl Engine {
    /// A place for a schedule to wait between its runs (`Place`), until
    /// `leave_place`.
    pub fn keep_place(&mut self) -> Place {
        self.places_given += 1;
        let token = self.places_given;
        let index = match self.places.iter().position(|(t, _)| *t == 0) {
            Some(i) => i,
            None => {
                self.places.push((0, None));
                self.places.len() - 1
            }
        };
        self.places[index] = (token, None);
        Place { index, token }
    }

    /// Give up place `p`: what waits there is dropped, and so is a
    /// schedule of its that comes back later.
    pub fn leave_place(&mut self, p: Place) {
        if self.places.get(p.index).is_some_and(|&(t, _)| t == p.token) {
            self.places[p.index] = (0, None);
        }
    }

    /// The schedule waiting at place `p`, if one is back.
    pub fn take_kept(&mut self, p: Place) -> Option<Box<Schedule>> {
        match self.places.get_mut(p.index) {
            Some((t, s)) if *t == p.token => s.take(),
            _ => None,
        }
    }

    /// Schedule `s`'s request is freed: it goes back to its place if it
    /// can run again and the place is still held, else it is dropped.
    pub(super) fn retire(&mut self, s: Box<Schedule>) {
        let Some(p) = s.home.filter(|_| s.can_restart()) else { return };
        if let Some((t, at)) = self.places.get_mut(p.index) {
            if *t == p.token {
                *at = Some(s);
            }
        }
    }

    /// Start a schedule; its request completes when its last step has run.
    pub fn start_schedule(&mut self, s: Schedule) -> MpiResult<ReqId> {
        self.start_boxed(Box::new(s))
    }

    /// `start_schedule` of a schedule already on the heap.
    pub fn start_boxed(&mut self, mut s: Box<Schedule>) -> MpiResult<ReqId> {
        self.drive(&mut s);
        let done = s.done;
        let id = self.requests.insert(Request::Schedule(Some(s)));
        if !done && !self.schedules.contains(&id) {
            self.schedules.push(id);
        }
        Ok(id)
    }

    /// Run a schedule to its end (a blocking collective): on this stack,
    /// no request made for it.
    pub fn run_schedule(&mut self, mut s: Schedule) -> MpiResult<()> {
        let mut backoff = crate::runtime::backoff::Backoff::new();
        let mut round = 0u32;
        s.blocking = true;
        loop {
            self.drive(&mut s);
            if s.done {
                return s.error.map_or(Ok(()), Err);
            }
            self.progress();
            if !s.active.iter().all(|&(r, _)| self.peek_done(r)) {
                round = round.wrapping_add(1);
                if round.is_multiple_of(super::waits::ASTRAY_EVERY) {
                    let astray = s.stamp.and_then(|stamp| self.out_of_step(stamp, &s.group));
                    if let Some(e) = astray.or_else(|| self.left_for_finalize(s.receives())) {
                        self.abandon(s, e.clone());
                        return Err(e);
                    }
                }
                self.idle(&mut backoff);
            }
        }
    }

    /// Give up `s`, failed with `e`: its receives are withdrawn and its
    /// sends asked back, and it stays with the engine, holding the memory
    /// its sends read, until they are done.
    fn abandon(&mut self, mut s: Schedule, e: MpiError) {
        self.give_up_steps(&mut s, e);
        let id = self.requests.insert(Request::Schedule(Some(Box::new(s))));
        self.schedules.push(id);
        self.orphans.push(id);
    }

    /// Fail `s` with `e`: its receives withdrawn, its sends asked back,
    /// no step after them.
    fn give_up_steps(&mut self, s: &mut Schedule, e: MpiError) {
        for &(r, _) in &s.active {
            self.cancel(r);
        }
        s.steps.clear();
        s.repeats = false;
        s.fail(e);
    }

    /// Advance schedule request `id` (taken out of its slot meanwhile).
    fn advance(&mut self, id: ReqId) {
        let Some(Request::Schedule(slot)) = self.requests.get_mut(id) else { return };
        let Some(mut s) = slot.take() else { return };
        if let Some(stamp) = s.stamp.filter(|_| !s.done) {
            // a member that took the arrival lines found this operation
            // out of step there and gave the mailboxes up in it: no part
            // of its will come (a load of one word, rarely written)
            if let Some(e) = self.given_up_in(stamp) {
                self.give_up_steps(&mut s, e);
            }
        }
        if !s.done && s.error.is_none() {
            s.looks = s.looks.wrapping_add(1);
            if s.looks.is_multiple_of(super::waits::ASTRAY_EVERY) {
                if let Some(e) = self.left_for_finalize(s.receives()) {
                    self.give_up_steps(&mut s, e);
                }
            }
        }
        self.drive(&mut s);
        if let Some(Request::Schedule(slot)) = self.requests.get_mut(id) {
            *slot = Some(s);
        }
    }

    /// Run the steps of `s` that can run now.
    fn drive(&mut self, s: &mut Schedule) {
        loop {
            if s.done || !s.active.iter().all(|&(r, _)| self.peek_done(r)) {
                return;
            }
            // (by index: the list keeps its room for the next step)
            for i in 0..s.active.len() {
                let (r, recv) = s.active[i];
                let from = recv.map(|(f, _)| f);
                let st = self.finish(r);
                if st.error != 0 && st.error != crate::error::ErrorClass::Truncate.code() {
                    // a message that could not be copied: said on stderr
                    // where it failed; the operation must not report success
                    let with = from.map_or("a send".to_string(), |f| format!("a receive from world rank {f}"));
                    s.fail(MpiError::new(crate::error::ErrorClass::Other, format!("{with} failed")));
                }
                if let (Some(from), true) = (from, st.sent_bytes > st.bytes) {
                    s.fail(MpiError::new(
                        crate::error::ErrorClass::Truncate,
                        format!(
                            "world rank {from} sent {} bytes where {} were expected (send and receive type signatures differ)",
                            st.sent_bytes, st.bytes
                        ),
                    ));
                }
                // the members of a collective move equal amounts pairwise
                if let Some((from, len)) = recv.filter(|&(_, len)| st.error == 0 && st.sent_bytes < len) {
                    s.fail(MpiError::new(
                        crate::error::ErrorClass::Count,
                        format!(
                            "world rank {from} sent {} bytes where {len} were expected (the ranks' counts and datatypes differ in size)",
                            st.sent_bytes
                        ),
                    ));
                }
            }
            s.active.clear();
            let Some(mut step) = s.steps.pop_front() else {
                s.done = true;
                return;
            };
            let moving = match &mut step {
                Step::Compute(f) | Step::Alongside(f) => {
                    let more = f(&mut s.bufs);
                    s.insert(more);
                    false
                }
                Step::Transfers(ts) => {
                    self.post(s, ts);
                    true
                }
            };
            s.ran(step);
            // the local steps that run while the transfers move
            while moving && matches!(s.steps.front(), Some(Step::Alongside(_))) {
                if let Some(mut next) = s.steps.pop_front() {
                    if let Step::Alongside(f) = &mut next {
                        let more = f(&mut s.bufs);
                        s.insert(more);
                    }
                    s.ran(next);
                }
            }
        }
    }

    /// Post the transfers of one step of `s`.
    fn post(&mut self, s: &mut Schedule, ts: &[Transfer]) {
        s.active.reserve(ts.len());
        // a blocking collective's lone send waits for nothing
        // else: its receiver may have it copy half
        // (`protocol::FLAG_HELPS`); with several, the receivers
        // read at once rather than wait for its writes in turn, and
        // so does the receiver of one that a local copy goes beside
        // (a Scatter's root copies its own block meanwhile); several
        // beside receives fan out (`Alone::Fan`)
        let sends = ts.iter().filter(|t| matches!(t, Transfer::Send { .. })).count();
        let alone = if s.blocking && sends == 1 && ts.len() == 1 && !matches!(s.steps.front(), Some(Step::Alongside(_)))
        {
            super::Alone::Helps
        } else if sends > 1 && sends < ts.len() {
            super::Alone::Fan
        } else {
            super::Alone::No
        };
        for &t in ts {
            let (send, (addr, len), peer) = match t {
                Transfer::Send { buf, to } => (true, s.resolve(buf), to),
                Transfer::Recv { buf, from } => (false, s.resolve(buf), from),
            };
            let byte = crate::datatype::byte();
            // SAFETY: the buffers are the schedule's own, storage
            // it holds, or user memory the user keeps valid until
            // the operation completes (MPI's rule).
            unsafe {
                if send {
                    let a = SendArgs {
                        buf: addr as *const u8,
                        count: len,
                        ty: byte,
                        dst: Some(peer),
                        tag: s.tag,
                        ctx: s.ctx,
                        mode: Mode::Standard,
                        label: 0,
                        sig: None,
                    };
                    match self.isend_as(a, alone) {
                        Ok(r) => s.active.push((r, None)),
                        Err(e) => s.fail(e),
                    }
                } else {
                    let r = self.irecv(RecvArgs {
                        buf: addr,
                        count: len,
                        ty: byte,
                        src: Some(peer),
                        tag: Some(s.tag),
                        ctx: s.ctx,
                        group: s.group.clone(),
                        label: 0,
                    });
                    s.active.push((r, Some((peer, len))));
                }
            }
        }
    }

    /// Advance every live schedule (from `progress`).
    /// Called at every poll of a wait: allocates nothing.
    pub(super) fn advance_schedules(&mut self) {
        let mut ids = std::mem::take(&mut self.schedules);
        ids.retain(|&id| {
            self.advance(id);
            matches!(self.requests.get(id), Some(Request::Schedule(Some(s))) if !s.is_done())
        });
        // those started meanwhile (by a computation's step) after them
        ids.append(&mut self.schedules);
        self.schedules = ids;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schedule with no steps, that can run again, kept at `place`.
    fn kept_at(place: Place) -> Box<Schedule> {
        let mut s = Schedule::new(Vec::new(), Vec::new(), 1, 0, Group::World(1));
        s.repeating();
        s.returns_to(place);
        Box::new(s)
    }

    #[test]
    fn kept_schedules_go_back_to_their_place_while_it_is_held() {
        let mut e = super::super::waits::tests::engine();
        let p = e.keep_place();
        let id = e.start_boxed(kept_at(p)).unwrap();
        assert!(e.take_kept(p).is_none(), "nothing there before it completes");
        assert!(e.test(id).is_some());
        let mut s = e.take_kept(p).expect("back at its place once completed");
        assert!(e.take_kept(p).is_none(), "taken");
        // run again, and the place given up meanwhile: it is dropped, and
        // the place given anew (its index again) does not take it
        s.restart();
        let id = e.start_boxed(s).unwrap();
        e.leave_place(p);
        let q = e.keep_place();
        assert_eq!(q.index, p.index);
        assert!(e.test(id).is_some());
        assert!(e.take_kept(q).is_none() && e.take_kept(p).is_none());
        // a schedule that cannot run again (it gained steps, or never
        // repeated) is not kept
        let mut once = kept_at(q);
        once.repeats = false;
        let id = e.start_boxed(once).unwrap();
        assert!(e.test(id).is_some());
        assert!(e.take_kept(q).is_none());
        // a persistent collective builds its schedule once and runs it at
        // every start; freed, it gives its place up
        let built = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = built.clone();
        let starter = super::super::request::Starter::new(move || {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut s = Schedule::new(Vec::new(), Vec::new(), 1, 0, Group::World(1));
            s.repeating();
            Ok(s)
        });
        let coll = super::super::request::Template::Coll(std::sync::Arc::new(std::sync::Mutex::new(starter)));
        let pers = e.persistent(coll);
        for _ in 0..3 {
            e.start(pers).unwrap();
            assert!(e.test(pers).is_some());
        }
        assert_eq!(built.load(std::sync::atomic::Ordering::Relaxed), 1, "built once, run three times");
        let at = e.places.iter().filter(|(t, _)| *t != 0).count();
        e.free(pers);
        assert_eq!(e.places.iter().filter(|(t, _)| *t != 0).count(), at - 1, "its place given up");
        // places in use are not given twice
        let r = e.keep_place();
        assert_ne!(r.index, q.index);
        e.leave_place(q);
        e.leave_place(r);
    }
}
