//! Process topologies (MPI 4.0 §8): Cartesian grids, graphs and
//! distributed graphs attached to a communicator, and the arithmetic on
//! them (coordinates, shifts, balanced dimensions).

use crate::err;
use crate::error::MpiResult;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart {
        dims: Vec<usize>,
        periods: Vec<bool>,
    },
    /// MPI_Graph_create's arrays: `index[i]` is the end of node i's edges.
    Graph {
        index: Vec<usize>,
        edges: Vec<usize>,
    },
    /// This process's neighbours with their weights (None: unweighted).
    DistGraph {
        sources: Vec<usize>,
        source_weights: Vec<i32>,
        dests: Vec<usize>,
        dest_weights: Vec<i32>,
        weighted: bool,
    },
}

/// Row-major coordinates of `rank` in a grid of `dims`.
pub fn cart_coords(dims: &[usize], rank: usize) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    let mut r = rank;
    for d in (0..dims.len()).rev() {
        c[d] = r % dims[d];
        r /= dims[d];
    }
    c
}

/// The rank at `coords` (wrapped in periodic dimensions).
pub fn cart_rank(dims: &[usize], periods: &[bool], coords: &[i64]) -> MpiResult<usize> {
    let mut r = 0usize;
    for d in 0..dims.len() {
        let n = dims[d] as i64;
        let mut c = coords[d];
        if periods[d] {
            c = c.rem_euclid(n);
        } else if c < 0 || c >= n {
            return err!(Rank, "coordinate {c} is outside dimension {d} (0..{}), which is not periodic", n - 1);
        }
        r = r * dims[d] + c as usize;
    }
    Ok(r)
}

/// MPI_Cart_shift: (source, destination) of a shift by `disp` along
/// `dir`; None where a non-periodic edge is crossed (MPI_PROC_NULL).
pub fn cart_shift(
    dims: &[usize],
    periods: &[bool],
    rank: usize,
    dir: usize,
    disp: i64,
) -> (Option<usize>, Option<usize>) {
    let me: Vec<i64> = cart_coords(dims, rank).into_iter().map(|x| x as i64).collect();
    let at = |delta: i64| {
        let mut c = me.clone();
        c[dir] += delta;
        cart_rank(dims, periods, &c).ok()
    };
    (at(-disp), at(disp))
}

/// MPI_Dims_create: fill the zero entries of `dims` so their product with
/// the given ones is `nnodes`, as balanced as possible, non-increasing.
pub fn dims_create(nnodes: usize, dims: &mut [usize]) -> MpiResult<()> {
    let fixed: usize = dims.iter().filter(|&&d| d > 0).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if fixed == 0 || !nnodes.is_multiple_of(fixed) {
        return err!(Dims, "{nnodes} processes cannot be split over the fixed dimensions {dims:?}");
    }
    let left = nnodes / fixed;
    if free == 0 {
        if left != 1 {
            return err!(Dims, "the dimensions {dims:?} multiply to {fixed}, not {nnodes}");
        }
        return Ok(());
    }
    let mut it = balanced(left, free).into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free dimension");
    }
    Ok(())
}

/// The `k` factors of `n`, largest first, as close to each other as
/// possible (MPI 4.0 §8.5.2): the least spread between the largest and
/// the smallest; among equal spreads, the largest smallest factor, then
/// the largest next one, and so on. That tie-break is MPICH's, whose test
/// suite pins its answers down (72 in 2 dimensions: 9 x 8, not 12 x 6;
/// 228072 in 3: 86 x 52 x 51, not 78 x 68 x 43). An exhaustive search
/// over the non-increasing factorizations, cut short where the spread
/// can only grow.
fn balanced(n: usize, k: usize) -> Vec<usize> {
    let mut divisors: Vec<usize> =
        (1..).take_while(|d| d * d <= n).filter(|d| n.is_multiple_of(*d)).flat_map(|d| [d, n / d]).collect();
    divisors.sort_unstable_by(|a, b| b.cmp(a));
    divisors.dedup();
    // `a` better than `b` (both non-increasing, of length k)
    let better = |a: &[usize], b: &[usize]| {
        let spread = |t: &[usize]| t[0] - t[t.len() - 1];
        spread(a) < spread(b) || (spread(a) == spread(b) && a.iter().rev().gt(b.iter().rev()))
    };
    struct Search<'a, F> {
        divisors: &'a [usize],
        better: F,
        best: Option<Vec<usize>>,
        cur: Vec<usize>,
    }
    impl<F: Fn(&[usize], &[usize]) -> bool> Search<'_, F> {
        /// The rest: `k` factors of `n`, none above `hi`.
        fn go(&mut self, n: usize, k: usize, hi: usize) {
            if k == 1 {
                if n <= hi {
                    self.cur.push(n);
                    if self.best.as_ref().is_none_or(|b| (self.better)(&self.cur, b)) {
                        self.best = Some(self.cur.clone());
                    }
                    self.cur.pop();
                }
                return;
            }
            for i in 0..self.divisors.len() {
                let d = self.divisors[i];
                if d > hi || !n.is_multiple_of(d) {
                    continue;
                }
                // the largest of the rest: below the k-th root, the others
                // cannot make up n; and the spread only grows from here
                if d.checked_pow(k as u32).is_some_and(|p| p < n) {
                    break;
                }
                let top = self.cur.first().copied().unwrap_or(d);
                if self.best.as_ref().is_some_and(|b| top - d > b[0] - b[b.len() - 1]) {
                    break;
                }
                self.cur.push(d);
                self.go(n / d, k - 1, d);
                self.cur.pop();
            }
        }
    }
    let mut s = Search { divisors: &divisors, better, best: None, cur: Vec::with_capacity(k) };
    s.go(n, k, n);
    s.best.expect("n, 1, 1, ... always factors n")
}

/// The neighbours of `node` in a graph topology.
pub fn graph_neighbors(index: &[usize], edges: &[usize], node: usize) -> Vec<usize> {
    let start = if node == 0 { 0 } else { index[node - 1] };
    edges[start..index[node]].to_vec()
}

/// Where a neighborhood collective's blocks go and come from (MPI 4.0
/// §8.6): `sources[k]` fills receive block k, `dests[k]` gets send block k
/// (None: MPI_PROC_NULL, no transfer).
pub struct Neighbors {
    pub sources: Vec<Option<usize>>,
    pub dests: Vec<Option<usize>>,
    /// The order to post the sends in. Messages between two processes
    /// match in the order they are posted, so this order pairs each send
    /// with the right receive: in a Cartesian dimension the block sent up
    /// (+1) is the one the upper neighbour receives from below, so the
    /// sends of a dimension go up first, while receives go below first
    /// (this matters when both neighbours are one process: periodic
    /// dimensions of size 1 or 2). Other topologies pair edges in list
    /// order.
    pub send_order: Vec<usize>,
}

impl Topology {
    pub fn neighbors(&self, rank: usize) -> Neighbors {
        match self {
            Topology::Cart { dims, periods } => {
                let mut both = Vec::with_capacity(2 * dims.len());
                for d in 0..dims.len() {
                    let (down, up) = cart_shift(dims, periods, rank, d, 1);
                    both.extend([down, up]);
                }
                let send_order = (0..dims.len()).flat_map(|d| [2 * d + 1, 2 * d]).collect();
                Neighbors { sources: both.clone(), dests: both, send_order }
            }
            Topology::Graph { index, edges } => {
                let n: Vec<Option<usize>> = graph_neighbors(index, edges, rank).into_iter().map(Some).collect();
                Neighbors { send_order: (0..n.len()).collect(), sources: n.clone(), dests: n }
            }
            Topology::DistGraph { sources, dests, .. } => Neighbors {
                sources: sources.iter().map(|&r| Some(r)).collect(),
                dests: dests.iter().map(|&r| Some(r)).collect(),
                send_order: (0..dests.len()).collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cartesian_neighbors_pair_up_and_down() {
        // a periodic ring of 2: both neighbours are the other process
        let t = Topology::Cart { dims: vec![2], periods: vec![true] };
        let n = t.neighbors(0);
        assert_eq!(n.sources, vec![Some(1), Some(1)]);
        assert_eq!(n.send_order, vec![1, 0]);
        // a non-periodic 2x3 grid, corner 0: no one below in either dimension
        let t = Topology::Cart { dims: vec![2, 3], periods: vec![false, false] };
        let n = t.neighbors(0);
        assert_eq!(n.sources, vec![None, Some(3), None, Some(1)]);
        assert_eq!(n.dests, n.sources);
    }

    #[test]
    fn coordinates_and_shifts() {
        let dims = [2, 3];
        assert_eq!(cart_coords(&dims, 4), vec![1, 1]);
        assert_eq!(cart_rank(&dims, &[false, true], &[1, 4]).unwrap(), 4);
        assert!(cart_rank(&dims, &[false, true], &[2, 0]).is_err());
        assert_eq!(cart_shift(&dims, &[false, true], 0, 1, 1), (Some(2), Some(1)));
        assert_eq!(cart_shift(&dims, &[false, true], 0, 0, 1), (None, Some(3)));
    }

    #[test]
    fn dims_are_balanced_and_respect_fixed_entries() {
        let mut d = [0, 0];
        dims_create(6, &mut d).unwrap();
        assert_eq!(d, [3, 2]);
        let mut d = [0, 0, 0];
        dims_create(8, &mut d).unwrap();
        assert_eq!(d, [2, 2, 2]);
        let mut d = [0, 3, 0];
        dims_create(12, &mut d).unwrap();
        assert_eq!(d, [2, 3, 2]);
        let mut d = [0, 0];
        dims_create(7, &mut d).unwrap();
        assert_eq!(d, [7, 1]);
        // balanced, not greedy; ties as MPICH breaks them
        for (n, want) in [
            (72, vec![9, 8]),
            (228072, vec![86, 52, 51]),
            (712656, vec![101, 14, 9, 8, 7]),
            (117936, vec![14, 13, 9, 9, 8]),
            (1, vec![1, 1, 1]),
            (13, vec![13, 1, 1, 1]),
        ] {
            let mut d = vec![0; want.len()];
            dims_create(n, &mut d).unwrap();
            assert_eq!(d, want, "{n} in {} dimensions", want.len());
        }
        assert!(dims_create(10, &mut [3, 0]).is_err());
        assert!(dims_create(4, &mut [3, 1]).is_err());
    }

    #[test]
    fn graph_neighbours_from_index_arrays() {
        let index = [2, 3, 4];
        let edges = [1, 2, 0, 0];
        assert_eq!(graph_neighbors(&index, &edges, 0), vec![1, 2]);
        assert_eq!(graph_neighbors(&index, &edges, 2), vec![0]);
    }
}
