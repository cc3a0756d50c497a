/* oxmpi-test: ranks=1,2,4
 * Every predefined datatype travels intact, including the value-index
 * pair types whose C structs have holes. */
#include "common.h"
#include <stdint.h>
#include <complex.h>
#include <stdbool.h>

struct named { MPI_Datatype t; size_t size; const char *name; };

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct { float v; int i; } fi;
    struct { double v; int i; } di;
    struct { long v; int i; } li;
    struct { short v; int i; } si;
    struct { long double v; int i; } ldi;
    struct named types[] = {
        {MPI_CHAR, 1, "CHAR"}, {MPI_SIGNED_CHAR, 1, "SIGNED_CHAR"}, {MPI_UNSIGNED_CHAR, 1, "UNSIGNED_CHAR"},
        {MPI_BYTE, 1, "BYTE"}, {MPI_WCHAR, sizeof(wchar_t), "WCHAR"}, {MPI_SHORT, sizeof(short), "SHORT"},
        {MPI_UNSIGNED_SHORT, sizeof(short), "UNSIGNED_SHORT"}, {MPI_INT, sizeof(int), "INT"},
        {MPI_UNSIGNED, sizeof(int), "UNSIGNED"}, {MPI_LONG, sizeof(long), "LONG"},
        {MPI_UNSIGNED_LONG, sizeof(long), "UNSIGNED_LONG"}, {MPI_LONG_LONG_INT, sizeof(long long), "LONG_LONG_INT"},
        {MPI_LONG_LONG, sizeof(long long), "LONG_LONG"}, {MPI_UNSIGNED_LONG_LONG, sizeof(long long), "UNSIGNED_LONG_LONG"},
        {MPI_FLOAT, sizeof(float), "FLOAT"}, {MPI_DOUBLE, sizeof(double), "DOUBLE"},
        {MPI_LONG_DOUBLE, sizeof(long double), "LONG_DOUBLE"}, {MPI_INT8_T, 1, "INT8_T"}, {MPI_INT16_T, 2, "INT16_T"},
        {MPI_INT32_T, 4, "INT32_T"}, {MPI_INT64_T, 8, "INT64_T"}, {MPI_UINT8_T, 1, "UINT8_T"},
        {MPI_UINT16_T, 2, "UINT16_T"}, {MPI_UINT32_T, 4, "UINT32_T"}, {MPI_UINT64_T, 8, "UINT64_T"},
        {MPI_C_BOOL, sizeof(bool), "C_BOOL"}, {MPI_C_FLOAT_COMPLEX, sizeof(float _Complex), "C_FLOAT_COMPLEX"},
        {MPI_C_COMPLEX, sizeof(float _Complex), "C_COMPLEX"},
        {MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex), "C_DOUBLE_COMPLEX"},
        {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), "C_LONG_DOUBLE_COMPLEX"},
        {MPI_AINT, sizeof(MPI_Aint), "AINT"}, {MPI_OFFSET, sizeof(MPI_Offset), "OFFSET"},
        {MPI_COUNT, sizeof(MPI_Count), "COUNT"}, {MPI_PACKED, 1, "PACKED"},
        {MPI_INTEGER, 4, "INTEGER"}, {MPI_REAL, 4, "REAL"}, {MPI_DOUBLE_PRECISION, 8, "DOUBLE_PRECISION"},
        {MPI_COMPLEX, 8, "COMPLEX"}, {MPI_DOUBLE_COMPLEX, 16, "DOUBLE_COMPLEX"}, {MPI_LOGICAL, 4, "LOGICAL"},
        {MPI_CHARACTER, 1, "CHARACTER"}, {MPI_INTEGER1, 1, "INTEGER1"}, {MPI_INTEGER2, 2, "INTEGER2"},
        {MPI_INTEGER4, 4, "INTEGER4"}, {MPI_INTEGER8, 8, "INTEGER8"}, {MPI_REAL4, 4, "REAL4"},
        {MPI_REAL8, 8, "REAL8"}, {MPI_2INT, 8, "2INT"}, {MPI_2REAL, 8, "2REAL"},
        {MPI_2DOUBLE_PRECISION, 16, "2DOUBLE_PRECISION"}, {MPI_2INTEGER, 8, "2INTEGER"},
        {MPI_FLOAT_INT, sizeof fi, "FLOAT_INT"}, {MPI_DOUBLE_INT, sizeof di, "DOUBLE_INT"},
        {MPI_LONG_INT, sizeof li, "LONG_INT"}, {MPI_SHORT_INT, sizeof si, "SHORT_INT"},
        {MPI_LONG_DOUBLE_INT, sizeof ldi, "LONG_DOUBLE_INT"},
    };
    int ntypes = sizeof types / sizeof types[0];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int COUNT = 37;
    for (int t = 0; t < ntypes; t++) {
        size_t bytes = types[t].size * COUNT;
        unsigned char *out = malloc(bytes), *in = malloc(bytes), *expect = malloc(bytes);
        for (size_t i = 0; i < bytes; i++) {
            out[i] = (unsigned char)((rank * 31 + i * 7 + t) % 200);
            expect[i] = (unsigned char)((left * 31 + i * 7 + t) % 200);
            in[i] = 0xEE;
        }
        MPI_Status st;
        MPI_Sendrecv(out, COUNT, types[t].t, right, t, in, COUNT, types[t].t, left, t, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, types[t].t, &count);
        CHECK(count == COUNT, "%s: count %d", types[t].name, count);
        /* data bytes arrive; the holes inside pair structs stay 0xEE */
        int bad = 0;
        for (size_t i = 0; i < bytes; i++) {
            if (in[i] != expect[i] && in[i] != 0xEE) bad++;
        }
        size_t data_bytes = 0;
        for (size_t i = 0; i < bytes; i++) data_bytes += in[i] == expect[i];
        int tsize;
        MPI_Type_size(types[t].t, &tsize);
        CHECK(bad == 0 && data_bytes == (size_t)tsize * COUNT, "%s: %d wrong bytes", types[t].name, bad);
        MPI_Aint lb, extent;
        MPI_Type_get_extent(types[t].t, &lb, &extent);
        CHECK(lb == 0 && extent == (MPI_Aint)types[t].size, "%s: extent %ld, C says %zu", types[t].name, (long)extent, types[t].size);
        free(out); free(in); free(expect);
    }
    return finish();
}
