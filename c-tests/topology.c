/* oxmpi-test: ranks=1,2,3,4
 * Cartesian, graph and distributed-graph topologies: creation, queries,
 * shifts (with a halo exchange along them), sub-grids, MPI_Dims_create,
 * Topo_test, topology kept by MPI_Comm_dup, and bad input. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims %d x %d", dims[0], dims[1]);
    MPI_Comm cart, cart2;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int t, nd, r, coords[2], gd[2], gp[2], gc[2];
    MPI_Topo_test(cart, &t);
    CHECK(t == MPI_CART, "topo_test %d", t);
    MPI_Cartdim_get(cart, &nd);
    MPI_Comm_rank(cart, &r);
    MPI_Cart_coords(cart, r, 2, coords);
    CHECK(nd == 2 && coords[0] == r / dims[1] && coords[1] == r % dims[1], "coords (%d,%d)", coords[0], coords[1]);
    MPI_Cart_get(cart, 2, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gp[1] == 0 && gc[1] == coords[1], "cart_get");
    int back;
    MPI_Cart_rank(cart, coords, &back);
    CHECK(back == r, "cart_rank %d", back);
    int wrapped[2] = {coords[0] + dims[0], coords[1]};
    MPI_Cart_rank(cart, wrapped, &back);
    CHECK(back == r, "periodic dimension wraps: %d", back);

    /* a halo exchange along dimension 0 (periodic) and 1 (not) */
    int src, dst, got = -1;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    MPI_Sendrecv(&r, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);
    CHECK(got == src, "periodic shift received %d from %d", got, src);
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    CHECK((coords[1] == 0) == (src == MPI_PROC_NULL) && (coords[1] == dims[1] - 1) == (dst == MPI_PROC_NULL), "edges give MPI_PROC_NULL");
    got = -7;
    MPI_Sendrecv(&r, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE);
    CHECK(src == MPI_PROC_NULL ? got == -7 : got == src, "non-periodic shift");

    /* sub-grids: rows */
    MPI_Comm row;
    int remain[2] = {0, 1}, rs;
    MPI_Cart_sub(cart, remain, &row);
    MPI_Comm_size(row, &rs);
    MPI_Cartdim_get(row, &nd);
    CHECK(rs == dims[1] && nd == 1, "row size %d ndims %d", rs, nd);
    int rowsum = 0;
    MPI_Allreduce(&r, &rowsum, 1, MPI_INT, MPI_SUM, row);
    int erow = 0;
    for (int k = 0; k < dims[1]; k++) erow += coords[0] * dims[1] + k;
    CHECK(rowsum == erow, "row sum %d, expected %d", rowsum, erow);
    MPI_Comm_free(&row);

    MPI_Comm_dup(cart, &cart2);
    MPI_Topo_test(cart2, &t);
    CHECK(t == MPI_CART, "dup keeps the topology");
    MPI_Comm_free(&cart2);
    int newrank;
    MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank);
    CHECK(newrank == rank, "cart_map %d", newrank);

    /* a ring graph */
    int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
    for (int k = 0; k < size; k++) {
        index[k] = 2 * (k + 1);
        edges[2 * k] = (k + size - 1) % size;
        edges[2 * k + 1] = (k + 1) % size;
    }
    MPI_Comm ring;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
    MPI_Topo_test(ring, &t);
    int nn, ne, cnt, nb[2];
    MPI_Graphdims_get(ring, &nn, &ne);
    MPI_Graph_neighbors_count(ring, rank, &cnt);
    MPI_Graph_neighbors(ring, rank, 2, nb);
    CHECK(t == MPI_GRAPH && nn == size && ne == 2 * size && cnt == 2 && nb[1] == (rank + 1) % size, "graph queries");
    int gi[64], ge[128];
    MPI_Graph_get(ring, size, 2 * size, gi, ge);
    CHECK(gi[size - 1] == 2 * size && ge[1] == 1 % size, "graph_get");
    MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &newrank);
    CHECK(newrank == rank, "graph_map");
    MPI_Comm_free(&ring);

    /* distributed graphs: each rank names its right neighbour; weighted */
    MPI_Comm dg, dga;
    int right = (rank + 1) % size, left = (rank + size - 1) % size, w = 10 + rank;
    int one = 1;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, &w, MPI_INFO_NULL, 0, &dg);
    int indeg, outdeg, weighted, s_in[8], sw[8], d_out[8], dw[8];
    MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && weighted, "dist graph counts %d %d %d", indeg, outdeg, weighted);
    MPI_Dist_graph_neighbors(dg, 8, s_in, sw, 8, d_out, dw);
    CHECK(s_in[0] == left && sw[0] == 10 + left && d_out[0] == right && dw[0] == 10 + rank, "dist graph neighbours");
    MPI_Topo_test(dg, &t);
    CHECK(t == MPI_DIST_GRAPH, "dist graph topo_test");
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dga);
    MPI_Dist_graph_neighbors_count(dga, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "adjacent dist graph");
    MPI_Comm_free(&dg);
    MPI_Comm_free(&dga);
    /* no edges, weighted all the same (MPI_WEIGHTS_EMPTY), both ways */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dga);
    MPI_Dist_graph_neighbors_count(dga, &indeg, &outdeg, &weighted);
    CHECK(indeg == 0 && outdeg == 0 && weighted, "adjacent, MPI_WEIGHTS_EMPTY: %d %d weighted %d", indeg, outdeg, weighted);
    MPI_Comm_free(&dga);
    MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dga);
    MPI_Dist_graph_neighbors_count(dga, &indeg, &outdeg, &weighted);
    CHECK(indeg == 0 && outdeg == 0 && weighted, "MPI_WEIGHTS_EMPTY: %d %d weighted %d", indeg, outdeg, weighted);
    MPI_Comm_free(&dga);

    /* bad input */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc, cls;
#define EXPECT(call, c) do { rc = (call); MPI_Error_class(rc, &cls); CHECK(cls == (c), "%s gave class %d, expected %d", #call, cls, c); } while (0)
    int bad[2] = {3, 0};
    EXPECT(MPI_Dims_create(10, 2, bad), MPI_ERR_DIMS);
    int toobig[2] = {size + 1, 1};
    MPI_Comm none;
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, toobig, periods, 0, &none), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    MPI_Topo_test(MPI_COMM_WORLD, &t);
    CHECK(t == MPI_UNDEFINED, "world has no topology");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&cart);
    free(index);
    free(edges);
    return finish();
}
