//! Barriers of the whole world on one host by arrival counts: each rank
//! counts the world barriers it has entered on its doorbell's wait line
//! (`Segment::arrive`), and leaves once every other rank's count has
//! reached its own. The counts only grow, so no slot is reused and no
//! read needs counting; the line is the one a crowded host's waits write
//! (`park`) and read (`core_spare`) anyway, so a barrier costs a rank one
//! line per peer, as the machine's floor (`c-tests/bench/floor.c`,
//! `core_barrier`) does, where a publication in the short mailboxes
//! costs a slot's header, a count of publications and a read mark.
//!
//! It serves every communicator whose group is the whole world in world
//! order (MPI_COMM_WORLD and its duplicates) with one count: a program
//! whose barriers on two of them do not come in one order on every rank
//! deadlocks by the standard (each barrier waits for the others' part),
//! so in a correct one the n-th world barrier of every rank is the same.
//! A rank that called another collective where this one called the
//! barrier is noticed from either side, as in the mailboxes: its part of
//! the operation in its mailboxes or as messages, or (for a rank waiting
//! in the mailboxes) the barrier's operation on the arrival line.

use super::Engine;
use crate::err;
use crate::error::MpiResult;

impl Engine {
    /// Whether a barrier of `group`, whose ranks are all on this host,
    /// goes by arrival counts: it is the whole world in world order.
    pub fn barrier_by_arrivals(&self, group: &crate::comm::Group) -> bool {
        matches!(group, crate::comm::Group::World(n) if *n == self.size)
    }

    /// A barrier of the whole world (see the module's comment); `stamp`
    /// names the operation, as a short collective's (`coll::shm::stamp`).
    pub fn barrier_by_arrivals_now(&mut self, stamp: u64) -> MpiResult<()> {
        self.world_barriers += 1;
        let n = self.world_barriers;
        self.seg.arrive(n, stamp);
        let me = self.seg.me;
        for q in (0..self.seg.nranks).filter(|&q| q != me) {
            self.seg.ring_bell(q);
        }
        let (ctx, tag) = ((stamp >> 32) as u32, super::mailbox::user_tag(stamp as u32));
        for q in (0..self.seg.nranks).filter(|&q| q != me) {
            if self.seg.arrived(q) >= n {
                continue;
            }
            let what = || format!("local rank {q} to enter world barrier {n} (collective {stamp:#x})");
            // a rank in another collective of this operation
            let astray = |e: &Engine| e.published_operation(q, stamp) || e.messages_of(ctx, tag).is_some();
            let elsewhere =
                self.wait_parked(&what, |seg| seg.arrived(q) >= n, |e| astray(e).then_some(()), q, stamp)?;
            if elsewhere.is_some() {
                self.give_up_mailboxes(stamp);
                return err!(
                    Other,
                    "local rank {q} called another collective where this rank called MPI_Barrier: the ranks of a communicator must call the same collectives in the same order"
                );
            }
        }
        Ok(())
    }
}
