/* The common collectives at 8 B, 1 KiB, 64 KiB and 1 MiB: Barrier, Bcast
 * (the whole buffer), Allreduce (doubles, MPI_SUM), Alltoall and
 * Allgather (the size is one rank's block), Scan (doubles, MPI_SUM), and
 * Gather and Scatter (root 0), Alltoallv and Allgatherv (equal counts,
 * blocks in reverse rank order), the size one rank's block. Each case runs for about
 * 0.1 s (the iteration count comes from one timed call, agreed by all
 * ranks), three times; the best counts. Prints
 *   RESULT <op>_<size> <label> <microseconds per call>
 *   coll [quick] [SIZE...]   (the sizes in bytes, up to 1 MiB, instead of those four) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BARRIER, BCAST, ALLREDUCE, ALLTOALL, ALLGATHER, SCAN, GATHER, SCATTER, ALLTOALLV, ALLGATHERV, OPS };
static const char *names[] = {"barrier", "bcast", "allreduce", "alltoall", "allgather",
                              "scan", "gather", "scatter", "alltoallv", "allgatherv"};
static char *sbuf, *rbuf;
static int nranks, *counts, *displs;

/* counts of `bytes` for every rank, blocks in reverse rank order */
static void v_layout(int bytes)
{
    for (int r = 0; r < nranks; r++) {
        counts[r] = bytes;
        displs[r] = (nranks - 1 - r) * bytes;
    }
}

static void once(int op, int bytes)
{
    switch (op) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD); break;
    case SCAN: MPI_Scan(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case ALLTOALLV:
        MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLGATHERV:
        MPI_Allgatherv(sbuf, bytes, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        break;
    }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* "quick" (oversubscribed runs): about 0.03 s a case */
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    double budget = quick ? 0.03 : 0.1;
    int sizes[8] = {8, 1024, 65536, 1 << 20}, nsizes = 4;
    if (argc > 1 + quick) {
        nsizes = 0;
        for (int i = 1 + quick; i < argc && nsizes < 8; i++) {
            int v = atoi(argv[i]);
            if (v > 0 && v <= 1 << 20) sizes[nsizes++] = v;
        }
    }
    /* written, so that no page is the kernel's shared zero page */
    size_t len = (size_t)nranks << 20;
    sbuf = malloc(len);
    rbuf = malloc(len);
    for (size_t i = 0; i < len / sizeof(double); i++) {
        ((double *)sbuf)[i] = (double)(i % 1000) * 0.5 + rank;
        ((double *)rbuf)[i] = 0;
    }
    counts = malloc(nranks * sizeof(int));
    displs = malloc(nranks * sizeof(int));
    for (int op = BARRIER; op < OPS; op++)
        for (int s = 0; s < (op == BARRIER ? 1 : nsizes); s++) {
            int bytes = sizes[s];
            v_layout(bytes);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            once(op, bytes);
            t = MPI_Wtime() - t;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int iters = t > 0 ? (int)(budget / t) : 2000;
            iters = iters < 1 ? 1 : iters > 2000 ? 2000 : iters;
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                t = MPI_Wtime();
                for (int i = 0; i < iters; i++) once(op, bytes);
                t = (MPI_Wtime() - t) / iters;
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (t < best) best = t;
            }
            if (rank == 0) {
                if (op == BARRIER)
                    printf("RESULT %s %s %.3f\n", names[op], names[op], best * 1e6);
                else
                    printf("RESULT %s_%d %s_%d %.3f\n", names[op], bytes, names[op], bytes, best * 1e6);
            }
        }
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
