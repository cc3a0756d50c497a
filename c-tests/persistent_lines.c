/* oxmpi-test: ranks=1,2,3,4,9
 * Persistent collectives of whole-world communicators made and freed
 * many more times than there are arrival lines kept for them (the first
 * six made on each communicator's lines get lines of their own; once
 * those are given out, a new one takes the lines of one that every rank
 * has freed, agreed at its initialization, or goes as messages). On
 * MPI_COMM_WORLD and on a duplicate, 30 times each:
 *  1. an Allreduce_init, Barrier_init or Allgather_init (by turns) made,
 *     started twice, waited and freed, 20 in a row;
 *  2. six alive at once, every result checked; the even ranks free the
 *     first and the fourth in that order, the odd ones in the other, and
 *     two more are made: all six started together, on the even ranks
 *     first to last and on the odd last to first, with an Ibarrier
 *     between;
 *  3. one of those freed by the even ranks before another one is made and
 *     by the odd ranks after it (on the odd ranks it is still alive then,
 *     so its lines are not the new one's anywhere), the new one started
 *     against the others in opposite orders on even and odd ranks; then
 *     one more made, after every rank freed it; all freed;
 *  4. a persistent Allreduce_init of a duplicate that outlives it, the
 *     next duplicate's persistent ones made and freed around its starts.
 * Every result checked. Open MPI passes it; MPICH 4.0 leaves part of
 * its persistent Allgathers' receive buffers unwritten from their second
 * start on (pmodels/mpich#7078 reports the like of its persistent
 * Gather).
 */
#include "common.h"

enum { TIMES = 30, ALIVE = 6 };

static int rank, size;

/* A persistent collective of c and its buffers: an allreduce of two
 * doubles, a barrier, or an allgather of one int (by `kind`). */
struct one {
    int kind;
    double x[2], y[2];
    int v, *all;
    MPI_Request q;
};

static void make(struct one *o, int kind, MPI_Comm c)
{
    o->kind = kind;
    o->all = calloc((size_t)size, sizeof(int));
    if (kind == 0)
        CHECK(MPI_Allreduce_init(o->x, o->y, 2, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &o->q) == MPI_SUCCESS, "init");
    else if (kind == 1)
        CHECK(MPI_Barrier_init(c, MPI_INFO_NULL, &o->q) == MPI_SUCCESS, "init");
    else
        CHECK(MPI_Allgather_init(&o->v, 1, MPI_INT, o->all, 1, MPI_INT, c, MPI_INFO_NULL, &o->q) == MPI_SUCCESS,
              "init");
}

/* Its buffers for start `t` (the send buffers as a start takes them). */
static void fill(struct one *o, int t)
{
    o->x[0] = rank + t, o->x[1] = t - rank, o->v = rank * 100 + t;
    o->y[0] = o->y[1] = -1;
    for (int r = 0; r < size; r++) o->all[r] = -1;
}

/* Whether start `t`'s results are right. */
static int right(const struct one *o, int t, const char *where)
{
    int ok = 1;
    if (o->kind == 0)
        ok = o->y[0] == size * (size - 1) / 2.0 + (double)size * t && o->y[1] == (double)size * t - size * (size - 1) / 2.0;
    else if (o->kind == 2)
        for (int r = 0; r < size; r++) ok &= o->all[r] == r * 100 + t;
    CHECK(ok, "%s: kind %d, start %d", where, o->kind, t);
    return ok;
}

static void drop(struct one *o)
{
    CHECK(MPI_Request_free(&o->q) == MPI_SUCCESS && o->q == MPI_REQUEST_NULL, "Request_free");
    free(o->all);
}

/* Start every one of `os` that is alive (its request not null), on the
 * even ranks first to last and on the odd last to first, an Ibarrier of
 * c halfway, and check them all. */
static void start_all(struct one **os, int n, MPI_Comm c, int t, const char *where)
{
    MPI_Request reqs[ALIVE + 2], bar;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (os[i]->q != MPI_REQUEST_NULL) fill(os[i], t);
    for (int j = 0; j < n; j++) {
        if (j == n / 2) MPI_Ibarrier(c, &bar);
        struct one *o = os[rank % 2 == 0 ? j : n - 1 - j];
        if (o->q != MPI_REQUEST_NULL) CHECK(MPI_Start(&o->q) == MPI_SUCCESS, "%s: start", where);
    }
    for (int i = 0; i < n; i++)
        if (os[i]->q != MPI_REQUEST_NULL) reqs[k++] = os[i]->q;
    CHECK(MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "%s: waitall", where);
    CHECK(MPI_Wait(&bar, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: ibarrier", where);
    for (int i = 0; i < n; i++)
        if (os[i]->q != MPI_REQUEST_NULL) right(os[i], t, where);
}

static void made_and_freed(MPI_Comm c)
{
    for (int i = 0; i < 20; i++) {
        struct one o;
        make(&o, i % 3, c);
        for (int t = 0; t < 2; t++) {
            fill(&o, t + i);
            CHECK(MPI_Start(&o.q) == MPI_SUCCESS, "case 1: start");
            CHECK(MPI_Wait(&o.q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 1: wait");
            right(&o, t + i, "case 1");
        }
        drop(&o);
    }
}

static void freed_in_other_orders(MPI_Comm c, int time)
{
    struct one os[ALIVE], late[2];
    struct one *all[ALIVE + 1];
    for (int i = 0; i < ALIVE; i++) make(&os[i], i % 3, c), all[i] = &os[i];
    start_all(all, ALIVE, c, time, "case 2, all six");
    int a = rank % 2 == 0 ? 0 : 3, b = 3 - a;
    drop(&os[a]);
    drop(&os[b]);
    make(&os[0], 2, c);
    make(&os[3], 0, c);
    start_all(all, ALIVE, c, time + 1, "case 2, two made anew");

    /* 3: the fifth freed before the next one is made on the even ranks,
     * after it on the odd ones */
    if (rank % 2 == 0) drop(&os[4]);
    make(&late[0], 1, c);
    if (rank % 2 == 1) drop(&os[4]);
    all[4] = &late[0];
    start_all(all, ALIVE, c, time + 2, "case 3, one freed on either side of a making");
    make(&late[1], 2, c);
    all[ALIVE] = &late[1];
    start_all(all, ALIVE + 1, c, time + 3, "case 3, one made after");
    for (int i = 0; i < ALIVE + 1; i++) drop(all[i]);
}

static void outliving(int time)
{
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    struct one o, p;
    make(&o, 0, d);
    MPI_Comm_free(&d);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    for (int t = 0; t < 3; t++) {
        make(&p, t % 3, d);
        struct one *both[2] = {&o, &p};
        start_all(both, 2, d, time + t, "case 4");
        drop(&p);
    }
    drop(&o);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    for (int time = 0; time < TIMES; time++) {
        for (int i = 0; i < 2; i++) {
            made_and_freed(comms[i]);
            freed_in_other_orders(comms[i], time);
        }
        outliving(time);
    }
    MPI_Comm_free(&dup);
    return finish();
}
