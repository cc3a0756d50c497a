/* MG: the NAS multigrid kernel. Four V-cycles of the specification's
 * 27-point operators (residual A, smoother S, restriction P, trilinear
 * prolongation Q) on a periodic N^3 grid whose right-hand side is zero but
 * +1 at the ten largest and -1 at the ten smallest of N^3 numbers from the
 * specification's generator. Each grid level is cut into slabs along z
 * (MPI_Sendrecv of the boundary planes after every operator); levels too
 * small for every process to hold a plane are kept whole on every process
 * (MPI_Allgather of the finer level). Verification: the final residual's L2
 * norm against the specification's value. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "nas.h"

static int rank, np;
static int N, nit, lt;
static double verify_ref;

/* One grid level: (n + 2) x (n + 2) x (planes + 2) with periodic ghosts;
 * `z0`: the global index of local plane 0 (interior planes z0+1 ...). */
struct grid {
    int n, planes, z0, whole;
    double *a;
};

#define AT(g, i1, i2, i3) ((g)->a[(size_t)(i1) + (size_t)((g)->n + 2) * ((size_t)(i2) + (size_t)((g)->n + 2) * (size_t)(i3))])

static struct grid level_grid(int k)
{
    struct grid g = {1 << k, 0, 0, 0, NULL};
    g.whole = g.n < np || g.n % np != 0;
    g.planes = g.whole ? g.n : g.n / np;
    g.z0 = g.whole ? 0 : rank * g.planes;
    g.a = calloc((size_t)(g.n + 2) * (g.n + 2) * (g.planes + 2), sizeof(double));
    return g;
}

static size_t plane_size(const struct grid *g)
{
    return (size_t)(g->n + 2) * (g->n + 2);
}

/* Periodic ghosts: x and y here, z from the neighbouring slabs. */
static void comm3(struct grid *g)
{
    int m = g->n, p = g->planes;
    for (int i3 = 1; i3 <= p; i3++) {
        for (int i2 = 1; i2 <= m; i2++) {
            AT(g, 0, i2, i3) = AT(g, m, i2, i3);
            AT(g, m + 1, i2, i3) = AT(g, 1, i2, i3);
        }
        for (int i1 = 0; i1 <= m + 1; i1++) {
            AT(g, i1, 0, i3) = AT(g, i1, m, i3);
            AT(g, i1, m + 1, i3) = AT(g, i1, 1, i3);
        }
    }
    size_t ps = plane_size(g);
    double *first = &AT(g, 0, 0, 1), *last = &AT(g, 0, 0, p);
    double *below = &AT(g, 0, 0, 0), *above = &AT(g, 0, 0, p + 1);
    if (g->whole || np == 1) {
        memcpy(below, last, ps * sizeof(double));
        memcpy(above, first, ps * sizeof(double));
        return;
    }
    int up = (rank + 1) % np, down = (rank + np - 1) % np;
    MPI_Sendrecv(last, (int)ps, MPI_DOUBLE, up, 1, below, (int)ps, MPI_DOUBLE, down, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(first, (int)ps, MPI_DOUBLE, down, 2, above, (int)ps, MPI_DOUBLE, up, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* The sum over the 27-point neighbourhood of (i1, i2, i3) by distance:
 * s[0] centre, s[1] the 6 faces, s[2] the 12 edges, s[3] the 8 corners. */
static inline void sums(const struct grid *g, int i1, int i2, int i3, double s[4])
{
    const ptrdiff_t x = 1, y = g->n + 2, z = (ptrdiff_t)(g->n + 2) * (g->n + 2);
    const double *c = &AT(g, i1, i2, i3);
    s[0] = c[0];
    s[1] = c[-x] + c[x] + c[-y] + c[y] + c[-z] + c[z];
    s[2] = c[-x - y] + c[x - y] + c[-x + y] + c[x + y] + c[-x - z] + c[x - z] + c[-x + z] + c[x + z] + c[-y - z] +
           c[y - z] + c[-y + z] + c[y + z];
    s[3] = c[-x - y - z] + c[x - y - z] + c[-x + y - z] + c[x + y - z] + c[-x - y + z] + c[x - y + z] +
           c[-x + y + z] + c[x + y + z];
}

/* r = v - A u */
static void resid(const struct grid *u, const struct grid *v, struct grid *r, const double a[4])
{
    for (int i3 = 1; i3 <= u->planes; i3++)
        for (int i2 = 1; i2 <= u->n; i2++)
            for (int i1 = 1; i1 <= u->n; i1++) {
                double s[4];
                sums(u, i1, i2, i3, s);
                AT(r, i1, i2, i3) = AT(v, i1, i2, i3) - a[0] * s[0] - a[1] * s[1] - a[2] * s[2] - a[3] * s[3];
            }
    comm3(r);
}

/* u = u + S r */
static void psinv(const struct grid *r, struct grid *u, const double c[4])
{
    for (int i3 = 1; i3 <= u->planes; i3++)
        for (int i2 = 1; i2 <= u->n; i2++)
            for (int i1 = 1; i1 <= u->n; i1++) {
                double s[4];
                sums(r, i1, i2, i3, s);
                AT(u, i1, i2, i3) += c[0] * s[0] + c[1] * s[1] + c[2] * s[2] + c[3] * s[3];
            }
    comm3(u);
}

/* The whole of a slab-cut level on every process (for a coarser level
 * kept whole). */
static struct grid gather_whole(const struct grid *g)
{
    struct grid w = *g;
    w.whole = 1;
    w.planes = g->n;
    w.z0 = 0;
    size_t ps = plane_size(g);
    w.a = malloc(ps * (w.planes + 2) * sizeof(double));
    MPI_Allgather(&AT(g, 0, 0, 1), (int)(ps * g->planes), MPI_DOUBLE, &AT(&w, 0, 0, 1), (int)(ps * g->planes),
                  MPI_DOUBLE, MPI_COMM_WORLD);
    memcpy(&AT(&w, 0, 0, 0), &AT(&w, 0, 0, w.planes), ps * sizeof(double));
    memcpy(&AT(&w, 0, 0, w.planes + 1), &AT(&w, 0, 0, 1), ps * sizeof(double));
    return w;
}

/* s = P r: coarse point j sits on fine point 2j; weights 1/2, 1/4, 1/8,
 * 1/16 by distance. */
static void rprj3(const struct grid *fine, struct grid *coarse)
{
    struct grid w = coarse->whole && !fine->whole ? gather_whole(fine) : *fine;
    const struct grid *f = &w;
    static const double weight[4] = {0.5, 0.25, 0.125, 0.0625};
    for (int j3 = 1; j3 <= coarse->planes; j3++) {
        int i3 = 2 * (coarse->z0 + j3) - f->z0;
        for (int j2 = 1; j2 <= coarse->n; j2++)
            for (int j1 = 1; j1 <= coarse->n; j1++) {
                double s[4];
                sums(f, 2 * j1, 2 * j2, i3, s);
                AT(coarse, j1, j2, j3) = weight[0] * s[0] + weight[1] * s[1] + weight[2] * s[2] + weight[3] * s[3];
            }
    }
    if (w.a != fine->a)
        free(w.a);
    comm3(coarse);
}

/* The coarse points a fine index lies between, with their weights. */
static int spans(int g, int idx[2], double wt[2])
{
    if (g % 2 == 0) {
        idx[0] = g / 2;
        wt[0] = 1.0;
        return 1;
    }
    idx[0] = (g - 1) / 2;
    idx[1] = (g + 1) / 2;
    wt[0] = wt[1] = 0.5;
    return 2;
}

/* u = u + Q z (trilinear) */
static void interp(const struct grid *z, struct grid *u)
{
    for (int i3 = 1; i3 <= u->planes; i3++) {
        int k3[2], n3;
        double w3[2];
        n3 = spans(u->z0 + i3, k3, w3);
        for (int i2 = 1; i2 <= u->n; i2++) {
            int k2[2], n2;
            double w2[2];
            n2 = spans(i2, k2, w2);
            for (int i1 = 1; i1 <= u->n; i1++) {
                int k1[2], n1;
                double w1[2], s = 0;
                n1 = spans(i1, k1, w1);
                for (int c = 0; c < n3; c++)
                    for (int b = 0; b < n2; b++)
                        for (int a = 0; a < n1; a++)
                            s += w3[c] * w2[b] * w1[a] * AT(z, k1[a], k2[b], k3[c] - z->z0);
                AT(u, i1, i2, i3) += s;
            }
        }
    }
    comm3(u);
}

static void zero(struct grid *g)
{
    memset(g->a, 0, plane_size(g) * (g->planes + 2) * sizeof(double));
}

/* The specification's right-hand side: of the N^3 numbers (x fastest, the
 * generator's k-th number at linear index k-1), +1 at the ten largest,
 * -1 at the ten smallest, 0 elsewhere. */
struct cand {
    double v;
    long at;
};

static int by_value(const void *x, const void *y)
{
    double a = ((const struct cand *)x)->v, b = ((const struct cand *)y)->v;
    return a < b ? -1 : a > b;
}

static void zran3(struct grid *v)
{
    int n = v->n;
    struct cand lo[10], hi[10];
    int nlo = 0, nhi = 0;
    for (int i3 = 1; i3 <= v->planes; i3++) {
        for (int i2 = 1; i2 <= n; i2++) {
            long first = (long)(i2 - 1) * n + (long)(v->z0 + i3 - 1) * n * n;
            uint64_t x = nas_mul(314159265ULL, nas_pow(NAS_A, (uint64_t)first));
            for (int i1 = 1; i1 <= n; i1++) {
                double r = nas_rand(&x, NAS_A);
                long at = first + i1 - 1;
                /* keep the ten smallest and the ten largest seen */
                if (nlo < 10 || r < lo[nlo - 1].v) {
                    int j = nlo < 10 ? nlo++ : 9;
                    while (j > 0 && lo[j - 1].v > r) {
                        lo[j] = lo[j - 1];
                        j--;
                    }
                    lo[j] = (struct cand){r, at};
                }
                if (nhi < 10 || r > hi[nhi - 1].v) {
                    int j = nhi < 10 ? nhi++ : 9;
                    while (j > 0 && hi[j - 1].v < r) {
                        hi[j] = hi[j - 1];
                        j--;
                    }
                    hi[j] = (struct cand){r, at};
                }
            }
        }
    }
    struct cand *alo = malloc(sizeof(struct cand) * 10 * np), *ahi = malloc(sizeof(struct cand) * 10 * np);
    MPI_Datatype ct;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct cand, v), offsetof(struct cand, at)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_LONG};
    MPI_Type_create_struct(2, bl, disp, types, &ct);
    MPI_Type_commit(&ct);
    MPI_Allgather(lo, 10, ct, alo, 10, ct, MPI_COMM_WORLD);
    MPI_Allgather(hi, 10, ct, ahi, 10, ct, MPI_COMM_WORLD);
    MPI_Type_free(&ct);
    qsort(alo, 10 * np, sizeof(struct cand), by_value);
    qsort(ahi, 10 * np, sizeof(struct cand), by_value);
    zero(v);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 10; i++) {
            struct cand c = s ? ahi[10 * np - 1 - i] : alo[i];
            long i1 = c.at % n, i2 = c.at / n % n, i3 = c.at / ((long)n * n);
            if (i3 >= v->z0 && i3 < v->z0 + v->planes)
                AT(v, i1 + 1, i2 + 1, i3 - v->z0 + 1) = s ? 1.0 : -1.0;
        }
    free(alo);
    free(ahi);
    comm3(v);
}

static void norm2u3(const struct grid *r, double *rnm2, double *rnmu)
{
    double s = 0, m = 0;
    for (int i3 = 1; i3 <= r->planes; i3++)
        for (int i2 = 1; i2 <= r->n; i2++)
            for (int i1 = 1; i1 <= r->n; i1++) {
                double x = AT(r, i1, i2, i3);
                s += x * x;
                m = fmax(m, fabs(x));
            }
    if (r->whole && rank != 0) /* counted once */
        s = m = 0;
    double all;
    MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&m, rnmu, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *rnm2 = sqrt(all / ((double)r->n * r->n * r->n));
}

static struct grid *u, *r;
static const double A[4] = {-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0};
static const double C[4] = {-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0};

/* One V-cycle: down by restriction, smooth on the coarsest, up by
 * prolongation, residual and smoothing. */
static void mg3p(struct grid *v)
{
    for (int k = lt; k > 1; k--)
        rprj3(&r[k], &r[k - 1]);
    zero(&u[1]);
    psinv(&r[1], &u[1], C);
    for (int k = 2; k < lt; k++) {
        zero(&u[k]);
        interp(&u[k - 1], &u[k]);
        resid(&u[k], &r[k], &r[k], A);
        psinv(&r[k], &u[k], C);
    }
    interp(&u[lt - 1], &u[lt]);
    resid(&u[lt], v, &r[lt], A);
    psinv(&r[lt], &u[lt], C);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    switch (CLASS_CHAR) {
    case 'S': N = 32; nit = 4; verify_ref = 0.5307707005734e-04; break;
    case 'W': N = 128; nit = 4; verify_ref = 0.6467329375339e-05; break;
    default: N = 256; nit = 4; verify_ref = 0.2433365309069e-05; break;
    }
    lt = 0;
    while ((1 << lt) < N)
        lt++;
    if ((np & (np - 1)) != 0 || np > N) {
        if (rank == 0)
            fprintf(stderr, "mg: needs a power-of-two number of processes up to %d\n", N);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    u = calloc(lt + 1, sizeof(struct grid));
    r = calloc(lt + 1, sizeof(struct grid));
    for (int k = 1; k <= lt; k++) {
        u[k] = level_grid(k);
        r[k] = level_grid(k);
    }
    struct grid v = level_grid(lt);
    double rnm2, rnmu;

    /* once untimed, as the specification does */
    zran3(&v);
    resid(&u[lt], &v, &r[lt], A);
    mg3p(&v);
    resid(&u[lt], &v, &r[lt], A);
    zero(&u[lt]);
    zran3(&v);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    resid(&u[lt], &v, &r[lt], A);
    norm2u3(&r[lt], &rnm2, &rnmu);
    for (int it = 1; it <= nit; it++) {
        mg3p(&v);
        resid(&u[lt], &v, &r[lt], A);
    }
    norm2u3(&r[lt], &rnm2, &rnmu);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double err = fabs(rnm2 - verify_ref) / verify_ref;
        int ok = err <= 1e-8;
        printf(" NAS-style MG (oxmpi c-tests/bench/nas), class %c, %d processes\n", CLASS_CHAR, np);
        printf(" L2 norm %20.13e, reference %20.13e, relative error %20.13e\n", rnm2, verify_ref, err);
        nas_report("MG", (long long)N * N * N, nit, tmax, np, 58.0 * nit * (double)N * N * N / tmax / 1e6,
                   "floating point", ok);
    }
    MPI_Finalize();
    return 0;
}
