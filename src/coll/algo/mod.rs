//! The collective algorithms, as plans (DESIGN.md §7): dissemination
//! barrier, binomial broadcast, a binomial reduction that always combines
//! in rank order (so the result does not depend on the root or on
//! timing), recursive-doubling allreduce, linear gather and scatter, ring
//! allgather, pairwise-exchange alltoall and a linear-chain scan. They
//! move bytes between blocks; `abi::coll` packs and unpacks the user's
//! layouts around them. The reductions and the scan are in `reduce`.

mod reduce;
pub use reduce::{allreduce, reduce, scan};

use super::plan::{Block, Plan};
use super::tuning::{self, Allgather, Alltoall, Barrier, Bcast};
use crate::error::MpiResult;

/// Barrier, by the algorithm `tuning` picks: dissemination, or every
/// rank's zero-byte message to every other at once (`all_at_once`).
pub fn barrier(p: &mut Plan) {
    match tuning::barrier(p.n) {
        Barrier::Dissemination => barrier_dissemination(p),
        Barrier::Linear => all_at_once(p, |_| Block::EMPTY, |_| Block::EMPTY),
    }
}

/// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
fn barrier_dissemination(p: &mut Plan) {
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
    allgather_ring(p, &blocks, blocks[me]);
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
    let t = (0..p.n).filter(|&r| r != me).map(|r| p.send(blocks[r], r)).collect();
    p.step(t);
    if mine.len > 0 {
        let own = blocks[me];
        // SAFETY: as in `gather`; the sends only read the blocks.
        let copy = move || unsafe {
            own.copy_to(mine);
            Ok(())
        };
        // (while the others copy theirs out: medians of 6-8 alternated
        // runs, 1 MiB and 256 KiB blocks, 2 ranks on 2 cores 62.8 and
        // 17.5 us -> 53.4 and 14.7 (MPICH 79.8 and 21.2), 4 ranks 228
        // and 51.7 -> 148 and 33.6 (Open MPI 241 and 52.1))
        p.alongside(copy);
    }
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
    all_at_once(p, |r| recvs[r], |r| sends[r]);
    p.alongside(copy);
}

/// One step that receives `into(r)` from every other rank r and sends it
/// `from(r)`: no rank waits for a partner's turn (with more ranks than
/// cores, whoever runs moves what it can).
pub(super) fn all_at_once(p: &mut Plan, into: impl Fn(usize) -> Block, from: impl Fn(usize) -> Block) {
    let (n, me) = (p.n, p.me);
    let mut t = Vec::with_capacity(2 * n.saturating_sub(1));
    t.extend((1..n).map(|k| (me + n - k) % n).map(|r| p.recv(into(r), r)));
    t.extend((1..n).map(|k| (me + k) % n).map(|r| p.send(from(r), r)));
    p.step(t);
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
/// algorithm `tuning` picks. This rank's part is `own` (sent from there by
/// the first exchange, and copied into `blocks[me]` while it moves), or
/// already in `blocks[me]` when `own` is None.
pub fn allgather(p: &mut Plan, blocks: &[Block], own: Option<Block>) {
    let me = p.me;
    let algorithm = tuning::allgather(p.n, blocks.iter().map(|b| b.len).sum());
    let first = p.steps();
    let mine = own.unwrap_or(blocks[me]);
    match algorithm {
        Allgather::Ring => allgather_ring(p, blocks, mine),
        Allgather::RecursiveDoubling => allgather_recursive_doubling(p, blocks, mine),
        Allgather::Linear => allgather_linear(p, blocks, mine),
    }
    if let Some(own) = own {
        let into = blocks[me];
        // SAFETY: `own` (only read by the sends) and this rank's block
        // (no transfer writes it) are distinct valid buffers.
        let copy = move || unsafe {
            own.copy_to(into);
            Ok(())
        };
        if p.n > 1 {
            // after the first exchange's transfers, while they move
            p.alongside_after(first, copy);
        } else {
            p.compute(copy);
        }
    }
}

/// Recursive doubling (power-of-two sizes): at distance 1, 2, 4, ... each
/// pair swaps all the parts it holds, doubling them in log2(n) steps; the
/// first step sends this rank's part from `mine`.
fn allgather_recursive_doubling(p: &mut Plan, blocks: &[Block], mine: Block) {
    let me = p.me;
    let mut mask = 1;
    while mask < p.n {
        let partner = me ^ mask;
        let (ours, theirs) = (me & !(mask - 1), partner & !(mask - 1));
        let mut t = Vec::with_capacity(2 * mask);
        t.extend((theirs..theirs + mask).map(|r| p.recv(blocks[r], partner)));
        t.extend((ours..ours + mask).map(|r| p.send(if mask == 1 { mine } else { blocks[r] }, partner)));
        p.step(t);
        mask <<= 1;
    }
}

/// Every rank's part (this rank's from `mine`) to every rank in one step
/// (`all_at_once`).
fn allgather_linear(p: &mut Plan, blocks: &[Block], mine: Block) {
    all_at_once(p, |r| blocks[r], |_| mine);
}

/// Ring allgather: step k passes on the part received in step k-1 (the
/// first sends this rank's part from `mine`).
fn allgather_ring(p: &mut Plan, blocks: &[Block], mine: Block) {
    let (n, me) = (p.n, p.me);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    for k in 0..n.saturating_sub(1) {
        let (give, take) = ((me + n - k) % n, (me + n - k - 1) % n);
        let t = vec![p.recv(blocks[take], left), p.send(if k == 0 { mine } else { blocks[give] }, right)];
        p.step(t);
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
