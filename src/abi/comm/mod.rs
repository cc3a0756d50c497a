//! Groups and communicator management (MPI 4.0 chapter 7): group
//! algebra, dup, create, split (of intercommunicators too), free,
//! compare, names; groups in `groups`, intercommunicators made and merged
//! in `inter`, MPI_Comm_idup in `idup`.

mod groups;
mod idup;
mod inter;

pub use idup::idup_complete;
use inter::{agree_across, install_inter, local_view, unwords};

use super::handles::{self};
use super::{mpi_fn, out, with_state};
use crate::comm::group::{self, Agreement, ContextIds};
use crate::comm::{Comm, Group};
use crate::datatype::{Basic, TypeInfo};
use crate::err;
use crate::error::MpiResult;
use crate::op::Op;
use crate::runtime::State;
use std::os::raw::{c_char, c_int};

const UNDEFINED: c_int = -32766;
const COMM_NULL: c_int = handles::COMM_NULL;
const CONGRUENT: c_int = 1;

/// A communicator that must be an intracommunicator.
fn intra(st: &State, comm: c_int) -> MpiResult<Comm> {
    let c = handles::comm(st, comm)?;
    if c.remote.is_some() {
        return err!(Comm, "this operation needs an intracommunicator, not an intercommunicator");
    }
    Ok(c.clone())
}

/// Every member's `ContextIds::agreement` ANDed (an allreduce on `c`).
fn and_agreements(st: &mut State, c: &Comm) -> MpiResult<Vec<u32>> {
    let mut data: Vec<u8> = st.cids().agreement().iter().flat_map(|w| w.to_ne_bytes()).collect();
    let word = TypeInfo::basic("MPI_UINT32_T", Basic::Int { bytes: 4, signed: false }, 4);
    crate::coll::allreduce(&mut st.engine, c, &mut data, &word, Op::Band)?;
    Ok(data.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect())
}

/// Agree on a context id among the members of `parent` (collective).
fn agree_cid(st: &mut State, parent: &Comm) -> MpiResult<Agreement> {
    match ContextIds::settle(&and_agreements(st, parent)?) {
        Some(agreed) => Ok(agreed),
        None => err!(
            Other,
            "no context id is free on every member: {} communicators are alive; free some (MPI_Comm_free)",
            crate::comm::group::MAX_CONTEXT_IDS
        ),
    }
}

/// Make the communicator of `members` (world ranks) with what its
/// members `agreed` (a communicator of the whole world takes the first
/// set of lines free everywhere, if any), or MPI_COMM_NULL if this
/// process is not a member.
fn install(st: &mut State, members: Vec<usize>, agreed: Agreement, parent: &Comm) -> c_int {
    let (me, everyone) = (st.world().rank, members.len() == st.world().size());
    match Comm::new(members, me, agreed.cid, parent.errors) {
        Some(mut c) => {
            st.cids().take(agreed.cid);
            if everyone {
                c.lines = st.cids().take_set(agreed.line_sets);
            }
            handles::new_comm(st, c)
        }
        None => COMM_NULL,
    }
}

fn write_comm(newcomm: *mut c_int, h: c_int) -> MpiResult<()> {
    // SAFETY: valid per the standard (checked non-null by `out`).
    unsafe { out(newcomm, "newcomm", h) }
}

/// MPI_Comm_dup: same group, error handler and hints (`hints` replaces
/// them for MPI_Comm_dup_with_info); attributes are copied by their
/// callbacks.
fn dup(comm: c_int, newcomm: *mut c_int, hints: Option<Vec<(String, String)>>) -> MpiResult<()> {
    if newcomm.is_null() {
        return err!(Arg, "newcomm is a null pointer");
    }
    let h = with_state(|st| {
        let parent = handles::comm(st, comm)?.clone();
        if let Some(remote) = parent.remote.clone() {
            let local = local_view(&parent);
            let (agreed, _, _) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_DUP, &[])?;
            let h = install_inter(st, local.group.members(), remote.members(), agreed.cid, local.errors);
            handles::comm_mut(st, h)?.hints = hints.unwrap_or(parent.hints.clone());
            return Ok(h);
        }
        let agreed = agree_cid(st, &parent)?;
        let h = install(st, parent.group.members(), agreed, &parent);
        let c = handles::comm_mut(st, h)?;
        c.hints = hints.unwrap_or(parent.hints.clone());
        c.topo = parent.topo.clone();
        Ok(h)
    })?;
    super::attr::copy_all(super::attr::Kind::Comm, comm, h)?;
    write_comm(newcomm, h)
}

mpi_fn! {
    Initialized fn MPI_Comm_dup / PMPI_Comm_dup(comm: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        dup(comm, newcomm, None)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_dup_with_info / PMPI_Comm_dup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        dup(comm, newcomm, Some(super::info::pairs(info)?))
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_set_info / PMPI_Comm_set_info(comm: c_int, info: c_int) errors(Some(comm)) {
        let p = super::info::pairs(info)?;
        with_state(|st| {
            handles::comm_mut(st, comm)?.hints = p;
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_get_info / PMPI_Comm_get_info(comm: c_int, info_used: *mut c_int) errors(Some(comm)) {
        let p = with_state(|st| Ok(handles::comm(st, comm)?.hints.clone()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(info_used, "info_used", super::info::new_info(p)) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_create / PMPI_Comm_create(comm: c_int, group: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        if newcomm.is_null() {
            return err!(Arg, "newcomm is a null pointer");
        }
        let h = with_state(|st| {
            let parent = handles::comm(st, comm)?.clone();
            let g = handles::group(st, group)?.to_vec();
            if g.iter().any(|w| parent.group.rank_of(*w).is_none()) {
                let whose = if parent.remote.is_some() { "the local group of the intercommunicator" } else { "the communicator" };
                return err!(Group, "the group has members outside {whose}");
            }
            if let Some(remote) = &parent.remote {
                return create_inter(st, &parent, remote, g);
            }
            let agreed = agree_cid(st, &parent)?;
            Ok(install(st, g, agreed, &parent))
        })?;
        write_comm(newcomm, h)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_create_group / PMPI_Comm_create_group(comm: c_int, group: c_int, _tag: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        if newcomm.is_null() {
            return err!(Arg, "newcomm is a null pointer");
        }
        let h = with_state(|st| {
            let parent = intra(st, comm)?;
            let g = handles::group(st, group)?;
            let me = st.world().rank;
            if !g.contains(&me) {
                return err!(Group, "MPI_Comm_create_group must be called by the group's members only");
            }
            if g.iter().any(|w| parent.group.rank_of(*w).is_none()) {
                return err!(Group, "the group has members outside the communicator");
            }
            // Agree among the group's members alone, on the parent's
            // collective context.
            let scratch = Comm { name: String::new(), ..Comm::new(g.to_vec(), me, parent.cid(), parent.errors).unwrap() };
            let agreed = agree_cid(st, &scratch)?;
            Ok(install(st, g.to_vec(), agreed, &parent))
        })?;
        write_comm(newcomm, h)
    }
}

/// A split's color: non-negative or MPI_UNDEFINED.
fn check_color(color: c_int) -> MpiResult<()> {
    if color < 0 && color != UNDEFINED {
        return err!(Arg, "color {color} must be non-negative or MPI_UNDEFINED");
    }
    Ok(())
}

/// Every member's (color, key) of communicator `c`, in rank
/// order, one word each (a collective over `c`).
fn colors_and_keys(st: &mut State, c: &Comm, color: c_int, key: c_int) -> MpiResult<Vec<u64>> {
    let mine = (color as u32 as u64) << 32 | key as u32 as u64;
    Ok(unwords(&crate::coll::allgather_bytes(&mut st.engine, c, &mine.to_ne_bytes())?))
}

/// The members whose word of `colors_and_keys` has `color`, ordered by
/// (key, rank), as world ranks (`world` of a rank).
fn of_color(words: &[u64], color: c_int, world: impl Fn(usize) -> usize) -> Vec<usize> {
    let mut part: Vec<(c_int, usize)> = words
        .iter()
        .enumerate()
        .filter(|&(_, &w)| (w >> 32) as u32 as c_int == color)
        .map(|(r, &w)| (w as u32 as c_int, r))
        .collect();
    part.sort();
    part.into_iter().map(|(_, r)| world(r)).collect()
}

/// Split `parent` by color (processes giving MPI_UNDEFINED get
/// MPI_COMM_NULL), ordering each part by (key, rank in parent).
fn split(st: &mut State, parent: &Comm, color: c_int, key: c_int) -> MpiResult<c_int> {
    check_color(color)?;
    let words = colors_and_keys(st, parent, color, key)?;
    let agreed = agree_cid(st, parent)?;
    if color == UNDEFINED {
        return Ok(COMM_NULL);
    }
    Ok(install(st, of_color(&words, color, |r| parent.group.world_rank(r)), agreed, parent))
}

/// MPI_Comm_create of an intercommunicator (MPI 4.0 §7.4.2): each group
/// passes a subgroup of itself (`g`, the same on all its members); the
/// new intercommunicator joins the two subgroups. A process outside its
/// subgroup, or facing an empty one, gets MPI_COMM_NULL.
fn create_inter(st: &mut State, parent: &Comm, remote: &Group, g: Vec<usize>) -> MpiResult<c_int> {
    let local = local_view(parent);
    let mine: Vec<u64> = g.iter().map(|&w| w as u64).collect();
    let (agreed, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_CREATE, &mine)?;
    if !g.contains(&st.world().rank) || theirs.is_empty() {
        return Ok(COMM_NULL);
    }
    Ok(install_inter(st, g, theirs.iter().map(|&w| w as usize).collect(), agreed.cid, parent.errors))
}

/// MPI_Comm_split of an intercommunicator (MPI 4.0 §7.4.2): the processes
/// of each color in either group, ordered by key and then by rank, form
/// an intercommunicator with those of the same color in the other group.
/// A color the other group does not have gives MPI_COMM_NULL, as
/// MPI_UNDEFINED does.
fn split_inter(st: &mut State, parent: &Comm, remote: &Group, color: c_int, key: c_int) -> MpiResult<c_int> {
    check_color(color)?;
    let local = local_view(parent);
    let ours = colors_and_keys(st, &local, color, key)?;
    let (agreed, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_SPLIT, &ours)?;
    if color == UNDEFINED {
        return Ok(COMM_NULL);
    }
    let others = of_color(&theirs, color, |r| remote.world_rank(r));
    if others.is_empty() {
        return Ok(COMM_NULL);
    }
    Ok(install_inter(st, of_color(&ours, color, |r| local.group.world_rank(r)), others, agreed.cid, parent.errors))
}

/// Tags of the two leaders' exchanges (`agree_across`) on an
/// intercommunicator's collective context, one per operation.
const TAG_MERGE: i32 = 1000;
const TAG_DUP: i32 = 1001;
const TAG_SPLIT: i32 = 1002;
const TAG_CREATE: i32 = 1003;

mpi_fn! {
    Initialized fn MPI_Comm_split / PMPI_Comm_split(comm: c_int, color: c_int, key: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        if newcomm.is_null() {
            return err!(Arg, "newcomm is a null pointer");
        }
        let h = with_state(|st| {
            let parent = handles::comm(st, comm)?.clone();
            match &parent.remote {
                Some(remote) => split_inter(st, &parent, remote, color, key),
                None => split(st, &parent, color, key),
            }
        })?;
        write_comm(newcomm, h)
    }
}

/// A new communicator over the members of `parent` for which `color_of`
/// (their rank in parent) gives Some(0), in parent order, carrying `topo`
/// (collective over the parent). The others get MPI_COMM_NULL.
pub fn new_comm_from(
    parent_h: c_int,
    newcomm: *mut c_int,
    color_of: impl Fn(usize) -> Option<c_int>,
    topo: Option<crate::comm::topo::Topology>,
) -> MpiResult<()> {
    if newcomm.is_null() {
        return err!(Arg, "newcomm is a null pointer");
    }
    let h = with_state(|st| {
        let parent = intra(st, parent_h)?;
        let agreed = agree_cid(st, &parent)?;
        let members: Vec<usize> =
            (0..parent.size()).filter(|&r| color_of(r).is_some()).map(|r| parent.group.world_rank(r)).collect();
        let h = install(st, members, agreed, &parent);
        if h != COMM_NULL {
            handles::comm_mut(st, h)?.topo = topo;
        }
        Ok(h)
    })?;
    write_comm(newcomm, h)
}

/// MPI_Comm_split with a topology for the new communicators.
pub fn split_with(
    parent_h: c_int,
    newcomm: *mut c_int,
    color: c_int,
    key: c_int,
    topo: Option<crate::comm::topo::Topology>,
) -> MpiResult<()> {
    if newcomm.is_null() {
        return err!(Arg, "newcomm is a null pointer");
    }
    let h = with_state(|st| {
        let parent = handles::comm(st, parent_h)?.clone();
        let h = split(st, &parent, color, key)?;
        if h != COMM_NULL {
            handles::comm_mut(st, h)?.topo = topo;
        }
        Ok(h)
    })?;
    write_comm(newcomm, h)
}

/// MPI_COMM_TYPE_SHARED and the hardware types: processes on one host.
const COMM_TYPE_SHARED: c_int = 1;
const COMM_TYPE_HW_GUIDED: c_int = 2;
const COMM_TYPE_HW_UNGUIDED: c_int = 3;
const COMMX_TYPE_NEIGHBORHOOD: c_int = 4;

/// The info key naming a hardware resource (MPI 4.0 §7.4.2), and the one
/// resource oxmpi splits by: a host's shared memory.
const HW_RESOURCE_KEY: &str = "mpi_hw_resource_type";
const SHARED_MEMORY: &str = "mpi_shared_memory";

/// The color of this process in MPI_Comm_split_type: its host's (the
/// lowest world rank there) for MPI_COMM_TYPE_SHARED, the unguided split
/// and a split guided to "mpi_shared_memory" (the one resource type
/// oxmpi knows); MPI_UNDEFINED for a guided split that names none or
/// another (MPI 4.0 §7.4.2 returns MPI_COMM_NULL then).
fn split_type_color(st: &State, split_type: c_int, info: c_int) -> MpiResult<c_int> {
    match split_type {
        UNDEFINED => Ok(UNDEFINED),
        COMM_TYPE_SHARED | COMM_TYPE_HW_UNGUIDED | COMMX_TYPE_NEIGHBORHOOD => Ok(st.host_color as c_int),
        COMM_TYPE_HW_GUIDED => {
            let named = super::info::pairs(info)?.into_iter().any(|(k, v)| k == HW_RESOURCE_KEY && v == SHARED_MEMORY);
            Ok(if named { st.host_color as c_int } else { UNDEFINED })
        }
        t => err!(Arg, "split type {t} is not MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED"),
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_split_type / PMPI_Comm_split_type(comm: c_int, split_type: c_int, key: c_int, info: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        if newcomm.is_null() {
            return err!(Arg, "newcomm is a null pointer");
        }
        let (h, smaller) = with_state(|st| {
            let parent = handles::comm(st, comm)?.clone();
            let color = split_type_color(st, split_type, info)?;
            // (on an intercommunicator, as MPICH: each group split by
            // host, joined to the same host's part of the other group)
            let h = match &parent.remote {
                Some(remote) => split_inter(st, &parent, remote, color, key)?,
                None => split(st, &parent, color, key)?,
            };
            // (both groups of an intercommunicator: the same on both sides)
            let members = |c: &Comm| c.size() + c.remote.as_ref().map_or(0, |g| g.size());
            let smaller = h == COMM_NULL || members(handles::comm(st, h)?) < members(&parent);
            Ok((h, smaller))
        })?;
        if split_type == COMM_TYPE_HW_UNGUIDED {
            // each part a strict subset of the parent's group, or none on
            // any rank (all of them share one host, so the sizes agree);
            // the caller's info learns the resource split by (§7.4.2)
            if !smaller {
                let mut whole = h;
                release_comm(&mut whole)?;
                return write_comm(newcomm, COMM_NULL);
            }
            if h != COMM_NULL && info != super::info::INFO_NULL {
                super::info::set_pair(info, HW_RESOURCE_KEY, SHARED_MEMORY)?;
            }
        }
        write_comm(newcomm, h)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_free / PMPI_Comm_free(comm: *mut c_int) errors(None) {
        if comm.is_null() {
            return err!(Arg, "comm is a null pointer");
        }
        // SAFETY: checked non-null.
        release_comm(unsafe { &mut *comm })
    }
}

/// MPI_Comm_free of the communicator `comm` names, which becomes
/// MPI_COMM_NULL.
fn release_comm(comm: &mut c_int) -> MpiResult<()> {
    let h = *comm;
    with_state(|st| handles::comm(st, h).map(|_| ()))?;
    if h == handles::COMM_WORLD || h == handles::COMM_SELF {
        return err!(Comm, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
    }
    // Delete callbacks run first, and may still use the communicator.
    super::attr::delete_all(super::attr::Kind::Comm, h)?;
    with_state(|st| {
        let c = handles::free_comm(st, h)?;
        st.engine.retire_mailbox(c.ctx_coll);
        st.cids().release(c.cid());
        if let Some(s) = c.lines {
            st.cids().release_set(s);
        }
        Ok(())
    })?;
    *comm = COMM_NULL;
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Comm_compare / PMPI_Comm_compare(comm1: c_int, comm2: c_int, result: *mut c_int) errors(Some(comm1)) {
        let r = with_state(|st| {
            let (a, b) = (handles::comm(st, comm1)?, handles::comm(st, comm2)?);
            if a.ctx_p2p == b.ctx_p2p && comm1 == comm2 {
                return Ok(group::IDENT);
            }
            let (ga, gb) = (a.group.members(), b.group.members());
            Ok(match group::compare(&ga, &gb) {
                group::IDENT => CONGRUENT,
                x => x,
            })
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(result, "result", r) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_test_inter / PMPI_Comm_test_inter(comm: c_int, flag: *mut c_int) errors(Some(comm)) {
        let inter = with_state(|st| Ok(handles::comm(st, comm)?.remote.is_some()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(flag, "flag", inter as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_group / PMPI_Comm_group(comm: c_int, group: *mut c_int) errors(Some(comm)) {
        let h = with_state(|st| {
            let m = handles::comm(st, comm)?.group.members();
            Ok(handles::new_group(st, m))
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(group, "group", h) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_set_name / PMPI_Comm_set_name(comm: c_int, comm_name: *const c_char) errors(Some(comm)) {
        if comm_name.is_null() {
            return err!(Arg, "comm_name is a null pointer");
        }
        // SAFETY: a C string per the standard.
        let name: String = unsafe { std::ffi::CStr::from_ptr(comm_name) }.to_string_lossy().chars().take(127).collect();
        with_state(|st| {
            handles::comm_mut(st, comm)?.name = name;
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_get_name / PMPI_Comm_get_name(comm: c_int, comm_name: *mut c_char, resultlen: *mut c_int) errors(Some(comm)) {
        if comm_name.is_null() {
            return err!(Arg, "comm_name is a null pointer");
        }
        let name = with_state(|st| Ok(handles::comm(st, comm)?.name.clone()))?;
        // SAFETY: the standard requires MPI_MAX_OBJECT_NAME bytes.
        let n = unsafe { super::env::write_c_string(comm_name, 128, &name) };
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}
