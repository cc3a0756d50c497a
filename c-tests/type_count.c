/* oxmpi-test: ranks=1,2
 * The MPI 4 large-count (_c) datatype functions against their int twins:
 * every constructor built both ways gives a type of the same size, bounds
 * and true bounds (Type_get_extent_c, Type_get_true_extent_c and _x) that
 * packs the same bytes (Pack_c, Unpack_c, Pack_size_c and the external32
 * ones); Type_get_envelope_c/contents_c give back the large counts (and
 * the int variants refuse them). Then
 * the MPI-1 names MPICH still exports (Address, Type_hvector,
 * Type_hindexed, Type_struct, Type_extent, Type_lb, Type_ub,
 * Errhandler_create/set/get), and Comm_dup_with_info and
 * Group_range_excl. */
#include "common.h"

#define BUF 4096
static char src[BUF];

/* a and b (built alike, with int and with MPI_Count arguments) are the
 * same type: same size, bounds, packed bytes, both ways back */
static void same(MPI_Datatype a, MPI_Datatype b, const char *what)
{
    MPI_Type_commit(&a);
    MPI_Type_commit(&b);
    int sa;
    MPI_Count sb, lb, ext, tlb, text, tlbx, textx;
    MPI_Aint alb, aext, atlb, atext;
    MPI_Type_size(a, &sa);
    MPI_Type_size_c(b, &sb);
    MPI_Type_get_extent(a, &alb, &aext);
    MPI_Type_get_extent_c(b, &lb, &ext);
    MPI_Type_get_true_extent(a, &atlb, &atext);
    MPI_Type_get_true_extent_c(b, &tlb, &text);
    MPI_Type_get_true_extent_x(b, &tlbx, &textx);
    CHECK(sa == sb && alb == lb && aext == ext && atlb == tlb && atext == text && tlb == tlbx && text == textx,
          "%s: size %d/%lld lb %ld/%lld extent %ld/%lld true lb %ld/%lld/%lld true extent %ld/%lld/%lld", what, sa,
          (long long)sb, (long)alb, (long long)lb, (long)aext, (long long)ext, (long)atlb, (long long)tlb,
          (long long)tlbx, (long)atext, (long long)text, (long long)textx);

    /* two items, packed from the middle of src (lower bounds may be negative) */
    const char *from = src + BUF / 4;
    int psa;
    MPI_Count psb;
    MPI_Pack_size(2, a, MPI_COMM_WORLD, &psa);
    MPI_Pack_size_c(2, b, MPI_COMM_WORLD, &psb);
    CHECK(psa == psb, "%s: Pack_size %d, Pack_size_c %lld", what, psa, (long long)psb);
    char pa[BUF], pb[BUF], ua[BUF], ub[BUF];
    int posa = 0;
    MPI_Count posb = 0;
    MPI_Pack(from, 2, a, pa, BUF, &posa, MPI_COMM_WORLD);
    MPI_Pack_c(from, 2, b, pb, BUF, &posb, MPI_COMM_WORLD);
    CHECK(posa == posb && memcmp(pa, pb, posa) == 0, "%s: Pack_c gave %lld bytes, Pack %d, or other bytes", what,
          (long long)posb, posa);
    memset(ua, 0, BUF), memset(ub, 0, BUF);
    posa = 0, posb = 0;
    MPI_Unpack(pa, BUF, &posa, ua + BUF / 4, 2, a, MPI_COMM_WORLD);
    MPI_Unpack_c(pb, BUF, &posb, ub + BUF / 4, 2, b, MPI_COMM_WORLD);
    CHECK(posa == posb && memcmp(ua, ub, BUF) == 0, "%s: Unpack_c differs from Unpack", what);

    /* MPICH 4.0.2 dies (SIGILL) in MPI_Pack_external_size of a struct of
     * int and double: not asked on the reference MPI */
    if (getenv("OXMPI_TEST_REFERENCE") && strstr(what, "struct")) {
        MPI_Type_free(&a);
        MPI_Type_free(&b);
        return;
    }
    MPI_Aint xa;
    MPI_Count xb;
    MPI_Pack_external_size("external32", 2, a, &xa);
    MPI_Pack_external_size_c("external32", 2, b, &xb);
    CHECK(xa == xb, "%s: Pack_external_size %ld, _c %lld", what, (long)xa, (long long)xb);
    MPI_Aint eposa = 0;
    MPI_Count eposb = 0;
    MPI_Pack_external("external32", from, 2, a, pa, BUF, &eposa);
    MPI_Pack_external_c("external32", from, 2, b, pb, BUF, &eposb);
    CHECK(eposa == eposb && memcmp(pa, pb, eposa) == 0, "%s: Pack_external_c differs from Pack_external", what);
    memset(ua, 0, BUF), memset(ub, 0, BUF);
    eposa = 0, eposb = 0;
    MPI_Unpack_external("external32", pa, BUF, &eposa, ua + BUF / 4, 2, a);
    MPI_Unpack_external_c("external32", pb, BUF, &eposb, ub + BUF / 4, 2, b);
    CHECK(eposa == eposb && memcmp(ua, ub, BUF) == 0, "%s: Unpack_external_c differs from Unpack_external", what);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

/* the envelope and contents of `t`, built by a _c constructor with
 * `combiner` from `nl` large counts `want`, `ni` ints `iwant` and `nd`
 * types, the first MPI_INT: every count and displacement an MPI_Count, no
 * addresses (MPI 4.0 section 5.1.13); the int variants refuse such a type */
static void contents(MPI_Datatype t, int combiner, int ni, const int *iwant, int nl, const MPI_Count *want, int nd,
                     const char *what)
{
    MPI_Count n_int, n_addr, n_large, n_type;
    int comb;
    MPI_Type_get_envelope_c(t, &n_int, &n_addr, &n_large, &n_type, &comb);
    CHECK(comb == combiner && n_int == ni && n_addr == 0 && n_large == nl && n_type == nd,
          "%s: envelope_c combiner %d ints %lld addresses %lld large %lld types %lld", what, comb, (long long)n_int,
          (long long)n_addr, (long long)n_large, (long long)n_type);
    int ints[16];
    MPI_Aint addrs[16];
    MPI_Count large[16];
    MPI_Datatype types[4];
    MPI_Type_get_contents_c(t, 16, 16, 16, 4, ints, addrs, large, types);
    int bad = 0;
    for (int i = 0; i < nl && i < 16; i++) bad += large[i] != want[i];
    for (int i = 0; i < ni && i < 16; i++) bad += ints[i] != iwant[i];
    CHECK(bad == 0, "%s: contents_c differ in %d places", what, bad);
    CHECK(types[0] == MPI_INT, "%s: contents_c type is not MPI_INT", what);
    if (getenv("OXMPI_TEST_REFERENCE"))
        return; /* MPICH 4.0.2 says MPI_ERR_OTHER */
    int a, b, c, d, cls;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Type_get_envelope(t, &a, &b, &c, &d), &cls);
    CHECK(cls == MPI_ERR_TYPE, "%s: MPI_Type_get_envelope on a large-count type: class %d", what, cls);
    MPI_Error_class(MPI_Type_get_contents(t, 16, 16, 4, ints, addrs, types), &cls);
    CHECK(cls == MPI_ERR_TYPE, "%s: MPI_Type_get_contents on a large-count type: class %d", what, cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int handled = 0;
static void handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    int cls;
    MPI_Error_class(*code, &cls);
    handled = cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int i = 0; i < BUF; i++) src[i] = (char)(i * 7 + 3);
    MPI_Datatype a, b;

    MPI_Type_vector(3, 2, 5, MPI_INT, &a);
    MPI_Type_vector_c(3, 2, 5, MPI_INT, &b);
    MPI_Count vec[] = {3, 2, 5};
    contents(b, MPI_COMBINER_VECTOR, 0, NULL, 3, vec, 1, "vector_c");
    same(a, b, "vector");

    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &a);
    MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &b);
    MPI_Count hvec[] = {3, 2, 20};
    contents(b, MPI_COMBINER_HVECTOR, 0, NULL, 3, hvec, 1, "hvector_c");
    same(a, b, "hvector");

    int bl[] = {2, 1, 3};
    int di[] = {0, 5, 9};
    MPI_Aint hd[] = {-8, 12, 40};
    MPI_Count cbl[] = {2, 1, 3}, cdi[] = {0, 5, 9}, chd[] = {-8, 12, 40};
    MPI_Type_indexed(3, bl, di, MPI_INT, &a);
    MPI_Type_indexed_c(3, cbl, cdi, MPI_INT, &b);
    MPI_Count idx[] = {3, 2, 1, 3, 0, 5, 9};
    contents(b, MPI_COMBINER_INDEXED, 0, NULL, 7, idx, 1, "indexed_c");
    same(a, b, "indexed");

    MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &a);
    MPI_Type_create_hindexed_c(3, cbl, chd, MPI_INT, &b);
    MPI_Count hidx[] = {3, 2, 1, 3, -8, 12, 40};
    contents(b, MPI_COMBINER_HINDEXED, 0, NULL, 7, hidx, 1, "hindexed_c");
    same(a, b, "hindexed");

    MPI_Type_create_indexed_block(3, 2, di, MPI_INT, &a);
    MPI_Type_create_indexed_block_c(3, 2, cdi, MPI_INT, &b);
    same(a, b, "indexed_block");

    MPI_Type_create_hindexed_block(3, 2, hd, MPI_INT, &a);
    MPI_Type_create_hindexed_block_c(3, 2, chd, MPI_INT, &b);
    MPI_Count hblk[] = {3, 2, -8, 12, 40};
    contents(b, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 5, hblk, 1, "hindexed_block_c");
    same(a, b, "hindexed_block");

    MPI_Datatype tys[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Aint sd[] = {0, 8, 24};
    MPI_Count csd[] = {0, 8, 24};
    MPI_Type_create_struct(3, bl, sd, tys, &a);
    MPI_Type_create_struct_c(3, cbl, csd, tys, &b);
    MPI_Count strc[] = {3, 2, 1, 3, 0, 8, 24};
    contents(b, MPI_COMBINER_STRUCT, 0, NULL, 7, strc, 3, "struct_c");
    same(a, b, "struct");

    int sz[] = {6, 5}, sub[] = {3, 2}, st[] = {1, 2};
    MPI_Count csz[] = {6, 5}, csub[] = {3, 2}, cst[] = {1, 2};
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &a);
    MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_C, MPI_INT, &b);
    int subi[] = {2, MPI_ORDER_C};
    MPI_Count subl[] = {6, 5, 3, 2, 1, 2};
    contents(b, MPI_COMBINER_SUBARRAY, 2, subi, 6, subl, 1, "subarray_c");
    same(a, b, "subarray");

    int gs[] = {8, 6}, dist[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, darg[] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        ps[] = {2, 2};
    MPI_Count cgs[] = {8, 6};
    MPI_Type_create_darray(4, 3, 2, gs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT, &a);
    MPI_Type_create_darray_c(4, 3, 2, cgs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT, &b);
    int dai[] = {4, 3, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 2,
                 MPI_ORDER_FORTRAN};
    contents(b, MPI_COMBINER_DARRAY, 10, dai, 2, cgs, 1, "darray_c");
    same(a, b, "darray");

    MPI_Type_create_resized(MPI_INT, -4, 16, &a);
    MPI_Type_create_resized_c(MPI_INT, -4, 16, &b);
    MPI_Count rsz[] = {-4, 16};
    contents(b, MPI_COMBINER_RESIZED, 0, NULL, 2, rsz, 1, "resized_c");
    same(a, b, "resized");

    /* the MPI-1 names */
    int blk[] = {1, 1};
    MPI_Aint at[2];
    MPI_Address(&src[0], &at[0]);
    MPI_Get_address(&src[0], &at[1]);
    CHECK(at[0] == at[1], "Address %ld, Get_address %ld", (long)at[0], (long)at[1]);
    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &a);
    MPI_Type_hvector(3, 2, 20, MPI_INT, &b);
    same(a, b, "Type_hvector");
    MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &a);
    MPI_Type_hindexed(3, bl, hd, MPI_INT, &b);
    same(a, b, "Type_hindexed");
    MPI_Aint two[] = {4, 16};
    MPI_Datatype pair[] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, blk, two, pair, &a);
    MPI_Type_struct(2, blk, two, pair, &b);
    same(a, b, "Type_struct");
    MPI_Type_create_resized(MPI_INT, -4, 16, &a);
    MPI_Aint lb, ub, ext;
    MPI_Type_lb(a, &lb);
    MPI_Type_ub(a, &ub);
    MPI_Type_extent(a, &ext);
    CHECK(lb == -4 && ub == 12 && ext == 16, "Type_lb %ld, Type_ub %ld, Type_extent %ld", (long)lb, (long)ub,
          (long)ext);
    MPI_Type_free(&a);

    MPI_Errhandler eh, got;
    MPI_Errhandler_create(handler, &eh);
    MPI_Errhandler_set(MPI_COMM_WORLD, eh);
    MPI_Errhandler_get(MPI_COMM_WORLD, &got);
    CHECK(got == eh, "Errhandler_get gave another handler");
    MPI_Errhandler_free(&got);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Send(src, 1, MPI_INT, 99, 0, MPI_COMM_WORLD);
    CHECK(handled == MPI_ERR_RANK, "the handler of Errhandler_create saw class %d", handled);
    MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);

    /* Comm_dup_with_info: a new communicator of the same group, its info kept */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm dup;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
    int cmp;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "Comm_dup_with_info: compare %d", cmp);
    MPI_Info used;
    MPI_Comm_get_info(dup, &used);
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Info_get_string(used, "mpi_assert_no_any_tag", &(int){MPI_MAX_INFO_VAL}, v, &flag);
    CHECK(flag && strcmp(v, "true") == 0, "Comm_dup_with_info lost the info (flag %d)", flag);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sum == size * (size - 1) / 2, "allreduce on the dup: %d", sum);
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    MPI_Comm_free(&dup);

    /* Group_range_excl: ranks 0, 2, 4, ... out */
    MPI_Group world, odd;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_excl(world, 1, range, &odd);
    int osize, orank;
    MPI_Group_size(odd, &osize);
    MPI_Group_rank(odd, &orank);
    CHECK(osize == size / 2, "Group_range_excl: size %d", osize);
    CHECK(orank == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "Group_range_excl: rank %d", orank);
    MPI_Group_free(&odd);
    MPI_Group_free(&world);
    return finish();
}
