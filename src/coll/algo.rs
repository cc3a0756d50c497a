//! The collective algorithms, as plans (DESIGN.md §7): dissemination
//! barrier, binomial broadcast, a binomial reduction that always combines
//! in rank order (so the result does not depend on the root or on
//! timing), recursive-doubling allreduce, linear gather and scatter, ring
//! allgather, pairwise-exchange alltoall and a linear-chain scan. They
//! move bytes between blocks; `abi::coll` packs and unpacks the user's
//! layouts around them.

use super::plan::{Block, Plan};
use super::tuning::{self, Allgather, Allreduce, Alltoall, Bcast};
use crate::datatype::TypeRef;
use crate::error::MpiResult;
use crate::op::{self, Op};

/// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
pub fn barrier(p: &mut Plan) {
    let (n, me) = (p.n, p.me);
    let mut dist = 1;
    while dist < n {
        let t = vec![p.recv(Block::EMPTY, (me + n - dist) % n), p.send(Block::EMPTY, (me + dist) % n)];
        p.step(t);
        dist *= 2;
    }
}

/// Broadcast of `buf` from `root`, by the algorithm `tuning` picks.
pub fn bcast(p: &mut Plan, buf: Block, root: usize) {
    match tuning::bcast(p.n, buf.len) {
        Bcast::Binomial => bcast_binomial(p, buf, root),
        Bcast::ScatterAllgather => bcast_scatter_allgather(p, buf, root),
    }
}

/// Binomial-tree broadcast: log2(n) rounds of the whole message.
fn bcast_binomial(p: &mut Plan, buf: Block, root: usize) {
    let (n, me) = (p.n, p.me);
    let rel = (me + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let t = vec![p.recv(buf, (me + n - mask) % n)];
            p.step(t);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut sends = Vec::new();
    while mask > 0 {
        if rel + mask < n {
            sends.push(p.send(buf, (me + mask) % n));
        }
        mask >>= 1;
    }
    p.step(sends);
}

/// Scatter-allgather broadcast (for long messages): the message is cut in
/// n pieces, scattered down a binomial tree (each rank gets the pieces of
/// its subtree, passes on its children's), then a ring allgather brings
/// every piece everywhere. Each rank moves about 2x the message, where a
/// binomial tree's inner ranks send it log2(n) times.
fn bcast_scatter_allgather(p: &mut Plan, buf: Block, root: usize) {
    let (n, me) = (p.n, p.me);
    let rel = (me + n - root) % n;
    let chunk = buf.len.div_ceil(n);
    // pieces rel..rel+k, by relative rank
    let span = |from: usize, k: usize| {
        let lo = (from * chunk).min(buf.len);
        let hi = ((from + k) * chunk).min(buf.len);
        Block { addr: buf.addr + lo, len: hi - lo }
    };
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            let t = vec![p.recv(span(rel, mask.min(n - rel)), (me + n - mask) % n)];
            p.step(t);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut sends = Vec::new();
    while mask > 0 {
        if rel + mask < n {
            sends.push(p.send(span(rel + mask, mask.min(n - rel - mask)), (me + mask) % n));
        }
        mask >>= 1;
    }
    p.step(sends);
    // ring allgather: real rank r holds the piece of its relative rank
    let blocks: Vec<Block> = (0..n).map(|r| span((r + n - root) % n, 1)).collect();
    allgather_ring(p, &blocks);
}

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

/// Every rank's `mine` to `root`, into `blocks[r]` there (the root's own
/// part is copied when `mine` is not empty).
pub fn gather(p: &mut Plan, mine: Block, root: usize, blocks: &[Block]) {
    let me = p.me;
    if me != root {
        let t = vec![p.send(mine, root)];
        return p.step(t);
    }
    if mine.len > 0 {
        let own = blocks[me];
        // SAFETY: `mine` (the sender's data) and the root's block are
        // valid and distinct (in place passes an empty `mine`).
        p.compute(move || unsafe {
            mine.copy_to(own);
            Ok(())
        });
    }
    let t = (0..p.n).filter(|&r| r != me).map(|r| p.recv(blocks[r], r)).collect();
    p.step(t);
}

/// `blocks[r]` (at root) to rank r's `mine` (the root's own part is copied
/// when `mine` is not empty).
pub fn scatter(p: &mut Plan, blocks: &[Block], root: usize, mine: Block) {
    let me = p.me;
    if me != root {
        let t = vec![p.recv(mine, root)];
        return p.step(t);
    }
    if mine.len > 0 {
        let own = blocks[me];
        // SAFETY: as in `gather`.
        p.compute(move || unsafe {
            own.copy_to(mine);
            Ok(())
        });
    }
    let t = (0..p.n).filter(|&r| r != me).map(|r| p.send(blocks[r], r)).collect();
    p.step(t);
}

/// Every rank sends `sends[r]` to rank r and receives into `recvs[r]`, by
/// the algorithm `tuning` picks. The block for this rank is copied locally
/// (as much as fits). With `alike` (MPI_Alltoall: every rank's blocks are
/// one size, so every rank sees what this one sees) and all blocks one
/// size, Bruck may be picked; never for an Alltoallv, where one rank's
/// blocks may be all alike while another's are not, and ranks that pick
/// different algorithms would exchange blocks they do not expect.
pub fn alltoall(p: &mut Plan, sends: &[Block], recvs: &[Block], alike: bool) {
    let len = sends[0].len;
    let uniform = alike && sends.iter().chain(recvs).all(|b| b.len == len);
    match tuning::alltoall(p.n, uniform.then_some(len)) {
        Alltoall::Pairwise => alltoall_pairwise(p, sends, recvs),
        Alltoall::Bruck => alltoall_bruck(p, sends, recvs),
        Alltoall::Linear => alltoall_linear(p, sends, recvs),
    }
}

/// Every receive and send in one step (`all_at_once`); the own block is
/// copied while they move.
fn alltoall_linear(p: &mut Plan, sends: &[Block], recvs: &[Block]) {
    let copy = own_copy(sends[p.me], recvs[p.me]);
    if p.n == 1 {
        return p.compute(copy);
    }
    all_at_once(p, |r| recvs[r], |r| sends[r]);
    p.alongside(copy);
}

/// One step that receives `into(r)` from every other rank r and sends it
/// `from(r)`: no rank waits for a partner's turn (with more ranks than
/// cores, whoever runs moves what it can).
fn all_at_once(p: &mut Plan, into: impl Fn(usize) -> Block, from: impl Fn(usize) -> Block) {
    let (n, me) = (p.n, p.me);
    let mut t: Vec<_> = (1..n).map(|k| (me + n - k) % n).map(|r| p.recv(into(r), r)).collect();
    t.extend((1..n).map(|k| (me + k) % n).map(|r| p.send(from(r), r)));
    if !t.is_empty() {
        p.step(t);
    }
}

/// A compute that copies this rank's own alltoall block.
fn own_copy(own_s: Block, own_r: Block) -> impl FnMut() -> MpiResult<()> + Send + Copy + 'static {
    // SAFETY: the caller's send and receive blocks do not overlap, and no
    // transfer touches this rank's own pair.
    move || unsafe {
        own_s.copy_to(own_r);
        Ok(())
    }
}

/// Bruck's alltoall for short equal blocks: ceil(log2 n) steps instead of
/// n - 1. Blocks are rotated so block i is the one for rank me + i; step k
/// sends every block whose index has bit k set to rank me + 2^k (packed
/// together) and puts what comes from me - 2^k in their place; block i then
/// holds what rank me - i sent here.
fn alltoall_bruck(p: &mut Plan, sends: &[Block], recvs: &[Block]) {
    let (n, me, b) = (p.n, p.me, sends[0].len);
    let rot = p.scratch(n * b);
    let at = move |i: usize| Block { addr: rot.addr + i * b, len: b };
    let sends_v: Vec<Block> = sends.to_vec();
    // SAFETY: the user's send blocks and the plan's own buffers are valid
    // and distinct; no transfer runs during a compute step.
    p.compute(move || unsafe {
        for i in 0..n {
            sends_v[(me + i) % n].copy_to(at(i));
        }
        Ok(())
    });
    let out = p.scratch(n.div_ceil(2) * b);
    let inn = p.scratch(n.div_ceil(2) * b);
    let mut k = 1;
    while k < n {
        let moved: Vec<usize> = (0..n).filter(|i| i & k != 0).collect();
        let len = moved.len() * b;
        let (o, i_) = (Block { addr: out.addr, len }, Block { addr: inn.addr, len });
        let m = moved.clone();
        // SAFETY: as above.
        p.compute(move || unsafe {
            for (j, &i) in m.iter().enumerate() {
                at(i).copy_to(Block { addr: o.addr + j * b, len: b });
            }
            Ok(())
        });
        let t = vec![p.recv(i_, (me + n - k) % n), p.send(o, (me + k) % n)];
        p.step(t);
        // SAFETY: as above.
        p.compute(move || unsafe {
            for (j, &i) in moved.iter().enumerate() {
                Block { addr: i_.addr + j * b, len: b }.copy_to(at(i));
            }
            Ok(())
        });
        k <<= 1;
    }
    let recvs_v: Vec<Block> = recvs.to_vec();
    // SAFETY: as above.
    p.compute(move || unsafe {
        for i in 0..n {
            at(i).copy_to(recvs_v[(me + n - i) % n]);
        }
        Ok(())
    });
}

/// Pairwise exchange: step k talks to me+k and me-k.
fn alltoall_pairwise(p: &mut Plan, sends: &[Block], recvs: &[Block]) {
    let (n, me) = (p.n, p.me);
    let copy = own_copy(sends[me], recvs[me]);
    if n == 1 {
        return p.compute(copy);
    }
    for k in 1..n {
        let (to, from) = ((me + k) % n, (me + n - k) % n);
        let t = vec![p.recv(recvs[from], from), p.send(sends[to], to)];
        p.step(t);
        if k == 1 {
            p.alongside(copy);
        }
    }
}

/// Allgather: `blocks[r]` holds rank r's part at the end, by the
/// algorithm `tuning` picks. This rank's part is `own` (copied into
/// `blocks[me]` while the first exchange moves), or already in
/// `blocks[me]` when `own` is None.
pub fn allgather(p: &mut Plan, blocks: &[Block], own: Option<Block>) {
    let me = p.me;
    match (tuning::allgather(p.n, blocks.iter().map(|b| b.len).sum()), own) {
        (Allgather::Ring, Some(own)) if p.n > 1 => {
            let (right, left) = ((me + 1) % p.n, (me + p.n - 1) % p.n);
            let t = vec![p.recv(blocks[left], left), p.send(own, right)];
            p.step(t);
            let mine = blocks[me];
            // SAFETY: `own` (only read by the send) and this rank's block
            // (no transfer touches it) are distinct valid buffers.
            p.alongside(move || unsafe {
                own.copy_to(mine);
                Ok(())
            });
            allgather_ring_from(p, blocks, 1);
        }
        (algorithm, own) => {
            if let Some(own) = own {
                let mine = blocks[me];
                // SAFETY: as above.
                p.compute(move || unsafe {
                    own.copy_to(mine);
                    Ok(())
                });
            }
            match algorithm {
                Allgather::Ring => allgather_ring(p, blocks),
                Allgather::RecursiveDoubling => allgather_recursive_doubling(p, blocks),
                Allgather::Linear => allgather_linear(p, blocks),
            }
        }
    }
}

/// Recursive doubling (power-of-two sizes): at distance 1, 2, 4, ... each
/// pair swaps all the parts it holds, doubling them in log2(n) steps.
fn allgather_recursive_doubling(p: &mut Plan, blocks: &[Block]) {
    let me = p.me;
    let mut mask = 1;
    while mask < p.n {
        let partner = me ^ mask;
        let (mine, theirs) = (me & !(mask - 1), partner & !(mask - 1));
        let mut t: Vec<_> = (theirs..theirs + mask).map(|r| p.recv(blocks[r], partner)).collect();
        t.extend((mine..mine + mask).map(|r| p.send(blocks[r], partner)));
        p.step(t);
        mask <<= 1;
    }
}

/// Every rank's part to every rank in one step (`all_at_once`).
fn allgather_linear(p: &mut Plan, blocks: &[Block]) {
    let me = p.me;
    all_at_once(p, |r| blocks[r], |_| blocks[me]);
}

/// Ring allgather: step k passes on the part received in step k-1.
fn allgather_ring(p: &mut Plan, blocks: &[Block]) {
    allgather_ring_from(p, blocks, 0)
}

/// The ring's steps from step `first` on.
fn allgather_ring_from(p: &mut Plan, blocks: &[Block], first: usize) {
    let (n, me) = (p.n, p.me);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    for k in first..n.saturating_sub(1) {
        let (give, take) = ((me + n - k) % n, (me + n - k - 1) % n);
        let t = vec![p.recv(blocks[take], left), p.send(blocks[give], right)];
        p.step(t);
    }
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

/// Neighborhood exchange in one step: receive `recvs[k]` from
/// `sources[k]`, send `sends[k]` to `dests[k]` (None: no transfer), the
/// sends posted in `send_order` (see `comm::topo::Neighbors`).
pub fn neighbor_exchange(
    p: &mut Plan,
    sources: &[Option<usize>],
    recvs: &[Block],
    dests: &[Option<usize>],
    sends: &[Block],
    send_order: &[usize],
) {
    let mut t = Vec::with_capacity(sources.len() + dests.len());
    for (src, &b) in sources.iter().zip(recvs) {
        if let Some(r) = *src {
            t.push(p.recv(b, r));
        }
    }
    for &k in send_order {
        if let Some(r) = dests[k] {
            t.push(p.send(sends[k], r));
        }
    }
    p.step(t);
}
