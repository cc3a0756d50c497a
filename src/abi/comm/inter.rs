//! Intercommunicators (MPI 4.0 §7.6): made from two groups' leaders
//! (MPI_Intercomm_create), merged into one intracommunicator, and their
//! remote group's size and members.

use super::*;
use crate::comm::ErrorMode;

/// The local group of an intercommunicator as an intracommunicator, on
/// its collective context (for the library's own agreements).
pub(super) fn local_view(c: &Comm) -> Comm {
    Comm { remote: None, ..c.clone() }
}

/// Send `data` (any length) to world rank `to` and receive the peer's, on
/// context `ctx` with `tag`: how the two leaders of an intercommunicator
/// talk.
fn leader_exchange(st: &mut State, ctx: u32, to: usize, tag: i32, data: &[u8]) -> MpiResult<Vec<u8>> {
    use crate::p2p::{protocol::Mode, request::RecvArgs, SendArgs};
    let byte = crate::datatype::byte();
    let group = crate::comm::Group::World(st.world().size());
    let exchange = |st: &mut State, out: &[u8], inp: &mut [u8]| -> MpiResult<()> {
        // SAFETY: both buffers outlive the waits below.
        let r = unsafe {
            st.engine.irecv(RecvArgs {
                buf: inp.as_mut_ptr() as usize,
                count: inp.len(),
                ty: byte.clone(),
                src: Some(to),
                tag: Some(tag),
                ctx,
                group: group.clone(),
                label: 0,
            })
        };
        let a = SendArgs {
            buf: out.as_ptr(),
            count: out.len(),
            ty: byte.clone(),
            dst: Some(to),
            tag,
            ctx,
            mode: Mode::Standard,
            label: 0,
            sig: None,
        };
        // SAFETY: as above.
        let s = unsafe { st.engine.isend(a)? };
        let mut done = [Default::default(); 2];
        st.engine.wait_all(&[r, s], &mut done);
        Ok(())
    };
    let mut len = [0u8; 8];
    exchange(st, &(data.len() as u64).to_ne_bytes(), &mut len)?;
    let mut theirs = vec![0u8; u64::from_ne_bytes(len) as usize];
    exchange(st, data, &mut theirs)?;
    Ok(theirs)
}

fn words(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

pub(super) fn unwords(b: &[u8]) -> Vec<u64> {
    b.chunks(8).map(|c| u64::from_ne_bytes(c.try_into().unwrap())).collect()
}

/// Broadcast a variable-length message from local rank `root` of `c`.
fn bcast_var(st: &mut State, c: &Comm, root: usize, data: Vec<u8>) -> MpiResult<Vec<u8>> {
    let mut len = (data.len() as u64).to_ne_bytes();
    crate::coll::bcast(&mut st.engine, c, &mut len, root)?;
    let mut buf = if c.rank == root { data } else { vec![0u8; u64::from_ne_bytes(len) as usize] };
    crate::coll::bcast(&mut st.engine, c, &mut buf, root)?;
    Ok(buf)
}

/// Agree, across the two groups of an intercommunicator being made or
/// used, on a context id free for everyone (and the sets of arrival lines
/// free for everyone, which a merge of the whole world takes one of, as
/// `agree_cid`), and learn the remote group.
/// `leader` is this group's leader (local rank); `peer` the other leader's
/// world rank, reached on context `ctx` with `tag`. Extra `payload` words
/// travel along (intercomm merge uses them).
pub(super) fn agree_across(
    st: &mut State,
    local: &Comm,
    leader: usize,
    peer: usize,
    ctx: u32,
    tag: i32,
    payload: &[u64],
) -> MpiResult<(Agreement, Vec<usize>, Vec<u64>)> {
    // (this group's agreements ANDed, as words of the leaders' exchange)
    let mask: Vec<u64> = and_agreements(st, local)?.into_iter().map(u64::from).collect();
    let mut result = Vec::new();
    if local.rank == leader {
        let members: Vec<u64> = local.group.members().iter().map(|&w| w as u64).collect();
        let msg = [vec![members.len() as u64, payload.len() as u64], members, payload.to_vec(), mask.clone()].concat();
        let theirs = unwords(&leader_exchange(st, ctx, peer, tag, &words(&msg))?);
        let (n, np) = (theirs[0] as usize, theirs[1] as usize);
        let remote = &theirs[2..2 + n];
        let remote_payload = &theirs[2 + n..2 + n + np];
        let remote_mask = &theirs[2 + n + np..];
        let agreed: Vec<u32> = mask.iter().zip(remote_mask).map(|(a, b)| (a & b) as u32).collect();
        let Some(agreed) = ContextIds::settle(&agreed) else {
            return err!(Other, "no context id is free on every member of both groups");
        };
        result = [vec![agreed.cid as u64, agreed.line_sets as u64, n as u64], remote.to_vec(), remote_payload.to_vec()]
            .concat();
    }
    let got = unwords(&bcast_var(st, local, leader, words(&result))?);
    let (agreed, n) = (Agreement { cid: got[0] as u32, line_sets: got[1] as u32 }, got[2] as usize);
    Ok((agreed, got[3..3 + n].iter().map(|&w| w as usize).collect(), got[3 + n..].to_vec()))
}

/// Make the intercommunicator of `local` (world ranks, this process among
/// them) and `remote` with context `cid`, errors handled as `errors`.
pub(super) fn install_inter(
    st: &mut State,
    local: Vec<usize>,
    remote: Vec<usize>,
    cid: u32,
    errors: ErrorMode,
) -> c_int {
    let me = st.world().rank;
    let mut c = Comm::new(local, me, cid, errors).expect("a member of its own group");
    c.remote = Some(crate::comm::Group::List(std::sync::Arc::from(remote)));
    st.cids().take(cid);
    handles::new_comm(st, c)
}

mpi_fn! {
    Initialized fn MPI_Intercomm_create / PMPI_Intercomm_create(local_comm: c_int, local_leader: c_int, peer_comm: c_int, remote_leader: c_int, tag: c_int, newintercomm: *mut c_int) errors(Some(local_comm)) {
        if newintercomm.is_null() {
            return err!(Arg, "newintercomm is a null pointer");
        }
        let h = with_state(|st| {
            let local = handles::comm(st, local_comm)?.clone();
            if local.remote.is_some() {
                return err!(Comm, "local_comm must be an intracommunicator");
            }
            if local_leader < 0 || local_leader as usize >= local.size() {
                return err!(Rank, "local_leader {local_leader} is not a rank of local_comm (0..{})", local.size() - 1);
            }
            let (peer_world, peer_ctx) = if local.rank == local_leader as usize {
                let peer = handles::comm(st, peer_comm)?;
                if remote_leader < 0 || remote_leader as usize >= peer.size() {
                    return err!(Rank, "remote_leader {remote_leader} is not a rank of peer_comm (0..{})", peer.size() - 1);
                }
                (peer.group.world_rank(remote_leader as usize), peer.ctx_coll)
            } else {
                (0, 0)
            };
            let (agreed, remote, _) = agree_across(st, &local, local_leader as usize, peer_world, peer_ctx, tag, &[])?;
            if remote.iter().any(|w| local.group.rank_of(*w).is_some()) {
                return err!(Comm, "the local and remote groups of an intercommunicator must not overlap");
            }
            Ok(install_inter(st, local.group.members(), remote, agreed.cid, local.errors))
        })?;
        write_comm(newintercomm, h)
    }
}

mpi_fn! {
    Initialized fn MPI_Intercomm_merge / PMPI_Intercomm_merge(intercomm: c_int, high: c_int, newintracomm: *mut c_int) errors(Some(intercomm)) {
        if newintracomm.is_null() {
            return err!(Arg, "newintracomm is a null pointer");
        }
        let h = with_state(|st| {
            let c = handles::comm(st, intercomm)?.clone();
            let Some(remote) = c.remote.clone() else {
                return err!(Comm, "MPI_Intercomm_merge needs an intercommunicator");
            };
            let local = local_view(&c);
            let my_first = local.group.world_rank(0) as u64;
            let (agreed, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), c.ctx_coll, TAG_MERGE, &[(high != 0) as u64, my_first])?;
            let (their_high, their_first) = (theirs[0] != 0, theirs[1]);
            let me_high = high != 0;
            // the group that said "low" comes first; on a tie, the one with the lower leader
            let local_first = if me_high != their_high { !me_high } else { my_first < their_first };
            let (a, b) = (local.group.members(), remote.members());
            let members = if local_first { [a, b].concat() } else { [b, a].concat() };
            Ok(install(st, members, agreed, &c))
        })?;
        write_comm(newintracomm, h)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_remote_size / PMPI_Comm_remote_size(comm: c_int, size: *mut c_int) errors(Some(comm)) {
        let n = with_state(|st| match &handles::comm(st, comm)?.remote {
            Some(g) => Ok(g.size()),
            None => err!(Comm, "MPI_Comm_remote_size needs an intercommunicator"),
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_remote_group / PMPI_Comm_remote_group(comm: c_int, group: *mut c_int) errors(Some(comm)) {
        let h = with_state(|st| {
            let m = match &handles::comm(st, comm)?.remote {
                Some(g) => g.members(),
                None => return err!(Comm, "MPI_Comm_remote_group needs an intercommunicator"),
            };
            Ok(handles::new_group(st, m))
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(group, "group", h) }
    }
}
