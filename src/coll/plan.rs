//! A plan: the steps of one collective operation on one rank, built by
//! the algorithms in `algo` and run as a `p2p::schedule::Schedule`, to the
//! end at once (blocking) or behind a request (nonblocking, persistent).
//! Ranks are the communicator's (for an intercommunicator, the local
//! group's); transfers to an intercommunicator's remote group go through
//! `send_remote`/`recv_remote`.

use super::Scratch;
use crate::comm::{Comm, Group};
use crate::error::MpiResult;
use crate::p2p::schedule::{Buf, Schedule, Step, Transfer};

/// `len` bytes at address `addr`: the user's memory or a held scratch
/// buffer, valid until the operation completes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Block {
    pub addr: usize,
    pub len: usize,
}

impl Block {
    pub const EMPTY: Block = Block { addr: 0, len: 0 };

    pub fn new(addr: *const u8, len: usize) -> Block {
        Block { addr: addr as usize, len }
    }

    /// # Safety
    /// The block must be valid memory for its length, not written meanwhile.
    pub unsafe fn bytes<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: per the caller's contract.
        unsafe { std::slice::from_raw_parts(self.addr as *const u8, self.len) }
    }

    /// # Safety
    /// The block must be valid memory for its length, used by no one else.
    pub unsafe fn bytes_mut<'a>(self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: per the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.addr as *mut u8, self.len) }
    }

    /// Copy this block into `to` (the shorter length).
    ///
    /// # Safety
    /// Both blocks valid, not overlapping.
    pub unsafe fn copy_to(self, to: Block) {
        let n = self.len.min(to.len);
        if n > 0 {
            // SAFETY: per the caller's contract.
            unsafe { std::ptr::copy_nonoverlapping(self.addr as *const u8, to.addr as *mut u8, n) };
        }
    }
}

pub struct Plan {
    group: Group,
    /// An intercommunicator's remote group.
    remote: Option<Group>,
    /// This rank and the number of ranks the algorithms work among.
    pub me: usize,
    pub n: usize,
    steps: Vec<Step>,
    hold: Vec<Scratch>,
    /// Its steps can run again as they are (`into_persistent`): it
    /// copied no data when built (`keep`) and has no `then` step.
    again: bool,
    /// The last step added is transfers (`step` of some), which an
    /// `alongside` step runs beside.
    moving: bool,
}

impl Plan {
    /// A plan among the local group of `c`.
    pub fn new(c: &Comm) -> Plan {
        Plan::among(c.group.clone(), c.rank)
    }

    /// A plan among `group`, where this rank is `me`.
    pub fn among(group: Group, me: usize) -> Plan {
        Plan {
            n: group.size(),
            group,
            remote: None,
            me,
            steps: Vec::new(),
            hold: Vec::new(),
            again: true,
            moving: false,
        }
    }

    /// A plan on an intercommunicator: the local `group` (where this rank
    /// is `me`) and the `remote` group.
    pub fn between(group: Group, me: usize, remote: Group) -> Plan {
        Plan { remote: Some(remote), ..Plan::among(group, me) }
    }

    /// The size of the remote group (0 on an intracommunicator).
    pub fn remote_size(&self) -> usize {
        self.remote.as_ref().map_or(0, Group::size)
    }

    /// A send to rank `to` of the remote group.
    pub fn send_remote(&self, b: Block, to: usize) -> Transfer {
        self.send_to_world(b, self.remote.as_ref().expect("an intercommunicator").world_rank(to))
    }

    /// A receive from rank `from` of the remote group.
    pub fn recv_remote(&self, b: Block, from: usize) -> Transfer {
        self.recv_from_world(b, self.remote.as_ref().expect("an intercommunicator").world_rank(from))
    }

    pub fn send(&self, b: Block, to: usize) -> Transfer {
        self.send_to_world(b, self.group.world_rank(to))
    }

    pub fn recv(&self, b: Block, from: usize) -> Transfer {
        self.recv_from_world(b, self.group.world_rank(from))
    }

    fn send_to_world(&self, b: Block, to: usize) -> Transfer {
        Transfer::Send { buf: Buf::At { addr: b.addr, len: b.len }, to }
    }

    fn recv_from_world(&self, b: Block, from: usize) -> Transfer {
        Transfer::Recv { buf: Buf::At { addr: b.addr, len: b.len }, from }
    }

    /// A step: these transfers at once, all complete before the next step.
    pub fn step(&mut self, ts: Vec<Transfer>) {
        self.moving = !ts.is_empty();
        if self.moving {
            self.steps.push(Step::Transfers(ts));
        }
    }

    /// A local step.
    pub fn compute(&mut self, mut f: impl FnMut() -> MpiResult<()> + Send + 'static) {
        self.moving = false;
        self.steps.push(Step::Compute(Box::new(move |_| f().map(|_| Vec::new()))));
    }

    /// A local step that runs while the transfers of the step before it
    /// move (it must not touch their buffers); after a step of none (a
    /// plan of one rank), once every step before it is done, as
    /// `compute`: it must not run beside earlier steps' transfers, whose
    /// data it may read.
    pub fn alongside(&mut self, mut f: impl FnMut() -> MpiResult<()> + Send + 'static) {
        if !self.moving {
            return self.compute(f);
        }
        self.steps.push(Step::Alongside(Box::new(move |_| f().map(|_| Vec::new()))));
    }

    /// `alongside`, placed after the step numbered `at` (from 0; see
    /// `steps`) rather than at the end.
    pub fn alongside_after(&mut self, at: usize, mut f: impl FnMut() -> MpiResult<()> + Send + 'static) {
        self.steps.insert(at + 1, Step::Alongside(Box::new(move |_| f().map(|_| Vec::new()))));
    }

    /// How many steps the plan has so far.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// A local step that decides what follows: the steps it returns, or
    /// none (and the operation fails) when it returns an error.
    pub fn then(&mut self, f: impl FnMut() -> MpiResult<Vec<Step>> + Send + 'static) {
        let mut f = f;
        self.again = false;
        self.moving = false;
        self.steps.push(Step::Compute(Box::new(move |_| f())));
    }

    /// The steps so far, taken out of the plan.
    pub fn take_steps(&mut self) -> Vec<Step> {
        self.moving = false;
        std::mem::take(&mut self.steps)
    }

    /// A buffer of `len` bytes, held until the plan is done, for data the
    /// plan writes before it reads it (its contents start unspecified).
    pub fn scratch(&mut self, len: usize) -> Block {
        self.hold_scratch(Scratch::for_overwrite(len))
    }

    /// Hold `s`, data copied now (a packed send buffer), until the plan is
    /// done; its block.
    pub fn keep(&mut self, s: Scratch) -> Block {
        self.again = false;
        self.hold_scratch(s)
    }

    fn hold_scratch(&mut self, mut s: Scratch) -> Block {
        let b = Block::new(s.as_mut_ptr(), s.len());
        self.hold.push(s);
        b
    }

    /// The schedule that runs the plan with context `ctx` and `tag`,
    /// holding the plan's buffers.
    pub fn into_schedule(self, ctx: u32, tag: i32) -> Schedule {
        let (mut s, hold) = self.into_parts(ctx, tag);
        if !hold.is_empty() {
            s.hold(Box::new(hold));
        }
        s
    }

    /// The bytes of the buffers it holds (`scratch`, `keep`).
    pub fn held_bytes(&self) -> usize {
        self.hold.iter().map(|s| s.len()).sum()
    }

    /// Whether its steps can run again as they are (see `again`).
    pub fn again(&self) -> bool {
        self.again
    }

    /// `into_schedule` for a persistent collective: its steps are kept to
    /// run again at the next start when the plan allows it (`again`).
    pub fn into_persistent(self, ctx: u32, tag: i32) -> Schedule {
        let again = self.again;
        let mut s = self.into_schedule(ctx, tag);
        if again {
            s.repeating();
        }
        s
    }

    /// The schedule and, apart, the buffers it uses, which the caller
    /// keeps alive until the schedule is done (a blocking collective
    /// keeps them on its stack).
    pub fn into_parts(self, ctx: u32, tag: i32) -> (Schedule, Vec<Scratch>) {
        (Schedule::new(Vec::new(), self.steps, ctx, tag, self.group), self.hold)
    }
}
