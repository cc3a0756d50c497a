/* oxmpi-test: ranks=1,2,4
 * MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, and the non-overtaking
 * rule: messages from one sender with the same tag arrive in order. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Status st;

    /* everyone sends 50 numbered messages to rank 0 */
    const int N = 50;
    for (int i = 0; i < N; i++) {
        int v = rank * 10000 + i;
        MPI_Request r;
        MPI_Isend(&v, 1, MPI_INT, 0, i % 3, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (rank == 0) {
        int next[64] = {0};
        for (int k = 0; k < N * size; k++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int src = v / 10000, i = v % 10000;
            CHECK(src == st.MPI_SOURCE, "value %d from source %d", v, st.MPI_SOURCE);
            CHECK(i == next[src], "from %d got message %d, expected %d (overtaken)", src, i, next[src]);
            CHECK(st.MPI_TAG == i % 3, "tag %d for message %d", st.MPI_TAG, i);
            next[src] = i + 1;
        }
    }

    /* the wildcard receives above must not see the messages below */
    MPI_Barrier(MPI_COMM_WORLD);

    /* tag selection: receive tag 2 before tag 1 from the same sender */
    if (size > 1) {
        if (rank == 1) {
            int a = 1, b = 2;
            MPI_Send(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            MPI_Send(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        } else if (rank == 0) {
            int a = 0, b = 0;
            MPI_Recv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &st);
            MPI_Recv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            CHECK(a == 1 && b == 2, "a %d b %d", a, b);
        }
    }

    /* MPI_PROC_NULL: completes at once, status says so */
    int x = 5;
    MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && x == 5,
          "PROC_NULL status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    return finish();
}
