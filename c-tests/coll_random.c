/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SHM_COLL_MAX=0;OXMPI_UNEXPECTED_BYTES=4096;OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_BARRIER=dissemination
 * A long random sequence of collectives, every choice drawn alike on
 * every rank from one seed (COLL_RANDOM_SEED, COLL_RANDOM_STEPS): the
 * operation, the communicator (the world, the world in reverse order,
 * its halves), blocking, nonblocking or persistent, the root, MPI_IN_PLACE,
 * each rank's counts (0 to 64 Ki ints, and in the v forms a different one
 * per rank or pair), each rank's datatypes (int, or a strided pair of ints
 * whose gaps must stay untouched), displacements in rank order or
 * reversed, and for reductions a sum of ints or a product of 2x2 matrices
 * (which does not commute). Every rank checks its whole receive buffer
 * against an image computed here. Written to catch ranks that pick
 * different ways through one valid call from what each sees alone (as
 * an Alltoallv did, whose ranks with blocks all of one size took Bruck's
 * algorithm alone). A variant runs over a 4 KiB unexpected-message
 * budget (OXMPI_UNEXPECTED_BYTES), where it found ranks that left the
 * replies their sends waited for in the ring. COLL_RANDOM_SAY=1 prints
 * each step's operation.
 * Debian's MPICH 4.0.2 fails this test on its own: a persistent
 * collective on the strided type trips an assertion in its datatype
 * engine, an in-place Ialltoallw with mixed types truncates, and an
 * Allgatherv of 60000 ints whose ranks receive with different types
 * (ints, pairs) truncates. Open MPI 4.1 (no persistent collectives)
 * passes at 1-3 ranks and hangs at 4 in that Allgatherv. */
#include "common.h"

enum { BCAST, GATHER, GATHERV, SCATTER, SCATTERV, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW,
       REDUCE, ALLREDUCE, RSB, RS, SCAN, EXSCAN, BARRIER, OPS };
static const char *names[] = {"Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
                              "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce",
                              "Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan", "Barrier"};

#define MAXR 8
#define SENTINEL (-7)


/* A datatype seen as ints: `ipu` ints per item, items `ext` ints apart. */
typedef struct {
    MPI_Datatype dt;
    int ipu, ext;
} Ty;
static Ty tys[2];

/* where int j of a run of items of t lies, in ints from the run's start */
static long at(const Ty *t, long j) { return j / t->ipu * t->ext + (t->ipu == 2 ? j % 2 * 2 : 0); }

/* The blocks of a buffer: block r holds cnt[r] ints (a multiple of its
 * type's ipu) of type t[r] from disp[r] items of that type on. */
typedef struct {
    int n;
    const Ty *t[MAXR];
    long cnt[MAXR], disp[MAXR];
} Lay;

/* Lay blocks of `cnt` ints and types `t` out in rank order or reversed,
 * one item of gap after each (displacements count items of each block's
 * own type, so blocks of mixed types are spaced by the widest extent);
 * or `packed`, as the forms without v place equal blocks of one type: in
 * rank order, one after another. */
static void lay(Lay *L, int n, const Ty *const *t, const long *cnt, int reverse, int packed)
{
    long ints = 0;
    L->n = n;
    for (int k = 0; k < n; k++) {
        int r = packed ? k : reverse ? n - 1 - k : k;
        int ext = t[r]->ext;
        long start = packed ? ints : (ints + 2) / 3 * 3; /* a multiple of every extent (1 and 3) */
        L->t[r] = t[r];
        L->cnt[r] = cnt[r];
        L->disp[r] = start / ext;
        ints = start + (cnt[r] / t[r]->ipu + !packed) * ext;
    }
}

static long lay_ints(const Lay *L)
{
    long m = 1;
    for (int r = 0; r < L->n; r++) {
        long end = L->disp[r] * L->t[r]->ext + (L->cnt[r] / L->t[r]->ipu + 1) * L->t[r]->ext;
        if (end > m)
            m = end;
    }
    return m;
}

static int it; /* the step, part of every value */

/* int j of what rank s sends rank d (d = 0 when all get the same) */
static int val(int s, int d, long j) { return it * 7919 + s * 100003 + d * 1009 + (int)j + 1; }

static void put(int *buf, const Lay *L, int r, int s, int d)
{
    for (long j = 0; j < L->cnt[r]; j++) buf[L->disp[r] * L->t[r]->ext + at(L->t[r], j)] = val(s, d, j);
}

static int *fresh(long ints)
{
    int *b = malloc(ints * sizeof(int));
    for (long i = 0; i < ints; i++) b[i] = SENTINEL;
    return b;
}

static const char *cname;
static int way, inplace, root;

static void compare(const int *got, const int *want, long ints, int op)
{
    long bad = 0, first = -1;
    for (long i = 0; i < ints; i++)
        if (got[i] != want[i]) {
            if (first < 0)
                first = i;
            bad++;
        }
    CHECK(bad == 0, "step %d %s on %s (%s%s, root %d): %ld ints wrong, the first at %ld: %d, not %d", it, names[op],
          cname, way_name(way), inplace ? ", in place" : "", root, bad, first, got[first], want[first]);
}

/* Run one collective `way`s; `start` begins it (a persistent one twice). */
#define RUN(blocking, nonblocking, init, ...) THREE_WAYS(way, blocking, nonblocking, init, __VA_ARGS__)

/* the count and displacement arrays MPI takes, in items of each type */
static void counts(const Lay *L, int *c, int *d)
{
    for (int r = 0; r < L->n; r++) {
        c[r] = (int)(L->cnt[r] / L->t[r]->ipu);
        d[r] = (int)L->disp[r];
    }
}

/* a count of ints: 0, a few, up to 4 KiB, up to 32 KiB, up to 256 KiB */
static long draw_count(int cls)
{
    static const long lo[] = {0, 2, 18, 1026, 8194}, hi[] = {0, 16, 1024, 8192, 65536};
    if (cls == 0)
        return 0;
    return (lo[cls] + draw(hi[cls] - lo[cls] + 1)) & ~1L;
}

static int draw_class(void)
{
    int c = draw(20);
    return c < 3 ? 0 : c < 8 ? 1 : c < 14 ? 2 : c < 18 ? 3 : 4;
}

static void data_op(int op, MPI_Comm comm, int me, int n)
{
    /* every loop that draws runs to MAXR, so that the halves of the
     * world, of different sizes, draw alike */
    const Ty *st[MAXR], *rt[MAXR];
    for (int r = 0; r < MAXR; r++) {
        st[r] = &tys[draw(2)];
        rt[r] = &tys[draw(2)];
    }
    int cls = draw_class(), reverse = draw(2);
    long m[MAXR][MAXR]; /* ints rank s sends rank d */
    long one = draw_count(cls);
    int varied = op == GATHERV || op == SCATTERV || op == ALLGATHERV || op == ALLTOALLV || op == ALLTOALLW;
    int symmetric = inplace && (op == ALLTOALLV || op == ALLTOALLW);
    /* the v forms' counts: drawn for each pair; or all alike; or one
     * rank's all alike (`odd`'s sends and receives) and the others' not */
    int shape = varied ? draw(3) : 1, odd = draw(n);
    long other = draw_count(cls);
    for (int s = 0; s < MAXR; s++)
        for (int d = 0; d < MAXR; d++) {
            long drawn = draw(5) ? draw_count(cls) : 0;
            m[s][d] = shape == 0 ? drawn : shape == 1 || s == odd || d == odd ? one : other;
        }
    if (op == ALLGATHERV || op == GATHERV)
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++) m[s][d] = m[s][0];
    if (op == SCATTERV)
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++) m[s][d] = m[0][d];
    if (symmetric)
        for (int s = 0; s < n; s++)
            for (int d = 0; d < s; d++) m[s][d] = m[d][s];
    /* in place, the receive type stands for the send type too */
    if (inplace && op != BCAST) {
        for (int r = 0; r < n; r++) st[r] = rt[r];
    }
    const Ty *mine_r[MAXR], *mine_s[MAXR];
    long rc[MAXR], sc[MAXR];
    for (int r = 0; r < n; r++) {
        mine_r[r] = rt[me];
        mine_s[r] = st[me];
        rc[r] = m[r][me];
        sc[r] = m[me][r];
    }
    if (op == ALLTOALLW)
        for (int r = 0; r < n; r++) {
            mine_r[r] = &tys[(me + r + (int)test_seed) & 1];
            mine_s[r] = &tys[(me + r + (int)test_seed) & 1];
        }
    if (op == ALLTOALLW && !symmetric) {
        /* a pair's types differ freely: only the ints must agree */
        for (int r = 0; r < n; r++) mine_s[r] = &tys[(me * 3 + r + (int)test_seed) & 1];
    }
    Lay S, R;
    int c_s[MAXR], d_s[MAXR], c_r[MAXR], d_r[MAXR], sbytes[MAXR], rbytes[MAXR];
    MPI_Datatype sdt[MAXR], rdt[MAXR];
    int *sbuf = NULL, *rbuf = NULL, *want = NULL;
    long sints = 1, rints = 1;
    const int is_root = me == root;
    switch (op) {
    case BCAST: {
        Lay B;
        lay(&B, 1, &rt[me], &one, 0, 0);
        rints = lay_ints(&B);
        rbuf = fresh(rints);
        want = fresh(rints);
        if (is_root)
            put(rbuf, &B, 0, root, 0);
        put(want, &B, 0, root, 0);
        int count = (int)(one / rt[me]->ipu);
        RUN(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, rbuf, count, rt[me]->dt, root, comm);
        compare(rbuf, want, rints, op);
        break;
    }
    case GATHER:
    case GATHERV: {
        lay(&S, 1, &st[me], &sc[root], 0, 0);
        lay(&R, n, mine_r, rc, reverse, !varied);
        sints = lay_ints(&S);
        rints = is_root ? lay_ints(&R) : 1;
        sbuf = fresh(sints);
        rbuf = fresh(rints);
        want = fresh(rints);
        put(sbuf, &S, 0, me, 0);
        if (is_root) {
            for (int s = 0; s < n; s++) put(want, &R, s, s, 0);
            if (inplace)
                put(rbuf, &R, me, me, 0);
        }
        counts(&R, c_r, d_r);
        const void *from = is_root && inplace ? MPI_IN_PLACE : sbuf;
        int scount = (int)(sc[root] / st[me]->ipu);
        if (op == GATHER)
            RUN(MPI_Gather, MPI_Igather, MPI_Gather_init, from, scount, st[me]->dt, rbuf, c_r[0], rt[me]->dt, root, comm);
        else
            RUN(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, from, scount, st[me]->dt, rbuf, c_r, d_r, rt[me]->dt, root,
                comm);
        compare(rbuf, want, rints, op);
        break;
    }
    case SCATTER:
    case SCATTERV: {
        lay(&S, n, mine_s, sc, reverse, !varied);
        lay(&R, 1, &rt[me], &rc[root], 0, 0);
        sints = is_root ? lay_ints(&S) : 1;
        rints = lay_ints(&R);
        sbuf = fresh(sints);
        rbuf = fresh(rints);
        want = fresh(rints);
        if (is_root)
            for (int d = 0; d < n; d++) put(sbuf, &S, d, me, d);
        if (!(is_root && inplace))
            put(want, &R, 0, root, me);
        counts(&S, c_s, d_s);
        void *into = is_root && inplace ? MPI_IN_PLACE : rbuf;
        int rcount = (int)(rc[root] / rt[me]->ipu);
        if (op == SCATTER)
            RUN(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, sbuf, c_s[0], st[me]->dt, into, rcount, rt[me]->dt, root,
                comm);
        else
            RUN(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, sbuf, c_s, d_s, st[me]->dt, into, rcount, rt[me]->dt,
                root, comm);
        compare(rbuf, want, rints, op);
        break;
    }
    case ALLGATHER:
    case ALLGATHERV: {
        lay(&S, 1, &st[me], &sc[0], 0, 0);
        lay(&R, n, mine_r, rc, reverse, !varied);
        sints = lay_ints(&S);
        rints = lay_ints(&R);
        sbuf = fresh(sints);
        rbuf = fresh(rints);
        want = fresh(rints);
        put(sbuf, &S, 0, me, 0);
        for (int s = 0; s < n; s++) put(want, &R, s, s, 0);
        if (inplace)
            put(rbuf, &R, me, me, 0);
        counts(&R, c_r, d_r);
        const void *from = inplace ? MPI_IN_PLACE : sbuf;
        int scount = (int)(sc[0] / st[me]->ipu);
        if (op == ALLGATHER)
            RUN(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, from, scount, st[me]->dt, rbuf, c_r[0], rt[me]->dt,
                comm);
        else
            RUN(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, from, scount, st[me]->dt, rbuf, c_r, d_r,
                rt[me]->dt, comm);
        compare(rbuf, want, rints, op);
        break;
    }
    default: { /* ALLTOALL, ALLTOALLV, ALLTOALLW */
        lay(&S, n, mine_s, sc, reverse, !varied);
        lay(&R, n, mine_r, rc, !reverse, !varied);
        sints = lay_ints(&S);
        rints = lay_ints(&R);
        sbuf = fresh(sints);
        rbuf = fresh(rints);
        want = fresh(rints);
        for (int d = 0; d < n; d++) put(sbuf, &S, d, me, d);
        for (int s = 0; s < n; s++) put(want, &R, s, s, me);
        if (inplace)
            for (int d = 0; d < n; d++) put(rbuf, &R, d, me, d);
        counts(&S, c_s, d_s);
        counts(&R, c_r, d_r);
        const void *from = inplace ? MPI_IN_PLACE : sbuf;
        if (op == ALLTOALL) {
            RUN(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, from, c_s[0], st[me]->dt, rbuf, c_r[0], rt[me]->dt,
                comm);
        } else if (op == ALLTOALLV) {
            RUN(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, from, c_s, d_s, st[me]->dt, rbuf, c_r, d_r,
                rt[me]->dt, comm);
        } else {
            for (int r = 0; r < n; r++) {
                sdt[r] = mine_s[r]->dt;
                rdt[r] = mine_r[r]->dt;
                sbytes[r] = d_s[r] * mine_s[r]->ext * (int)sizeof(int);
                rbytes[r] = d_r[r] * mine_r[r]->ext * (int)sizeof(int);
            }
            RUN(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, from, c_s, sbytes, sdt, rbuf, c_r, rbytes, rdt,
                comm);
        }
        compare(rbuf, want, rints, op);
        break;
    }
    }
    free(sbuf);
    free(rbuf);
    free(want);
}

/* reductions: int j of rank s's contribution (small, so sums and
 * products of matrices of ranks' values stay far from overflow) */
static int red(int s, long j) { return (it + s * 3 + (int)j) % 3; }

static MPI_Op mat_op;
static MPI_Datatype mat;

/* fold the contributions of ranks lo..hi-1 of item i into out (ints) */
static void fold(int *out, int matrices, long ints, int lo, int hi)
{
    if (!matrices) {
        for (long j = 0; j < ints; j++) {
            int a = 0;
            for (int s = lo; s < hi; s++) a += red(s, j);
            out[j] = a;
        }
        return;
    }
    for (long k = 0; k < ints / 4; k++) {
        int acc[4];
        for (int q = 0; q < 4; q++) acc[q] = red(hi - 1, 4 * k + q);
        for (int s = hi - 2; s >= lo; s--) { /* acc = v_s x acc */
            int a[4], len = 1;
            for (int q = 0; q < 4; q++) a[q] = red(s, 4 * k + q);
            mat2_product(a, acc, &len, NULL);
        }
        memcpy(out + 4 * k, acc, sizeof acc);
    }
}

static void reduce_op(int op, MPI_Comm comm, int me, int n)
{
    int matrices = draw(2), cls = draw_class();
    MPI_Datatype dt = matrices ? mat : MPI_INT;
    MPI_Op o = matrices ? mat_op : MPI_SUM;
    int ipu = matrices ? 4 : 1;
    long each[MAXR], total = 0, before[MAXR + 1];
    for (int r = 0; r < MAXR; r++) /* to MAXR: see data_op */
        each[r] = draw_count(cls) / 2 * ipu;
    if (op != RS)
        for (int r = 0; r < n; r++) each[r] = each[0];
    before[0] = 0;
    for (int r = 0; r < n; r++) before[r + 1] = before[r] + each[r];
    total = op == RS || op == RSB ? before[n] : each[0];
    long mine = op == RS || op == RSB ? each[me] : total;
    int *in = malloc((total + 1) * sizeof(int)), *out = fresh(total + 1), *want = fresh(total + 1);
    for (long j = 0; j < total; j++) in[j] = red(me, j);
    int counts_[MAXR];
    for (int r = 0; r < n; r++) counts_[r] = (int)(each[r] / ipu);
    const void *from = in;
    if (inplace) {
        memcpy(out, in, total * sizeof(int));
        from = MPI_IN_PLACE;
    }
    long check = mine; /* ints of the result to check */
    switch (op) {
    case REDUCE: /* in place only at the root; elsewhere no result */
        if (me != root) {
            from = in;
            check = 0;
        }
        RUN(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, from, out, (int)(total / ipu), dt, o, root, comm);
        fold(want, matrices, total, 0, n);
        break;
    case ALLREDUCE:
        RUN(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, from, out, (int)(total / ipu), dt, o, comm);
        fold(want, matrices, total, 0, n);
        break;
    case RSB:
    case RS: {
        int *all = malloc((total + 1) * sizeof(int));
        fold(all, matrices, total, 0, n);
        memcpy(want, all + before[me], mine * sizeof(int));
        free(all);
        if (op == RSB)
            RUN(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, from, out,
                counts_[0], dt, o, comm);
        else
            RUN(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, from, out, counts_, dt, o, comm);
        break;
    }
    case SCAN:
        RUN(MPI_Scan, MPI_Iscan, MPI_Scan_init, from, out, (int)(total / ipu), dt, o, comm);
        fold(want, matrices, total, 0, me + 1);
        break;
    default: /* EXSCAN: rank 0's buffer is undefined */
        RUN(MPI_Exscan, MPI_Iexscan, MPI_Exscan_init, from, out, (int)(total / ipu), dt, o, comm);
        if (me > 0)
            fold(want, matrices, total, 0, me);
        else
            check = 0;
        break;
    }
    if (check > 0)
        compare(out, want, check, op);
    free(in);
    free(out);
    free(want);
}

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (getenv("COLL_RANDOM_SEED"))
        test_seed = strtoull(getenv("COLL_RANDOM_SEED"), NULL, 0);
    int steps = getenv("COLL_RANDOM_STEPS") ? atoi(getenv("COLL_RANDOM_STEPS")) : 1000;
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    tys[0] = (Ty){MPI_INT, 1, 1};
    tys[1] = (Ty){pair, 2, 3};
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(mat2_product, 0, &mat_op);
    MPI_Comm comms[3];
    const char *cnames[] = {"the world", "the world reversed", "a half of the world"};
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[2]);
    for (it = 0; it < steps; it++) {
        int op = draw(OPS), c = draw(3), me, n;
        if (getenv("COLL_RANDOM_SAY") && wrank == 0)
            fprintf(stderr, "step %d: %s\n", it, names[op]);
        MPI_Comm comm = comms[c];
        cname = cnames[c];
        MPI_Comm_rank(comm, &me);
        MPI_Comm_size(comm, &n);
        way = draw(3);
        root = draw(n);
        inplace = way != PERSISTENT && draw(3) == 0;
        if (op == BARRIER) {
            RUN(MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, comm);
        } else if (op >= REDUCE) {
            reduce_op(op, comm, me, n);
        } else {
            data_op(op, comm, me, n);
        }
    }
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Op_free(&mat_op);
    MPI_Type_free(&mat);
    MPI_Type_free(&pair);
    return finish();
}
