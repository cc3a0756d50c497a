//! Collectives built on point-to-point in the communicator's collective
//! context (DESIGN.md §7): dissemination barrier, binomial broadcast, and
//! a binomial reduction that always combines in rank order, so the result
//! does not depend on the root or on timing.

use crate::comm::Comm;
use crate::datatype::{byte, TypeInfo};
use crate::error::MpiResult;
use crate::op::{self, Op};
use crate::p2p::protocol::Mode;
use crate::p2p::request::ReqId;
use crate::p2p::{Engine, SendArgs};

const TAG_BARRIER: i32 = 1;
const TAG_BCAST: i32 = 2;
const TAG_REDUCE: i32 = 3;
const TAG_ALLREDUCE: i32 = 4;

fn send(e: &mut Engine, c: &Comm, buf: *const u8, len: usize, to: usize, tag: i32) -> MpiResult<()> {
    let a = SendArgs {
        buf,
        count: len,
        ty: byte(),
        dst: Some(c.group.world_rank(to)),
        tag,
        ctx: c.ctx_coll,
        mode: Mode::Standard,
        label: 0,
        sig: None,
    };
    // SAFETY: callers pass buffers valid for `len` bytes until the wait.
    let id = unsafe { e.isend(a)? };
    e.wait(id);
    Ok(())
}

fn post_recv(e: &mut Engine, c: &Comm, buf: *mut u8, len: usize, from: usize, tag: i32) -> ReqId {
    let src = Some(c.group.world_rank(from));
    // SAFETY: callers pass buffers valid for `len` bytes until the wait.
    unsafe { e.irecv(buf, len, byte(), src, Some(tag), c.ctx_coll, c.group.clone(), 0) }
}

fn recv(e: &mut Engine, c: &Comm, buf: *mut u8, len: usize, from: usize, tag: i32) {
    let id = post_recv(e, c, buf, len, from, tag);
    e.wait(id);
}

/// Dissemination barrier: ceil(log2 n) rounds of zero-byte messages.
pub fn barrier(e: &mut Engine, c: &Comm) -> MpiResult<()> {
    let (n, me) = (c.size(), c.rank);
    let mut dist = 1;
    while dist < n {
        let to = (me + dist) % n;
        let from = (me + n - dist) % n;
        let r = post_recv(e, c, std::ptr::null_mut(), 0, from, TAG_BARRIER);
        send(e, c, std::ptr::null(), 0, to, TAG_BARRIER)?;
        e.wait(r);
        dist *= 2;
    }
    Ok(())
}

/// Binomial-tree broadcast of `len` packed bytes from `root`.
pub fn bcast(e: &mut Engine, c: &Comm, buf: &mut [u8], root: usize) -> MpiResult<()> {
    let (n, me) = (c.size(), c.rank);
    let rel = (me + n - root) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            recv(e, c, buf.as_mut_ptr(), buf.len(), (me + n - mask) % n, TAG_BCAST);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            send(e, c, buf.as_ptr(), buf.len(), (me + mask) % n, TAG_BCAST)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// Reduce `data` (items of `ty` in memory layout, `count` of them) to
/// `root`. On return, the root's `data` holds the result. Partial results
/// travel up a binomial tree rooted at rank 0, each node combining
/// (lower ranks) op (higher ranks), then rank 0 hands the result to root.
pub fn reduce(e: &mut Engine, c: &Comm, data: &mut [u8], ty: &TypeInfo, op: Op, root: usize) -> MpiResult<()> {
    op.check(ty)?;
    let (n, me) = (c.size(), c.rank);
    let mut other = vec![0u8; data.len()];
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            send(e, c, data.as_ptr(), data.len(), me - mask, TAG_REDUCE)?;
            break;
        }
        if me + mask < n {
            recv(e, c, other.as_mut_ptr(), other.len(), me + mask, TAG_REDUCE);
            // data (lower ranks) op other (higher ranks), stored in other.
            op::apply(op, ty, data, &mut other)?;
            data.copy_from_slice(&other);
        }
        mask <<= 1;
    }
    if root != 0 {
        if me == 0 {
            send(e, c, data.as_ptr(), data.len(), root, TAG_REDUCE)?;
        } else if me == root {
            recv(e, c, data.as_mut_ptr(), data.len(), 0, TAG_REDUCE);
        }
    }
    Ok(())
}

/// Allreduce. With a power-of-two size: recursive doubling, log2(n)
/// exchange steps; each pair combines (lower block) op (higher block), so
/// every rank computes the same tree, ((0 op 1) op (2 op 3)) ..., the tree
/// the binomial reduce uses too. Otherwise reduce to rank 0 and broadcast.
pub fn allreduce(e: &mut Engine, c: &Comm, data: &mut [u8], ty: &TypeInfo, op: Op) -> MpiResult<()> {
    let (n, me) = (c.size(), c.rank);
    if n == 1 || !n.is_power_of_two() {
        reduce(e, c, data, ty, op, 0)?;
        return bcast(e, c, data, 0);
    }
    op.check(ty)?;
    let mut theirs = vec![0u8; data.len()];
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        let r = post_recv(e, c, theirs.as_mut_ptr(), theirs.len(), partner, TAG_ALLREDUCE);
        send(e, c, data.as_ptr(), data.len(), partner, TAG_ALLREDUCE)?;
        e.wait(r);
        if me < partner {
            // mine (lower ranks) op theirs, into theirs
            op::apply(op, ty, data, &mut theirs)?;
            data.copy_from_slice(&theirs);
        } else {
            // theirs (lower ranks) op mine, into data
            op::apply(op, ty, &theirs, data)?;
        }
        mask <<= 1;
    }
    Ok(())
}

const TAG_ALLGATHER: i32 = 5;

/// Everyone's `mine` (all the same length), in rank order: gathered at
/// rank 0, then broadcast. Used when communicators are made, not on hot
/// paths.
pub fn allgather_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let (n, me, k) = (c.size(), c.rank, mine.len());
    let mut all = vec![0u8; n * k];
    if me == 0 {
        all[..k].copy_from_slice(mine);
        for r in 1..n {
            recv(e, c, all[r * k..].as_mut_ptr(), k, r, TAG_ALLGATHER);
        }
    } else {
        send(e, c, mine.as_ptr(), k, 0, TAG_ALLGATHER)?;
    }
    bcast(e, c, &mut all, 0)?;
    Ok(all)
}

/// Everyone's `mine` (any lengths), in rank order: gathered at rank 0
/// with their lengths, then broadcast.
pub fn allgatherv_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    let lens = allgather_bytes(e, c, &(mine.len() as u64).to_ne_bytes())?;
    let lens: Vec<usize> = lens.chunks(8).map(|b| u64::from_ne_bytes(b.try_into().unwrap()) as usize).collect();
    let total: usize = lens.iter().sum();
    let mut all = vec![0u8; total];
    if c.rank == 0 {
        let mut at = 0;
        for (r, &l) in lens.iter().enumerate() {
            if r == 0 {
                all[..l].copy_from_slice(mine);
            } else {
                recv(e, c, all[at..].as_mut_ptr(), l, r, TAG_ALLGATHER);
            }
            at += l;
        }
    } else {
        send(e, c, mine.as_ptr(), mine.len(), 0, TAG_ALLGATHER)?;
    }
    bcast(e, c, &mut all, 0)?;
    let mut out = Vec::with_capacity(lens.len());
    let mut at = 0;
    for l in lens {
        out.push(all[at..at + l].to_vec());
        at += l;
    }
    Ok(out)
}
