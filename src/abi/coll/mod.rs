//! Collective operations: argument checks and buffer staging around the
//! algorithms in `coll`. Every collective comes three ways, made by one
//! function: blocking (`How::Now`), nonblocking (`MPI_I...`) and
//! persistent (`MPI_..._init`, started by MPI_Start). The checks run at
//! the call; the plan is built when the operation starts, packing the
//! send data as it is then, and ends with the steps that unpack what was
//! received. Contiguous data moves straight between the user's buffers.
//! Reductions work on packed data: the buffer is packed into its
//! reduction unit (a predefined type, pairs without their holes), reduced,
//! and unpacked into the receive buffer. Here: what all of them share,
//! Barrier and Bcast; the reductions in `reduce`, Gather(v)/Scatter(v) in
//! `rooted`, Allgather(v)/Alltoall(v/w) in `all` (the mailbox paths of
//! their v and w forms in `varied`), the per-rank layouts of those in
//! `parts`.

use super::handles;
use super::{mpi_fn, with_state};
use crate::coll::inter::{self, Role};

use crate::coll::tuning::Pieces;
use crate::coll::{self, algo, shm, Block, Plan, Scratch};
use crate::datatype::{pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use crate::op::Op;
use crate::p2p::arrival::LineSet;
use crate::p2p::request::{Starter, Template};
use crate::runtime::State;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex};

/// MPI_IN_PLACE
const IN_PLACE: usize = usize::MAX;

/// How a collective call runs.
#[derive(Clone, Copy)]
pub(super) enum How {
    /// Blocking: to the end before returning.
    Now,
    /// Nonblocking: started, with its request stored here.
    Request(*mut c_int),
    /// Persistent: an inactive request stored here (`info` is accepted;
    /// no hints are used).
    Persistent(*mut c_int, c_int),
}

/// This rank's place in a communicator.
#[derive(Clone, Copy)]
pub(super) struct Local {
    pub(super) rank: usize,
    n: usize,
    /// An intercommunicator's remote group size.
    remote: Option<usize>,
}

impl Local {
    fn size(&self) -> usize {
        self.n
    }

    /// The ranks a process exchanges blocks with: the remote group of an
    /// intercommunicator, everyone in an intracommunicator.
    fn peers(&self) -> usize {
        self.remote.unwrap_or(self.n)
    }
}

/// The communicator of a collective, intra or inter.
fn members(st: &State, comm: c_int) -> MpiResult<Local> {
    let c = handles::comm(st, comm)?;
    Ok(Local { rank: c.rank, n: c.size(), remote: c.remote.as_ref().map(|g| g.size()) })
}

/// The communicator of a collective that only intracommunicators have.
pub(super) fn intra(st: &State, comm: c_int) -> MpiResult<Local> {
    let c = members(st, comm)?;
    if c.remote.is_some() {
        return err!(Comm, "this collective is not defined on intercommunicators (MPI 4.0 section 6.2.2)");
    }
    Ok(c)
}

/// MPI_IN_PLACE is no argument of intercommunicator collectives.
fn no_in_place_between(c: &Local, buf: *const c_void, which: &str) -> MpiResult<()> {
    if c.remote.is_some() && is_in_place(buf) {
        return err!(Buffer, "MPI_IN_PLACE is not allowed as {which} on an intercommunicator");
    }
    Ok(())
}

/// The root's rank in an intracommunicator collective.
fn root_rank(role: Role, me: usize) -> usize {
    match role {
        Role::Toward(r) => r,
        _ => me,
    }
}

/// MPI_ROOT and MPI_PROC_NULL, roots of intercommunicator collectives.
const ROOT: c_int = -3;
const PROC_NULL: c_int = -1;

/// This process's part in a rooted collective whose root argument is `root`.
fn role(c: &Local, root: c_int) -> MpiResult<Role> {
    let Some(m) = c.remote else {
        let r = check_root(c.n, root)?;
        return Ok(if r == c.rank { Role::Root } else { Role::Toward(r) });
    };
    match root {
        ROOT => Ok(Role::Root),
        PROC_NULL => Ok(Role::Idle),
        r if r >= 0 && (r as usize) < m => Ok(Role::Toward(r as usize)),
        _ => err!(
            Root,
            "root {root} on an intercommunicator must be MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (0..{})",
            m as i64 - 1
        ),
    }
}

/// What the members of a communicator must call alike: the operation,
/// its root, its operator and, where every member passes the same, the
/// bytes of its part (checked with OXMPI_CHECK_COLLECTIVES=1).
#[derive(Clone, Copy)]
pub(super) struct Agree {
    what: &'static str,
    root: c_int,
    op: c_int,
    /// -1: not compared (the parts differ by design).
    bytes: i64,
}

impl Agree {
    pub(super) fn new(what: &'static str, root: c_int, op: c_int) -> Agree {
        Agree { what, root, op: handles::op_alike(op), bytes: -1 }
    }

    /// Every member's part has `bytes` bytes.
    pub(super) fn sized(self, bytes: usize) -> Agree {
        Agree { bytes: bytes as i64, ..self }
    }

    /// The words compared: each field and its negation, so one MAX
    /// allreduce gives every field's maximum and minimum.
    fn words(self) -> [i64; 8] {
        // the operation's name, hashed alike in every process
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.what.hash(&mut h);
        let kind = h.finish();
        let kind = (kind >> 2) as i64;
        let (root, op, bytes) = (self.root as i64, self.op as i64, self.bytes);
        [kind, -kind, root, -root, op, -op, bytes, -bytes]
    }

    /// A plan that first checks the agreement, then runs `rest`.
    fn guard(self, p: &mut Plan, rest: Vec<crate::p2p::schedule::Step>) {
        use crate::datatype::{Basic, TypeInfo};
        static WORD: std::sync::OnceLock<TypeInfo> = std::sync::OnceLock::new();
        let word = TypeRef::Builtin(
            WORD.get_or_init(|| TypeInfo::basic("MPI_INT64_T", Basic::Int { bytes: 8, signed: true }, 8)),
        );
        let bytes: Vec<u8> = self.words().iter().flat_map(|w| w.to_ne_bytes()).collect();
        let b = p.keep(Scratch::from_slice(&bytes));
        algo::allreduce(p, b, b, &word, Op::Max);
        let mut rest = Some(rest);
        p.then(move || {
            // SAFETY: the plan holds the block; no transfer uses it now.
            let w: Vec<i64> =
                unsafe { b.bytes() }.chunks(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap_or_default())).collect();
            let (what, me) = (self.what, self.words());
            if w[0] != -w[1] {
                return err!(Other, "the ranks do not all call {what} here: some call another collective operation (OXMPI_CHECK_COLLECTIVES)");
            }
            if w[2] != -w[3] {
                return err!(Root, "the ranks disagree on the root of {what}: roots from {} to {} (this rank: {}) (OXMPI_CHECK_COLLECTIVES)", -w[3], w[2], me[2]);
            }
            if w[4] != -w[5] {
                return err!(Op, "the ranks pass different operators to {what} (OXMPI_CHECK_COLLECTIVES)");
            }
            if w[6] != -w[7] {
                return err!(
                    Count,
                    "the ranks pass counts and datatypes of different sizes to {what}: from {} to {} bytes (this rank: {}) (OXMPI_CHECK_COLLECTIVES)",
                    -w[7],
                    w[6],
                    me[6]
                );
            }
            Ok(rest.take().unwrap_or_default())
        });
    }
}

/// Run, start or store (per `how`) the collective on `comm` whose plan
/// `build` makes. The arguments are checked by now: the operation takes
/// the communicator's next collective tag.
pub(super) fn launch(
    st: &mut State,
    comm: c_int,
    how: How,
    agree: Agree,
    build: impl FnMut(&mut Plan) -> MpiResult<()> + Send + 'static,
) -> MpiResult<()> {
    launch_kept(st, comm, how, agree, None, build)
}

/// A nonblocking collective's call, as far as the plan it builds depends
/// on it: its kind and the arguments the plan takes (addresses, byte
/// counts, predefined datatype and operator handles, root).
pub(super) type Call = [usize; 7];

/// A nonblocking collective (Barrier, Bcast, Reduce, Allreduce, Allgather
/// or Alltoall, where the caller names its `Call`) whose plan can run
/// again (`Plan::again`), kept to run again, under the next tag, when a
/// later call on the communicator is the same (`launch_kept`): a loop of
/// MPI_Iallreduce on the same buffers builds its plan once, as a
/// persistent collective does. The communicator is known by its context,
/// its group and this rank's place in it (the schedule holds the group,
/// so a communicator made later cannot have the same one).
pub struct Kept {
    ctx: u32,
    group: crate::comm::Group,
    rank: usize,
    call: Call,
    place: crate::p2p::schedule::Place,
}

/// Which collective a `Call` is.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Barrier = 1,
    Bcast,
    Allreduce,
    Allgather,
    Alltoall,
    Reduce,
}

/// A kept schedule keeps its buffers: one holding more (an Allreduce of
/// long vectors) is not kept, so that no large buffer stays allocated
/// after its call.
const KEPT_HELD_MAX: usize = 1 << 20;

/// At most this many calls are kept (the oldest goes first).
const KEPT_MAX: usize = 16;

fn same_group(a: &crate::comm::Group, b: &crate::comm::Group) -> bool {
    use crate::comm::Group::{List, World};
    match (a, b) {
        (World(x), World(y)) => x == y,
        (List(x), List(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// `launch`; a nonblocking call on an intracommunicator that names its
/// `call` runs the kept schedule of the same call again if there is one
/// (see `Kept`), else keeps the one it builds if it can run again.
pub(super) fn launch_kept(
    st: &mut State,
    comm: c_int,
    how: How,
    agree: Agree,
    call: Option<Call>,
    mut build: impl FnMut(&mut Plan) -> MpiResult<()> + Send + 'static,
) -> MpiResult<()> {
    let out = match how {
        How::Now => None,
        How::Request(r) | How::Persistent(r, _) => {
            if r.is_null() {
                return err!(Arg, "request is a null pointer");
            }
            Some(r)
        }
    };
    if let How::Persistent(_, info) = how {
        super::info::pairs(info)?;
    }
    let c = handles::comm_mut(st, comm)?;
    c.colls = c.colls.wrapping_add(1);
    let (seq, tag) = (c.colls, coll::user_tag(c.colls));
    let (group, rank, ctx, remote) = (c.group.clone(), c.rank, c.ctx_coll, c.remote.clone());
    // on an intercommunicator the root argument differs by design, and
    // so may the parts of the two groups; an MPI_PROC_NULL root's
    // operator is not significant
    let agree = if remote.is_some() { Agree { root: 0, op: 0, bytes: -1, ..agree } } else { agree };
    let check = coll::tuning::check_collectives();
    // a nonblocking call that names itself: the kept schedule of the same
    // call, if one is back (none while it is still in flight)
    let kept = call.filter(|_| matches!(how, How::Request(_)) && remote.is_none() && !check);
    let at = kept.and_then(|call| {
        let same = |k: &Kept| k.call == call && k.ctx == ctx && k.rank == rank && same_group(&k.group, &group);
        st.kept_colls.iter().position(same)
    });
    let spare = at.and_then(|i| st.engine.take_kept(st.kept_colls[i].place));
    let kept_group = group.clone();
    // (how the mailboxes and lines would name it: see `Schedule::named`)
    let name = remote.is_none().then(|| shm::stamp(ctx, seq));
    let mut plan = move || {
        let mut p = match &remote {
            None => Plan::among(group.clone(), rank),
            Some(r) => Plan::between(group.clone(), rank, r.clone()),
        };
        build(&mut p)?;
        if check {
            let rest = p.take_steps();
            agree.guard(&mut p, rest);
        }
        Ok(p)
    };
    let id = match how {
        How::Now => {
            let (mut s, _buffers) = plan()?.into_parts(ctx, tag);
            s.named(Some(shm::stamp(ctx, seq)));
            return st.engine.run_schedule(s);
        }
        How::Request(_) => match (spare, kept) {
            (Some(mut s), _) => {
                s.restart_tagged(tag);
                s.named(name);
                st.engine.start_boxed(s)?
            }
            (None, Some(call)) => {
                let p = plan()?;
                let again = p.again() && p.held_bytes() <= KEPT_HELD_MAX;
                let mut s = Box::new(p.into_persistent(ctx, tag));
                s.named(name);
                if again {
                    let place = st.engine.keep_place();
                    s.returns_to(place);
                    let k = Kept { ctx, group: kept_group, rank, call, place };
                    let gone = match at {
                        Some(i) => Some(std::mem::replace(&mut st.kept_colls[i], k)),
                        None if st.kept_colls.len() < KEPT_MAX => {
                            st.kept_colls.push(k);
                            None
                        }
                        None => {
                            st.kept_colls.push(k);
                            Some(st.kept_colls.remove(0))
                        }
                    };
                    if let Some(gone) = gone {
                        st.engine.leave_place(gone.place);
                    }
                }
                st.engine.start_boxed(s)?
            }
            (None, None) => {
                let mut s = plan()?.into_schedule(ctx, tag);
                s.named(name);
                st.engine.start_schedule(s)?
            }
        },
        How::Persistent(..) => {
            let start = Starter::new(move || plan().map(|p| p.into_persistent(ctx, tag)));
            st.engine.persistent(Template::Coll(Arc::new(Mutex::new(start))))
        }
    };
    if let Some(r) = out {
        // SAFETY: checked non-null; the caller passes a writable MPI_Request.
        unsafe { *r = handles::request_handle(id) };
    }
    Ok(())
}

/// A blocking collective on an intracommunicator of one host runs
/// through the shared-memory mailboxes (`coll::shm`): Some(its result)
/// when it `fits` (`shm::fits`: decided alike on every member); it takes
/// the communicator's next collective number like any other.
fn mailbox_path(
    st: &mut State,
    comm: c_int,
    how: How,
    fits: bool,
    run: impl FnOnce(&mut crate::p2p::Engine, &shm::Members, u64) -> MpiResult<()>,
) -> Option<MpiResult<()>> {
    if !matches!(how, How::Now) || !fits || coll::tuning::check_collectives() {
        return None;
    }
    let (c, engine) = handles::comm_and_engine(st, comm).ok()?;
    mailboxes(c, engine, run)
}

/// A nonblocking or persistent collective (`how`: a request to fill) of
/// a whole-world communicator that has lines of its own
/// (`Comm::lines`), on one host, whose part, of `bytes`, fits an
/// arrival line (`Engine::by_arrivals`), as its blocking form goes: on
/// the arrival lines (`Engine::start_arrival`), its part as `part`
/// writes it when it starts, its parts taken by what `take` makes. A
/// persistent one, which ranks may start in any order (MPI 4.0 §6.13),
/// only on lines of its own (`Engine::kept_lines`). Some(its result)
/// where it goes there, decided alike on every member; it takes the
/// communicator's next collective number like any other.
fn arrival_path(
    st: &mut State,
    comm: c_int,
    how: How,
    (kind, bytes): (crate::p2p::arrival::Kind, usize),
    part: impl Fn(&mut [u8]) + Send + Sync + 'static,
    take: impl Fn() -> Option<crate::p2p::arrival::Take> + Send + Sync + 'static,
) -> Option<MpiResult<()>> {
    let out = match how {
        How::Now => return None,
        How::Request(out) | How::Persistent(out, _) => out,
    };
    if out.is_null() || !shm::fits(bytes, None) || coll::tuning::check_collectives() {
        return None;
    }
    if let How::Persistent(_, info) = how {
        if let Err(e) = super::info::pairs(info) {
            return Some(Err(e));
        }
    }
    let (c, engine) = handles::comm_and_engine(st, comm).ok()?;
    let started = LineSet::Started(c.lines?);
    if !engine.by_arrivals(&c.group, bytes) || !engine.all_local(&c.group) {
        return None;
    }
    let mut stamp = shm::stamp(c.ctx_coll, c.colls.wrapping_add(1));
    if !engine.mailboxes_usable(stamp, started) {
        return None;
    }
    let set = match how {
        How::Persistent(..) => match engine.kept_lines(started) {
            Some(set) => set,
            // every kept set given out: one freed everywhere, agreed by
            // an operation of its own
            None if engine.mailboxes_usable(stamp, LineSet::Blocking) => {
                c.colls = c.colls.wrapping_add(1);
                match engine.agree_kept_lines(&c.group, stamp, started) {
                    Ok(set) => {
                        stamp = shm::stamp(c.ctx_coll, c.colls.wrapping_add(1));
                        // (none: as messages, which take the next number)
                        set?
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            None => return None,
        },
        _ => started,
    };
    c.colls = c.colls.wrapping_add(1);
    let group = c.group.clone();
    let id = match how {
        How::Persistent(..) => {
            let (part, take) = (Box::new(part), Box::new(take));
            let lines = crate::p2p::arrival::Lines { set, group, stamp, kind, bytes, part, take };
            engine.persistent(Template::Arrival(Arc::new(lines)))
        }
        _ => engine.start_arrival((set, group), stamp, (kind, bytes), part, take()),
    };
    // SAFETY: checked non-null; the caller passes a writable MPI_Request.
    unsafe { *out = handles::request_handle(id) };
    Some(Ok(()))
}

/// `mailbox_path` for a call that goes there, its communicator found:
/// None where the communicator does not take it.
#[inline]
fn mailboxes(
    c: &mut crate::comm::Comm,
    engine: &mut crate::p2p::Engine,
    run: impl FnOnce(&mut crate::p2p::Engine, &shm::Members, u64) -> MpiResult<()>,
) -> Option<MpiResult<()>> {
    if c.remote.is_some() {
        return None;
    }
    let stamp = shm::stamp(c.ctx_coll, c.colls.wrapping_add(1));
    if !engine.all_local(&c.group) || !engine.mailboxes_usable(stamp, LineSet::Blocking) {
        // the operation number goes to the point-to-point path
        return None;
    }
    c.colls = c.colls.wrapping_add(1);
    Some(run(engine, &shm::Members { group: &c.group, me: c.rank }, stamp))
}

fn check_root(size: usize, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= size {
        return err!(Root, "root {root} is out of range: the communicator has {size} ranks (0..{})", size - 1);
    }
    Ok(root as usize)
}

pub(super) fn check_count(count: i64, datatype: c_int) -> MpiResult<(usize, TypeRef)> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    Ok((count as usize, handles::committed(datatype)?))
}

/// A buffer argument that holds data here: not null when there is any,
/// and not MPI_IN_PLACE (the callers have dealt with the places the
/// standard allows it, so here it is one it forbids).
pub(super) fn check_buf(buf: *const c_void, count: usize, ty: &TypeInfo, name: &str) -> MpiResult<()> {
    if is_in_place(buf) {
        return err!(Buffer, "{name} is MPI_IN_PLACE, which is not allowed there");
    }
    if buf.is_null() && count > 0 && ty.size > 0 && ty.contents.is_none() {
        return err!(Buffer, "{name} is a null pointer but count is {count}");
    }
    Ok(())
}

/// Pack `count` items at `buf`.
fn packed(buf: usize, ty: &TypeInfo, count: usize) -> Scratch {
    // packing writes every byte
    let mut v = Scratch::for_overwrite(ty.size * count);
    // SAFETY: the caller checked the buffer holds `count` items.
    unsafe { pack::pack(ty, count, buf as *const u8, &mut v) };
    v
}

/// A reduction's contribution at `src` (None: in place, `src` is `recv`)
/// and its result buffer `recv`, `len` bytes each.
///
/// # Safety
/// Both buffers hold `len` bytes and do not overlap unless they are one.
unsafe fn part_and_result<'a>(src: usize, recv: usize, len: usize) -> (Option<&'a [u8]>, &'a mut [u8]) {
    // SAFETY: per the caller's contract.
    unsafe {
        let from = (src != recv).then(|| Block { addr: src, len }.bytes());
        (from, Block { addr: recv, len }.bytes_mut())
    }
}

fn unpacked(buf: usize, ty: &TypeInfo, data: &[u8]) {
    // SAFETY: the caller checked the buffer holds the items.
    unsafe { pack::unpack(ty, data, buf as *mut u8) };
}

/// A step that unpacks `data` (held by the plan) into `count` items at
/// `buf`.
fn unpack_step(p: &mut Plan, buf: usize, ty: &TypeRef, data: Block) {
    let ty = ty.clone();
    p.compute(move || {
        // SAFETY: `data` is held by the plan and no transfer uses it now.
        unpacked(buf, &ty, unsafe { data.bytes() });
        Ok(())
    });
}

/// `count` items at `buf` as a block the plan moves: the user's memory
/// when `ty` is contiguous, else a packed copy the plan holds.
fn source(p: &mut Plan, buf: usize, ty: &TypeInfo, count: usize) -> Block {
    if ty.is_contiguous() {
        return Block { addr: buf, len: ty.size * count };
    }
    p.keep(packed(buf, ty, count))
}

/// Where `count` items for `buf` land: the user's memory when `ty` is
/// contiguous, else a scratch block unpacked by the plan's last step
/// (added by `finish_landing`).
fn landing(p: &mut Plan, buf: usize, ty: &TypeInfo, count: usize) -> Block {
    if ty.is_contiguous() {
        return Block { addr: buf, len: ty.size * count };
    }
    p.scratch(ty.size * count)
}

fn finish_landing(p: &mut Plan, buf: usize, ty: &TypeRef, b: Block) {
    if !ty.is_contiguous() {
        unpack_step(p, buf, ty, b);
    }
}

pub(super) fn is_in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

/// An entry point's three forms: blocking, nonblocking (`request`) and
/// persistent (`info`, `request`); `$how` tells the body which.
macro_rules! collective {
    ($comm:ident; $f:ident / $pf:ident, $i:ident / $pi:ident, $init:ident / $pinit:ident; ($($a:ident: $t:ty),*) |$how:ident| $body:expr) => {
        mpi_fn! {
            Initialized fn $f / $pf($($a: $t),*) errors(Some($comm)) {
                let $how = How::Now;
                $body
            }
        }
        mpi_fn! {
            Initialized fn $i / $pi($($a: $t,)* request: *mut c_int) errors(Some($comm)) {
                let $how = How::Request(request);
                $body
            }
        }
        mpi_fn! {
            Initialized fn $init / $pinit($($a: $t,)* info: c_int, request: *mut c_int) errors(Some($comm)) {
                let $how = How::Persistent(request, info);
                $body
            }
        }
    };
}
pub(super) use collective;

mod all;
mod parts;
mod reduce;
mod rooted;
mod varied;

pub(super) use parts::*;

collective! { comm;
    MPI_Barrier / PMPI_Barrier, MPI_Ibarrier / PMPI_Ibarrier, MPI_Barrier_init / PMPI_Barrier_init;
    (comm: c_int) |how| with_state(|st| {
        let between = members(st, comm)?.remote.is_some();
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, s| shm::barrier(e, m, s);
        if let Some(r) = mailbox_path(st, comm, how, shm::fits(0, None), short) {
            return r;
        }
        if let Some(r) = arrival_path(st, comm, how, (crate::p2p::arrival::Kind::Barrier, 0), |_| {}, || None) {
            return r;
        }
        let call = (!between).then_some([Kind::Barrier as usize, 0, 0, 0, 0, 0, 0]);
        launch_kept(st, comm, how, Agree::new("MPI_Barrier", 0, 0), call, move |p| {
            if between {
                inter::barrier(p);
            } else {
                algo::barrier(p);
            }
            Ok(())
        })
    })
}

/// A short blocking call's data: `count` items of a predefined contiguous
/// `datatype` at `buf`, as (its type, its bytes), where a buffer holds
/// them (not null where there are any, not MPI_IN_PLACE). None: the
/// call takes the general path, which reports what is wrong.
fn short_data(buf: *const c_void, count: i64, datatype: c_int) -> Option<(&'static TypeInfo, usize)> {
    let ty = handles::predefined(datatype).filter(|t| t.is_contiguous())?;
    let len = usize::try_from(count).ok()?.checked_mul(ty.size)?;
    ((!buf.is_null() || len == 0) && !is_in_place(buf)).then_some((ty, len))
}

/// A blocking Bcast, Allreduce, Allgather or Alltoall of predefined
/// contiguous types short enough to go whole (`total(communicator)`: its
/// bytes in all, None where the call does not take this way), straight
/// to the mailboxes: the general path's handling of its arguments (type
/// references, roles, the mailbox closure, the choice among paths) cost
/// such a call as much as its move. None: the general path takes the
/// call, and reports what is wrong.
fn short_path(
    st: &mut State,
    comm: c_int,
    total: impl FnOnce(&crate::comm::Comm) -> Option<usize>,
    run: impl FnOnce(&mut crate::p2p::Engine, &shm::Members, u64) -> MpiResult<()>,
) -> Option<MpiResult<()>> {
    if coll::tuning::check_collectives() {
        return None;
    }
    let (c, engine) = handles::comm_and_engine(st, comm).ok()?;
    if !shm::fits(total(c)?, None) {
        return None;
    }
    mailboxes(c, engine, run)
}

/// A short blocking Bcast (`short_path`).
#[inline]
fn bcast_short(
    st: &mut State,
    buffer: *mut c_void,
    count: i64,
    datatype: c_int,
    root: c_int,
    comm: c_int,
) -> Option<MpiResult<()>> {
    let (_, len) = short_data(buffer, count, datatype)?;
    let root = usize::try_from(root).ok()?;
    // SAFETY: the user's buffer holds `count` items: `len` contiguous
    // bytes (`short_data`).
    let buf = unsafe { Block { addr: buffer as usize, len }.bytes_mut() };
    short_path(st, comm, |c| (root < c.size()).then_some(len), |e, m, s| shm::bcast(e, m, s, buf, root))
}

fn bcast_any(buffer: *mut c_void, count: i64, datatype: c_int, root: c_int, comm: c_int, how: How) -> MpiResult<()> {
    with_state(|st| {
        if let How::Now = how {
            if let Some(r) = bcast_short(st, buffer, count, datatype, root, comm) {
                return r;
            }
        }
        let c = members(st, comm)?;
        let role = role(&c, root)?;
        // (an intercommunicator's MPI_PROC_NULL root: only the root
        // argument is significant, MPI 4.0 §6.4)
        let (count, ty) = match role {
            Role::Idle => (0, crate::datatype::byte()),
            _ => check_count(count, datatype)?,
        };
        if role != Role::Idle {
            check_buf(buffer, count, &ty, "buffer")?;
        }
        let (buf, me, between) = (buffer as usize, c.rank, c.remote.is_some());
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, s| {
            let at = root_rank(role, me);
            if ty.is_contiguous() {
                // SAFETY: the user's buffer holds `count` contiguous items.
                let b = unsafe { Block { addr: buf, len: ty.size * count }.bytes_mut() };
                shm::bcast(e, m, s, b, at)
            } else {
                let mut data = if me == at { packed(buf, &ty, count) } else { Scratch::zeroed(ty.size * count) };
                let done = shm::bcast(e, m, s, &mut data, at);
                if me != at {
                    unpacked(buf, &ty, &data);
                }
                done
            }
        };
        let fits = shm::fits(ty.size * count, Some((Pieces::Bcast, c.size(), 1)));
        if let Some(r) = mailbox_path(st, comm, how, fits, short) {
            return r;
        }
        // (contiguous: the plan moves the buffer's bytes as they are)
        let call = (!between && ty.is_contiguous()).then_some([
            Kind::Bcast as usize,
            buf,
            ty.size * count,
            root as usize,
            0,
            0,
            0,
        ]);
        let agree = Agree::new("MPI_Bcast", root, 0).sized(ty.size * count);
        launch_kept(st, comm, how, agree, call, move |p| {
            let data = match role {
                Role::Root => source(p, buf, &ty, count),
                Role::Toward(_) => landing(p, buf, &ty, count),
                Role::Idle => Block::EMPTY,
            };
            if between {
                inter::bcast(p, data, role);
            } else {
                algo::bcast(p, data, root_rank(role, me));
            }
            if let Role::Toward(_) = role {
                finish_landing(p, buf, &ty, data);
            }
            Ok(())
        })
    })
}

collective! { comm;
    MPI_Bcast / PMPI_Bcast, MPI_Ibcast / PMPI_Ibcast, MPI_Bcast_init / PMPI_Bcast_init;
    (buffer: *mut c_void, count: c_int, datatype: c_int, root: c_int, comm: c_int)
    |how| bcast_any(buffer, count.into(), datatype, root, comm, how)
}

collective! { comm;
    MPI_Bcast_c / PMPI_Bcast_c, MPI_Ibcast_c / PMPI_Ibcast_c, MPI_Bcast_init_c / PMPI_Bcast_init_c;
    (buffer: *mut c_void, count: i64, datatype: c_int, root: c_int, comm: c_int)
    |how| bcast_any(buffer, count, datatype, root, comm, how)
}
