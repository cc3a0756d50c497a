/* oxmpi-test: ranks=2,4
 * A long contiguous message between ranks of one host arrives while its
 * sender computes: the receiver copies it by cross-memory attach and
 * needs nothing of the sender between MPI_Isend and MPI_Wait. Each even
 * rank sends its odd neighbour 4 MiB, then computes (no MPI call) until
 * the receiver says, through memory the ranks share outside MPI, that
 * MPI_Recv returned. Several rounds: the first long message from a peer
 * is read whole, later ones could go another way. The MPI standard does
 * not require this (MPICH's receive waits for the sender's next call):
 * it is oxmpi's own promise over shared memory with the default
 * tunables. Then the same with 48 KiB messages, below the size a lone
 * receive reads (OXMPI_SINGLE_COPY_MIN, 128 KiB), while the receiver has
 * a long message of its own on the way to the sender (an exchange): that
 * receiver reads too. Over TCP (OXMPI_TRANSPORT=tcp) the sender writes the message
 * to its socket, and with OXMPI_SINGLE_COPY=0 it pushes it through the
 * slots, both in its own calls: there only the data is checked. A sender
 * that sees nothing for 30 s fails the test and waits no more in later
 * rounds. */
#define _GNU_SOURCE
#include "outside.h"

#define BYTES (4 << 20)
#define EXCHANGED (48 << 10)
#define ROUNDS 4

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* one counter per rank, shared outside MPI */
    volatile int *got = shared_counters("p2p_progress");

    unsigned char *buf = malloc(BYTES), *back = malloc(EXCHANGED);
    const char *transport = getenv("OXMPI_TRANSPORT"), *single_copy = getenv("OXMPI_SINGLE_COPY");
    int promised = !(transport && strcmp(transport, "tcp") == 0) && !(single_copy && strcmp(single_copy, "0") == 0);
    int peer = rank % 2 == 0 ? rank + 1 : rank - 1, gave_up = !promised;
    /* rounds 0 to ROUNDS - 1 one way, then as many exchanges */
    for (int round = 0; round < 2 * ROUNDS && peer < size; round++) {
        int exchange = round >= ROUNDS, bytes = exchange ? EXCHANGED : BYTES;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank % 2 == 0) {
            for (int i = 0; i < bytes; i++) buf[i] = (unsigned char)(i * 7 + round + rank);
            MPI_Request q;
            MPI_Isend(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, &q);
            /* compute, no MPI call, until the receiver has it */
            double start = now();
            while (!gave_up && __atomic_load_n(&got[peer], __ATOMIC_ACQUIRE) <= round && now() - start < 30) {
            }
            if (!gave_up) {
                gave_up = __atomic_load_n(&got[peer], __ATOMIC_ACQUIRE) <= round;
                CHECK(!gave_up, "round %d: rank %d's receive of %d bytes did not complete while this rank computed",
                      round, peer, bytes);
            }
            if (exchange) {
                MPI_Recv(back, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int bad = 0;
                for (int i = 0; i < bytes && !bad; i++) bad = back[i] != (unsigned char)(i * 5 + round + peer);
                CHECK(!bad, "round %d: wrong data back from rank %d", round, peer);
            }
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Request q = MPI_REQUEST_NULL;
            if (exchange) {
                for (int i = 0; i < bytes; i++) back[i] = (unsigned char)(i * 5 + round + rank);
                MPI_Isend(back, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, &q);
            }
            memset(buf, 0, bytes);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            __atomic_store_n(&got[rank], round + 1, __ATOMIC_RELEASE);
            int bad = 0;
            for (int i = 0; i < bytes && !bad; i++) bad = buf[i] != (unsigned char)(i * 7 + round + peer);
            CHECK(!bad, "round %d: wrong data from rank %d", round, peer);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }
    free(buf);
    free(back);
    return finish();
}
