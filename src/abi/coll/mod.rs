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
//! `rooted`, Allgather(v)/Alltoall(v/w) in `all`.

use super::handles;
use super::{mpi_fn, with_state};
use crate::coll::inter::{self, Role};
use crate::coll::shm::Varied;
use crate::coll::tuning::Pieces;
use crate::coll::{self, algo, shm, Block, Plan, Scratch};
use crate::datatype::{pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use crate::op::{Op, UserCountFn, UserFn, UserFunc, UserOp};
use crate::p2p::request::Template;
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
        Agree { what, root, op, bytes: -1 }
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
    // so may the parts of the two groups
    let agree = if remote.is_some() { Agree { root: 0, bytes: -1, ..agree } } else { agree };
    let check = coll::tuning::check_collectives();
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
            s.named(shm::stamp(ctx, seq));
            return st.engine.run_schedule(s);
        }
        How::Request(_) => st.engine.start_schedule(plan()?.into_schedule(ctx, tag))?,
        How::Persistent(..) => {
            let start = move || plan().map(|p| p.into_schedule(ctx, tag));
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
    let c = handles::comm_mut(st, comm).ok()?;
    if c.remote.is_some() {
        return None;
    }
    c.colls = c.colls.wrapping_add(1);
    let (stamp, group, me) = (shm::stamp(c.ctx_coll, c.colls), c.group.clone(), c.rank);
    if !st.engine.all_local(&group) || !st.engine.mailboxes_usable(stamp) {
        // the operation number goes to the point-to-point path
        let c = handles::comm_mut(st, comm).ok()?;
        c.colls = c.colls.wrapping_sub(1);
        return None;
    }
    Some(run(&mut st.engine, &shm::Members { group: &group, me }, stamp))
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
mod reduce;
mod rooted;

collective! { comm;
    MPI_Barrier / PMPI_Barrier, MPI_Ibarrier / PMPI_Ibarrier, MPI_Barrier_init / PMPI_Barrier_init;
    (comm: c_int) |how| with_state(|st| {
        let between = members(st, comm)?.remote.is_some();
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, s| shm::barrier(e, m, s);
        if let Some(r) = mailbox_path(st, comm, how, shm::fits(0, None), short) {
            return r;
        }
        launch(st, comm, how, Agree::new("MPI_Barrier", 0, 0), move |p| {
            if between {
                inter::barrier(p);
            } else {
                algo::barrier(p);
            }
            Ok(())
        })
    })
}

fn bcast_any(buffer: *mut c_void, count: i64, datatype: c_int, root: c_int, comm: c_int, how: How) -> MpiResult<()> {
    with_state(|st| {
        let c = members(st, comm)?;
        let (count, ty) = check_count(count, datatype)?;
        let role = role(&c, root)?;
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
        launch(st, comm, how, Agree::new("MPI_Bcast", root, 0).sized(ty.size * count), move |p| {
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

/// Where one rank's part of a buffer lies: `count` items of `ty` starting
/// `offset` bytes into the buffer.
#[derive(Clone)]
pub(super) struct Part {
    ty: TypeRef,
    count: usize,
    offset: isize,
}

impl Part {
    pub(super) fn bytes(&self) -> usize {
        self.ty.size * self.count
    }

    /// Where the part starts in `buf`.
    fn at(&self, buf: usize) -> usize {
        buf.wrapping_add_signed(self.offset)
    }

    fn pack(&self, buf: usize) -> Scratch {
        packed(self.at(buf), &self.ty, self.count)
    }

    /// The part as a block to send: see `source`.
    pub(super) fn source(&self, p: &mut Plan, buf: usize) -> Block {
        source(p, self.at(buf), &self.ty, self.count)
    }

    /// Where the part is received: see `landing`.
    pub(super) fn landing(&self, p: &mut Plan, buf: usize) -> Block {
        landing(p, self.at(buf), &self.ty, self.count)
    }

    /// After the transfers: unpack `b` if it was a scratch landing.
    pub(super) fn finish(&self, p: &mut Plan, buf: usize, b: Block) {
        finish_landing(p, self.at(buf), &self.ty, b)
    }
}

/// A per-rank argument (counts, displacements): one value for every
/// rank, or an array of `int`, `MPI_Count` or `MPI_Aint`.
#[derive(Clone, Copy)]
pub(super) enum Arr {
    One(i64),
    Int(*const c_int),
    Count(*const i64),
    Aint(*const isize),
}

impl Arr {
    /// The one value for every rank, when it is one and not negative.
    fn one(self) -> Option<i64> {
        match self {
            Arr::One(v) if v >= 0 => Some(v),
            _ => None,
        }
    }

    /// The `n` values; `what` and `name` say which argument it is ("the
    /// counts for", "recvbuf") in an error.
    fn read(self, n: usize, what: &str, name: &str) -> MpiResult<Vec<i64>> {
        let a = self.checked(what, name)?;
        Ok((0..n).map(|r| a.get(r)).collect())
    }

    /// Itself, once seen not to be a null pointer.
    fn checked(self, what: &str, name: &str) -> MpiResult<Arr> {
        let null = match self {
            Arr::One(_) => false,
            Arr::Int(p) => p.is_null(),
            Arr::Count(p) => p.is_null(),
            Arr::Aint(p) => p.is_null(),
        };
        if null {
            return err!(Arg, "{what} {name} is a null pointer");
        }
        Ok(self)
    }

    /// Rank r's value (of an array `checked`).
    fn get(self, r: usize) -> i64 {
        // SAFETY: not null (`checked`), and the standard has the caller
        // pass one entry per rank.
        unsafe {
            match self {
                Arr::One(v) => v,
                Arr::Int(p) => (*p.add(r)).into(),
                Arr::Count(p) => *p.add(r),
                Arr::Aint(p) => *p.add(r) as i64,
            }
        }
    }
}

/// Rank r's part is `counts[r]` items at `displs[r]` extents (or, with no
/// displacements, packed one after another: `r * count` items).
pub(super) fn parts(
    n: usize,
    ty: &TypeRef,
    counts: Arr,
    displs: Option<Arr>,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.checked("the counts for", name)?;
    let displs = match displs {
        Some(d) => Some(d.checked("the displacements for", name)?),
        None => None,
    };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let (count, offset) = part_at(r, ty, counts, displs, buf, name)?;
        out.push(Part { ty: ty.clone(), count, offset });
    }
    Ok(out)
}

/// Rank r's part of a layout `parts` describes, checked: its count and
/// its offset in bytes.
fn part_at(
    r: usize,
    ty: &TypeInfo,
    counts: Arr,
    displs: Option<Arr>,
    buf: *const c_void,
    name: &str,
) -> MpiResult<(usize, isize)> {
    let count = counts.get(r);
    if count < 0 {
        return err!(Count, "{name} count for rank {r} is {count}, negative");
    }
    let items = match displs {
        Some(d) => d.get(r) as isize,
        None => (r * count as usize) as isize,
    };
    check_buf(buf, count as usize, ty, name)?;
    Ok((count as usize, items * ty.extent))
}

/// The send (or receive) side of a rooted or all-to-all collective: a
/// count and a committed datatype, checked.
pub(super) fn side(count: i64, datatype: c_int, buf: *const c_void, name: &str) -> MpiResult<Part> {
    let (count, ty) = check_count(count, datatype)?;
    check_buf(buf, count, &ty, name)?;
    Ok(Part { ty, count, offset: 0 })
}

/// Whether a process of a gather or scatter has its own one-block side
/// (sendbuf of a gather, recvbuf of a scatter): the other group's
/// processes on an intercommunicator; on an intracommunicator every rank
/// but an in-place root.
fn own_side(role: Role, between: bool, in_place: bool) -> bool {
    match role {
        Role::Toward(_) => true,
        Role::Root => !between && !in_place,
        Role::Idle => false,
    }
}

/// A rooted collective's communicator, this process's role, and whether
/// `buf` (the argument named `which`) is MPI_IN_PLACE, which only the root
/// of an intracommunicator collective may pass.
fn rooted(st: &State, comm: c_int, root: c_int, buf: *const c_void, which: &str) -> MpiResult<(Local, Role, bool)> {
    let c = members(st, comm)?;
    let role = role(&c, root)?;
    no_in_place_between(&c, buf, which)?;
    let in_place = is_in_place(buf);
    if in_place && role != Role::Root {
        return err!(Buffer, "MPI_IN_PLACE is only allowed as {which} at the root");
    }
    Ok((c, role, in_place))
}

/// A Gather's or Scatter's equal blocks on an intracommunicator, for the
/// mailboxes: `own` is this rank's one-block side (None: the root in
/// place), `all` the root's n blocks in a row (items r * count on are
/// rank r's), None elsewhere.
struct Blocks<'a> {
    n: usize,
    me: usize,
    root: usize,
    own: Option<&'a Part>,
    all: Option<Part>,
}

impl<'a> Blocks<'a> {
    /// A Gather's or Scatter's blocks when they are equal (MPI_Gather and
    /// MPI_Scatter, not their v forms) on an intracommunicator: the root's
    /// n blocks are `counts`' one value of items each of `root_side`'s
    /// (buffer, datatype, name). None otherwise, or at the root when its
    /// count is negative or n blocks' items overflow (it goes the other
    /// way, and fails there). The other ranks look at their own part only:
    /// the root's side is not significant there (MPICH's tests pass -1 and
    /// MPI_DATATYPE_NULL), and whether the blocks are equal is the
    /// operation's, which every rank knows alike.
    fn equal(
        c: &Local,
        role: Role,
        (counts, displs): (Arr, Option<Arr>),
        own: Option<&'a Part>,
        root_side: (*const c_void, c_int, &str),
    ) -> MpiResult<Option<Blocks<'a>>> {
        let (None, None) = (displs, c.remote) else {
            return Ok(None);
        };
        let root = root_rank(role, c.rank);
        let mut all = None;
        if c.rank == root {
            let Some(total) = counts.one().and_then(|v| v.checked_mul(c.n as i64)) else {
                return Ok(None);
            };
            let (buf, ty, name) = root_side;
            all = Some(side(total, ty, buf, name)?);
        }
        Ok(Some(Blocks { n: c.n, me: c.rank, root, own, all }))
    }

    /// The bytes of one block: the root's share of `all`, or this rank's
    /// part; None if they overflow.
    fn size(&self) -> Option<usize> {
        match &self.all {
            Some(all) => Some(all.ty.bytes(all.count)? / self.n),
            None => self.own.map_or(Some(0), |p| p.ty.bytes(p.count)),
        }
    }

    /// The root's own part larger than its share: an error (fewer bytes
    /// land at the start of the block, as in the message path).
    fn root_fits(&self, part: &Part) -> MpiResult<()> {
        let share = self.size().unwrap_or(usize::MAX);
        if part.bytes() > share {
            return err!(Truncate, "the root sends {} bytes to itself but expects {share}", part.bytes());
        }
        Ok(())
    }

    /// MPI_Gather through the mailboxes, when short enough: Some(result).
    fn gather(&self, st: &mut State, comm: c_int, how: How, sbuf: usize, rbuf: usize) -> Option<MpiResult<()>> {
        let (b, me) = (self.size()?, self.me);
        if let Some(Err(e)) = self.own.filter(|_| me == self.root).map(|p| self.root_fits(p)) {
            return Some(Err(e));
        }
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
            let mine = self.own.map(|p| in_a_row(p, sbuf));
            let Some(all) = &self.all else {
                return shm::gather(e, m, stamp, mine.as_deref().unwrap_or(&[]), &mut [], self.root);
            };
            let whole = all.ty.is_contiguous();
            // staged, what is there stays where nothing lands (the root's
            // own block in place)
            let mut staged = if whole { Scratch::zeroed(0) } else { packed(rbuf, &all.ty, all.count) };
            // SAFETY: contiguous: recvbuf holds the n blocks in a row.
            let out =
                if whole { unsafe { Block { addr: rbuf, len: b * self.n }.bytes_mut() } } else { &mut staged[..] };
            if let Some(mine) = &mine {
                out[me * b..me * b + mine.len()].copy_from_slice(mine);
            }
            let done = shm::gather(e, m, stamp, &[], out, me);
            if !whole {
                unpacked(rbuf, &all.ty, &staged);
            }
            done
        };
        mailbox_path(st, comm, how, shm::fits(b.saturating_mul(self.n), Some((Pieces::Gather, self.n, 1))), short)
    }

    /// MPI_Scatter through the mailboxes, when short enough: Some(result).
    fn scatter(&self, st: &mut State, comm: c_int, how: How, sbuf: usize, rbuf: usize) -> Option<MpiResult<()>> {
        let (b, me) = (self.size()?, self.me);
        if let Some(Err(e)) = self.own.filter(|_| me == self.root).map(|p| self.root_fits(p)) {
            return Some(Err(e));
        }
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
            if let Some(all) = &self.all {
                let all = in_a_row(all, sbuf);
                if let Some(own) = self.own {
                    // (its room is at least its share, checked above)
                    unpacked(rbuf, &own.ty, &all[me * b..(me + 1) * b]);
                }
                return shm::scatter(e, m, stamp, &all, &mut [], self.root);
            }
            let ty = &self.own.expect("a rank other than the root receives").ty;
            if ty.is_contiguous() {
                // SAFETY: checked: recvbuf holds its b bytes.
                let mine = unsafe { Block { addr: rbuf, len: b }.bytes_mut() };
                return shm::scatter(e, m, stamp, &[], mine, self.root);
            }
            let mut staged = Scratch::zeroed(b);
            let done = shm::scatter(e, m, stamp, &[], &mut staged, self.root);
            unpacked(rbuf, ty, &staged);
            done
        };
        mailbox_path(st, comm, how, shm::fits(b.saturating_mul(self.n), Some((Pieces::Scatter, self.n, 1))), short)
    }
}

/// A part's bytes in a row: the user's own when contiguous, else packed.
fn in_a_row<'a>(part: &Part, buf: usize) -> std::borrow::Cow<'a, [u8]> {
    if part.ty.is_contiguous() {
        std::borrow::Cow::Borrowed(as_is(part, buf))
    } else {
        std::borrow::Cow::Owned(part.pack(buf).to_vec())
    }
}

/// A contiguous part's bytes where they lie in the user's buffer.
fn as_is<'a>(part: &Part, buf: usize) -> &'a [u8] {
    debug_assert!(part.ty.is_contiguous());
    // SAFETY: checked to hold the part's items, contiguous.
    unsafe { Block { addr: part.at(buf), len: part.bytes() }.bytes() }
}

/// A buffer, count and datatype: one side of a collective.
type Side = (*const c_void, i64, c_int);

/// Alltoallw's layout: per-rank types, displacements in bytes.
pub(super) fn wparts(
    n: usize,
    counts: Arr,
    displs: Arr,
    types: *const c_int,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.read(n, "the counts for", name)?;
    let displs = displs.read(n, "the displacements for", name)?;
    if types.is_null() {
        return err!(Arg, "the datatype array of {name} is a null pointer");
    }
    // SAFETY: the standard has the caller pass one datatype per rank.
    let types = unsafe { std::slice::from_raw_parts(types, n) };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let (count, ty) = check_count(counts[r], types[r])?;
        check_buf(buf, count, &ty, name)?;
        out.push(Part { ty, count, offset: displs[r] as isize });
    }
    Ok(out)
}
