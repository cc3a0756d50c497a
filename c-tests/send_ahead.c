/* oxmpi-test: ranks=1,2,4 variants=OXMPI_UNEXPECTED_BYTES=4k;OXMPI_SLOTS=2
 * Senders far ahead of their receivers. Every rank sends 3000 short
 * messages to the next rank (blocking MPI_Send, then as many MPI_Isend)
 * before it receives any from the one before: far more than the slots
 * between two ranks hold, so the sends wait for room while their
 * receivers wait for room in turn, and messages must come out of the
 * buffering in order, each with its own value and tag. (Relying on
 * buffering is unsafe by the standard, but short messages are
 * buffered by every MPI users meet; with a tiny budget for unexpected
 * messages, too.) Then rank 0 gathers 8 bytes from every rank 5000 times
 * in a row, the non-roots far ahead of the root, and checks each round. */
#include "common.h"

#define N 3000
#define ROUNDS 5000

static void ring(int rank, int size, int nonblocking)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    static int out[N];
    MPI_Request req[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 100000 + i;
        if (nonblocking)
            MPI_Isend(&out[i], 1, MPI_INT, next, i % 7, MPI_COMM_WORLD, &req[i]);
        else
            MPI_Send(&out[i], 1, MPI_INT, next, i % 7, MPI_COMM_WORLD);
    }
    for (int i = 0; i < N; i++) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(v == prev * 100000 + i && st.MPI_TAG == i % 7, "%s message %d from rank %d: %d, tag %d",
              nonblocking ? "Isend" : "Send", i, prev, v, st.MPI_TAG);
    }
    if (nonblocking)
        MPI_Waitall(N, req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring(rank, size, 0);
    ring(rank, size, 1);
    long long mine[1], *all = malloc(sizeof(long long) * size);
    for (int k = 0; k < ROUNDS; k++) {
        mine[0] = (long long)k * 1000 + rank;
        MPI_Gather(mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        for (int r = 0; rank == 0 && r < size; r++)
            CHECK(all[r] == (long long)k * 1000 + r, "gather %d: rank %d gave %lld", k, r, all[r]);
    }
    free(all);
    return finish();
}
