//! Collectives on intercommunicators (MPI 4.0 §6.2.2): data flows from
//! one group to the other. Rooted operations have a root in one group
//! (MPI_ROOT), its group's other members idle (MPI_PROC_NULL), and the
//! other group naming the root's rank; the local phases (a reduction
//! within a group, the spread of a result through it) reuse the
//! intracommunicator algorithms on the local group, and each group's rank
//! 0 (its leader) talks to the other group.

use super::algo;
use super::plan::{Block, Plan};
use crate::datatype::TypeRef;
use crate::op::Op;

/// This process's part in a rooted operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The root (MPI_ROOT).
    Root,
    /// In the root's group but not the root (MPI_PROC_NULL): no part.
    Idle,
    /// In the other group; the root is this rank of the remote group.
    Toward(usize),
}

/// Every process of one group leaves once all of the other have entered:
/// a barrier in each group, the leaders swap tokens, then each leader
/// releases its group.
pub fn barrier(p: &mut Plan) {
    algo::barrier(p);
    leaders_swap(p, Block::EMPTY, Block::EMPTY);
    algo::bcast(p, Block::EMPTY, 0);
}

/// The two groups' leaders send `mine` to each other, receiving `theirs`.
fn leaders_swap(p: &mut Plan, mine: Block, theirs: Block) {
    if p.me == 0 {
        let t = vec![p.recv_remote(theirs, 0), p.send_remote(mine, 0)];
        p.step(t);
    }
}

/// The root's `buf` reaches every process of the other group: the
/// root sends it to that group's leader, which broadcasts it.
pub fn bcast(p: &mut Plan, buf: Block, role: Role) {
    match role {
        Role::Root => {
            let t = vec![p.send_remote(buf, 0)];
            p.step(t);
        }
        Role::Idle => {}
        Role::Toward(root) => {
            if p.me == 0 {
                let t = vec![p.recv_remote(buf, root)];
                p.step(t);
            }
            algo::bcast(p, buf, 0);
        }
    }
}

/// The root receives `blocks[r]` from each remote rank r, which sends `mine`.
pub fn gather(p: &mut Plan, role: Role, mine: Block, blocks: &[Block]) {
    let t = match role {
        Role::Root => (0..p.remote_size()).map(|r| p.recv_remote(blocks[r], r)).collect(),
        Role::Idle => vec![],
        Role::Toward(root) => vec![p.send_remote(mine, root)],
    };
    p.step(t);
}

/// The root sends `blocks[r]` to each remote rank r, which receives `mine`.
pub fn scatter(p: &mut Plan, role: Role, blocks: &[Block], mine: Block) {
    let t = match role {
        Role::Root => (0..p.remote_size()).map(|r| p.send_remote(blocks[r], r)).collect(),
        Role::Idle => vec![],
        Role::Toward(root) => vec![p.recv_remote(mine, root)],
    };
    p.step(t);
}

/// Every process sends `sends[r]` to remote rank r and receives `recvs[r]`
/// from it (Allgather passes one block as every `sends[r]`).
pub fn alltoall(p: &mut Plan, sends: &[Block], recvs: &[Block]) {
    let mut t = Vec::with_capacity(2 * recvs.len());
    for (r, &b) in recvs.iter().enumerate() {
        t.push(p.recv_remote(b, r));
    }
    for (r, &b) in sends.iter().enumerate() {
        t.push(p.send_remote(b, r));
    }
    p.step(t);
}

/// The root gets in `data` the reduction of the other group's `data`
/// (reduced within that group in rank order, then sent by its leader).
pub fn reduce(p: &mut Plan, data: Block, ty: &TypeRef, op: Op, role: Role) {
    match role {
        Role::Root => {
            let t = vec![p.recv_remote(data, 0)];
            p.step(t);
        }
        Role::Idle => {}
        Role::Toward(root) => {
            algo::reduce(p, data, ty, op, 0);
            if p.me == 0 {
                let t = vec![p.send_remote(data, root)];
                p.step(t);
            }
        }
    }
}

/// Every process gets in `result` the reduction of the other group's
/// `data` (which is overwritten): each group reduces to its leader, the
/// leaders swap, each broadcasts what it got.
pub fn allreduce(p: &mut Plan, data: Block, result: Block, ty: &TypeRef, op: Op) {
    algo::reduce(p, data, ty, op, 0);
    leaders_swap(p, data, result);
    algo::bcast(p, result, 0);
}

/// The reduction of the other group's `data` is scattered over this group:
/// `parts[r]` (offsets into a vector as long as `data`) to local rank r,
/// into `mine` here.
pub fn reduce_scatter(p: &mut Plan, data: Block, ty: &TypeRef, op: Op, parts: &[(usize, usize)], mine: Block) {
    algo::reduce(p, data, ty, op, 0);
    let theirs = if p.me == 0 { p.scratch(data.len) } else { Block::EMPTY };
    leaders_swap(p, data, theirs);
    let blocks: Vec<Block> = parts
        .iter()
        .map(|&(at, len)| if p.me == 0 { Block { addr: theirs.addr + at, len } } else { Block::EMPTY })
        .collect();
    algo::scatter(p, &blocks, 0, mine);
}
