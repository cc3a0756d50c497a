/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * MPI_Cancel of pending receives and of unmatched sends (synchronous
 * eager and long rendezvous); a cancelled message is never received. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, flag;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Request r;

    /* a pending receive */
    int x;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "a pending receive was not cancelled");

    /* unmatched sends: a synchronous short one and a long one */
    int len = 1 << 20;
    char *big = malloc(len);
    memset(big, 3, len);
    int v = 5;
    MPI_Request s[2];
    MPI_Issend(&v, 1, MPI_INT, right, 88, MPI_COMM_WORLD, &s[0]);
    MPI_Isend(big, len, MPI_CHAR, right, 89, MPI_COMM_WORLD, &s[1]);
    MPI_Barrier(MPI_COMM_WORLD); /* the envelopes have arrived, unmatched */
    MPI_Cancel(&s[0]);
    MPI_Cancel(&s[1]);
    MPI_Status ss[2];
    MPI_Waitall(2, s, ss);
    MPI_Test_cancelled(&ss[0], &flag);
    CHECK(flag, "an unmatched synchronous send was not cancelled");
    MPI_Test_cancelled(&ss[1], &flag);
    CHECK(flag, "an unmatched long send was not cancelled");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Iprobe(left, 88, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a cancelled message is still visible");
    MPI_Iprobe(left, 89, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a cancelled long message is still visible");

    /* a matched send cannot be cancelled: the data arrives */
    MPI_Irecv(&x, 1, MPI_INT, left, 90, MPI_COMM_WORLD, &r);
    MPI_Request s2;
    MPI_Issend(&v, 1, MPI_INT, right, 90, MPI_COMM_WORLD, &s2);
    MPI_Wait(&r, &st);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive has matched its message */
    MPI_Cancel(&s2);
    MPI_Wait(&s2, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag && x == 5, "a matched send reported cancelled");

    /* a completed receive is not cancelled either */
    MPI_Irecv(&x, 1, MPI_INT, left, 91, MPI_COMM_WORLD, &r);
    MPI_Send(&v, 1, MPI_INT, right, 91, MPI_COMM_WORLD);
    do MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE); while (!flag);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "a completed receive reported cancelled");
    free(big);
    return finish();
}
