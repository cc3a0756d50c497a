//! Process topologies: Cartesian, graph and distributed graph
//! communicators and their queries (MPI 4.0 §8).

use super::comm::new_comm_from;
use super::handles;
use super::{mpi_fn, out, with_state};
use crate::comm::topo::{self, Topology};
use crate::err;
use crate::error::MpiResult;
use std::os::raw::c_int;

const UNDEFINED: c_int = -32766;
const PROC_NULL: c_int = -1;
const GRAPH: c_int = 1;
const CART: c_int = 2;
const DIST_GRAPH: c_int = 3;

/// # Safety
/// `p` holds `n` values when `n > 0`.
unsafe fn arr<T: Copy>(p: *const T, n: c_int, what: &str) -> MpiResult<Vec<T>> {
    if n < 0 {
        return err!(Arg, "{what}: count {n} is negative");
    }
    if n == 0 {
        return Ok(vec![]);
    }
    if p.is_null() {
        return err!(Arg, "{what} is a null pointer");
    }
    // SAFETY: per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec())
}

/// The Cartesian topology of `comm`, or MPI_ERR_TOPOLOGY.
fn cart(comm: c_int) -> MpiResult<(Vec<usize>, Vec<bool>, usize)> {
    with_state(|st| {
        let c = handles::comm(st, comm)?;
        match &c.topo {
            Some(Topology::Cart { dims, periods }) => Ok((dims.clone(), periods.clone(), c.rank)),
            _ => err!(Topology, "the communicator has no Cartesian topology (make it with MPI_Cart_create)"),
        }
    })
}

mpi_fn! {
    Initialized fn MPI_Cart_create / PMPI_Cart_create(comm_old: c_int, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, comm_cart: *mut c_int) errors(Some(comm_old)) {
        // SAFETY: `ndims` values per the standard.
        let (d, p) = unsafe { (arr(dims, ndims, "dims")?, arr(periods, ndims, "periods")?) };
        if d.iter().any(|&x| x <= 0) {
            return err!(Dims, "every dimension must be positive: {d:?}");
        }
        let n: usize = d.iter().map(|&x| x as usize).product();
        let size = with_state(|st| Ok(handles::comm(st, comm_old)?.size()))?;
        if n > size {
            return err!(Dims, "the grid {d:?} needs {n} processes; the communicator has {size}");
        }
        let topo = Topology::Cart { dims: d.iter().map(|&x| x as usize).collect(), periods: p.iter().map(|&x| x != 0).collect() };
        new_comm_from(comm_old, comm_cart, |rank| (rank < n).then_some(0), Some(topo))
    }
}

mpi_fn! {
    Initialized fn MPI_Cartdim_get / PMPI_Cartdim_get(comm: c_int, ndims: *mut c_int) errors(Some(comm)) {
        let (d, _, _) = cart(comm)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(ndims, "ndims", d.len() as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_get / PMPI_Cart_get(comm: c_int, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) errors(Some(comm)) {
        let (d, p, rank) = cart(comm)?;
        if (maxdims as usize) < d.len() || (!d.is_empty() && (dims.is_null() || periods.is_null() || coords.is_null())) {
            return err!(Arg, "maxdims {maxdims} is less than the {} dimensions, or an array is null", d.len());
        }
        let c = topo::cart_coords(&d, rank);
        // SAFETY: `maxdims >= ndims` entries per the standard.
        unsafe {
            for k in 0..d.len() {
                *dims.add(k) = d[k] as c_int;
                *periods.add(k) = p[k] as c_int;
                *coords.add(k) = c[k] as c_int;
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_rank / PMPI_Cart_rank(comm: c_int, coords: *const c_int, rank: *mut c_int) errors(Some(comm)) {
        let (d, p, _) = cart(comm)?;
        // SAFETY: ndims values per the standard.
        let c = unsafe { arr(coords, d.len() as c_int, "coords")? };
        let r = topo::cart_rank(&d, &p, &c.iter().map(|&x| x as i64).collect::<Vec<_>>())?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(rank, "rank", r as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_coords / PMPI_Cart_coords(comm: c_int, rank: c_int, maxdims: c_int, coords: *mut c_int) errors(Some(comm)) {
        let (d, _, _) = cart(comm)?;
        let n: usize = d.iter().product();
        if rank < 0 || rank as usize >= n {
            return err!(Rank, "rank {rank} is not in the grid (0..{})", n - 1);
        }
        if (maxdims as usize) < d.len() || (!d.is_empty() && coords.is_null()) {
            return err!(Arg, "maxdims {maxdims} is less than the {} dimensions", d.len());
        }
        // SAFETY: `maxdims` entries per the standard.
        for (k, c) in topo::cart_coords(&d, rank as usize).into_iter().enumerate() {
            unsafe { *coords.add(k) = c as c_int };
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_shift / PMPI_Cart_shift(comm: c_int, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) errors(Some(comm)) {
        let (d, p, rank) = cart(comm)?;
        if direction < 0 || direction as usize >= d.len() {
            return err!(Arg, "direction {direction} is not a dimension (0..{})", d.len() as i64 - 1);
        }
        let (s, t) = topo::cart_shift(&d, &p, rank, direction as usize, disp as i64);
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(rank_source, "rank_source", s.map_or(PROC_NULL, |x| x as c_int))?;
            out(rank_dest, "rank_dest", t.map_or(PROC_NULL, |x| x as c_int))
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_sub / PMPI_Cart_sub(comm: c_int, remain_dims: *const c_int, newcomm: *mut c_int) errors(Some(comm)) {
        let (d, p, rank) = cart(comm)?;
        // SAFETY: ndims values per the standard.
        let keep: Vec<bool> = unsafe { arr(remain_dims, d.len() as c_int, "remain_dims")? }.iter().map(|&x| x != 0).collect();
        let c = topo::cart_coords(&d, rank);
        // color: the coordinates in the dropped dimensions; key: position in the kept ones
        let mut color = 0usize;
        for k in 0..d.len() {
            if !keep[k] {
                color = color * d[k] + c[k];
            }
        }
        let dims: Vec<usize> = (0..d.len()).filter(|&k| keep[k]).map(|k| d[k]).collect();
        let periods: Vec<bool> = (0..d.len()).filter(|&k| keep[k]).map(|k| p[k]).collect();
        let topo = Topology::Cart { dims, periods };
        super::comm::split_with(comm, newcomm, color as c_int, rank as c_int, Some(topo))
    }
}

mpi_fn! {
    Initialized fn MPI_Cart_map / PMPI_Cart_map(comm: c_int, ndims: c_int, dims: *const c_int, _periods: *const c_int, newrank: *mut c_int) errors(Some(comm)) {
        // SAFETY: `ndims` values per the standard.
        let d = unsafe { arr(dims, ndims, "dims")? };
        let n: i64 = d.iter().map(|&x| x as i64).product();
        let rank = with_state(|st| Ok(handles::comm(st, comm)?.rank))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(newrank, "newrank", if (rank as i64) < n { rank as c_int } else { UNDEFINED }) }
    }
}

mpi_fn! {
    Initialized fn MPI_Dims_create / PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) errors(None) {
        if nnodes < 1 {
            return err!(Dims, "nnodes {nnodes} must be positive");
        }
        // SAFETY: `ndims` values per the standard.
        let d = unsafe { arr(dims as *const c_int, ndims, "dims")? };
        if d.iter().any(|&x| x < 0) {
            return err!(Dims, "dimensions must not be negative: {d:?}");
        }
        let mut u: Vec<usize> = d.iter().map(|&x| x as usize).collect();
        topo::dims_create(nnodes as usize, &mut u)?;
        // SAFETY: as above.
        for (k, v) in u.into_iter().enumerate() {
            unsafe { *dims.add(k) = v as c_int };
        }
        Ok(())
    }
}

fn graph(comm: c_int) -> MpiResult<(Vec<usize>, Vec<usize>, usize)> {
    with_state(|st| {
        let c = handles::comm(st, comm)?;
        match &c.topo {
            Some(Topology::Graph { index, edges }) => Ok((index.clone(), edges.clone(), c.rank)),
            _ => err!(Topology, "the communicator has no graph topology (make it with MPI_Graph_create)"),
        }
    })
}

mpi_fn! {
    Initialized fn MPI_Graph_create / PMPI_Graph_create(comm_old: c_int, nnodes: c_int, index: *const c_int, edges: *const c_int, _reorder: c_int, comm_graph: *mut c_int) errors(Some(comm_old)) {
        // SAFETY: `nnodes` index entries per the standard.
        let idx = unsafe { arr(index, nnodes, "index")? };
        let nedges = idx.last().copied().unwrap_or(0);
        // SAFETY: `index[nnodes-1]` edges per the standard.
        let e = unsafe { arr(edges, nedges, "edges")? };
        if idx.windows(2).any(|w| w[1] < w[0]) || e.iter().any(|&x| x < 0 || x >= nnodes) {
            return err!(Topology, "the graph's index must not decrease and every edge must name a node 0..{}", nnodes - 1);
        }
        let size = with_state(|st| Ok(handles::comm(st, comm_old)?.size()))?;
        if nnodes as usize > size {
            return err!(Arg, "the graph has {nnodes} nodes; the communicator only {size} processes");
        }
        let topo = Topology::Graph { index: idx.iter().map(|&x| x as usize).collect(), edges: e.iter().map(|&x| x as usize).collect() };
        new_comm_from(comm_old, comm_graph, |rank| (rank < nnodes as usize).then_some(0), Some(topo))
    }
}

mpi_fn! {
    Initialized fn MPI_Graphdims_get / PMPI_Graphdims_get(comm: c_int, nnodes: *mut c_int, nedges: *mut c_int) errors(Some(comm)) {
        let (index, edges, _) = graph(comm)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(nnodes, "nnodes", index.len() as c_int)?;
            out(nedges, "nedges", edges.len() as c_int)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Graph_get / PMPI_Graph_get(comm: c_int, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) errors(Some(comm)) {
        let (ix, ed, _) = graph(comm)?;
        if (maxindex as usize) < ix.len() || (maxedges as usize) < ed.len() {
            return err!(Arg, "arrays too small: the graph has {} nodes and {} edges", ix.len(), ed.len());
        }
        // SAFETY: sizes checked against the caller's max counts.
        unsafe {
            for (k, &v) in ix.iter().enumerate() {
                *index.add(k) = v as c_int;
            }
            for (k, &v) in ed.iter().enumerate() {
                *edges.add(k) = v as c_int;
            }
        }
        Ok(())
    }
}

fn node_neighbors(comm: c_int, rank: c_int) -> MpiResult<Vec<usize>> {
    let (ix, ed, _) = graph(comm)?;
    if rank < 0 || rank as usize >= ix.len() {
        return err!(Rank, "rank {rank} is not a node of the graph (0..{})", ix.len() as i64 - 1);
    }
    Ok(topo::graph_neighbors(&ix, &ed, rank as usize))
}

mpi_fn! {
    Initialized fn MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count(comm: c_int, rank: c_int, nneighbors: *mut c_int) errors(Some(comm)) {
        let n = node_neighbors(comm, rank)?.len();
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(nneighbors, "nneighbors", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Graph_neighbors / PMPI_Graph_neighbors(comm: c_int, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) errors(Some(comm)) {
        let n = node_neighbors(comm, rank)?;
        if (maxneighbors as usize) < n.len() {
            return err!(Arg, "maxneighbors {maxneighbors} is less than the {} neighbours", n.len());
        }
        // SAFETY: `maxneighbors` entries per the standard.
        for (k, &v) in n.iter().enumerate() {
            unsafe { *neighbors.add(k) = v as c_int };
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Graph_map / PMPI_Graph_map(comm: c_int, nnodes: c_int, _index: *const c_int, _edges: *const c_int, newrank: *mut c_int) errors(Some(comm)) {
        let rank = with_state(|st| Ok(handles::comm(st, comm)?.rank))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(newrank, "newrank", if (rank as c_int) < nnodes { rank as c_int } else { UNDEFINED }) }
    }
}

/// Weights given by the caller, or None for MPI_UNWEIGHTED.
/// MPI_WEIGHTS_EMPTY is the weights of no edges: the graph is weighted
/// (MPI_Dist_graph_neighbors_count says so), this process has none.
///
/// # Safety
/// `w` is one of the sentinels or holds `n` ints.
unsafe fn weights(w: *const c_int, n: c_int) -> MpiResult<Option<Vec<i32>>> {
    let unweighted = super::data::MPI_UNWEIGHTED.0 as *const c_int;
    let empty = super::data::MPI_WEIGHTS_EMPTY.0 as *const c_int;
    if w == unweighted {
        return Ok(None);
    }
    if w == empty {
        if n != 0 {
            return err!(Arg, "MPI_WEIGHTS_EMPTY stands for the weights of no edges, but there are {n}");
        }
        return Ok(Some(vec![]));
    }
    // SAFETY: per the caller's contract.
    Ok(Some(unsafe { arr(w, n, "weights")? }))
}

fn dist_graph_topo(sources: Vec<usize>, sw: Option<Vec<i32>>, dests: Vec<usize>, dw: Option<Vec<i32>>) -> Topology {
    let weighted = sw.is_some() || dw.is_some();
    let (ns, nd) = (sources.len(), dests.len());
    Topology::DistGraph {
        sources,
        source_weights: sw.unwrap_or(vec![1; ns]),
        dests,
        dest_weights: dw.unwrap_or(vec![1; nd]),
        weighted,
    }
}

mpi_fn! {
    Initialized fn MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent(comm_old: c_int, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, _info: c_int, _reorder: c_int, comm_dist_graph: *mut c_int) errors(Some(comm_old)) {
        // SAFETY: arrays of the given degrees per the standard.
        let (s, sw, d, dw) = unsafe { (arr(sources, indegree, "sources")?, weights(sourceweights, indegree)?, arr(destinations, outdegree, "destinations")?, weights(destweights, outdegree)?) };
        let size = with_state(|st| Ok(handles::comm(st, comm_old)?.size()))? as c_int;
        if s.iter().chain(&d).any(|&x| x < 0 || x >= size) {
            return err!(Rank, "a neighbour rank is outside the communicator (0..{})", size - 1);
        }
        let topo = dist_graph_topo(s.iter().map(|&x| x as usize).collect(), sw, d.iter().map(|&x| x as usize).collect(), dw);
        new_comm_from(comm_old, comm_dist_graph, |_| Some(0), Some(topo))
    }
}

mpi_fn! {
    Initialized fn MPI_Dist_graph_create / PMPI_Dist_graph_create(comm_old: c_int, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_in: *const c_int, _info: c_int, _reorder: c_int, comm_dist_graph: *mut c_int) errors(Some(comm_old)) {
        // SAFETY: `n` sources and degrees per the standard.
        let (src, deg) = unsafe { (arr(sources, n, "sources")?, arr(degrees, n, "degrees")?) };
        let total: c_int = deg.iter().sum();
        // SAFETY: `sum(degrees)` destinations and weights per the standard.
        let (dst, w) = unsafe { (arr(destinations, total, "destinations")?, weights(weights_in, total)?) };
        // Every edge this process names goes to everyone, as (src, dst, w).
        let mut mine = Vec::new();
        let mut k = 0;
        for (i, &s) in src.iter().enumerate() {
            for _ in 0..deg[i] {
                for v in [s, dst[k], w.as_ref().map_or(1, |w| w[k])] {
                    mine.extend(v.to_ne_bytes());
                }
                k += 1;
            }
        }
        let (all, me) = with_state(|st| {
            let c = handles::comm(st, comm_old)?.clone();
            Ok((crate::coll::allgatherv_bytes(&mut st.engine, &c, &mine)?, c.rank as c_int))
        })?;
        let (mut s_in, mut w_in, mut d_out, mut w_out) = (vec![], vec![], vec![], vec![]);
        for part in &all {
            for e in part.chunks(12) {
                let f = |i: usize| c_int::from_ne_bytes(e[i..i + 4].try_into().unwrap());
                let (s, d, wt) = (f(0), f(4), f(8));
                if d == me {
                    s_in.push(s as usize);
                    w_in.push(wt);
                }
                if s == me {
                    d_out.push(d as usize);
                    w_out.push(wt);
                }
            }
        }
        let weighted = w.is_some();
        let topo = Topology::DistGraph { sources: s_in, source_weights: w_in, dests: d_out, dest_weights: w_out, weighted };
        new_comm_from(comm_old, comm_dist_graph, |_| Some(0), Some(topo))
    }
}

/// A distributed graph's sources, their weights, destinations, their
/// weights, and whether it was given weights.
type DistGraph = (Vec<usize>, Vec<i32>, Vec<usize>, Vec<i32>, bool);

fn dist(comm: c_int) -> MpiResult<DistGraph> {
    with_state(|st| match &handles::comm(st, comm)?.topo {
        Some(Topology::DistGraph { sources, source_weights, dests, dest_weights, weighted }) => {
            Ok((sources.clone(), source_weights.clone(), dests.clone(), dest_weights.clone(), *weighted))
        }
        _ => err!(Topology, "the communicator has no distributed graph topology"),
    })
}

mpi_fn! {
    Initialized fn MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count(comm: c_int, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) errors(Some(comm)) {
        let (s, _, d, _, w) = dist(comm)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(indegree, "indegree", s.len() as c_int)?;
            out(outdegree, "outdegree", d.len() as c_int)?;
            out(weighted, "weighted", w as c_int)
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors(comm: c_int, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) errors(Some(comm)) {
        let (s, sw, d, dw, weighted) = dist(comm)?;
        if (maxindegree as usize) < s.len() || (maxoutdegree as usize) < d.len() {
            return err!(Arg, "arrays too small for {} sources and {} destinations", s.len(), d.len());
        }
        let unweighted = super::data::MPI_UNWEIGHTED.0 as *mut c_int;
        // SAFETY: sizes checked against the caller's max degrees.
        unsafe {
            for k in 0..s.len() {
                *sources.add(k) = s[k] as c_int;
                if weighted && sourceweights != unweighted && !sourceweights.is_null() {
                    *sourceweights.add(k) = sw[k];
                }
            }
            for k in 0..d.len() {
                *destinations.add(k) = d[k] as c_int;
                if weighted && destweights != unweighted && !destweights.is_null() {
                    *destweights.add(k) = dw[k];
                }
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Topo_test / PMPI_Topo_test(comm: c_int, status: *mut c_int) errors(Some(comm)) {
        let t = with_state(|st| {
            Ok(match handles::comm(st, comm)?.topo {
                Some(Topology::Cart { .. }) => CART,
                Some(Topology::Graph { .. }) => GRAPH,
                Some(Topology::DistGraph { .. }) => DIST_GRAPH,
                None => UNDEFINED,
            })
        })?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(status, "status", t) }
    }
}
