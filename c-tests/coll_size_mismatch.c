/* oxmpi-test: ranks=2,3,4 mpich=no variants=MISMATCH_CASE=1;MISMATCH_CASE=2;MISMATCH_CASE=3;MISMATCH_CASE=4;MISMATCH_CASE=5;MISMATCH_CASE=6;MISMATCH_CASE=7;MISMATCH_CASE=8;MISMATCH_CASE=9;MISMATCH_CASE=10;MISMATCH_CASE=11;MISMATCH_CASE=12;MISMATCH_CASE=13;MISMATCH_CASE=14;MISMATCH_CASE=15;MISMATCH_CASE=16;MISMATCH_CASE=17;MISMATCH_CASE=18;MISMATCH_CASE=17,OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=18,OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=17,OXMPI_TWO_RANK_BLOCKS=pieces;MISMATCH_CASE=17,OXMPI_TEST_RANK0_ENV=OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=18,OXMPI_TEST_RANK0_ENV=OXMPI_TWO_RANK_BLOCKS=pieces,OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=19;MISMATCH_CASE=19,OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=19,OXMPI_TEST_RANK0_ENV=OXMPI_TWO_RANK_BLOCKS=pieces,OXMPI_TWO_RANK_BLOCKS=read;MISMATCH_CASE=20;MISMATCH_CASE=20,OXMPI_CROWDED_BLOCKS=read;MISMATCH_CASE=20,OXMPI_CROWDED_BLOCKS=pieces;MISMATCH_CASE=21;MISMATCH_CASE=21,OXMPI_SHM_SCAN=every;MISMATCH_CASE=21,OXMPI_SHM_SCAN=chain;MISMATCH_CASE=22
 * Ranks that pass a collective counts of different sizes (here the last
 * rank passes half the count of the others) get an error, never a hang
 * or silently wrong data, with MPI_ERRORS_RETURN: the rank whose buffer
 * is too small for what arrives gets MPI_ERR_TRUNCATE, a rank that gets
 * less than its count from another MPI_ERR_COUNT, and a rank of a
 * collective in pieces that another rank gave up on MPI_ERR_OTHER (in a
 * Scan or Exscan only the last rank, which reads the others' larger
 * parts, fails). Collectives with matching counts afterwards still work. Sizes: whole
 * (up to 4 KiB; up to 40 bytes on the world's arrival lines), in pieces
 * (tens or hundreds of KB), and one rank whole
 * while the others go in pieces (6144 against 3072 bytes), an Alltoall
 * among 3 or more ranks whose last rank's blocks for the others fit one
 * long publication (32 KiB) while the others' go in pieces, or go whole
 * (up to 4 KiB) while the others' fit one long publication, an
 * Alltoallv among 3 or more ranks whose blocks beyond the short
 * publication with its table go in one or several long publications
 * (whole blocks, up to 32 KiB each) on every rank, or on the last rank
 * alone while the others' go in pieces, an Allgatherv of parts of their
 * own sizes, each on its arrival line or in one long publication, whose
 * last rank counts and sends half its part, an Alltoall, an Allgather and an Alltoallv (its
 * blocks outside its tables) between two ranks
 * whose blocks (128 and 64 KiB) go in pieces or are read straight out of
 * the writer's buffer, each rank choosing or told its way (alike or
 * not, OXMPI_TWO_RANK_BLOCKS, OXMPI_TEST_RANK0_ENV), and ranks
 * that the sizes split between shared memory and point-to-point messages
 * (at 2 ranks an Allreduce of more than 4 KiB goes point to point, so
 * 6144 bytes against 3072; a Bcast of OXMPI_SINGLE_COPY_MIN, 128 KiB,
 * or more too, so 192 KB against 96 KB): there a rank whose part went
 * as messages may also get MPI_ERR_COUNT where it would otherwise
 * succeed.
 * Not covered: point-to-point algorithms chosen by size (as in MPICH,
 * ranks that pick different ones wait for each other), nor TCP, where
 * every collective goes point to point, nor a Scan or Exscan whose sizes
 * split the ranks between ways (whole up to 4 KiB, in pieces up to 64
 * KiB, messages beyond): the ranks before the split finish without
 * reading the others, and only those after it get an error, so a later
 * collective may find the ranks on different paths and wait for ever.
 * (MPICH lets some of these pass unnoticed: not run there.) */
#include "common.h"

static int rank, size;

/* A collective with matching counts works after a failed one. */
static void still_works(const char *after)
{
    int x = rank + 1, sum = 0;
    int e = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS && sum == size * (size + 1) / 2, "allreduce after %s: error %d, sum %d", after, e, sum);
}

/* Every rank's error class in `all`. */
static void gather_classes(int e, int *all)
{
    int c = e == MPI_SUCCESS ? MPI_SUCCESS : class_of(e);
    MPI_Allgather(&c, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
}

/* Bcast from rank 0 and Reduce to rank 0: only the ranks that read see
 * the difference. With `split`, the Bcast of the others may fail with
 * MPI_ERR_COUNT (the last rank's part went through shared memory). */
static void rooted(int n, int with_reduce, int split)
{
    int last = size - 1, mine = rank == last ? n / 2 : n;
    double *a = calloc(n, sizeof(double)), *b = calloc(n, sizeof(double));
    for (int i = 0; i < n; i++) a[i] = rank == 0 ? i : -1;
    int e = MPI_Bcast(a, mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == last)
        CHECK(class_of(e) == MPI_ERR_TRUNCATE, "bcast of %d doubles into %d: class %d", n, mine, class_of(e));
    else if (split)
        CHECK(e == MPI_SUCCESS || class_of(e) == MPI_ERR_COUNT, "bcast of %d doubles, rank %d: class %d", n, rank,
              class_of(e));
    else
        CHECK(e == MPI_SUCCESS, "bcast of %d doubles, rank %d: error %d", n, rank, e);
    int bad = 0;
    for (int i = 0; i < mine && !(split && e != MPI_SUCCESS); i++) bad += a[i] != i;
    CHECK(bad == 0, "bcast of %d doubles: %d of the %d that fit are wrong", n, bad, mine);
    still_works("a bcast of different sizes");
    if (!with_reduce) {
        free(a), free(b);
        return;
    }
    for (int i = 0; i < n; i++) a[i] = 1;
    e = MPI_Reduce(a, b, mine, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(class_of(e) == MPI_ERR_COUNT, "reduce of %d doubles, %d from rank %d: class %d", n, n / 2, last,
              class_of(e));
    still_works("a reduce of different sizes");
    free(a), free(b);
}

/* Scatter from rank 0 and Gather to it, blocks of `n` doubles, the last
 * rank's `n / 2`: the one that reads the other size fails (the last rank
 * in the Scatter: its buffer is too small; rank 0 in the Gather: too
 * little arrives); the others succeed (whole or in pieces, a reader
 * follows the writer's part to its end, so that they stay in step), or,
 * their parts split from the odd one's between shared memory and
 * messages, may fail with MPI_ERR_COUNT. */
static void blocks(int n)
{
    int last = size - 1, mine = rank == last ? n / 2 : n;
    double *a = calloc((size_t)n * size, sizeof(double)), *b = calloc((size_t)n * size, sizeof(double));
    for (int i = 0; i < n * size; i++) a[i] = i;
    int e = MPI_Scatter(a, n, MPI_DOUBLE, b, mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == last)
        CHECK(class_of(e) == MPI_ERR_TRUNCATE, "scatter of %d doubles into %d: class %d", n, mine, class_of(e));
    else
        CHECK(e == MPI_SUCCESS || class_of(e) == MPI_ERR_COUNT, "scatter of %d doubles, rank %d: class %d", n, rank,
              class_of(e));
    int bad = 0;
    for (int i = 0; i < n && e == MPI_SUCCESS; i++) bad += b[i] != rank * n + i;
    CHECK(bad == 0, "scatter of %d doubles: %d wrong", n, bad);
    still_works("a scatter of different sizes");
    e = MPI_Gather(a, mine, MPI_DOUBLE, b, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(class_of(e) == MPI_ERR_COUNT, "gather of %d doubles, %d from rank %d: class %d", n, n / 2, last,
              class_of(e));
    else
        CHECK(e == MPI_SUCCESS || class_of(e) == MPI_ERR_COUNT, "gather of %d doubles, rank %d: class %d", n, rank,
              class_of(e));
    still_works("a gather of different sizes");
    free(a), free(b);
}

/* Scan and Exscan: only the last rank reads parts of another size (the
 * others read only ranks before them), too large for it. */
static void prefix(int n)
{
    int last = size - 1, mine = rank == last ? n / 2 : n;
    double *a = calloc(n, sizeof(double)), *b = calloc(n, sizeof(double));
    for (int ex = 0; ex < 2; ex++) {
        const char *name = ex ? "exscan" : "scan";
        int e = ex ? MPI_Exscan(a, b, mine, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
                   : MPI_Scan(a, b, mine, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (rank == last)
            CHECK(class_of(e) == MPI_ERR_TRUNCATE, "%s of %d doubles into %d: class %d", name, n, mine, class_of(e));
        else
            CHECK(e == MPI_SUCCESS, "%s of %d doubles, rank %d: error %d", name, n, rank, e);
        still_works(name);
    }
    free(a), free(b);
}

/* A Scan of `n` doubles whose middle rank (of 3 or more) passes half
 * the count: the ranks before it succeed, it gets MPI_ERR_TRUNCATE (the
 * prefix before it is longer than its buffer), and each rank after it
 * MPI_ERR_COUNT, not a hang nor a wrong prefix: where the Scan goes along
 * the ranks (in pieces, and whole on a crowded host) a rank that failed
 * passes an empty part on; where each rank reads every earlier one's
 * part, the middle one's is too short. The ranks before it have gone on
 * to the next collective, which works. */
static void prefix_middle(int n)
{
    int mid = size / 2, mine = rank == mid ? n / 2 : n;
    double *a = calloc(n, sizeof(double)), *b = calloc(n, sizeof(double));
    int e = MPI_Scan(a, b, mine, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank < mid)
        CHECK(e == MPI_SUCCESS, "scan, rank %d before the middle: error %d", rank, e);
    else if (rank == mid)
        CHECK(class_of(e) == MPI_ERR_TRUNCATE, "scan of %d doubles into %d: class %d", n, mine, class_of(e));
    else
        CHECK(class_of(e) == MPI_ERR_COUNT, "scan, rank %d after the middle: class %d", rank, class_of(e));
    still_works("a scan whose middle rank passed half");
    free(a), free(b);
}

/* Allgather (op 0), Alltoall (1), Allreduce (2), Reduce_scatter_block
 * (3) or Alltoallv (4) of `n` doubles a rank, the last rank `n / 2`:
 * everyone reads everyone, so every rank fails. Whole, the last rank's buffer is too
 * small and the others get too little. */
static void everyone(int op, int n, int whole)
{
    const char *names[] = {"allgather", "alltoall", "allreduce", "reduce_scatter_block", "alltoallv"};
    int last = size - 1, mine = rank == last ? n / 2 : n;
    double *a = calloc((size_t)n * size, sizeof(double)), *b = calloc((size_t)n * size, sizeof(double));
    int *all = malloc(size * sizeof(int)), *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) {
        counts[r] = mine;
        displs[r] = r * n;
    }
    int e = op == 0   ? MPI_Allgather(a, mine, MPI_DOUBLE, b, mine, MPI_DOUBLE, MPI_COMM_WORLD)
            : op == 1 ? MPI_Alltoall(a, mine, MPI_DOUBLE, b, mine, MPI_DOUBLE, MPI_COMM_WORLD)
            : op == 2 ? MPI_Allreduce(a, b, mine, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
            : op == 3 ? MPI_Reduce_scatter_block(a, b, mine, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
                      : MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    gather_classes(e, all);
    for (int r = 0; r < size; r++) {
        int want = r == last ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
        if (whole)
            CHECK(all[r] == want, "%s of %d doubles (rank %d: %d): rank %d got class %d, not %d", names[op], n, last,
                  n / 2, r, all[r], want);
        else
            CHECK(all[r] != MPI_SUCCESS, "%s of %d doubles (rank %d: %d): rank %d did not fail", names[op], n, last,
                  n / 2, r);
    }
    still_works(names[op]);
    free(a), free(b), free(all), free(counts), free(displs);
}

/* Allgatherv of parts of their own sizes, rank r's (r + 1) * k doubles,
 * the last rank sending (and counting for itself) half of its own: every
 * other rank gets less than it counts from it (MPI_ERR_COUNT), the last
 * rank what it counts. From 3 ranks on, with parts of at most 32 KiB and
 * more than 4 KiB in all, each part goes as one long publication. */
static void irregular(int k)
{
    int last = size - 1, tot = 0;
    int *all = malloc(size * sizeof(int)), *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) {
        counts[r] = (r + 1) * k;
        displs[r] = tot;
        tot += counts[r];
    }
    if (rank == last)
        counts[last] /= 2;
    double *a = calloc(counts[rank], sizeof(double)), *b = calloc(tot, sizeof(double));
    int e = MPI_Allgatherv(a, counts[rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    gather_classes(e, all);
    for (int r = 0; r < size; r++) {
        int want = r == last ? MPI_SUCCESS : MPI_ERR_COUNT;
        CHECK(all[r] == want, "allgatherv of (r + 1) * %d doubles, the last rank half: rank %d got class %d, not %d", k,
              r, all[r], want);
    }
    still_works("allgatherv");
    free(a), free(b), free(all), free(counts), free(displs);
}

int main(int argc, char **argv)
{
    env_for_rank0();
    MPI_Init(&argc, &argv);
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *transport = getenv("OXMPI_TRANSPORT");
    if (transport && strcmp(transport, "tcp") == 0)
        return finish();
    rooted(100, 1, 0);
    rooted(12000, 1, 0);
    rooted(768, size > 2, 0);
    rooted(24000, 1, size == 2);
    /* whole; in pieces; the last rank whole, the others in pieces; at 2
     * ranks the last in pieces, rank 0 point to point */
    blocks(100);
    blocks(4000);
    blocks(1024 / size);
    blocks(40000);
    for (int op = 0; op < 5; op++) everyone(op, 100, 1);
    /* parts short enough for the world's arrival lines (up to 40 bytes a
     * rank: an allgather's or allreduce's part, all an alltoall's blocks)
     * on every rank (the variants 7-9: on the last rank alone, the
     * others' through the mailboxes) */
    everyone(0, 2, 1);
    everyone(2, 2, 1);
    if (size == 2)
        everyone(1, 2, 1);
    /* an alltoallv of 16-byte blocks (the last rank's 8): every rank's
     * part on its arrival line at 2 and 3 ranks; at 4 the others' tables
     * in their mailboxes, as their blocks and a byte a rank come to more
     * than a line takes, the last rank's on its line */
    everyone(4, 2, 1);
    /* an allgatherv of parts of (r + 1) doubles, each on its arrival line */
    irregular(1);
    prefix(100);
    /* Out of step in pieces, the members give the mailboxes up and later
     * collectives go point to point, where mismatched sizes can pick
     * different algorithms: one such case per run (the variants). Blocks
     * of 6144 / size bytes: allgather moves 6144 bytes in all, whole at
     * the rank with half. */
    const char *c = getenv("MISMATCH_CASE");
    switch (c ? atoi(c) : 0) {
    case 0: everyone(0, 4000, 0); break;
    case 1: everyone(1, 4000, 0); break;
    case 2: everyone(0, 768 / size, 0); break;
    case 3: /* at 2 ranks both go point to point: see above */
        if (size > 2)
            everyone(2, 4000, 0);
        break;
    case 4: /* at 2 ranks split between shared memory and messages */
        everyone(2, 768, 0);
        break;
    case 5: /* in pieces from 3 ranks on (at 2 point to point) */
        if (size > 2)
            everyone(3, 4000, 0);
        break;
    case 6: /* the blocks outside the tables in pieces */
        everyone(4, 4000, 0);
        break;
    case 7: everyone(0, 6, 1); break;
    case 8: everyone(2, 6, 1); break;
    case 9:
        if (size > 2)
            everyone(1, 2, 1);
        break;
    case 10: /* the last rank's blocks in one long publication, the others' in pieces */
        if (size > 2)
            everyone(1, 6144 / (size - 1), 0);
        break;
    case 11: /* the last rank's blocks whole, the others' in one long publication */
        if (size > 2)
            everyone(1, 1024 / size, 0);
        break;
    case 12: /* every rank's alltoallv blocks beyond its table's
              * publication in one long publication (8000 bytes a block,
              * the last rank's 4000, so one of its fits the short one) */
        if (size > 2)
            everyone(4, 1000, 1);
        break;
    case 13: /* the last rank's in long publications (24000 bytes a
              * block, one in each), the others' in pieces (48000) */
        if (size > 2)
            everyone(4, 6000, 0);
        break;
    case 14: /* every rank's in several long publications (24000 bytes a
              * block, one in each; the last rank's 12000, two in each) */
        if (size > 2)
            everyone(4, 3000, 1);
        break;
    case 15: /* parts of 1000 to 4000 bytes: one long publication a rank */
        if (size > 2)
            irregular(125);
        break;
    case 16: /* parts whole in the short mailbox (up to 4 KiB in all) */
        irregular(25);
        break;
    case 17: /* between two ranks, blocks of 128 KiB against 64 */
        if (size == 2)
            everyone(1, 16384, 1);
        break;
    case 18:
        if (size == 2)
            everyone(0, 16384, 1);
        break;
    case 19:
        if (size == 2)
            everyone(4, 16384, 1);
        break;
    case 20: /* alltoallv blocks beyond a long slot (80000 bytes, the
              * last rank's 40000) in pieces or read in place, as the
              * members agree (or as OXMPI_CROWDED_BLOCKS says); longer
              * ones (320000, the last rank's 160000) read in place
              * (where pieces are forced they go as messages, whose
              * receivers take a shorter one as it is) */
        if (size > 2) {
            for (int k = 0; k < 12; k++) everyone(4, 10000, 1);
            const char *ways = getenv("OXMPI_CROWDED_BLOCKS");
            if (!ways || strcmp(ways, "pieces") != 0)
                everyone(4, 40000, 1);
        }
        break;
    case 21: /* a short Scan whose middle rank passes half */
        if (size > 2)
            prefix_middle(100);
        break;
    case 22: /* in pieces: one piece against one (16000 bytes, the middle
              * rank's 8000), then two against one (48000, 24000) */
        if (size > 2) {
            prefix_middle(2000);
            prefix_middle(6000);
        }
        break;
    }
    return finish();
}
