/* oxmpi-test: ranks=1,2,3,4
 * The MPI 4 large-count (_c) collectives, MPI_Count counts and MPI_Aint
 * displacements, each checked against values computed here, run three
 * ways: blocking (MPI_X_c), nonblocking (MPI_IX_c) and persistent
 * (MPI_X_init_c, started twice). On the reference MPI
 * (OXMPI_TEST_REFERENCE=1) the persistent ones run at 1 and 2 ranks only:
 * MPICH 4.0.2's persistent Scatter fails its second start on 3 and 4 ranks
 * ("Invalid communicator" from MPI_Wait; pmodels/mpich#7550). */
#include "common.h"

/* MPI_<x>_c, MPI_<ix>_c or MPI_<x>_init_c (THREE_WAYS) */
#define COLL(mode, x, ix, ...) THREE_WAYS(mode, MPI_##x##_c, MPI_##ix##_c, MPI_##x##_init_c, __VA_ARGS__)

#define K 3 /* items per rank */
static int val(int r, int i) { return 1000 * r + i + 1; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm w = MPI_COMM_WORLD;
    int n = size * K, bad;
    int *mine = malloc(n * sizeof(int)), *all = malloc(n * sizeof(int)), *exp = malloc(n * sizeof(int));
    MPI_Count *cnt = malloc(size * sizeof(MPI_Count));
    MPI_Aint *dsp = malloc(size * sizeof(MPI_Aint)), *bdsp = malloc(size * sizeof(MPI_Aint));
    MPI_Datatype *tys = malloc(size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) {
        cnt[r] = K; dsp[r] = (MPI_Aint)r * K; bdsp[r] = dsp[r] * (MPI_Aint)sizeof(int); tys[r] = MPI_INT;
    }
#define FILL(a, f) for (int i = 0; i < n; i++) (a)[i] = (f)
#define SAME(a, b, what) do { bad = 0; for (int i = 0; i < n; i++) bad += (a)[i] != (b)[i]; \
        CHECK(bad == 0, "%s %s: %d wrong", way_name(mode), what, bad); } while (0)

    int loc[K] = {1, 2, 3}, acc[K] = {10, 20, 30};
    MPI_Reduce_local_c(loc, acc, K, MPI_INT, MPI_SUM);
    CHECK(acc[0] == 11 && acc[1] == 22 && acc[2] == 33, "Reduce_local_c");

    int modes = getenv("OXMPI_TEST_REFERENCE") && size > 2 ? NONBLOCKING : PERSISTENT;
    for (int mode = BLOCKING; mode <= modes; mode++) {
        FILL(all, rank == 1 % size ? val(9, i) : 0);
        COLL(mode, Bcast, Ibcast, all, n, MPI_INT, 1 % size, w);
        FILL(exp, val(9, i));
        SAME(all, exp, "Bcast_c");

        FILL(mine, val(rank, i));
        FILL(exp, 0);
        for (int r = 0; r < size; r++) for (int i = 0; i < n; i++) exp[i] += val(r, i);
        FILL(all, 0);
        COLL(mode, Reduce, Ireduce, mine, all, n, MPI_INT, MPI_SUM, 0, w);
        if (rank == 0) SAME(all, exp, "Reduce_c");
        COLL(mode, Allreduce, Iallreduce, mine, all, n, MPI_INT, MPI_SUM, w);
        SAME(all, exp, "Allreduce_c");
        /* rooted and all-gather: rank r's block is val(r, 0..K) */
        int blk[K];
        for (int i = 0; i < K; i++) blk[i] = val(rank, i);
        for (int r = 0; r < size; r++) for (int i = 0; i < K; i++) exp[r * K + i] = val(r, i);
        FILL(all, -1);
        COLL(mode, Gather, Igather, blk, K, MPI_INT, all, K, MPI_INT, size - 1, w);
        if (rank == size - 1) SAME(all, exp, "Gather_c");
        FILL(all, -1);
        COLL(mode, Gatherv, Igatherv, blk, K, MPI_INT, all, cnt, dsp, MPI_INT, 0, w);
        if (rank == 0) SAME(all, exp, "Gatherv_c");
        FILL(all, -1);
        COLL(mode, Allgather, Iallgather, blk, K, MPI_INT, all, K, MPI_INT, w);
        SAME(all, exp, "Allgather_c");
        FILL(all, -1);
        COLL(mode, Allgatherv, Iallgatherv, blk, K, MPI_INT, all, cnt, dsp, MPI_INT, w);
        SAME(all, exp, "Allgatherv_c");
        int got[K];
        COLL(mode, Scatter, Iscatter, exp, K, MPI_INT, got, K, MPI_INT, 0, w);
        bad = 0;
        for (int i = 0; i < K; i++) bad += got[i] != val(rank, i);
        CHECK(bad == 0, "%s Scatter_c", way_name(mode));
        memset(got, 0, sizeof got);
        COLL(mode, Scatterv, Iscatterv, exp, cnt, dsp, MPI_INT, got, K, MPI_INT, size - 1, w);
        bad = 0;
        for (int i = 0; i < K; i++) bad += got[i] != val(rank, i);
        CHECK(bad == 0, "%s Scatterv_c", way_name(mode));

        /* all-to-all: block r of rank s is val(s, 10 * r + i) */
        for (int r = 0; r < size; r++) for (int i = 0; i < K; i++) {
            mine[r * K + i] = val(rank, 10 * r + i);
            exp[r * K + i] = val(r, 10 * rank + i);
        }
        FILL(all, -1);
        COLL(mode, Alltoall, Ialltoall, mine, K, MPI_INT, all, K, MPI_INT, w);
        SAME(all, exp, "Alltoall_c");
        FILL(all, -1);
        COLL(mode, Alltoallv, Ialltoallv, mine, cnt, dsp, MPI_INT, all, cnt, dsp, MPI_INT, w);
        SAME(all, exp, "Alltoallv_c");
        FILL(all, -1);
        COLL(mode, Alltoallw, Ialltoallw, mine, cnt, bdsp, tys, all, cnt, bdsp, tys, w);
        SAME(all, exp, "Alltoallw_c");

        /* prefix and reduce-scatter with MAX over val(r, i): rank-increasing */
        FILL(mine, val(rank, i));
        COLL(mode, Scan, Iscan, mine, all, n, MPI_INT, MPI_MAX, w);
        FILL(exp, val(rank, i));
        SAME(all, exp, "Scan_c");
        COLL(mode, Exscan, Iexscan, mine, all, n, MPI_INT, MPI_MAX, w);
        FILL(exp, val(rank - 1, i));
        if (rank > 0) SAME(all, exp, "Exscan_c");
        COLL(mode, Reduce_scatter_block, Ireduce_scatter_block, mine, got, K, MPI_INT, MPI_MAX, w);
        bad = 0;
        for (int i = 0; i < K; i++) bad += got[i] != val(size - 1, rank * K + i);
        CHECK(bad == 0, "%s Reduce_scatter_block_c", way_name(mode));
        memset(got, 0, sizeof got);
        COLL(mode, Reduce_scatter, Ireduce_scatter, mine, got, cnt, MPI_INT, MPI_MAX, w);
        bad = 0;
        for (int i = 0; i < K; i++) bad += got[i] != val(size - 1, rank * K + i);
        CHECK(bad == 0, "%s Reduce_scatter_c", way_name(mode));
    }

    /* a negative MPI_Count is MPI_ERR_COUNT */
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int cls, e = MPI_Bcast_c(all, -1, MPI_INT, 0, w);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COUNT, "Bcast_c count -1: class %d", cls);
    free(mine); free(all); free(exp); free(cnt); free(dsp); free(bdsp); free(tys);
    return finish();
}
