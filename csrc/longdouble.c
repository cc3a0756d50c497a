/* Reductions on long double and binary128, real and complex, which Rust
 * has no type for. op: 1 max, 2 min, 3 sum, 4 prod, 11 maxloc, 12 minloc.
 * inout[i] = in[i] op inout[i]. Returns 0, or -1 if op is not defined. */
#include <complex.h>
#include <stddef.h>
#include <string.h>

int oxmpi_long_double_op(int op, const void *in, void *inout, size_t n)
{
    const long double *a = in;
    long double *b = inout;
    for (size_t i = 0; i < n; i++) {
        switch (op) {
        case 1: b[i] = a[i] > b[i] ? a[i] : b[i]; break;
        case 2: b[i] = a[i] < b[i] ? a[i] : b[i]; break;
        case 3: b[i] = a[i] + b[i]; break;
        case 4: b[i] = a[i] * b[i]; break;
        default: return -1;
        }
    }
    return 0;
}

int oxmpi_long_double_complex_op(int op, const void *in, void *inout, size_t n)
{
    const long double _Complex *a = in;
    long double _Complex *b = inout;
    for (size_t i = 0; i < n; i++) {
        switch (op) {
        case 3: b[i] = a[i] + b[i]; break;
        case 4: b[i] = a[i] * b[i]; break;
        default: return -1;
        }
    }
    return 0;
}

/* MPI_LONG_DOUBLE_INT packed: a long double (16 bytes in memory) then an
 * int, `stride` bytes per pair (20 when packed). */
int oxmpi_long_double_int_loc(int op, const void *in, void *inout, size_t n, size_t stride)
{
    const char *a = in;
    char *b = inout;
    for (size_t k = 0; k < n; k++) {
        long double av, bv;
        int ai, bi;
        memcpy(&av, a + k * stride, sizeof av);
        memcpy(&bv, b + k * stride, sizeof bv);
        memcpy(&ai, a + k * stride + 16, sizeof ai);
        memcpy(&bi, b + k * stride + 16, sizeof bi);
        int better = op == 11 ? av > bv : av < bv;
        if (better || (av == bv && ai < bi))
            memcpy(b + k * stride, a + k * stride, 20);
    }
    return 0;
}

/* Fortran REAL*16 and COMPLEX*32 (MPI_REAL16, MPI_COMPLEX32): IEEE binary128,
 * which gfortran uses for real(16), not the x87 long double. The buffers
 * may be unaligned: each item is copied in and out. op as above. */
typedef _Complex float __attribute__((mode(TC))) complex128;

int oxmpi_float128_op(int op, const void *in, void *inout, size_t n)
{
    const char *a = in;
    char *b = inout;
    for (size_t i = 0; i < n; i++) {
        __float128 x, y;
        memcpy(&x, a + i * sizeof x, sizeof x);
        memcpy(&y, b + i * sizeof y, sizeof y);
        switch (op) {
        case 1: y = x > y ? x : y; break;
        case 2: y = x < y ? x : y; break;
        case 3: y = x + y; break;
        case 4: y = x * y; break;
        default: return -1;
        }
        memcpy(b + i * sizeof y, &y, sizeof y);
    }
    return 0;
}

int oxmpi_float128_complex_op(int op, const void *in, void *inout, size_t n)
{
    const char *a = in;
    char *b = inout;
    for (size_t i = 0; i < n; i++) {
        complex128 x, y;
        memcpy(&x, a + i * sizeof x, sizeof x);
        memcpy(&y, b + i * sizeof y, sizeof y);
        switch (op) {
        case 3: y = x + y; break;
        case 4: y = x * y; break;
        default: return -1;
        }
        memcpy(b + i * sizeof y, &y, sizeof y);
    }
    return 0;
}
