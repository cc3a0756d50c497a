//! Collectives built on point-to-point in the communicator's collective
//! context (DESIGN.md §7): dissemination barrier, binomial broadcast, a
//! binomial reduction that always combines in rank order (so the result
//! does not depend on the root or on timing), linear gather and scatter,
//! ring allgather, pairwise-exchange alltoall and a linear-chain scan. They
//! move packed bytes; `abi::coll` packs and unpacks the user's layouts.

mod scratch;

use crate::comm::Comm;
use crate::datatype::{byte, TypeInfo};
use crate::error::MpiResult;
use crate::op::{self, Op};
use crate::p2p::protocol::Mode;
use crate::p2p::request::ReqId;
use crate::p2p::{Engine, SendArgs};
pub use scratch::Scratch;

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

/// Fail with MPI_ERR_TRUNCATE when a rank sent more than was expected of
/// it (the standard's "type signatures must match", which MPICH reports).
fn check_fit(st: &crate::p2p::request::Status, from: usize) -> MpiResult<()> {
    if st.sent_bytes > st.bytes {
        return crate::err!(
            Truncate,
            "rank {from} sent {} bytes where {} were expected (send and receive type signatures differ)",
            st.sent_bytes,
            st.bytes
        );
    }
    Ok(())
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
    let mut other = Scratch::zeroed(data.len());
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
    let mut theirs = Scratch::zeroed(data.len());
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

/// Everyone's `mine` (all the same length), in rank order, by the ring
/// allgather. Used when communicators are made.
pub fn allgather_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let (n, k) = (c.size(), mine.len());
    if k == 0 {
        return Ok(vec![]);
    }
    let mut all = vec![0u8; n * k];
    all[c.rank * k..(c.rank + 1) * k].copy_from_slice(mine);
    let blocks: Vec<BlockMut> = all.chunks_mut(k).map(|b| (b.as_mut_ptr(), k)).collect();
    // SAFETY: the blocks are disjoint pieces of `all`, alive for the call.
    unsafe { allgather(e, c, &blocks)? };
    Ok(all)
}

/// Everyone's `mine` (any lengths), in rank order: the lengths first,
/// then the parts, both by the ring allgather.
pub fn allgatherv_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    let lens = allgather_bytes(e, c, &(mine.len() as u64).to_ne_bytes())?;
    let mut out: Vec<Vec<u8>> =
        lens.chunks(8).map(|b| vec![0u8; u64::from_ne_bytes(b.try_into().unwrap()) as usize]).collect();
    out[c.rank].copy_from_slice(mine);
    let blocks: Vec<BlockMut> = out.iter_mut().map(|v| (v.as_mut_ptr(), v.len())).collect();
    // SAFETY: each block is its own vector, alive for the call.
    unsafe { allgather(e, c, &blocks)? };
    Ok(out)
}

const TAG_GATHER: i32 = 6;
const TAG_SCATTER: i32 = 7;
const TAG_ALLTOALL: i32 = 8;
const TAG_SCAN: i32 = 9;
const TAG_ALLGATHER_RING: i32 = 10;

/// Gather every rank's bytes at `root` (lengths `lens`, known at root):
/// the root gets all parts in rank order, the others nothing.
pub fn gather(e: &mut Engine, c: &Comm, mine: &[u8], root: usize, lens: &[usize]) -> MpiResult<Vec<Scratch>> {
    let me = c.rank;
    if me != root {
        send(e, c, mine.as_ptr(), mine.len(), root, TAG_GATHER)?;
        return Ok(vec![]);
    }
    let mut parts: Vec<Scratch> = lens.iter().map(|&l| Scratch::zeroed(l)).collect();
    parts[me] = Scratch::from_slice(mine);
    let mut reqs = Vec::new();
    let mut from = Vec::new();
    for (r, part) in parts.iter_mut().enumerate() {
        if r != me {
            let len = part.len();
            reqs.push(post_recv(e, c, part.as_mut_ptr(), len, r, TAG_GATHER));
            from.push(r);
        }
    }
    let mut st = vec![Default::default(); reqs.len()];
    e.wait_all(&reqs, &mut st);
    for (s, &r) in st.iter().zip(&from) {
        check_fit(s, r)?;
    }
    Ok(parts)
}

/// Scatter `parts` (at root) so rank r gets `parts[r]` (`len` bytes).
pub fn scatter(e: &mut Engine, c: &Comm, parts: &[Scratch], root: usize, len: usize) -> MpiResult<Scratch> {
    let me = c.rank;
    if me != root {
        let mut mine = Scratch::zeroed(len);
        let id = post_recv(e, c, mine.as_mut_ptr(), len, root, TAG_SCATTER);
        check_fit(&e.wait(id), root)?;
        return Ok(mine);
    }
    let mut reqs = Vec::new();
    for (r, part) in parts.iter().enumerate() {
        if r != me {
            let a = SendArgs {
                buf: part.as_ptr(),
                count: part.len(),
                ty: byte(),
                dst: Some(c.group.world_rank(r)),
                tag: TAG_SCATTER,
                ctx: c.ctx_coll,
                mode: Mode::Standard,
                label: 0,
                sig: None,
            };
            // SAFETY: `parts` outlives the wait below.
            reqs.push(unsafe { e.isend(a)? });
        }
    }
    let mut st = vec![Default::default(); reqs.len()];
    e.wait_all(&reqs, &mut st);
    Ok(Scratch::from_slice(&parts[me]))
}

/// A block of bytes to send: where it starts and how long it is.
pub type Block = (*const u8, usize);
/// A block of bytes to receive into.
pub type BlockMut = (*mut u8, usize);

/// Every rank sends `sends[r]` to rank r and receives into `recvs[r]`
/// (pairwise exchange: step k talks to me+k and me-k). The blocks may be
/// the user's own memory; the block for this rank is copied locally.
///
/// # Safety
/// Every block must be valid for its length for the whole call, and no
/// receive block may overlap a send block.
pub unsafe fn alltoall(e: &mut Engine, c: &Comm, sends: &[Block], recvs: &[BlockMut]) -> MpiResult<()> {
    let (n, me) = (c.size(), c.rank);
    let ((sp, sl), (rp, rl)) = (sends[me], recvs[me]);
    if sl > rl {
        return crate::err!(Truncate, "rank {me} sends {sl} bytes to itself but expects {rl}");
    }
    if sl > 0 {
        // SAFETY: the caller's blocks are valid and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(sp, rp, sl) };
    }
    // a misfit is reported after every step, so no peer is left waiting
    let mut fit = Ok(());
    for k in 1..n {
        let (to, from) = ((me + k) % n, (me + n - k) % n);
        let r = post_recv(e, c, recvs[from].0, recvs[from].1, from, TAG_ALLTOALL);
        send(e, c, sends[to].0, sends[to].1, to, TAG_ALLTOALL)?;
        let st = e.wait(r);
        fit = fit.and(check_fit(&st, from));
    }
    fit
}

/// Ring allgather: `blocks[me]` holds this rank's part on entry and
/// `blocks[r]` rank r's on return; step k passes on the part received in
/// step k-1.
///
/// # Safety
/// Every block must be valid for its length for the whole call, and the
/// blocks must not overlap.
pub unsafe fn allgather(e: &mut Engine, c: &Comm, blocks: &[BlockMut]) -> MpiResult<()> {
    let (n, me) = (c.size(), c.rank);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut fit = Ok(());
    for k in 0..n.saturating_sub(1) {
        let (give, take) = ((me + n - k) % n, (me + n - k - 1) % n);
        let r = post_recv(e, c, blocks[take].0, blocks[take].1, left, TAG_ALLGATHER_RING);
        send(e, c, blocks[give].0, blocks[give].1, right, TAG_ALLGATHER_RING)?;
        let st = e.wait(r);
        fit = fit.and(check_fit(&st, left));
    }
    fit
}

/// Inclusive (or exclusive) prefix reduction along the ranks: rank r ends
/// with v0 op ... op vr (exclusive: up to v(r-1); rank 0's is left as is
/// and `false` is returned for it).
pub fn scan(e: &mut Engine, c: &Comm, data: &mut [u8], ty: &TypeInfo, op: Op, exclusive: bool) -> MpiResult<bool> {
    op.check(ty)?;
    let (n, me) = (c.size(), c.rank);
    let mine = Scratch::from_slice(data);
    let mut prefix = Scratch::zeroed(data.len());
    if me > 0 {
        recv(e, c, prefix.as_mut_ptr(), prefix.len(), me - 1, TAG_SCAN);
    }
    // what goes on: (prefix op mine), or mine alone at rank 0
    let mut onward = Scratch::from_slice(&mine);
    if me > 0 {
        op::apply(op, ty, &prefix, &mut onward)?;
    }
    if me + 1 < n {
        send(e, c, onward.as_ptr(), onward.len(), me + 1, TAG_SCAN)?;
    }
    if exclusive {
        if me > 0 {
            data.copy_from_slice(&prefix);
        }
        return Ok(me > 0);
    }
    data.copy_from_slice(&onward);
    Ok(true)
}
