//! The `Way` every rank of a crowded host takes, alike, for one
//! communicator's long blocks of one size among more than two ranks
//! (`coll::shm::blocks::alltoall`): in pieces through the mailboxes, or
//! each writer's send buffer read in place by every reader.
//!
//! On a virtual machine whose host sometimes puts the two CPUs far apart
//! (on dies that share no cache), every line that crosses between them
//! becomes slow, and pieces, whose writer writes every block into lines
//! its readers on the other CPU hold, lose four- to fivefold, where a
//! reader that copies straight out of the writer's send buffer crosses
//! only the lines the writer changed since (measured, 4 ranks on 2 CPUs,
//! Alltoall of 64 KiB blocks in a loop: pieces 28-36 us while the CPUs
//! share a cache, 145-180 while they do not; read in place 42-57 either
//! way; Open MPI, which reads in place, 45-83).
//!
//! Between two ranks each reader takes either way, as the first piece
//! says (`Ways`). Among more, a block's pieces go only to their reader, so
//! all must take one way: every rank decides each call from the same
//! words, the estimates (of the processor time a call took each rank,
//! `coll::shm::blocks::agreed`) every member reported in the
//! communicator's last call of that block size (each publication's header carries its
//! writer's, and every rank reads one of every other's; a rank counts its
//! own as it reported it), and counts the calls between tries of the other
//! way alike. Nothing is read in place before every member has reported,
//! nor where any member may not read the others' memory.

use super::mailbox::{class, estimate, Note, Report, Tries, Way};
use super::Engine;
use crate::comm::Group;

/// A report's words with the flag that its rank may read the others.
const READS: u64 = 1 << 63;

/// A member's report and whether it may read the others, from its words
/// (`Agreed::pick`; None: none there).
fn heard(note: Note) -> Option<(Report, bool)> {
    let report = Report::decode([note[0], note[1] & !READS])?.1;
    Some((report, note[1] & READS != 0))
}

/// One communicator's calls of one operation and block size (its class).
#[derive(Default)]
struct Calls {
    /// The members' world ranks, which a reused context tells apart.
    members: Vec<usize>,
    /// Each member's report in the last call (None: not yet), and whether
    /// it may read the others.
    reports: Vec<Option<(Report, bool)>>,
    /// This rank's estimates, as its calls measured them.
    mine: Report,
    /// When the way not taken is tried again.
    tries: Tries,
    /// The calls so far (`choose`).
    calls: u32,
}

impl Calls {
    /// The way the reports say, and whether every member may read.
    fn best(&self) -> Option<(Way, bool)> {
        if self.reports.iter().any(Option::is_none) {
            return None;
        }
        let all = || self.reports.iter().flatten();
        let reads = all().all(|&(_, r)| r);
        let sum = |f: fn(&Report) -> u64| all().map(|(r, _)| f(r)).try_fold(0u64, |s, v| (v != 0).then(|| s + v));
        let (pieces, read) = (sum(|r| r.pieces), sum(|r| r.read));
        let way = match (pieces, read) {
            (p, Some(r)) if reads && p.is_none_or(|p| r < p) => Way::Read,
            _ => Way::Pieces,
        };
        Some((way, reads))
    }

    /// This call's way: the best, or the other now and then; and whether
    /// to time it (`TIME_EVERY`).
    fn choose(&mut self) -> (Way, bool) {
        self.calls = self.calls.wrapping_add(1);
        let Some((best, reads)) = self.best() else { return (Way::Pieces, true) };
        if !reads {
            return (Way::Pieces, false);
        }
        let way = self.tries.way(best);
        let unmeasured = match way {
            Way::Pieces => self.mine.pieces,
            Way::Read => self.mine.read,
        } == 0;
        (way, way != best || unmeasured || self.calls.is_multiple_of(TIME_EVERY))
    }
}

/// A rank times one in this many of its calls of one kind (besides each
/// try of the way not taken, and each way's first): the processor clock
/// is a system call (0.3 us on the test machine, twice a call), which,
/// timed at every call, made a 4-rank Allgather of 2 KiB blocks on 2 cores
/// take 8.1 us where the same pieces without the choice took 5.7.
const TIME_EVERY: u32 = 8;

/// Every communicator's calls, by context and operation, and block size
/// class: the last one called first (a loop's calls find theirs at once;
/// a HashMap's hashing, five lookups a call, took 2.7% of the processor
/// time of a 4-rank Allgather of 2 KiB blocks on 2 cores).
#[derive(Default)]
pub struct Agreed {
    calls: Vec<((u64, usize), Calls)>,
}

impl Agreed {
    /// The calls of `key`, moved first.
    fn find(&mut self, key: (u64, usize)) -> Option<&mut Calls> {
        let at = self.calls.iter().position(|(k, _)| *k == key)?;
        self.calls[..=at].rotate_right(1);
        Some(&mut self.calls[0].1)
    }

    /// The way for this call of operation `of` (`Engine::agreed_way`; members `members` by
    /// world rank, this rank the `me`th) of blocks of `bytes`, and the
    /// words reporting this rank's estimates (`reads`: whether it may
    /// read the others' memory) for the others to hear (`heard`), and
    /// whether to time the call (`took`).
    pub fn pick(
        &mut self,
        of: u64,
        members: impl ExactSizeIterator<Item = usize> + Clone,
        me: usize,
        bytes: usize,
        reads: bool,
    ) -> (Way, Note, bool) {
        let key = (of, class(bytes));
        if self.find(key).is_none() {
            self.calls.insert(0, (key, Calls::default()));
        }
        let c = &mut self.calls[0].1;
        if !c.members.iter().copied().eq(members.clone()) {
            // a context freed and taken again by other members
            let n = members.len();
            *c = Calls { members: members.collect(), reports: vec![None; n], ..Calls::default() };
        }
        let (way, timed) = c.choose();
        let [a, b] = c.mine.encode(class(bytes));
        let note = [a, b | if reads { READS } else { 0 }];
        // (as the others hear it, in the words' coarser units: weighed
        // exact here, a sum could tip the other way than theirs)
        c.reports[me] = heard(note);
        (way, note, timed)
    }

    /// The `r`th member's report (`pick`'s words) in this call.
    pub fn heard(&mut self, of: u64, r: usize, bytes: usize, note: Note) {
        let Some(c) = self.find((of, class(bytes))) else { return };
        if let Some(slot) = c.reports.get_mut(r) {
            *slot = heard(note);
        }
    }

    /// Whether every member reported, in the last call, that it may read
    /// the others.
    fn all_read(&mut self, of: u64, bytes: usize) -> bool {
        self.find((of, class(bytes))).and_then(|c| c.best()).is_some_and(|(_, reads)| reads)
    }

    /// This rank's call `of` of `bytes` blocks, every member going
    /// `way`, took `ns`.
    pub fn took(&mut self, of: u64, bytes: usize, way: Way, ns: u64) {
        if let Some(c) = self.find((of, class(bytes))) {
            match way {
                Way::Pieces => c.mine.pieces = estimate(c.mine.pieces, ns),
                Way::Read => c.mine.read = estimate(c.mine.read, ns),
            }
        }
    }
}

impl Engine {
    /// The way (`Agreed`) for this call of blocks of `bytes` among the
    /// members `group` (this rank the `me`th), `of`: the communicator's
    /// context and the operation (`Kind`),
    /// and the words this rank reports in it, and whether to time the
    /// call (`agreed_took`; never where forced); `forced`: that way where
    /// every member may take it (OXMPI_CROWDED_BLOCKS, alike on every
    /// rank).
    pub fn agreed_way(
        &mut self,
        of: u64,
        group: &Group,
        me: usize,
        bytes: usize,
        forced: Option<Way>,
    ) -> (Way, Note, bool) {
        let members = (0..group.size()).map(|r| group.world_rank(r));
        let reads = members.clone().all(|w| w == self.rank || self.may_be_read(w));
        let (way, note, timed) = self.agreed.pick(of, members, me, bytes, reads);
        match forced {
            // (every member reported that it may read)
            Some(Way::Read) if self.agreed.all_read(of, bytes) => (Way::Read, note, false),
            Some(_) => (Way::Pieces, note, false),
            None => (way, note, timed),
        }
    }

    /// The `r`th member's words in this call (`agreed_way`).
    pub fn agreed_heard(&mut self, of: u64, r: usize, bytes: usize, note: Note) {
        self.agreed.heard(of, r, bytes, note);
    }

    /// `agreed_heard` of words that name the size class they report on
    /// (an alltoallv writer's, whose blocks' size its readers do not know
    /// when they choose).
    pub fn agreed_heard_note(&mut self, of: u64, r: usize, note: Note) {
        if let Some((c, _)) = Report::decode([note[0], 0]) {
            self.agreed.heard(of, r, 1 << (c - 1), note);
        }
    }

    /// This rank's call, every member going `way`, took `ns`.
    pub fn agreed_took(&mut self, of: u64, bytes: usize, way: Way, ns: u64) {
        self.agreed.took(of, bytes, way, ns);
    }
}

#[cfg(test)]
mod tests {
    use super::super::mailbox::{MAX_GAP, MIN_GAP, TRY_CALLS};
    use super::*;

    /// `n` ranks' calls of one communicator, each way's calls taking
    /// every rank `cost(way)`: the ways each rank takes, call by call.
    fn calls(ranks: &mut [Agreed], count: usize, cost: impl Fn(Way) -> u64, reads: &[bool]) -> Vec<Vec<Way>> {
        calls_by(ranks, count, |w, _, _, _| cost(w), reads)
    }

    /// `calls` where each rank's call `i` takes `cost(way, switched, rank,
    /// i)` (`switched`: the call before went the other way).
    fn calls_by(
        ranks: &mut [Agreed],
        count: usize,
        cost: impl Fn(Way, bool, usize, usize) -> u64,
        reads: &[bool],
    ) -> Vec<Vec<Way>> {
        let members: Vec<usize> = (0..ranks.len()).collect();
        let b = 64 << 10;
        let mut before = None;
        (0..count)
            .map(|i| {
                let picked: Vec<(Way, Note, bool)> = ranks
                    .iter_mut()
                    .enumerate()
                    .map(|(me, a)| a.pick(7, members.iter().copied(), me, b, reads[me]))
                    .collect();
                for (me, a) in ranks.iter_mut().enumerate() {
                    for (r, &(_, note, _)) in picked.iter().enumerate().filter(|&(r, _)| r != me) {
                        a.heard(7, r, b, note);
                    }
                    let (way, _, timed) = picked[me];
                    if timed {
                        a.took(7, b, way, cost(way, before.is_some_and(|w| w != way), me, i));
                    }
                }
                before = Some(picked[0].0);
                picked.into_iter().map(|(w, _, _)| w).collect()
            })
            .collect()
    }

    #[test]
    fn every_rank_takes_one_way_at_every_call_the_cheaper_and_the_other_now_and_then() {
        let mut ranks: Vec<Agreed> = (0..4).map(|_| Agreed::default()).collect();
        let all = [true; 4];
        // pieces 30 us a call against a read's 50
        let ways = calls(&mut ranks, 600, |w| if w == Way::Pieces { 30_000 } else { 50_000 }, &all);
        assert!(ways.iter().all(|w| w.iter().all(|&x| x == w[0])), "one way at every call");
        assert!(ways[..MIN_GAP as usize].iter().all(|w| w[0] == Way::Pieces), "pieces until a read is tried");
        assert!(ways.iter().any(|w| w[0] == Way::Read), "the read is tried");
        let tries = TRY_CALLS as usize;
        assert!(ways[300..].iter().filter(|w| w[0] == Way::Read).count() <= 2 * tries, "tries grow rare");
        // a slow spell: pieces five times dearer; reads soon, tried
        // pieces rarely
        let ways = calls(&mut ranks, 400, |w| if w == Way::Pieces { 150_000 } else { 50_000 }, &all);
        assert!(ways.iter().all(|w| w.iter().all(|&x| x == w[0])));
        let first = ways.iter().position(|w| w[0] == Way::Read).unwrap();
        assert!(first <= MAX_GAP as usize + 1);
        assert!(ways[first + 20..].iter().filter(|w| w[0] == Way::Pieces).count() <= 3 * tries);
        // and back
        let ways = calls(&mut ranks, 400, |w| if w == Way::Pieces { 30_000 } else { 50_000 }, &all);
        assert!(ways.iter().all(|w| w.iter().all(|&x| x == w[0])));
        assert!(ways[300..].iter().filter(|w| w[0] == Way::Read).count() <= 2 * tries);
    }

    #[test]
    fn a_try_outlasts_the_dear_first_call_of_a_way() {
        // reads 20 us a call against pieces' 30, but the first call of
        // either way after the other costs 70 (the ranks arrive apart)
        let mut ranks: Vec<Agreed> = (0..4).map(|_| Agreed::default()).collect();
        let cost = |w: Way, switched: bool, _, _| match (w, switched) {
            (_, true) => 70_000,
            (Way::Pieces, false) => 30_000,
            (Way::Read, false) => 20_000,
        };
        let ways = calls_by(&mut ranks, 300, cost, &[true; 4]);
        assert!(ways.iter().all(|w| w.iter().all(|&x| x == w[0])), "one way at every call");
        let first = ways.iter().position(|w| w[0] == Way::Read).expect("a read tried");
        assert!(ways[first..first + TRY_CALLS as usize].iter().all(|w| w[0] == Way::Read), "a try's calls in a row");
        assert!(ways[100..].iter().filter(|w| w[0] == Way::Read).count() > 190, "the reads won");
    }

    #[test]
    fn a_rank_times_a_call_in_eight_each_try_and_each_way_first() {
        let mut a = Agreed::default();
        let (b, members) = (64 << 10, [0, 1]);
        let mut timed = vec![];
        for i in 0..300u64 {
            let (way, _, t) = a.pick(5, members.into_iter(), 0, b, true);
            // the other member reports pieces 30 us and (once tried) a read 50
            let [x, y] = Report { pieces: 30_000, read: if i > 8 { 50_000 } else { 0 } }.encode(class(b));
            a.heard(5, 1, b, [x, y | READS]);
            if t {
                a.took(5, b, way, if way == Way::Pieces { 30_000 } else { 50_000 });
            }
            timed.push((way, t));
        }
        assert!(timed[0].1, "the first call, with no estimates yet");
        let first_read = timed.iter().position(|&(w, _)| w == Way::Read).expect("a read tried");
        assert!(timed[first_read].1, "a try is timed");
        assert!(timed.iter().filter(|&&(w, _)| w == Way::Read).all(|&(_, t)| t), "every try");
        let pieces_timed = timed[first_read + 1..].iter().filter(|&&(w, t)| w == Way::Pieces && t).count();
        let pieces = timed[first_read + 1..].iter().filter(|&&(w, _)| w == Way::Pieces).count();
        assert!(pieces_timed * TIME_EVERY as usize <= pieces + TIME_EVERY as usize, "{pieces_timed} of {pieces}");
        assert!(pieces_timed * TIME_EVERY as usize >= pieces - TIME_EVERY as usize, "{pieces_timed} of {pieces}");
    }

    #[test]
    fn ranks_agree_where_the_ways_cost_nearly_alike() {
        // estimates a few nanoseconds apart, unlike on every rank and
        // call: each rank must weigh its own as the others heard it
        let mut ranks: Vec<Agreed> = (0..4).map(|_| Agreed::default()).collect();
        let cost = |w: Way, r: usize, i: usize| {
            let jitter = ((r * 7 + i * 13 + if w == Way::Pieces { 0 } else { 5 }) % 31) as u64;
            50_000 + jitter
        };
        let ways = calls_by(&mut ranks, 3000, |w, _, r, i| cost(w, r, i), &[true; 4]);
        assert!(ways.iter().all(|w| w.iter().all(|&x| x == w[0])), "one way at every call");
    }

    #[test]
    fn no_read_where_one_member_may_not_read() {
        let mut ranks: Vec<Agreed> = (0..3).map(|_| Agreed::default()).collect();
        let ways = calls(&mut ranks, 300, |w| if w == Way::Pieces { 150_000 } else { 1_000 }, &[true, false, true]);
        assert!(ways.iter().flatten().all(|&w| w == Way::Pieces));
    }

    #[test]
    fn other_members_on_a_context_start_afresh() {
        let mut a = Agreed::default();
        let (b, reads) = (64 << 10, true);
        for _ in 0..3 {
            a.pick(9, [0, 1, 2].into_iter(), 0, b, reads);
            a.heard(9, 1, b, [1 << 58 | 5, 5]);
            a.heard(9, 2, b, [1 << 58 | 5, 5]);
        }
        assert!(a.find((9, class(b))).unwrap().reports.iter().all(|r| r.is_some()));
        a.pick(9, [0, 1, 3].into_iter(), 0, b, reads);
        let c = a.find((9, class(b))).unwrap();
        assert!(c.reports[1].is_none() && c.reports[2].is_none());
    }
}
