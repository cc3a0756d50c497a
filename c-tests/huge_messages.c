/* oxmpi-test: ranks=2 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * Messages of 256 MiB, and one above 2^31 bytes with the large-count
 * (_c) calls, arrive whole and their counts are reported exactly. */
#include "common.h"
#include <stdint.h>

static int check_pattern(const unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4093)
        if (b[i] != (unsigned char)(i * 7 + seed)) return 0;
    return b[n - 1] == (unsigned char)((n - 1) * 7 + seed);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4093) b[i] = (unsigned char)(i * 7 + seed);
    b[n - 1] = (unsigned char)((n - 1) * 7 + seed);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Status st;

    size_t n = 256u << 20;
    unsigned char *b = calloc(n, 1);
    if (rank == 0) {
        fill(b, n, 1);
        MPI_Send(b, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(b, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)n && check_pattern(b, n, 1), "256 MiB message: count %d", count);
    }
    free(b);

    MPI_Count big = ((MPI_Count)1 << 31) + 4096;
    b = calloc((size_t)big, 1);
    CHECK(b != NULL, "cannot allocate %lld bytes", (long long)big);
    if (rank == 0) {
        fill(b, (size_t)big, 2);
        MPI_Send_c(b, big, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv_c(b, big, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
        MPI_Count count;
        MPI_Get_count_c(&st, MPI_BYTE, &count);
        CHECK(count == big && check_pattern(b, (size_t)big, 2), "2^31+4096 bytes: count %lld", (long long)count);
        int small;
        MPI_Get_count(&st, MPI_BYTE, &small);
        CHECK(small == MPI_UNDEFINED, "the int count of a 2 GiB message is MPI_UNDEFINED, got %d", small);
        MPI_Get_count(&st, MPI_INT, &small);
        CHECK(small == (int)(big / 4), "count in ints %d", small);
    }
    free(b);
    return finish();
}
