/* oxmpi-test: ranks=2,3,4 env=OXMPI_SINGLE_COPY_MIN=1G
 * Long Bcasts and Alltoalls back to back, with no check between them:
 * every rank publishes its pieces (32 KiB each, in the long mailbox's
 * 16 slots) ahead of what the others have read, so every rank comes to
 * reuse a slot while the others' later pieces still wait for it. A
 * writer must then wait only for the readers of the slot it reuses, not
 * for everything it has published (61ff159 waited for all of it, and at
 * 3 ranks each rank waited on the others for good, 8 runs in 10). The
 * last round's results are checked, byte by byte. */
#include "common.h"

#define ROUNDS 40

static unsigned char val(int from, int to, size_t i)
{
    return (unsigned char)(from * 37 + to * 11 + i * 7 + (i >> 13));
}

int main(int argc, char **argv)
{
    int me, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    /* a piece count that is not whole, more pieces than the mailbox has slots */
    size_t b = (1 << 20) + 7;
    unsigned char *x = malloc(b * n), *y = malloc(b * n), *c = malloc(b);
    /* filled once: no work between the calls lets the ranks run ahead */
    for (size_t i = 0; i < b; i++) c[i] = val(me, me, i);
    for (int t = 0; t < n; t++)
        for (size_t i = 0; i < b; i++) x[t * b + i] = val(me, t, i);
    for (int k = 0; k < ROUNDS; k++) {
        /* rank 0's bytes from round 0 on, passed on by every root */
        MPI_Bcast(c, (int)b, MPI_BYTE, k % n, MPI_COMM_WORLD);
        memset(y, 0xee, b * n);
        MPI_Alltoall(x, (int)b, MPI_BYTE, y, (int)b, MPI_BYTE, MPI_COMM_WORLD);
    }
    long bad = -1;
    for (size_t i = 0; i < b && bad < 0; i++)
        if (c[i] != val(0, 0, i)) bad = (long)i;
    CHECK(bad < 0, "bcast: byte %ld wrong", bad);
    for (int r = 0; r < n; r++) {
        bad = -1;
        for (size_t i = 0; i < b && bad < 0; i++)
            if (y[r * b + i] != val(r, me, i)) bad = (long)i;
        CHECK(bad < 0, "alltoall: block from %d, byte %ld wrong", r, bad);
    }
    free(x);
    free(y);
    free(c);
    return finish();
}
