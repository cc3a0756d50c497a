/* oxmpi-test: ranks=2,3,4 env=OXMPI_ASYNC_PROGRESS=1 variants=OXMPI_SINGLE_COPY=0;OXMPI_TRANSPORT=tcp,OXMPI_IFACE=lo
 * With OXMPI_ASYNC_PROGRESS=1 a progress thread moves a rank's
 * nonblocking operations on while the rank computes outside MPI (as
 * MPICH with MPIR_CVAR_ASYNC_PROGRESS=1). Each round one rank, the
 * computer, starts an Iallreduce of 256 KiB, an Ibcast of 1 MiB from
 * the rank after it (so that it forwards in the tree at 3 and 4 ranks), an
 * Ialltoall of 16 KiB blocks and an Ibarrier, like every rank, and
 * also an Irecv of 1 MiB from the rank after it and an Isend of 1 MiB to
 * the rank before; then it computes, calling no MPI function, until the
 * others, which complete everything in their own calls (the 1 MiB
 * messages by a blocking MPI_Send and MPI_Recv), say through memory the
 * ranks share outside MPI that they are done. Each of those steps needs
 * the computer's library to act: it must forward the broadcast, combine
 * and send its half of the allreduce, match the long message sent to it
 * (and, with OXMPI_SINGLE_COPY=0 or over TCP, take in and push out the
 * data). Every rank is the computer in turns; results are checked.
 * Without the progress thread the others wait until the computer's next
 * MPI call: a computer that sees nothing for 30 s fails the test and
 * waits no more in later rounds. */
#include "outside.h"

#define REDUCED (64 << 10) /* ints */
#define BCAST (1 << 20)
#define BLOCK (16 << 10)
#define LONG (1 << 20)

static unsigned char pattern(int i, int round, int from) { return (unsigned char)(i * 7 + round * 3 + from); }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    volatile int *done = shared_counters("async_progress");
    int *sum_in = malloc(REDUCED * sizeof(int)), *sum_out = malloc(REDUCED * sizeof(int));
    unsigned char *bc = malloc(BCAST), *a2a_out = malloc((size_t)BLOCK * size), *a2a_in = malloc((size_t)BLOCK * size);
    unsigned char *long_in = malloc(LONG), *long_out = malloc(LONG);
    int gave_up = 0;
    for (int round = 0; round < 2 * size; round++) {
        int computer = round % size, next = (computer + 1) % size, before = (computer + size - 1) % size;
        int root = next;
        for (int i = 0; i < REDUCED; i++) sum_in[i] = i + rank * round;
        for (int i = 0; i < BCAST; i++) bc[i] = rank == root ? pattern(i, round, root) : 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < BLOCK; i++) a2a_out[r * BLOCK + i] = pattern(i, round, rank * size + r);
        memset(long_in, 0, LONG);
        for (int i = 0; i < LONG; i++) long_out[i] = pattern(i, round, rank);
        MPI_Barrier(MPI_COMM_WORLD);

        MPI_Request q[6];
        int nq = 0;
        MPI_Iallreduce(sum_in, sum_out, REDUCED, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[nq++]);
        MPI_Ibcast(bc, BCAST, MPI_BYTE, root, MPI_COMM_WORLD, &q[nq++]);
        MPI_Ialltoall(a2a_out, BLOCK, MPI_BYTE, a2a_in, BLOCK, MPI_BYTE, MPI_COMM_WORLD, &q[nq++]);
        MPI_Ibarrier(MPI_COMM_WORLD, &q[nq++]);
        if (rank == computer) {
            MPI_Irecv(long_in, LONG, MPI_BYTE, next, round, MPI_COMM_WORLD, &q[nq++]);
            MPI_Isend(long_out, LONG, MPI_BYTE, before, round, MPI_COMM_WORLD, &q[nq++]);
            /* compute, no MPI call, until every other rank is done */
            double start = now();
            int waiting = size - 1;
            while (!gave_up && waiting > 0 && now() - start < 30) {
                waiting = 0;
                for (int r = 0; r < size; r++)
                    waiting += r != rank && __atomic_load_n(&done[r], __ATOMIC_ACQUIRE) <= round;
            }
            if (!gave_up && waiting > 0) {
                gave_up = 1;
                CHECK(0, "round %d: %d other rank(s) could not complete while this rank computed for 30 s", round,
                      waiting);
            }
        } else {
            if (rank == next) MPI_Send(long_out, LONG, MPI_BYTE, computer, round, MPI_COMM_WORLD);
            if (rank == before) MPI_Recv(long_in, LONG, MPI_BYTE, computer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Waitall(nq, q, MPI_STATUSES_IGNORE);
        if (rank != computer) __atomic_store_n(&done[rank], round + 1, __ATOMIC_RELEASE);

        int bad = 0;
        for (int i = 0; i < REDUCED && !bad; i++)
            bad = sum_out[i] != size * i + round * size * (size - 1) / 2;
        CHECK(!bad, "round %d: wrong allreduce sum", round);
        for (int i = 0; i < BCAST && !bad; i++) bad = bc[i] != pattern(i, round, root);
        CHECK(!bad, "round %d: wrong broadcast data", round);
        for (int r = 0; r < size && !bad; r++)
            for (int i = 0; i < BLOCK && !bad; i++) bad = a2a_in[r * BLOCK + i] != pattern(i, round, r * size + rank);
        CHECK(!bad, "round %d: wrong alltoall block", round);
        int from = rank == computer ? next : rank == before ? computer : -1;
        for (int i = 0; from >= 0 && i < LONG && !bad; i++) bad = long_in[i] != pattern(i, round, from);
        CHECK(!bad, "round %d: wrong long message from rank %d", round, from);
    }
    free(sum_in);
    free(sum_out);
    free(bc);
    free(a2a_out);
    free(a2a_in);
    free(long_in);
    free(long_out);
    return finish();
}
