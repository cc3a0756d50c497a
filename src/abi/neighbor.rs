//! Neighborhood collectives (MPI 4.0 §8.6) on Cartesian, graph and
//! distributed-graph communicators: each process exchanges blocks with its
//! neighbours only, blocking, nonblocking or persistent like the other
//! collectives (see `coll`).

use super::coll::{collective, intra, is_in_place, launch, parts, side, wparts, Agree, Arr, How, Part};
use super::{handles, mpi_fn, with_state};
use crate::coll::{algo, Block};
use crate::comm::topo::Neighbors;
use crate::err;
use crate::error::MpiResult;
use crate::runtime::State;
use std::os::raw::{c_int, c_void};

/// The neighbourhood of this process in `comm`'s topology.
fn neighbors(st: &State, comm: c_int) -> MpiResult<Neighbors> {
    let me = intra(st, comm)?.rank;
    match &handles::comm(st, comm)?.topo {
        Some(t) => Ok(t.neighbors(me)),
        None => err!(Topology, "neighborhood collectives need a communicator with a process topology (MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create...)"),
    }
}

fn not_in_place(sendbuf: *const c_void) -> MpiResult<()> {
    if is_in_place(sendbuf) {
        return err!(Buffer, "MPI_IN_PLACE is not allowed in neighborhood collectives");
    }
    Ok(())
}

/// Exchange `send` (one part per destination) and `recv` (one per source).
#[allow(clippy::too_many_arguments)]
fn exchange(
    st: &mut State,
    comm: c_int,
    how: How,
    nb: Neighbors,
    sendbuf: *const c_void,
    send: Vec<Part>,
    recvbuf: *mut c_void,
    recv: Vec<Part>,
) -> MpiResult<()> {
    let (sbuf, rbuf) = (sendbuf as usize, recvbuf as usize);
    launch(st, comm, how, Agree::new("a neighborhood collective", 0, 0), move |p| {
        let sends: Vec<Block> = send.iter().map(|l| l.source(p, sbuf)).collect();
        let recvs: Vec<Block> = recv.iter().map(|l| l.landing(p, rbuf)).collect();
        algo::neighbor_exchange(p, &nb.sources, &recvs, &nb.dests, &sends, &nb.send_order);
        for (l, b) in recv.iter().zip(recvs) {
            l.finish(p, rbuf, b);
        }
        Ok(())
    })
}

/// Neighbor_allgather(v): the same block to every destination.
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
        let nb = neighbors(st, comm)?;
        not_in_place(sendbuf)?;
        let one = side(sendcount, sendtype, sendbuf, "sendbuf")?;
        let recv = parts(nb.sources.len(), &handles::committed(recvtype)?, counts, displs, recvbuf, "recvbuf")?;
        let send = vec![one; nb.dests.len()];
        exchange(st, comm, how, nb, sendbuf, send, recvbuf, recv)
    })
}

/// Neighbor_alltoall(v): counts and displacements (in extents) per neighbour.
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
        let nb = neighbors(st, comm)?;
        not_in_place(sendbuf)?;
        let send = parts(nb.dests.len(), &handles::committed(sendtype)?, sendcounts, sdispls, sendbuf, "sendbuf")?;
        let recv = parts(nb.sources.len(), &handles::committed(recvtype)?, recvcounts, rdispls, recvbuf, "recvbuf")?;
        exchange(st, comm, how, nb, sendbuf, send, recvbuf, recv)
    })
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
        let nb = neighbors(st, comm)?;
        not_in_place(sendbuf)?;
        let send = wparts(nb.dests.len(), sendcounts, sdispls, sendtypes, sendbuf, "sendbuf")?;
        let recv = wparts(nb.sources.len(), recvcounts, rdispls, recvtypes, recvbuf, "recvbuf")?;
        exchange(st, comm, how, nb, sendbuf, send, recvbuf, recv)
    })
}

collective! { comm;
    MPI_Neighbor_allgather / PMPI_Neighbor_allgather, MPI_Ineighbor_allgather / PMPI_Ineighbor_allgather, MPI_Neighbor_allgather_init / PMPI_Neighbor_allgather_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount.into(), sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_allgather_c / PMPI_Neighbor_allgather_c, MPI_Ineighbor_allgather_c / PMPI_Ineighbor_allgather_c, MPI_Neighbor_allgather_init_c / PMPI_Neighbor_allgather_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_allgatherv / PMPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv / PMPI_Ineighbor_allgatherv, MPI_Neighbor_allgatherv_init / PMPI_Neighbor_allgatherv_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount.into(), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(displs)), recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_allgatherv_c / PMPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c / PMPI_Ineighbor_allgatherv_c, MPI_Neighbor_allgatherv_init_c / PMPI_Neighbor_allgatherv_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, displs: *const isize, recvtype: c_int, comm: c_int)
    |how| allgather_any(sendbuf, sendcount, sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(displs)), recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoall / PMPI_Neighbor_alltoall, MPI_Ineighbor_alltoall / PMPI_Ineighbor_alltoall, MPI_Neighbor_alltoall_init / PMPI_Neighbor_alltoall_init;
    (sendbuf: *const c_void, sendcount: c_int, sendtype: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::One(sendcount.into()), None, sendtype, recvbuf, Arr::One(recvcount.into()), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoall_c / PMPI_Neighbor_alltoall_c, MPI_Ineighbor_alltoall_c / PMPI_Ineighbor_alltoall_c, MPI_Neighbor_alltoall_init_c / PMPI_Neighbor_alltoall_init_c;
    (sendbuf: *const c_void, sendcount: i64, sendtype: c_int, recvbuf: *mut c_void, recvcount: i64, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::One(sendcount), None, sendtype, recvbuf, Arr::One(recvcount), None, recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoallv / PMPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv / PMPI_Ineighbor_alltoallv, MPI_Neighbor_alltoallv_init / PMPI_Neighbor_alltoallv_init;
    (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::Int(sendcounts), Some(Arr::Int(sdispls)), sendtype, recvbuf, Arr::Int(recvcounts), Some(Arr::Int(rdispls)), recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoallv_c / PMPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c / PMPI_Ineighbor_alltoallv_c, MPI_Neighbor_alltoallv_init_c / PMPI_Neighbor_alltoallv_init_c;
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtype: c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtype: c_int, comm: c_int)
    |how| alltoallv_any(sendbuf, Arr::Count(sendcounts), Some(Arr::Aint(sdispls)), sendtype, recvbuf, Arr::Count(recvcounts), Some(Arr::Aint(rdispls)), recvtype, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoallw / PMPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw / PMPI_Ineighbor_alltoallw, MPI_Neighbor_alltoallw_init / PMPI_Neighbor_alltoallw_init;
    (sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const isize, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const isize, recvtypes: *const c_int, comm: c_int)
    |how| alltoallw_any(sendbuf, Arr::Int(sendcounts), Arr::Aint(sdispls), sendtypes, recvbuf, Arr::Int(recvcounts), Arr::Aint(rdispls), recvtypes, comm, how)
}

collective! { comm;
    MPI_Neighbor_alltoallw_c / PMPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c / PMPI_Ineighbor_alltoallw_c, MPI_Neighbor_alltoallw_init_c / PMPI_Neighbor_alltoallw_init_c;
    (sendbuf: *const c_void, sendcounts: *const i64, sdispls: *const isize, sendtypes: *const c_int, recvbuf: *mut c_void, recvcounts: *const i64, rdispls: *const isize, recvtypes: *const c_int, comm: c_int)
    |how| alltoallw_any(sendbuf, Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes, recvbuf, Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes, comm, how)
}
