//! The reductions' algorithms, as plans: a binomial reduction that always
//! combines in rank order (so the result does not depend on the root or
//! on timing), recursive-doubling, Rabenseifner and linear allreduce, and
//! a linear-chain scan.

use super::{all_at_once, bcast};
use crate::coll::plan::{Block, Plan};
use crate::coll::tuning::{self, Allreduce};
use crate::datatype::TypeRef;
use crate::op::{self, Op};

/// A step that combines `lower op higher` into `lower`. `op::apply`
/// writes into its right operand: a symmetric operator is applied the
/// other way round; others go through `higher` and are copied back.
fn combine_into_lower(p: &mut Plan, op: Op, ty: &TypeRef, lower: Block, higher: Block) {
    let ty = ty.clone();
    p.compute(move || {
        // SAFETY: both blocks are the plan's held buffers (or the user's
        // packed data), not in use by any transfer during a compute step.
        unsafe {
            if op.symmetric() {
                return op::apply(op, &ty, higher.bytes(), lower.bytes_mut());
            }
            op::apply(op, &ty, lower.bytes(), higher.bytes_mut())?;
            higher.copy_to(lower);
        }
        Ok(())
    });
}

/// A step that combines `lower op higher` into `higher`.
fn combine_into_higher(p: &mut Plan, op: Op, ty: &TypeRef, lower: Block, higher: Block) {
    let ty = ty.clone();
    // SAFETY: as in `combine_into_lower`.
    p.compute(move || unsafe { op::apply(op, &ty, lower.bytes(), higher.bytes_mut()) });
}

/// Reduce `data` (items of `ty` in memory layout) to `root`: on
/// completion the root's `data` holds the result. Partial results travel
/// up a binomial tree rooted at rank 0, each node combining (lower ranks)
/// op (higher ranks); then rank 0 hands the result to root.
pub fn reduce(p: &mut Plan, data: Block, ty: &TypeRef, op: Op, root: usize) {
    let (n, me) = (p.n, p.me);
    let other = p.scratch(data.len);
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            let t = vec![p.send(data, me - mask)];
            p.step(t);
            break;
        }
        if me + mask < n {
            let t = vec![p.recv(other, me + mask)];
            p.step(t);
            combine_into_lower(p, op, ty, data, other);
        }
        mask <<= 1;
    }
    if root != 0 && me == 0 {
        let t = vec![p.send(data, root)];
        p.step(t);
    } else if root != 0 && me == root {
        let t = vec![p.recv(data, 0)];
        p.step(t);
    }
}

/// The ranks an algorithm for power-of-two sizes runs on when the size
/// is not one: `pof2` virtual ranks; the first `2 * rem` real ranks pair up
/// (2i, 2i+1) into virtual rank i, the others follow in order, so every
/// virtual rank stands for a run of consecutive real ranks and combining
/// in virtual rank order is combining in real rank order.
struct Fold {
    pof2: usize,
    rem: usize,
}

impl Fold {
    fn new(n: usize) -> Fold {
        let pof2 = 1 << n.ilog2();
        Fold { pof2, rem: n - pof2 }
    }

    fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// This rank's virtual rank; None for the even rank of a pair, which
    /// hands its data to its partner and waits for the result.
    fn virt(&self, me: usize) -> Option<usize> {
        if me < 2 * self.rem {
            (me % 2 == 1).then_some(me / 2)
        } else {
            Some(me - self.rem)
        }
    }

    /// Before: the pairs combine (even op odd) into the odd rank's `data`.
    fn fold_in(&self, p: &mut Plan, src: &mut Source, data: Block, ty: &TypeRef, op: Op) {
        let me = p.me;
        if me >= 2 * self.rem {
            return;
        }
        if me.is_multiple_of(2) {
            let t = vec![p.send(src.at(data), me + 1)];
            p.step(t);
            src.consumed();
        } else {
            let spare = p.scratch(data.len);
            let t = vec![p.recv(src.landing(data, spare), me - 1)];
            p.step(t);
            src.combine(p, op, ty, data, spare, false);
        }
    }

    /// After: the odd rank of each pair hands the result to the even one.
    fn fold_out(&self, p: &mut Plan, data: Block) {
        let me = p.me;
        if me >= 2 * self.rem {
            return;
        }
        let t = if me.is_multiple_of(2) { vec![p.recv(data, me + 1)] } else { vec![p.send(data, me - 1)] };
        p.step(t);
    }
}

/// Where an allreduce's input is until its first exchange has read it.
/// `src` may be the user's send buffer, distinct from `data` (the receive
/// buffer); the input is then never copied into `data` first: the first
/// exchange sends from `src`, receives the partner's part straight into
/// `data` and combines `src` into it.
struct Source {
    src: Option<Block>,
    data: Block,
}

impl Source {
    fn new(src: Block, data: Block) -> Source {
        Source { src: (src.addr != data.addr).then_some(src), data }
    }

    /// The input at the place of `piece` (a part of `data`).
    fn at(&self, piece: Block) -> Block {
        match self.src {
            Some(s) => Block { addr: s.addr + (piece.addr - self.data.addr), len: piece.len },
            None => piece,
        }
    }

    /// Where the partner's part for `piece` lands: `piece` itself while
    /// the input is unread, else `spare` (scratch of the same length).
    fn landing(&self, piece: Block, spare: Block) -> Block {
        if self.src.is_some() {
            piece
        } else {
            spare
        }
    }

    /// After an exchange: `piece` of `data` becomes (mine op theirs) if
    /// this rank's part comes first (`mine_first`), else (theirs op mine).
    fn combine(&mut self, p: &mut Plan, op: Op, ty: &TypeRef, piece: Block, spare: Block, mine_first: bool) {
        let Some(s) = self.src.take() else {
            return if mine_first {
                combine_into_lower(p, op, ty, piece, spare)
            } else {
                combine_into_higher(p, op, ty, spare, piece)
            };
        };
        // theirs is in `piece`, mine in `src`
        let mine = Block { addr: s.addr + (piece.addr - self.data.addr), len: piece.len };
        if mine_first || op.symmetric() {
            return combine_into_higher(p, op, ty, mine, piece);
        }
        // (theirs op mine) into piece, through `spare`
        // SAFETY: distinct user or plan buffers, idle during computes.
        p.compute(move || unsafe {
            mine.copy_to(spare);
            Ok(())
        });
        combine_into_higher(p, op, ty, piece, spare);
        // SAFETY: as above.
        p.compute(move || unsafe {
            spare.copy_to(piece);
            Ok(())
        });
    }

    /// The input is read (sent whole to a partner).
    fn consumed(&mut self) {
        self.src = None;
    }
}

/// Allreduce of `src` into `data` (items of `ty`; `src` may be `data`), by
/// the algorithm `tuning` picks: recursive doubling, Rabenseifner, or
/// reduce then broadcast. All combine in rank order.
pub fn allreduce(p: &mut Plan, src: Block, data: Block, ty: &TypeRef, op: Op) {
    let n = p.n;
    let algorithm = tuning::allreduce(n, data.len / ty.size.max(1), data.len);
    if n == 1 || data.len == 0 || ty.size == 0 || algorithm == Allreduce::ReduceBcast {
        if src.addr != data.addr {
            // SAFETY: distinct user or plan buffers, idle during computes.
            p.compute(move || unsafe {
                src.copy_to(data);
                Ok(())
            });
        }
        if n > 1 && data.len > 0 && ty.size > 0 {
            reduce(p, data, ty, op, 0);
            bcast(p, data, 0);
        }
        return;
    }
    match algorithm {
        Allreduce::Rabenseifner => allreduce_rabenseifner(p, src, data, ty, op),
        Allreduce::Linear => allreduce_linear(p, src, data, ty, op),
        Allreduce::Allgather => allreduce_allgather(p, src, data, ty, op),
        _ => allreduce_recursive_doubling(p, src, data, ty, op),
    }
}

/// log2(n) exchange steps of the whole vector; each pair combines (lower
/// block) op (higher block), so every rank computes the same tree,
/// ((0 op 1) op (2 op 3)) ..., the tree the binomial reduce uses too.
fn allreduce_recursive_doubling(p: &mut Plan, src: Block, data: Block, ty: &TypeRef, op: Op) {
    let f = Fold::new(p.n);
    let mut src = Source::new(src, data);
    f.fold_in(p, &mut src, data, ty, op);
    if let Some(v) = f.virt(p.me) {
        let spare = p.scratch(data.len);
        let mut mask = 1;
        while mask < f.pof2 {
            let partner = f.real(v ^ mask);
            let t = vec![p.recv(src.landing(data, spare), partner), p.send(src.at(data), partner)];
            p.step(t);
            src.combine(p, op, ty, data, spare, v < v ^ mask);
            mask <<= 1;
        }
    }
    f.fold_out(p, data);
}

/// Rabenseifner: a reduce-scatter by recursive halving (partners at
/// distance 1, 2, 4, ... so each piece combines in rank order), after which
/// every rank holds the reduction of one piece, then an allgather by
/// recursive doubling in the opposite order. Each rank moves about 2x the
/// vector instead of log2(n) times it.
fn allreduce_rabenseifner(p: &mut Plan, src: Block, data: Block, ty: &TypeRef, op: Op) {
    let f = Fold::new(p.n);
    let mut src = Source::new(src, data);
    f.fold_in(p, &mut src, data, ty, op);
    if let Some(v) = f.virt(p.me) {
        let es = ty.size;
        let piece = |lo: usize, hi: usize| Block { addr: data.addr + lo * es, len: (hi - lo) * es };
        let tmp = p.scratch(data.len);
        let tmp_piece = |lo: usize, hi: usize| Block { addr: tmp.addr + lo * es, len: (hi - lo) * es };
        let (mut lo, mut hi) = (0, data.len / es);
        let mut halves = Vec::new();
        let mut mask = 1;
        while mask < f.pof2 {
            let partner = v ^ mask;
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if v & mask == 0 { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
            let (mine, spare) = (piece(keep.0, keep.1), tmp_piece(keep.0, keep.1));
            let t = vec![
                p.recv(src.landing(mine, spare), f.real(partner)),
                p.send(src.at(piece(give.0, give.1)), f.real(partner)),
            ];
            p.step(t);
            src.combine(p, op, ty, mine, spare, v < partner);
            halves.push((lo, hi));
            (lo, hi) = keep;
            mask <<= 1;
        }
        while let Some((plo, phi)) = halves.pop() {
            mask >>= 1;
            let partner = f.real(v ^ mask);
            let other = if lo == plo { piece(hi, phi) } else { piece(plo, lo) };
            let t = vec![p.recv(other, partner), p.send(piece(lo, hi), partner)];
            p.step(t);
            (lo, hi) = (plo, phi);
        }
    }
    f.fold_out(p, data);
}

/// For crowded hosts (power-of-two sizes): rank r reduces piece r of the
/// vector from everyone's contributions, all received at once, combining
/// them in Rabenseifner's order ((0 op 1) op (2 op 3)) ..., so the result
/// is the same; then every piece goes to every rank at once (both steps
/// `all_at_once`).
fn allreduce_linear(p: &mut Plan, src: Block, data: Block, ty: &TypeRef, op: Op) {
    let (n, me, es) = (p.n, p.me, ty.size);
    let count = data.len / es;
    let piece = |base: usize, r: usize| {
        let (lo, hi) = (count * r / n, count * (r + 1) / n);
        Block { addr: base + lo * es, len: (hi - lo) * es }
    };
    let mine = piece(data.addr, me);
    let parts = p.scratch(mine.len * n);
    let part = move |r: usize| Block { addr: parts.addr + r * mine.len, len: mine.len };
    let (own, first) = (piece(src.addr, me), part(me));
    // SAFETY: the input and the plan's scratch are distinct valid buffers.
    p.compute(move || unsafe {
        own.copy_to(first);
        Ok(())
    });
    all_at_once(p, part, |r| piece(src.addr, r));
    let mut mask = 1;
    while mask < n {
        for i in (0..n).step_by(2 * mask) {
            combine_into_lower(p, op, ty, part(i), part(i + mask));
        }
        mask <<= 1;
    }
    let result = part(0);
    // SAFETY: scratch and this rank's piece of `data` (no transfer runs).
    p.compute(move || unsafe {
        result.copy_to(mine);
        Ok(())
    });
    all_at_once(p, |r| piece(data.addr, r), |_| mine);
}

/// For short vectors on a crowded host (`tuning::flat`): every rank's
/// vector to every rank at once (`all_at_once`), then each folds them all
/// in rank order, v0 op v1 op ... (as the mailboxes' short allreduce
/// does), in one round of messages where recursive doubling takes log2(n).
fn allreduce_allgather(p: &mut Plan, src: Block, data: Block, ty: &TypeRef, op: Op) {
    let (n, me, len) = (p.n, p.me, data.len);
    let parts = p.scratch(len * n);
    let part = move |r: usize| Block { addr: parts.addr + r * len, len };
    let own = part(me);
    // SAFETY: the input and the plan's scratch are distinct valid buffers.
    p.compute(move || unsafe {
        src.copy_to(own);
        Ok(())
    });
    all_at_once(p, part, |_| own);
    for r in 1..n {
        combine_into_higher(p, op, ty, part(r - 1), part(r));
    }
    let result = part(n - 1);
    // SAFETY: scratch and the result buffer (no transfer runs).
    p.compute(move || unsafe {
        result.copy_to(data);
        Ok(())
    });
}

/// Inclusive (or exclusive) prefix reduction along the ranks: rank r ends
/// with v0 op ... op vr in `data` (exclusive: up to v(r-1); rank 0's is
/// left as is). Each rank folds the prefix from the one before into its
/// own part where it lies and passes the result on; the last rank of an
/// exclusive scan only takes the prefix.
pub fn scan(p: &mut Plan, data: Block, ty: &TypeRef, op: Op, exclusive: bool) {
    let (n, me) = (p.n, p.me);
    let last = me + 1 == n;
    if exclusive && last && me > 0 {
        let t = vec![p.recv(data, me - 1)];
        p.step(t);
        return;
    }
    let prefix = if me > 0 { p.scratch(data.len) } else { Block::EMPTY };
    if me > 0 {
        let t = vec![p.recv(prefix, me - 1)];
        p.step(t);
        combine_into_higher(p, op, ty, prefix, data);
    }
    if !last {
        let t = vec![p.send(data, me + 1)];
        p.step(t);
    }
    if exclusive && me > 0 {
        // SAFETY: the plan's own buffer and `data`, idle during computes.
        p.compute(move || unsafe {
            prefix.copy_to(data);
            Ok(())
        });
    }
}
