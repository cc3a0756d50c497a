//! The arrival lines: sets of two per rank, on which the short
//! collectives of the whole world post each rank's part
//! (`p2p::arrival`): one set for the blocking ones, one for the
//! nonblocking ones of each of a few whole-world communicators (agreed
//! free at their making), and one for each of the first persistent ones
//! made on each of those (`LineSet`).

use super::{arrivals_at, Segment, LINE};
use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes a collective's part may have to go on an arrival line.
pub const ARRIVAL_BYTES: usize = 40;

/// A rank's arrival lines for one sequence of collectives, each counted
/// on its own (`p2p::arrival`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineSet {
    /// The blocking collectives of every communicator of the whole world:
    /// their order across communicators is the same on every rank in a
    /// correct program (each needs every rank).
    Blocking,
    /// The nonblocking ones of a whole-world communicator that holds
    /// set `s` (`s < STARTED`; `comm::Comm::lines`): MPI_COMM_WORLD's is
    /// 0, and a duplicate or split of every rank gets one free on every
    /// rank at its making while there is one (`ContextIds::take_set`).
    /// They start in one order on every rank, whatever the collectives of
    /// other communicators around them. One communicator holds a set at
    /// a time on all ranks, and every collective started on the one
    /// before it came before its making, on every rank: the set's count
    /// runs on from one holder to the next.
    Started(u8),
    /// The `k`th persistent one (k < `KEPT`) made on a holder of
    /// `Started(s)`'s lines (`Kept(s, k)`), each start of which is the
    /// next on its own lines: ranks may start persistent collectives in
    /// any order (MPI 4.0 §6.13), but each one's starts come one after
    /// another. Every rank makes a communicator's persistent ones in one
    /// order, and the holders one after another, so the `k`th is the same
    /// one everywhere (a persistent one may outlive its communicator: the
    /// count runs on across holders, never back). Once the `KEPT` are
    /// given out, a later one takes the lines of one freed on every rank,
    /// agreed at its making (`p2p::arrival`), their count running on.
    Kept(u8, u8),
}

/// The whole-world communicators whose nonblocking collectives may hold
/// lines of their own at once: MPI_COMM_WORLD and `STARTED - 1` others
/// (the others go as messages).
pub const STARTED: usize = 4;

/// The persistent collectives made on the holders of one `Started` set's
/// lines that have lines of their own at a time (the others go as
/// messages).
pub const KEPT: usize = 6;

/// The sets of lines there are.
pub const SETS: usize = 1 + STARTED * (1 + KEPT);

impl LineSet {
    /// Its place among the `SETS`.
    pub fn index(self) -> usize {
        match self {
            LineSet::Blocking => 0,
            LineSet::Started(s) => 1 + s as usize,
            LineSet::Kept(s, k) => 1 + STARTED + s as usize * KEPT + k as usize,
        }
    }

    fn of(index: usize) -> LineSet {
        match index {
            0 => LineSet::Blocking,
            s if s <= STARTED => LineSet::Started((s - 1) as u8),
            k => LineSet::Kept(((k - 1 - STARTED) / KEPT) as u8, ((k - 1 - STARTED) % KEPT) as u8),
        }
    }

    /// Every set.
    pub fn all() -> impl Iterator<Item = LineSet> {
        (0..SETS).map(LineSet::of)
    }

    /// Every set but this one.
    pub fn others(self) -> impl Iterator<Item = LineSet> {
        LineSet::all().filter(move |&s| s != self)
    }
}

/// Lines a rank has: two for each of `LineSet`.
pub const LINES_PER_RANK: usize = 2 * SETS;

/// One of a rank's arrival lines (`Segment::post_arrival`): its part of
/// a short collective of the whole world (`p2p::arrival`), its `n`th of
/// its set, on that set's line `n % 2`.
#[repr(C, align(64))]
struct Arrival {
    /// n, stored last (Release): the rest is the `n`th collective's.
    n: AtomicU64,
    /// Its operation (`coll::shm::stamp`).
    op: AtomicU64,
    /// What the part is: its collective and its bytes (`p2p::arrival`).
    shape: AtomicU64,
    /// The part's bytes.
    words: [AtomicU64; ARRIVAL_BYTES / 8],
}

const _: () = assert!(std::mem::size_of::<Arrival>() == LINE);

impl Segment {
    /// Local rank `rank`'s arrival line of set `set` for its `n`th part.
    fn arrival(&self, rank: usize, set: LineSet, n: u64) -> &Arrival {
        assert!(rank < self.nranks);
        let line = LINES_PER_RANK * rank + 2 * set.index() + (n % 2) as usize;
        // SAFETY: the header page(s) hold `LINES_PER_RANK` lines per rank
        // after the rows of read marks (`layout`), zero-filled by ftruncate.
        unsafe { &*(self.base.add(arrivals_at(self.nranks) + line * LINE) as *const Arrival) }
    }

    /// This rank's part `data` (at most `ARRIVAL_BYTES`) of its `n`th short
    /// collective of set `set`, operation `op`, of shape `shape`, on that
    /// set's arrival line `n % 2`. The caller knows every reader of its
    /// part of collective n - 2 of the set, which went on that line, is
    /// done with it. Release: what this rank did before happens before
    /// what a rank that sees `n` (`arrival_n`) does after.
    pub fn post_arrival(&self, set: LineSet, n: u64, op: u64, shape: u64, data: &[u8]) {
        let a = self.arrival(self.me, set, n);
        for (w, chunk) in a.words.iter().zip(data.chunks(8)) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_ne_bytes(word), Ordering::Relaxed);
        }
        a.op.store(op, Ordering::Relaxed);
        a.shape.store(shape, Ordering::Relaxed);
        a.n.store(n, Ordering::Release);
    }

    /// The number on local rank `q`'s arrival line of set `set` for its
    /// `n`th collective there: `n` once it posted it, `n - 2` (or 0)
    /// before.
    pub fn arrival_n(&self, q: usize, set: LineSet, n: u64) -> u64 {
        self.arrival(q, set, n).n.load(Ordering::Acquire)
    }

    /// Local rank `q`'s `n`th part of set `set` (`arrival_n` said it is
    /// there): its operation, its shape, and its first `out.len()` bytes
    /// into `out`.
    pub fn arrival_part(&self, q: usize, set: LineSet, n: u64, out: &mut [u8]) -> (u64, u64) {
        let a = self.arrival(q, set, n);
        for (w, chunk) in a.words.iter().zip(out.chunks_mut(8)) {
            chunk.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes()[..chunk.len()]);
        }
        (a.op.load(Ordering::Relaxed), a.shape.load(Ordering::Relaxed))
    }

    /// The shape of local rank `q`'s part of operation `op` if it posted
    /// it on its arrival lines of one of `sets` as a collective after the
    /// caller's `after[set]`th of that set: an earlier one, which the
    /// caller took part in too, was of another communicator that had the
    /// same context id (ids come back when communicators are freed, and a
    /// new one counts its operations from 1 again).
    pub fn posted_arrival(
        &self,
        q: usize,
        op: u64,
        after: &[u64; SETS],
        sets: impl Iterator<Item = LineSet>,
    ) -> Option<u64> {
        sets.flat_map(|set| (0..2).map(move |n| (set, n))).find_map(|(set, n)| {
            let a = self.arrival(q, set, n);
            (a.n.load(Ordering::Acquire) > after[set.index()] && a.op.load(Ordering::Relaxed) == op)
                .then(|| a.shape.load(Ordering::Relaxed))
        })
    }

    /// Note that the ranks' `n`th collectives on the arrival lines of
    /// set `set` differ (the first one noted stays).
    pub fn fail_arrival(&self, set: LineSet, n: u64) {
        let word = n | (set.index() as u64) << 56;
        let _ = self.header().failed_arrival.compare_exchange(0, word, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The collective on the arrival lines found to differ between
    /// ranks (`fail_arrival`): its set and number, if any.
    pub fn failed_arrival(&self) -> Option<(LineSet, u64)> {
        let word = self.header().failed_arrival.load(Ordering::Acquire);
        (word != 0).then(|| (LineSet::of((word >> 56) as usize), word & ((1 << 56) - 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::tests::ranks;

    /// Counts after which to look: `blocking` and `started` of the first
    /// two sets.
    fn after(blocking: u64, started: u64) -> [u64; SETS] {
        let mut a = [0; SETS];
        a[0] = blocking;
        a[1] = started;
        a
    }

    #[test]
    fn arrival_parts_alternate_between_two_lines_each_seen_by_peers_with_its_count() {
        let all = ranks("arrivals", 3);
        let mut out = [0u8; ARRIVAL_BYTES];
        assert_eq!(all[1].arrival_n(0, LineSet::Blocking, 1), 0, "nothing posted yet");
        all[0].post_arrival(LineSet::Blocking, 1, 0x11, 7, b"first part");
        all[0].post_arrival(LineSet::Blocking, 2, 0x12, 3, b"two");
        // rank 1 still reads part 1 while part 2 is on the other line
        assert_eq!(all[1].arrival_n(0, LineSet::Blocking, 1), 1);
        assert_eq!(all[2].arrival_n(0, LineSet::Blocking, 2), 2);
        assert_eq!(all[1].arrival_part(0, LineSet::Blocking, 1, &mut out[..10]), (0x11, 7));
        assert_eq!(&out[..10], b"first part");
        assert_eq!(all[2].arrival_part(0, LineSet::Blocking, 2, &mut out[..3]), (0x12, 3));
        assert_eq!(&out[..3], b"two");
        // part 3 replaces part 1; a full line's bytes come back whole
        let full: Vec<u8> = (0..ARRIVAL_BYTES as u8).collect();
        all[0].post_arrival(LineSet::Blocking, 3, 0x13, 40, &full);
        assert_eq!(all[2].arrival_n(0, LineSet::Blocking, 3), 3);
        assert_eq!(all[2].arrival_n(0, LineSet::Blocking, 4), 2, "line 0 still holds part 2");
        all[2].arrival_part(0, LineSet::Blocking, 3, &mut out);
        assert_eq!(&out[..], &full[..]);
        // a waiting rank finds where an operation went
        assert_eq!(all[1].posted_arrival(0, 0x13, &[0; SETS], LineSet::all()), Some(40));
        assert_eq!(all[1].posted_arrival(0, 0x13, &after(3, 0), LineSet::all()), None, "one the caller took part in");
        assert_eq!(all[1].posted_arrival(0, 0x11, &[0; SETS], LineSet::all()), None, "overwritten");
        assert_eq!(all[1].posted_arrival(2, 0x13, &[0; SETS], LineSet::all()), None, "rank 2 posted nothing");
    }

    #[test]
    fn every_set_has_a_place_of_its_own() {
        let places: Vec<usize> = LineSet::all().map(LineSet::index).collect();
        assert_eq!(places, (0..SETS).collect::<Vec<_>>());
        assert!(LineSet::all().all(|s| LineSet::of(s.index()) == s));
        assert_eq!(LineSet::all().filter(|s| matches!(s, LineSet::Started(_))).count(), STARTED);
        assert_eq!(LineSet::all().filter(|s| matches!(s, LineSet::Kept(..))).count(), STARTED * KEPT);
        assert_eq!(LineSet::of(SETS - 1), LineSet::Kept(STARTED as u8 - 1, KEPT as u8 - 1));
    }

    #[test]
    fn the_sets_of_lines_count_apart() {
        let all = ranks("arrival-sets", 2);
        let mut out = [0u8; ARRIVAL_BYTES];
        all[0].post_arrival(LineSet::Blocking, 1, 0x21, 2, b"b1");
        all[0].post_arrival(LineSet::Started(0), 1, 0x31, 2, b"s1");
        all[0].post_arrival(LineSet::Started(0), 2, 0x32, 2, b"s2");
        assert_eq!(all[1].arrival_n(0, LineSet::Blocking, 1), 1);
        assert_eq!(all[1].arrival_n(0, LineSet::Blocking, 2), 0, "blocking part 2 not posted");
        assert_eq!(all[1].arrival_part(0, LineSet::Blocking, 1, &mut out[..2]), (0x21, 2));
        assert_eq!(&out[..2], b"b1");
        assert_eq!(all[1].arrival_part(0, LineSet::Started(0), 1, &mut out[..2]), (0x31, 2));
        assert_eq!(&out[..2], b"s1");
        assert_eq!(all[1].arrival_n(0, LineSet::Started(0), 2), 2);
        // an operation is found on either set, after the caller's count there
        assert_eq!(all[1].posted_arrival(0, 0x32, &[0; SETS], LineSet::all()), Some(2));
        assert_eq!(
            all[1].posted_arrival(0, 0x32, &[0; SETS], [LineSet::Blocking].into_iter()),
            None,
            "not on that set"
        );
        assert_eq!(all[1].posted_arrival(0, 0x32, &after(5, 2), LineSet::all()), None);
        assert_eq!(all[1].posted_arrival(0, 0x21, &after(0, 5), LineSet::all()), Some(2));
        // each persistent collective's lines count its starts
        all[0].post_arrival(LineSet::Kept(0, 0), 1, 0x41, 1, b"k");
        all[0].post_arrival(LineSet::Kept(STARTED as u8 - 1, KEPT as u8 - 1), 1, 0x42, 1, b"l");
        assert_eq!(all[1].arrival_part(0, LineSet::Kept(0, 0), 1, &mut out[..1]), (0x41, 1));
        assert_eq!(
            all[1].arrival_part(0, LineSet::Kept(STARTED as u8 - 1, KEPT as u8 - 1), 1, &mut out[..1]),
            (0x42, 1)
        );
        assert_eq!(&out[..1], b"l");
        assert_eq!(all[1].arrival_n(0, LineSet::Started(0), 2), 2, "untouched by the kept ones");
        assert_eq!(all[1].posted_arrival(0, 0x42, &[0; SETS], LineSet::Kept(0, 0).others()), Some(1));
        assert_eq!(
            all[1].posted_arrival(0, 0x42, &[0; SETS], LineSet::Kept(STARTED as u8 - 1, KEPT as u8 - 1).others()),
            None
        );
        // so do the lines of each whole-world communicator's nonblocking ones
        let last = LineSet::Started(STARTED as u8 - 1);
        all[0].post_arrival(last, 1, 0x51, 1, b"m");
        assert_eq!(all[1].arrival_part(0, last, 1, &mut out[..1]), (0x51, 1));
        assert_eq!(all[1].arrival_n(0, LineSet::Started(0), 2), 2, "untouched by another communicator's");
        assert_eq!(all[1].posted_arrival(0, 0x51, &[0; SETS], LineSet::Started(0).others()), Some(1));
        // a failed collective keeps its set
        assert_eq!(all[1].failed_arrival(), None);
        all[0].fail_arrival(last, 4);
        assert_eq!(all[1].failed_arrival(), Some((last, 4)));
        all[0].header().failed_arrival.store(0, Ordering::Release);
        all[0].fail_arrival(LineSet::Kept(0, 3), 7);
        all[1].fail_arrival(LineSet::Blocking, 9);
        assert_eq!(all[1].failed_arrival(), Some((LineSet::Kept(0, 3), 7)), "the first one noted stays");
    }
}
