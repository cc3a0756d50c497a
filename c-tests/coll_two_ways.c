/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_TWO_RANK_BLOCKS=read;OXMPI_TWO_RANK_BLOCKS=pieces;OXMPI_TEST_RANK0_ENV=OXMPI_TWO_RANK_BLOCKS=read,OXMPI_TWO_RANK_BLOCKS=pieces;OXMPI_TEST_RANK0_ENV=OXMPI_TWO_RANK_BLOCKS=pieces,OXMPI_TWO_RANK_BLOCKS=read
 * Long blocking Alltoall, Allgather (from a send buffer and in place),
 * Allgatherv (parts of one size, in reverse order) and Alltoallv (blocks
 * of a size for each pair of ranks, each way), many times in a row
 * at sizes from just above the third of OXMPI_SINGLE_COPY_MIN to 1 MiB:
 * between two ranks oxmpi sends each block in pieces or has its reader
 * copy it straight out of the writer's buffer, each writer choosing per
 * call (auto), or as OXMPI_TWO_RANK_BLOCKS says, the same on every rank
 * or (OXMPI_TEST_RANK0_ENV) one way on rank 0 and the other elsewhere.
 * Every send buffer is freed, and its memory written over, as soon as
 * the call returns: a reader still copying from it would get wrong
 * bytes. Every byte is checked. */
#include "common.h"

static int rank, size;

static unsigned char val(int from, int to, size_t i, int k)
{
    return (unsigned char)(from * 37 + to * 11 + i * 13 + k * 7 + (i >> 13));
}

static const size_t sizes[] = {43704, 65536 + 24, 300000, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define ROUNDS 24

/* The first wrong byte of block `got` from `from` to `to`, or -1. */
static long wrong(const unsigned char *got, size_t b, int from, int to, int k)
{
    for (size_t i = 0; i < b; i++)
        if (got[i] != val(from, to, i, k)) return (long)i;
    return -1;
}

/* A send buffer of `n` blocks of `b` bytes, block r `val(rank, r or
 * every, ...)`; freed by `done_with` after the call. */
static unsigned char *filled(size_t b, int n, int every, int k)
{
    unsigned char *s = malloc(b * n);
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < b; i++) s[r * b + i] = val(rank, every ? 0 : r, i, k);
    return s;
}

static void done_with(unsigned char *s, size_t len)
{
    memset(s, 0xa5, len);
    free(s);
    /* a buffer of the same size at once, written too: it may take the
     * freed one's place */
    unsigned char *t = malloc(len);
    memset(t, 0x5a, len);
    free(t);
}

int main(int argc, char **argv)
{
    env_for_rank0();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (size_t z = 0; z < NSIZES; z++) {
        size_t b = sizes[z];
        unsigned char *r = malloc(b * size);
        for (int k = 0; k < ROUNDS; k++) {
            unsigned char *s = filled(b, size, 0, k);
            int e = MPI_Alltoall(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, MPI_COMM_WORLD);
            done_with(s, b * size);
            CHECK(e == MPI_SUCCESS, "alltoall of %zu bytes, round %d: error %d", b, k, e);
            for (int q = 0; q < size; q++) {
                long at = wrong(r + q * b, b, q, rank, k);
                CHECK(at < 0, "alltoall of %zu bytes, round %d: byte %ld from rank %d wrong", b, k, at, q);
            }

            s = filled(b, 1, 1, k);
            e = MPI_Allgather(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, MPI_COMM_WORLD);
            done_with(s, b);
            CHECK(e == MPI_SUCCESS, "allgather of %zu bytes, round %d: error %d", b, k, e);
            for (int q = 0; q < size; q++) {
                long at = wrong(r + q * b, b, q, 0, k);
                CHECK(at < 0, "allgather of %zu bytes, round %d: byte %ld from rank %d wrong", b, k, at, q);
            }

            /* in place, then an allgatherv of parts in reverse order */
            for (size_t i = 0; i < b; i++) r[rank * b + i] = val(rank, 1, i, k);
            e = MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, r, (int)b, MPI_BYTE, MPI_COMM_WORLD);
            CHECK(e == MPI_SUCCESS, "allgather in place of %zu bytes, round %d: error %d", b, k, e);
            for (int q = 0; q < size; q++) {
                long at = wrong(r + q * b, b, q, 1, k);
                CHECK(at < 0, "allgather in place of %zu bytes, round %d: byte %ld from rank %d wrong", b, k, at, q);
            }
            for (int q = 0; q < size; q++) {
                counts[q] = (int)b;
                displs[q] = (int)((size - 1 - q) * b);
            }
            s = filled(b, 1, 1, k + 1);
            e = MPI_Allgatherv(s, (int)b, MPI_BYTE, r, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
            done_with(s, b);
            CHECK(e == MPI_SUCCESS, "allgatherv of %zu bytes, round %d: error %d", b, k, e);
            for (int q = 0; q < size; q++) {
                long at = wrong(r + displs[q], b, q, 0, k + 1);
                CHECK(at < 0, "allgatherv of %zu bytes, round %d: byte %ld from rank %d wrong", b, k, at, q);
            }
        }
        /* alltoallv: rank p's block for rank q, b + 1000 p + 300 q bytes */
        size_t most = b + 1300 * size;
        unsigned char *rv = malloc(most * size);
        int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
        for (int q = 0; q < size; q++) {
            sc[q] = (int)(b + 1000 * rank + 300 * q), sd[q] = (int)(q * most);
            counts[q] = (int)(b + 1000 * q + 300 * rank), displs[q] = (int)((size - 1 - q) * most);
        }
        for (int k = 0; k < ROUNDS; k++) {
            unsigned char *s = malloc(most * size);
            for (int q = 0; q < size; q++)
                for (int i = 0; i < sc[q]; i++) s[sd[q] + i] = val(rank, q, i, k);
            int e = MPI_Alltoallv(s, sc, sd, MPI_BYTE, rv, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
            done_with(s, most * size);
            CHECK(e == MPI_SUCCESS, "alltoallv of about %zu bytes, round %d: error %d", b, k, e);
            for (int q = 0; q < size; q++) {
                long at = wrong(rv + displs[q], counts[q], q, rank, k);
                CHECK(at < 0, "alltoallv of about %zu bytes, round %d: byte %ld from rank %d wrong", b, k, at, q);
            }
        }
        free(rv), free(sc), free(sd);
        free(r);
    }
    free(counts), free(displs);
    return finish();
}
