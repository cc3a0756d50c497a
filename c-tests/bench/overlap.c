/* What a progress thread buys and costs (OXMPI_ASYNC_PROGRESS=1, MPICH's
 * MPIR_CVAR_ASYNC_PROGRESS=1), at 2 ranks. Prints
 *   RESULT <case> <label> <microseconds>
 * for three cases, each the median of its iterations, best of 3 runs:
 *   late_send: rank 0 posts an MPI_Irecv of 4 MiB, then computes for 2 ms
 *     without calling MPI, then waits; the time of rank 1's blocking
 *     MPI_Send of the 4 MiB (started with the receive posted). Without a
 *     thread that moves it, the send ends only once rank 0 calls MPI again:
 *     about the 2 ms.
 *   iallreduce_compute: both ranks start an MPI_Iallreduce of 1 MiB of
 *     doubles, compute for 500 us, and wait: the time of the whole.
 *   pingpong_8: a ping-pong of 8 bytes, half the round trip: what the
 *     thread costs the latency of blocking calls. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile double sink;

/* Work of `secs` seconds, no MPI call. */
static void compute(double secs)
{
    double start = now(), x = 1;
    while (now() - start < secs)
        for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, n, sizeof *t, cmp);
    return t[n / 2];
}

#define ITERS 40
#define LATE (4 << 20)
#define REDUCED (1 << 17) /* doubles: 1 MiB */
#define PINGS 20000

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc(LATE);
    double *a = malloc(REDUCED * sizeof(double)), *b = malloc(REDUCED * sizeof(double));
    memset(buf, rank + 1, LATE);
    for (int i = 0; i < REDUCED; i++) a[i] = i + rank;
    double t[ITERS], late = 1e30, both = 1e30, ping = 1e30;
    for (int run = 0; run < 3; run++) {
        for (int i = 0; i < ITERS; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Request q;
                MPI_Irecv(buf, LATE, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &q);
                MPI_Barrier(MPI_COMM_WORLD);
                compute(2e-3);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                t[i] = 0;
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
                double s = now();
                MPI_Send(buf, LATE, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                t[i] = now() - s;
            }
        }
        double m = median(t, ITERS);
        MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        late = m < late ? m : late;

        for (int i = 0; i < ITERS; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double s = now();
            MPI_Request q;
            MPI_Iallreduce(a, b, REDUCED, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
            compute(500e-6);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            t[i] = now() - s;
        }
        m = median(t, ITERS);
        MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        both = m < both ? m : both;

        MPI_Barrier(MPI_COMM_WORLD);
        double s = now();
        for (int i = 0; i < PINGS; i++) {
            if (rank == 0) {
                MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        m = (now() - s) / PINGS / 2;
        MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        ping = m < ping ? m : ping;
    }
    if (b[1] != 2 * 1 + 1) fprintf(stderr, "rank %d: wrong allreduce sum %g\n", rank, b[1]);
    if (rank == 0) {
        printf("RESULT late_send late_send %.2f\n", late * 1e6);
        printf("RESULT iallreduce_compute iallreduce_compute %.2f\n", both * 1e6);
        printf("RESULT pingpong_8 pingpong_8 %.2f\n", ping * 1e6);
    }
    free(buf);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
