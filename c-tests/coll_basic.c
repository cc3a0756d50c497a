/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SINGLE_COPY_MIN=0,OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_ALLREDUCE=rabenseifner,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_BARRIER=dissemination;OXMPI_COLL_BCAST=binomial,OXMPI_COLL_ALLREDUCE=reduce_bcast,OXMPI_COLL_ALLGATHER=ring,OXMPI_COLL_ALLTOALL=pairwise,OXMPI_SHM_COLL_MAX=0,OXMPI_COLL_BARRIER=linear;OXMPI_COLL_ALLGATHER=linear,OXMPI_COLL_ALLTOALL=linear,OXMPI_COLL_ALLREDUCE=linear;OXMPI_COLL_ALLREDUCE=allgather,OXMPI_SHM_COLL_MAX=0
 * Barrier, Bcast, Reduce and Allreduce on MPI_COMM_WORLD and
 * MPI_COMM_SELF, every root, predefined operators, MPI_IN_PLACE, MAXLOC,
 * checked against results computed here. */
#include "common.h"
#include <complex.h>
#include <math.h>

static int fabs_diff(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int i = 0; i < 10; i++) MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_SELF);

    /* Bcast from every root, small and long */
    int counts[] = {1, 1000, 300000};
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        int *b = malloc(n * sizeof(int));
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++) b[i] = rank == root ? i * 3 + root : -1;
            MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD);
            int bad = 0;
            for (int i = 0; i < n; i++) bad += b[i] != i * 3 + root;
            CHECK(bad == 0, "bcast %d ints from %d: %d wrong", n, root, bad);
        }
        free(b);
    }
    /* Bcast of a pair type with holes */
    struct { short v; int i; } si[5];
    for (int i = 0; i < 5; i++) { si[i].v = rank == 0 ? (short)(i + 7) : 0; si[i].i = rank == 0 ? i * 2 : 0; }
    MPI_Bcast(si, 5, MPI_SHORT_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 5; i++) CHECK(si[i].v == i + 7 && si[i].i == i * 2, "short_int bcast item %d", i);

    /* Reduce with every root and the integer operators */
    MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    const char *names[] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR"};
    for (int o = 0; o < 10; o++) {
        for (int root = 0; root < size; root++) {
            long v[3] = {rank + 1, (rank % 2) ? 0x0f : 0xf0, rank == 1}, r[3] = {0, 0, 0};
            MPI_Reduce(v, r, 3, MPI_LONG, ops[o], root, MPI_COMM_WORLD);
            if (rank != root) continue;
            for (int k = 0; k < 3; k++) {
                long e = 0;
                for (int p = 0; p < size; p++) {
                    long x = k == 0 ? p + 1 : k == 1 ? ((p % 2) ? 0x0f : 0xf0) : p == 1;
                    if (p == 0) { e = x; continue; } /* one rank: the input, unchanged */
                    switch (o) {
                    case 0: e += x; break; case 1: e *= x; break;
                    case 2: e = x > e ? x : e; break; case 3: e = x < e ? x : e; break;
                    case 4: e = e && x; break; case 5: e = e || x; break; case 6: e = (!e) != (!x); break;
                    case 7: e &= x; break; case 8: e |= x; break; case 9: e ^= x; break;
                    }
                }
                CHECK(r[k] == e, "MPI_%s root %d item %d: %ld, expected %ld", names[o], root, k, r[k], e);
            }
        }
    }

    /* Allreduce of doubles: every rank gets the same bits */
    double d[4], dr[4];
    for (int i = 0; i < 4; i++) d[i] = 0.1 * (rank + 1) * (i + 1);
    MPI_Allreduce(d, dr, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double first[4];
    memcpy(first, dr, sizeof dr);
    MPI_Bcast(first, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++) {
        double e = 0;
        for (int p = 0; p < size; p++) e += 0.1 * (p + 1) * (i + 1);
        CHECK(fabs_diff(dr[i], e), "allreduce sum[%d] %g vs %g", i, dr[i], e);
        CHECK(memcmp(&dr[i], &first[i], sizeof(double)) == 0, "allreduce result differs between ranks");
    }

    /* in place */
    int x = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(x == size, "in-place allreduce max %d", x);
    int y = rank + 1;
    if (rank == size - 1)
        MPI_Reduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    else
        MPI_Reduce(&y, NULL, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1) CHECK(y == size * (size + 1) / 2, "in-place reduce %d", y);

    /* MAXLOC / MINLOC with ties resolved to the lower index */
    struct { double v; int i; } in = {(double)(rank % 2), rank}, mx, mn;
    MPI_Allreduce(&in, &mx, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(&in, &mn, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    CHECK(mx.v == (size > 1 ? 1.0 : 0.0) && mx.i == (size > 1 ? 1 : 0), "maxloc %g at %d", mx.v, mx.i);
    CHECK(mn.v == 0.0 && mn.i == 0, "minloc %g at %d", mn.v, mn.i);

    /* complex product and long double sum */
    double _Complex z = 1.0 + 1.0 * I, zr;
    MPI_Allreduce(&z, &zr, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
    double _Complex ze = 1.0;
    for (int p = 0; p < size; p++) ze *= 1.0 + 1.0 * I;
    CHECK(creal(zr) == creal(ze) && cimag(zr) == cimag(ze), "complex prod");
    long double ld = rank + 0.5L, ldr;
    MPI_Allreduce(&ld, &ldr, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(ldr == size * (size - 1) / 2.0L + 0.5L * size, "long double sum");

    /* MPI_COMM_SELF */
    int s = 9, sr = 0;
    MPI_Allreduce(&s, &sr, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    CHECK(sr == 9, "self allreduce %d", sr);
    MPI_Bcast(&s, 1, MPI_INT, 0, MPI_COMM_SELF);
    return finish();
}
