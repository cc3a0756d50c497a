/* CG: the NAS conjugate gradient kernel. The smallest eigenvalue of a
 * random sparse symmetric positive definite matrix (the specification's
 * sum of weighted outer products of random sparse vectors, shifted) is
 * estimated by inverse power iteration, each step solving A z = x with 25
 * unpreconditioned CG iterations. Rows are dealt out to processes in
 * blocks; before each product with A every process gets the whole search
 * vector from the others by MPI_Sendrecv (pairwise exchange), and every dot
 * product is an MPI_Allreduce. Verification: zeta against the
 * specification's value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nas.h"

#define CGITMAX 25
#define RCOND 0.1

static int na, nonzer, niter;
static double shift, zeta_ref;
static int rank, np, row0, row1; /* this process's rows: [row0, row1) */
static int *rowstr, *colidx;     /* local rows, compressed */
static double *aval;
static int *counts, *displs;

static void class_params(char c)
{
    switch (c) {
    case 'S': na = 1400; nonzer = 7; niter = 15; shift = 10.0; zeta_ref = 8.5971775078648; break;
    case 'W': na = 7000; nonzer = 8; niter = 15; shift = 12.0; zeta_ref = 10.362595087124; break;
    default: na = 14000; nonzer = 11; niter = 15; shift = 20.0; zeta_ref = 17.130235054029; break;
    }
}

static uint64_t tran = 314159265ULL;

/* A random sparse vector: nz distinct indices in [1, n] with values. */
static void sparse_vector(int n, int nz, int pow2, double *v, int *iv, char *mark)
{
    int k = 0;
    while (k < nz) {
        double value = nas_rand(&tran, NAS_A);
        double where = nas_rand(&tran, NAS_A);
        int i = (int)(pow2 * where) + 1;
        if (i > n || mark[i])
            continue;
        mark[i] = 1;
        v[k] = value;
        iv[k] = i;
        k++;
    }
    for (int j = 0; j < k; j++)
        mark[iv[j]] = 0;
}

/* One entry being summed into row `row` (entries kept sorted by column). */
struct row {
    int n, cap;
    int *col;
    double *val;
};

static void add_entry(struct row *r, int col, double v)
{
    int lo = 0, hi = r->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (r->col[mid] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->n && r->col[lo] == col) {
        r->val[lo] += v;
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->col = realloc(r->col, sizeof(int) * r->cap);
        r->val = realloc(r->val, sizeof(double) * r->cap);
    }
    memmove(r->col + lo + 1, r->col + lo, sizeof(int) * (r->n - lo));
    memmove(r->val + lo + 1, r->val + lo, sizeof(double) * (r->n - lo));
    r->col[lo] = col;
    r->val[lo] = v;
    r->n++;
}

/* The specification's matrix: sum over i of w_i x_i x_i^T with x_i a random
 * sparse vector whose element i is 0.5, w_i = rcond^((i-1)/n), plus
 * (rcond - shift) on the diagonal. Every process draws every vector (one
 * random sequence) and keeps its rows. */
static void make_matrix(void)
{
    int pow2 = 1;
    while (pow2 < na)
        pow2 *= 2;
    double *v = malloc(sizeof(double) * (nonzer + 1));
    int *iv = malloc(sizeof(int) * (nonzer + 1));
    char *mark = calloc((size_t)na + 1, 1);
    struct row *rows = calloc((size_t)(row1 - row0), sizeof(struct row));
    double size = 1.0, ratio = pow(RCOND, 1.0 / na);
    for (int i = 1; i <= na; i++) {
        sparse_vector(na, nonzer, pow2, v, iv, mark);
        int nzv = nonzer, found = 0;
        for (int k = 0; k < nzv; k++)
            if (iv[k] == i) {
                v[k] = 0.5;
                found = 1;
            }
        if (!found) {
            v[nzv] = 0.5;
            iv[nzv] = i;
            nzv++;
        }
        for (int a = 0; a < nzv; a++) {
            int j = iv[a] - 1;
            if (j < row0 || j >= row1)
                continue;
            double scale = size * v[a];
            for (int b = 0; b < nzv; b++) {
                int jcol = iv[b] - 1;
                double va = v[b] * scale;
                if (jcol == j && j == i - 1)
                    va = va + RCOND - shift;
                add_entry(&rows[j - row0], jcol, va);
            }
        }
        size *= ratio;
    }
    int nloc = row1 - row0, nnz = 0;
    for (int r = 0; r < nloc; r++)
        nnz += rows[r].n;
    rowstr = malloc(sizeof(int) * (nloc + 1));
    colidx = malloc(sizeof(int) * (nnz ? nnz : 1));
    aval = malloc(sizeof(double) * (nnz ? nnz : 1));
    rowstr[0] = 0;
    for (int r = 0; r < nloc; r++) {
        memcpy(colidx + rowstr[r], rows[r].col, sizeof(int) * rows[r].n);
        memcpy(aval + rowstr[r], rows[r].val, sizeof(double) * rows[r].n);
        rowstr[r + 1] = rowstr[r] + rows[r].n;
        free(rows[r].col);
        free(rows[r].val);
    }
    free(rows);
    free(v);
    free(iv);
    free(mark);
}

/* The whole of a distributed vector: each process's block, exchanged
 * pairwise (step s: send to rank+s, receive from rank-s). */
static void gather(const double *mine, double *all)
{
    memcpy(all + row0, mine, sizeof(double) * (row1 - row0));
    for (int s = 1; s < np; s++) {
        int to = (rank + s) % np, from = (rank - s + np) % np;
        MPI_Sendrecv(mine, row1 - row0, MPI_DOUBLE, to, s, all + displs[from], counts[from], MPI_DOUBLE, from, s,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static double dot(const double *a, const double *b)
{
    double s = 0, all;
    for (int i = 0; i < row1 - row0; i++)
        s += a[i] * b[i];
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* out = A * whole (this process's rows). */
static void matvec(const double *whole, double *out)
{
    for (int r = 0; r < row1 - row0; r++) {
        double s = 0;
        for (int k = rowstr[r]; k < rowstr[r + 1]; k++)
            s += aval[k] * whole[colidx[k]];
        out[r] = s;
    }
}

/* Solve A z = x approximately; returns ||x - A z||. */
static double conj_grad(const double *x, double *z, double *p, double *q, double *r, double *whole)
{
    int n = row1 - row0;
    for (int i = 0; i < n; i++) {
        q[i] = 0;
        z[i] = 0;
        r[i] = x[i];
        p[i] = r[i];
    }
    double rho = dot(r, r);
    for (int it = 0; it < CGITMAX; it++) {
        gather(p, whole);
        matvec(whole, q);
        double alpha = rho / dot(p, q), rho0 = rho;
        for (int i = 0; i < n; i++) {
            z[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        rho = dot(r, r);
        double beta = rho / rho0;
        for (int i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
    }
    gather(z, whole);
    matvec(whole, r);
    double s = 0, all;
    for (int i = 0; i < n; i++)
        s += (x[i] - r[i]) * (x[i] - r[i]);
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sqrt(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    class_params(CLASS_CHAR);
    counts = malloc(sizeof(int) * np);
    displs = malloc(sizeof(int) * np);
    for (int p = 0; p < np; p++) {
        displs[p] = (int)((long)na * p / np);
        counts[p] = (int)((long)na * (p + 1) / np) - displs[p];
    }
    row0 = displs[rank];
    row1 = row0 + counts[rank];

    nas_rand(&tran, NAS_A); /* the specification draws one number first */
    make_matrix();
    int n = row1 - row0;
    double *x = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *p = malloc(sizeof(double) * n);
    double *q = malloc(sizeof(double) * n), *r = malloc(sizeof(double) * n), *whole = malloc(sizeof(double) * na);
    double zeta = 0, rnorm = 0;

    for (int pass = 0; pass < 2; pass++) { /* pass 0: once untimed, as the specification does */
        for (int i = 0; i < n; i++)
            x[i] = 1.0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 1; it <= (pass ? niter : 1); it++) {
            rnorm = conj_grad(x, z, p, q, r, whole);
            double xz = dot(x, z), zz = dot(z, z);
            double scale = 1.0 / sqrt(zz);
            zeta = shift + 1.0 / xz;
            if (pass && rank == 0 && (it == 1 || it == niter))
                printf("    %5d       %20.14e%20.13e\n", it, rnorm, zeta);
            for (int i = 0; i < n; i++)
                x[i] = scale * z[i];
        }
        double t = MPI_Wtime() - t0, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (pass && rank == 0) {
            double err = fabs(zeta - zeta_ref);
            int ok = err <= 1e-10;
            printf(" NAS-style CG (oxmpi c-tests/bench/nas), class %c, %d processes\n", CLASS_CHAR, np);
            printf(" Zeta %20.13e, reference %20.13e, error %20.13e\n", zeta, zeta_ref, err);
            double nz1 = nonzer * (nonzer + 1.0);
            double mops = 2.0 * niter * na * (3.0 + nz1 + 25.0 * (5.0 + nz1) + 3.0) / tmax / 1e6;
            nas_report("CG", na, niter, tmax, np, mops, "floating point", ok);
        }
    }
    MPI_Finalize();
    return 0;
}
