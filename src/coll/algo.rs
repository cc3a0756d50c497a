//! The collective algorithms, as plans (DESIGN.md §7): dissemination
//! barrier, binomial broadcast, a binomial reduction that always combines
//! in rank order (so the result does not depend on the root or on
//! timing), recursive-doubling allreduce, linear gather and scatter, ring
//! allgather, pairwise-exchange alltoall and a linear-chain scan. They
//! move bytes between blocks; `abi::coll` packs and unpacks the user's
//! layouts around them.

use super::plan::{Block, Plan};
use crate::datatype::TypeRef;
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

/// Binomial-tree broadcast of `buf` from `root`.
pub fn bcast(p: &mut Plan, buf: Block, root: usize) {
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

/// A step that combines `lower op higher` into `lower` (`op::apply`
/// writes into its right operand, so the result is copied back).
fn combine_into_lower(p: &mut Plan, op: Op, ty: &TypeRef, lower: Block, higher: Block) {
    let ty = ty.clone();
    p.compute(move || {
        // SAFETY: both blocks are the plan's held buffers (or the user's
        // packed data), not in use by any transfer during a compute step.
        unsafe {
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

/// Allreduce of `data`. With a power-of-two size: recursive doubling,
/// log2(n) exchange steps; each pair combines (lower block) op (higher
/// block), so every rank computes the same tree, ((0 op 1) op (2 op 3))
/// ..., the tree the binomial reduce uses too. Otherwise reduce to rank 0
/// and broadcast.
pub fn allreduce(p: &mut Plan, data: Block, ty: &TypeRef, op: Op) {
    let (n, me) = (p.n, p.me);
    if n == 1 {
        return;
    }
    if !n.is_power_of_two() {
        reduce(p, data, ty, op, 0);
        return bcast(p, data, 0);
    }
    let theirs = p.scratch(data.len);
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        let t = vec![p.recv(theirs, partner), p.send(data, partner)];
        p.step(t);
        if me < partner {
            combine_into_lower(p, op, ty, data, theirs);
        } else {
            combine_into_higher(p, op, ty, theirs, data);
        }
        mask <<= 1;
    }
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

/// Every rank sends `sends[r]` to rank r and receives into `recvs[r]`
/// (pairwise exchange: step k talks to me+k and me-k). The block for this
/// rank is copied locally (as much as fits).
pub fn alltoall(p: &mut Plan, sends: &[Block], recvs: &[Block]) {
    let (n, me) = (p.n, p.me);
    let (own_s, own_r) = (sends[me], recvs[me]);
    // SAFETY: the caller's send and receive blocks do not overlap.
    p.compute(move || unsafe {
        own_s.copy_to(own_r);
        Ok(())
    });
    for k in 1..n {
        let (to, from) = ((me + k) % n, (me + n - k) % n);
        let t = vec![p.recv(recvs[from], from), p.send(sends[to], to)];
        p.step(t);
    }
}

/// Ring allgather: `blocks[me]` holds this rank's part at the start and
/// `blocks[r]` rank r's at the end; step k passes on the part received in
/// step k-1.
pub fn allgather(p: &mut Plan, blocks: &[Block]) {
    let (n, me) = (p.n, p.me);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    for k in 0..n.saturating_sub(1) {
        let (give, take) = ((me + n - k) % n, (me + n - k - 1) % n);
        let t = vec![p.recv(blocks[take], left), p.send(blocks[give], right)];
        p.step(t);
    }
}

/// Inclusive (or exclusive) prefix reduction along the ranks: rank r ends
/// with v0 op ... op vr in `data` (exclusive: up to v(r-1); rank 0's is
/// left as is).
pub fn scan(p: &mut Plan, data: Block, ty: &TypeRef, op: Op, exclusive: bool) {
    let (n, me) = (p.n, p.me);
    let prefix = p.scratch(data.len);
    let onward = p.scratch(data.len);
    if me > 0 {
        let t = vec![p.recv(prefix, me - 1)];
        p.step(t);
    }
    // SAFETY: the plan's own buffers and `data`, idle during computes.
    p.compute(move || unsafe {
        data.copy_to(onward);
        Ok(())
    });
    if me > 0 {
        combine_into_higher(p, op, ty, prefix, onward);
    }
    if me + 1 < n {
        let t = vec![p.send(onward, me + 1)];
        p.step(t);
    }
    let result = if exclusive { prefix } else { onward };
    if !exclusive || me > 0 {
        // SAFETY: as above.
        p.compute(move || unsafe {
            result.copy_to(data);
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
