/* How much CPU time the ranks spend inside MPI: a profiling library
 * (through the standard PMPI_ names, so it works over any MPI) for the
 * calls the NAS-style kernels make. Built with an MPI's mpicc as a shared
 * object and loaded ahead of that MPI (LD_PRELOAD) by tools/bench_nas.py,
 * it times each call by the calling thread's CPU clock and, at
 * MPI_Finalize, rank 0 prints the sums over all ranks:
 *
 *   MPI CPU seconds = <inside MPI calls> of <from MPI_Init to MPI_Finalize>
 *
 * The kernels' times depend on the machine (their compute is the same
 * code whatever the MPI); this share is what the MPI library itself costs
 * the processors, waiting included (a rank that spins on a core another
 * rank could use shows here). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double inside, start;

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The call `call`, its CPU time added to `inside`. */
#define TIMED(call)                                                                                                    \
    do {                                                                                                               \
        double t0 = cpu_now();                                                                                         \
        int ret = (call);                                                                                              \
        inside += cpu_now() - t0;                                                                                      \
        return ret;                                                                                                    \
    } while (0)

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    start = cpu_now();
    return rc;
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c)
{
    TIMED(PMPI_Allgather(s, sc, st, r, rc, rt, c));
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    TIMED(PMPI_Allreduce(s, r, n, t, op, c));
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c)
{
    TIMED(PMPI_Alltoall(s, sc, st, r, rc, rt, c));
}

int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r, const int *rc,
                  const int *rd, MPI_Datatype rt, MPI_Comm c)
{
    TIMED(PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c));
}

int MPI_Barrier(MPI_Comm c)
{
    TIMED(PMPI_Barrier(c));
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    TIMED(PMPI_Bcast(b, n, t, root, c));
}

int MPI_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    TIMED(PMPI_Exscan(s, r, n, t, op, c));
}

int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    TIMED(PMPI_Reduce(s, r, n, t, op, root, c));
}

int MPI_Sendrecv(const void *s, int sc, MPI_Datatype st, int dest, int stag, void *r, int rc, MPI_Datatype rt,
                 int src, int rtag, MPI_Comm c, MPI_Status *status)
{
    TIMED(PMPI_Sendrecv(s, sc, st, dest, stag, r, rc, rt, src, rtag, c, status));
}

int MPI_Finalize(void)
{
    double mine[2] = {inside, cpu_now() - start}, all[2];
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(" MPI CPU seconds = %.3f of %.3f\n", all[0], all[1]);
    return PMPI_Finalize();
}
