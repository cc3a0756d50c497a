/* Nonblocking and persistent collectives, each started and waited at
 * once, at 8 B and 64 KiB: Ibarrier, Ibcast (the whole buffer), Iallreduce
 * (doubles, MPI_SUM; on MPI_COMM_WORLD and on a duplicate of it),
 * Ialltoall and Iallgather (the size is one rank's block), and MPI 4's
 * persistent Allreduce and Bcast (MPI_Start, then MPI_Wait; Open MPI 4's
 * MPIX_ ones from its mpi-ext.h; left out by an MPI that has neither),
 * and a persistent Allreduce made, started, waited and freed each time
 * (`allreduce_init_free`). Each case runs for about
 * 0.1 s (the iteration count comes from one timed call, agreed by all
 * ranks), three times; the best counts. Prints
 *   RESULT <op>_<size> <label> <microseconds per call> */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if MPI_VERSION < 4 && defined(OPEN_MPI)
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Bcast_init MPIX_Bcast_init
#define PERSISTENT 1
#endif
#elif MPI_VERSION >= 4
#define PERSISTENT 1
#endif

enum { IBARRIER, IBCAST, IALLREDUCE, IALLTOALL, IALLGATHER, IALLREDUCE_DUP, ALLREDUCE_INIT, BCAST_INIT, ALLREDUCE_INIT_FREE, OPS };
static const char *names[] = {"ibarrier",       "ibcast",         "iallreduce",     "ialltoall",
                              "iallgather",     "iallreduce_dup", "allreduce_init", "bcast_init",
                              "allreduce_init_free"};
static char *sbuf, *rbuf;
/* a duplicate of MPI_COMM_WORLD, as libraries make for their own traffic */
static MPI_Comm dup;

/* Start operation `op` of `bytes` (a persistent one: `*q` is made) */
static void start(int op, int bytes, MPI_Request *q)
{
    switch (op) {
    case IBARRIER: MPI_Ibarrier(MPI_COMM_WORLD, q); break;
    case IBCAST: MPI_Ibcast(sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, q); break;
    case IALLREDUCE: MPI_Iallreduce(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, q); break;
    case IALLTOALL: MPI_Ialltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, q); break;
    case IALLGATHER: MPI_Iallgather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, q); break;
    case IALLREDUCE_DUP: MPI_Iallreduce(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, dup, q); break;
#ifdef PERSISTENT
    case ALLREDUCE_INIT_FREE:
        MPI_Allreduce_init(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, q);
        MPI_Start(q);
        break;
#endif
    default: MPI_Start(q);
    }
}

/* Wait for `*q`; the one made each time is freed too. */
static void finish(int op, MPI_Request *q)
{
    MPI_Wait(q, MPI_STATUS_IGNORE);
    if (op == ALLREDUCE_INIT_FREE)
        MPI_Request_free(q);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    /* "quick" (oversubscribed runs): about 0.03 s a case */
    double budget = argc > 1 && strcmp(argv[1], "quick") == 0 ? 0.03 : 0.1;
    int sizes[] = {8, 65536};
    /* written, so that no page is the kernel's shared zero page */
    size_t len = (size_t)nranks * 65536;
    sbuf = malloc(len);
    rbuf = malloc(len);
    for (size_t i = 0; i < len / sizeof(double); i++) {
        ((double *)sbuf)[i] = (double)(i % 1000) * 0.5 + rank;
        ((double *)rbuf)[i] = 0;
    }
    for (int op = IBARRIER; op < OPS; op++)
        for (int s = 0; s < (op == IBARRIER ? 1 : 2); s++) {
            int bytes = sizes[s];
            MPI_Request q = MPI_REQUEST_NULL;
#ifdef PERSISTENT
            if (op == ALLREDUCE_INIT)
                MPI_Allreduce_init(sbuf, rbuf, bytes / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
            if (op == BCAST_INIT)
                MPI_Bcast_init(sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
#else
            if (op >= ALLREDUCE_INIT)
                continue;
#endif
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            start(op, bytes, &q);
            finish(op, &q);
            t = MPI_Wtime() - t;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int iters = t > 0 ? (int)(budget / t) : 2000;
            iters = iters < 1 ? 1 : iters > 20000 ? 20000 : iters;
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                MPI_Barrier(MPI_COMM_WORLD);
                t = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    start(op, bytes, &q);
                    finish(op, &q);
                }
                t = (MPI_Wtime() - t) / iters;
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (t < best)
                    best = t;
            }
            if (op == ALLREDUCE_INIT || op == BCAST_INIT)
                MPI_Request_free(&q);
            if (rank == 0) {
                if (op == IBARRIER)
                    printf("RESULT %s %s %.3f\n", names[op], names[op], best * 1e6);
                else
                    printf("RESULT %s_%d %s_%d %.3f\n", names[op], bytes, names[op], bytes, best * 1e6);
            }
        }
    free(sbuf);
    free(rbuf);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
