/* COMMS1-style ping-pong between ranks 0 and 1: half the round-trip time
 * and the bandwidth for sizes 0 B .. 16 MiB. Prints
 *   RESULT pingpong <bytes> <microseconds> <MB/s>
 * Runs with any MPI (built by its own mpicc). Extra ranks only idle in a
 * barrier, which is how the oversubscribed runs load the machine. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* "quick" divides the iteration counts by 20 (oversubscribed runs) */
    int scale = argc > 1 && strcmp(argv[1], "quick") == 0 ? 20 : 1;
    size_t max = 16u << 20;
    char *buf = malloc(max);
    memset(buf, 1, max);
    for (size_t n = 0; n <= max; n = n ? n * 4 : 1) {
        int iters = n <= 4096 ? 20000 : n <= (256 << 10) ? 2000 : n <= (2 << 20) ? 200 : 50;
        iters = iters / scale > 0 ? iters / scale : 1;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                if (rank == 0) {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            t = (MPI_Wtime() - t) / iters / 2;
            if (t < best) best = t;
        }
        if (rank == 0)
            printf("RESULT pingpong %zu %.3f %.1f\n", n, best * 1e6, n / best / 1e6);
        if (n == max) break;
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
