/* Reductions on long double and long double complex, which Rust has no
 * type for. op: 1 max, 2 min, 3 sum, 4 prod, 11 maxloc, 12 minloc.
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

/* MPI_LONG_DOUBLE_INT: struct { long double v; int i; }, extent 32. */
struct ldi { long double v; int i; };

int oxmpi_long_double_int_loc(int op, const void *in, void *inout, size_t n)
{
    const struct ldi *a = in;
    struct ldi *b = inout;
    for (size_t i = 0; i < n; i++) {
        int better = op == 11 ? a[i].v > b[i].v : a[i].v < b[i].v;
        if (better || (a[i].v == b[i].v && a[i].i < b[i].i))
            b[i] = a[i];
    }
    return 0;
}

size_t oxmpi_long_double_int_extent(void) { return sizeof(struct ldi); }
