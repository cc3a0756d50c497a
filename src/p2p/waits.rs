//! The waits of the collectives through shared memory (the mailboxes,
//! `mailbox`, and the arrival lines, `arrival`), and how a rank notices
//! that the members of one are out of step: a writer it awaits took the
//! other path (its part of another size, or another collective), or a
//! member gave the mailboxes up. Such a wait ends with an error on every
//! member instead of a hang; from then on the host's collectives go as
//! point-to-point messages.

use super::mailbox::{seen, Boxes, OPERATION};
use super::request::{RecvState, ReqId, Request};
use super::Engine;
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime::backoff::Backoff;
use crate::transport::shm::Segment;
use std::sync::atomic::Ordering;

/// How many idle rounds (looks, for a reader's full look at every slot)
/// a wait lets pass between checks for what its usual look cannot see:
/// its writer having taken the other path, members out of step, a
/// publication older than the one read last (that one also waits for
/// `mailbox::FULL_LOOK_EVERY`), a read whose mark is owed; once the wait
/// sleeps, at every wake-up.
pub(super) const ASTRAY_EVERY: u32 = 64;

impl Engine {
    /// Make progress until `done` holds, or until `astray` (looked at now
    /// and then) says what will never let `done` hold: then Some(what it
    /// said); `what` names the wait for the SIGUSR2 dump. Fails once the
    /// mailboxes are given up (`give_up_mailboxes`). `parked`: the
    /// wait is for a short publication of (local rank, operation), and
    /// this rank is parked (`Segment::park`): it spins on while its core
    /// is spare (`Segment::core_spare`).
    pub(super) fn wait_unless<T>(
        &mut self,
        what: &dyn Fn() -> String,
        done: impl Fn(&Segment) -> bool,
        astray: impl Fn(&Engine) -> Option<T>,
        parked: Option<(usize, u64)>,
    ) -> MpiResult<Option<T>> {
        let mut backoff = Backoff::new();
        let mut round = 0u32;
        loop {
            round = round.wrapping_add(1);
            if done(&self.seg) {
                return Ok(None);
            }
            // (not before the first idle: a wait that its first yield
            // ends, as most on a crowded host do, touches no ring; a longer
            // one moves messages from its second poll on)
            if round > 1 {
                self.progress();
                if done(&self.seg) {
                    return Ok(None);
                }
            }
            if round.is_multiple_of(ASTRAY_EVERY) || backoff.sleeps() {
                // what says `done` will never hold (the writer on another
                // path, the mailboxes given up) may have come after it did:
                // a writer that published what we await and went on to
                // its next step (an alltoallv's pieces in the other
                // mailbox), members that finished this operation and gave
                // the mailboxes up in a later one. Seen that, `done` is
                // looked at once more: what it waits for came first.
                let astray = astray(self);
                let spoilt = self.seg.spoilt() != 0;
                if (astray.is_some() || spoilt) && done(&self.seg) {
                    return Ok(None);
                }
                if astray.is_some() {
                    return Ok(astray);
                }
                if spoilt {
                    return err!(
                        Other,
                        "a collective through shared memory was abandoned: another rank found its ranks passing counts or datatypes of different sizes (collectives use point-to-point messages from now on)"
                    );
                }
            }
            self.idle_unless(&mut backoff, || Some(what()), &done, parked);
        }
    }

    /// `wait_unless` for local rank `writer`'s part of the short
    /// collective `stamp`, this rank's own part given: on a host with
    /// more ranks than cores (at least two) the rank parks meanwhile
    /// (`Segment::park`), so that its core's other ranks know it needs
    /// nothing more of them.
    pub(super) fn wait_parked<T>(
        &mut self,
        what: &dyn Fn() -> String,
        done: impl Fn(&Segment) -> bool,
        astray: impl Fn(&Engine) -> Option<T>,
        writer: usize,
        stamp: u64,
    ) -> MpiResult<Option<T>> {
        let parked = crate::runtime::backoff::spare_cores_help().then_some((writer, stamp & OPERATION));
        if let Some((_, op)) = parked {
            self.seg.park(op);
        }
        let got = self.wait_unless(what, done, astray, parked);
        if parked.is_some() {
            self.seg.park(0);
        }
        got
    }

    /// Whether local rank `local` published the operation of `stamp` in
    /// either of its mailboxes: Some(the size of its stream there).
    pub(super) fn published_operation(&self, local: usize, stamp: u64) -> Option<usize> {
        [Boxes::Short, Boxes::Long].into_iter().find_map(|kind| {
            (0..kind.slots()).map(|k| self.seg.mailbox(kind, local, k)).find_map(|m| {
                (m.stamp.load(Ordering::Acquire) & OPERATION == stamp & OPERATION).then(|| seen(kind, &m).stream)
            })
        })
    }

    /// The world rank that sent a message of collective context `ctx`
    /// and tag `tag` (a collective's part going point-to-point).
    pub(super) fn messages_of(&self, ctx: u32, tag: i32) -> Option<usize> {
        self.queues.unexpected().find(|u| u.env.ctx == ctx && u.env.tag == tag).map(|u| u.env.src)
    }

    /// In operation `stamp`, this rank found the members of a collective
    /// out of step (passing counts of different sizes, some of them took
    /// the other path or go in pieces that no longer pair up): any of them
    /// may wait for a publication that never comes. Every wait in the
    /// mailboxes then fails, and no later collective of this host uses
    /// them (a member that comes to this operation late still does, as
    /// the others did).
    pub fn give_up_mailboxes(&self, stamp: u64) {
        self.seg.spoil(stamp & OPERATION);
        self.seg.ring_bells(0..self.seg.nranks);
    }

    /// MPI_Finalize begins on this rank: the read marks it owes stored
    /// first, then the word that it called it (`Segment::enter_finalize`),
    /// so that a member on this host still waiting for it in a collective
    /// (`finalized_instead`, `left_for_finalize`) fails instead of waiting
    /// for ever.
    pub fn enter_finalize(&mut self) {
        if self.owes_marks() {
            self.store_marks();
        }
        self.seg.enter_finalize();
    }

    /// MPI_ERR_OTHER where local rank `q` called MPI_Finalize (seen first:
    /// all it did before is visible) and what this rank waits for from it
    /// in a collective, `done`, still does not hold: it never will. Such a
    /// program is erroneous (the standard's MPI_Finalize: a process
    /// completes all its communication first), and MPICH and Open MPI
    /// hang there. `what` names the wait: "taking part in ...".
    pub(super) fn finalized_instead(
        &self,
        q: usize,
        done: impl FnOnce(&Segment) -> bool,
        what: &str,
    ) -> Option<MpiError> {
        (self.seg.finalized(q) && !done(&self.seg)).then(|| {
            let r = self.world_of_local(q);
            MpiError::new(
                ErrorClass::Other,
                format!("world rank {r} called MPI_Finalize without {what}: the ranks of a communicator must call the same collectives in the same order"),
            )
        })
    }

    /// A collective going as point-to-point messages (blocking, or one
    /// this rank started) still waits on `receives` (request, world rank
    /// of its source): one still unmatched whose source on this host
    /// called MPI_Finalize, with no frame of its left in our ring, is never
    /// filled (`finalized_instead`): a rank completes its collectives
    /// before MPI_Finalize, and a collective's sends complete once their
    /// frames are in the receiver's ring (a send queued for room is done
    /// when it goes out). (One matched may still be moving a long
    /// message's data, which its sender has seen through.) Not while this
    /// rank is in MPI_Finalize itself, whose barrier waits for ranks that
    /// are in it too.
    pub(super) fn left_for_finalize(&self, receives: impl Iterator<Item = (ReqId, usize)>) -> Option<MpiError> {
        if self.seg.finalized(self.seg.me) {
            return None;
        }
        receives.filter(|&(_, src)| self.is_local(src)).find_map(|(id, src)| {
            let q = self.local_index(src);
            let unmatched =
                matches!(self.requests.get(id), Some(Request::Recv(r)) if matches!(r.state, RecvState::Posted));
            let sent = |seg: &Segment| seg.ring(q, seg.me).peek().is_some() || !unmatched;
            self.finalized_instead(q, sent, "sending its part of this collective")
        })
    }

    /// A member gave the mailboxes and lines up in operation `stamp`
    /// (`give_up_mailboxes`): the error of a nonblocking collective of it
    /// still waiting (on the lines, or for messages its members on the
    /// lines will never send).
    pub(super) fn given_up_in(&self, stamp: u64) -> Option<MpiError> {
        let spoilt = self.seg.spoilt();
        (spoilt != 0 && spoilt == stamp & OPERATION).then(|| {
            MpiError::new(
                ErrorClass::Other,
                "another rank found the ranks of this collective out of step on the shared-memory path (another collective, or parts of other sizes) and gave it up: the ranks of a communicator must call the same collectives in the same order, with matching counts",
            )
        })
    }

    /// Whether the collective `stamp` may use the mailboxes (and lines of
    /// set `lines`, where it would go on them): they were not given up
    /// before it (`give_up_mailboxes`), or it is the operation they were
    /// given up in, or this rank's part of the collective on those arrival
    /// lines in which they were (`meets_failed_arrival`).
    pub fn mailboxes_usable(&self, stamp: u64, lines: super::arrival::LineSet) -> bool {
        let spoilt = self.seg.spoilt();
        spoilt == 0 || spoilt == stamp & OPERATION || self.meets_failed_arrival(lines)
    }

    /// A blocking collective going as point-to-point messages, whose
    /// operation the mailboxes would name `stamp`, waits: a member on this
    /// host that published the same operation in its mailboxes took the
    /// shared-memory path (its part is smaller) and will never send, and a
    /// member that gave the mailboxes up in this operation found the
    /// parts' sizes differing. Some(what to say) then, and the mailboxes
    /// are given up.
    pub(super) fn out_of_step(&self, stamp: u64, members: &crate::comm::Group) -> Option<MpiError> {
        let ours = |s: u64| s & OPERATION == stamp;
        let spoilt = self.seg.spoilt();
        if spoilt != 0 {
            return ours(spoilt).then(|| {
                MpiError::new(
                    ErrorClass::Count,
                    "another rank found the ranks of this collective passing counts or datatypes of different sizes",
                )
            });
        }
        let member = (0..members.size())
            .map(|i| members.world_rank(i))
            .filter(|&r| r != self.rank && self.is_local(r))
            .find(|&r| self.published_operation(self.local_index(r), stamp).is_some())?;
        self.give_up_mailboxes(stamp);
        Some(MpiError::new(
            ErrorClass::Count,
            format!("world rank {member} took this collective through shared memory, which it does when its part is smaller, while this rank's part went as point-to-point messages: the ranks passed counts or datatypes of different sizes"),
        ))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::p2p::{Config, Route};
    use crate::transport::shm::Geometry;
    use std::cell::Cell;

    /// An engine of one rank on a segment of its own (its name unlinked
    /// at once: the mapping stays while the engine lives).
    pub(in crate::p2p) fn engine() -> Engine {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!("/oxmpi-unit-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let seg = Segment::create(&name, 1, 0, &Geometry { nslots: 4, payload: 256 }).expect("a segment");
        Segment::unlink(&name);
        let cfg = Config {
            check_types: false,
            eager_limit: 256,
            fan_eager_limit: 256,
            calm_eager_limit: 256,
            tcp_eager_limit: 256,
            unexpected_budget: 1 << 20,
            single_copy: false,
            single_copy_min: usize::MAX,
        };
        Engine::new(0, seg, vec![Route::Shm(0)], None, vec![std::process::id() as i32], cfg)
    }

    /// A sign that the awaited publication will never come (the writer on
    /// another path, the mailboxes given up) counts only if it is still
    /// not there once the sign is seen: the writer may have published it
    /// and gone on to its next step while the wait looked elsewhere.
    #[test]
    fn a_sign_of_another_path_counts_only_if_the_wait_is_still_not_over() {
        let what = || String::from("a publication");
        let mut e = engine();
        // published while the wait looked for the writer elsewhere
        let done = Cell::new(false);
        let astray = |_: &Engine| {
            done.set(true);
            Some("pieces of the same operation")
        };
        assert!(matches!(e.wait_unless(&what, |_| done.get(), astray, None), Ok(None)));
        // never published: the sign counts
        let got = e.wait_unless(&what, |_| false, |_: &Engine| Some("the other mailbox"), None);
        assert!(matches!(got, Ok(Some("the other mailbox"))));
        // the others finished this operation and gave the mailboxes up
        // in the next one
        let done = Cell::new(false);
        let later = |e: &Engine| {
            e.give_up_mailboxes(crate::coll::shm::stamp(1, 8));
            done.set(true);
            None::<()>
        };
        assert!(matches!(e.wait_unless(&what, |_| done.get(), later, None), Ok(None)));
        // given up, and what this wait awaits never comes: an error
        let got = e.wait_unless(&what, |_| false, |_: &Engine| None::<()>, None);
        assert!(got.is_err_and(|err| err.to_string().contains("abandoned")));
    }

    /// A rank in MPI_Finalize will never give what a wait still lacks of
    /// it; what it gave before counts.
    #[test]
    fn a_rank_in_finalize_fails_only_the_waits_it_left_short() {
        let mut e = engine();
        let what = "taking part in this collective";
        assert!(e.finalized_instead(0, |_| false, what).is_none(), "not in MPI_Finalize yet");
        e.enter_finalize();
        assert!(e.finalized_instead(0, |_| true, what).is_none(), "what it gave before MPI_Finalize");
        let error = e.finalized_instead(0, |_| false, what).expect("an error");
        assert_eq!(error.class, ErrorClass::Other);
        assert!(error.to_string().contains("world rank 0 called MPI_Finalize without taking part in this collective"));
    }
}
