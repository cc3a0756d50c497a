/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SINGLE_COPY_MIN=1G;OXMPI_SHM_COLL_LONG_MAX=0
 * Long blocking Bcast, Allgather, Allgatherv (blocks of one size, in
 * reverse order, apart), Scatter, Gather, Alltoall, Alltoallv (blocks
 * of sizes that differ by pair, some short), Allreduce, Reduce,
 * Reduce_scatter_block, Reduce_scatter, Scan and Exscan (oxmpi sends them through the
 * shared-memory mailboxes in 32 KiB pieces, at every size with
 * OXMPI_SINGLE_COPY_MIN=1G; the reductions from 3 ranks on, with a sum,
 * a user operator that does not commute (Scan and Exscan too; Reduce_scatter with parts of
 * different sizes, one empty), a user sum over every other int
 * (Reduce_scatter_block) and, for Allreduce, MAXLOC on (double, int)
 * pairs, 12 bytes packed): sizes on
 * both sides of a piece, of the pieces a rank publishes ahead (8) and of
 * the mailbox's slots (16), up to 1 MiB and odd; every root; in place and not; many
 * operations back to back before any result is checked (ranks run
 * operations ahead of each other); point-to-point messages and a
 * nonblocking broadcast in flight between them; halves of a split;
 * communicators freed and made again (their context ids come back);
 * derived types packed around the exchange. Every byte is checked
 * against a value computed here. */
#include "common.h"

static int rank, size;

/* the byte at index i of rank r's block in operation k */
static unsigned char val(int r, size_t i, int k)
{
    return (unsigned char)(r * 131 + i * 7 + k * 29 + (i >> 12));
}

/* the first wrong byte of a block, or -1 */
static long wrong(const unsigned char *b, size_t len, int r, int k)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != val(r, i, k)) return (long)i;
    return -1;
}

#define PIECE 32768
static const size_t sizes[] = {4097, PIECE - 1, PIECE, PIECE + 1, 8 * PIECE + 5, 17 * PIECE + 3, (1 << 20) + 7};
#define NSIZES (sizeof sizes / sizeof sizes[0])
/* bytes between an Allgatherv's blocks */
#define GAP 3

/* bytes of rank `from`'s Alltoallv block for rank `to` out of blocks of
 * `b`: b, b / 2, b / 3 or 16 (short enough for the publication) */
static int vsize(size_t b, int from, int to)
{
    int s = (from * 3 + to) % 4;
    return s == 3 ? 16 : (int)(b / (s + 1));
}

/* Bcast, Allgather(v), Scatter, Gather (in place or not) and Alltoall(v) of `b`-byte blocks on
 * `comm`, operation number k; the number of wrong blocks */
static int round_of(MPI_Comm comm, size_t b, int k, unsigned char *x, unsigned char *y)
{
    int me, n, bad = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int root = k % n;
    for (size_t i = 0; i < b; i++) x[i] = me == root ? val(root, i, k) : 0xee;
    MPI_Bcast(x, (int)b, MPI_BYTE, root, comm);
    long w = wrong(x, b, root, k);
    CHECK(w < 0, "bcast of %zu bytes from %d: byte %ld wrong", b, root, w);
    bad += w >= 0;

    int in_place = k % 2;
    memset(y, 0xee, b * n);
    for (size_t i = 0; i < b; i++) (in_place ? y + me * b : x)[i] = val(me, i, k);
    MPI_Allgather(in_place ? MPI_IN_PLACE : x, (int)b, MPI_BYTE, y, (int)b, MPI_BYTE, comm);
    for (int r = 0; r < n; r++) {
        w = wrong(y + r * b, b, r, k);
        CHECK(w < 0, "allgather%s of %zu bytes: block %d byte %ld wrong", in_place ? " in place" : "", b, r, w);
        bad += w >= 0;
    }

    /* the same blocks by Allgatherv, in reverse rank order, GAP bytes
     * apart (the gaps untouched) */
    int counts[64], displs[64];
    for (int r = 0; r < n; r++) {
        counts[r] = (int)b;
        displs[r] = (int)((n - 1 - r) * (b + GAP));
    }
    memset(y, 0xee, (b + GAP) * n);
    for (size_t i = 0; i < b; i++) (in_place ? y + displs[me] : x)[i] = val(me, i, k + 1);
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : x, (int)b, MPI_BYTE, y, counts, displs, MPI_BYTE, comm);
    for (int r = 0; r < n; r++) {
        w = wrong(y + displs[r], b, r, k + 1);
        for (size_t i = 0; i < GAP && w < 0; i++)
            if (y[displs[r] + b + i] != 0xee) w = (long)(b + i);
        CHECK(w < 0, "allgatherv%s of %zu bytes: block %d byte %ld wrong", in_place ? " in place" : "", b, r, w);
        bad += w >= 0;
    }

    /* Scatter from the root, then Gather back to it, the root's own
     * block in place when k is odd */
    int root_in_place = in_place && me == root;
    if (me == root)
        for (int t = 0; t < n; t++)
            for (size_t i = 0; i < b; i++) x[t * b + i] = val(t, i, k + 2);
    memset(y, 0xee, b);
    MPI_Scatter(x, (int)b, MPI_BYTE, root_in_place ? MPI_IN_PLACE : y, (int)b, MPI_BYTE, root, comm);
    w = root_in_place ? -1 : wrong(y, b, me, k + 2);
    CHECK(w < 0, "scatter of %zu bytes from %d: byte %ld wrong", b, root, w);
    bad += w >= 0;
    for (size_t i = 0; i < b; i++) x[i] = val(me, i, k + 3);
    if (me == root) {
        memset(y, 0xee, b * n);
        if (root_in_place) memcpy(y + me * b, x, b);
    }
    MPI_Gather(root_in_place ? MPI_IN_PLACE : x, (int)b, MPI_BYTE, y, (int)b, MPI_BYTE, root, comm);
    for (int r = 0; r < n && me == root; r++) {
        w = wrong(y + r * b, b, r, k + 3);
        CHECK(w < 0, "gather of %zu bytes to %d: block %d byte %ld wrong", b, root, r, w);
        bad += w >= 0;
    }

    /* block t of rank r goes to rank t: its bytes are val(r * n + t) */
    for (int t = 0; t < n; t++)
        for (size_t i = 0; i < b; i++) x[t * b + i] = val(me * n + t, i, k);
    memset(y, 0xee, b * n);
    MPI_Alltoall(x, (int)b, MPI_BYTE, y, (int)b, MPI_BYTE, comm);
    for (int r = 0; r < n; r++) {
        w = wrong(y + r * b, b, r * n + me, k);
        CHECK(w < 0, "alltoall of %zu bytes: block from %d byte %ld wrong", b, r, w);
        bad += w >= 0;
    }

    /* Alltoallv of blocks whose sizes differ by pair (vsize), received
     * in reverse rank order */
    int sc[64], sd[64], rc[64], rd[64], at = 0;
    for (int t = 0; t < n; t++) {
        sc[t] = vsize(b, me, t);
        sd[t] = at;
        at += sc[t];
    }
    at = 0;
    for (int r = n - 1; r >= 0; r--) {
        rc[r] = vsize(b, r, me);
        rd[r] = at;
        at += rc[r];
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i < sc[t]; i++) x[sd[t] + i] = val(me * n + t, i, k + 4);
    memset(y, 0xee, at);
    MPI_Alltoallv(x, sc, sd, MPI_BYTE, y, rc, rd, MPI_BYTE, comm);
    for (int r = 0; r < n; r++) {
        w = wrong(y + rd[r], rc[r], r * n + me, k + 4);
        CHECK(w < 0, "alltoallv of %d bytes from %d: byte %ld wrong", rc[r], r, w);
        bad += w >= 0;
    }
    return bad;
}

/* inout += in, items of one int every two (the layout of `every2`) */
static void every2_add(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int j = 0; j < *len; j++) ((int *)inout)[2 * j] += ((int *)in)[2 * j];
}

/* Allreduce over about `b` bytes on `comm`, operation number k: a sum of
 * ints (in place when k is odd), matrix products in rank order, MAXLOC of
 * (double, int); the number of wrong items */
static int reduce_round(MPI_Comm comm, size_t b, int k, MPI_Op mat_op, MPI_Datatype mat, void *x, void *y)
{
    int me, n, bad = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *xi = x, *yi = y, cnt = (int)(b / sizeof(int));
    for (int i = 0; i < cnt; i++) (k % 2 ? yi : xi)[i] = me * 3 + i + k;
    MPI_Allreduce(k % 2 ? MPI_IN_PLACE : x, y, cnt, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < cnt; i++) bad += yi[i] != n * (i + k) + 3 * n * (n - 1) / 2;
    CHECK(bad == 0, "allreduce sum of %d ints: %d wrong", cnt, bad);

    /* item i of rank r: [[1, (r + i) % 5 + k], [0, 2]], whose products
     * depend on the order: m0 m1 ... in rank order */
    int items = (int)(b / 16), w = 0;
    for (int i = 0; i < items; i++) {
        int m[4] = {1, (me + i) % 5 + k, 0, 2};
        memcpy(xi + 4 * i, m, sizeof m);
    }
    MPI_Allreduce(x, y, items, mat, mat_op, comm);
    for (int i = 0; i < items; i++) {
        int want[4] = {1, 0, 0, 1}, one = 1;
        for (int r = 0; r < n; r++) {
            int m[4] = {1, (r + i) % 5 + k, 0, 2};
            mat2_product(want, m, &one, NULL); /* m = want m */
            memcpy(want, m, sizeof m);
        }
        w += memcmp(yi + 4 * i, want, sizeof want) != 0;
    }
    CHECK(w == 0, "allreduce of %d matrices: %d wrong", items, w);
    bad += w;
    /* the prefixes m0 ... m_me (Scan) and m0 ... m_(me-1) (Exscan, which
     * leaves rank 0's receive buffer alone), in place when k is odd */
    for (int ex = 0; ex < 2; ex++) {
        memset(y, 0xee, (size_t)items * 16);
        if (k % 2) memcpy(y, x, (size_t)items * 16);
        const void *in = k % 2 ? MPI_IN_PLACE : x;
        if (ex)
            MPI_Exscan(in, y, items, mat, mat_op, comm);
        else
            MPI_Scan(in, y, items, mat, mat_op, comm);
        w = 0;
        for (int i = 0; i < items; i++) {
            int want[4] = {1, 0, 0, 1}, one = 1, upto = ex ? me : me + 1;
            for (int r = 0; r < upto; r++) {
                int m[4] = {1, (r + i) % 5 + k, 0, 2};
                mat2_product(want, m, &one, NULL);
                memcpy(want, m, sizeof m);
            }
            if (upto == 0 && k % 2) /* what rank 0's buffer held */
                memcpy(want, xi + 4 * i, sizeof want);
            else if (upto == 0)
                memset(want, 0xee, sizeof want);
            w += memcmp(yi + 4 * i, want, sizeof want) != 0;
        }
        CHECK(w == 0, "%s of %d matrices: %d wrong", ex ? "exscan" : "scan", items, w);
        bad += w;
    }

    struct pair {
        double v;
        int at;
    } *px = x, *py = y;
    int pairs = (int)(b / sizeof *px);
    for (int i = 0; i < pairs; i++) px[i] = (struct pair){(double)((me * 7 + i) % n), me};
    MPI_Allreduce(px, py, pairs, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    w = 0;
    for (int i = 0; i < pairs; i++) {
        int first = -1; /* the lowest rank holding the largest value, n - 1 */
        for (int r = 0; r < n && first < 0; r++)
            if ((r * 7 + i) % n == n - 1) first = r;
        w += py[i].v != n - 1 || py[i].at != first;
    }
    CHECK(w == 0, "allreduce MAXLOC of %d pairs: %d wrong", pairs, w);
    bad += w;

    /* the same sum and products by MPI_Reduce to every root in turn, the
     * root's contribution in place when k is odd */
    for (int root = 0; root < n; root++) {
        /* MPICH 4.0.2 (the reference run) crashes on an in-place Reduce
         * at a root other than 0 (pmodels/mpich#6540, fixed by #6543) */
        int in_place = k % 2 && me == root && (root == 0 || !getenv("OXMPI_TEST_REFERENCE"));
        for (int i = 0; i < cnt; i++) (in_place ? yi : xi)[i] = me * 3 + i + k;
        if (!in_place) memset(y, 0xee, (size_t)cnt * sizeof(int));
        MPI_Reduce(in_place ? MPI_IN_PLACE : x, y, cnt, MPI_INT, MPI_SUM, root, comm);
        w = 0;
        for (int i = 0; i < cnt && me == root; i++) w += yi[i] != n * (i + k) + 3 * n * (n - 1) / 2;
        CHECK(w == 0, "reduce sum of %d ints to %d: %d wrong", cnt, root, w);
        bad += w;
        for (int i = 0; i < items; i++) {
            int m[4] = {1, (me + i) % 5 + k, 0, 2};
            memcpy(xi + 4 * i, m, sizeof m);
        }
        MPI_Reduce(x, y, items, mat, mat_op, root, comm);
        w = 0;
        for (int i = 0; i < items && me == root; i++) {
            int want[4] = {1, 0, 0, 1}, one = 1;
            for (int r = 0; r < n; r++) {
                int m[4] = {1, (r + i) % 5 + k, 0, 2};
                mat2_product(want, m, &one, NULL);
                memcpy(want, m, sizeof m);
            }
            w += memcmp(yi + 4 * i, want, sizeof want) != 0;
        }
        CHECK(w == 0, "reduce of %d matrices to %d: %d wrong", items, root, w);
        bad += w;
    }

    /* the same sum scattered in blocks, in place when k is odd */
    int blk = cnt / n;
    for (int i = 0; i < blk * n; i++) (k % 2 ? yi : xi)[i] = me * 3 + i + k;
    if (k % 2 == 0) memset(y, 0xee, (size_t)blk * sizeof(int));
    MPI_Reduce_scatter_block(k % 2 ? MPI_IN_PLACE : x, y, blk, MPI_INT, MPI_SUM, comm);
    w = 0;
    for (int i = 0; i < blk; i++) w += yi[i] != n * (me * blk + i + k) + 3 * n * (n - 1) / 2;
    CHECK(w == 0, "reduce_scatter_block sum of %d ints a rank: %d wrong", blk, w);
    bad += w;

    /* the same through a strided type (every other int: packed around
     * the exchange) and a user sum (predefined operators take predefined
     * types only), in place when k is odd */
    MPI_Datatype every2;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2);
    MPI_Type_commit(&every2);
    MPI_Op every2_sum;
    MPI_Op_create(every2_add, 1, &every2_sum);
    int blk2 = cnt / (2 * n);
    memset(k % 2 ? y : x, 0xee, (size_t)blk2 * n * 2 * sizeof(int));
    for (int i = 0; i < blk2 * n; i++) (k % 2 ? yi : xi)[2 * i] = me * 3 + i + k;
    if (k % 2 == 0) memset(y, 0xee, (size_t)blk2 * 2 * sizeof(int));
    MPI_Reduce_scatter_block(k % 2 ? MPI_IN_PLACE : x, y, blk2, every2, every2_sum, comm);
    w = 0;
    for (int i = 0; i < blk2; i++) {
        w += yi[2 * i] != n * (me * blk2 + i + k) + 3 * n * (n - 1) / 2;
        w += (unsigned)yi[2 * i + 1] != 0xeeeeeeeeu; /* the gaps untouched */
    }
    CHECK(w == 0, "reduce_scatter_block of %d strided ints a rank: %d wrong", blk2, w);
    bad += w;
    MPI_Type_free(&every2);
    MPI_Op_free(&every2_sum);

    /* the products scattered in parts of different sizes (rank 1's empty
     * from 3 ranks on, the rest to rank 0) */
    int counts[64], total = 0, before = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = r == 1 && n > 2 ? 0 : (int)((long)items * (r + 1) / (n * (n + 1)));
        total += counts[r];
    }
    counts[0] += items - total;
    for (int r = 0; r < me; r++) before += counts[r];
    for (int i = 0; i < items; i++) {
        int m[4] = {1, (me + i) % 5 + k, 0, 2};
        memcpy(xi + 4 * i, m, sizeof m);
    }
    memset(y, 0xee, (size_t)counts[me] * 16);
    MPI_Reduce_scatter(x, y, counts, mat, mat_op, comm);
    w = 0;
    for (int i = 0; i < counts[me]; i++) {
        int want[4] = {1, 0, 0, 1}, one = 1;
        for (int r = 0; r < n; r++) {
            int m[4] = {1, (r + before + i) % 5 + k, 0, 2};
            mat2_product(want, m, &one, NULL);
            memcpy(want, m, sizeof m);
        }
        w += memcmp(yi + 4 * i, want, sizeof want) != 0;
    }
    CHECK(w == 0, "reduce_scatter of %d of %d matrices: %d wrong", counts[me], items, w);
    bad += w;
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t most = sizes[NSIZES - 1];
    unsigned char *x = malloc(most * size), *y = malloc((most + GAP) * size);
    int bad = 0;

    /* every size, every root, on the world */
    for (size_t s = 0; s < NSIZES && !bad; s++)
        for (int k = 0; k < size + 1 && !bad; k++) bad += round_of(MPI_COMM_WORLD, sizes[s], k, x, y);
    MPI_Op mat_op;
    MPI_Op_create(mat2_product, 0, &mat_op);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    for (size_t s = 0; s < NSIZES && !bad; s++)
        for (int k = 0; k < 2 && !bad; k++) bad += reduce_round(MPI_COMM_WORLD, sizes[s], k, mat_op, mat, x, y);

    /* back to back: 40 broadcasts into 40 buffers from rotating roots,
     * then 40 allgathers, with a message round the ring and a
     * nonblocking broadcast in flight; checked only at the end */
    enum { BACK = 40 };
    size_t b = 3 * PIECE + 11;
    unsigned char *many = malloc(BACK * b * size);
    unsigned char nb[100];
    MPI_Request nbr;
    for (int i = 0; i < 100; i++) nb[i] = rank == 0 ? (unsigned char)i : 0;
    MPI_Ibcast(nb, 100, MPI_BYTE, 0, MPI_COMM_WORLD, &nbr);
    for (int k = 0; k < BACK; k++) {
        unsigned char *m = many + k * b;
        for (size_t i = 0; i < b; i++) m[i] = rank == k % size ? val(k % size, i, k) : 0;
        MPI_Bcast(m, (int)b, MPI_BYTE, k % size, MPI_COMM_WORLD);
        int tok = k, got = -1;
        MPI_Sendrecv(&tok, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, (rank + size - 1) % size, 5,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += got != k;
    }
    for (int k = 0; k < BACK; k++) bad += wrong(many + k * b, b, k % size, k) >= 0;
    CHECK(bad == 0, "back-to-back broadcasts: %d wrong", bad);
    for (int k = 0; k < BACK / 4; k++) {
        unsigned char *m = many + k * b * size;
        for (size_t i = 0; i < b; i++) m[rank * b + i] = val(rank, i, k);
        MPI_Allgather(MPI_IN_PLACE, (int)b, MPI_BYTE, m, (int)b, MPI_BYTE, MPI_COMM_WORLD);
    }
    for (int k = 0; k < BACK / 4; k++)
        for (int r = 0; r < size; r++) bad += wrong(many + (k * size + r) * b, b, r, k) >= 0;
    CHECK(bad == 0, "back-to-back allgathers: %d wrong", bad);
    MPI_Wait(&nbr, MPI_STATUS_IGNORE);
    for (int i = 0; i < 100; i++) bad += nb[i] != i;
    CHECK(bad == 0, "nonblocking broadcast among long ones: %d wrong", bad);
    free(many);

    /* halves of a split, each on its own */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int k = 0; k < 3 && !bad; k++) bad += round_of(half, 5 * PIECE + 3, k, x, y);
    for (int k = 0; k < 2 && !bad; k++) bad += reduce_round(half, 5 * PIECE + 3, k, mat_op, mat, x, y);
    MPI_Comm_free(&half);

    /* communicators freed and made again reuse context ids and number
     * their operations from 1 again: no piece of the old one's may be
     * read as the new one's */
    for (int k = 0; k < 60 && !bad; k++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        size_t len = 2 * PIECE + 17 * k;
        for (size_t i = 0; i < len; i++) x[i] = rank == k % size ? val(k % size, i, k) : 0;
        MPI_Bcast(x, (int)len, MPI_BYTE, k % size, c);
        long w = wrong(x, len, k % size, k);
        CHECK(w < 0, "bcast on re-made communicator %d: byte %ld wrong", k, w);
        bad += w >= 0;
        MPI_Comm_free(&c);
    }

    /* a strided type: every other int of 2 x 20000, packed around the
     * pieces; and alltoall from a vector send type */
    MPI_Datatype strided;
    MPI_Type_vector(20000, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int *iv = malloc(40000 * sizeof(int) * size);
    for (int i = 0; i < 40000; i++) iv[i] = rank == size - 1 ? i : -1;
    MPI_Bcast(iv, 1, strided, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < 40000; i++) bad += iv[i] != (i % 2 == 0 || rank == size - 1 ? i : -1);
    CHECK(bad == 0, "strided bcast: %d wrong", bad);
    int *out = malloc(20000 * sizeof(int) * size);
    /* the type's extent is 39999 ints: block t starts there */
    for (int i = 0; i < 40000 * size; i++) iv[i] = -1;
    for (int t = 0; t < size; t++)
        for (int j = 0; j < 20000; j++) iv[t * 39999 + 2 * j] = rank * 1000000 + t * 20000 + j;
    MPI_Alltoall(iv, 1, strided, out, 20000, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 20000; i++) bad += out[r * 20000 + i] != r * 1000000 + rank * 20000 + i;
    CHECK(bad == 0, "alltoall of a strided type: %d wrong", bad);
    MPI_Type_free(&strided);
    MPI_Type_free(&mat);
    MPI_Op_free(&mat_op);
    free(iv), free(out), free(x), free(y);
    return finish();
}
