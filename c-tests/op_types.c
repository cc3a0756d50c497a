/* oxmpi-test: ranks=1,2,4
 * Every predefined operator on every predefined datatype, as MPI 4.0
 * §6.9.2 pairs them: MAX and MIN on the C integer, Fortran integer,
 * floating point and multi-language (MPI_AINT, MPI_OFFSET, MPI_COUNT)
 * types; SUM and PROD on those and the complex types; LAND, LOR and LXOR
 * on the C integer and logical types; BAND, BOR and BXOR on the C
 * integer, Fortran integer, byte and multi-language types; MAXLOC and
 * MINLOC on the pair types. Every allowed pair reduces three items of
 * every rank, with MPI_Allreduce and MPI_Reduce_local, to the value
 * computed here; every other pair (MPI_CHAR, the character types,
 * MPI_PACKED, a logical op on a float, ...) and MPI_REPLACE and MPI_NO_OP
 * (one-sided accumulates only, §12.3.4) is MPI_ERR_OP from both, leaving
 * the buffers alone. MPICH and Open MPI accept some pairs the standard
 * leaves out (MPI_CHAR, Fortran integers under logical ops), so the
 * refusals are checked on oxmpi only. */
#include "common.h"
#include <complex.h>

enum kind { I8, U8, I16, U16, I32, U32, I64, U64, F32, F64, F80, F128, C64, C128, C160, C256, BOOL, LOGICAL, OTHER };

/* the groups of §6.9.2, as a bit set */
enum { CINT = 1, FINT = 2, MULTI = 4, FLOAT = 8, CPLX = 16, LOGIC = 32, BYTE = 64, PAIR = 128 };

typedef __float128 quad;
typedef _Complex float __attribute__((mode(TC))) cquad;

static const struct type {
    MPI_Datatype t;
    const char *name;
    enum kind k;
    int group;
} types[] = {
    {MPI_INT, "MPI_INT", I32, CINT},
    {MPI_LONG, "MPI_LONG", I64, CINT},
    {MPI_SHORT, "MPI_SHORT", I16, CINT},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", U16, CINT},
    {MPI_UNSIGNED, "MPI_UNSIGNED", U32, CINT},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", U64, CINT},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", I64, CINT},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", U64, CINT},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", I8, CINT},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", U8, CINT},
    {MPI_INT8_T, "MPI_INT8_T", I8, CINT},
    {MPI_INT16_T, "MPI_INT16_T", I16, CINT},
    {MPI_INT32_T, "MPI_INT32_T", I32, CINT},
    {MPI_INT64_T, "MPI_INT64_T", I64, CINT},
    {MPI_UINT8_T, "MPI_UINT8_T", U8, CINT},
    {MPI_UINT16_T, "MPI_UINT16_T", U16, CINT},
    {MPI_UINT32_T, "MPI_UINT32_T", U32, CINT},
    {MPI_UINT64_T, "MPI_UINT64_T", U64, CINT},
    {MPI_INTEGER, "MPI_INTEGER", I32, FINT},
    {MPI_INTEGER1, "MPI_INTEGER1", I8, FINT},
    {MPI_INTEGER2, "MPI_INTEGER2", I16, FINT},
    {MPI_INTEGER4, "MPI_INTEGER4", I32, FINT},
    {MPI_INTEGER8, "MPI_INTEGER8", I64, FINT},
    {MPI_AINT, "MPI_AINT", I64, MULTI},
    {MPI_OFFSET, "MPI_OFFSET", I64, MULTI},
    {MPI_COUNT, "MPI_COUNT", I64, MULTI},
    {MPI_FLOAT, "MPI_FLOAT", F32, FLOAT},
    {MPI_DOUBLE, "MPI_DOUBLE", F64, FLOAT},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", F80, FLOAT},
    {MPI_REAL, "MPI_REAL", F32, FLOAT},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", F64, FLOAT},
    {MPI_REAL4, "MPI_REAL4", F32, FLOAT},
    {MPI_REAL8, "MPI_REAL8", F64, FLOAT},
    {MPI_REAL16, "MPI_REAL16", F128, FLOAT},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", C64, CPLX},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", C128, CPLX},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", C160, CPLX},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", C64, CPLX},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", C128, CPLX},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", C160, CPLX},
    {MPI_COMPLEX, "MPI_COMPLEX", C64, CPLX},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", C128, CPLX},
    {MPI_COMPLEX8, "MPI_COMPLEX8", C64, CPLX},
    {MPI_COMPLEX16, "MPI_COMPLEX16", C128, CPLX},
    {MPI_COMPLEX32, "MPI_COMPLEX32", C256, CPLX},
    {MPI_C_BOOL, "MPI_C_BOOL", BOOL, LOGIC},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", BOOL, LOGIC},
    {MPI_LOGICAL, "MPI_LOGICAL", LOGICAL, LOGIC},
    {MPI_BYTE, "MPI_BYTE", U8, BYTE},
    {MPI_CHAR, "MPI_CHAR", OTHER, 0},
    {MPI_WCHAR, "MPI_WCHAR", OTHER, 0},
    {MPI_CHARACTER, "MPI_CHARACTER", OTHER, 0},
    {MPI_PACKED, "MPI_PACKED", OTHER, 0},
    {MPI_2INT, "MPI_2INT", OTHER, PAIR},
    {MPI_SHORT_INT, "MPI_SHORT_INT", OTHER, PAIR},
    {MPI_LONG_INT, "MPI_LONG_INT", OTHER, PAIR},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", OTHER, PAIR},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", OTHER, PAIR},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", OTHER, PAIR},
    {MPI_2INTEGER, "MPI_2INTEGER", OTHER, PAIR},
    {MPI_2REAL, "MPI_2REAL", OTHER, PAIR},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", OTHER, PAIR},
};

enum { MAX, MIN, SUM, PROD, LAND, LOR, LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC, REPLACE, NO_OP, NOPS };

static const struct op {
    MPI_Op op;
    const char *name;
    int groups; /* where §6.9.2 defines it */
} ops[NOPS] = {
    [MAX] = {MPI_MAX, "MPI_MAX", CINT | FINT | MULTI | FLOAT},
    [MIN] = {MPI_MIN, "MPI_MIN", CINT | FINT | MULTI | FLOAT},
    [SUM] = {MPI_SUM, "MPI_SUM", CINT | FINT | MULTI | FLOAT | CPLX},
    [PROD] = {MPI_PROD, "MPI_PROD", CINT | FINT | MULTI | FLOAT | CPLX},
    [LAND] = {MPI_LAND, "MPI_LAND", CINT | LOGIC},
    [LOR] = {MPI_LOR, "MPI_LOR", CINT | LOGIC},
    [LXOR] = {MPI_LXOR, "MPI_LXOR", CINT | LOGIC},
    [BAND] = {MPI_BAND, "MPI_BAND", CINT | FINT | MULTI | BYTE},
    [BOR] = {MPI_BOR, "MPI_BOR", CINT | FINT | MULTI | BYTE},
    [BXOR] = {MPI_BXOR, "MPI_BXOR", CINT | FINT | MULTI | BYTE},
    [MAXLOC] = {MPI_MAXLOC, "MPI_MAXLOC", PAIR},
    [MINLOC] = {MPI_MINLOC, "MPI_MINLOC", PAIR},
    [REPLACE] = {MPI_REPLACE, "MPI_REPLACE", 0},
    [NO_OP] = {MPI_NO_OP, "MPI_NO_OP", 0},
};

#define ITEMS 3

/* Rank r's item i under operator o: small numbers, so that every sum and
 * product is exact in every type; 0/1 for the logical operators, bit
 * patterns for the bitwise ones. */
static long long input(int o, int r, int i)
{
    switch (o) {
    case LAND: case LOR: case LXOR: return (r + i) % 3 != 0;
    case BAND: case BOR: case BXOR: return (0x5a >> ((r + i) % 4)) | (1 << ((r * 3 + i) % 7));
    case PROD: return (r + i) % 3 + 1;
    default: return (r * 5 + i * 3) % 7 + 1;
    }
}

/* The fold of everyone's item i in rank order, as a whole number. */
static long long expected(int o, int n, int i)
{
    long long e = input(o, 0, i);
    for (int r = 1; r < n; r++) {
        long long x = input(o, r, i);
        switch (o) {
        case MAX: e = x > e ? x : e; break;
        case MIN: e = x < e ? x : e; break;
        case SUM: e += x; break;
        case PROD: e *= x; break;
        case LAND: e = e && x; break;
        case LOR: e = e || x; break;
        case LXOR: e = !e != !x; break;
        case BAND: e &= x; break;
        case BOR: e |= x; break;
        case BXOR: e ^= x; break;
        }
    }
    return e;
}

static size_t width(enum kind k)
{
    static const size_t w[] = {[I8] = 1, [U8] = 1, [I16] = 2, [U16] = 2, [I32] = 4, [U32] = 4, [I64] = 8, [U64] = 8,
                               [F32] = 4, [F64] = 8, [F80] = 16, [F128] = 16, [C64] = 8, [C128] = 16, [C160] = 32,
                               [C256] = 32, [BOOL] = 1, [LOGICAL] = 4, [OTHER] = 32};
    return w[k];
}

/* Store v as item i of kind k (a complex gets v + 1i: its imaginary part
 * must come through too). */
static void put(enum kind k, void *buf, int i, long long v)
{
    char *p = (char *)buf + i * width(k);
    switch (k) {
    case I8: case U8: *(unsigned char *)p = (unsigned char)v; break;
    case I16: case U16: *(unsigned short *)p = (unsigned short)v; break;
    case I32: case U32: *(unsigned *)p = (unsigned)v; break;
    case I64: case U64: *(unsigned long long *)p = (unsigned long long)v; break;
    case F32: *(float *)p = (float)v; break;
    case F64: *(double *)p = (double)v; break;
    case F80: *(long double *)p = (long double)v; break;
    case F128: *(quad *)p = (quad)v; break;
    case C64: *(float _Complex *)p = (float)v + 1.0f * I; break;
    case C128: *(double _Complex *)p = (double)v + 1.0 * I; break;
    case C160: *(long double _Complex *)p = (long double)v + 1.0L * I; break;
    case C256: { cquad z; __real__ z = v; __imag__ z = 1; *(cquad *)p = z; break; }
    case BOOL: *(_Bool *)p = v != 0; break;
    case LOGICAL: *(int *)p = v != 0; break; /* gfortran's .TRUE. is 1 */
    case OTHER: memset(p, (int)v, width(k)); break;
    }
}

/* Whether item i of kind k holds what everyone's items fold to under o. */
static int holds(enum kind k, const void *buf, int i, int o, int n)
{
    const char *p = (const char *)buf + i * width(k);
    long long e = expected(o, n, i);
    switch (k) {
    case I8: return *(signed char *)p == (signed char)e;
    case U8: return *(unsigned char *)p == (unsigned char)e;
    case I16: return *(short *)p == (short)e;
    case U16: return *(unsigned short *)p == (unsigned short)e;
    case I32: return *(int *)p == (int)e;
    case U32: return *(unsigned *)p == (unsigned)e;
    case I64: case U64: return *(long long *)p == e;
    case F32: return *(float *)p == (float)e;
    case F64: return *(double *)p == (double)e;
    case F80: return *(long double *)p == (long double)e;
    case F128: return *(quad *)p == (quad)e;
    case BOOL: return *(_Bool *)p == (e != 0);
    case LOGICAL: return *(int *)p == (e != 0);
    default: break;
    }
    /* complex: each rank's item is v + 1i */
    long double _Complex z = (long double)input(o, 0, i) + 1.0L * I;
    for (int r = 1; r < n; r++) {
        long double _Complex x = (long double)input(o, r, i) + 1.0L * I;
        z = o == SUM ? z + x : z * x;
    }
    switch (k) {
    case C64: return *(float _Complex *)p == (float _Complex)z;
    case C128: return *(double _Complex *)p == (double _Complex)z;
    case C160: return *(long double _Complex *)p == z;
    case C256: {
        cquad q = *(const cquad *)p;
        return __real__ q == (quad)creall(z) && __imag__ q == (quad)cimagl(z);
    }
    default: return 0;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int strict = getenv("OXMPI_TEST_REFERENCE") == NULL;
    _Alignas(16) char in[ITEMS * 32], out[ITEMS * 32], acc[ITEMS * 32];
    int tested = 0;
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        const struct type *ty = &types[t];
        for (int o = 0; o < NOPS; o++) {
            int allowed = (ops[o].groups & ty->group) != 0;
            if (!allowed && !strict)
                continue;
            if (ty->k == OTHER) {
                memset(in, rank + 1, sizeof in);
            } else {
                for (int i = 0; i < ITEMS; i++) put(ty->k, in, i, input(o, rank, i));
            }
            memset(out, 0x77, sizeof out);
            int rc = MPI_Allreduce(in, out, ITEMS, ty->t, ops[o].op, MPI_COMM_WORLD), cls = -1;
            MPI_Error_class(rc, &cls);
            /* Reduce_local folds one more rank's items into the result */
            memcpy(acc, out, sizeof acc);
            if (allowed && ty->k != OTHER)
                for (int i = 0; i < ITEMS; i++) put(ty->k, in, i, input(o, size, i));
            int lrc = MPI_Reduce_local(in, acc, ITEMS, ty->t, ops[o].op), lcls = -1;
            MPI_Error_class(lrc, &lcls);
            if (!allowed) {
                CHECK(cls == MPI_ERR_OP, "allreduce %s on %s: class %d, not MPI_ERR_OP", ops[o].name, ty->name, cls);
                CHECK(lcls == MPI_ERR_OP, "reduce_local %s on %s: class %d, not MPI_ERR_OP", ops[o].name, ty->name,
                      lcls);
                CHECK((unsigned char)out[0] == 0x77 && (unsigned char)acc[0] == 0x77,
                      "%s on %s: an error, but the receive buffer changed", ops[o].name, ty->name);
                continue;
            }
            tested++;
            CHECK(rc == MPI_SUCCESS, "allreduce %s on %s: class %d", ops[o].name, ty->name, cls);
            CHECK(lrc == MPI_SUCCESS, "reduce_local %s on %s: class %d", ops[o].name, ty->name, lcls);
            if (ty->k == OTHER || rc != MPI_SUCCESS || lrc != MPI_SUCCESS)
                continue; /* the pair types' values: coll_basic */
            for (int i = 0; i < ITEMS; i++) {
                CHECK(holds(ty->k, out, i, o, size), "allreduce %s on %s, item %d: wrong value", ops[o].name, ty->name, i);
                CHECK(holds(ty->k, acc, i, o, size + 1), "reduce_local %s on %s, item %d: wrong value", ops[o].name,
                      ty->name, i);
            }
        }
    }
    /* every group has its allowed pairs: 18 C integer types with 10 ops,
     * 8 integer types with 7, 8 floats with 4, 11 complex with 2, 3
     * logical with 3, MPI_BYTE with 3, 9 pair types with 2 */
    CHECK(tested == 18 * 10 + 8 * 7 + 8 * 4 + 11 * 2 + 3 * 3 + 3 + 9 * 2, "%d allowed pairs tested", tested);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
