/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SINGLE_COPY_MIN=0,OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_ALLREDUCE=rabenseifner,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_BARRIER=dissemination;OXMPI_COLL_BCAST=binomial,OXMPI_COLL_ALLREDUCE=reduce_bcast,OXMPI_COLL_ALLGATHER=ring,OXMPI_COLL_ALLTOALL=pairwise,OXMPI_SHM_COLL_MAX=0,OXMPI_COLL_BARRIER=linear;OXMPI_COLL_ALLGATHER=linear,OXMPI_COLL_ALLTOALL=linear,OXMPI_COLL_ALLREDUCE=linear
 * Nonblocking (MPI_I...) and persistent (MPI_..._init + MPI_Start)
 * collectives: every operation, run the three ways (blocking, nonblocking,
 * persistent) at counts 0 to 256 Ki ints (1 MiB) and every root, checked against
 * values computed here; several operations in flight at once on two
 * communicators, completed in another order, with a blocking collective
 * and point-to-point traffic in between; completion by MPI_Test polling
 * while another rank is late; persistent operations of every kind started
 * again with new data (the send buffer is read at each start); the same
 * nonblocking calls repeated; derived types; errors. */
#include "common.h"
#include <unistd.h>

/* One collective three ways: MPI_<b>, MPI_<i> or MPI_<b>_init (THREE_WAYS) */
#define COLL(mode, b, i, ...) THREE_WAYS(mode, MPI_##b, MPI_##i, MPI_##b##_init, __VA_ARGS__)

static int val(int r, int i) { return r * 10007 + i * 3 + 1; }

static int rank, size;
/* Running on the reference MPI (OXMPI_TEST_REFERENCE=1). MPICH 4.0.2 fails
 * persistent collectives on 3 and 4 ranks (an "Invalid communicator" error
 * from MPI_Wait after MPI_Scatter_init or MPI_Reduce_init, or a hang) and says an
 * inactive persistent collective is not complete, where MPI 4.0 section
 * 3.7.3 says MPI_Test returns flag = true for it: those parts are skipped
 * there. */
static int reference;

static void fill(int *b, size_t n, int v)
{
    for (size_t i = 0; i < n; i++) b[i] = v;
}

/* For a failed gather: where the first wrong run of ints lies (block,
 * index, length, what it holds), to tell a lost piece from a misplaced one. */
static void where_wrong(const char *what, const int *got, int n)
{
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) {
            if (got[(size_t)r * n + i] == val(r, i))
                continue;
            int len = 0;
            while (i + len < n && got[(size_t)r * n + i + len] != val(r, i + len)) len++;
            fprintf(stderr, "rank %d: %s %d: block %d wrong from int %d for %d ints; holds %d, want %d\n", rank,
                    what, n, r, i, len, got[(size_t)r * n + i], val(r, i));
            return;
        }
}

static void every_operation(int mode, int n)
{
    const char *m = way_name(mode);
    size_t total = (size_t)n * size + 1;
    int *mine = malloc((n + 1) * sizeof(int)), *out = malloc((n + 1) * sizeof(int));
    int *all = malloc(total * sizeof(int)), *all2 = malloc(total * sizeof(int));
    int *cnt = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) mine[i] = val(rank, i);
    for (int r = 0; r < size; r++) cnt[r] = n, dis[r] = r * n, types[r] = MPI_INT;
    int bad;

    COLL(mode, Barrier, Ibarrier, MPI_COMM_WORLD);
    for (int root = 0; root < size; root++) {
        /* Bcast */
        for (int i = 0; i < n; i++) out[i] = rank == root ? val(root, i) : -1;
        COLL(mode, Bcast, Ibcast, out, n, MPI_INT, root, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++) bad += out[i] != val(root, i);
        CHECK(bad == 0, "%s bcast %d root %d: %d wrong", m, n, root, bad);
        /* Reduce */
        fill(out, n, -1);
        COLL(mode, Reduce, Ireduce, mine, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n && rank == root; i++) {
            int want = 0;
            for (int r = 0; r < size; r++) want += val(r, i);
            bad += out[i] != want;
        }
        CHECK(bad == 0, "%s reduce %d root %d: %d wrong", m, n, root, bad);
        /* Gather and Gatherv (the latter in reverse rank order) */
        fill(all, total, -1);
        COLL(mode, Gather, Igather, mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++) dis[r] = (size - 1 - r) * n;
        fill(all2, total, -1);
        COLL(mode, Gatherv, Igatherv, mine, n, MPI_INT, all2, cnt, dis, MPI_INT, root, MPI_COMM_WORLD);
        bad = 0;
        for (int r = 0; r < size && rank == root; r++)
            for (int i = 0; i < n; i++)
                bad += (all[r * n + i] != val(r, i)) + (all2[(size - 1 - r) * n + i] != val(r, i));
        CHECK(bad == 0, "%s gather(v) %d root %d: %d wrong", m, n, root, bad);
        /* Scatter and Scatterv, from what was gathered */
        fill(out, n, -1);
        COLL(mode, Scatter, Iscatter, all, n, MPI_INT, out, n, MPI_INT, root, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++) bad += out[i] != val(rank, i);
        fill(out, n, -1);
        COLL(mode, Scatterv, Iscatterv, all2, cnt, dis, MPI_INT, out, n, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) bad += out[i] != val(rank, i);
        CHECK(bad == 0, "%s scatter(v) %d root %d: %d wrong", m, n, root, bad);
        for (int r = 0; r < size; r++) dis[r] = r * n;
    }
    /* Allreduce, Scan, Exscan */
    fill(out, n, -1);
    COLL(mode, Allreduce, Iallreduce, mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "%s allreduce %d: %d wrong", m, n, bad);
    fill(out, n, -1);
    COLL(mode, Scan, Iscan, mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r <= rank; r++) want += val(r, i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "%s scan %d: %d wrong", m, n, bad);
    fill(out, n, -7);
    COLL(mode, Exscan, Iexscan, mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n && rank > 0; i++) {
        int want = 0;
        for (int r = 0; r < rank; r++) want += val(r, i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "%s exscan %d: %d wrong", m, n, bad);
    /* Allgather, Allgatherv */
    fill(all, total, -1);
    COLL(mode, Allgather, Iallgather, mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
    fill(all2, total, -1);
    COLL(mode, Allgatherv, Iallgatherv, mine, n, MPI_INT, all2, cnt, dis, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) bad += (all[r * n + i] != val(r, i)) + (all2[r * n + i] != val(r, i));
    CHECK(bad == 0, "%s allgather(v) %d: %d wrong", m, n, bad);
    if (bad) {
        where_wrong("allgather", all, n);
        where_wrong("allgatherv", all2, n);
    }
    /* Alltoall(v/w): block r of rank s holds val(s, r * n + i) */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) all[r * n + i] = val(rank, r * n + i);
    fill(all2, total, -1);
    COLL(mode, Alltoall, Ialltoall, all, n, MPI_INT, all2, n, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) bad += all2[r * n + i] != val(r, rank * n + i);
    fill(all2, total, -1);
    COLL(mode, Alltoallv, Ialltoallv, all, cnt, dis, MPI_INT, all2, cnt, dis, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) bad += all2[r * n + i] != val(r, rank * n + i);
    int *bdis = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) bdis[r] = r * n * (int)sizeof(int);
    fill(all2, total, -1);
    COLL(mode, Alltoallw, Ialltoallw, all, cnt, bdis, types, all2, cnt, bdis, types, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) bad += all2[r * n + i] != val(r, rank * n + i);
    CHECK(bad == 0, "%s alltoall(v/w) %d: %d wrong", m, n, bad);
    /* Reduce_scatter_block and Reduce_scatter: rank r gets block r of the sum */
    fill(out, n, -1);
    COLL(mode, Reduce_scatter_block, Ireduce_scatter_block, all, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int s = 0; s < size; s++) want += val(s, rank * n + i);
        bad += out[i] != want;
    }
    fill(out, n, -1);
    COLL(mode, Reduce_scatter, Ireduce_scatter, all, out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int s = 0; s < size; s++) want += val(s, rank * n + i);
        bad += out[i] != want;
    }
    CHECK(bad == 0, "%s reduce_scatter(_block) %d: %d wrong", m, n, bad);
    free(mine), free(out), free(all), free(all2), free(cnt), free(dis), free(types), free(bdis);
}

/* MPI_IN_PLACE through the nonblocking and persistent forms: the input is
 * read when the operation starts (each start, for a persistent one). */
static void in_place(int mode, int n)
{
    const char *m = way_name(mode);
    size_t total = (size_t)n * size + 1;
    int *buf = malloc((n + 1) * sizeof(int)), *all = malloc(total * sizeof(int));
    int bad = 0;
    for (int i = 0; i < n; i++) buf[i] = val(rank, i);
    COLL(mode, Allreduce, Iallreduce, MPI_IN_PLACE, buf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* persistent ran twice: the second start summed the first's result */
    int times = mode == PERSISTENT ? size : 1;
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < size; r++) want += val(r, i);
        bad += buf[i] != want * times;
    }
    CHECK(bad == 0, "%s in-place allreduce %d: %d wrong", m, n, bad);
    for (int i = 0; i < n; i++) buf[i] = val(rank, i);
    COLL(mode, Scan, Iscan, MPI_IN_PLACE, buf, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) bad += buf[i] != val(rank, i);
    CHECK(bad == 0, "%s in-place scan (max) %d: %d wrong", m, n, bad);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) all[r * n + i] = r == rank ? val(rank, i) : -1;
    COLL(mode, Allgather, Iallgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
    CHECK(bad == 0, "%s in-place allgather %d: %d wrong", m, n, bad);
    if (bad)
        where_wrong("in-place allgather", all, n);
    /* alltoall in place is an exchange, so the persistent second start swaps back */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) all[r * n + i] = val(rank, r * n + i);
    COLL(mode, Alltoall, Ialltoall, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            bad += all[r * n + i] != (mode == PERSISTENT ? val(rank, r * n + i) : val(r, rank * n + i));
    CHECK(bad == 0, "%s in-place alltoall %d: %d wrong", m, n, bad);
    int root = size - 1;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++) all[r * n + i] = rank == root && r == root ? val(root, i) : -1;
    if (rank == root)
        COLL(mode, Gather, Igather, MPI_IN_PLACE, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
    else
        COLL(mode, Gather, Igather, buf, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) buf[i] = val(rank, i);
    if (rank == root) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
    }
    CHECK(bad == 0, "%s in-place gather %d: %d wrong", m, n, bad);
    free(buf), free(all);
}

/* Several operations in flight on two communicators, completed in reverse
 * order, with a blocking collective and a ring of messages in between. */
static void many_in_flight(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    enum { N = 5000 };
    int *b1 = malloc(N * sizeof(int)), *s2 = malloc(N * sizeof(int)), *r2 = malloc(N * sizeof(int));
    int *a3 = malloc((size_t)N * size * sizeof(int)), *b4 = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        b1[i] = rank == 0 ? val(0, i) : -1;
        s2[i] = val(rank, i);
        b4[i] = rank == size - 1 ? val(9, i) : -1;
    }
    MPI_Request req[5];
    MPI_Ibcast(b1, N, MPI_INT, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Iallreduce(s2, r2, N, MPI_INT, MPI_MAX, dup, &req[1]);
    MPI_Iallgather(s2, N, MPI_INT, a3, N, MPI_INT, MPI_COMM_WORLD, &req[2]);
    MPI_Ibcast(b4, N, MPI_INT, size - 1, dup, &req[3]);
    MPI_Ibarrier(MPI_COMM_WORLD, &req[4]);
    /* blocking collective and point-to-point while they are in flight */
    int x = rank + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2, "blocking allreduce among nonblocking ones: %d", sum);
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, (rank + size - 1) % size, 5,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == (rank + size - 1) % size, "ring message among nonblocking collectives: %d", got);
    for (int k = 4; k >= 0; k--) MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += b1[i] != val(0, i);
        bad += r2[i] != val(size - 1, i);
        bad += b4[i] != val(9, i);
        for (int r = 0; r < size; r++) bad += a3[r * N + i] != val(r, i);
    }
    CHECK(bad == 0, "operations in flight together: %d wrong", bad);
    MPI_Comm_free(&dup);
    free(b1), free(s2), free(r2), free(a3), free(b4);
}

/* MPI_Test alone completes an operation whose peers come late. */
static void progress_by_test(void)
{
    int x = rank + 1, sum = 0, flag = 0;
    long polls = 0;
    MPI_Request r;
    if (rank == 1)
        usleep(50000);
    MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        polls++;
    }
    CHECK(sum == size * (size + 1) / 2, "iallreduce completed by MPI_Test: %d", sum);
    CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Test");
    /* Request_get_status does not free it */
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    flag = 0;
    while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* A persistent operation reads its send buffer at each start; Startall
 * starts several; inactive ones complete at once. */
static void persistent_restarts(void)
{
    enum { N = 3000 };
    int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int)), *bc = malloc(N * sizeof(int));
    MPI_Request r[2];
    MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(bc, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    int flag = 0;
    MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
    CHECK(flag || reference, "an inactive persistent collective completes at once");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            in[i] = val(rank, i) + round;
            out[i] = -1;
            bc[i] = rank == 0 ? i * round : -1;
        }
        MPI_Startall(2, r);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int s = 0; s < size; s++) want += val(s, i) + round;
            bad += (out[i] != want) + (bc[i] != i * round);
        }
        CHECK(bad == 0, "persistent round %d: %d wrong", round, bad);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(in), free(out), free(bc);
}

/* Each kind of persistent collective started three times, its send data
 * (and, in place, its receive buffer) rewritten before each start: a
 * start reads them then, and nothing of what an earlier start read or
 * reduced stays (oxmpi runs a plan's steps again where it can, and builds
 * it again where it packed a send buffer, as from the strided type). */
static void persistent_new_data(void)
{
    enum { N = 500, OPS = 9 };
    static const char *names[OPS] = {"Allgather", "Alltoall",  "Reduce",    "Scan",
                                     "Exscan",    "Gather",    "Scatter",   "Allreduce in place",
                                     "Allgather from a strided type"};
    int nn = N * size;
    int *in = malloc(nn * sizeof(int)), *out = malloc(nn * sizeof(int)), *strided = malloc(2 * N * sizeof(int));
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int op = 0; op < OPS; op++) {
        MPI_Request r;
        MPI_Comm w = MPI_COMM_WORLD;
        MPI_Info ni = MPI_INFO_NULL;
        switch (op) {
        case 0: MPI_Allgather_init(in, N, MPI_INT, out, N, MPI_INT, w, ni, &r); break;
        case 1: MPI_Alltoall_init(in, N, MPI_INT, out, N, MPI_INT, w, ni, &r); break;
        case 2: MPI_Reduce_init(in, out, N, MPI_INT, MPI_SUM, 0, w, ni, &r); break;
        case 3: MPI_Scan_init(in, out, N, MPI_INT, MPI_SUM, w, ni, &r); break;
        case 4: MPI_Exscan_init(in, out, N, MPI_INT, MPI_SUM, w, ni, &r); break;
        case 5: MPI_Gather_init(in, N, MPI_INT, out, N, MPI_INT, 0, w, ni, &r); break;
        case 6: MPI_Scatter_init(in, N, MPI_INT, out, N, MPI_INT, 0, w, ni, &r); break;
        case 7: MPI_Allreduce_init(MPI_IN_PLACE, out, N, MPI_INT, MPI_SUM, w, ni, &r); break;
        default: MPI_Allgather_init(strided, 1, every_other, out, N, MPI_INT, w, ni, &r);
        }
        for (int round = 0; round < 3; round++) {
            /* rank s's int j this round */
#define V(s, j) (val(s, j) + 7 * round)
            for (int j = 0; j < nn; j++) in[j] = V(rank, j), out[j] = op == 7 && j < N ? V(rank, j) : -1;
            for (int i = 0; i < N; i++) strided[2 * i] = V(rank, i), strided[2 * i + 1] = -5;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            int bad = 0;
            for (int j = 0; j < nn; j++) {
                int s = j / N, i = j % N, want = 0;
                switch (op) {
                case 1: want = V(s, rank * N + i); break;
                case 2:
                case 7:
                    if (s > 0 || (op == 2 && rank != 0))
                        continue;
                    for (int q = 0; q < size; q++) want += V(q, i);
                    break;
                case 3:
                case 4:
                    if (s > 0 || (op == 4 && rank == 0))
                        continue;
                    for (int q = 0; q < rank + (op == 3); q++) want += V(q, i);
                    break;
                case 5:
                    if (rank != 0)
                        continue;
                    want = V(s, i);
                    break;
                case 6:
                    if (s > 0)
                        continue;
                    want = V(0, rank * N + i);
                    break;
                default: want = V(s, i);
                }
                bad += out[j] != want;
            }
#undef V
            CHECK(bad == 0, "persistent %s, start %d with new data: %d wrong", names[op], round + 1, bad);
        }
        MPI_Request_free(&r);
    }
    MPI_Type_free(&every_other);
    free(in), free(out), free(strided);
}

/* The same nonblocking calls round after round (oxmpi runs again the
 * schedule it built for the last same call on a communicator, under the
 * next tag): new data each round, the count or the root changed in some,
 * two barriers in flight at once, a blocking collective in between, on
 * the world and on duplicates freed and made again. */
static void repeated_calls(void)
{
    enum { N = 300, ROUNDS = 24 };
    double *in = malloc(N * sizeof(double)), *out = malloc(N * sizeof(double)), *red = malloc(N * sizeof(double));
    int *mine = malloc(size * N * sizeof(int)), *all = malloc(size * N * sizeof(int)), *bc = malloc(N * sizeof(int));
    MPI_Comm dup = MPI_COMM_NULL;
    for (int round = 0; round < ROUNDS; round++) {
        if (round % 5 == 0) {
            if (dup != MPI_COMM_NULL)
                MPI_Comm_free(&dup);
            MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        }
        MPI_Comm c = round % 2 ? dup : MPI_COMM_WORLD;
        int n = round % 4 == 3 ? N / 2 : N, root = round % 7 == 6 ? size - 1 : 0;
        for (int i = 0; i < N; i++) {
            in[i] = val(rank, i) + round, out[i] = -1, red[i] = -1;
            bc[i] = rank == root ? i + round : -1;
        }
        for (int j = 0; j < size * N; j++) mine[j] = val(rank, j) * 2 + round, all[j] = -1;
        MPI_Request q[3];
        MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, c, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Ireduce(in, red, n, MPI_DOUBLE, MPI_SUM, root, c, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Ibarrier(c, &q[1]);
        MPI_Ibarrier(c, &q[2]);
        MPI_Iallgather(mine, N, MPI_INT, all, N, MPI_INT, c, &q[0]);
        MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (int j = 0; j < size * N; j++) bad += all[j] != val(j / N, j % N) * 2 + round;
        MPI_Ibcast(bc, N, MPI_INT, root, c, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        MPI_Ialltoall(mine, N, MPI_INT, all, N, MPI_INT, c, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        if (round % 3 == 0)
            MPI_Barrier(c);
        for (int i = 0; i < N; i++) {
            double want = 0;
            for (int s = 0; s < size; s++) want += val(s, i) + round;
            bad += i < n ? out[i] != want : out[i] != -1;
            bad += rank == root && (i < n ? red[i] != want : red[i] != -1);
            bad += bc[i] != i + round;
        }
        for (int j = 0; j < size * N; j++) bad += all[j] != val(j / N, rank * N + j % N) * 2 + round;
        CHECK(bad == 0, "repeated nonblocking calls, round %d: %d wrong", round, bad);
    }
    MPI_Comm_free(&dup);
    free(in), free(out), free(red), free(mine), free(all), free(bc);
}

/* Derived types through nonblocking operations: a strided vector
 * broadcast, and an allgather into every other int. */
static void derived_types(void)
{
    enum { N = 700 };
    MPI_Datatype vec, every_other;
    MPI_Type_vector(N, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    int *v = malloc(3 * N * sizeof(int)), *g = malloc((size_t)2 * N * size * sizeof(int));
    int *mine = malloc(N * sizeof(int));
    for (int i = 0; i < 3 * N; i++) v[i] = rank == 0 ? val(1, i) : -1;
    for (int i = 0; i < N; i++) mine[i] = val(rank, i);
    for (int i = 0; i < 2 * N * size; i++) g[i] = -5;
    MPI_Request r[2];
    MPI_Ibcast(v, 1, vec, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Iallgather(mine, N, MPI_INT, g, N, every_other, MPI_COMM_WORLD, &r[1]);
    MPI_Type_free(&vec); /* allowed while the operation is pending */
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int i = 0; i < 3 * N; i++) bad += v[i] != (i % 3 == 0 || rank == 0 ? val(1, i) : -1);
    for (int r2 = 0; r2 < size; r2++)
        for (int i = 0; i < N; i++)
            bad += (g[2 * (r2 * N + i)] != val(r2, i)) + (g[2 * (r2 * N + i) + 1] != -5);
    CHECK(bad == 0, "derived types in nonblocking collectives: %d wrong", bad);
    MPI_Type_free(&every_other);
    free(v), free(g), free(mine);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, y, cls, e;
    MPI_Request r = MPI_REQUEST_NULL;
    e = MPI_Ibcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "ibcast root out of range: class %d", cls);
    e = MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "iallreduce with MPI_OP_NULL: class %d", cls);
    e = MPI_Reduce_init(&x, &y, 1, MPI_INT, MPI_SUM, -2, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "reduce_init with root -2: class %d", cls);
    e = MPI_Ialltoall(&x, 1, MPI_INT, &y, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "ialltoall with MPI_DATATYPE_NULL: class %d", cls);
    e = MPI_Ibarrier(MPI_COMM_WORLD, NULL);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_REQUEST, "ibarrier with a null request pointer: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* up to 1 MiB per rank */
    int counts[] = {0, 1, 1000, 65536, 262144};
    reference = getenv("OXMPI_TEST_REFERENCE") != NULL;
    int modes = reference && size > 2 ? NONBLOCKING : PERSISTENT;
    for (int mode = BLOCKING; mode <= modes; mode++)
        for (int c = 0; c < 5; c++) {
            every_operation(mode, counts[c]);
            in_place(mode, counts[c]);
        }
    many_in_flight();
    if (size > 1)
        progress_by_test();
    persistent_restarts();
    if (!reference || size <= 2)
        persistent_new_data();
    repeated_calls();
    derived_types();
    errors();
    return finish();
}
