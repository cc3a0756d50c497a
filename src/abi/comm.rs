//! Groups and communicator management (MPI 4.0 chapter 7): group
//! algebra, dup, create, split (of intercommunicators too), free,
//! compare, names; intercommunicators are made and merged further down.

use super::handles::{self, GROUP_NULL};
use super::{mpi_fn, out, with_state};
use crate::comm::group::{self, ContextIds};
use crate::comm::{Comm, ErrorMode, Group};
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

/// Agree on a context id among the members of `parent` (collective).
fn agree_cid(st: &mut State, parent: &Comm) -> MpiResult<u32> {
    let mask = st.cids().mask();
    let mut data: Vec<u8> = mask.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let word = TypeInfo::basic("MPI_UINT32_T", Basic::Int { bytes: 4, signed: false }, 4);
    crate::coll::allreduce(&mut st.engine, parent, &mut data, &word, Op::Band)?;
    let agreed: Vec<u32> = data.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
    match ContextIds::lowest(&agreed) {
        Some(id) => Ok(id),
        None => err!(
            Other,
            "no context id is free on every member: {} communicators are alive; free some (MPI_Comm_free)",
            crate::comm::group::MAX_CONTEXT_IDS
        ),
    }
}

/// Make the communicator of `members` (world ranks) with context `cid`,
/// or MPI_COMM_NULL if this process is not a member.
fn install(st: &mut State, members: Vec<usize>, cid: u32, parent: &Comm) -> c_int {
    let me = st.world().rank;
    match Comm::new(members, me, cid, parent.errors) {
        Some(c) => {
            st.cids().take(cid);
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
            let (cid, _, _) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_DUP, &[])?;
            let h = install_inter(st, local.group.members(), remote.members(), cid, local.errors);
            handles::comm_mut(st, h)?.hints = hints.unwrap_or(parent.hints.clone());
            return Ok(h);
        }
        let cid = agree_cid(st, &parent)?;
        let h = install(st, parent.group.members(), cid, &parent);
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
            let cid = agree_cid(st, &parent)?;
            Ok(install(st, g, cid, &parent))
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
            let cid = agree_cid(st, &scratch)?;
            Ok(install(st, g.to_vec(), cid, &parent))
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
    let cid = agree_cid(st, parent)?;
    if color == UNDEFINED {
        return Ok(COMM_NULL);
    }
    Ok(install(st, of_color(&words, color, |r| parent.group.world_rank(r)), cid, parent))
}

/// MPI_Comm_create of an intercommunicator (MPI 4.0 §7.4.2): each group
/// passes a subgroup of itself (`g`, the same on all its members); the
/// new intercommunicator joins the two subgroups. A process outside its
/// subgroup, or facing an empty one, gets MPI_COMM_NULL.
fn create_inter(st: &mut State, parent: &Comm, remote: &Group, g: Vec<usize>) -> MpiResult<c_int> {
    let local = local_view(parent);
    let mine: Vec<u64> = g.iter().map(|&w| w as u64).collect();
    let (cid, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_CREATE, &mine)?;
    if !g.contains(&st.world().rank) || theirs.is_empty() {
        return Ok(COMM_NULL);
    }
    Ok(install_inter(st, g, theirs.iter().map(|&w| w as usize).collect(), cid, parent.errors))
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
    let (cid, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), parent.ctx_coll, TAG_SPLIT, &ours)?;
    if color == UNDEFINED {
        return Ok(COMM_NULL);
    }
    let others = of_color(&theirs, color, |r| remote.world_rank(r));
    if others.is_empty() {
        return Ok(COMM_NULL);
    }
    Ok(install_inter(st, of_color(&ours, color, |r| local.group.world_rank(r)), others, cid, parent.errors))
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
        let cid = agree_cid(st, &parent)?;
        let members: Vec<usize> =
            (0..parent.size()).filter(|&r| color_of(r).is_some()).map(|r| parent.group.world_rank(r)).collect();
        let h = install(st, members, cid, &parent);
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

mpi_fn! {
    Initialized fn MPI_Comm_split_type / PMPI_Comm_split_type(comm: c_int, split_type: c_int, key: c_int, _info: c_int, newcomm: *mut c_int) errors(Some(comm)) {
        if newcomm.is_null() {
            return err!(Arg, "newcomm is a null pointer");
        }
        let h = with_state(|st| {
            let parent = intra(st, comm)?;
            let color = match split_type {
                UNDEFINED => UNDEFINED,
                COMM_TYPE_SHARED | COMM_TYPE_HW_GUIDED | COMM_TYPE_HW_UNGUIDED | COMMX_TYPE_NEIGHBORHOOD => {
                    // one color per host: its lowest world rank
                    st.host_color as c_int
                }
                t => return err!(Arg, "split type {t} is not MPI_COMM_TYPE_SHARED, a hardware type or MPI_UNDEFINED"),
            };
            split(st, &parent, color, key)
        })?;
        write_comm(newcomm, h)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_free / PMPI_Comm_free(comm: *mut c_int) errors(None) {
        if comm.is_null() {
            return err!(Arg, "comm is a null pointer");
        }
        // SAFETY: checked non-null.
        let h = unsafe { *comm };
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
            Ok(())
        })?;
        // SAFETY: checked non-null.
        unsafe { *comm = COMM_NULL };
        Ok(())
    }
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

/// Define a group query or constructor over the state.
fn group_out(group: *mut c_int, f: impl FnOnce(&State) -> MpiResult<Vec<usize>>) -> MpiResult<()> {
    if group.is_null() {
        return err!(Arg, "newgroup is a null pointer");
    }
    let h = with_state(|st| {
        let m = f(st)?;
        Ok(handles::new_group(st, m))
    })?;
    // SAFETY: checked non-null.
    unsafe { *group = h };
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Group_size / PMPI_Group_size(group: c_int, size: *mut c_int) errors(None) {
        let n = with_state(|st| Ok(handles::group(st, group)?.len()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Group_rank / PMPI_Group_rank(group: c_int, rank: *mut c_int) errors(None) {
        let r = with_state(|st| {
            let g = handles::group(st, group)?;
            let me = st.world().rank;
            Ok(g.iter().position(|&w| w == me).map_or(UNDEFINED, |p| p as c_int))
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(rank, "rank", r) }
    }
}

mpi_fn! {
    Initialized fn MPI_Group_free / PMPI_Group_free(group: *mut c_int) errors(None) {
        if group.is_null() {
            return err!(Arg, "group is a null pointer");
        }
        // SAFETY: checked non-null.
        with_state(|st| handles::free_group(st, unsafe { *group }))?;
        // SAFETY: as above.
        unsafe { *group = GROUP_NULL };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Group_compare / PMPI_Group_compare(group1: c_int, group2: c_int, result: *mut c_int) errors(None) {
        let r = with_state(|st| Ok(group::compare(&handles::group(st, group1)?, &handles::group(st, group2)?)))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(result, "result", r) }
    }
}

/// Define a two-group set operation.
macro_rules! set_op {
    ($f:ident / $pf:ident, $op:path) => {
        mpi_fn! {
            Initialized fn $f / $pf(group1: c_int, group2: c_int, newgroup: *mut c_int) errors(None) {
                group_out(newgroup, |st| Ok($op(&handles::group(st, group1)?, &handles::group(st, group2)?)))
            }
        }
    };
}

set_op!(MPI_Group_union / PMPI_Group_union, group::union);
set_op!(MPI_Group_intersection / PMPI_Group_intersection, group::intersection);
set_op!(MPI_Group_difference / PMPI_Group_difference, group::difference);

/// # Safety
/// `p` holds `n` ints (n checked non-negative).
unsafe fn ints(p: *const c_int, n: c_int) -> MpiResult<Vec<i64>> {
    if n < 0 {
        return err!(Arg, "count {n} is negative");
    }
    if n > 0 && p.is_null() {
        return err!(Arg, "the rank array is a null pointer");
    }
    if n == 0 {
        return Ok(vec![]);
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) }.iter().map(|&x| x as i64).collect())
}

mpi_fn! {
    Initialized fn MPI_Group_incl / PMPI_Group_incl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks, n)? };
        group_out(newgroup, |st| group::incl(&handles::group(st, group)?, &r))
    }
}

mpi_fn! {
    Initialized fn MPI_Group_excl / PMPI_Group_excl(group: c_int, n: c_int, ranks: *const c_int, newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks, n)? };
        group_out(newgroup, |st| group::excl(&handles::group(st, group)?, &r))
    }
}

/// # Safety
/// `ranges` holds `n` triplets.
unsafe fn triplets(ranges: *const [c_int; 3], n: c_int) -> MpiResult<Vec<(i64, i64, i64)>> {
    // SAFETY: 3n ints per the caller's contract.
    let flat = unsafe { ints(ranges as *const c_int, n.saturating_mul(3))? };
    Ok(flat.chunks(3).map(|t| (t[0], t[1], t[2])).collect())
}

mpi_fn! {
    Initialized fn MPI_Group_range_incl / PMPI_Group_range_incl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` triplets per the standard.
        let t = unsafe { triplets(ranges, n)? };
        group_out(newgroup, |st| {
            let g = handles::group(st, group)?;
            group::incl(&g, &group::expand_ranges(&t, g.len())?)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Group_range_excl / PMPI_Group_range_excl(group: c_int, n: c_int, ranges: *const [c_int; 3], newgroup: *mut c_int) errors(None) {
        // SAFETY: `n` triplets per the standard.
        let t = unsafe { triplets(ranges, n)? };
        group_out(newgroup, |st| {
            let g = handles::group(st, group)?;
            group::excl(&g, &group::expand_ranges(&t, g.len())?)
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Group_translate_ranks / PMPI_Group_translate_ranks(group1: c_int, n: c_int, ranks1: *const c_int, group2: c_int, ranks2: *mut c_int) errors(None) {
        // SAFETY: `n` ranks per the standard.
        let r = unsafe { ints(ranks1, n)? };
        let t = with_state(|st| {
            let (a, b) = (handles::group(st, group1)?, handles::group(st, group2)?);
            // MPI_PROC_NULL translates to itself
            let mut out = Vec::with_capacity(r.len());
            for &x in &r {
                out.push(if x == -1 { -1 } else { group::translate(&a, &[x], &b)?[0].map_or(UNDEFINED, |p| p as c_int) });
            }
            Ok(out)
        })?;
        if n > 0 && ranks2.is_null() {
            return err!(Arg, "ranks2 is a null pointer");
        }
        // SAFETY: `n` ints per the standard (checked non-null).
        unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), ranks2, t.len()) };
        Ok(())
    }
}

/// The local group of an intercommunicator as an intracommunicator, on
/// its collective context (for the library's own agreements).
fn local_view(c: &Comm) -> Comm {
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

fn unwords(b: &[u8]) -> Vec<u64> {
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

/// The AND of this group's free context ids (an allreduce on `local`).
fn local_mask(st: &mut State, local: &Comm) -> MpiResult<Vec<u64>> {
    let mask = st.cids().mask();
    let mut data: Vec<u8> = mask.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let word = TypeInfo::basic("MPI_UINT32_T", Basic::Int { bytes: 4, signed: false }, 4);
    crate::coll::allreduce(&mut st.engine, local, &mut data, &word, Op::Band)?;
    Ok(data.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap()) as u64).collect())
}

/// Agree, across the two groups of an intercommunicator being made or
/// used, on a context id free for everyone, and learn the remote group.
/// `leader` is this group's leader (local rank); `peer` the other leader's
/// world rank, reached on context `ctx` with `tag`. Extra `payload` words
/// travel along (intercomm merge uses them).
fn agree_across(
    st: &mut State,
    local: &Comm,
    leader: usize,
    peer: usize,
    ctx: u32,
    tag: i32,
    payload: &[u64],
) -> MpiResult<(u32, Vec<usize>, Vec<u64>)> {
    let mask = local_mask(st, local)?;
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
        let Some(cid) = ContextIds::lowest(&agreed) else {
            return err!(Other, "no context id is free on every member of both groups");
        };
        result = [vec![cid as u64, n as u64], remote.to_vec(), remote_payload.to_vec()].concat();
    }
    let got = unwords(&bcast_var(st, local, leader, words(&result))?);
    let (cid, n) = (got[0] as u32, got[1] as usize);
    Ok((cid, got[2..2 + n].iter().map(|&w| w as usize).collect(), got[2 + n..].to_vec()))
}

/// Make the intercommunicator of `local` (world ranks, this process among
/// them) and `remote` with context `cid`, errors handled as `errors`.
fn install_inter(st: &mut State, local: Vec<usize>, remote: Vec<usize>, cid: u32, errors: ErrorMode) -> c_int {
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
            let (cid, remote, _) = agree_across(st, &local, local_leader as usize, peer_world, peer_ctx, tag, &[])?;
            if remote.iter().any(|w| local.group.rank_of(*w).is_some()) {
                return err!(Comm, "the local and remote groups of an intercommunicator must not overlap");
            }
            Ok(install_inter(st, local.group.members(), remote, cid, local.errors))
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
            let (cid, _, theirs) = agree_across(st, &local, 0, remote.world_rank(0), c.ctx_coll, TAG_MERGE, &[(high != 0) as u64, my_first])?;
            let (their_high, their_first) = (theirs[0] != 0, theirs[1]);
            let me_high = high != 0;
            // the group that said "low" comes first; on a tie, the one with the lower leader
            let local_first = if me_high != their_high { !me_high } else { my_first < their_first };
            let (a, b) = (local.group.members(), remote.members());
            let members = if local_first { [a, b].concat() } else { [b, a].concat() };
            Ok(install(st, members, cid, &c))
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

/// Context id placeholder of a communicator whose MPI_Comm_idup has not
/// completed: it matches no traffic.
const PENDING_CID: u32 = 0x7fff_fff0;

/// Tags of MPI_Comm_idup agreements on the parent's collective context:
/// one per outstanding idup of the same parent (the blocking collectives
/// use 1..5).
const TAG_IDUP: i32 = 100;
const IDUP_TAGS: u32 = 1 << 20;

/// The outcome of an agreement: the context id, or None if none was found.
type Outcome = std::sync::Arc<std::sync::Mutex<Option<Option<u32>>>>;

/// An MPI_Comm_idup's context-id agreement (MPI_Comm_idup never blocks, so
/// it cannot take a snapshot of the free ids and decide later as the
/// blocking calls do: agreements in flight would pick the same id). Each
/// round, every member sets aside the ids of one word of the id space
/// that are free for it (no other agreement can take them meanwhile), the
/// sets meet by AND at rank 0 and come back; a common id is taken, the
/// rest given back, and if there is none the next round tries the next
/// word. The words visited start at a place derived from the parent and
/// the idup's number, the same on every member.
struct IdupPlan {
    cids: std::sync::Arc<std::sync::Mutex<ContextIds>>,
    /// World ranks of the parent's members; this process is `rank`.
    members: Vec<usize>,
    rank: usize,
    first_word: usize,
    outcome: Outcome,
    /// The word and the bits this member set aside in the current round.
    held: std::sync::Arc<std::sync::Mutex<(usize, u32)>>,
    /// For an intercommunicator: the other group's leader (world rank),
    /// whose group's sets our leader meets halfway.
    remote_leader: Option<usize>,
}

impl IdupPlan {
    fn round(self: &std::sync::Arc<Self>, k: usize) -> Vec<crate::p2p::schedule::Step> {
        use crate::p2p::schedule::{Buf, Step, Transfer};
        let n = self.members.len();
        let word = (self.first_word + k) % ContextIds::WORDS;
        let me = self.clone();
        let reserve: crate::p2p::schedule::Compute = Box::new(move |b: &mut [Vec<u8>]| {
            let bits = me.cids.lock().unwrap_or_else(|p| p.into_inner()).reserve_word(word);
            *me.held.lock().unwrap_or_else(|p| p.into_inner()) = (word, bits);
            b[0].copy_from_slice(&bits.to_ne_bytes());
            Ok(vec![])
        });
        let me = self.clone();
        let at = usize::from(self.rank != 0);
        let decide: crate::p2p::schedule::Compute = Box::new(move |b: &mut [Vec<u8>]| {
            let common = u32::from_ne_bytes(b[at][..4].try_into().unwrap());
            let (w, mine) = *me.held.lock().unwrap_or_else(|p| p.into_inner());
            let mut ids = me.cids.lock().unwrap_or_else(|p| p.into_inner());
            if common != 0 {
                let id = w as u32 * 32 + common.trailing_zeros();
                ids.take(id);
                ids.unreserve(w, mine);
                *me.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(Some(id));
                return Ok(vec![]);
            }
            ids.unreserve(w, mine);
            drop(ids);
            if k + 1 >= 2 * ContextIds::WORDS {
                *me.outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(None);
                return Ok(vec![]);
            }
            Ok(me.round(k + 1))
        });
        if self.rank == 0 {
            // AND buffers 1..=last into buffer 0
            let and = |last: usize| -> crate::p2p::schedule::Compute {
                Box::new(move |b: &mut [Vec<u8>]| {
                    let mut acc = u32::from_ne_bytes(b[0][..4].try_into().unwrap());
                    for other in &b[1..=last] {
                        acc &= u32::from_ne_bytes(other[..4].try_into().unwrap());
                    }
                    b[0].copy_from_slice(&acc.to_ne_bytes());
                    Ok(vec![])
                })
            };
            let mut steps = vec![
                Step::Compute(reserve),
                Step::Transfers((1..n).map(|r| Transfer::Recv { buf: Buf::Own(r), from: self.members[r] }).collect()),
                Step::Compute(and(n - 1)),
            ];
            if let Some(peer) = self.remote_leader {
                // the two leaders swap their group's sets (buffer n holds the other's)
                steps.push(Step::Transfers(vec![
                    Transfer::Send { buf: Buf::Own(0), to: peer },
                    Transfer::Recv { buf: Buf::Own(n), from: peer },
                ]));
                steps.push(Step::Compute(Box::new(move |b: &mut [Vec<u8>]| {
                    let acc = u32::from_ne_bytes(b[0][..4].try_into().unwrap())
                        & u32::from_ne_bytes(b[n][..4].try_into().unwrap());
                    b[0].copy_from_slice(&acc.to_ne_bytes());
                    Ok(vec![])
                })));
            }
            steps.push(Step::Transfers(
                (1..n).map(|r| Transfer::Send { buf: Buf::Own(0), to: self.members[r] }).collect(),
            ));
            steps.push(Step::Compute(decide));
            steps
        } else {
            vec![
                Step::Compute(reserve),
                Step::Transfers(vec![
                    Transfer::Send { buf: Buf::Own(0), to: self.members[0] },
                    Transfer::Recv { buf: Buf::Own(1), from: self.members[0] },
                ]),
                Step::Compute(decide),
            ]
        }
    }
}

/// Outstanding MPI_Comm_idup requests: (request id, new handle, outcome).
static PENDING: std::sync::Mutex<Vec<(u32, c_int, Outcome)>> = std::sync::Mutex::new(Vec::new());
/// How many MPI_Comm_idup are pending: every completing request asks, and
/// almost always none is (no lock taken then). Changed only under the
/// state lock, as `PENDING` is, so a Relaxed read there is exact.
static PENDING_IDUPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Called when request `id` completes: if it is an MPI_Comm_idup, the new
/// communicator gets its agreed context id.
pub fn idup_complete(st: &mut State, id: u32) {
    if PENDING_IDUPS.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        return;
    }
    let found = {
        let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        p.iter().position(|(r, _, _)| *r == id).map(|i| p.remove(i))
    };
    let Some((_, h, outcome)) = found else { return };
    PENDING_IDUPS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    let cid = outcome.lock().unwrap_or_else(|e| e.into_inner()).take().flatten();
    if let (Some(cid), Ok(c)) = (cid, handles::comm_mut(st, h)) {
        c.ctx_p2p = 2 * cid;
        c.ctx_coll = 2 * cid + 1;
    }
}

mpi_fn! {
    /// MPI_COMM_NULL: oxmpi starts every process with mpiexec (or a
    /// batch system's launcher), none by MPI_Comm_spawn, so none has a
    /// parent (MPI 4.0 §11.8.2).
    Initialized fn MPI_Comm_get_parent / PMPI_Comm_get_parent(parent: *mut c_int) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(parent, "parent", COMM_NULL) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_idup / PMPI_Comm_idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int) errors(Some(comm)) {
        idup(comm, newcomm, request, None)
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_idup_with_info / PMPI_Comm_idup_with_info(comm: c_int, info: c_int, newcomm: *mut c_int, request: *mut c_int) errors(Some(comm)) {
        idup(comm, newcomm, request, Some(super::info::pairs(info)?))
    }
}

/// MPI_Comm_idup(_with_info): the new communicator's handle at once, its
/// context agreed by a schedule behind `request`; its hints `hints`, or
/// (None) the parent's.
fn idup(comm: c_int, newcomm: *mut c_int, request: *mut c_int, hints: Option<Vec<(String, String)>>) -> MpiResult<()> {
    if newcomm.is_null() || request.is_null() {
        return err!(Arg, "newcomm and request must not be null pointers");
    }
    let (h, req) = with_state(|st| {
        let parent = handles::comm(st, comm)?.clone();
        let count = {
            let p = handles::comm_mut(st, comm)?;
            p.idups = p.idups.wrapping_add(1);
            p.idups
        };
        let me = st.world().rank;
        // The handle exists at once; its context comes at completion.
        let mut c =
            Comm::new(parent.group.members(), me, PENDING_CID, parent.errors).expect("a member of its own group");
        c.hints = hints.unwrap_or(parent.hints.clone());
        c.topo = parent.topo.clone();
        c.remote = parent.remote.clone();
        let h = handles::new_comm(st, c);
        let outcome: Outcome = Default::default();
        let first_word =
            (parent.cid() as usize).wrapping_mul(7919).wrapping_add(count as usize * 104_729) % ContextIds::WORDS;
        let plan = std::sync::Arc::new(IdupPlan {
            cids: st.cids.clone(),
            members: parent.group.members(),
            rank: parent.rank,
            first_word,
            outcome: outcome.clone(),
            held: Default::default(),
            remote_leader: parent.remote.as_ref().map(|g| g.world_rank(0)),
        });
        let bufs = if parent.rank == 0 { vec![vec![0u8; 4]; parent.size() + 1] } else { vec![vec![0u8; 4]; 2] };
        let tag = TAG_IDUP + (count % IDUP_TAGS) as i32;
        let sched =
            crate::p2p::schedule::Schedule::new(bufs, plan.round(0), parent.ctx_coll, tag, parent.group.clone());
        let req = st.engine.start_schedule(sched)?;
        PENDING.lock().unwrap_or_else(|e| e.into_inner()).push((req, h, outcome));
        PENDING_IDUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok((h, req))
    })?;
    super::attr::copy_all(super::attr::Kind::Comm, comm, h)?;
    // SAFETY: checked non-null.
    unsafe {
        *newcomm = h;
        *request = handles::request_handle(req);
    }
    Ok(())
}
