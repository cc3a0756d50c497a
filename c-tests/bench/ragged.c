/* Allgatherv and Alltoallv of blocks of their own sizes: in the
 * Allgatherv rank r's part is (r + 1) units, in the Alltoallv rank s's
 * block for rank r is (1 + (s + r) % 3) units. Each case runs for about
 * 0.03 s (the iteration count comes from one timed call, agreed by all
 * ranks), three times; the best counts. Prints
 *   RESULT <op>_ragged_<unit> <label> <microseconds per call>
 *   ragged UNIT...   (units in bytes, up to 64 KiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, nranks;
static char *sbuf, *rbuf;
static int *scounts, *sdispls, *rcounts, *rdispls;

/* The layouts of `op` (0: Allgatherv, 1: Alltoallv) with `unit`. */
static void layout(int op, int unit)
{
    int s = 0, r = 0;
    for (int q = 0; q < nranks; q++) {
        scounts[q] = op == 0 ? (rank + 1) * unit : (1 + (rank + q) % 3) * unit;
        rcounts[q] = op == 0 ? (q + 1) * unit : (1 + (q + rank) % 3) * unit;
        sdispls[q] = s;
        rdispls[q] = r;
        s += scounts[q];
        r += rcounts[q];
    }
}

static void once(int op)
{
    if (op == 0)
        MPI_Allgatherv(sbuf, scounts[0], MPI_BYTE, rbuf, rcounts, rdispls, MPI_BYTE, MPI_COMM_WORLD);
    else
        MPI_Alltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf, rcounts, rdispls, MPI_BYTE, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    static const char *names[] = {"allgatherv", "alltoallv"};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* the most either takes: nranks blocks of 3 or nranks units */
    size_t len = (size_t)3 * nranks * nranks * (64 << 10);
    sbuf = malloc(len);
    rbuf = malloc(len);
    for (size_t i = 0; i < len; i++) {
        sbuf[i] = (char)(i + rank);
        rbuf[i] = 0;
    }
    scounts = malloc(nranks * sizeof(int));
    sdispls = malloc(nranks * sizeof(int));
    rcounts = malloc(nranks * sizeof(int));
    rdispls = malloc(nranks * sizeof(int));
    for (int op = 0; op < 2; op++)
        for (int a = 1; a < argc; a++) {
            int unit = atoi(argv[a]);
            if (unit <= 0 || unit > 64 << 10)
                continue;
            layout(op, unit);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            once(op);
            t = MPI_Wtime() - t;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int iters = t > 0 ? (int)(0.03 / t) : 2000;
            iters = iters < 1 ? 1 : iters > 2000 ? 2000 : iters;
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                t = MPI_Wtime();
                for (int i = 0; i < iters; i++) once(op);
                t = (MPI_Wtime() - t) / iters;
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (t < best) best = t;
            }
            if (rank == 0)
                printf("RESULT %s_ragged_%d %s_ragged_%d %.3f\n", names[op], unit, names[op], unit, best * 1e6);
        }
    free(sbuf), free(rbuf), free(scounts), free(sdispls), free(rcounts), free(rdispls);
    MPI_Finalize();
    return 0;
}
