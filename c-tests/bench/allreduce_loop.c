/* An allreduce loop on every rank (8 bytes and 64 KiB), the common case
 * of iterative solvers; at 4 ranks on 2 cores it shows how an MPI copes
 * with oversubscription. Prints
 *   RESULT allreduce <bytes> <microseconds per call> */
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
    int counts[] = {1, 8192};
    for (int c = 0; c < 2; c++) {
        int n = counts[c];
        double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
        for (int i = 0; i < n; i++) a[i] = rank + i;
        int iters = n == 1 ? 2000 : 200;
        iters = iters / scale > 0 ? iters / scale : 1;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++) MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t = (MPI_Wtime() - t) / iters;
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t < best) best = t;
        }
        if (rank == 0) printf("RESULT allreduce %zu %.3f\n", n * sizeof(double), best * 1e6);
        free(a);
        free(b);
    }
    MPI_Finalize();
    return 0;
}
