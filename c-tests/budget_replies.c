/* oxmpi-test: ranks=2,3 env=OXMPI_UNEXPECTED_BYTES=4096 variants=OXMPI_SINGLE_COPY=0;OXMPI_TRANSPORT=tcp
 * A rank over its unexpected-message budget (OXMPI_UNEXPECTED_BYTES)
 * still takes the replies its own sends wait for: rank 1 holds 16 KiB of
 * rank 0's messages it has not received yet, then sends rank 0 a long
 * message (which waits for rank 0's Cts or Fin), a synchronous short one
 * (which waits for its Ack), and then both again with more of rank 0's
 * messages sent before the Ack (so the Ack sits behind messages that
 * would join the unexpected queue); then rank 1 receives a long message
 * from rank 0 (over TCP its first part follows the RTS in an Early frame,
 * which belongs to the receive matched a frame before). Last, MPI_Probe,
 * MPI_Mprobe and MPI_Iprobe (of any source) find messages behind more
 * than the budget of others. Rank 1 used to leave rank 0's frames where
 * they were, replies and all, and waited for ever. */
#include "common.h"

#define SMALL 16
#define LONG (1 << 20)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *big = malloc(LONG), small[1024];
    for (int round = 0; round < 2; round++) {
        int base = 100 * round;
        if (rank == 0) {
            memset(small, round + 1, sizeof small);
            for (int i = 0; i < SMALL; i++) MPI_Send(small, sizeof small, MPI_CHAR, 1, base + 1, MPI_COMM_WORLD);
            MPI_Send(small, 1, MPI_CHAR, 1, base + 2, MPI_COMM_WORLD); /* rank 1 drains the others to find it */
            MPI_Recv(big, LONG, MPI_CHAR, 1, base + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long wrong = 0;
            for (long i = 0; i < LONG; i++) wrong += big[i] != (char)(i * 7 + round);
            CHECK(wrong == 0, "round %d: %ld bytes of rank 1's long message wrong", round, wrong);
            if (round == 1) /* messages after the Fin, before rank 1 reads it */
                for (int i = 0; i < SMALL; i++) MPI_Send(small, sizeof small, MPI_CHAR, 1, base + 5, MPI_COMM_WORLD);
            int x;
            MPI_Recv(&x, 1, MPI_INT, 1, base + 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(x == 7 + round, "round %d: synchronous message %d", round, x);
            for (long i = 0; i < LONG; i++) big[i] = (char)(i * 7 + round + 1);
            MPI_Send(big, LONG, MPI_CHAR, 1, base + 6, MPI_COMM_WORLD);
        } else if (rank == 1) {
            char one;
            MPI_Recv(&one, 1, MPI_CHAR, 0, base + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (long i = 0; i < LONG; i++) big[i] = (char)(i * 7 + round);
            MPI_Send(big, LONG, MPI_CHAR, 0, base + 3, MPI_COMM_WORLD);
            int x = 7 + round;
            MPI_Ssend(&x, 1, MPI_INT, 0, base + 4, MPI_COMM_WORLD);
            MPI_Recv(big, LONG, MPI_CHAR, 0, base + 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long wrong = 0;
            for (long i = 0; i < LONG; i++) wrong += big[i] != (char)(i * 7 + round + 1);
            CHECK(wrong == 0, "round %d: %ld bytes of rank 0's long message wrong", round, wrong);
            int bad = 0;
            for (int tag = base + 1; tag <= base + 5; tag += 4)
                for (int i = 0; i < (tag == base + 5 && round == 0 ? 0 : SMALL); i++) {
                    MPI_Recv(small, sizeof small, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    bad += small[0] != round + 1 || small[sizeof small - 1] != round + 1;
                }
            CHECK(bad == 0, "round %d: %d short messages wrong", round, bad);
        }
    }
    /* a probe for a message behind more than the budget of others */
    if (rank == 0) {
        for (int i = 0; i < SMALL; i++) MPI_Send(small, sizeof small, MPI_CHAR, 1, 201, MPI_COMM_WORLD);
        MPI_Send(small, 8, MPI_CHAR, 1, 202, MPI_COMM_WORLD);
        MPI_Send(small, 8, MPI_CHAR, 1, 203, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Status st;
        int flag = 0, n = -1;
        MPI_Probe(0, 202, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &n);
        CHECK(n == 8 && st.MPI_TAG == 202, "MPI_Probe: %d bytes, tag %d", n, st.MPI_TAG);
        MPI_Message m;
        MPI_Mprobe(0, 202, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(small, 8, MPI_CHAR, &m, MPI_STATUS_IGNORE);
        for (long spins = 0; !flag && spins < 100000000; spins++) MPI_Iprobe(MPI_ANY_SOURCE, 203, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag && st.MPI_SOURCE == 0, "MPI_Iprobe of any source found %s", flag ? "another source" : "nothing");
        MPI_Recv(small, 8, MPI_CHAR, 0, 203, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < SMALL; i++) MPI_Recv(small, sizeof small, MPI_CHAR, 0, 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(big);
    return finish();
}
