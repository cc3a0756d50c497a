/* oxmpi-test: ranks=1,2,3,4,9
 * Nonblocking and persistent barriers, short allreduces (predefined
 * types and operators), allgathers and alltoalls of the whole world;
 * the nonblocking ones of MPI_COMM_WORLD go on the ranks'
 * arrival lines (up to 8 ranks; at 9 as messages): a rank posts its part
 * of one only once it has every part of its collective on the lines
 * before, so several started at once are posted by the progress of later
 * calls. Rounds drawn alike on every rank, on MPI_COMM_WORLD, a
 * duplicate and a reversed split of it (the nonblocking ones of the two
 * others go as messages; the blocking ones of all three on the lines,
 * with one count of their own):
 *  - a late rank (each in turn, 20 ms late, then in the rounds 1 ms)
 *    starts its Ibarrier: no other rank's completes before that (by
 *    CLOCK_MONOTONIC, which ranks on one machine share); completed by
 *    MPI_Wait or by MPI_Test in a loop;
 *  - up to 6 Ibarriers at once, completed by MPI_Waitall in reverse
 *    order, one by one from the last, or by MPI_Testall in a loop;
 *  - interleaved with blocking collectives on the lines (Barrier, an
 *    8-byte Allreduce), in the mailboxes (a Bcast of half the world) and
 *    with an Iallreduce of 100 doubles (messages), results checked;
 *  - up to 6 Ibarriers and Iallreduces open at once (MPI_SUM of 1 to 6
 *    doubles: up to 40 bytes on the lines, 48 as messages; MPI_MAX of
 *    ints in place; MPI_BXOR of bytes), completed in reverse order,
 *    every result checked;
 *  - an Iallgather or Ialltoall of 1 to 5 ints a block (lines or
 *    messages by its size), in place or not, the ranks' datatypes
 *    differing but for their signatures (a contiguous type of k ints
 *    against k MPI_INTs; rank 0 receiving into every other int), beside
 *    an Ibarrier;
 *  - persistent ones (an Allreduce_init, Allgather_init and
 *    Barrier_init) started together three times beside an Ibarrier, the
 *    send buffers changed before each start;
 *  - an active Ibarrier freed (MPI_Request_free), then more collectives;
 * and first, an Iallreduce, Iallgather and Ialltoall of nothing, their
 * buffers null.
 */
#define _GNU_SOURCE
#include "common.h"
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 400 };

static int rank, size;

/* The time on CLOCK_MONOTONIC, which the test's ranks, all on this
 * machine, share. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The late rank enters its Ibarrier on c `us` microseconds after the
 * others: no other rank's may complete before it entered. */
static void late_one(MPI_Comm c, int late, int by_test, int us)
{
    double t = 0;
    if (rank == late) {
        usleep(us); /* the others well into their Ibarrier */
        t = now();
    }
    MPI_Request q;
    CHECK(MPI_Ibarrier(c, &q) == MPI_SUCCESS, "Ibarrier");
    if (by_test) {
        int flag = 0;
        while (!flag)
            MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    CHECK(q == MPI_REQUEST_NULL, "request not freed");
    if (rank != late)
        t = now();
    double *ts = malloc(sizeof(double) * size);
    MPI_Allgather(&t, 1, MPI_DOUBLE, ts, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    CHECK(rank == late || ts[rank] >= ts[late], "rank %d's Ibarrier completed %.6f s before rank %d entered it", rank,
          ts[late] - ts[rank], late);
    free(ts);
}

/* k Ibarriers on c at once, completed in one of three ways. */
static void several(MPI_Comm c, int k, int how)
{
    MPI_Request q[6];
    for (int i = 0; i < k; i++)
        CHECK(MPI_Ibarrier(c, &q[i]) == MPI_SUCCESS, "Ibarrier %d", i);
    if (how == 0) {
        MPI_Request rev[6];
        for (int i = 0; i < k; i++) rev[i] = q[k - 1 - i];
        CHECK(MPI_Waitall(k, rev, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall");
        for (int i = 0; i < k; i++) q[i] = rev[k - 1 - i];
    } else if (how == 1) {
        for (int i = k - 1; i >= 0; i--) MPI_Wait(&q[i], MPI_STATUS_IGNORE);
    } else {
        int flag = 0;
        while (!flag)
            MPI_Testall(k, q, &flag, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < k; i++) CHECK(q[i] == MPI_REQUEST_NULL, "request %d not freed", i);
}

/* An Ibarrier of c left open across collectives of every path. */
static void interleaved(MPI_Comm c, MPI_Comm half, int round)
{
    MPI_Request q[3];
    MPI_Ibarrier(c, &q[0]);
    double x = rank + round, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2.0 + (double)size * round, "allreduce %g", sum);
    MPI_Ibarrier(c, &q[1]);
    int b = rank < 2 ? round : -1; /* rank 0 of either half */
    MPI_Bcast(&b, 1, MPI_INT, 0, half);
    CHECK(b == round, "bcast %d", b);
    MPI_Barrier(MPI_COMM_WORLD);
    double v[100], w[100];
    for (int i = 0; i < 100; i++) v[i] = rank * 100 + i;
    MPI_Iallreduce(v, w, 100, MPI_DOUBLE, MPI_SUM, c, &q[2]);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    int ok = 1;
    for (int i = 0; i < 100; i++) ok &= w[i] == 100.0 * size * (size - 1) / 2 + (double)size * i;
    CHECK(ok, "iallreduce");
}

/* Up to 6 Ibarriers and Iallreduces of 1 to 6 doubles (up to 5, 40
 * bytes, on the lines; 6 as messages), of ints by MPI_MAX in place, and
 * of bytes by MPI_BXOR, open at once on c, completed in reverse order;
 * every result checked. */
static void reductions(MPI_Comm c, int round)
{
    MPI_Request q[6];
    double d[6][6], dr[6][6];
    int v[6][4], k = 1 + draw(6), what[6], cnt[6];
    unsigned char b[6][3], br[6][3];
    for (int i = 0; i < k; i++) {
        what[i] = draw(4), cnt[i] = 1 + draw(6);
        for (int j = 0; j < 6; j++) d[i][j] = rank + round + i + j;
        for (int j = 0; j < 4; j++) v[i][j] = (rank * 7 + i + j) % 11;
        for (int j = 0; j < 3; j++) b[i][j] = (unsigned char)(rank * 37 + i * 5 + j);
        if (what[i] == 0)
            MPI_Ibarrier(c, &q[i]);
        else if (what[i] == 1)
            MPI_Iallreduce(d[i], dr[i], cnt[i], MPI_DOUBLE, MPI_SUM, c, &q[i]);
        else if (what[i] == 2)
            MPI_Iallreduce(MPI_IN_PLACE, v[i], 4, MPI_INT, MPI_MAX, c, &q[i]);
        else
            MPI_Iallreduce(b[i], br[i], 3, MPI_UNSIGNED_CHAR, MPI_BXOR, c, &q[i]);
    }
    for (int i = k - 1; i >= 0; i--) {
        CHECK(MPI_Wait(&q[i], MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %d", i);
        int ok = 1;
        for (int j = 0; what[i] == 1 && j < cnt[i]; j++)
            ok &= dr[i][j] == size * (size - 1) / 2.0 + (double)size * (round + i + j);
        for (int j = 0; what[i] == 2 && j < 4; j++) {
            int most = 0;
            for (int r = 0; r < size; r++) most = (r * 7 + i + j) % 11 > most ? (r * 7 + i + j) % 11 : most;
            ok &= v[i][j] == most;
        }
        for (int j = 0; what[i] == 3 && j < 3; j++) {
            unsigned char x = 0;
            for (int r = 0; r < size; r++) x ^= (unsigned char)(r * 37 + i * 5 + j);
            ok &= br[i][j] == x;
        }
        CHECK(ok, "reduction %d (kind %d, count %d) in round %d", i, what[i], cnt[i], round);
    }
}

/* An Iallgather or Ialltoall of k ints a block (up to 40 bytes a part on
 * the lines, longer as messages), in place or not, open beside an
 * Ibarrier; the ranks' datatypes differ where MPI lets them (the same
 * signature): odd ranks send one contiguous type of k ints, even ranks k
 * MPI_INTs; rank 0 receives into every other int (a vector resized to
 * 2k ints a block), whose gaps must stay as they were. */
static void blocks(MPI_Comm c, int round)
{
    int k = 1 + draw(5), alltoall = draw(2), in_place = draw(2), me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    MPI_Datatype kints, strided, every_other;
    MPI_Type_contiguous(k, MPI_INT, &kints);
    MPI_Type_commit(&kints);
    MPI_Type_vector(k, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, (MPI_Aint)(2 * k * sizeof(int)), &every_other);
    MPI_Type_commit(&every_other);
    int wide = me == 0, stride = wide ? 2 * k : k, sendv[5 * 9], *recvv = calloc((size_t)2 * k * n, sizeof(int));
    /* what rank r sends rank q, item j */
    #define ITEM(r, q, j) ((r) * 10000 + (q) * 100 + (j) + round % 50)
    for (int q = 0; q < n; q++)
        for (int j = 0; j < k; j++) {
            sendv[q * k + j] = alltoall ? ITEM(me, q, j) : ITEM(me, 0, j);
            for (int g = 0; g < stride; g++) recvv[q * stride + g] = -1;
        }
    if (in_place)
        for (int q = 0; q < n; q++)
            for (int j = 0; j < k; j++)
                if (alltoall || q == me) recvv[q * stride + (wide ? 2 * j : j)] = sendv[(alltoall ? q : 0) * k + j];
    const void *sb = in_place ? MPI_IN_PLACE : sendv;
    int scount = me % 2 ? 1 : k;
    MPI_Datatype stype = me % 2 ? kints : MPI_INT, rtype = wide ? every_other : MPI_INT;
    int rcount = wide ? 1 : k;
    MPI_Request q[2];
    MPI_Ibarrier(c, &q[0]);
    if (alltoall)
        MPI_Ialltoall(sb, scount, stype, recvv, rcount, rtype, c, &q[1]);
    else
        MPI_Iallgather(sb, scount, stype, recvv, rcount, rtype, c, &q[1]);
    CHECK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
    int ok = 1;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < k; j++) {
            ok &= recvv[r * stride + (wide ? 2 * j : j)] == (alltoall ? ITEM(r, me, j) : ITEM(r, 0, j));
            if (wide)
                ok &= recvv[r * stride + 2 * j + 1] == -1;
        }
    CHECK(ok, "%s of %d ints a block%s, round %d", alltoall ? "ialltoall" : "iallgather", k, in_place ? " in place" : "", round);
    #undef ITEM
    free(recvv);
    MPI_Type_free(&kints);
    MPI_Type_free(&strided);
    MPI_Type_free(&every_other);
}

/* Persistent ones (MPI 4): an Allreduce_init of 2 doubles, an
 * Allgather_init of one int and a Barrier_init, started together 3
 * times with an Ibarrier between, the send buffers changed before each
 * start (a start takes them as they are then); every result checked. */
static void persistent(MPI_Comm c, int round)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    double x[2], y[2];
    int v, *all = calloc((size_t)n, sizeof(int));
    MPI_Request q[4];
    MPI_Allreduce_init(x, y, 2, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &q[0]);
    MPI_Allgather_init(&v, 1, MPI_INT, all, 1, MPI_INT, c, MPI_INFO_NULL, &q[1]);
    MPI_Barrier_init(c, MPI_INFO_NULL, &q[2]);
    for (int t = 0; t < 3; t++) {
        x[0] = me + t, x[1] = round - me, v = me * 10 + t;
        MPI_Startall(3, q);
        MPI_Ibarrier(c, &q[3]);
        CHECK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
        int ok = y[0] == n * (n - 1) / 2.0 + (double)n * t && y[1] == (double)n * round - n * (n - 1) / 2.0;
        for (int r = 0; r < n; r++) ok &= all[r] == r * 10 + t;
        CHECK(ok, "persistent start %d of round %d", t, round);
    }
    for (int i = 0; i < 3; i++) MPI_Request_free(&q[i]);
    free(all);
}

/* An active Ibarrier freed; the collectives after it go on. */
static void freed(MPI_Comm c, int round)
{
    MPI_Request q;
    MPI_Ibarrier(c, &q);
    CHECK(MPI_Request_free(&q) == MPI_SUCCESS && q == MPI_REQUEST_NULL, "Request_free");
    long x = round, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_MAX, c);
    CHECK(y == round, "allreduce after a freed Ibarrier: %ld", y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, rev};
    /* empty ones, their buffers null */
    MPI_Request z[3];
    MPI_Iallreduce(NULL, NULL, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &z[0]);
    MPI_Iallgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &z[1]);
    MPI_Ialltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &z[2]);
    CHECK(MPI_Waitall(3, z, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "empty ones");
    for (int late = 0; late < size; late++)
        for (int i = 0; i < 3; i++) late_one(comms[i], late, i % 2, 20000);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm c = comms[draw(3)];
        switch (draw(7)) {
        case 0:
            late_one(c, round % size, draw(2), 1000);
            break;
        case 1:
            several(c, 1 + draw(6), draw(3));
            break;
        case 2:
            interleaved(c, half, round);
            break;
        case 3:
            reductions(c, round);
            break;
        case 4:
            blocks(c, round);
            break;
        case 5:
            persistent(c, round);
            break;
        default:
            freed(c, round);
        }
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    return finish();
}
