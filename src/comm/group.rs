//! Group algebra (MPI 4.0 §7.3): groups are ordered lists of world ranks.
//! Every operation keeps the order the standard prescribes.

use crate::err;
use crate::error::MpiResult;

/// MPI_IDENT, MPI_SIMILAR, MPI_UNEQUAL.
pub const IDENT: i32 = 0;
pub const SIMILAR: i32 = 2;
pub const UNEQUAL: i32 = 3;

pub fn compare(a: &[usize], b: &[usize]) -> i32 {
    if a == b {
        return IDENT;
    }
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    if x == y {
        SIMILAR
    } else {
        UNEQUAL
    }
}

/// All of `a`, then the members of `b` not in `a`, in their orders.
pub fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = a.to_vec();
    out.extend(b.iter().filter(|x| !a.contains(x)));
    out
}

/// The members of `a` that are in `b`, in `a`'s order.
pub fn intersection(a: &[usize], b: &[usize]) -> Vec<usize> {
    a.iter().copied().filter(|x| b.contains(x)).collect()
}

/// The members of `a` not in `b`, in `a`'s order.
pub fn difference(a: &[usize], b: &[usize]) -> Vec<usize> {
    a.iter().copied().filter(|x| !b.contains(x)).collect()
}

fn check_rank(r: i64, n: usize) -> MpiResult<usize> {
    if r < 0 || r as usize >= n {
        return err!(Rank, "group rank {r} is out of range 0..{}", n.saturating_sub(1));
    }
    Ok(r as usize)
}

/// MPI_Group_incl: ranks must be distinct and valid.
pub fn incl(g: &[usize], ranks: &[i64]) -> MpiResult<Vec<usize>> {
    let mut seen = vec![false; g.len()];
    let mut out = Vec::with_capacity(ranks.len());
    for &r in ranks {
        let r = check_rank(r, g.len())?;
        if std::mem::replace(&mut seen[r], true) {
            return err!(Rank, "rank {r} appears twice in the list");
        }
        out.push(g[r]);
    }
    Ok(out)
}

/// MPI_Group_excl: ranks must be distinct and valid.
pub fn excl(g: &[usize], ranks: &[i64]) -> MpiResult<Vec<usize>> {
    let mut drop = vec![false; g.len()];
    for &r in ranks {
        let r = check_rank(r, g.len())?;
        if std::mem::replace(&mut drop[r], true) {
            return err!(Rank, "rank {r} appears twice in the list");
        }
    }
    Ok(g.iter().enumerate().filter(|(i, _)| !drop[*i]).map(|(_, &w)| w).collect())
}

/// Expand (first, last, stride) triplets into ranks.
pub fn expand_ranges(ranges: &[(i64, i64, i64)], n: usize) -> MpiResult<Vec<i64>> {
    let mut out = Vec::new();
    for &(first, last, stride) in ranges {
        if stride == 0 {
            return err!(Arg, "range ({first}, {last}, {stride}) has stride 0");
        }
        check_rank(first, n)?;
        check_rank(last, n)?;
        if (stride > 0 && first > last) || (stride < 0 && first < last) {
            continue;
        }
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            out.push(r);
            r += stride;
        }
    }
    Ok(out)
}

/// MPI_Group_translate_ranks: each rank of `a` as a rank of `b`, or None.
pub fn translate(a: &[usize], ranks: &[i64], b: &[usize]) -> MpiResult<Vec<Option<usize>>> {
    ranks
        .iter()
        .map(|&r| {
            let w = a[check_rank(r, a.len())?];
            Ok(b.iter().position(|&x| x == w))
        })
        .collect()
}

/// Context ids, agreed among the members of a communicator without a
/// central server: each process keeps a bitmap of the ids it may use; a
/// new communicator's members AND their bitmaps (an allreduce on the
/// parent) and take the lowest id free everywhere. Ids come back on
/// MPI_Comm_free. Id `c` owns contexts 2c (point-to-point) and 2c+1
/// (collectives); 0 and 1 are MPI_COMM_WORLD's and MPI_COMM_SELF's.
///
/// The sets of arrival lines a communicator of the whole world may hold
/// for its nonblocking collectives (`transport::shm::LineSet::Started`,
/// `Comm::lines`) are agreed the same way, beside the ids, one word: a
/// bit a set, 0 being MPI_COMM_WORLD's.
pub struct ContextIds {
    free: Vec<u32>,
    /// Ids set aside by an agreement in flight (MPI_Comm_idup): not free
    /// for anyone else until it decides.
    reserved: Vec<u32>,
    /// The sets of lines no communicator of this process holds.
    free_sets: u32,
    /// Sets set aside by an MPI_Comm_idup in flight.
    reserved_sets: u32,
}

pub const MAX_CONTEXT_IDS: usize = 32768;

/// What the members of a communicator being made agreed on
/// (`ContextIds::settle`): its context id, and the sets of arrival lines
/// free on every member.
pub struct Agreement {
    pub cid: u32,
    pub line_sets: u32,
}

impl Default for ContextIds {
    /// Every id free but MPI_COMM_WORLD's and MPI_COMM_SELF's; no sets
    /// of lines to hand out (`ContextIds::new`).
    fn default() -> Self {
        ContextIds::new(0)
    }
}

impl ContextIds {
    /// Ids as `default`, and `line_sets` the sets of lines a communicator
    /// made may hold, a bit each (never 0, MPI_COMM_WORLD's).
    pub fn new(line_sets: u32) -> Self {
        let mut c = ContextIds {
            free: vec![u32::MAX; MAX_CONTEXT_IDS / 32],
            reserved: vec![0; MAX_CONTEXT_IDS / 32],
            free_sets: line_sets & !1,
            reserved_sets: 0,
        };
        c.take(0);
        c.take(1);
        c
    }

    /// The bitmap to AND with the other members'.
    pub fn mask(&self) -> Vec<u32> {
        self.free.iter().zip(&self.reserved).map(|(f, r)| f & !r).collect()
    }

    pub const WORDS: usize = MAX_CONTEXT_IDS / 32;

    /// Set aside every id of word `w` that is free now; the bits taken.
    pub fn reserve_word(&mut self, w: usize) -> u32 {
        let bits = self.free[w] & !self.reserved[w];
        self.reserved[w] |= bits;
        bits
    }

    /// Give back ids of word `w` set aside by `reserve_word`.
    pub fn unreserve(&mut self, w: usize, bits: u32) {
        self.reserved[w] &= !bits;
    }

    /// The lowest id free in an agreed mask.
    pub fn lowest(mask: &[u32]) -> Option<u32> {
        mask.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| i as u32 * 32 + w.trailing_zeros())
    }

    pub fn take(&mut self, id: u32) {
        if id as usize >= MAX_CONTEXT_IDS {
            return;
        }
        self.free[id as usize / 32] &= !(1 << (id % 32));
        self.reserved[id as usize / 32] &= !(1 << (id % 32));
    }

    pub fn release(&mut self, id: u32) {
        if id > 1 && (id as usize) < MAX_CONTEXT_IDS {
            self.free[id as usize / 32] |= 1 << (id % 32);
        }
    }

    /// The sets of lines to AND with the other members'.
    pub fn set_mask(&self) -> u32 {
        self.free_sets & !self.reserved_sets
    }

    /// What a communicator's making ANDs with the other members': the
    /// ids' bitmap (`mask`), then the sets of lines (`set_mask`).
    pub fn agreement(&self) -> Vec<u32> {
        [self.mask(), vec![self.set_mask()]].concat()
    }

    /// The outcome of `agreement`s ANDed among the members: the lowest id
    /// free everywhere (None: none is) and the sets free everywhere.
    pub fn settle(agreed: &[u32]) -> Option<Agreement> {
        let (line_sets, ids) = agreed.split_last()?;
        Some(Agreement { cid: Self::lowest(ids)?, line_sets: *line_sets })
    }

    /// Set aside every set free now (MPI_Comm_idup); the bits taken.
    pub fn reserve_sets(&mut self) -> u32 {
        let bits = self.set_mask();
        self.reserved_sets |= bits;
        bits
    }

    /// Give back sets set aside by `reserve_sets`.
    pub fn unreserve_sets(&mut self, bits: u32) {
        self.reserved_sets &= !bits;
    }

    /// The lowest set of `agreed` (the AND of every member's `set_mask`),
    /// which a communicator of the whole world made now holds. It was free on every member, so one communicator
    /// holds it at a time everywhere, and every collective its last
    /// holder started came before this one's making, on every member: the
    /// set's count runs on from one holder to the next.
    pub fn take_set(&mut self, agreed: u32) -> Option<u8> {
        let s = (agreed & self.free_sets).trailing_zeros();
        (s < u32::BITS).then(|| {
            self.free_sets &= !(1 << s);
            self.reserved_sets &= !(1 << s);
            s as u8
        })
    }

    /// A communicator that held set `s` (`take_set`) is freed. Its
    /// collectives still open on the lines go on to the end there.
    pub fn release_set(&mut self, s: u8) {
        if s > 0 && u32::from(s) < u32::BITS {
            self.free_sets |= 1 << s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A communicator of the whole world takes the lowest set of lines
    /// free on every member (the AND of their masks), and gives it back
    /// when freed; MPI_COMM_WORLD's set, 0, is never taken nor given; an
    /// MPI_Comm_idup's reserved sets are free for no one else.
    #[test]
    fn whole_world_communicators_take_sets_free_everywhere() {
        let (one, two, three) = (1 << 1, 1 << 2, 1 << 3);
        let mut ids = ContextIds::new(1 | one | two | three);
        assert_eq!(ids.set_mask(), one | two | three, "never MPI_COMM_WORLD's");
        assert_eq!(ContextIds::default().set_mask(), 0, "none to hand out");
        // another member still holds set 1: the lowest free everywhere
        assert_eq!(ids.take_set(ids.set_mask() & !one), Some(2));
        assert_eq!(ids.take_set(ids.set_mask()), Some(1));
        assert_eq!(ids.set_mask(), three);
        assert_eq!(ids.reserve_sets(), three, "an idup in flight");
        assert_eq!(ids.set_mask(), 0);
        assert_eq!(ids.take_set(ids.set_mask()), None, "every set held or reserved: messages");
        assert_eq!(ids.take_set(three), Some(3), "the idup decides");
        ids.unreserve_sets(three);
        ids.release_set(2);
        ids.release_set(0);
        assert_eq!(ids.set_mask(), two, "MPI_COMM_WORLD's is not given");
        assert_eq!(ids.take_set(ids.set_mask()), Some(2), "taken again");
        // the sets' word comes last in an agreement
        let words = ids.agreement();
        assert_eq!(words.len(), ContextIds::WORDS + 1);
        let settled = ContextIds::settle(&words).unwrap();
        assert_eq!((settled.cid, settled.line_sets), (2, 0));
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let a = [5, 1, 3];
        let b = [3, 7, 5];
        assert_eq!(union(&a, &b), vec![5, 1, 3, 7]);
        assert_eq!(intersection(&a, &b), vec![5, 3]);
        assert_eq!(difference(&a, &b), vec![1]);
        assert_eq!(compare(&a, &[1, 3, 5]), SIMILAR);
        assert_eq!(compare(&a, &a), IDENT);
        assert_eq!(compare(&a, &b), UNEQUAL);
    }

    #[test]
    fn incl_excl_and_ranges() {
        let g = [10, 11, 12, 13, 14];
        assert_eq!(incl(&g, &[4, 0]).unwrap(), vec![14, 10]);
        assert!(incl(&g, &[1, 1]).is_err());
        assert!(incl(&g, &[5]).is_err());
        assert_eq!(excl(&g, &[0, 2]).unwrap(), vec![11, 13, 14]);
        assert_eq!(expand_ranges(&[(0, 4, 2), (3, 1, -2)], 5).unwrap(), vec![0, 2, 4, 3, 1]);
        assert!(expand_ranges(&[(0, 5, 1)], 5).is_err());
        assert_eq!(translate(&g, &[1, 3], &[13, 11]).unwrap(), vec![Some(1), Some(0)]);
    }

    #[test]
    fn context_ids_are_agreed_and_reused() {
        let mut a = ContextIds::default();
        let mut b = ContextIds::default();
        b.take(2); // b already uses id 2
        let agreed: Vec<u32> = a.mask().iter().zip(b.mask()).map(|(x, y)| x & y).collect();
        let id = ContextIds::lowest(&agreed).unwrap();
        assert_eq!(id, 3);
        a.take(id);
        b.take(id);
        a.release(id);
        assert_eq!(ContextIds::lowest(&a.mask()), Some(2));
        // reserved ids are out of everyone else's reach until given back
        let mut r = ContextIds::default();
        let bits = r.reserve_word(0);
        assert_eq!(bits, !0b11);
        assert_eq!(r.mask()[0], 0);
        assert_eq!(r.reserve_word(0), 0, "nothing left to reserve");
        r.unreserve(0, bits & !0b100);
        r.take(2);
        assert_eq!(r.mask()[0], !0b111);
        let mut full = ContextIds::default();
        for i in 2..MAX_CONTEXT_IDS as u32 {
            full.take(i);
        }
        assert_eq!(ContextIds::lowest(&full.mask()), None);
    }
}
