/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * Derived datatypes on every path: a matrix column (vector) sent and
 * received into a column, a row, or contiguous memory, short and long
 * (eager and both rendezvous paths); a struct of fields; an irregular
 * indexed type; absolute addresses from MPI_BOTTOM; MPI_Get_elements of a
 * partial receive; MPI_PACKED messages; Pack/Unpack and external32;
 * broadcast and reductions on derived types (by user operations: the
 * predefined ones are defined on predefined types only, MPI 4.0 §6.9.2,
 * and refuse a derived type with MPI_ERR_OP as MPICH and Open MPI do); a
 * freed type still in use. */
#include "common.h"
#include <stddef.h>

#define N 300 /* the matrix is N x N doubles: a column is long (rendezvous) */

/* on contiguous(2, MPI_DOUBLE): the sum of each double */
static void sum_pairs(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < 2 * *len; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

/* on a column of the matrix, in its memory layout: the larger of each double */
static void max_column(void *in, void *inout, int *len, MPI_Datatype *t)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*t, &lb, &extent);
    for (int k = 0; k < *len; k++)
        for (int j = 0; j < N; j++) {
            double *a = (double *)in + k * extent / 8 + j * N, *b = (double *)inout + k * extent / 8 + j * N;
            if (*a > *b) *b = *a;
        }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;

    double *m = malloc(sizeof(double) * N * N), *r = malloc(sizeof(double) * N * N);
    for (int i = 0; i < N * N; i++) m[i] = rank * 1e6 + i;
    MPI_Datatype col, col_resized;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);

    /* column 3 -> column 7 */
    for (int i = 0; i < N * N; i++) r[i] = -1;
    MPI_Sendrecv(m + 3, 1, col, right, 0, r + 7, 1, col, left, 0, MPI_COMM_WORLD, &st);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += r[i * N + 7] != left * 1e6 + i * N + 3;
    for (int i = 0; i < N * N; i++) bad += (i % N != 7) && r[i] != -1;
    CHECK(bad == 0, "column to column: %d wrong", bad);
    /* column -> contiguous row, and back */
    MPI_Sendrecv(m + 5, 1, col, right, 1, r, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st);
    bad = 0;
    for (int i = 0; i < N; i++) bad += r[i] != left * 1e6 + i * N + 5;
    CHECK(bad == 0, "column to contiguous: %d wrong", bad);
    int count, elements;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(count == N, "count %d", count);
    MPI_Sendrecv(m, N, MPI_DOUBLE, right, 2, r + 1, 1, col, left, 2, MPI_COMM_WORLD, &st);
    bad = 0;
    for (int i = 0; i < N; i++) bad += r[i * N + 1] != left * 1e6 + i;
    CHECK(bad == 0, "contiguous to column: %d wrong", bad);
    /* several columns at once: resize the column to one double's extent */
    MPI_Type_create_resized(col, 0, sizeof(double), &col_resized);
    MPI_Type_commit(&col_resized);
    MPI_Sendrecv(m, 4, col_resized, right, 3, r, 4, col_resized, left, 3, MPI_COMM_WORLD, &st);
    bad = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 4; j++) bad += r[i * N + j] != left * 1e6 + i * N + j;
    CHECK(bad == 0, "4 resized columns: %d wrong", bad);
    /* a short message of a derived type (eager) and a partial receive */
    MPI_Datatype col8;
    MPI_Type_vector(8, 1, N, MPI_DOUBLE, &col8);
    MPI_Type_commit(&col8);
    MPI_Sendrecv(m, 5, MPI_DOUBLE, right, 4, r, 1, col8, left, 4, MPI_COMM_WORLD, &st);
    MPI_Get_elements(&st, col8, &elements);
    MPI_Get_count(&st, col8, &count);
    CHECK(elements == 5 && count == MPI_UNDEFINED, "partial receive: %d elements, count %d", elements, count);
    CHECK(r[4 * N] == left * 1e6 + 4, "partial receive data");

    /* a struct of fields */
    struct part { int id; double pos[3]; char tag; } out[10], in[10];
    int bl[3] = {1, 3, 1};
    MPI_Aint d[3] = {offsetof(struct part, id), offsetof(struct part, pos), offsetof(struct part, tag)};
    MPI_Datatype ft[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, pt;
    MPI_Type_create_struct(3, bl, d, ft, &pt);
    MPI_Type_commit(&pt);
    for (int i = 0; i < 10; i++) {
        out[i].id = rank * 100 + i;
        out[i].pos[0] = i; out[i].pos[1] = -i; out[i].pos[2] = rank;
        out[i].tag = 'a' + i;
    }
    memset(in, 0, sizeof in);
    MPI_Sendrecv(out, 10, pt, right, 5, in, 10, pt, left, 5, MPI_COMM_WORLD, &st);
    bad = 0;
    for (int i = 0; i < 10; i++) bad += in[i].id != left * 100 + i || in[i].pos[1] != -i || in[i].pos[2] != left || in[i].tag != 'a' + i;
    CHECK(bad == 0, "struct: %d wrong", bad);
    MPI_Get_elements(&st, pt, &elements);
    CHECK(elements == 50, "struct elements %d", elements);

    /* an irregular indexed type, long */
    int nb = 2000, *blen = malloc(nb * sizeof(int)), *disp = malloc(nb * sizeof(int));
    int span = 0;
    for (int i = 0; i < nb; i++) { blen[i] = 1 + i % 7; disp[i] = span + i % 3; span = disp[i] + blen[i]; }
    MPI_Datatype irr;
    MPI_Type_indexed(nb, blen, disp, MPI_INT, &irr);
    MPI_Type_commit(&irr);
    int *ia = malloc(span * sizeof(int)), *ib = malloc(span * sizeof(int));
    for (int i = 0; i < span; i++) { ia[i] = rank * 1000000 + i; ib[i] = -1; }
    MPI_Sendrecv(ia, 1, irr, right, 6, ib, 1, irr, left, 6, MPI_COMM_WORLD, &st);
    bad = 0;
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < blen[i]; k++) bad += ib[disp[i] + k] != left * 1000000 + disp[i] + k;
    CHECK(bad == 0, "irregular indexed: %d wrong", bad);

    /* absolute addresses from MPI_BOTTOM */
    int x = rank, y[2] = {rank * 2, rank * 3}, gx = -1, gy[2] = {-1, -1};
    MPI_Aint ad[2];
    MPI_Get_address(&x, &ad[0]);
    MPI_Get_address(y, &ad[1]);
    int abl[2] = {1, 2};
    MPI_Datatype abs_out, abs_in;
    MPI_Type_create_hindexed(2, abl, ad, MPI_INT, &abs_out);
    MPI_Type_commit(&abs_out);
    MPI_Get_address(&gx, &ad[0]);
    MPI_Get_address(gy, &ad[1]);
    MPI_Type_create_hindexed(2, abl, ad, MPI_INT, &abs_in);
    MPI_Type_commit(&abs_in);
    MPI_Sendrecv(MPI_BOTTOM, 1, abs_out, right, 7, MPI_BOTTOM, 1, abs_in, left, 7, MPI_COMM_WORLD, &st);
    CHECK(gx == left && gy[0] == left * 2 && gy[1] == left * 3, "MPI_BOTTOM: %d %d %d", gx, gy[0], gy[1]);

    /* MPI_PACKED messages and Pack/Unpack */
    char pbuf[256];
    int pos = 0, psize;
    MPI_Pack_size(1, col8, MPI_COMM_WORLD, &psize);
    CHECK(psize >= 64, "pack size %d", psize);
    MPI_Pack(&rank, 1, MPI_INT, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD);
    MPI_Pack(m + 2, 1, col8, pbuf, sizeof pbuf, &pos, MPI_COMM_WORLD);
    char rbuf[256];
    MPI_Sendrecv(pbuf, pos, MPI_PACKED, right, 8, rbuf, sizeof rbuf, MPI_PACKED, left, 8, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_PACKED, &count);
    int from = -1, upos = 0;
    double col_in[8];
    MPI_Unpack(rbuf, count, &upos, &from, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(rbuf, count, &upos, col_in, 8, MPI_DOUBLE, MPI_COMM_WORLD);
    CHECK(from == left && col_in[7] == left * 1e6 + 7 * N + 2 && upos == count, "packed message from %d", from);

    /* external32: big-endian at the standard's sizes */
    unsigned char ext[64];
    MPI_Aint epos = 0, esize;
    int ival = 0x01020304;
    double dval = 1.0;
    MPI_Pack_external("external32", &ival, 1, MPI_INT, ext, sizeof ext, &epos);
    MPI_Pack_external("external32", &dval, 1, MPI_DOUBLE, ext, sizeof ext, &epos);
    unsigned char want[12] = {1, 2, 3, 4, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    CHECK(epos == 12 && memcmp(ext, want, 12) == 0, "external32 bytes");
    MPI_Pack_external_size("external32", 3, MPI_LONG, &esize);
    CHECK(esize == 12, "external32 MPI_LONG is 4 bytes, size %ld", (long)esize);
    int iback = 0;
    double dback = 0;
    epos = 0;
    MPI_Unpack_external("external32", ext, 12, &epos, &iback, 1, MPI_INT);
    MPI_Unpack_external("external32", ext, 12, &epos, &dback, 1, MPI_DOUBLE);
    CHECK(iback == ival && dback == 1.0, "external32 round trip");
    epos = 0;
    MPI_Pack_external("external32", out, 2, pt, ext, sizeof ext, &epos);
    struct part back[2];
    MPI_Aint epos2 = 0;
    MPI_Unpack_external("external32", ext, epos, &epos2, back, 2, pt);
    CHECK(back[1].id == out[1].id && back[1].pos[1] == out[1].pos[1] && back[1].tag == out[1].tag, "external32 struct round trip");

    /* collectives on derived types */
    if (rank == 0)
        for (int i = 0; i < N * N; i++) r[i] = i;
    MPI_Bcast(r, 1, col, 0, MPI_COMM_WORLD);
    CHECK(r[(N - 1) * N] == (N - 1) * N || rank == 0, "bcast of a column");
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_DOUBLE, &two);
    MPI_Type_commit(&two);
    double v[4] = {rank, 1, 2 * rank, 3}, s[4];
    MPI_Op op_pairs, op_column;
    MPI_Op_create(sum_pairs, 1, &op_pairs);
    MPI_Op_create(max_column, 1, &op_column);
    MPI_Allreduce(v, s, 2, two, op_pairs, MPI_COMM_WORLD);
    CHECK(s[0] == size * (size - 1) / 2.0 && s[1] == size && s[3] == 3 * size, "allreduce on contiguous(2, double)");
    MPI_Reduce(m, r, 1, col, op_column, 0, MPI_COMM_WORLD);
    if (rank == 0) CHECK(r[N] == (size - 1) * 1e6 + N, "reduce of a column");
    int rc, cls;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Allreduce(out, in, 1, pt, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "a reduction on a mixed struct is MPI_ERR_OP, got %d", cls);
    /* a predefined operation on a derived type, even one of a single
     * predefined type, even a duplicate of one */
    MPI_Datatype dup_int;
    MPI_Type_dup(MPI_INT, &dup_int);
    int one = 1, got = -1;
    struct {
        MPI_Datatype type;
        MPI_Op op;
        const char *what;
    } wrong[] = {{two, MPI_SUM, "MPI_SUM on contiguous(2, double)"},
                 {col, MPI_MAX, "MPI_MAX on a column"},
                 {dup_int, MPI_SUM, "MPI_SUM on a duplicate of MPI_INT"}};
    for (int w = 0; w < 3; w++) {
        rc = MPI_Allreduce(v, s, 1, wrong[w].type, wrong[w].op, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "allreduce, %s: class %d", wrong[w].what, cls);
        rc = MPI_Reduce_local(v, s, 1, wrong[w].type, wrong[w].op);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OP, "reduce_local, %s: class %d", wrong[w].what, cls);
    }
    /* the parameterized Fortran 90 types are predefined (MPI 4.0 §19.1.9) */
    MPI_Datatype f90_int;
    MPI_Type_create_f90_integer(9, &f90_int);
    rc = MPI_Allreduce(&one, &got, 1, f90_int, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && got == size, "MPI_SUM on an f90 integer type: rc %d, %d", rc, got);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&dup_int);
    MPI_Op_free(&op_pairs);
    MPI_Op_free(&op_column);

    /* a type freed while a receive using it is pending still works */
    MPI_Request req;
    MPI_Datatype tmp;
    MPI_Type_vector(N, 1, N, MPI_DOUBLE, &tmp);
    MPI_Type_commit(&tmp);
    MPI_Irecv(r + 9, 1, tmp, left, 9, MPI_COMM_WORLD, &req);
    MPI_Type_free(&tmp);
    MPI_Send(m, N, MPI_DOUBLE, right, 9, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(r[(N - 1) * N + 9] == left * 1e6 + N - 1, "receive with a freed type");

    MPI_Type_free(&col);
    MPI_Type_free(&col_resized);
    MPI_Type_free(&col8);
    MPI_Type_free(&pt);
    MPI_Type_free(&irr);
    MPI_Type_free(&abs_out);
    MPI_Type_free(&abs_in);
    MPI_Type_free(&two);
    free(m); free(r); free(blen); free(disp); free(ia); free(ib);
    return finish();
}
