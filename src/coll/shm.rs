//! Short blocking collectives through the shared-memory mailboxes
//! (`p2p::mailbox`), for messages up to `OXMPI_SHM_COLL_MAX` bytes: no
//! envelopes, matching or requests. A broadcast is one publication read
//! by everyone; a reduction gathers the contributions at local rank 0,
//! which folds them in rank order (v0 op v1 op ... so the result is the
//! one every other algorithm computes) and publishes the result; a
//! barrier is a reduction of nothing; an allgather or alltoall is one
//! publication per rank, each reading its part of everyone's. The path is chosen from the byte
//! count alone, which every member knows alike, so all take it together.

use super::Scratch;
use crate::comm::Group;
use crate::datatype::TypeInfo;
use crate::error::MpiResult;
use crate::op::{self, Op};
use crate::p2p::mailbox::MAILBOX_BYTES;
use crate::p2p::Engine;

/// Names one operation of one communicator in the mailboxes.
pub fn stamp(ctx: u32, seq: u32) -> u64 {
    (ctx as u64) << 32 | seq as u64
}

/// Whether `bytes` go through the mailboxes.
pub fn fits(bytes: usize) -> bool {
    let max = super::tuning::shm_max();
    max > 0 && bytes <= MAILBOX_BYTES.min(max)
}

/// The members of a communicator, as a blocking collective sees them.
pub struct Members<'a> {
    pub group: &'a Group,
    pub me: usize,
}

impl Members<'_> {
    fn world(&self, r: usize) -> usize {
        self.group.world_rank(r)
    }

    fn others(&self, except: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.group.size()).filter(move |&r| r != except).map(|r| self.world(r))
    }
}

/// `buf` from `root` to everyone.
pub fn bcast(e: &mut Engine, m: &Members, stamp: u64, buf: &mut [u8], root: usize) {
    if m.me == root {
        e.publish(stamp, buf, m.others(root));
    } else {
        e.read_mailbox(m.world(root), stamp, buf);
    }
}

/// Everyone's `data` reduced into local rank 0's, in rank order.
fn gather_reduce(e: &mut Engine, m: &Members, stamp: u64, data: &mut [u8], ty: &TypeInfo, op: Op) -> MpiResult<()> {
    if m.me != 0 {
        e.publish(stamp, data, [m.world(0)]);
        return Ok(());
    }
    let mut theirs = Scratch::zeroed(data.len());
    for r in 1..m.group.size() {
        e.read_mailbox(m.world(r), stamp, &mut theirs);
        if op.symmetric() {
            op::apply(op, ty, &theirs, data)?;
        } else {
            // (ranks 0..r) op (rank r), which apply writes into `theirs`
            op::apply(op, ty, data, &mut theirs)?;
            data.copy_from_slice(&theirs);
        }
    }
    Ok(())
}

/// Reduce `data` to `root` (its `data` holds the result).
pub fn reduce(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    data: &mut [u8],
    ty: &TypeInfo,
    op: Op,
    root: usize,
) -> MpiResult<()> {
    gather_reduce(e, m, stamp, data, ty, op)?;
    if root != 0 {
        if m.me == 0 {
            e.publish(stamp, data, [m.world(root)]);
        } else if m.me == root {
            e.read_mailbox(m.world(0), stamp, data);
        }
    }
    Ok(())
}

/// Up to this many ranks, an allreduce or a barrier has every rank
/// publish once and read everyone (one hand-over, n - 1 reads each);
/// beyond, the contributions meet at rank 0 and its result goes out (two
/// hand-overs, n - 1 reads in all at each step).
const ALL_READ_ALL: usize = 8;

/// Allreduce of `data`.
pub fn allreduce(e: &mut Engine, m: &Members, stamp: u64, data: &mut [u8], ty: &TypeInfo, op: Op) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if n > ALL_READ_ALL {
        gather_reduce(e, m, stamp, data, ty, op)?;
        bcast(e, m, stamp, data, 0);
        return Ok(());
    }
    e.publish(stamp, data, m.others(me));
    // v0 op v1 op ... in rank order, this rank's own part from `data`
    let mine = Scratch::from_slice(data);
    let mut theirs = Scratch::zeroed(data.len());
    for r in 0..n {
        if r == me {
            theirs.copy_from_slice(&mine);
        } else {
            e.read_mailbox(m.world(r), stamp, &mut theirs);
        }
        if r == 0 {
            data.copy_from_slice(&theirs);
        } else if op.symmetric() {
            op::apply(op, ty, &theirs, data)?;
        } else {
            // (ranks 0..r) op (rank r), which apply writes into `theirs`
            op::apply(op, ty, data, &mut theirs)?;
            data.copy_from_slice(&theirs);
        }
    }
    Ok(())
}

/// Nobody leaves before everyone has come: with few ranks, each reports
/// to all and waits for all; with more, everyone reports to local rank 0,
/// which then releases them.
pub fn barrier(e: &mut Engine, m: &Members, stamp: u64) {
    let (n, me) = (m.group.size(), m.me);
    if n <= ALL_READ_ALL {
        e.publish(stamp, &[], m.others(me));
        for r in (0..n).filter(|&r| r != me) {
            e.read_mailbox(m.world(r), stamp, &mut []);
        }
        return;
    }
    if m.me == 0 {
        for r in 1..m.group.size() {
            e.read_mailbox(m.world(r), stamp, &mut []);
        }
    } else {
        e.publish(stamp, &[], [m.world(0)]);
    }
    bcast(e, m, stamp, &mut [], 0);
}

/// Everyone's `b`-byte block, in rank order, into `all` (this rank's own
/// block must be in place already).
pub fn allgather(e: &mut Engine, m: &Members, stamp: u64, all: &mut [u8]) {
    let (n, me) = (m.group.size(), m.me);
    let b = all.len() / n.max(1);
    e.publish(stamp, &all[me * b..(me + 1) * b], m.others(me));
    for r in (0..n).filter(|&r| r != me) {
        e.read_mailbox(m.world(r), stamp, &mut all[r * b..(r + 1) * b]);
    }
}

/// Block r of `sends` to rank r, block r of `recvs` from it (equal blocks).
pub fn alltoall(e: &mut Engine, m: &Members, stamp: u64, sends: &[u8], recvs: &mut [u8]) {
    let (n, me) = (m.group.size(), m.me);
    let b = sends.len() / n.max(1);
    recvs[me * b..(me + 1) * b].copy_from_slice(&sends[me * b..(me + 1) * b]);
    e.publish(stamp, sends, m.others(me));
    for r in (0..n).filter(|&r| r != me) {
        e.read_mailbox_at(m.world(r), stamp, me * b, &mut recvs[r * b..(r + 1) * b]);
    }
}
