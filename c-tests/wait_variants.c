/* oxmpi-test: ranks=1,2,4
 * Waitany, Waitsome, Testany, Testall, Testsome and Request_get_status
 * over many outstanding requests, with inactive entries; Request_free of
 * an active send. */
#include "common.h"

#define N 500

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static int out[N], in[N];
    MPI_Request rr[N], sr[N];
    for (int i = 0; i < N; i++) {
        out[i] = rank * 10000 + i;
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rr[i]);
    }
    for (int i = N - 1; i >= 0; i--) MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &sr[i]);

    /* Waitany until every receive is done; each index comes once */
    int seen[N] = {0};
    for (int k = 0; k < N / 2; k++) {
        int idx;
        MPI_Status st;
        MPI_Waitany(N, rr, &idx, &st);
        CHECK(idx >= 0 && idx < N && !seen[idx], "Waitany index %d", idx);
        if (idx < 0 || idx >= N) break;
        seen[idx] = 1;
        CHECK(st.MPI_TAG == idx && in[idx] == left * 10000 + idx, "Waitany message %d", idx);
        CHECK(rr[idx] == MPI_REQUEST_NULL, "completed handle is null");
    }
    /* Waitsome the rest */
    int done = N / 2;
    while (done < N) {
        int outcount, idx[N];
        MPI_Status sts[N];
        MPI_Waitsome(N, rr, &outcount, idx, sts);
        CHECK(outcount > 0, "Waitsome outcount %d", outcount);
        if (outcount <= 0) break;
        for (int j = 0; j < outcount; j++) {
            CHECK(!seen[idx[j]], "Waitsome repeated %d", idx[j]);
            seen[idx[j]] = 1;
            CHECK(sts[j].MPI_TAG == idx[j], "Waitsome status tag");
        }
        done += outcount;
    }
    int outcount;
    int idx[N];
    MPI_Waitsome(N, rr, &outcount, idx, MPI_STATUSES_IGNORE);
    CHECK(outcount == MPI_UNDEFINED, "Waitsome over inactive requests gives MPI_UNDEFINED, got %d", outcount);
    int index, flag;
    MPI_Waitany(N, rr, &index, MPI_STATUS_IGNORE);
    CHECK(index == MPI_UNDEFINED, "Waitany over inactive requests gives MPI_UNDEFINED");
    MPI_Testany(N, rr, &index, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && index == MPI_UNDEFINED, "Testany over inactive requests");
    MPI_Waitall(N, sr, MPI_STATUSES_IGNORE);

    /* Testall completes all or nothing; Testsome and Testany make progress */
    int a = rank, b[3];
    MPI_Request q[3];
    for (int j = 0; j < 3; j++) MPI_Irecv(&b[j], 1, MPI_INT, left, 100 + j, MPI_COMM_WORLD, &q[j]);
    MPI_Testall(3, q, &flag, MPI_STATUSES_IGNORE);
    CHECK(!flag && q[0] != MPI_REQUEST_NULL, "Testall before any send");
    MPI_Send(&a, 1, MPI_INT, right, 100, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Testall(3, q, &flag, MPI_STATUSES_IGNORE);
    CHECK(!flag && q[0] != MPI_REQUEST_NULL, "Testall completed part of the requests");
    MPI_Barrier(MPI_COMM_WORLD); /* no one sends tags 101/102 before every Testall above */
    do MPI_Testany(3, q, &index, &flag, MPI_STATUS_IGNORE); while (!flag);
    CHECK(index == 0 && b[0] == left, "Testany index %d", index);
    MPI_Send(&a, 1, MPI_INT, right, 101, MPI_COMM_WORLD);
    MPI_Send(&a, 1, MPI_INT, right, 102, MPI_COMM_WORLD);
    int got = 0;
    while (got < 2) {
        MPI_Testsome(3, q, &outcount, idx, MPI_STATUSES_IGNORE);
        if (outcount != MPI_UNDEFINED) got += outcount;
    }
    CHECK(b[1] == left && b[2] == left, "Testsome data");

    /* Request_get_status does not free; Request_free of an active send */
    MPI_Request r, s;
    MPI_Irecv(&b[0], 1, MPI_INT, left, 200, MPI_COMM_WORLD, &r);
    MPI_Isend(&a, 1, MPI_INT, right, 200, MPI_COMM_WORLD, &s);
    MPI_Request_free(&s);
    CHECK(s == MPI_REQUEST_NULL, "freed send handle");
    do MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE); while (!flag);
    CHECK(r != MPI_REQUEST_NULL, "Request_get_status keeps the request");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(b[0] == left, "data after get_status");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Request_free(&r);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "freeing MPI_REQUEST_NULL gave class %d", cls);
    rc = MPI_Waitall(-1, q, MPI_STATUSES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "Waitall with a negative count gave class %d", cls);
    return finish();
}
