/* oxmpi-test: ranks=1
 * Every datatype constructor and query: sizes, bounds and true bounds
 * (resized and negative displacements included), envelope/contents round
 * trips, names, struct padding as C pads, subarray and darray in both
 * orders, MPI_Type_match_size, the Fortran 90 parameterized types,
 * addresses, and bad input with the right error classes. */
#include "common.h"
#include <stddef.h>

static void expect_layout(MPI_Datatype t, const char *what, MPI_Count size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent)
{
    int s;
    MPI_Aint l, e, tl, te;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    CHECK(s == size && l == lb && e == extent && tl == tlb && te == textent,
          "%s: size %d lb %ld extent %ld true_lb %ld true_extent %ld; expected %lld %ld %ld %ld %ld",
          what, s, (long)l, (long)e, (long)tl, (long)te, (long long)size, (long)lb, (long)extent, (long)tlb, (long)textent);
    MPI_Count sx, lx, ex;
    MPI_Type_size_x(t, &sx);
    MPI_Type_get_extent_x(t, &lx, &ex);
    CHECK(sx == size && lx == lb && ex == extent, "%s: _x queries", what);
}

static void expect_envelope(MPI_Datatype t, const char *what, int comb, int ni, int na, int nd)
{
    int i, a, d, c;
    MPI_Type_get_envelope(t, &i, &a, &d, &c);
    CHECK(c == comb && i == ni && a == na && d == nd, "%s: envelope combiner %d ints %d addrs %d types %d", what, c, i, a, d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype t, t2;
    int ints[16], nd;
    MPI_Aint addrs[8];
    MPI_Datatype types[4];

    MPI_Type_contiguous(5, MPI_INT, &t);
    expect_layout(t, "contiguous", 20, 0, 20, 0, 20);
    expect_envelope(t, "contiguous", MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    MPI_Type_get_contents(t, 16, 8, 4, ints, addrs, types);
    CHECK(ints[0] == 5 && types[0] == MPI_INT, "contiguous contents");
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL, "freed handle");

    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &t);
    expect_layout(t, "vector", 48, 0, 96, 0, 96);
    expect_envelope(t, "vector", MPI_COMBINER_VECTOR, 3, 0, 1);
    MPI_Type_get_contents(t, 16, 8, 4, ints, addrs, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5, "vector contents");
    MPI_Type_free(&t);

    MPI_Type_create_hvector(2, 1, 100, MPI_INT, &t);
    expect_layout(t, "hvector", 8, 0, 104, 0, 104);
    expect_envelope(t, "hvector", MPI_COMBINER_HVECTOR, 2, 1, 1);
    MPI_Type_get_contents(t, 16, 8, 4, ints, addrs, types);
    CHECK(addrs[0] == 100, "hvector stride");
    MPI_Type_free(&t);

    int bl[3] = {1, 2, 1}, disp[3] = {-2, 3, 10};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
    expect_layout(t, "indexed with a negative displacement", 16, -8, 52, -8, 52);
    expect_envelope(t, "indexed", MPI_COMBINER_INDEXED, 7, 0, 1);
    MPI_Type_get_contents(t, 16, 8, 4, ints, addrs, types);
    CHECK(ints[0] == 3 && ints[4] == -2 && ints[6] == 10, "indexed contents");
    /* resized: lb and extent as given, true bounds unchanged */
    MPI_Type_create_resized(t, -20, 100, &t2);
    expect_layout(t2, "resized", 16, -20, 100, -8, 52);
    expect_envelope(t2, "resized", MPI_COMBINER_RESIZED, 0, 2, 1);
    MPI_Type_free(&t2);
    MPI_Type_free(&t);

    MPI_Aint hd[2] = {0, 64};
    MPI_Type_create_hindexed(2, bl, hd, MPI_SHORT, &t);
    expect_layout(t, "hindexed", 6, 0, 68, 0, 68);
    expect_envelope(t, "hindexed", MPI_COMBINER_HINDEXED, 3, 2, 1);
    MPI_Type_free(&t);
    MPI_Type_create_indexed_block(2, 3, disp + 1, MPI_CHAR, &t);
    expect_layout(t, "indexed_block", 6, 3, 10, 3, 10);
    expect_envelope(t, "indexed_block", MPI_COMBINER_INDEXED_BLOCK, 4, 0, 1);
    MPI_Type_free(&t);
    MPI_Type_create_hindexed_block(2, 1, hd, MPI_DOUBLE, &t);
    expect_layout(t, "hindexed_block", 16, 0, 72, 0, 72);
    expect_envelope(t, "hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1);
    MPI_Type_free(&t);

    /* struct: extent padded as the C compiler pads the struct */
    struct s { double d; char c; int i[2]; char tail; } sv;
    int sbl[4] = {1, 1, 2, 1};
    MPI_Aint base, sd[4];
    MPI_Get_address(&sv, &base);
    MPI_Get_address(&sv.d, &sd[0]);
    MPI_Get_address(&sv.c, &sd[1]);
    MPI_Get_address(&sv.i, &sd[2]);
    MPI_Get_address(&sv.tail, &sd[3]);
    for (int k = 0; k < 4; k++) sd[k] = MPI_Aint_diff(sd[k], base);
    MPI_Datatype st[4] = {MPI_DOUBLE, MPI_CHAR, MPI_INT, MPI_CHAR};
    MPI_Type_create_struct(4, sbl, sd, st, &t);
    expect_layout(t, "struct", 18, 0, sizeof(struct s), 0, offsetof(struct s, tail) + 1);
    expect_envelope(t, "struct", MPI_COMBINER_STRUCT, 5, 4, 4);
    MPI_Type_get_contents(t, 16, 8, 4, ints, addrs, types);
    CHECK(types[2] == MPI_INT && addrs[2] == (MPI_Aint)offsetof(struct s, i) && ints[3] == 2, "struct contents");
    CHECK(MPI_Aint_add(base, sd[2]) == (MPI_Aint)&sv.i, "MPI_Aint_add");
    MPI_Type_free(&t);

    /* subarray in C and Fortran order: a 2x3 block at (1,1) of a 4x5 array */
    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    expect_layout(t, "subarray C", 24, 0, 80, 24, 32);
    expect_envelope(t, "subarray", MPI_COMBINER_SUBARRAY, 8, 0, 1);
    MPI_Type_commit(&t);
    int a[20], packed[6], pos = 0;
    for (int k = 0; k < 20; k++) a[k] = k;
    MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    int expect_c[6] = {6, 7, 8, 11, 12, 13};
    CHECK(pos == 24 && memcmp(packed, expect_c, sizeof packed) == 0, "subarray C picks (1,1)..(2,3)");
    MPI_Type_free(&t);
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    MPI_Type_commit(&t);
    pos = 0;
    MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    int expect_f[6] = {5, 6, 9, 10, 13, 14}; /* column-major: (i,j) at i + 4j */
    CHECK(memcmp(packed, expect_f, sizeof packed) == 0, "subarray Fortran order");
    MPI_Type_free(&t);

    /* darray: a 10x6 array on a 2x2 grid, block rows and cyclic(2) columns:
     * the four pieces cover every element once */
    int seen[60] = {0};
    int gs[2] = {10, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    for (int r = 0; r < 4; r++) {
        MPI_Type_create_darray(4, r, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(lb == 0 && ext == 240, "darray extent is the whole array");
        int sz, idx[60], g[60];
        for (int k = 0; k < 60; k++) g[k] = k;
        MPI_Type_size(t, &sz);
        pos = 0;
        MPI_Pack(g, 1, t, idx, sizeof idx, &pos, MPI_COMM_WORLD);
        for (int k = 0; k < sz / 4; k++) seen[idx[k]]++;
        expect_envelope(t, "darray", MPI_COMBINER_DARRAY, 4 * 2 + 4, 0, 1);
        MPI_Type_free(&t);
    }
    int once = 1;
    for (int k = 0; k < 60; k++) once &= seen[k] == 1;
    CHECK(once, "darray pieces cover the array exactly once");

    /* dup, names */
    MPI_Type_dup(MPI_DOUBLE, &t);
    expect_envelope(t, "dup", MPI_COMBINER_DUP, 0, 0, 1);
    expect_layout(t, "dup", 8, 0, 8, 0, 8);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_set_name(t, "my double");
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, "my double") == 0 && len == 9, "name %s", name);
    MPI_Type_get_name(MPI_INT, name, &len);
    CHECK(strcmp(name, "MPI_INT") == 0, "predefined name %s", name);
    /* one handle, two names: MPICH gives the older */
    MPI_Type_get_name(MPI_C_COMPLEX, name, &len);
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "MPI_C_COMPLEX is named %s", name);
    /* predefined types may be renamed too (MPICH and Open MPI allow it) */
    CHECK(MPI_Type_set_name(MPI_SHORT, "my short") == MPI_SUCCESS, "renaming MPI_SHORT");
    MPI_Type_get_name(MPI_SHORT, name, &len);
    CHECK(strcmp(name, "my short") == 0 && len == 8, "renamed MPI_SHORT is %s", name);
    MPI_Type_free(&t);
    expect_envelope(MPI_INT, "named", MPI_COMBINER_NAMED, 0, 0, 0);

    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t);
    CHECK(t == MPI_REAL8, "match_size real 8");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t);
    CHECK(t == MPI_INTEGER4, "match_size integer 4");
    MPI_Datatype f1, f2;
    MPI_Type_create_f90_integer(9, &f1);
    MPI_Type_create_f90_integer(9, &f2);
    CHECK(f1 == f2, "the same parameters give the same handle");
    expect_envelope(f1, "f90 integer", MPI_COMBINER_F90_INTEGER, 1, 0, 0);
    expect_layout(f1, "f90 integer(9)", 4, 0, 4, 0, 4);
    MPI_Type_create_f90_real(10, MPI_UNDEFINED, &f1);
    expect_layout(f1, "f90 real(10)", 8, 0, 8, 0, 8);
    MPI_Type_create_f90_complex(6, 30, &f1);
    expect_layout(f1, "f90 complex(6,30)", 8, 0, 8, 0, 8);

    /* a huge contiguous type costs nothing to build */
    MPI_Type_contiguous_c((MPI_Count)1 << 40, MPI_BYTE, &t);
    MPI_Count big;
    MPI_Type_size_c(t, &big);
    CHECK(big == (MPI_Count)1 << 40, "size_c of a 2^40-byte type");
    int small;
    MPI_Type_size(t, &small);
    CHECK(small == MPI_UNDEFINED, "int size of a 2^40-byte type is MPI_UNDEFINED");
    MPI_Type_free(&t);

    /* bad input */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc, cls;
#define EXPECT(call, c) do { rc = (call); MPI_Error_class(rc, &cls); CHECK(cls == (c), "%s gave class %d, expected %d", #call, cls, c); } while (0)
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    int bad_sub[2] = {3, 6};
    EXPECT(MPI_Type_create_subarray(2, sizes, bad_sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray(2, sizes, subs, starts, 99, MPI_INT, &t), MPI_ERR_ARG);
    MPI_Datatype predefined = MPI_INT;
    EXPECT(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    EXPECT(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, addrs, types), MPI_ERR_TYPE);
    MPI_Type_contiguous(2, MPI_INT, &t);
    EXPECT(MPI_Type_get_contents(t, 0, 0, 0, ints, addrs, types), MPI_ERR_ARG);
    MPI_Type_free(&t);
    EXPECT(MPI_Type_free(&t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_integer(40, &t), MPI_ERR_ARG);
    int gsz[1] = {10}, dd[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {2}, pp[1] = {2};
    EXPECT(MPI_Type_create_darray(2, 0, 1, gsz, dd, da, pp, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    return finish();
}
