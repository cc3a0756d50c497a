/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * Long messages (rendezvous): expected and unexpected, contiguous and
 * into a pair type with holes, many in flight, truncated prefix checks. */
#include "common.h"
#include <unistd.h>

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 131 + seed * 17) >> 3);
}

static int same(const unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)((i * 131 + seed * 17) >> 3)) return 0;
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    size_t sizes[] = {16384, 16385, 100000, 1 << 20, 16 << 20};
    for (int k = 0; k < 5; k++) {
        size_t n = sizes[k];
        unsigned char *out = malloc(n), *in = malloc(n);
        fill(out, n, rank + k);
        memset(in, 0, n);
        MPI_Status st;
        MPI_Sendrecv(out, (int)n, MPI_BYTE, right, k, in, (int)n, MPI_BYTE, left, k, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)n && same(in, n, left + k), "%zu bytes: count %d or data wrong", n, count);

        /* unexpected: the send is posted long before the receive */
        MPI_Request r;
        MPI_Isend(out, (int)n, MPI_BYTE, right, 100 + k, MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        memset(in, 0, n);
        MPI_Recv(in, (int)n, MPI_BYTE, left, 100 + k, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(same(in, n, left + k), "%zu bytes unexpected: data wrong", n);
        free(out);
        free(in);
    }

    /* a long message of pairs with holes (MPI_SHORT_INT: 6 data bytes in 8) */
    const int NP = 300000;
    struct { short v; int i; } *po = malloc(NP * sizeof *po), *pi = malloc(NP * sizeof *pi);
    for (int i = 0; i < NP; i++) { po[i].v = (short)(i + rank); po[i].i = i * 3 + rank; }
    memset(pi, 0, NP * sizeof *pi);
    MPI_Sendrecv(po, NP, MPI_SHORT_INT, right, 55, pi, NP, MPI_SHORT_INT, left, 55, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < NP; i++) bad += pi[i].v != (short)(i + left) || pi[i].i != i * 3 + left;
    CHECK(bad == 0, "%d wrong MPI_SHORT_INT items", bad);
    free(po);
    free(pi);

    /* a completed send's buffer may be reused at once: the receiver must
     * already have every byte (a send completing early shows up here);
     * from 32 KiB a blocking send's message, and an Isend's below the
     * single-copy threshold, are copied half by the sender, half by the
     * receiver */
    size_t reused[] = {32768, 40000, 100000, 4 << 20};
    for (int k = 0; k < 4 && size > 1; k++) {
        size_t n = reused[k];
        unsigned char *b = malloc(n);
        for (int it = 0; it < 20; it++) {
            if (rank == 0) {
                memset(b, it + 1, n);
                if (it % 2 == 0) {
                    MPI_Send(b, (int)n, MPI_BYTE, 1, 500, MPI_COMM_WORLD);
                } else {
                    /* not a blocking send, and late to its next call:
                     * the receiver waits for its half as for a pipeline */
                    MPI_Request r;
                    MPI_Isend(b, (int)n, MPI_BYTE, 1, 500, MPI_COMM_WORLD, &r);
                    if (it % 4 == 1) usleep(2000);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                }
                memset(b, 0xff, n);
            } else if (rank == 1) {
                MPI_Recv(b, (int)n, MPI_BYTE, 0, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) bad += b[i] != it + 1;
                CHECK(bad == 0, "%zu bytes, iteration %d: %zu bytes changed after the send completed", n, it, bad);
            }
        }
        free(b);
    }

    /* a receive posted where a long message waits already (the probe
     * takes it in first): its copy starts at the next progress, not in
     * MPI_Irecv; a cancel then finds it matched and leaves it, and
     * MPI_Test alone moves it to its end */
    size_t waiting[] = {40000, 1 << 20};
    for (int k = 0; k < 2 && size > 1; k++) {
        size_t n = waiting[k];
        unsigned char *out = malloc(n), *in = malloc(n);
        fill(out, n, rank + 40 + k);
        memset(in, 0, n);
        MPI_Request s, r;
        MPI_Isend(out, (int)n, MPI_BYTE, right, 600 + k, MPI_COMM_WORLD, &s);
        MPI_Status st;
        MPI_Probe(left, 600 + k, MPI_COMM_WORLD, &st);
        MPI_Irecv(in, (int)n, MPI_BYTE, left, 600 + k, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        int done = 0, cancelled = 1, count = -1;
        while (!done) MPI_Test(&r, &done, &st);
        MPI_Test_cancelled(&st, &cancelled);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(!cancelled, "%zu bytes: a matched receive was cancelled", n);
        CHECK(count == (int)n && st.MPI_SOURCE == left && same(in, n, left + 40 + k),
              "%zu bytes waiting for its receive: count %d, source %d or data wrong", n, count, st.MPI_SOURCE);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        free(out);
        free(in);
    }

    /* many long messages in flight at once (40000 bytes: below the
     * single-copy threshold, each split between sender and receiver) */
    enum { M = 8 };
    int lens[] = {40000, 200000};
    for (int k = 0; k < 2; k++) {
        int LEN = lens[k];
        unsigned char *bufs = malloc((size_t)M * LEN * 2);
        MPI_Request reqs[2 * M];
        for (int m = 0; m < M; m++) {
            fill(bufs + (size_t)m * LEN, LEN, rank * 7 + m);
            MPI_Irecv(bufs + (size_t)(M + m) * LEN, LEN, MPI_BYTE, left, m, MPI_COMM_WORLD, &reqs[m]);
        }
        for (int m = M - 1; m >= 0; m--)
            MPI_Isend(bufs + (size_t)m * LEN, LEN, MPI_BYTE, right, m, MPI_COMM_WORLD, &reqs[M + m]);
        MPI_Waitall(2 * M, reqs, MPI_STATUSES_IGNORE);
        for (int m = 0; m < M; m++)
            CHECK(same(bufs + (size_t)(M + m) * LEN, LEN, left * 7 + m), "%d bytes: message %d of %d wrong", LEN, m, M);
        free(bufs);
    }
    return finish();
}
