/* oxmpi-test: ranks=1,2,3,4
 * Every neighborhood collective every way: allgather, allgatherv,
 * alltoall, alltoallv and alltoallw, blocking (MPI_Neighbor_x), nonblocking
 * (MPI_Ineighbor_x) and persistent (MPI_Neighbor_x_init, started twice),
 * with int counts and with MPI_Count counts and MPI_Aint displacements
 * (the _c variants), on a periodic ring (at 1 and 2 ranks both neighbours
 * are one process), a non-periodic 2-D grid (MPI_PROC_NULL neighbours
 * leave their blocks alone) and a 2-D slab periodic in its second
 * dimension, of size 1 (each rank its own neighbour twice there); each
 * checked against values computed here.
 *
 * Where both neighbours of a dimension are one process, what it sent up
 * arrives as from below (MPI 4.0 Annex B.1.1, mpi-forum/mpi-issues#153).
 * MPICH 4.0.2's Neighbor_alltoallv/w pair them the other way (fixed in
 * pmodels/mpich#7945); on the reference MPI (OXMPI_TEST_REFERENCE=1) those
 * cases are left out. */
#include "common.h"

/* MPI_<x><c>, MPI_<ix><c> or MPI_<x>_init<c> (THREE_WAYS); <c> is empty or _c */
#define WAY(mode, x, ix, c, ...) THREE_WAYS(mode, MPI_##x##c, MPI_##ix##c, MPI_##x##_init##c, __VA_ARGS__)

#define MAXN 4 /* neighbours: two per dimension */
static int rank;

/* what rank `from` sends to its k-th neighbour, item i */
static int code(int from, int k, int i) { return 1000 * from + 10 * k + i + 1; }

/* Every operation six ways on the Cartesian communicator `c` with `n`
 * neighbours nb[] (below, then above, in each dimension). Block k goes to
 * neighbour k, which takes it as its block k ^ 1 (what is sent up arrives
 * from below). */
static void every_way(MPI_Comm c, int n, const int *nb, const char *what)
{
    int twice = 0; /* a neighbour is the same process both ways */
    for (int k = 0; k < n; k += 2) twice |= nb[k] != MPI_PROC_NULL && nb[k] == nb[k + 1];
    int v_paired = !(twice && getenv("OXMPI_TEST_REFERENCE"));
    int ic[MAXN], id[MAXN], two[MAXN], twod[MAXN], rtwod[MAXN];
    MPI_Count cc[MAXN], ctwo[MAXN];
    MPI_Aint ad[MAXN], atwod[MAXN], artwod[MAXN], wsd[MAXN], wrd[MAXN];
    MPI_Datatype tys[MAXN];
    for (int k = 0; k < n; k++) {
        /* one int from each, in reversed places; two ints each way */
        ic[k] = 1, id[k] = n - 1 - k;
        two[k] = 2, twod[k] = 2 * k, rtwod[k] = 2 * (n - 1 - k);
        cc[k] = 1, ad[k] = id[k];
        ctwo[k] = 2, atwod[k] = twod[k], artwod[k] = rtwod[k];
        wsd[k] = (MPI_Aint)twod[k] * sizeof(int), wrd[k] = (MPI_Aint)rtwod[k] * sizeof(int);
        tys[k] = MPI_INT;
    }
    int s[2 * MAXN], r[2 * MAXN], bad;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 2; i++) s[2 * k + i] = code(rank, k, i);
#define RESET() for (int i = 0; i < 2 * MAXN; i++) r[i] = -1
    /* rb[at(k) + i] is item i from neighbour k, or -1 from MPI_PROC_NULL */
#define EXPECT(op, at, items, want)                                                          \
    do {                                                                                     \
        bad = 0;                                                                             \
        for (int k = 0; k < n; k++)                                                          \
            for (int i = 0; i < (items); i++)                                                \
                bad += r[(at) + i] != (nb[k] == MPI_PROC_NULL ? -1 : (want));                \
        CHECK(bad == 0, "%s %s %s%s: %d wrong", what, way_name(mode), op, wide ? "_c" : "", bad); \
    } while (0)

    for (int mode = BLOCKING; mode <= PERSISTENT; mode++)
        for (int wide = 0; wide < 2; wide++) {
            RESET();
            if (wide)
                WAY(mode, Neighbor_allgather, Ineighbor_allgather, _c, &rank, 1, MPI_INT, r, 1, MPI_INT, c);
            else
                WAY(mode, Neighbor_allgather, Ineighbor_allgather, , &rank, 1, MPI_INT, r, 1, MPI_INT, c);
            EXPECT("allgather", k, 1, nb[k]);

            RESET();
            if (wide)
                WAY(mode, Neighbor_allgatherv, Ineighbor_allgatherv, _c, &rank, 1, MPI_INT, r, cc, ad, MPI_INT, c);
            else
                WAY(mode, Neighbor_allgatherv, Ineighbor_allgatherv, , &rank, 1, MPI_INT, r, ic, id, MPI_INT, c);
            EXPECT("allgatherv", n - 1 - k, 1, nb[k]);

            RESET();
            if (wide)
                WAY(mode, Neighbor_alltoall, Ineighbor_alltoall, _c, s, 2, MPI_INT, r, 2, MPI_INT, c);
            else
                WAY(mode, Neighbor_alltoall, Ineighbor_alltoall, , s, 2, MPI_INT, r, 2, MPI_INT, c);
            EXPECT("alltoall", 2 * k, 2, code(nb[k], k ^ 1, i));

            RESET();
            if (wide)
                WAY(mode, Neighbor_alltoallv, Ineighbor_alltoallv, _c, s, ctwo, atwod, MPI_INT, r, ctwo, artwod,
                    MPI_INT, c);
            else
                WAY(mode, Neighbor_alltoallv, Ineighbor_alltoallv, , s, two, twod, MPI_INT, r, two, rtwod, MPI_INT,
                    c);
            if (v_paired)
                EXPECT("alltoallv", 2 * (n - 1 - k), 2, code(nb[k], k ^ 1, i));

            RESET();
            if (wide)
                WAY(mode, Neighbor_alltoallw, Ineighbor_alltoallw, _c, s, ctwo, wsd, tys, r, ctwo, wrd, tys, c);
            else
                WAY(mode, Neighbor_alltoallw, Ineighbor_alltoallw, , s, two, wsd, tys, r, two, wrd, tys, c);
            if (v_paired)
                EXPECT("alltoallw", 2 * (n - 1 - k), 2, code(nb[k], k ^ 1, i));
        }
}

/* every_way on a new Cartesian communicator of `ndims` (at most 2) */
static void on_cart(int ndims, int *dims, int *periods, const char *what)
{
    MPI_Comm c;
    int nb[MAXN];
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c);
    for (int d = 0; d < ndims; d++) MPI_Cart_shift(c, d, 1, &nb[2 * d], &nb[2 * d + 1]);
    every_way(c, 2 * ndims, nb, what);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int ring[] = {size}, ring_periods[] = {1};
    on_cart(1, ring, ring_periods, "ring");
    int grid[2] = {0, 0}, grid_periods[] = {0, 0};
    MPI_Dims_create(size, 2, grid);
    on_cart(2, grid, grid_periods, "grid");
    int slab[] = {size, 1}, slab_periods[] = {0, 1};
    on_cart(2, slab, slab_periods, "slab");
    return finish();
}
