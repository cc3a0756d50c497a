/* oxmpi-test: ranks=1,2,4
 * Blocking and nonblocking send/receive between neighbours, status
 * fields, MPI_Get_count, MPI_Sendrecv, messages to oneself. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* ring with Sendrecv */
    int out[100], in[100];
    for (int i = 0; i < 100; i++) out[i] = rank * 1000 + i;
    MPI_Status st;
    MPI_Sendrecv(out, 100, MPI_INT, right, 7, in, 100, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 100 && st.MPI_SOURCE == left && st.MPI_TAG == 7, "count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 100; i++) CHECK(in[i] == left * 1000 + i, "in[%d] = %d", i, in[i]);
    MPI_Get_count(&st, MPI_SHORT, &count);
    CHECK(count == 200, "count as short %d", count);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    CHECK(count == MPI_UNDEFINED, "400 bytes are not whole MPI_DOUBLE_INTs: %d", count);

    /* shorter message than the buffer */
    MPI_Request r;
    MPI_Irecv(in, 100, MPI_INT, left, 8, MPI_COMM_WORLD, &r);
    MPI_Send(out, 3, MPI_INT, right, 8, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 3 && r == MPI_REQUEST_NULL, "count %d", count);
    int elements;
    MPI_Get_elements(&st, MPI_INT, &elements);
    CHECK(elements == 3, "elements %d", elements);
    MPI_Count elements_x = -1;
    MPI_Get_elements_x(&st, MPI_SHORT, &elements_x);
    CHECK(elements_x == 6, "elements as short %lld", (long long)elements_x);

    /* to oneself */
    int mine = 42 + rank, back = 0;
    MPI_Isend(&mine, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r);
    MPI_Recv(&back, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(back == mine && st.MPI_SOURCE == rank, "self message %d", back);

    /* zero-byte message */
    MPI_Sendrecv(NULL, 0, MPI_INT, right, 10, NULL, 0, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0 && st.MPI_SOURCE == left, "empty message count %d", count);

    /* MPI_Test until done */
    int flag = 0;
    MPI_Irecv(&back, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r);
    MPI_Send(&mine, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
    while (!flag) MPI_Test(&r, &flag, &st);
    CHECK(back == 42 + left && r == MPI_REQUEST_NULL, "tested message %d", back);
    MPI_Test(&r, &flag, &st);
    CHECK(flag == 1, "testing MPI_REQUEST_NULL gives flag 1");

    /* MPI_COMM_SELF */
    MPI_Sendrecv(&mine, 1, MPI_INT, 0, 1, &back, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &st);
    CHECK(back == mine && st.MPI_SOURCE == 0, "self comm %d source %d", back, st.MPI_SOURCE);
    return finish();
}
