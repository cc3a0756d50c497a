/* oxmpi-test: ranks=2,4 variants=OXMPI_SLOTS=4,OXMPI_EAGER_LIMIT=1024;OXMPI_SLOTS=16,OXMPI_EAGER_LIMIT=4096;OXMPI_LONG_EAGER_LIMIT=0;OXMPI_LONG_EAGER_LIMIT=48k
 * Messages of every length around the ring's slot sizes, where a host
 * with more ranks than cores sends them eagerly over several slots in a
 * row (at 4 ranks here): a stream of them, unexpected and expected, in
 * order on one tag, probed, synchronous and ready, and one rank sending
 * to all others at once, each byte checked. */
#include "common.h"

static unsigned char val(size_t i, int seed)
{
    return (unsigned char)((i * 7 + (size_t)seed * 131) ^ (i >> 8));
}

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) b[i] = val(i, seed);
}

static void check(const unsigned char *b, size_t n, int seed, const char *what)
{
    size_t i = 0;
    while (i < n && b[i] == val(i, seed)) i++;
    CHECK(i == n, "%s: %zu bytes (seed %d): byte %zu is %u, not %u", what, n, seed, i, b[i], val(i, seed));
}

/* Lengths around slot boundaries for slots of 1 KiB, 4 KiB and 16 KiB
 * (a slot's stride is its payload and a 56-byte header, in 64-byte
 * lines), and some between. */
static size_t lens[64];
static int nlens;

static void make_lens(void)
{
    size_t payloads[] = {1024, 4096, 16384};
    for (int p = 0; p < 3; p++) {
        size_t stride = (payloads[p] + 56 + 63) / 64 * 64;
        for (int k = 1; k <= 4; k++) {
            lens[nlens++] = k * stride - 56 - 1;
            lens[nlens++] = k * stride - 56;
            lens[nlens++] = k * stride - 56 + 1;
        }
    }
    lens[nlens++] = 0;
    lens[nlens++] = 28000;
    lens[nlens++] = 56000;
    lens[nlens++] = 65536;
    lens[nlens++] = 65537;
    lens[nlens++] = 100000;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_lens();
    size_t total = 0;
    for (int i = 0; i < nlens; i++) total += lens[i];
    unsigned char *out = malloc(total + 1), *in = malloc(total + 1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* 1. a stream on one tag, all sent before the receiver looks
     * (unexpected), then received in order */
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * nlens);
    size_t at = 0;
    for (int i = 0; i < nlens; i++) {
        fill(out + at, lens[i], i + rank);
        MPI_Isend(out + at, (int)lens[i], MPI_BYTE, right, 5, MPI_COMM_WORLD, &reqs[i]);
        at += lens[i];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    at = 0;
    for (int i = 0; i < nlens; i++) {
        MPI_Status st;
        int count;
        MPI_Probe(left, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)lens[i], "probe %d: count %d, sent %zu", i, count, lens[i]);
        MPI_Recv(in + at, (int)lens[i], MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)lens[i], "recv %d: count %d", i, count);
        check(in + at, lens[i], i + left, "unexpected stream");
        at += lens[i];
    }
    MPI_Waitall(nlens, reqs, MPI_STATUSES_IGNORE);

    /* 2. the same with every receive posted first (expected), synchronous
     * sends every third message and a ready one where the receive is
     * surely posted */
    at = 0;
    for (int i = 0; i < nlens; i++) {
        MPI_Irecv(in + at, (int)lens[i], MPI_BYTE, left, 6, MPI_COMM_WORLD, &reqs[i]);
        at += lens[i];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    at = 0;
    for (int i = 0; i < nlens; i++) {
        fill(out + at, lens[i], 1000 + i + rank);
        if (i % 3 == 0)
            MPI_Ssend(out + at, (int)lens[i], MPI_BYTE, right, 6, MPI_COMM_WORLD);
        else if (i % 3 == 1)
            MPI_Rsend(out + at, (int)lens[i], MPI_BYTE, right, 6, MPI_COMM_WORLD);
        else
            MPI_Send(out + at, (int)lens[i], MPI_BYTE, right, 6, MPI_COMM_WORLD);
        at += lens[i];
    }
    MPI_Waitall(nlens, reqs, MPI_STATUSES_IGNORE);
    at = 0;
    for (int i = 0; i < nlens; i++) {
        check(in + at, lens[i], 1000 + i + left, "expected stream");
        at += lens[i];
    }

    /* 3. rank 0 sends to every other rank at once, longest first, while
     * they send back to it: rings in both directions full at once */
    if (rank == 0) {
        MPI_Request *rr = malloc(sizeof(MPI_Request) * 2 * size * nlens);
        unsigned char **back = malloc(sizeof(unsigned char *) * size);
        int n = 0;
        for (int r = 1; r < size; r++) {
            back[r] = malloc(total + 1);
            at = 0;
            for (int i = nlens - 1; i >= 0; i--) {
                fill(out + at, lens[i], 3000 + i);
                MPI_Isend(out + at, (int)lens[i], MPI_BYTE, r, 7, MPI_COMM_WORLD, &rr[n++]);
                MPI_Irecv(back[r] + at, (int)lens[i], MPI_BYTE, r, 8, MPI_COMM_WORLD, &rr[n++]);
                at += lens[i];
            }
        }
        MPI_Waitall(n, rr, MPI_STATUSES_IGNORE);
        for (int r = 1; r < size; r++) {
            at = 0;
            for (int i = nlens - 1; i >= 0; i--) {
                check(back[r] + at, lens[i], 2000 + i + r, "to rank 0");
                at += lens[i];
            }
            free(back[r]);
        }
        free(back);
        free(rr);
    } else {
        at = 0;
        for (int i = nlens - 1; i >= 0; i--) {
            MPI_Status st;
            int count;
            fill(out + at, lens[i], 2000 + i + rank);
            MPI_Send(out + at, (int)lens[i], MPI_BYTE, 0, 8, MPI_COMM_WORLD);
            MPI_Recv(in + at, (int)lens[i], MPI_BYTE, 0, 7, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)lens[i], "from rank 0, message %d: count %d, sent %zu", i, count, lens[i]);
            check(in + at, lens[i], 3000 + i, "from rank 0");
            at += lens[i];
        }
    }
    free(reqs);
    free(out);
    free(in);
    return finish();
}
