/* oxmpi-test: ranks=1,2,3,4,9
 * Nonblocking barriers of the whole world, which go on the ranks'
 * arrival lines (up to 8 ranks; at 9 as messages): a rank posts its part
 * of one only once it has every part of its collective on the lines
 * before, so several started at once are posted by the progress of later
 * calls. Rounds drawn alike on every rank, on MPI_COMM_WORLD, a
 * duplicate and a reversed split of it (one count for all three):
 *  - a late rank (each in turn, 20 ms late, then in the rounds 1 ms) sends every other
 *    rank a message, then starts its Ibarrier: once the others' Ibarrier is complete the
 *    message is there (MPI_Iprobe), as it was sent before the late rank
 *    entered the barrier; completed by MPI_Wait or by MPI_Test in a loop;
 *  - up to 6 Ibarriers at once, completed by MPI_Waitall in reverse
 *    order, one by one from the last, or by MPI_Testall in a loop;
 *  - interleaved with blocking collectives on the lines (Barrier, an
 *    8-byte Allreduce), in the mailboxes (a Bcast of half the world) and
 *    with an Iallreduce of 100 doubles (messages), results checked;
 *  - an active Ibarrier freed (MPI_Request_free), then more collectives.
 */
#include "common.h"
#include <unistd.h>

enum { ROUNDS = 400, TAG = 77 };

static int rank, size;

/* The late rank's message to every other, then its Ibarrier on c; the
 * others' Ibarrier, and the message there once it completes. */
static void late_one(MPI_Comm c, int late, int by_test, int us)
{
    int token = 1000 + late;
    if (rank == late) {
        usleep(us); /* the others well into their Ibarrier */
        for (int r = 0; r < size; r++)
            if (r != rank)
                MPI_Send(&token, 1, MPI_INT, r, TAG, MPI_COMM_WORLD);
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
    if (rank != late) {
        int there = 0;
        MPI_Iprobe(late, TAG, MPI_COMM_WORLD, &there, MPI_STATUS_IGNORE);
        CHECK(there, "rank %d's Ibarrier completed before rank %d's message, sent before it entered", rank, late);
        int got = 0;
        MPI_Recv(&got, 1, MPI_INT, late, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(got == token, "message %d from rank %d", got, late);
    }
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
    for (int late = 0; late < size; late++)
        for (int i = 0; i < 3; i++) late_one(comms[i], late, i % 2, 20000);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm c = comms[draw(3)];
        switch (draw(4)) {
        case 0:
            late_one(c, round % size, draw(2), 1000);
            break;
        case 1:
            several(c, 1 + draw(6), draw(3));
            break;
        case 2:
            interleaved(c, half, round);
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
