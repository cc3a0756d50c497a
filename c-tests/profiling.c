/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SHM_COLL_MAX=0;OXMPI_TRANSPORT=tcp
 * The profiling interface (MPI 4.0 chapter 15): the program's own MPI_X
 * functions stand in for the library's, count the program's calls and
 * reach the library through PMPI_X. The library must not call them back
 * itself: its Sendrecv, Waitall, collectives (over messages too, with
 * the mailboxes off) and progress count nothing they did not get from
 * the program, and calls through PMPI_X pass the wrappers by. MPI_Pcontrol
 * is there and does nothing. */
#include "common.h"

/* The program's calls of each wrapped function, since counting began. */
static int counting, sends, recvs, isends, irecvs, waits, sendrecvs, allreduces, bcasts, barriers, alltoalls;

#define COUNT(n) (counting ? (void)(n)++ : (void)0)

int MPI_Send(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c)
{
    COUNT(sends);
    return PMPI_Send(b, n, t, to, tag, c);
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status *s)
{
    COUNT(recvs);
    return PMPI_Recv(b, n, t, from, tag, c, s);
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *r)
{
    COUNT(isends);
    return PMPI_Isend(b, n, t, to, tag, c, r);
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request *r)
{
    COUNT(irecvs);
    return PMPI_Irecv(b, n, t, from, tag, c, r);
}

int MPI_Wait(MPI_Request *r, MPI_Status *s)
{
    COUNT(waits);
    return PMPI_Wait(r, s);
}

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int to, int stag, void *rb, int rn, MPI_Datatype rt,
                 int from, int rtag, MPI_Comm c, MPI_Status *s)
{
    COUNT(sendrecvs);
    return PMPI_Sendrecv(sb, sn, st, to, stag, rb, rn, rt, from, rtag, c, s);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    COUNT(allreduces);
    return PMPI_Allreduce(s, r, n, t, op, c);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    COUNT(bcasts);
    return PMPI_Bcast(b, n, t, root, c);
}

int MPI_Barrier(MPI_Comm c)
{
    COUNT(barriers);
    return PMPI_Barrier(c);
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c)
{
    COUNT(alltoalls);
    return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_library();
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    enum { N = 40000 }; /* long enough for a rendezvous, and for pieces */
    int *a = calloc((size_t)N * size, sizeof(int)), *b = calloc((size_t)N * size, sizeof(int));
    counting = 1;

    /* point-to-point: the program's calls, each once */
    MPI_Request r[2];
    MPI_Irecv(b, N, MPI_INT, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(a, N, MPI_INT, right, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Sendrecv(a, N, MPI_INT, right, 2, b, N, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank % 2 == 0) {
        MPI_Send(a, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
        MPI_Recv(b, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(b, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(a, 1, MPI_INT, right, 3, MPI_COMM_WORLD);
    }
    /* (an odd size's last even rank sends to rank 0, which sent first: the
     * one-int message is eager, so no rank waits on another's send) */
    PMPI_Irecv(b, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &r[0]);
    PMPI_Isend(a, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);

    /* collectives, short and long */
    for (int n = 1; n <= N; n *= 200) {
        MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(a, n, MPI_INT, size - 1, MPI_COMM_WORLD);
        MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request ib;
    MPI_Ibarrier(MPI_COMM_WORLD, &ib);
    MPI_Wait(&ib, MPI_STATUS_IGNORE);
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(MPI_Pcontrol(1) == MPI_SUCCESS, "MPI_Pcontrol");
    counting = 0;

    CHECK(isends == 1 && irecvs == 1 && waits == 3, "Isend %d, Irecv %d, Wait %d: want 1, 1 and 3", isends, irecvs,
          waits);
    CHECK(sendrecvs == 1, "Sendrecv %d: want 1", sendrecvs);
    CHECK(sends == 1 && recvs == 1, "Send %d, Recv %d: want 1 each (the library sent or received by the program's "
          "wrappers)", sends, recvs);
    CHECK(allreduces == 3 && bcasts == 3 && alltoalls == 3, "Allreduce %d, Bcast %d, Alltoall %d: want 3 each",
          allreduces, bcasts, alltoalls);
    CHECK(barriers == 1, "Barrier %d: want 1 (a PMPI_Barrier or the Ibarrier counted)", barriers);
    free(a);
    free(b);
    return finish();
}
