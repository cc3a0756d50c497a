/* oxmpi-test: ranks=1,2
 * Generalized requests (MPI 4.0 §13.2): not complete until
 * MPI_Grequest_complete; a completing wait or test calls the query
 * function (its status is the request's: source, tag, count set by
 * MPI_Status_set_elements, the cancelled flag), then the free function,
 * each once with the program's extra_state; MPI_Request_get_status calls
 * the query function alone; MPI_Request_free calls the free function
 * alone, at once when the request is complete, else at
 * MPI_Grequest_complete; MPI_Cancel calls the cancel function with
 * whether the request is complete, and that function may complete it;
 * with point-to-point requests in one MPI_Waitall and MPI_Waitany. An
 * error code the query or free function returns, one the program added
 * too, is what the wait returns (in MPI_Waitall, in the status with
 * MPI_ERR_IN_STATUS), the free function's when both fail (the standard's
 * "last callback"). Bad arguments are errors under MPI_ERRORS_RETURN, and
 * so is a wait that only MPI_Grequest_complete could end (oxmpi provides
 * MPI_THREAD_SERIALIZED: no other thread may call it meanwhile).
 * (Debian's MPICH 4.0.2 calls the free function at MPI_Request_free of a
 * request not yet complete, where the standard says at whichever of
 * MPI_Request_free and MPI_Grequest_complete comes last, and reports
 * the query function's error where both fail.) */
#include "common.h"

struct op {
    int queries, frees, cancels, cancelled_while_complete;
    int query_error, free_error;
    MPI_Request self; /* for the cancel function to complete */
    int cancelled;
};

static int query(void *extra, MPI_Status *st)
{
    struct op *o = extra;
    o->queries++;
    st->MPI_SOURCE = 7;
    st->MPI_TAG = 99;
    MPI_Status_set_elements(st, MPI_INT, 5);
    MPI_Status_set_cancelled(st, o->cancelled);
    return o->query_error;
}

static int release(void *extra)
{
    struct op *o = extra;
    o->frees++;
    return o->free_error;
}

static int cancel(void *extra, int complete)
{
    struct op *o = extra;
    o->cancels++;
    if (complete) {
        o->cancelled_while_complete = 1;
    } else {
        o->cancelled = 1;
        MPI_Grequest_complete(o->self);
    }
    return MPI_SUCCESS;
}

static MPI_Request start(struct op *o)
{
    memset(o, 0, sizeof *o);
    MPI_Request r;
    CHECK(MPI_Grequest_start(query, release, cancel, o, &r) == MPI_SUCCESS, "grequest_start");
    o->self = r;
    return r;
}

int main(int argc, char **argv)
{
    int rank, size, flag = -1, n = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct op a, b;
    MPI_Status st;

    /* complete, then waited for: query, then free, once each */
    MPI_Request r = start(&a);
    MPI_Test(&r, &flag, &st);
    CHECK(!flag && r != MPI_REQUEST_NULL && a.queries == 0 && a.frees == 0, "complete before MPI_Grequest_complete");
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "wait");
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(st.MPI_SOURCE == 7 && st.MPI_TAG == 99 && n == 5, "status: source %d tag %d count %d", st.MPI_SOURCE,
          st.MPI_TAG, n);
    CHECK(a.queries == 1 && a.frees == 1, "query %d and free %d calls", a.queries, a.frees);

    /* MPI_Request_get_status queries without freeing */
    r = start(&a);
    MPI_Grequest_complete(r);
    MPI_Request_get_status(r, &flag, &st);
    CHECK(flag && a.queries == 1 && a.frees == 0 && r != MPI_REQUEST_NULL, "get_status: %d queries, %d frees",
          a.queries, a.frees);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(a.queries == 2 && a.frees == 1, "wait after get_status: %d queries, %d frees", a.queries, a.frees);

    /* freed before completion: free at MPI_Grequest_complete, no query */
    r = start(&a);
    MPI_Request keep = r;
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL && a.frees == 0, "freed early");
    MPI_Grequest_complete(keep);
    CHECK(a.frees == 1 && a.queries == 0, "after complete: %d frees, %d queries", a.frees, a.queries);
    /* freed after completion: free at once */
    r = start(&a);
    MPI_Grequest_complete(r);
    MPI_Request_free(&r);
    CHECK(a.frees == 1 && a.queries == 0, "freed complete: %d frees, %d queries", a.frees, a.queries);

    /* cancelled: the cancel function completes it */
    r = start(&a);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(a.cancels == 1 && flag && a.frees == 1, "cancel: %d calls, cancelled %d", a.cancels, flag);
    r = start(&a);
    MPI_Grequest_complete(r);
    MPI_Cancel(&r);
    CHECK(a.cancelled_while_complete, "the cancel function was not told the request is complete");
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "complete before the cancel, yet cancelled");

    /* with point-to-point requests */
    int out = rank, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request rs[4];
    rs[0] = start(&a);
    MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rs[1]);
    rs[2] = start(&b);
    MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &rs[3]);
    MPI_Grequest_complete(rs[2]);
    int idx = -1;
    MPI_Status sts[4];
    do
        MPI_Waitany(4, rs, &idx, &st);
    while (idx != 2 && idx != MPI_UNDEFINED);
    CHECK(idx == 2 && b.frees == 1 && st.MPI_TAG == 99, "waitany: index %d", idx);
    MPI_Grequest_complete(rs[0]);
    MPI_Waitall(4, rs, sts);
    CHECK(in == left && a.frees == 1, "waitall: got %d", in);

    /* error codes, the program's own class too */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int myclass, mycode;
    MPI_Add_error_class(&myclass);
    MPI_Add_error_code(myclass, &mycode);
    r = start(&a);
    a.query_error = mycode;
    MPI_Grequest_complete(r);
    int e = MPI_Wait(&r, &st);
    CHECK(e == mycode && a.frees == 1, "query's error: %d, wanted %d", e, mycode);
    r = start(&a);
    a.free_error = MPI_ERR_OTHER;
    MPI_Grequest_complete(r);
    e = MPI_Wait(&r, &st);
    CHECK(class_of(e) == MPI_ERR_OTHER, "free's error: class %d", class_of(e));
    rs[0] = start(&a);
    rs[1] = start(&b);
    b.query_error = mycode;
    MPI_Grequest_complete(rs[0]);
    MPI_Grequest_complete(rs[1]);
    e = MPI_Waitall(2, rs, sts);
    CHECK(e == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_SUCCESS && class_of(sts[1].MPI_ERROR) == myclass,
          "waitall: %d, statuses %d %d", e, sts[0].MPI_ERROR, sts[1].MPI_ERROR);
    /* the free function's error from the call that runs it */
    r = start(&a);
    a.free_error = MPI_ERR_OTHER;
    keep = r;
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS, "request_free of an incomplete request");
    e = MPI_Grequest_complete(keep);
    CHECK(class_of(e) == MPI_ERR_OTHER && a.frees == 1, "grequest_complete running free: class %d", class_of(e));
    r = start(&a);
    a.free_error = mycode;
    MPI_Grequest_complete(r);
    e = MPI_Request_free(&r);
    CHECK(e == mycode && a.frees == 1, "request_free running free: %d", e);
    /* both fail: the free function's error, the last callback's */
    r = start(&a);
    a.query_error = mycode;
    a.free_error = MPI_ERR_OTHER;
    MPI_Grequest_complete(r);
    e = MPI_Wait(&r, &st);
    CHECK(class_of(e) == MPI_ERR_OTHER, "both failed: class %d", class_of(e));

    if (!getenv("OXMPI_TEST_REFERENCE")) {
        /* (MPICH accepts a second completion and null functions) */
        r = start(&a);
        MPI_Grequest_complete(r);
        e = MPI_Grequest_complete(r);
        CHECK(class_of(e) == MPI_ERR_REQUEST, "completed twice: class %d", class_of(e));
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        e = MPI_Grequest_start(NULL, release, cancel, &a, &r);
        CHECK(class_of(e) == MPI_ERR_ARG, "null query function: class %d", class_of(e));
        MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
        e = MPI_Grequest_complete(r);
        CHECK(class_of(e) == MPI_ERR_REQUEST, "completing a receive: class %d", class_of(e));
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* a wait that only MPI_Grequest_complete could end, which no
         * other thread may call meanwhile: an error, not a hang */
        rs[0] = start(&a);
        MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rs[1]);
        e = MPI_Wait(&rs[0], MPI_STATUS_IGNORE);
        CHECK(class_of(e) == MPI_ERR_REQUEST && rs[0] != MPI_REQUEST_NULL, "wait: class %d", class_of(e));
        e = MPI_Waitall(2, rs, MPI_STATUSES_IGNORE);
        CHECK(class_of(e) == MPI_ERR_REQUEST, "waitall: class %d", class_of(e));
        e = MPI_Waitany(2, rs, &idx, MPI_STATUS_IGNORE);
        CHECK(e == MPI_SUCCESS && idx == 1, "waitany with a receive: %d, index %d", e, idx);
        e = MPI_Waitany(2, rs, &idx, MPI_STATUS_IGNORE);
        CHECK(class_of(e) == MPI_ERR_REQUEST, "waitany: class %d", class_of(e));
        int outcount = -1, indices[2];
        e = MPI_Waitsome(2, rs, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(class_of(e) == MPI_ERR_REQUEST, "waitsome: class %d", class_of(e));
        MPI_Grequest_complete(rs[0]);
        CHECK(MPI_Wait(&rs[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && a.frees == 1, "wait after the errors");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
