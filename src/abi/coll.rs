//! Collective operations: argument checks and buffer staging around the
//! algorithms in `coll`. Reductions work on packed data: the buffer is
//! packed into its reduction unit (a predefined type, pairs without their
//! holes), reduced, and unpacked into the receive buffer.

use super::handles;
use super::{mpi_fn, with_state};
use crate::coll::{self, Scratch};
use crate::datatype::{pack, TypeInfo, TypeRef};
use crate::err;
use crate::error::MpiResult;
use crate::op::{Op, UserFn, UserOp};
use std::os::raw::{c_int, c_void};

/// MPI_IN_PLACE
const IN_PLACE: usize = usize::MAX;

/// The communicator of a collective: an intracommunicator.
fn intra(st: &crate::runtime::State, comm: c_int) -> MpiResult<crate::comm::Comm> {
    let c = handles::comm(st, comm)?;
    if c.remote.is_some() {
        return err!(
            Comm,
            "collectives on intercommunicators are not implemented yet; merge it first (MPI_Intercomm_merge)"
        );
    }
    Ok(c.clone())
}

fn check_root(size: usize, root: c_int) -> MpiResult<usize> {
    if root < 0 || root as usize >= size {
        return err!(Root, "root {root} is out of range: the communicator has {size} ranks (0..{})", size - 1);
    }
    Ok(root as usize)
}

fn check_count(count: i64, datatype: c_int) -> MpiResult<(usize, TypeRef)> {
    if count < 0 {
        return err!(Count, "count {count} is negative");
    }
    Ok((count as usize, handles::committed(datatype)?))
}

fn check_buf(buf: *const c_void, count: usize, ty: &TypeInfo, name: &str) -> MpiResult<()> {
    if buf.is_null() && count > 0 && ty.size > 0 && ty.contents.is_none() {
        return err!(Buffer, "{name} is a null pointer but count is {count}");
    }
    Ok(())
}

/// Pack `count` items at `buf`.
fn packed(buf: *const c_void, ty: &TypeInfo, count: usize) -> Scratch {
    let mut v = Scratch::zeroed(ty.size * count);
    // SAFETY: the caller checked the buffer holds `count` items.
    unsafe { pack::pack(ty, count, buf as *const u8, &mut v) };
    v
}

fn unpacked(buf: *mut c_void, ty: &TypeInfo, data: &[u8]) {
    // SAFETY: the caller checked the buffer holds the items.
    unsafe { pack::unpack(ty, data, buf as *mut u8) };
}

mpi_fn! {
    Initialized fn MPI_Barrier / PMPI_Barrier(comm: c_int) errors(Some(comm)) {
        with_state(|st| {
            let c = intra(st, comm)?;
            coll::barrier(&mut st.engine, &c)
        })
    }
}

fn bcast_any(buffer: *mut c_void, count: i64, datatype: c_int, root: c_int, comm: c_int) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let (count, ty) = check_count(count, datatype)?;
        let root = check_root(c.size(), root)?;
        check_buf(buffer, count, &ty, "buffer")?;
        if ty.is_contiguous() {
            // SAFETY: the user buffer holds `count` contiguous items.
            let b = unsafe { std::slice::from_raw_parts_mut(buffer as *mut u8, ty.size * count) };
            return coll::bcast(&mut st.engine, &c, b, root);
        }
        let mut data = if c.rank == root { packed(buffer, &ty, count) } else { Scratch::zeroed(ty.size * count) };
        coll::bcast(&mut st.engine, &c, &mut data, root)?;
        if c.rank != root {
            unpacked(buffer, &ty, &data);
        }
        Ok(())
    })
}

mpi_fn! {
    Initialized fn MPI_Bcast / PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        bcast_any(buffer, count.into(), datatype, root, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Bcast_c / PMPI_Bcast_c(buffer: *mut c_void, count: i64, datatype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        bcast_any(buffer, count, datatype, root, comm)
    }
}

/// A reduction's checked arguments: the count, the datatype, the
/// operator and the type it combines (see `unit`).
fn reduction(count: i64, datatype: c_int, op: c_int) -> MpiResult<(usize, TypeRef, Op, TypeInfo)> {
    let (count, ty) = check_count(count, datatype)?;
    let op = op_for(op, datatype)?;
    let u = unit(&ty, op)?;
    Ok((count, ty, op, u))
}

/// The operator of a reduction on `datatype` (a user function is told
/// the datatype it is called on).
fn op_for(op: c_int, datatype: c_int) -> MpiResult<Op> {
    Ok(match handles::op(op)? {
        Op::User(u) => Op::User(UserOp { datatype, ..u }),
        op => op,
    })
}

/// The type a reduction of `ty` works on, checked against `op`: for a
/// predefined operator, the predefined type `ty` is made of; for a user
/// function, `ty` itself.
fn unit(ty: &TypeInfo, op: Op) -> MpiResult<TypeInfo> {
    if let Op::User(_) = op {
        return Ok(ty.clone());
    }
    let u = match ty.reduction_unit() {
        Some(u) => u,
        None if ty.size == 0 => return Ok(TypeInfo::basic(&ty.name, crate::datatype::Basic::Byte, 1)),
        None => return err!(Op, "{} needs a datatype made of one predefined type; this one mixes several", op.name()),
    };
    op.check(&u).map_err(|mut e| {
        if u.name != ty.name {
            e.msg = format!(
                "{} (the elements of datatype {})",
                e.msg,
                if ty.name.is_empty() { "<derived>" } else { &ty.name }
            );
        }
        e
    })?;
    Ok(u)
}

fn reduce_any(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: c_int,
    op: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let (count, ty, op, u) = reduction(count, datatype, op)?;
        let root = check_root(c.size(), root)?;
        let in_place = sendbuf as usize == IN_PLACE;
        if in_place && c.rank != root {
            return err!(Buffer, "MPI_IN_PLACE is only allowed as sendbuf at the root of MPI_Reduce");
        }
        if !in_place {
            check_buf(sendbuf, count, &ty, "sendbuf")?;
        }
        if c.rank == root {
            check_buf(recvbuf, count, &ty, "recvbuf")?;
        }
        let src = if in_place { recvbuf as *const c_void } else { sendbuf };
        let mut data = packed(src, &ty, count);
        coll::reduce(&mut st.engine, &c, &mut data, &u, op, root)?;
        if c.rank == root {
            unpacked(recvbuf, &ty, &data);
        }
        Ok(())
    })
}

mpi_fn! {
    Initialized fn MPI_Reduce / PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        reduce_any(sendbuf, recvbuf, count.into(), datatype, op, root, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce_c / PMPI_Reduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: c_int, op: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        reduce_any(sendbuf, recvbuf, count, datatype, op, root, comm)
    }
}

/// What every rank of an all-reduction ends with.
#[derive(Clone, Copy)]
enum Combine {
    /// all the ranks' inputs (Allreduce)
    All,
    /// ranks 0..=me (Scan)
    Prefix,
    /// ranks 0..me (Exscan; rank 0's recvbuf is left alone)
    ExclusivePrefix,
}

fn all_reduction(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: i64,
    datatype: c_int,
    op: c_int,
    comm: c_int,
    what: Combine,
) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let (count, ty, op, u) = reduction(count, datatype, op)?;
        check_buf(recvbuf, count, &ty, "recvbuf")?;
        let mut data = reduction_input(sendbuf, recvbuf, &ty, count)?;
        let defined = match what {
            Combine::All => coll::allreduce(&mut st.engine, &c, &mut data, &u, op).map(|_| true)?,
            Combine::Prefix => coll::scan(&mut st.engine, &c, &mut data, &u, op, false)?,
            Combine::ExclusivePrefix => coll::scan(&mut st.engine, &c, &mut data, &u, op, true)?,
        };
        if defined {
            unpacked(recvbuf, &ty, &data);
        }
        Ok(())
    })
}

/// Where one rank's part of a buffer lies: `count` items of `ty` starting
/// `offset` bytes into the buffer.
#[derive(Clone)]
struct Part {
    ty: TypeRef,
    count: usize,
    offset: isize,
}

impl Part {
    fn bytes(&self) -> usize {
        self.ty.size * self.count
    }

    /// Where the part starts in `buf`.
    fn at(&self, buf: *const c_void) -> *const u8 {
        (buf as *const u8).wrapping_offset(self.offset)
    }

    fn pack(&self, buf: *const c_void) -> Scratch {
        packed((buf as *const u8).wrapping_offset(self.offset) as *const c_void, &self.ty, self.count)
    }

    fn unpack(&self, buf: *mut c_void, data: &[u8]) {
        unpacked((buf as *mut u8).wrapping_offset(self.offset) as *mut c_void, &self.ty, data)
    }
}

/// A per-rank argument (counts, displacements): one value for every
/// rank, or an array of `int`, `MPI_Count` or `MPI_Aint`.
#[derive(Clone, Copy)]
enum Arr {
    One(i64),
    Int(*const c_int),
    Count(*const i64),
    Aint(*const isize),
}

impl Arr {
    fn read(self, n: usize, name: &str) -> MpiResult<Vec<i64>> {
        fn slice<'a, T>(p: *const T, n: usize, name: &str) -> MpiResult<&'a [T]> {
            if p.is_null() {
                return err!(Arg, "{name} is a null pointer");
            }
            // SAFETY: the standard has the caller pass one entry per rank.
            Ok(unsafe { std::slice::from_raw_parts(p, n) })
        }
        Ok(match self {
            Arr::One(v) => vec![v; n],
            Arr::Int(p) => slice(p, n, name)?.iter().map(|&v| v.into()).collect(),
            Arr::Count(p) => slice(p, n, name)?.to_vec(),
            Arr::Aint(p) => slice(p, n, name)?.iter().map(|&v| v as i64).collect(),
        })
    }
}

/// Rank r's part is `counts[r]` items at `displs[r]` extents (or, with no
/// displacements, packed one after another: `r * count` items).
fn parts(
    n: usize,
    ty: &TypeRef,
    counts: Arr,
    displs: Option<Arr>,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.read(n, &format!("the counts for {name}"))?;
    let displs = match displs {
        Some(d) => Some(d.read(n, &format!("the displacements for {name}"))?),
        None => None,
    };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let count = counts[r];
        if count < 0 {
            return err!(Count, "{name} count for rank {r} is {count}, negative");
        }
        let items = match &displs {
            Some(d) => d[r] as isize,
            None => (r * count as usize) as isize,
        };
        check_buf(buf, count as usize, ty, name)?;
        out.push(Part { ty: ty.clone(), count: count as usize, offset: items * ty.extent });
    }
    Ok(out)
}

/// The send (or receive) side of a rooted or all-to-all collective: a
/// count and a committed datatype, checked.
fn side(count: i64, datatype: c_int, buf: *const c_void, name: &str) -> MpiResult<Part> {
    let (count, ty) = check_count(count, datatype)?;
    check_buf(buf, count, &ty, name)?;
    Ok(Part { ty, count, offset: 0 })
}

fn is_in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

/// A rooted collective's communicator and root, and whether `buf` (the
/// argument named `which`) is MPI_IN_PLACE, which only the root may pass.
fn rooted(
    st: &crate::runtime::State,
    comm: c_int,
    root: c_int,
    buf: *const c_void,
    which: &str,
) -> MpiResult<(crate::comm::Comm, usize, bool)> {
    let c = intra(st, comm)?;
    let root = check_root(c.size(), root)?;
    let in_place = is_in_place(buf);
    if in_place && c.rank != root {
        return err!(Buffer, "MPI_IN_PLACE is only allowed as {which} at the root");
    }
    Ok((c, root, in_place))
}

#[allow(clippy::too_many_arguments)]
fn gather_any(
    st: &mut crate::runtime::State,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Arr,
    displs: Option<Arr>,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let (c, root, in_place) = rooted(st, comm, root, sendbuf, "sendbuf")?;
    let (n, me) = (c.size(), c.rank);
    let mine = if in_place { Scratch::zeroed(0) } else { side(sendcount, sendtype, sendbuf, "sendbuf")?.pack(sendbuf) };
    if me != root {
        coll::gather(&mut st.engine, &c, &mine, root, &[])?;
        return Ok(());
    }
    let rty = handles::committed(recvtype)?;
    let layout = parts(n, &rty, counts, displs, recvbuf, "recvbuf")?;
    let mut lens: Vec<usize> = layout.iter().map(Part::bytes).collect();
    if !in_place && mine.len() > lens[me] {
        return err!(Truncate, "the root sends {} bytes to itself but expects {}", mine.len(), lens[me]);
    }
    lens[me] = mine.len();
    let got = coll::gather(&mut st.engine, &c, &mine, root, &lens)?;
    for (r, data) in got.iter().enumerate() {
        if !(in_place && r == me) {
            layout[r].unpack(recvbuf, data);
        }
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Gather / PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| gather_any(st, sendbuf, sendcount.into(), sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Gather_c / PMPI_Gather_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| gather_any(st, sendbuf, sendcount, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Gatherv / PMPI_Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| gather_any(st, sendbuf, sendcount.into(), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(displs)), recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Gatherv_c / PMPI_Gatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| gather_any(st, sendbuf, sendcount, sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(displs)), recvtype, root, comm))
    }
}

#[allow(clippy::too_many_arguments)]
fn scatter_any(
    st: &mut crate::runtime::State,
    sendbuf: *const c_void,
    counts: Arr,
    displs: Option<Arr>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: c_int,
    root: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let (c, root, in_place) = rooted(st, comm, root, recvbuf, "recvbuf")?;
    let (n, me) = (c.size(), c.rank);
    let recv = if in_place { None } else { Some(side(recvcount, recvtype, recvbuf, "recvbuf")?) };
    if me != root {
        let want = recv.as_ref().map_or(0, Part::bytes);
        let data = coll::scatter(&mut st.engine, &c, &[], root, want)?;
        if let Some(p) = recv {
            p.unpack(recvbuf, &data);
        }
        return Ok(());
    }
    let sty = handles::committed(sendtype)?;
    let layout = parts(n, &sty, counts, displs, sendbuf, "sendbuf")?;
    let out: Vec<Scratch> = layout
        .iter()
        .enumerate()
        .map(|(r, p)| if in_place && r == me { Scratch::zeroed(0) } else { p.pack(sendbuf) })
        .collect();
    if let Some(p) = &recv {
        if out[me].len() > p.bytes() {
            return err!(Truncate, "the root sends {} bytes to itself but expects {}", out[me].len(), p.bytes());
        }
    }
    let data = coll::scatter(&mut st.engine, &c, &out, root, 0)?;
    if let Some(p) = recv {
        p.unpack(recvbuf, &data);
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Scatter / PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| scatter_any(st, sendbuf, Arr::One(sendcount.into()), None, sendtype, recvbuf, recvcount.into(), recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Scatter_c / PMPI_Scatter_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| scatter_any(st, sendbuf, Arr::One(sendcount), None, sendtype, recvbuf, recvcount, recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Scatterv / PMPI_Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| scatter_any(st, sendbuf, Arr::Int(sendcounts), Some(Arr::Int(displs)), sendtype, recvbuf, recvcount.into(), recvtype, root, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Scatterv_c / PMPI_Scatterv_c(sendbuf: *const c_void, sendcounts: *const i64, displs: *const isize, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, root: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| scatter_any(st, sendbuf, Arr::Count(sendcounts), Some(Arr::Aint(displs)), sendtype, recvbuf, recvcount, recvtype, root, comm))
    }
}

#[allow(clippy::too_many_arguments)]
fn allgather_any(
    st: &mut crate::runtime::State,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Arr,
    displs: Option<Arr>,
    recvtype: c_int,
    comm: c_int,
) -> MpiResult<()> {
    let c = intra(st, comm)?;
    let (n, me) = (c.size(), c.rank);
    let rty = handles::committed(recvtype)?;
    let layout = parts(n, &rty, counts, displs, recvbuf, "recvbuf")?;
    let in_place = is_in_place(sendbuf);
    let direct = rty.is_contiguous();
    let mine = match (in_place, direct) {
        (true, true) => None,
        (true, false) => Some(layout[me].pack(recvbuf)),
        (false, _) => Some(side(sendcount, sendtype, sendbuf, "sendbuf")?.pack(sendbuf)),
    };
    if let Some(m) = &mine {
        if m.len() != layout[me].bytes() {
            return err!(Truncate, "rank {me} sends {} bytes but every rank expects {}", m.len(), layout[me].bytes());
        }
    }
    // contiguous: the parts travel in the user's recvbuf; otherwise in
    // scratch blocks unpacked at the end
    let mut landing: Vec<Scratch> = Vec::new();
    if !direct {
        landing = layout.iter().map(|p| Scratch::zeroed(p.bytes())).collect();
        landing[me].copy_from_slice(mine.as_deref().unwrap_or(&[]));
    }
    let blocks: Vec<coll::BlockMut> = if direct {
        layout.iter().map(|p| (p.at(recvbuf) as *mut u8, p.bytes())).collect()
    } else {
        landing.iter_mut().map(|s| (s.as_mut_ptr(), s.len())).collect()
    };
    if let (true, Some(m)) = (direct, &mine) {
        // SAFETY: the part lies in recvbuf (checked) and `m` is a copy.
        unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), blocks[me].0, m.len()) };
    }
    // SAFETY: the blocks are the user's parts of recvbuf or scratch, valid
    // for the call and disjoint (the standard forbids overlapping parts).
    unsafe { coll::allgather(&mut st.engine, &c, &blocks)? };
    for (p, s) in layout.iter().zip(&landing) {
        p.unpack(recvbuf, s);
    }
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Allgather / PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| allgather_any(st, sendbuf, sendcount.into(), sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Allgather_c / PMPI_Allgather_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| allgather_any(st, sendbuf, sendcount, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Allgatherv / PMPI_Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| allgather_any(st, sendbuf, sendcount.into(), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(displs)), recvtype, comm))
    }
}

mpi_fn! {
    Initialized fn MPI_Allgatherv_c / PMPI_Allgatherv_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        with_state(|st| allgather_any(st, sendbuf, sendcount, sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(displs)), recvtype, comm))
    }
}

/// All-to-all over explicit layouts. Contiguous parts go straight from
/// and to the user's buffers; others are packed or unpacked around the
/// exchange. With MPI_IN_PLACE the send layout is the receive layout and
/// every send is packed first, since the receives overwrite it.
fn alltoall_layouts(
    st: &mut crate::runtime::State,
    c: &crate::comm::Comm,
    sendbuf: *const c_void,
    send: Option<Vec<Part>>,
    recvbuf: *mut c_void,
    recv: Vec<Part>,
) -> MpiResult<()> {
    let (src, send, in_place) = match send {
        Some(s) => (sendbuf, s, false),
        None => (recvbuf as *const c_void, recv.clone(), true),
    };
    let staged: Vec<Option<Scratch>> =
        send.iter().map(|p| (in_place || !p.ty.is_contiguous()).then(|| p.pack(src))).collect();
    let sends: Vec<coll::Block> = send
        .iter()
        .zip(&staged)
        .map(|(p, s)| match s {
            Some(s) => (s.as_ptr(), s.len()),
            None => (p.at(src), p.bytes()),
        })
        .collect();
    let mut landing: Vec<Option<Scratch>> =
        recv.iter().map(|p| (!p.ty.is_contiguous()).then(|| Scratch::zeroed(p.bytes()))).collect();
    let recvs: Vec<coll::BlockMut> = recv
        .iter()
        .zip(landing.iter_mut())
        .map(|(p, s)| match s {
            Some(s) => (s.as_mut_ptr(), s.len()),
            None => (p.at(recvbuf) as *mut u8, p.bytes()),
        })
        .collect();
    // SAFETY: the user's buffers hold their parts for the call (checked
    // non-null); sends are staged whenever they could overlap receives.
    unsafe { coll::alltoall(&mut st.engine, c, &sends, &recvs)? };
    for (p, s) in recv.iter().zip(&landing) {
        if let Some(s) = s {
            p.unpack(recvbuf, s);
        }
    }
    Ok(())
}

/// Alltoall and Alltoallv: counts and displacements (in extents) per rank.
#[allow(clippy::too_many_arguments)]
fn alltoallv_any(
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Option<Arr>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Option<Arr>,
    recvtype: c_int,
    comm: c_int,
) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let n = c.size();
        let layout = |counts, displs, ty, buf, name| parts(n, &handles::committed(ty)?, counts, displs, buf, name);
        let recv = layout(recvcounts, rdispls, recvtype, recvbuf, "recvbuf")?;
        let send =
            if is_in_place(sendbuf) { None } else { Some(layout(sendcounts, sdispls, sendtype, sendbuf, "sendbuf")?) };
        alltoall_layouts(st, &c, sendbuf, send, recvbuf, recv)
    })
}

mpi_fn! {
    Initialized fn MPI_Alltoall / PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        alltoallv_any(sendbuf, Arr::One(sendcount.into()), None, sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Alltoall_c / PMPI_Alltoall_c(sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        alltoallv_any(sendbuf, Arr::One(sendcount), None, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Alltoallv / PMPI_Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        alltoallv_any(sendbuf, Arr::Int(sendcounts), Some(Arr::Int(sdispls)), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(rdispls)), recvtype, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Alltoallv_c / PMPI_Alltoallv_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: c_int, comm: c_int) errors(Some(comm)) {
        alltoallv_any(sendbuf, Arr::Count(sendcounts), Some(Arr::Aint(sdispls)), sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(rdispls)), recvtype, comm)
    }
}

/// Alltoallw's layout: per-rank types, displacements in bytes.
fn wparts(
    n: usize,
    counts: Arr,
    displs: Arr,
    types: *const c_int,
    buf: *const c_void,
    name: &str,
) -> MpiResult<Vec<Part>> {
    let counts = counts.read(n, &format!("the counts for {name}"))?;
    let displs = displs.read(n, &format!("the displacements for {name}"))?;
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

#[allow(clippy::too_many_arguments)]
fn alltoallw_any(
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Arr,
    sendtypes: *const c_int,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Arr,
    recvtypes: *const c_int,
    comm: c_int,
) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let n = c.size();
        let recv = wparts(n, recvcounts, rdispls, recvtypes, recvbuf, "recvbuf")?;
        let send = if is_in_place(sendbuf) {
            None
        } else {
            Some(wparts(n, sendcounts, sdispls, sendtypes, sendbuf, "sendbuf")?)
        };
        alltoall_layouts(st, &c, sendbuf, send, recvbuf, recv)
    })
}

mpi_fn! {
    Initialized fn MPI_Alltoallw / PMPI_Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const c_int, comm: c_int) errors(Some(comm)) {
        alltoallw_any(sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtypes, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Alltoallw_c / PMPI_Alltoallw_c(sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const c_int, comm: c_int) errors(Some(comm)) {
        alltoallw_any(sendbuf, Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes, recvbuf, Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes, comm)
    }
}

/// An all-reduction's entry point and its large-count twin.
macro_rules! all_reduction {
    ($what:expr, $f:ident / $pf:ident, $fc:ident / $pfc:ident) => {
        mpi_fn! {
            Initialized fn $f / $pf(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
                all_reduction(sendbuf, recvbuf, count.into(), datatype, op, comm, $what)
            }
        }
        mpi_fn! {
            Initialized fn $fc / $pfc(sendbuf: *const c_void, recvbuf: *mut c_void, count: i64, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
                all_reduction(sendbuf, recvbuf, count, datatype, op, comm, $what)
            }
        }
    };
}

all_reduction!(Combine::All, MPI_Allreduce / PMPI_Allreduce, MPI_Allreduce_c / PMPI_Allreduce_c);
all_reduction!(Combine::Prefix, MPI_Scan / PMPI_Scan, MPI_Scan_c / PMPI_Scan_c);
all_reduction!(Combine::ExclusivePrefix, MPI_Exscan / PMPI_Exscan, MPI_Exscan_c / PMPI_Exscan_c);

/// The packed input of a reduction (`recvbuf`'s with MPI_IN_PLACE).
fn reduction_input(sendbuf: *const c_void, recvbuf: *mut c_void, ty: &TypeInfo, count: usize) -> MpiResult<Scratch> {
    let src = if is_in_place(sendbuf) { recvbuf as *const c_void } else { sendbuf };
    check_buf(src, count, ty, "sendbuf")?;
    Ok(packed(src, ty, count))
}

fn reduce_local_any(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: i64,
    datatype: c_int,
    op: c_int,
) -> MpiResult<()> {
    let (count, ty, op, u) = reduction(count, datatype, op)?;
    if is_in_place(inbuf) {
        return err!(Buffer, "MPI_IN_PLACE is not allowed in MPI_Reduce_local");
    }
    check_buf(inbuf, count, &ty, "inbuf")?;
    check_buf(inoutbuf, count, &ty, "inoutbuf")?;
    let inp = packed(inbuf, &ty, count);
    let mut acc = packed(inoutbuf, &ty, count);
    crate::op::apply(op, &u, &inp, &mut acc)?;
    unpacked(inoutbuf, &ty, &acc);
    Ok(())
}

mpi_fn! {
    Initialized fn MPI_Reduce_local / PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: c_int, op: c_int) errors(None) {
        reduce_local_any(inbuf, inoutbuf, count.into(), datatype, op)
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce_local_c / PMPI_Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: i64, datatype: c_int, op: c_int) errors(None) {
        reduce_local_any(inbuf, inoutbuf, count, datatype, op)
    }
}

/// Reduce the whole input to rank 0 (fixed combining order), then
/// scatter rank r its `counts[r]` items.
fn reduce_scatter_any(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: Arr,
    datatype: c_int,
    op: c_int,
    comm: c_int,
) -> MpiResult<()> {
    with_state(|st| {
        let c = intra(st, comm)?;
        let (n, me) = (c.size(), c.rank);
        let (_, ty, op, u) = reduction(0, datatype, op)?;
        // recvbuf holds this rank's part only (all of the input in place)
        let layout = parts(n, &ty, counts, None, std::ptr::NonNull::<c_void>::dangling().as_ptr(), "recvbuf")?;
        check_buf(recvbuf, layout[me].count, &ty, "recvbuf")?;
        let total: usize = layout.iter().map(|p| p.count).sum();
        let mut data = reduction_input(sendbuf, recvbuf, &ty, total)?;
        coll::reduce(&mut st.engine, &c, &mut data, &u, op, 0)?;
        let mut out = Vec::new();
        if me == 0 {
            let mut at = 0;
            for p in &layout {
                out.push(Scratch::from_slice(&data[at..at + p.bytes()]));
                at += p.bytes();
            }
        }
        let mine = coll::scatter(&mut st.engine, &c, &out, 0, layout[me].bytes())?;
        unpacked(recvbuf, &ty, &mine);
        Ok(())
    })
}

mpi_fn! {
    Initialized fn MPI_Reduce_scatter_block / PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        reduce_scatter_any(sendbuf, recvbuf, Arr::One(recvcount.into()), datatype, op, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce_scatter_block_c / PMPI_Reduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: i64, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        reduce_scatter_any(sendbuf, recvbuf, Arr::One(recvcount), datatype, op, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce_scatter / PMPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        reduce_scatter_any(sendbuf, recvbuf, Arr::Int(recvcounts), datatype, op, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Reduce_scatter_c / PMPI_Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const i64, datatype: c_int, op: c_int, comm: c_int) errors(Some(comm)) {
        reduce_scatter_any(sendbuf, recvbuf, Arr::Count(recvcounts), datatype, op, comm)
    }
}

mpi_fn! {
    Initialized fn MPI_Op_create / PMPI_Op_create(user_fn: Option<UserFn>, commute: c_int, op: *mut c_int) errors(None) {
        let Some(f) = user_fn else { return err!(Arg, "user_fn is a null pointer") };
        if op.is_null() {
            return err!(Arg, "op is a null pointer");
        }
        let h = handles::new_op(UserOp { f, commute: commute != 0, datatype: 0 })?;
        // SAFETY: checked non-null; the caller passes a writable MPI_Op.
        unsafe { *op = h };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Op_free / PMPI_Op_free(op: *mut c_int) errors(None) {
        if op.is_null() {
            return err!(Arg, "op is a null pointer");
        }
        // SAFETY: checked non-null.
        unsafe {
            handles::free_op(*op)?;
            *op = handles::OP_NULL;
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Op_commutative / PMPI_Op_commutative(op: c_int, commute: *mut c_int) errors(None) {
        if commute.is_null() {
            return err!(Arg, "commute is a null pointer");
        }
        let c = match handles::op(op)? {
            Op::User(u) => u.commute,
            _ => true,
        };
        // SAFETY: checked non-null.
        unsafe { *commute = c as c_int };
        Ok(())
    }
}
