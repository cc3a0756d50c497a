/* oxmpi-test: ranks=1,2,3,4,5,9
 * Short collectives of the whole world back to back: Barrier, Allreduce
 * (MPI_SUM on doubles, and a user operator that does not commute on 2x2
 * integer matrices), Allgather and Alltoall with parts of 4 to 40 bytes,
 * an Allgatherv of parts of 4 to 12 bytes, one size per rank, and an
 * Alltoallv of blocks of 0 to 12 bytes but one rank's of 20 (its part too
 * long for its line: its blocks go in its mailboxes, the others' on their
 * lines), which go on the ranks' arrival lines (up to 8 ranks; at 9
 * through the mailboxes), on MPI_COMM_WORLD, a duplicate of it, and two splits of
 * it that keep every rank in another order, reversed and rotated (one
 * count for all four; each takes the parts in its own rank order),
 * interleaved with collectives of a communicator of half the world (the
 * mailboxes), in place and not. Every few hundred
 * calls one rank, in turn, is a millisecond late, so that the others
 * post their next part while it still reads the last one. Every result
 * is checked against the one computed here. */
#define _GNU_SOURCE
#include "common.h"
#include <time.h>

enum { CALLS = 3000, LATE_EVERY = 211 };

static int rank, size, errors;

static void mat2_set(int *m, int r, int i, int k)
{
    /* unimodular-ish small entries, different per rank, call and item */
    m[0] = 1, m[1] = (r + i + k) % 3, m[2] = (r * 7 + i + 2 * k) % 2, m[3] = 1 + m[1] * m[2];
}

static void mat2_mul(const int *a, const int *b, int *c)
{
    int t[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3]};
    memcpy(c, t, sizeof t);
}

static void note(int ok, int i, const char *what)
{
    if (!ok && errors++ < 5)
        fprintf(stderr, "rank %d: call %d: wrong %s\n", rank, i, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev, rot, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank + 1) % size, &rot);
    MPI_Comm_split(MPI_COMM_WORLD, rank < (size + 1) / 2, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op prod;
    MPI_Op_create(mat2_product, 0, &prod);
    int per = 10 / size > 0 ? 10 / size : 1; /* an alltoall's ints per block */
    double d[5], dr[5];
    int m[8], mr[8], g[10 * 9], s[10 * 9], t[10 * 9], sc[16], sd[16], rc[16], rd[16];
    for (int i = 0; i < CALLS; i++) {
        if (i % LATE_EVERY == 0 && (i / LATE_EVERY) % size == rank) {
            struct timespec ms = {0, 1000000L};
            nanosleep(&ms, NULL);
        }
        /* (every case on every communicator in turn) */
        MPI_Comm whole[4] = {MPI_COMM_WORLD, dup, rev, rot}, c = whole[(i + i / 8) % 4];
        int in_place = i % 2, k = 1 + i % 5, me;
        MPI_Comm_rank(c, &me);
        switch (i % 8) {
        case 0: CHECK(MPI_Barrier(c) == MPI_SUCCESS, "barrier %d", i); break;
        case 1: {
            for (int j = 0; j < k; j++) d[j] = dr[j] = (me + 1) * (double)(i + j);
            MPI_Allreduce(in_place ? MPI_IN_PLACE : d, dr, k, MPI_DOUBLE, MPI_SUM, c);
            int ok = 1;
            for (int j = 0; j < k; j++) ok &= dr[j] == size * (size + 1) / 2 * (double)(i + j);
            note(ok, i, "allreduce sum");
            break;
        }
        case 2: {
            int items = 1 + i % 2, want[8];
            for (int j = 0; j < items; j++) {
                mat2_set(m + 4 * j, me, i, j);
                memcpy(mr + 4 * j, m + 4 * j, 4 * sizeof(int));
                /* rank order: M0 x M1 x ... */
                mat2_set(want + 4 * j, 0, i, j);
                for (int r = 1; r < size; r++) {
                    int x[4];
                    mat2_set(x, r, i, j);
                    mat2_mul(want + 4 * j, x, want + 4 * j);
                }
            }
            MPI_Allreduce(in_place ? MPI_IN_PLACE : m, mr, items, mat, prod, c);
            note(memcmp(mr, want, items * 4 * sizeof(int)) == 0, i, "allreduce by a user operator");
            break;
        }
        case 3: {
            for (int r = 0; r < size * k; r++) g[r] = -1;
            for (int j = 0; j < k; j++) {
                s[j] = me * 1000 + i + j;
                if (in_place)
                    g[me * k + j] = s[j];
            }
            MPI_Allgather(in_place ? MPI_IN_PLACE : s, k, MPI_INT, g, k, MPI_INT, c);
            int ok = 1;
            for (int r = 0; r < size; r++)
                for (int j = 0; j < k; j++) ok &= g[r * k + j] == r * 1000 + i + j;
            note(ok, i, "allgather");
            break;
        }
        case 4: {
            for (int r = 0; r < size; r++)
                for (int j = 0; j < per; j++) s[r * per + j] = me * 100000 + r * 100 + i % 100 + j, t[r * per + j] = -1;
            MPI_Alltoall(s, per, MPI_INT, t, per, MPI_INT, c);
            int ok = 1;
            for (int r = 0; r < size; r++)
                for (int j = 0; j < per; j++) ok &= t[r * per + j] == r * 100000 + me * 100 + i % 100 + j;
            note(ok, i, "alltoall");
            break;
        }
        case 5: {
            /* the mailboxes, between the lines' calls (at 1 rank, half
             * is the whole world and on the lines too) */
            int x = hrank + i, y = -1;
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
            note(y == hsize * (hsize - 1) / 2 + hsize * i, i, "allreduce on half the world");
            break;
        }
        case 6: {
            /* ints rank a sends rank b: 0-3, but 5 to each from one rank
             * (in turn) */
            int big = (i / 8) % size;
#define ITEMS(a, b) ((a) == big ? 5 : ((a) + 2 * (b) + i) % 4)
            int st = 0, rt = 0;
            for (int r = 0; r < size; r++) {
                sc[r] = ITEMS(me, r), sd[r] = st, st += sc[r];
                rc[r] = ITEMS(r, me), rd[r] = rt, rt += rc[r];
                for (int j = 0; j < sc[r]; j++) s[sd[r] + j] = me * 100000 + r * 100 + i % 100 + j;
            }
#undef ITEMS
            for (int j = 0; j < rt; j++) t[j] = -1;
            MPI_Alltoallv(s, sc, sd, MPI_INT, t, rc, rd, MPI_INT, c);
            int ok = 1;
            for (int r = 0; r < size; r++)
                for (int j = 0; j < rc[r]; j++) ok &= t[rd[r] + j] == r * 100000 + me * 100 + i % 100 + j;
            note(ok, i, "alltoallv");
            break;
        }
        case 7: {
            /* rank r's part: 1-3 ints */
            int tot = 0;
            for (int r = 0; r < size; r++) rc[r] = 1 + (r + i) % 3, rd[r] = tot, tot += rc[r];
            for (int j = 0; j < tot; j++) g[j] = -1;
            for (int j = 0; j < rc[me]; j++) s[j] = me * 1000 + i + j;
            MPI_Allgatherv(s, rc[me], MPI_INT, g, rc, rd, MPI_INT, c);
            int ok = 1;
            for (int r = 0; r < size; r++)
                for (int j = 0; j < rc[r]; j++) ok &= g[rd[r] + j] == r * 1000 + i + j;
            note(ok, i, "allgatherv");
            break;
        }
        }
    }
    CHECK(errors == 0, "%d wrong results of %d calls", errors, CALLS);
    MPI_Op_free(&prod);
    MPI_Type_free(&mat);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&rot);
    MPI_Comm_free(&half);
    return finish();
}
