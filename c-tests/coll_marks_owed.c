/* oxmpi-test: ranks=3,4
 * A reader of short collectives need not wait for the writers it read.
 * Rank 0 broadcasts once on a communicator with rank 1, then many times
 * (more than its mailbox holds) on one with rank 2 alone, then sends to
 * rank 1. Rank 1, after its one broadcast, waits for that message by a
 * loop of MPI_Test, a wait that never blocks: rank 0's later broadcasts
 * reuse the slot rank 1 read, and must learn that it was read though rank
 * 1 has neither waited since nor read again (oxmpi stores a reader's read
 * marks of short publications in batches, and whenever it waits). Then
 * the same with rank 1 computing outside MPI for a while instead, and
 * every value is checked. Ranks above 2 only look on. */
#include "common.h"
#include <time.h>

enum { LATER = 300 };

static void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* One round: rank 1 waits by a loop of MPI_Test (`testing`) or computes
 * and then receives. */
static void round_of(MPI_Comm with1, MPI_Comm with2, int rank, int testing)
{
    long v = rank == 0 ? 4242 + testing : -1;
    if (with1 != MPI_COMM_NULL) {
        MPI_Bcast(&v, 1, MPI_LONG, 0, with1);
        CHECK(v == 4242 + testing, "broadcast to rank 1: %ld", v);
    }
    if (rank == 0 || rank == 2) {
        for (int i = 0; i < LATER; i++) {
            long w = rank == 0 ? i * 7 + testing : -1;
            MPI_Bcast(&w, 1, MPI_LONG, 0, with2);
            CHECK(w == i * 7 + testing, "broadcast %d to rank 2: %ld", i, w);
        }
    }
    if (rank == 0) {
        int done = 1000 + testing;
        MPI_Send(&done, 1, MPI_INT, 1, testing, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int got = -1;
        if (testing) {
            MPI_Request r;
            int flag = 0;
            MPI_Irecv(&got, 1, MPI_INT, 0, testing, MPI_COMM_WORLD, &r);
            while (!flag)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        } else {
            busy_ms(50);
            MPI_Recv(&got, 1, MPI_INT, 0, testing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        CHECK(got == 1000 + testing, "message after the broadcasts: %d", got);
    }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm with1, with2;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &with1);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 2 ? 0 : MPI_UNDEFINED, rank, &with2);
    round_of(with1, with2, rank, 1);
    round_of(with1, with2, rank, 0);
    if (with1 != MPI_COMM_NULL)
        MPI_Comm_free(&with1);
    if (with2 != MPI_COMM_NULL)
        MPI_Comm_free(&with2);
    return finish();
}
