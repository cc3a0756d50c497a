//! Collectives built on point-to-point in the communicator's collective
//! context (DESIGN.md §7). An operation is a `Plan` of steps made by the
//! algorithms in `algo`; `abi::coll` runs it at once or behind a request.
//! Each operation a user starts on a communicator takes the next tag of
//! `TAG_USER..`, so any number may be in flight on it at a time. The
//! blocking helpers below serve the library itself (communicator
//! creation, MPI_Finalize) with fixed tags of their own.

pub mod algo;
pub mod inter;
pub mod plan;
mod scratch;
pub mod shm;
pub mod tuning;

use crate::comm::Comm;
use crate::datatype::{TypeInfo, TypeRef};
use crate::error::MpiResult;
use crate::op::Op;
use crate::p2p::Engine;
pub use plan::{Block, Plan};
pub use scratch::Scratch;
use std::sync::Arc;

const TAG_BARRIER: i32 = 1;
const TAG_BCAST: i32 = 2;
const TAG_ALLREDUCE: i32 = 4;
const TAG_ALLGATHER: i32 = 10;

/// Tags of user-started collectives (below them: these helpers and
/// MPI_Comm_idup's agreement).
pub use crate::p2p::mailbox::{user_tag, TAG_USER};

/// Build a plan on `c` and run it to the end with `tag`.
fn run(e: &mut Engine, c: &Comm, tag: i32, build: impl FnOnce(&mut Plan)) -> MpiResult<()> {
    let mut p = Plan::new(c);
    build(&mut p);
    e.run_schedule(p.into_schedule(c.ctx_coll, tag))
}

pub fn barrier(e: &mut Engine, c: &Comm) -> MpiResult<()> {
    run(e, c, TAG_BARRIER, algo::barrier)
}

/// Broadcast `buf` from `root`.
pub fn bcast(e: &mut Engine, c: &Comm, buf: &mut [u8], root: usize) -> MpiResult<()> {
    let b = Block::new(buf.as_ptr(), buf.len());
    run(e, c, TAG_BCAST, |p| algo::bcast(p, b, root))
}

/// Allreduce `data`, items of the predefined type `ty`.
pub fn allreduce(e: &mut Engine, c: &Comm, data: &mut [u8], ty: &TypeInfo, op: Op) -> MpiResult<()> {
    op.check(ty)?;
    let (b, ty) = (Block::new(data.as_ptr(), data.len()), TypeRef::Derived(Arc::new(ty.clone())));
    run(e, c, TAG_ALLREDUCE, |p| algo::allreduce(p, b, b, &ty, op))
}

/// Everyone's `mine` (all the same length), in rank order.
pub fn allgather_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let (n, k) = (c.size(), mine.len());
    if k == 0 {
        return Ok(vec![]);
    }
    let mut all = vec![0u8; n * k];
    all[c.rank * k..(c.rank + 1) * k].copy_from_slice(mine);
    let blocks: Vec<Block> = all.chunks(k).map(|b| Block::new(b.as_ptr(), k)).collect();
    run(e, c, TAG_ALLGATHER, |p| algo::allgather(p, &blocks, None))?;
    Ok(all)
}

/// Everyone's `mine` (any lengths), in rank order: the lengths first,
/// then the parts.
pub fn allgatherv_bytes(e: &mut Engine, c: &Comm, mine: &[u8]) -> MpiResult<Vec<Vec<u8>>> {
    let lens = allgather_bytes(e, c, &(mine.len() as u64).to_ne_bytes())?;
    let mut out: Vec<Vec<u8>> =
        lens.chunks(8).map(|b| vec![0u8; u64::from_ne_bytes(b.try_into().unwrap()) as usize]).collect();
    out[c.rank].copy_from_slice(mine);
    let blocks: Vec<Block> = out.iter().map(|v| Block::new(v.as_ptr(), v.len())).collect();
    run(e, c, TAG_ALLGATHER, |p| algo::allgather(p, &blocks, None))?;
    Ok(out)
}
