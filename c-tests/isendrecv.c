/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI 4.0 §3.10), int and _c
 * counts: a ring exchange whose request completes with the receive's
 * status; wildcards; to oneself; MPI_PROC_NULL; a derived datatype
 * replaced in place; 1 MiB messages (single copy and pipelined) left to
 * progress while the rank tests; several at once with MPI_Waitall,
 * MPI_Waitany and MPI_Testsome; MPI_Request_free before completion;
 * truncation reported by the wait; bad arguments (with
 * MPI_ERRORS_RETURN) starting nothing. (Debian's MPICH 4.0.2 itself
 * fails it: its statuses say source 0, tag 0, count 0, and MPI_PROC_NULL
 * both ways crashes, pmodels/mpich#6004.) */
#include "common.h"

static int rank, size, right, left;

static void ring(void)
{
    int out[64], in[64];
    for (int i = 0; i < 64; i++) out[i] = rank * 100 + i, in[i] = -1;
    MPI_Request r;
    MPI_Status st;
    CHECK(MPI_Isendrecv(out, 64, MPI_INT, right, 3, in, 64, MPI_INT, left, 3, MPI_COMM_WORLD, &r) == MPI_SUCCESS,
          "isendrecv");
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "wait");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 3 && count == 64, "status: source %d tag %d count %d", st.MPI_SOURCE,
          st.MPI_TAG, count);
    for (int i = 0; i < 64; i++) CHECK(in[i] == left * 100 + i, "ring in[%d] = %d", i, in[i]);

    /* wildcards, and the large-count binding */
    for (int i = 0; i < 64; i++) in[i] = -1;
    CHECK(MPI_Isendrecv_c(out, (MPI_Count)10, MPI_INT, right, 9, in, (MPI_Count)64, MPI_INT, MPI_ANY_SOURCE,
                          MPI_ANY_TAG, MPI_COMM_WORLD, &r) == MPI_SUCCESS,
          "isendrecv_c");
    MPI_Wait(&r, &st);
    MPI_Count big = -1;
    MPI_Get_count_c(&st, MPI_INT, &big);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 9 && big == 10, "wildcard status: source %d tag %d count %lld",
          st.MPI_SOURCE, st.MPI_TAG, (long long)big);
    CHECK(in[9] == left * 100 + 9 && in[10] == -1, "wildcard data %d %d", in[9], in[10]);
}

static void self_and_null(void)
{
    double out = rank + 0.5, in = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_Isendrecv(&out, 1, MPI_DOUBLE, rank, 4, &in, 1, MPI_DOUBLE, rank, 4, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    CHECK(in == rank + 0.5 && st.MPI_SOURCE == rank, "to oneself: %g from %d", in, st.MPI_SOURCE);

    in = -1;
    MPI_Isendrecv(&out, 1, MPI_DOUBLE, MPI_PROC_NULL, 4, &in, 1, MPI_DOUBLE, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &r);
    int flag = 0;
    MPI_Test(&r, &flag, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(flag && r == MPI_REQUEST_NULL, "MPI_PROC_NULL both ways completes at once");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && in == -1,
          "MPI_PROC_NULL status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);

    /* a send to no one, a receive from the left */
    out = rank;
    MPI_Request both[2];
    MPI_Isendrecv(&out, 1, MPI_DOUBLE, right, 5, &in, 1, MPI_DOUBLE, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &both[0]);
    MPI_Isendrecv(&out, 1, MPI_DOUBLE, MPI_PROC_NULL, 5, &in, 1, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &both[1]);
    MPI_Status sts[2];
    MPI_Waitall(2, both, sts);
    CHECK(in == left && sts[1].MPI_SOURCE == left && sts[0].MPI_SOURCE == MPI_PROC_NULL,
          "half null: %g, sources %d %d", in, sts[0].MPI_SOURCE, sts[1].MPI_SOURCE);
}

/* Every other int of 2 x 50 replaced by the left neighbour's. */
static void replace(void)
{
    int buf[100];
    MPI_Datatype every_other;
    MPI_Type_vector(50, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < 100; i++) buf[i] = i % 2 ? -7 : rank * 1000 + i;
    MPI_Request r;
    MPI_Status st;
    CHECK(MPI_Isendrecv_replace(buf, 1, every_other, right, 6, left, 6, MPI_COMM_WORLD, &r) == MPI_SUCCESS,
          "isendrecv_replace");
    MPI_Wait(&r, &st);
    for (int i = 0; i < 100; i++)
        CHECK(buf[i] == (i % 2 ? -7 : left * 1000 + i), "replace buf[%d] = %d", i, buf[i]);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 6, "replace status %d %d", st.MPI_SOURCE, st.MPI_TAG);

    double d[4] = {rank, rank, rank, rank};
    MPI_Isendrecv_replace_c(d, (MPI_Count)4, MPI_DOUBLE, right, 7, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(d[0] == left && d[3] == left, "replace_c %g %g", d[0], d[3]);
    MPI_Type_free(&every_other);
}

/* 1 MiB each way, completed by MPI_Test while the rank computes. */
static void long_and_overlapped(void)
{
    size_t n = 1 << 18;
    int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) out[i] = rank * 7 + (int)i, in[i] = -1;
    MPI_Request r;
    MPI_Isendrecv(out, (int)n, MPI_INT, right, 8, in, (int)n, MPI_INT, left, 8, MPI_COMM_WORLD, &r);
    int flag = 0;
    double work = 0;
    for (long k = 0; !flag; k++) {
        work += k * 0.5;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    }
    CHECK(work >= 0, "work");
    for (size_t i = 0; i < n; i += 997) CHECK(in[i] == left * 7 + (int)i, "long in[%zu] = %d", i, in[i]);
    CHECK(in[n - 1] == left * 7 + (int)(n - 1), "long last %d", in[n - 1]);
    free(out), free(in);
}

/* Four at once, by tag: completed by Waitany, Testsome, Waitall. */
static void several(void)
{
    int out[4], in[4] = {-1, -1, -1, -1};
    MPI_Request rs[4];
    for (int k = 0; k < 4; k++) {
        out[k] = rank * 10 + k;
        MPI_Isendrecv(&out[k], 1, MPI_INT, right, 20 + k, &in[k], 1, MPI_INT, left, 20 + k, MPI_COMM_WORLD, &rs[k]);
    }
    int idx = -1;
    MPI_Status st;
    MPI_Waitany(4, rs, &idx, &st);
    CHECK(idx >= 0 && idx < 4 && rs[idx] == MPI_REQUEST_NULL && st.MPI_TAG == 20 + idx, "waitany %d tag %d", idx,
          st.MPI_TAG);
    int outcount = 0, idxs[4];
    MPI_Status sts[4];
    MPI_Testsome(4, rs, &outcount, idxs, sts);
    for (int i = 0; i < outcount; i++) CHECK(sts[i].MPI_TAG == 20 + idxs[i], "testsome tag %d", sts[i].MPI_TAG);
    MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 4; k++) CHECK(in[k] == left * 10 + k, "several in[%d] = %d", k, in[k]);
}

/* Freed before it completes: it still sends and receives, and a later
 * message on the same tag comes after it (non-overtaking). */
static void freed(void)
{
    int out = rank, in = -1, later = -1, next = rank + 100;
    MPI_Request r;
    MPI_Isendrecv(&out, 1, MPI_INT, right, 30, &in, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "request_free leaves MPI_REQUEST_NULL");
    MPI_Sendrecv(&next, 1, MPI_INT, right, 30, &later, 1, MPI_INT, left, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(later == left + 100, "later message %d", later);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(in == left, "freed request's receive %d", in);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int out[8] = {0}, in[4] = {0};
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;

    /* truncation: 8 ints into room for 4, reported by the wait */
    MPI_Isendrecv(out, 8, MPI_INT, right, 40, in, 4, MPI_INT, left, 40, MPI_COMM_WORLD, &r);
    int e = MPI_Wait(&r, &st);
    CHECK(class_of(e) == MPI_ERR_TRUNCATE, "truncated: class %d", class_of(e));

    int bad = MPI_Isendrecv(out, 1, MPI_INT, size, 41, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r);
    CHECK(class_of(bad) == MPI_ERR_RANK, "destination out of range: class %d", class_of(bad));
    bad = MPI_Isendrecv(out, 1, MPI_INT, right, 41, in, 1, MPI_INT, -5, 41, MPI_COMM_WORLD, &r);
    CHECK(class_of(bad) == MPI_ERR_RANK, "source -5: class %d", class_of(bad));
    bad = MPI_Isendrecv(out, -1, MPI_INT, right, 41, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r);
    CHECK(class_of(bad) == MPI_ERR_COUNT, "negative count: class %d", class_of(bad));
    bad = MPI_Isendrecv(out, 1, MPI_INT, right, -2, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r);
    CHECK(class_of(bad) == MPI_ERR_TAG, "negative tag: class %d", class_of(bad));
    bad = MPI_Isendrecv(out, 1, MPI_DATATYPE_NULL, right, 41, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r);
    CHECK(class_of(bad) == MPI_ERR_TYPE, "null datatype: class %d", class_of(bad));
    bad = MPI_Isendrecv_replace(in, 1, MPI_INT, right, 41, left, 41, MPI_COMM_NULL, &r);
    CHECK(class_of(bad) == MPI_ERR_COMM, "null communicator: class %d", class_of(bad));
    if (!getenv("OXMPI_TEST_REFERENCE")) {
        bad = MPI_Isendrecv(out, 1, MPI_INT, right, 41, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, NULL);
        CHECK(class_of(bad) == MPI_ERR_ARG, "null request pointer: class %d", class_of(bad));
        /* cancelling one is refused; it then completes as usual */
        MPI_Isendrecv(out, 1, MPI_INT, right, 42, in, 1, MPI_INT, left, 42, MPI_COMM_WORLD, &r);
        bad = MPI_Cancel(&r);
        CHECK(class_of(bad) == MPI_ERR_REQUEST, "cancel: class %d", class_of(bad));
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && st.MPI_SOURCE == left, "after a refused cancel");
        int cancelled = 1;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(!cancelled, "not cancelled");
    }
    /* nothing was started by the failed calls: the next exchange on the
     * same tag gets the right message */
    out[0] = rank + 500;
    MPI_Isendrecv(out, 1, MPI_INT, right, 41, in, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(in[0] == left + 500, "after the failed calls: %d", in[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size, left = (rank + size - 1) % size;
    ring();
    self_and_null();
    replace();
    long_and_overlapped();
    several();
    freed();
    errors();
    return finish();
}
