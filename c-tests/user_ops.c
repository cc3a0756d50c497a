/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_ALLREDUCE=rabenseifner,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_BARRIER=dissemination;OXMPI_COLL_BCAST=binomial,OXMPI_COLL_ALLREDUCE=reduce_bcast,OXMPI_COLL_ALLGATHER=ring,OXMPI_COLL_ALLTOALL=pairwise,OXMPI_SHM_COLL_MAX=0,OXMPI_COLL_BARRIER=linear;OXMPI_COLL_ALLREDUCE=allgather,OXMPI_SHM_COLL_MAX=0;OXMPI_SHM_SCAN=every;OXMPI_SHM_SCAN=chain
 * MPI_Op_create, MPI_Op_commutative, MPI_Op_free: a commutative user sum,
 * a non-commutative 2x2 matrix product (Reduce at every root, Allreduce,
 * Scan, Exscan must all multiply in rank order), a user op on a strided
 * derived type (Allreduce, Scan, Exscan; the holes stay untouched, and all
 * of rank 0's receive buffer in an Exscan), Reduce_local, the large-count MPI_Op_create_c (its function
 * gets an MPI_Count length) with Allreduce_c and Reduce_c, and the errors of
 * freed and predefined ops. */
#include "common.h"

static MPI_Datatype mat_type;
static int calls_with_wrong_type = 0;

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

/* inout = in x inout, 2x2 matrices of int, row major */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_type) calls_with_wrong_type++;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* on a vector of 2 ints with stride 3: only elements 0 and 3 exist */
static void strided_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        for (int j = 0; j < 2; j++) {
            int *x = a + k * 4 + 3 * j, *y = b + k * 4 + 3 * j;
            if (*x > *y) *y = *x;
        }
}

/* matmul with an MPI_Count length (MPI_Op_create_c) */
static MPI_Count counted_items = 0;
static void matmul_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int n = (int)*len;
    counted_items += *len;
    matmul(in, inout, &n, dt);
}

static void mat_of(int r, int *m) { m[0] = 1; m[1] = r + 1; m[2] = r % 2; m[3] = 1 + r % 3; }

static void product(int from, int to, int *out) /* M_from x ... x M_to-1 */
{
    int id[4] = {1, 0, 0, 1};
    memcpy(out, id, sizeof id);
    for (int r = to - 1; r >= from; r--) {
        int m[4];
        mat_of(r, m);
        int one = 1;
        matmul(m, out, &one, &mat_type);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_contiguous(4, MPI_INT, &mat_type);
    MPI_Type_commit(&mat_type);

    MPI_Op sum, mul, smax;
    MPI_Op_create(isum, 1, &sum);
    MPI_Op_create(matmul, 0, &mul);
    MPI_Op_create(strided_max, 1, &smax);
    int c;
    MPI_Op_commutative(sum, &c);
    CHECK(c == 1, "user sum commutative: %d", c);
    MPI_Op_commutative(mul, &c);
    CHECK(c == 0, "matmul commutative: %d", c);
    MPI_Op_commutative(MPI_SUM, &c);
    CHECK(c == 1, "MPI_SUM commutative: %d", c);

    int v[1000], s[1000];
    for (int i = 0; i < 1000; i++) v[i] = rank * i + 1;
    MPI_Allreduce(v, s, 1000, MPI_INT, sum, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < 1000; i++) bad += s[i] != size * (size - 1) / 2 * i + size;
    CHECK(bad == 0, "user sum allreduce: %d wrong", bad);

    /* three matrices per rank: items are independent products */
    int m[12], r[12], e[4];
    for (int k = 0; k < 3; k++) mat_of(rank, m + 4 * k);
    product(0, size, e);
    for (int root = 0; root < size; root++) {
        memset(r, 0, sizeof r);
        MPI_Reduce(m, r, 3, mat_type, mul, root, MPI_COMM_WORLD);
        for (int k = 0; k < 3 && rank == root; k++)
            CHECK(memcmp(r + 4 * k, e, sizeof e) == 0, "reduce matmul at root %d item %d: %d %d %d %d", root, k,
                  r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
    }
    MPI_Allreduce(m, r, 3, mat_type, mul, MPI_COMM_WORLD);
    CHECK(memcmp(r + 8, e, sizeof e) == 0, "allreduce matmul");
    MPI_Scan(m, r, 1, mat_type, mul, MPI_COMM_WORLD);
    product(0, rank + 1, e);
    CHECK(memcmp(r, e, sizeof e) == 0, "scan matmul");
    MPI_Exscan(m, r, 1, mat_type, mul, MPI_COMM_WORLD);
    product(0, rank, e);
    CHECK(rank == 0 || memcmp(r, e, sizeof e) == 0, "exscan matmul");
    CHECK(calls_with_wrong_type == 0, "the user function saw another datatype %d times", calls_with_wrong_type);

    /* strided type: holes in the receive buffer stay untouched */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Datatype vec4;
    MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &vec4);
    MPI_Type_commit(&vec4);
    int sv[8], rv[8];
    for (int i = 0; i < 8; i++) { sv[i] = (i % 4 == 0 || i % 4 == 3) ? rank * 10 + i : -5; rv[i] = -9; }
    MPI_Allreduce(sv, rv, 2, vec4, smax, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < 8; i++) bad += rv[i] != ((i % 4 == 0 || i % 4 == 3) ? (size - 1) * 10 + i : -9);
    CHECK(bad == 0, "strided user max: %d wrong", bad);
    for (int ex = 0; ex < 2; ex++) {
        for (int i = 0; i < 8; i++) rv[i] = -9;
        if (ex)
            MPI_Exscan(sv, rv, 2, vec4, smax, MPI_COMM_WORLD);
        else
            MPI_Scan(sv, rv, 2, vec4, smax, MPI_COMM_WORLD);
        /* the last rank before (or up to) this one holds the largest */
        int top = ex ? rank - 1 : rank;
        bad = 0;
        for (int i = 0; i < 8; i++)
            bad += rv[i] != ((i % 4 == 0 || i % 4 == 3) && top >= 0 ? top * 10 + i : -9);
        CHECK(bad == 0, "strided user max, %s: %d wrong", ex ? "exscan" : "scan", bad);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&vec4);

    /* the same product through a large-count user function */
    MPI_Op mul_c;
    MPI_Op_create_c(matmul_c, 0, &mul_c);
    MPI_Op_commutative(mul_c, &c);
    CHECK(c == 0, "matmul_c commutative: %d", c);
    product(0, size, e);
    MPI_Allreduce_c(m, r, (MPI_Count)3, mat_type, mul_c, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++) CHECK(memcmp(r + 4 * k, e, sizeof e) == 0, "allreduce_c matmul_c item %d", k);
    memset(r, 0, sizeof r);
    MPI_Reduce_c(m, r, (MPI_Count)2, mat_type, mul_c, size - 1, MPI_COMM_WORLD);
    CHECK(rank != size - 1 || memcmp(r + 4, e, sizeof e) == 0, "reduce_c matmul_c");
    /* some rank folds: which depends on the algorithm */
    MPI_Count all_items = 0;
    MPI_Allreduce(&counted_items, &all_items, 1, MPI_COUNT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(size == 1 || all_items > 0, "the MPI_Count function was never called");
    MPI_Op_free(&mul_c);
    CHECK(mul_c == MPI_OP_NULL, "freed matmul_c is MPI_OP_NULL");

    int a[4] = {1, 2, 3, 4}, b[4] = {0, 1, 1, 0};
    MPI_Reduce_local(a, b, 1, mat_type, mul); /* b = a x b */
    CHECK(b[0] == 2 && b[1] == 1 && b[2] == 4 && b[3] == 3, "reduce_local matmul %d %d %d %d", b[0], b[1], b[2], b[3]);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op freed = sum;
    MPI_Op_free(&sum);
    CHECK(sum == MPI_OP_NULL, "freed op is MPI_OP_NULL");
    int cls, err;
    /* erroneous; oxmpi reports it, MPICH runs the freed function */
    if (!getenv("OXMPI_TEST_REFERENCE")) {
        err = MPI_Allreduce(v, s, 1, MPI_INT, freed, MPI_COMM_WORLD);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_OP, "allreduce with a freed op: class %d", cls);
    }
    MPI_Op predefined = MPI_SUM;
    err = MPI_Op_free(&predefined);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_OP, "freeing MPI_SUM: class %d", cls);
    MPI_Op_free(&mul);
    MPI_Op_free(&smax);
    MPI_Type_free(&mat_type);
    return finish();
}
