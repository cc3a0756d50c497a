/* oxmpi-test: ranks=2,3,4 variants=OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_ALLREDUCE=rabenseifner,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_BARRIER=dissemination;OXMPI_COLL_BCAST=binomial,OXMPI_COLL_ALLREDUCE=reduce_bcast,OXMPI_COLL_ALLGATHER=ring,OXMPI_COLL_ALLTOALL=pairwise,OXMPI_SHM_COLL_MAX=0,OXMPI_COLL_BARRIER=linear
 * Collectives on an intercommunicator between the even and the odd world
 * ranks (groups of different sizes at 3 ranks): Barrier, Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v/w), Reduce, Allreduce,
 * Reduce_scatter(_block), every root in both groups with MPI_ROOT and
 * MPI_PROC_NULL, blocking and nonblocking (and one persistent), checked
 * against values computed here; then what intercommunicators refuse. */
#include "common.h"

static int wrank, wsize, color, lrank, lsize, rsize;
static MPI_Comm ic;

/* value of local rank r of group g at position i */
static int val(int g, int r, int i) { return g * 1000000 + r * 1000 + i + 1; }

/* Run blocking (nb 0) or nonblocking + wait (nb 1). */
#define RUN(nb, b, i, ...)                                                   \
    do {                                                                     \
        if (nb) {                                                            \
            MPI_Request q_;                                                  \
            CHECK(MPI_##i(__VA_ARGS__, &q_) == MPI_SUCCESS, #i);             \
            MPI_Wait(&q_, MPI_STATUS_IGNORE);                                \
        } else {                                                             \
            CHECK(MPI_##b(__VA_ARGS__) == MPI_SUCCESS, #b);                  \
        }                                                                    \
    } while (0)

static void rooted(int nb, int n)
{
    int other = 1 - color;
    int *buf = malloc((n + 1) * sizeof(int)), *all = malloc(((size_t)n * rsize + 1) * sizeof(int));
    int *cnt = malloc(rsize * sizeof(int)), *dis = malloc(rsize * sizeof(int));
    for (int r = 0; r < rsize; r++) cnt[r] = n, dis[r] = (rsize - 1 - r) * n;
    for (int g = 0; g < 2; g++)
        for (int root = 0; root < (g == color ? lsize : rsize); root++) {
            /* the root is local rank `root` of group g */
            int arg = g == color ? (lrank == root ? MPI_ROOT : MPI_PROC_NULL) : root;
            int am_root = arg == MPI_ROOT, bad = 0;
            /* Bcast: the root's data reaches the other group only */
            for (int i = 0; i < n; i++) buf[i] = am_root ? val(g, root, i) : -1;
            RUN(nb, Bcast, Ibcast, buf, n, MPI_INT, arg, ic);
            for (int i = 0; i < n; i++) bad += buf[i] != (g == color && !am_root ? -1 : val(g, root, i));
            CHECK(bad == 0, "bcast %d root %d of group %d: %d wrong", n, root, g, bad);
            /* Gather and Gatherv (reversed) at the root from the other group */
            for (int i = 0; i < n; i++) buf[i] = val(color, lrank, i);
            for (size_t i = 0; i < (size_t)n * rsize; i++) all[i] = -1;
            RUN(nb, Gather, Igather, buf, n, MPI_INT, all, n, MPI_INT, arg, ic);
            for (int r = 0; r < rsize && am_root; r++)
                for (int i = 0; i < n; i++) bad += all[r * n + i] != val(other, r, i);
            CHECK(bad == 0, "gather %d root %d of group %d: %d wrong", n, root, g, bad);
            for (size_t i = 0; i < (size_t)n * rsize; i++) all[i] = -1;
            RUN(nb, Gatherv, Igatherv, buf, n, MPI_INT, all, cnt, dis, MPI_INT, arg, ic);
            for (int r = 0; r < rsize && am_root; r++)
                for (int i = 0; i < n; i++) bad += all[(rsize - 1 - r) * n + i] != val(other, r, i);
            CHECK(bad == 0, "gatherv %d root %d of group %d: %d wrong", n, root, g, bad);
            /* Scatter(v): block r of the root to remote rank r */
            for (int r = 0; r < rsize && am_root; r++)
                for (int i = 0; i < n; i++) all[r * n + i] = val(color, r, i) + 7;
            for (int i = 0; i < n; i++) buf[i] = -1;
            RUN(nb, Scatter, Iscatter, all, n, MPI_INT, buf, n, MPI_INT, arg, ic);
            for (int i = 0; i < n && g != color; i++) bad += buf[i] != val(g, lrank, i) + 7;
            CHECK(bad == 0, "scatter %d root %d of group %d: %d wrong", n, root, g, bad);
            for (int r = 0; r < rsize && am_root; r++)
                for (int i = 0; i < n; i++) all[(rsize - 1 - r) * n + i] = val(color, r, i) + 9;
            for (int i = 0; i < n; i++) buf[i] = -1;
            RUN(nb, Scatterv, Iscatterv, all, cnt, dis, MPI_INT, buf, n, MPI_INT, arg, ic);
            for (int i = 0; i < n && g != color; i++) bad += buf[i] != val(g, lrank, i) + 9;
            CHECK(bad == 0, "scatterv %d root %d of group %d: %d wrong", n, root, g, bad);
            /* Reduce: the root gets the other group's sum */
            for (int i = 0; i < n; i++) buf[i] = val(color, lrank, i);
            for (size_t i = 0; i < (size_t)n; i++) all[i] = -1;
            RUN(nb, Reduce, Ireduce, buf, all, n, MPI_INT, MPI_SUM, arg, ic);
            for (int i = 0; i < n && am_root; i++) {
                int want = 0;
                for (int r = 0; r < rsize; r++) want += val(other, r, i);
                bad += all[i] != want;
            }
            CHECK(bad == 0, "reduce %d root %d of group %d: %d wrong", n, root, g, bad);
        }
    free(buf), free(all), free(cnt), free(dis);
}

/* At an MPI_PROC_NULL root only the root argument is significant (MPI
 * 4.0 §6.4, §6.9.1): the idle processes pass null buffers, count 0,
 * MPI_BYTE and MPI_MAX (an operator MPI_BYTE has not), as mpi4py does,
 * once MPI_IN_PLACE as a Reduce's sendbuf, and the rooted collectives
 * still run and deliver. */
static void idle_args(void)
{
    int n = 3, other = 1 - color;
    int buf[3], all[3 * 4], sum[3];
    for (int g = 0; g < 2; g++) {
        int arg = g == color ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int idle = arg == MPI_PROC_NULL, am_root = arg == MPI_ROOT, bad = 0;
        for (int i = 0; i < n; i++) buf[i] = am_root ? val(g, 0, i) : val(color, lrank, i);
        if (idle)
            CHECK(MPI_Bcast(NULL, 0, MPI_BYTE, arg, ic) == MPI_SUCCESS, "idle bcast");
        else
            CHECK(MPI_Bcast(buf, n, MPI_INT, arg, ic) == MPI_SUCCESS, "bcast");
        for (int i = 0; i < n && g != color; i++) bad += buf[i] != val(g, 0, i);
        for (int i = 0; i < n; i++) buf[i] = val(color, lrank, i);
        if (idle)
            CHECK(MPI_Gather(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, arg, ic) == MPI_SUCCESS, "idle gather");
        else
            CHECK(MPI_Gather(buf, n, MPI_INT, all, n, MPI_INT, arg, ic) == MPI_SUCCESS, "gather");
        for (int r = 0; r < rsize && am_root; r++)
            for (int i = 0; i < n; i++) bad += all[r * n + i] != val(other, r, i);
        if (idle)
            CHECK(MPI_Scatter(NULL, 0, MPI_BYTE, NULL, 0, MPI_BYTE, arg, ic) == MPI_SUCCESS, "idle scatter");
        else
            CHECK(MPI_Scatter(all, n, MPI_INT, sum, n, MPI_INT, arg, ic) == MPI_SUCCESS, "scatter");
        for (int i = 0; i < n && g != color; i++) bad += sum[i] != val(color, lrank, i);
        if (idle) /* (even MPI_IN_PLACE, not allowed where it counts) */
            CHECK(MPI_Reduce(g ? MPI_IN_PLACE : NULL, NULL, 0, MPI_BYTE, MPI_MAX, arg, ic) == MPI_SUCCESS, "idle reduce");
        else
            CHECK(MPI_Reduce(buf, sum, n, MPI_INT, MPI_MAX, arg, ic) == MPI_SUCCESS, "reduce");
        for (int i = 0; i < n && am_root; i++) bad += sum[i] != val(other, rsize - 1, i);
        CHECK(bad == 0, "rooted collectives with idle arguments, root in group %d: %d wrong", g, bad);
    }
}

static void everyone(int nb, int n)
{
    int other = 1 - color, bad = 0;
    size_t tot = (size_t)n * rsize + 1;
    int *mine = malloc((n + 1) * sizeof(int)), *all = malloc(tot * sizeof(int)), *out = malloc(tot * sizeof(int));
    int *cnt = malloc(rsize * sizeof(int)), *dis = malloc(rsize * sizeof(int)), *bdis = malloc(rsize * sizeof(int));
    MPI_Datatype *types = malloc(rsize * sizeof(MPI_Datatype));
    for (int r = 0; r < rsize; r++) cnt[r] = n, dis[r] = r * n, bdis[r] = r * n * (int)sizeof(int), types[r] = MPI_INT;
    for (int i = 0; i < n; i++) mine[i] = val(color, lrank, i);
    RUN(nb, Barrier, Ibarrier, ic);
    /* Allgather(v): the other group's blocks */
    for (size_t i = 0; i < tot; i++) out[i] = -1;
    RUN(nb, Allgather, Iallgather, mine, n, MPI_INT, out, n, MPI_INT, ic);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) bad += out[r * n + i] != val(other, r, i);
    for (size_t i = 0; i < tot; i++) out[i] = -1;
    RUN(nb, Allgatherv, Iallgatherv, mine, n, MPI_INT, out, cnt, dis, MPI_INT, ic);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) bad += out[r * n + i] != val(other, r, i);
    CHECK(bad == 0, "allgather(v) %d: %d wrong", n, bad);
    /* Alltoall(v/w): block r to remote rank r, tagged with both ranks */
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) all[r * n + i] = val(color, lrank, i) + 10 * r;
    for (size_t i = 0; i < tot; i++) out[i] = -1;
    RUN(nb, Alltoall, Ialltoall, all, n, MPI_INT, out, n, MPI_INT, ic);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) bad += out[r * n + i] != val(other, r, i) + 10 * lrank;
    for (size_t i = 0; i < tot; i++) out[i] = -1;
    RUN(nb, Alltoallv, Ialltoallv, all, cnt, dis, MPI_INT, out, cnt, dis, MPI_INT, ic);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) bad += out[r * n + i] != val(other, r, i) + 10 * lrank;
    for (size_t i = 0; i < tot; i++) out[i] = -1;
    RUN(nb, Alltoallw, Ialltoallw, all, cnt, bdis, types, out, cnt, bdis, types, ic);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < n; i++) bad += out[r * n + i] != val(other, r, i) + 10 * lrank;
    CHECK(bad == 0, "alltoall(v/w) %d: %d wrong", n, bad);
    /* Allreduce: the other group's sum */
    for (int i = 0; i < n; i++) out[i] = -1;
    RUN(nb, Allreduce, Iallreduce, mine, out, n, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < rsize; r++) want += val(other, r, i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "allreduce %d: %d wrong", n, bad);
    free(mine), free(all), free(out), free(cnt), free(dis), free(bdis), free(types);
}

/* Reduce_scatter(_block): both groups reduce vectors of one length, each
 * group's result is spread over the other. */
static void reduce_scatter(int nb, int k)
{
    int other = 1 - color, count = lsize * rsize * k, bad = 0;
    int *in = malloc((count + 1) * sizeof(int)), *out = malloc((count + 1) * sizeof(int));
    int *rc = malloc(lsize * sizeof(int));
    for (int i = 0; i < count; i++) in[i] = val(color, lrank, i);
    int block = count / lsize, first = lrank * block;
    for (int i = 0; i < block; i++) out[i] = -1;
    RUN(nb, Reduce_scatter_block, Ireduce_scatter_block, in, out, block, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < block; i++) {
        int want = 0;
        for (int r = 0; r < rsize; r++) want += val(other, r, first + i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "reduce_scatter_block %d: %d wrong", count, bad);
    /* uneven parts: half a block each, the rest to the last local rank */
    int at = 0;
    for (int r = 0; r < lsize; r++) rc[r] = r == lsize - 1 ? count - at : block / 2, at += rc[r];
    first = 0;
    for (int r = 0; r < lrank; r++) first += rc[r];
    for (int i = 0; i < rc[lrank]; i++) out[i] = -1;
    RUN(nb, Reduce_scatter, Ireduce_scatter, in, out, rc, MPI_INT, MPI_SUM, ic);
    for (int i = 0; i < rc[lrank]; i++) {
        int want = 0;
        for (int r = 0; r < rsize; r++) want += val(other, r, first + i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "reduce_scatter %d: %d wrong", count, bad);
    free(in), free(out), free(rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    color = wrank % 2;
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 99, &ic);
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    int counts[] = {0, 1, 1000, 40000};
    for (int nb = 0; nb < 2; nb++)
        for (int c = 0; c < 4; c++) {
            /* MPICH 4.0.2 (the reference) loses the data of nonblocking
             * rooted intercommunicator collectives whose root is not local
             * rank 0 (MPI_Ibcast from local rank 1 of 2 delivers nothing) */
            if (!nb || !getenv("OXMPI_TEST_REFERENCE"))
                rooted(nb, counts[c]);
            everyone(nb, counts[c]);
            reduce_scatter(nb, counts[c] / 10 + 1);
        }
    idle_args();
    /* persistent Allreduce on the intercommunicator, started twice */
    int x, sum;
    MPI_Request q;
    MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q);
    for (int round = 0; round < 2; round++) {
        x = val(color, lrank, round);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        int want = 0;
        for (int r = 0; r < rsize; r++) want += val(1 - color, r, round);
        CHECK(sum == want, "persistent intercommunicator allreduce round %d: %d, not %d", round, sum, want);
    }
    MPI_Request_free(&q);
    /* what intercommunicators refuse */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int cls, e = MPI_Scan(&x, &sum, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "scan on an intercommunicator: class %d", cls);
    e = MPI_Bcast(&x, 1, MPI_INT, rsize, ic);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "bcast root %d (remote size %d): class %d", rsize, rsize, cls);
    /* MPI_IN_PLACE is no argument of intercommunicator collectives (MPICH
     * 4.0.2 does not check it) */
    if (!getenv("OXMPI_TEST_REFERENCE")) {
        e = MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, ic);
        MPI_Error_class(e, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "in-place allreduce on an intercommunicator: class %d", cls);
    }
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return finish();
}
