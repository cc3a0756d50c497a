//! Collectives in which every rank sends a block to every other:
//! Allgather(v), Alltoall(v/w).

use super::varied::{flat_gatherv, flat_short, varied_short};
use super::*;

#[allow(clippy::too_many_arguments)]
fn allgather_any(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Arr,
    displs: Option<Arr>,
    recvtype: c_int,
    comm: c_int,
    how: How,
) -> MpiResult<()> {
    with_state(|st| {
        if let (How::Now, Arr::One(rc), None) = (how, counts, displs) {
            if let Some(r) = blocks_short(st, comm, (sendbuf, sendcount, sendtype), (recvbuf, rc, recvtype), false) {
                return r;
            }
        }
        if let (Arr::One(rc), None) = (counts, displs) {
            if let Some(r) =
                blocks_on_lines(st, comm, how, (sendbuf, sendcount, sendtype), (recvbuf, rc, recvtype), false)
            {
                return r;
            }
        }
        let c = members(st, comm)?;
        let me = c.rank;
        no_in_place_between(&c, sendbuf, "sendbuf")?;
        if let (Arr::One(rc), None) = (counts, displs) {
            // contiguous blocks in a row: no layouts built
            if let Some(r) =
                contiguous_blocks(st, comm, how, c, (sendbuf, sendcount, sendtype), (recvbuf, rc, recvtype), false)
            {
                return r;
            }
        }
        if let Some(d) = displs {
            // MPI_Allgatherv into a contiguous datatype: no parts built
            let recv = (recvbuf, counts, d, recvtype);
            if let Some(r) = flat_gatherv(st, comm, how, &c, (sendbuf, sendcount, sendtype), recv) {
                return r;
            }
        }
        let layout = parts(c.peers(), &handles::committed(recvtype)?, counts, displs, recvbuf, "recvbuf")?;
        let in_place = is_in_place(sendbuf);
        let send = if in_place { None } else { Some(side(sendcount, sendtype, sendbuf, "sendbuf")?) };
        let (sbuf, rbuf) = (sendbuf as usize, recvbuf as usize);
        if c.remote.is_some() {
            // each process's block goes to every process of the other group
            let send = send.expect("not in place");
            return launch(st, comm, how, Agree::new("MPI_Allgather", 0, 0), move |p| {
                let mine = send.source(p, sbuf);
                let blocks: Vec<Block> = layout.iter().map(|l| l.landing(p, rbuf)).collect();
                inter::alltoall(p, &vec![mine; blocks.len()], &blocks);
                for (l, b) in layout.iter().zip(blocks) {
                    l.finish(p, rbuf, b);
                }
                Ok(())
            });
        }
        if let Some(s) = send.as_ref().filter(|s| s.bytes() != layout[me].bytes()) {
            return err!(Truncate, "rank {me} sends {} bytes but every rank expects {}", s.bytes(), layout[me].bytes());
        }
        if displs.is_none() {
            // equal blocks: the short path may take it
            let b = layout[me].bytes();
            let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
                let whole = layout[0].ty.is_contiguous();
                let mut staged = if whole { Scratch::zeroed(0) } else { Scratch::zeroed(b * layout.len()) };
                // SAFETY: contiguous: recvbuf holds the n blocks in a row.
                let all = if whole {
                    unsafe { Block { addr: rbuf, len: b * layout.len() }.bytes_mut() }
                } else {
                    &mut staged[..]
                };
                match &send {
                    Some(s) => all[me * b..(me + 1) * b].copy_from_slice(&in_a_row(s, sbuf)),
                    None if !whole => all[me * b..(me + 1) * b].copy_from_slice(&layout[me].pack(rbuf)),
                    None => {}
                }
                let done = shm::allgather(e, m, stamp, all, None);
                if !whole {
                    for (r, l) in layout.iter().enumerate().filter(|&(r, _)| !(in_place && r == me)) {
                        unpacked(l.at(rbuf), &l.ty, &staged[r * b..(r + 1) * b]);
                    }
                }
                done
            };
            let fits = shm::fits(b * layout.len(), Some((Pieces::Allgather, layout.len(), 1)));
            if let Some(r) = mailbox_path(st, comm, how, fits, short) {
                return r;
            }
        } else {
            // parts of their own sizes, whole through the mailboxes when
            // they are short in all (every rank knows every part's size)
            let total = layout.iter().map(Part::bytes).sum::<usize>();
            // parts of one size may also go in pieces when they are long
            let equal = Some(layout[me].bytes()).filter(|&b| layout.iter().all(|l| l.bytes() == b));
            let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
                // the parts staged one after another (a contiguous receive
                // type takes `flat_gatherv`, straight into recvbuf)
                let mut next = 0;
                let at: Vec<std::ops::Range<usize>> = layout
                    .iter()
                    .map(|l| {
                        next += l.bytes();
                        next - l.bytes()..next
                    })
                    .collect();
                let mut staged = Scratch::zeroed(next);
                match &send {
                    // (its size is its part's, checked)
                    Some(s) => staged[at[me].clone()].copy_from_slice(&in_a_row(s, sbuf)),
                    None => staged[at[me].clone()].copy_from_slice(&layout[me].pack(rbuf)),
                }
                let done = shm::allgatherv(e, m, stamp, &mut staged, |r| at[r].clone(), equal, None);
                for (r, l) in layout.iter().enumerate() {
                    unpacked(l.at(rbuf), &l.ty, &staged[at[r].clone()]);
                }
                done
            };
            let longest = layout.iter().map(Part::bytes).max().unwrap_or(0);
            let pieces = shm::allgatherv_form(layout.len(), equal, longest);
            if let Some(r) = mailbox_path(st, comm, how, shm::fits(total, pieces), short) {
                return r;
            }
        }
        let agree = Agree::new("MPI_Allgather", 0, 0);
        let agree = if displs.is_none() { agree.sized(layout[me].bytes()) } else { agree };
        launch(st, comm, how, agree, move |p| {
            let blocks: Vec<Block> = layout.iter().map(|l| l.landing(p, rbuf)).collect();
            // this rank's part, which the algorithm copies into its block
            // (in place: already there when the receive type is contiguous)
            let own = match &send {
                Some(s) => Some(s.source(p, sbuf)),
                None => (!layout[me].ty.is_contiguous()).then(|| layout[me].source(p, rbuf)),
            };
            algo::allgather(p, &blocks, own);
            for (r, l) in layout.iter().enumerate().filter(|&(r, _)| !(in_place && r == me)) {
                l.finish(p, rbuf, blocks[r]);
            }
            Ok(())
        })
    })
}

collective! { comm;
    MPI_Allgather / PMPI_Allgather, MPI_Iallgather / PMPI_Iallgather, MPI_Allgather_init / PMPI_Allgather_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount.into(), sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Allgather_c / PMPI_Allgather_c, MPI_Iallgather_c / PMPI_Iallgather_c, MPI_Allgather_init_c / PMPI_Allgather_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Allgatherv / PMPI_Allgatherv, MPI_Iallgatherv / PMPI_Iallgatherv, MPI_Allgatherv_init / PMPI_Allgatherv_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount.into(), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(displs)), recvtype, comm, how)
}

collective! { comm;
    MPI_Allgatherv_c / PMPI_Allgatherv_c, MPI_Iallgatherv_c / PMPI_Iallgatherv_c, MPI_Allgatherv_init_c / PMPI_Allgatherv_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount, sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(displs)), recvtype, comm, how)
}

/// MPI_Alltoall (`alltoall`) or MPI_Allgather of contiguous blocks on an
/// intracommunicator, not in place, without building per-rank layouts:
/// through the mailboxes when they take it, else as messages; Some(result)
/// when it took that path (None: the general one checks and reports). `send` and
/// `recv` are (buffer, count, datatype).
/// A nonblocking Allgather or (`alltoall`) Alltoall whose part, this
/// rank's one block or all its blocks, fits an arrival line: there
/// (`arrival_path`), decided by the blocks' bytes alone, which every
/// member of a correct program has alike whatever its datatypes. The
/// part is packed as the call starts (in place: from recvbuf), each
/// rank's block unpacked into recvbuf as its part is taken. None: it goes
/// another way, which also reports what is wrong with its arguments.
fn blocks_on_lines(
    st: &mut State,
    comm: c_int,
    how: How,
    send: (*const c_void, i64, c_int),
    recv: (*mut c_void, i64, c_int),
    alltoall: bool,
) -> Option<MpiResult<()>> {
    if matches!(how, How::Now) {
        return None;
    }
    let c = members(st, comm).ok().filter(|c| c.remote.is_none())?;
    let (n, me) = (c.n, c.rank);
    let (rc, rty) = check_count(recv.1, recv.2).ok()?;
    let b = rc * rty.size;
    let part_bytes = if alltoall { n * b } else { b };
    if part_bytes > crate::p2p::arrival::ARRIVAL_BYTES {
        return None;
    }
    let in_place = is_in_place(send.0);
    let rbuf = recv.0 as usize;
    check_buf(rbuf as *const c_void, rc * n, &rty, "recvbuf").ok()?;
    // a block's place in recvbuf
    let extent = rty.extent.checked_mul(isize::try_from(rc).ok()?)?;
    let at = move |r: usize| (rbuf as isize).wrapping_add(extent.wrapping_mul(r as isize)) as usize;
    // (what the part is packed from, as many items of which type)
    let (from, count, ty) = if in_place {
        // an Allgather's own block, or an Alltoall's every block
        if alltoall {
            (rbuf, rc * n, rty.clone())
        } else {
            (at(me), rc, rty.clone())
        }
    } else {
        let (sc, sty) = check_count(send.1, send.2).ok()?;
        let blocks = if alltoall { n } else { 1 };
        if sc * sty.size != b || check_buf(send.0, sc * blocks, &sty, "sendbuf").is_err() {
            return None;
        }
        (send.0 as usize, sc * blocks, sty)
    };
    let part = move |to: &mut [u8]| {
        if !to.is_empty() {
            // SAFETY: the buffer holds `count` items of `ty` (checked, not
            // null where there are any), as it does at every start of a
            // persistent one.
            unsafe { pack::pack(&ty, count, from as *const u8, to) }
        }
    };
    let take = move || {
        let rty = rty.clone();
        let take: crate::p2p::arrival::Take = Box::new(move |r, part| {
            shm::check_size(r, if alltoall { part.len() / n.max(1) } else { part.len() }, b)?;
            let block = if alltoall { &part[me * b..(me + 1) * b] } else { part };
            if !(in_place && !alltoall && r == me) {
                unpacked(at(r), &rty, block);
            }
            Ok(())
        });
        Some(take)
    };
    let kind = if alltoall { crate::p2p::arrival::Kind::Alltoall } else { crate::p2p::arrival::Kind::Allgather };
    arrival_path(st, comm, how, (kind, part_bytes), part, take)
}

fn contiguous_blocks(
    st: &mut State,
    comm: c_int,
    how: How,
    c: Local,
    send: (*const c_void, i64, c_int),
    recv: (*mut c_void, i64, c_int),
    alltoall: bool,
) -> Option<MpiResult<()>> {
    if c.remote.is_some() || is_in_place(send.0) {
        return None;
    }
    let checked = (|| {
        let (sc, sty) = check_count(send.1, send.2)?;
        let (rc, rty) = check_count(recv.1, recv.2)?;
        check_buf(send.0, sc, &sty, "sendbuf")?;
        check_buf(recv.0, rc, &rty, "recvbuf")?;
        Ok::<_, crate::error::MpiError>((sc * sty.size, rc * rty.size, sty.is_contiguous() && rty.is_contiguous()))
    })();
    let (sb, b, contiguous) = match checked {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    if !contiguous || sb != b {
        return None;
    }
    let (n, sbuf, rbuf) = (c.n, send.0 as usize, recv.0 as usize);
    // SAFETY: contiguous user buffers of the checked sizes, distinct (not
    // in place).
    let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| unsafe {
        blocks_in_mailboxes(e, m, stamp, sbuf, rbuf, b, alltoall)
    };
    let op = if alltoall { Pieces::Alltoall } else { Pieces::Allgather };
    if let Some(r) = mailbox_path(st, comm, how, shm::fits(b.saturating_mul(n), Some((op, n, 1))), short) {
        return Some(r);
    }
    // as messages: the blocks lie in a row in both buffers
    let agree = if alltoall { Agree::new("MPI_Alltoall", 0, 0) } else { Agree::new("MPI_Allgather", 0, 0).sized(b) };
    let kind = if alltoall { Kind::Alltoall } else { Kind::Allgather };
    let call = Some([kind as usize, sbuf, rbuf, b, 0, 0, 0]);
    Some(launch_kept(st, comm, how, agree, call, move |p| {
        let blocks = |buf: usize| (0..n).map(|r| Block { addr: buf + r * b, len: b }).collect::<Vec<_>>();
        if alltoall {
            algo::alltoall(p, &blocks(sbuf), &blocks(rbuf), true);
        } else {
            algo::allgather(p, &blocks(rbuf), Some(Block { addr: sbuf, len: b }));
        }
        Ok(())
    }))
}

/// An Alltoall (`alltoall`) or Allgather of `b`-byte blocks from `sbuf`
/// into `rbuf` through the mailboxes.
///
/// # Safety
/// `sbuf` and `rbuf` hold the call's contiguous blocks (an Allgather's
/// send buffer one), distinct.
unsafe fn blocks_in_mailboxes(
    e: &mut crate::p2p::Engine,
    m: &shm::Members,
    stamp: u64,
    sbuf: usize,
    rbuf: usize,
    b: usize,
    alltoall: bool,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    // SAFETY: per the caller's contract.
    let got = unsafe { Block { addr: rbuf, len: b * n }.bytes_mut() };
    if alltoall {
        // SAFETY: as above.
        shm::alltoall(e, m, stamp, unsafe { Block { addr: sbuf, len: b * n }.bytes() }, got)
    } else {
        // SAFETY: as above.
        let own = unsafe { Block { addr: sbuf, len: b }.bytes() };
        got[me * b..(me + 1) * b].copy_from_slice(own);
        shm::allgather(e, m, stamp, got, Some(own))
    }
}

/// A short blocking Alltoall (`alltoall`) or Allgather (`short_path`);
/// `send` and `recv` are (buffer, count, datatype).
#[inline]
fn blocks_short(
    st: &mut State,
    comm: c_int,
    send: (*const c_void, i64, c_int),
    recv: (*mut c_void, i64, c_int),
    alltoall: bool,
) -> Option<MpiResult<()>> {
    let (_, b) = short_data(send.0, send.1, send.2)?;
    if short_data(recv.0, recv.1, recv.2)?.1 != b {
        return None;
    }
    let (sbuf, rbuf) = (send.0 as usize, recv.0 as usize);
    // SAFETY: the user's buffers hold the call's blocks: `b` contiguous
    // bytes each (`short_data`), distinct (neither in place).
    short_path(
        st,
        comm,
        |c| b.checked_mul(c.size()),
        |e, m, stamp| unsafe { blocks_in_mailboxes(e, m, stamp, sbuf, rbuf, b, alltoall) },
    )
}

/// All-to-all over explicit layouts. Contiguous parts go straight from
/// and to the user's buffers; others are packed or unpacked around the
/// exchange. With MPI_IN_PLACE (`send` None) the send layout is the
/// receive layout and every send is packed first, since the receives
/// overwrite it.
/// With `varied` (Alltoallv, Alltoallw) on an intracommunicator of one
/// host, the blocks that fit go through the mailboxes (`varied_short`;
/// never with OXMPI_SHM_COLL_MAX=0), and the algorithms for blocks all of
/// one size are never taken (`algo::alltoall`).
#[allow(clippy::too_many_arguments)]
fn alltoall_layouts(
    st: &mut State,
    comm: c_int,
    how: How,
    sendbuf: *const c_void,
    send: Option<Vec<Part>>,
    recvbuf: *mut c_void,
    recv: Vec<Part>,
    varied: bool,
) -> MpiResult<()> {
    let c = members(st, comm)?;
    let (me, between) = (c.rank, c.remote.is_some());
    let in_place = send.is_none();
    let send = send.unwrap_or_else(|| recv.clone());
    if !between && send[me].bytes() > recv[me].bytes() {
        return err!(Truncate, "rank {me} sends {} bytes to itself but expects {}", send[me].bytes(), recv[me].bytes());
    }
    let rbuf = recvbuf as usize;
    let src = if in_place { rbuf } else { sendbuf as usize };
    if varied && !between && c.n <= shm::VARIED_MAX_RANKS && coll::tuning::alltoall_auto() {
        let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
            varied_short(e, m, stamp, (&send, src, in_place), (&recv, rbuf))
        };
        if let Some(r) = mailbox_path(st, comm, how, coll::tuning::shm_max() > 0, short) {
            return r;
        }
    }
    launch(st, comm, how, Agree::new("MPI_Alltoall", 0, 0), move |p| {
        let sends: Vec<Block> =
            send.iter().map(|l| if in_place { p.keep(l.pack(src)) } else { l.source(p, src) }).collect();
        let recvs: Vec<Block> = recv.iter().map(|l| l.landing(p, rbuf)).collect();
        if between {
            inter::alltoall(p, &sends, &recvs);
        } else {
            algo::alltoall(p, &sends, &recvs, !varied);
        }
        for (l, b) in recv.iter().zip(recvs) {
            l.finish(p, rbuf, b);
        }
        Ok(())
    })
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
    how: How,
) -> MpiResult<()> {
    with_state(|st| {
        if let (How::Now, Arr::One(sc), Arr::One(rc), None, None) = (how, sendcounts, recvcounts, sdispls, rdispls) {
            if let Some(r) = blocks_short(st, comm, (sendbuf, sc, sendtype), (recvbuf, rc, recvtype), true) {
                return r;
            }
        }
        if let (Arr::One(sc), Arr::One(rc), None, None) = (sendcounts, recvcounts, sdispls, rdispls) {
            if let Some(r) = blocks_on_lines(st, comm, how, (sendbuf, sc, sendtype), (recvbuf, rc, recvtype), true) {
                return r;
            }
        }
        let c = members(st, comm)?;
        no_in_place_between(&c, sendbuf, "sendbuf")?;
        let n = c.peers();
        if let (Arr::One(sc), Arr::One(rc), None, None) = (sendcounts, recvcounts, sdispls, rdispls) {
            // MPI_Alltoall of contiguous blocks in a row: no layouts built
            if let Some(r) = contiguous_blocks(st, comm, how, c, (sendbuf, sc, sendtype), (recvbuf, rc, recvtype), true)
            {
                return r;
            }
        }
        if let (Some(sd), Some(rd)) = (sdispls, rdispls) {
            // MPI_Alltoallv of contiguous datatypes: no parts built
            let send = (sendbuf, sendcounts, sd, sendtype);
            if let Some(r) = flat_short(st, comm, how, &c, send, (recvbuf, recvcounts, rd, recvtype)) {
                return r;
            }
        }
        let layout = |counts, displs, ty, buf, name| parts(n, &handles::committed(ty)?, counts, displs, buf, name);
        let recv = layout(recvcounts, rdispls, recvtype, recvbuf, "recvbuf")?;
        let send =
            if is_in_place(sendbuf) { None } else { Some(layout(sendcounts, sdispls, sendtype, sendbuf, "sendbuf")?) };
        if c.remote.is_none() && sdispls.is_none() {
            // MPI_Alltoall: equal blocks, so the short path may take it
            let (me, b) = (c.rank, recv[0].bytes());
            if send.as_ref().is_some_and(|s| s[me].bytes() > b) {
                return err!(
                    Truncate,
                    "rank {me} sends {} bytes to each rank but expects {b}",
                    send.as_ref().map_or(0, |s| s[me].bytes())
                );
            }
            let (sbuf, rbuf) = (sendbuf as usize, recvbuf as usize);
            let short = |e: &mut crate::p2p::Engine, m: &shm::Members, stamp| {
                let whole = |parts: &[Part]| parts[0].ty.is_contiguous() && parts[0].bytes() == b;
                // the blocks in a row: the user's buffers when contiguous
                let direct_out = send.as_ref().filter(|s| whole(s));
                let mut out = Scratch::zeroed(if direct_out.is_some() { 0 } else { b * n });
                if direct_out.is_none() {
                    let (buf, parts) = send.as_ref().map_or((rbuf, &recv), |s| (sbuf, s));
                    for (r, l) in parts.iter().enumerate() {
                        out[r * b..r * b + l.bytes()].copy_from_slice(&l.pack(buf));
                    }
                }
                // SAFETY: contiguous blocks in a row at sendbuf.
                let out: &[u8] =
                    if direct_out.is_some() { unsafe { Block { addr: sbuf, len: b * n }.bytes() } } else { &out };
                if whole(&recv) {
                    // SAFETY: contiguous blocks in a row at recvbuf, apart from `out`.
                    let got = unsafe { Block { addr: rbuf, len: b * n }.bytes_mut() };
                    return shm::alltoall(e, m, stamp, out, got);
                }
                let mut got = Scratch::zeroed(b * n);
                let done = shm::alltoall(e, m, stamp, out, &mut got);
                for (r, l) in recv.iter().enumerate() {
                    unpacked(l.at(rbuf), &l.ty, &got[r * b..(r + 1) * b]);
                }
                done
            };
            if let Some(r) = mailbox_path(st, comm, how, shm::fits(b * n, Some((Pieces::Alltoall, n, 1))), short) {
                return r;
            }
        }
        alltoall_layouts(st, comm, how, sendbuf, send, recvbuf, recv, sdispls.is_some())
    })
}

collective! { comm;
    MPI_Alltoall / PMPI_Alltoall, MPI_Ialltoall / PMPI_Ialltoall, MPI_Alltoall_init / PMPI_Alltoall_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::One(sendcount.into()), None, sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Alltoall_c / PMPI_Alltoall_c, MPI_Ialltoall_c / PMPI_Ialltoall_c, MPI_Alltoall_init_c / PMPI_Alltoall_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::One(sendcount), None, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Alltoallv / PMPI_Alltoallv, MPI_Ialltoallv / PMPI_Ialltoallv, MPI_Alltoallv_init / PMPI_Alltoallv_init;
    (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::Int(sendcounts), Some(Arr::Int(sdispls)), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(rdispls)), recvtype, comm, how)
}

collective! { comm;
    MPI_Alltoallv_c / PMPI_Alltoallv_c, MPI_Ialltoallv_c / PMPI_Ialltoallv_c, MPI_Alltoallv_init_c / PMPI_Alltoallv_init_c;
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::Count(sendcounts), Some(Arr::Aint(sdispls)), sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(rdispls)), recvtype, comm, how)
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
    how: How,
) -> MpiResult<()> {
    with_state(|st| {
        let c = members(st, comm)?;
        no_in_place_between(&c, sendbuf, "sendbuf")?;
        let n = c.peers();
        let recv = wparts(n, recvcounts, rdispls, recvtypes, recvbuf, "recvbuf")?;
        let send = if is_in_place(sendbuf) {
            None
        } else {
            Some(wparts(n, sendcounts, sdispls, sendtypes, sendbuf, "sendbuf")?)
        };
        alltoall_layouts(st, comm, how, sendbuf, send, recvbuf, recv, true)
    })
}

collective! { comm;
    MPI_Alltoallw / PMPI_Alltoallw, MPI_Ialltoallw / PMPI_Ialltoallw, MPI_Alltoallw_init / PMPI_Alltoallw_init;
    (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const c_int, comm: c_int)
    |how| alltoallw_any(sendbuf, Arr::Int(sendcounts), Arr::Int(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Int(rdispls), recvtypes, comm, how)
}

collective! { comm;
    MPI_Alltoallw_c / PMPI_Alltoallw_c, MPI_Ialltoallw_c / PMPI_Ialltoallw_c, MPI_Alltoallw_init_c / PMPI_Alltoallw_init_c;
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const c_int, comm: c_int)
    |how| alltoallw_any(sendbuf, Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes, recvbuf, Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes, comm, how)
}
