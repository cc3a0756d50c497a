/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * Persistent requests in every mode, started many times with Start and
 * Startall; waiting on an inactive request; freeing them. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int lens[] = {16, 60000};
    char *att = malloc(2 * (60000 * sizeof(int) + MPI_BSEND_OVERHEAD));
    MPI_Buffer_attach(att, 2 * (60000 * sizeof(int) + MPI_BSEND_OVERHEAD));
    for (int l = 0; l < 2; l++) {
        int n = lens[l];
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        MPI_Request req[8];
        MPI_Send_init(out, n, MPI_INT, right, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Ssend_init(out, n, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Bsend_init(out, n, MPI_INT, right, 3, MPI_COMM_WORLD, &req[2]);
        MPI_Recv_init(in, n, MPI_INT, left, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Recv_init(in, n, MPI_INT, left, 2, MPI_COMM_WORLD, &req[4]);
        MPI_Recv_init(in, n, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &req[5]);
        for (int iter = 0; iter < 20; iter++) {
            for (int k = 0; k < 3; k++) {
                for (int i = 0; i < n; i++) out[i] = iter * 1000 + k * 100 + rank + i;
                MPI_Start(&req[3 + k]);
                MPI_Start(&req[k]);
                MPI_Status st[2];
                MPI_Request pair[2] = {req[k], req[3 + k]};
                MPI_Waitall(2, pair, st);
                CHECK(pair[0] == req[k] && pair[1] == req[3 + k], "persistent handles survive completion");
                int count;
                MPI_Get_count(&st[1], MPI_INT, &count);
                CHECK(count == n && st[1].MPI_SOURCE == left, "count %d source %d", count, st[1].MPI_SOURCE);
                int bad = 0;
                for (int i = 0; i < n; i++) bad += in[i] != iter * 1000 + k * 100 + left + i;
                CHECK(bad == 0, "mode %d iteration %d: %d wrong", k, iter, bad);
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
        /* Startall over sends and receives together */
        MPI_Startall(2, &req[3]);
        MPI_Startall(2, &req[0]);
        MPI_Request started[4] = {req[0], req[1], req[3], req[4]};
        MPI_Waitall(4, started, MPI_STATUSES_IGNORE);
        /* an inactive persistent request completes at once with an empty status */
        MPI_Status st;
        int flag = 0;
        MPI_Wait(&req[0], &st);
        CHECK(st.MPI_TAG == MPI_ANY_TAG && st.MPI_SOURCE == MPI_ANY_SOURCE, "empty status of an inactive request");
        MPI_Test(&req[3], &flag, &st);
        CHECK(flag, "testing an inactive request gives flag 1");
        for (int k = 0; k < 6; k++) {
            MPI_Request_free(&req[k]);
            CHECK(req[k] == MPI_REQUEST_NULL, "freed handle is null");
        }
        free(out);
        free(in);
    }
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);
    free(att);

    /* a persistent receive from MPI_PROC_NULL */
    MPI_Request pn;
    int x;
    MPI_Status st;
    MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pn);
    MPI_Start(&pn);
    MPI_Wait(&pn, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "persistent PROC_NULL receive");
    MPI_Request_free(&pn);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request plain;
    MPI_Isend(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &plain);
    int rc = MPI_Start(&plain), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Start on a nonpersistent request gave class %d", cls);
    MPI_Recv(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&plain, MPI_STATUS_IGNORE);
    return finish();
}
