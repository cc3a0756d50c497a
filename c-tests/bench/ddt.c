/* Derived datatypes on the wire and in MPI_Pack: ping-pong of (a) a
 * matrix column (vector), (b) a face of a 3-D grid (subarray) and (c) an
 * irregular indexed type, and the time MPI_Pack takes for each. Prints
 *   RESULT ddt <case> <microseconds> */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pingpong(void *buf, MPI_Datatype t, int rank, int iters)
{
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Send(buf, 1, t, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, 1, t, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, 1, t, 0, 0, MPI_COMM_WORLD);
            }
        }
        double dt = (MPI_Wtime() - t0) / iters / 2;
        if (dt < best) best = dt;
    }
    return best * 1e6;
}

static double pack_time(void *buf, MPI_Datatype t, int iters)
{
    int size;
    MPI_Pack_size(1, t, MPI_COMM_WORLD, &size);
    char *out = malloc(size);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            int pos = 0;
            MPI_Pack(buf, 1, t, out, size, &pos, MPI_COMM_WORLD);
        }
        double dt = (MPI_Wtime() - t0) / iters;
        if (dt < best) best = dt;
    }
    free(out);
    return best * 1e6;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* (a) a column of a 1024 x 1024 matrix of doubles */
    int n = 1024;
    double *mat = calloc((size_t)n * n, sizeof(double));
    MPI_Datatype col;
    MPI_Type_vector(n, 1, n, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);

    /* (b) the y = 64 face of a 128^3 grid of doubles (128 runs of 128) */
    int g = 128, sizes[3] = {g, g, g}, sub[3] = {g, 1, g}, start[3] = {0, 64, 0};
    double *grid = calloc((size_t)g * g * g, sizeof(double));
    MPI_Datatype face;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &face);
    MPI_Type_commit(&face);

    /* (c) an irregular indexed type: 4000 blocks of 1..16 ints with gaps */
    int nb = 4000, *bl = malloc(nb * sizeof(int)), *dp = malloc(nb * sizeof(int)), span = 0;
    unsigned seed = 12345;
    for (int i = 0; i < nb; i++) {
        seed = seed * 1103515245 + 12345;
        bl[i] = 1 + (seed >> 16) % 16;
        dp[i] = span + 1 + (seed >> 8) % 4;
        span = dp[i] + bl[i];
    }
    int *irr_buf = calloc(span, sizeof(int));
    MPI_Datatype irr;
    MPI_Type_indexed(nb, bl, dp, MPI_INT, &irr);
    MPI_Type_commit(&irr);

    struct { const char *name; void *buf; MPI_Datatype t; } cases[3] = {
        {"vector_column", mat, col}, {"subarray_face", grid, face}, {"indexed_irregular", irr_buf, irr}};
    for (int c = 0; c < 3; c++) {
        double pp = pingpong(cases[c].buf, cases[c].t, rank, 500);
        if (rank == 0) printf("RESULT ddt %s_pingpong %.3f\n", cases[c].name, pp);
        double pk = pack_time(cases[c].buf, cases[c].t, 500);
        if (rank == 0) printf("RESULT ddt %s_pack %.3f\n", cases[c].name, pk);
    }
    MPI_Type_free(&col);
    MPI_Type_free(&face);
    MPI_Type_free(&irr);
    free(mat); free(grid); free(irr_buf); free(bl); free(dp);
    MPI_Finalize();
    return 0;
}
