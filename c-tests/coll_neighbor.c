/* oxmpi-test: ranks=1,2,3,4
 * Neighborhood collectives (allgather(v), alltoall(v/w)), blocking,
 * nonblocking and persistent, on a periodic ring (where at 1 and 2 ranks
 * both neighbours are one process, so the up/down pairing shows), a
 * non-periodic 2-D grid (MPI_PROC_NULL edges leave their blocks alone), a
 * graph with repeated edges and a distributed graph; then bad input. */
#include "common.h"

static int rank, size;

/* what rank `from` sends to its k-th destination */
static int code(int from, int k) { return 1000 * from + k + 1; }

/* MPI_Neighbor_alltoall three ways (0 blocking, 1 nonblocking, 2 persistent) */
static void alltoall_mode(int mode, const int *s, int *r, MPI_Comm c)
{
    MPI_Request q;
    if (mode == 0) {
        MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c);
    } else if (mode == 1) {
        MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
        MPI_Neighbor_alltoall_init(s, 1, MPI_INT, r, 1, MPI_INT, c, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        MPI_Request_free(&q);
    }
}

static void ring(void)
{
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    int down = (rank + size - 1) % size, up = (rank + 1) % size;
    int got[2] = {-1, -1};
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c);
    CHECK(got[0] == down && got[1] == up, "ring allgather: %d %d", got[0], got[1]);
    /* block 0 goes down, block 1 up; what comes from below was sent up */
    int s[2] = {code(rank, 0), code(rank, 1)};
    for (int mode = 0; mode < 3; mode++) {
        int r[2] = {-1, -1};
        alltoall_mode(mode, s, r, c);
        CHECK(r[0] == code(down, 1) && r[1] == code(up, 0), "ring alltoall mode %d: %d %d", mode, r[0], r[1]);
    }
    MPI_Comm_free(&c);
}

static void grid(void)
{
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    MPI_Cart_coords(c, rank, 2, coords);
    int nb[4];
    MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]);
    /* allgatherv into reversed places: block k at displacement 3 - k */
    int cnt[4] = {1, 1, 1, 1}, dis[4] = {3, 2, 1, 0}, got[4] = {-1, -1, -1, -1};
    MPI_Request q;
    MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, got, cnt, dis, MPI_INT, c, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int k = 0; k < 4; k++)
        CHECK(got[3 - k] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k]), "grid allgatherv block %d: %d (neighbour %d)", k,
              got[3 - k], nb[k]);
    /* alltoallv: k + 1 ints come from neighbour k, which sends them from
     * its slot k ^ 1 (the block sent up arrives from below) */
    int sc[4], sd[4], rc[4], rd[4], sb[10], rb[10];
    for (int k = 0, at = 0; k < 4; at += rc[k], k++) rc[k] = k + 1, rd[k] = at;
    for (int k = 0, at = 0; k < 4; at += sc[k], k++) sc[k] = rc[k ^ 1], sd[k] = at;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < sc[k]; i++) sb[sd[k] + i] = code(rank, k) * 10 + i;
    for (int i = 0; i < 10; i++) rb[i] = -1;
    MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c);
    int bad = 0;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < rc[k]; i++) {
            int want = nb[k] == MPI_PROC_NULL ? -1 : code(nb[k], k ^ 1) * 10 + i;
            bad += rb[rd[k] + i] != want;
        }
    CHECK(bad == 0, "grid alltoallv: %d wrong", bad);
    MPI_Comm_free(&c);
}

/* Graph: rank r's neighbours are r+1, r-1, r+1, r-1 (mod size): edges
 * repeat, and at 1 and 2 ranks all four are one process; repeated edges
 * pair in list order. */
static void graph(void)
{
    int *index = malloc(size * sizeof(int)), *edges = malloc(4 * size * sizeof(int));
    for (int r = 0; r < size; r++) {
        index[r] = 4 * (r + 1);
        for (int k = 0; k < 4; k++) edges[4 * r + k] = k % 2 ? (r + size - 1) % size : (r + 1) % size;
    }
    MPI_Comm c;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c);
    int s[4], r[4] = {-1, -1, -1, -1};
    for (int k = 0; k < 4; k++) s[k] = code(rank, k);
    MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c);
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        int from = edges[4 * rank + k], j = 0, kk = -1;
        for (int i = 0; i < k; i++) j += edges[4 * rank + i] == from; /* occurrence of `from` in my list */
        for (int i = 0, seen = 0; i < 4; i++)                         /* its j-th edge to me */
            if (edges[4 * from + i] == rank && seen++ == j) {
                kk = i;
                break;
            }
        bad += r[k] != code(from, kk);
    }
    /* MPICH 4.0.2 (the reference) pairs repeated edges in reverse; MPI 4.1
     * section 8.6 posts receives in list order (fixed in MPICH by
     * pmodels/mpich#7945), so the check is ours alone */
    CHECK(bad == 0 || getenv("OXMPI_TEST_REFERENCE"), "graph alltoall with repeated edges: %d %d %d %d", r[0], r[1], r[2], r[3]);
    MPI_Comm_free(&c);
    free(index), free(edges);
}

/* Distributed graph: receive from r-1 and r-2, send to r+1 and r+2; the
 * second block through a derived type (alltoallw). */
static void dist_graph(void)
{
    int src[2] = {(rank + size - 1) % size, (rank + 2 * size - 2) % size};
    int dst[2] = {(rank + 1) % size, (rank + 2) % size};
    MPI_Comm c;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &c);
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair); /* ints 0 and 2 of 3 */
    MPI_Type_commit(&pair);
    int sb[5] = {code(rank, 0), code(rank, 1), -9, code(rank, 1) + 7, 0};
    int rb[5] = {-1, -1, -1, -1, -1};
    int sc[2] = {1, 1}, rc[2] = {1, 1};
    MPI_Aint sd[2] = {0, sizeof(int)}, rd[2] = {0, 2 * sizeof(int)};
    MPI_Datatype st[2] = {MPI_INT, pair}, rt[2] = {MPI_INT, pair};
    /* mode 3: from MPI_BOTTOM, the displacements absolute addresses */
    MPI_Aint sa[2], ra[2];
    MPI_Get_address(sb, &sa[0]);
    MPI_Get_address(rb, &ra[0]);
    sa[1] = MPI_Aint_add(sa[0], sd[1]);
    ra[1] = MPI_Aint_add(ra[0], rd[1]);
    for (int mode = 0; mode < 4; mode++) {
        for (int i = 0; i < 5; i++) rb[i] = -1;
        MPI_Request q;
        if (mode == 3)
            CHECK(MPI_Neighbor_alltoallw(MPI_BOTTOM, sc, sa, st, MPI_BOTTOM, rc, ra, rt, c) == MPI_SUCCESS,
                  "neighbor alltoallw from MPI_BOTTOM");
        else if (mode == 0)
            MPI_Neighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c);
        else if (mode == 1) {
            MPI_Ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, c, MPI_INFO_NULL, &q);
            MPI_Start(&q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            MPI_Request_free(&q);
        }
        /* block 0 from r-1 (its block 0); block 1 from r-2 (its pair) at ints 2 and 4 */
        CHECK(rb[0] == code(src[0], 0) && rb[1] == -1 && rb[2] == code(src[1], 1) && rb[3] == -1 &&
                  rb[4] == code(src[1], 1) + 7,
              "dist graph alltoallw mode %d: %d %d %d %d %d", mode, rb[0], rb[1], rb[2], rb[3], rb[4]);
    }
    /* persistent allgather started twice with new data */
    int mine, got[2];
    MPI_Request q;
    MPI_Neighbor_allgather_init(&mine, 1, MPI_INT, got, 1, MPI_INT, c, MPI_INFO_NULL, &q);
    for (int round = 0; round < 2; round++) {
        mine = code(rank, round);
        got[0] = got[1] = -1;
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK(got[0] == code(src[0], round) && got[1] == code(src[1], round), "persistent allgather round %d: %d %d",
              round, got[0], got[1]);
    }
    MPI_Request_free(&q);
    MPI_Type_free(&pair);
    MPI_Comm_free(&c);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, y[8], cls, e;
    e = MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "neighbor allgather without a topology: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    e = MPI_Neighbor_alltoall(&x, -1, MPI_INT, y, 1, MPI_INT, c);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COUNT, "neighbor alltoall with count -1: class %d", cls);
    e = MPI_Neighbor_alltoall(&x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, c);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "neighbor alltoall with MPI_DATATYPE_NULL: class %d", cls);
    /* a null buffer with displacement 0 is no address, MPI_BOTTOM or not */
    int ones[2] = {1, 1};
    MPI_Aint zeros[2] = {0, 0};
    MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
    e = MPI_Neighbor_alltoallw(NULL, ones, zeros, ints, y, ones, zeros, ints, c);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "neighbor alltoallw from a null buffer at displacement 0: class %d", cls);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring();
    grid();
    graph();
    dist_graph();
    errors();
    return finish();
}
