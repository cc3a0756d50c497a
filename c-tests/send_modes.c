/* oxmpi-test: ranks=2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * The four send modes mean what the standard says: a synchronous send
 * completes only after the receive matched; a buffered send completes
 * before it; a ready send to a posted receive works and one to an
 * unposted receive is reported; the attached buffer is accounted. */
#include "common.h"
#include <unistd.h>

static void modes_between(int rank, int peer, int len)
{
    char *buf = malloc(len), *in = malloc(len);
    int go = 1, flag;
    MPI_Request r;
    memset(buf, rank + 1, len);
    if (rank == 0) {
        /* synchronous: not complete while the receiver waits for "go" */
        MPI_Issend(buf, len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 200; i++) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "Issend of %d bytes completed before the receive was posted", len);
            if (flag) break;
            usleep(100);
        }
        MPI_Send(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == peer) {
        MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(in, len, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(in[0] == 1 && in[len - 1] == 1, "synchronous data");
    }

    /* buffered: completes before the receive is posted (the receiver
     * waits for a message the sender sends only after its Bsend) */
    int size = len + MPI_BSEND_OVERHEAD;
    char *att = malloc(size);
    MPI_Buffer_attach(att, size);
    if (rank == 0) {
        MPI_Bsend(buf, len, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
        memset(buf, 9, len); /* the message was copied: reuse is safe */
        MPI_Send(&go, 1, MPI_INT, peer, 4, MPI_COMM_WORLD);
    } else if (rank == peer) {
        MPI_Recv(&go, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(in, len, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(in[0] == 1 && in[len - 1] == 1, "buffered data");
    }
    void *back;
    int back_size;
    MPI_Buffer_detach(&back, &back_size);
    CHECK(back == att && back_size == size, "detach returns the attached buffer");
    free(att);

    /* ready: the receive is posted before the sender learns it may send */
    if (rank == 0) {
        MPI_Recv(&go, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Rsend(buf, len, MPI_CHAR, peer, 6, MPI_COMM_WORLD);
        MPI_Irsend(buf, len, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == peer) {
        MPI_Request rr[2];
        MPI_Irecv(in, len, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &rr[0]);
        MPI_Irecv(in, len, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &rr[1]);
        MPI_Send(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
        CHECK(in[0] == 9, "ready data");
    }
    free(buf);
    free(in);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int lens[] = {8, 100000};
    for (int l = 0; l < 2; l++)
        for (int peer = 1; peer < size; peer++) {
            modes_between(rank, peer, lens[l]);
            MPI_Barrier(MPI_COMM_WORLD);
        }

    /* errors, reported under MPI_ERRORS_RETURN */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, cls, rc;
    rc = MPI_Bsend(&x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Bsend without an attached buffer gave class %d", cls);
    char small[MPI_BSEND_OVERHEAD + 8];
    MPI_Buffer_attach(small, sizeof small);
    rc = MPI_Buffer_attach(small, sizeof small);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "a second attach gave class %d", cls);
    int big[100] = {0};
    rc = MPI_Bsend(big, 100, MPI_INT, rank, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Bsend larger than the buffer gave class %d", cls);
    rc = MPI_Bsend(&x, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "Bsend that fits");
    MPI_Recv(&x, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);

    /* a ready send to a receive that is not posted is reported */
    if (size > 1) {
        if (rank == 0) {
            rc = MPI_Rsend(&x, 1, MPI_INT, 1, 42, MPI_COMM_WORLD);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_OTHER, "Rsend to an unposted receive gave class %d", cls);
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
