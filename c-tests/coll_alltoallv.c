/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SHM_COLL_MAX=100;OXMPI_SHM_COLL_MAX=0
 * Alltoallv and Alltoallw with blocks of mixed sizes: rank s sends rank r
 * a block whose size depends on both, from none to 100000 ints, so that
 * on one host some travel inside a rank's shared-memory publication and
 * others as messages beside it, in any mix. Every block is checked, in
 * place too (symmetric counts), into a resized type that spreads the ints
 * out (gaps untouched), and with Alltoallw's per-rank types; a block
 * larger than its receiver's room is MPI_ERR_TRUNCATE there. All of it
 * on the world and on the world in reverse rank order (up to 8 ranks of
 * the whole world, a rank's blocks for the others that fit 40 bytes with a
 * byte a rank go on its arrival line, the others' in their mailboxes:
 * scales 0 and 3 mix the two from 3 ranks on). At one scale
 * all of rank 0's blocks are one size and the other ranks' are not (a
 * rank must not pick an algorithm for equal blocks on its own). Variants: at
 * most 100 bytes of blocks in a publication, and none (the point-to-point
 * algorithms). */
#include "common.h"

static int rank, size;
static MPI_Comm comm; /* the world, or the world in reverse order */

/* items rank s sends rank r at scale k (symmetric when `sym`) */
static int items(int s, int r, int k, int sym)
{
    int a = sym && s > r ? r : s, b = sym && s > r ? s : r;
    int small = (a * 7 + b * 3) % 5; /* 0..4 */
    switch (k) {
    case 0: return small;
    case 1: return (a + b) % 2 ? 1500 + small : small; /* 6 KB or a few bytes */
    case 2: return (a + 2 * b) % 3 ? 100000 + small : 40 + small;
    default: return a == 0 || b == 0 ? 1 : 2; /* rank 0's blocks all alike, the others' not */
    }
}

static int val(int s, int r, int i) { return s * 1000003 + r * 1009 + i; }

/* The ints wrong in an Alltoallw's result: odd ranks' blocks came through
 * the spreading type (every `stride`th int), the others' packed. */
static int w_wrong(const int *rb, const int *rc, const int *rd, int stride)
{
    int bad = 0;
    for (int r = 0; r < size; r++) {
        int w = r % 2 ? stride : 1;
        for (int i = 0; i < rc[r]; i++) bad += rb[rd[r] * stride + w * i] != val(r, rank, i);
    }
    return bad;
}

static void run(int k, int sym, int spread)
{
    int sc[64], sd[64], rc[64], rd[64], st = 0, rt = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = items(rank, r, k, sym);
        sd[r] = st;
        st += sc[r] + 1;
        rc[r] = items(r, rank, k, sym);
        rd[r] = rt;
        rt += rc[r] + 1; /* one int of gap after each block */
    }
    int *sb = malloc((st + 1) * sizeof(int)), *rb = malloc((2 * rt + 1) * sizeof(int));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < sc[r]; i++) sb[sd[r] + i] = val(rank, r, i);
    int stride = spread ? 2 : 1;
    for (int i = 0; i < 2 * rt; i++) rb[i] = -5;
    MPI_Datatype rt_ = MPI_INT;
    if (spread) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &rt_);
        MPI_Type_commit(&rt_);
    }
    const char *how = sym ? "in place" : spread ? "into a resized type" : "plain";
    if (sym) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < rc[r]; i++) rb[rd[r] + i] = val(rank, r, i);
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, comm);
    } else {
        MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, rt_, comm);
    }
    int bad = 0;
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < rc[r]; i++) bad += rb[stride * (rd[r] + i)] != val(r, rank, i);
        for (int i = 0; i < rc[r] * stride; i++)
            if (stride == 2 && i % 2) bad += rb[2 * rd[r] + i] != -5;
        bad += rb[stride * (rd[r] + rc[r])] != -5;
    }
    CHECK(bad == 0, "alltoallv at scale %d %s: %d wrong", k, how, bad);
    if (!sym) {
        /* Alltoallw: displacements in bytes, a type per rank */
        int sdb[64], rdb[64];
        MPI_Datatype sts[64], rts[64];
        for (int r = 0; r < size; r++) {
            sdb[r] = sd[r] * (int)sizeof(int);
            rdb[r] = rd[r] * stride * (int)sizeof(int);
            sts[r] = MPI_INT;
            rts[r] = r % 2 ? rt_ : MPI_INT;
        }
        for (int i = 0; i < 2 * rt; i++) rb[i] = -5;
        MPI_Alltoallw(sb, sc, sdb, sts, rb, rc, rdb, rts, comm);
        bad = w_wrong(rb, rc, rd, stride);
        CHECK(bad == 0, "alltoallw at scale %d %s: %d wrong", k, how, bad);
        /* again by MPI_Alltoallw_c from MPI_BOTTOM, the displacements
         * absolute addresses (MPI_Aint, as the large-count form takes) */
        MPI_Count scc[64], rcc[64];
        MPI_Aint sab[64], rab[64], s0, r0;
        MPI_Get_address(sb, &s0);
        MPI_Get_address(rb, &r0);
        for (int r = 0; r < size; r++) {
            scc[r] = sc[r], rcc[r] = rc[r];
            sab[r] = MPI_Aint_add(s0, sdb[r]);
            rab[r] = MPI_Aint_add(r0, rdb[r]);
        }
        for (int i = 0; i < 2 * rt; i++) rb[i] = -5;
        MPI_Alltoallw_c(MPI_BOTTOM, scc, sab, sts, MPI_BOTTOM, rcc, rab, rts, comm);
        bad = w_wrong(rb, rc, rd, stride);
        CHECK(bad == 0, "alltoallw_c from MPI_BOTTOM at scale %d %s: %d wrong", k, how, bad);
    }
    if (spread)
        MPI_Type_free(&rt_);
    free(sb);
    free(rb);
}

/* Rank 0 expects half of what rank 1 sends it (a few ints, in the
 * publication, then thousands, as a message): MPI_ERR_TRUNCATE there,
 * success elsewhere, and the next Alltoallv works. */
static void truncated(void)
{
    if (size < 2)
        return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int big = 0; big < 2; big++) {
        int k = big ? 5000 : 2, sc[64], sd[64], rc[64], rd[64];
        for (int r = 0; r < size; r++) {
            sc[r] = k;
            sd[r] = r * k;
            rc[r] = rank == 0 && r == 1 ? k / 2 : k;
            rd[r] = r * k;
        }
        int *sb = calloc((size_t)size * k, sizeof(int)), *rb = calloc((size_t)size * k, sizeof(int));
        int e = MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD), cls;
        MPI_Error_class(e, &cls);
        CHECK(rank == 0 ? cls == MPI_ERR_TRUNCATE : e == MPI_SUCCESS, "alltoallv of %d ints where rank 0 takes %d from rank 1: error class %d", k, k / 2, cls);
        free(sb);
        free(rb);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    run(0, 0, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
    for (int pass = 0; pass < 2; pass++) {
        comm = pass ? reversed : MPI_COMM_WORLD;
        MPI_Comm_rank(comm, &rank);
        for (int k = 0; k < 4; k++)
            for (int rep = 0; rep < 3; rep++) {
                run(k, 0, 0);
                run(k, 1, 0);
                run(k, 0, 1);
            }
    }
    MPI_Comm_free(&reversed);
    comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    truncated();
    return finish();
}
