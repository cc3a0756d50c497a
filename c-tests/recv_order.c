/* oxmpi-test: ranks=2,4
 * Blocking receives among other receives and queued messages: a receive
 * posted earlier takes the first matching message, a blocking receive
 * passes over a message of another tag at the head of the sender's
 * queue, takes a message already received as unexpected (after a probe)
 * before a newer one, completes a synchronous send, reports truncation
 * with the bytes that fit, and lands in a derived datatype. Then the
 * same for nonblocking receives posted while the messages may wait at the
 * head of the sender's queue (an eager one lands in the Irecv itself): a
 * receive posted earlier with a wildcard source keeps the first message,
 * a later one passes over a message of another tag, a synchronous send
 * completes, a truncated one reports MPI_ERR_TRUNCATE with the bytes that
 * fit. Ranks pair up (0 with 1, 2 with 3); the even rank receives. */
#include "common.h"

enum { TAG_A = 5, TAG_B1 = 8, TAG_B2 = 7, TAG_C = 9, TAG_D = 10, TAG_F1 = 11, TAG_F2 = 12, TAG_G = 13, TAG_H1 = 14, TAG_H2 = 15 };

static void sender(int peer)
{
    int v;
    MPI_Barrier(MPI_COMM_WORLD); /* the receiver posted its Irecv */
    for (v = 1; v <= 2; v++)
        MPI_Send(&v, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD);
    v = 81;
    MPI_Send(&v, 1, MPI_INT, peer, TAG_B1, MPI_COMM_WORLD);
    v = 72;
    MPI_Send(&v, 1, MPI_INT, peer, TAG_B2, MPI_COMM_WORLD);
    v = 9;
    MPI_Ssend(&v, 1, MPI_INT, peer, TAG_C, MPI_COMM_WORLD);
    int four[4] = {41, 42, 43, 44};
    MPI_Send(four, 4, MPI_INT, peer, TAG_D, MPI_COMM_WORLD);
    v = 111;
    MPI_Send(&v, 1, MPI_INT, peer, TAG_F1, MPI_COMM_WORLD);
    v = 112;
    MPI_Send(&v, 1, MPI_INT, peer, TAG_F2, MPI_COMM_WORLD);
    int six[6] = {1, 2, 3, 4, 5, 6};
    MPI_Send(six, 6, MPI_INT, peer, TAG_G, MPI_COMM_WORLD);
    /* H: sent before the barrier, received after it */
    for (v = 1; v <= 3; v++)
        MPI_Send(&v, 1, MPI_INT, peer, v == 2 ? TAG_H2 : TAG_H1, MPI_COMM_WORLD);
    MPI_Send(four, 4, MPI_INT, peer, TAG_D, MPI_COMM_WORLD);
    MPI_Request r;
    v = 19;
    MPI_Issend(&v, 1, MPI_INT, peer, TAG_C, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void receiver(int peer)
{
    MPI_Status st;
    int v = 0, early = 0, n;

    /* A: the Irecv posted first takes the first message of the tag */
    MPI_Request r;
    MPI_Irecv(&early, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(early == 1 && v == 2, "posted Irecv got %d, the blocking receive %d (want 1, 2)", early, v);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == TAG_A, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);

    /* B: the message at the head has another tag */
    MPI_Recv(&v, 1, MPI_INT, peer, TAG_B2, MPI_COMM_WORLD, &st);
    CHECK(v == 72 && st.MPI_TAG == TAG_B2, "tag %d receive got %d (tag %d)", TAG_B2, v, st.MPI_TAG);
    MPI_Recv(&v, 1, MPI_INT, peer, TAG_B1, MPI_COMM_WORLD, &st);
    CHECK(v == 81 && st.MPI_TAG == TAG_B1, "tag %d receive got %d (tag %d)", TAG_B1, v, st.MPI_TAG);

    /* C: a synchronous send completes when the blocking receive takes it */
    MPI_Recv(&v, 1, MPI_INT, peer, TAG_C, MPI_COMM_WORLD, &st);
    CHECK(v == 9, "synchronous message %d", v);

    /* D: truncation: the bytes that fit, then MPI_ERR_TRUNCATE */
    int two[3] = {0, 0, -7};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Recv(two, 2, MPI_INT, peer, TAG_D, MPI_COMM_WORLD, &st);
    int cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: error class %d", cls);
    CHECK(two[0] == 41 && two[1] == 42 && two[2] == -7, "truncated receive wrote %d %d %d", two[0], two[1], two[2]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* F: both messages are received as unexpected by the probe; the
     * receives then take them from there, each by its tag */
    int flag = 0;
    while (!flag)
        MPI_Iprobe(peer, TAG_F2, MPI_COMM_WORLD, &flag, &st);
    MPI_Recv(&v, 1, MPI_INT, peer, TAG_F1, MPI_COMM_WORLD, &st);
    CHECK(v == 111, "first probed-past message %d", v);
    MPI_Recv(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(v == 112 && st.MPI_TAG == TAG_F2, "second probed-past message %d tag %d", v, st.MPI_TAG);

    /* G: into a vector: blocks of 2 ints, stride 3 */
    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int grid[9];
    for (int i = 0; i < 9; i++)
        grid[i] = -1;
    MPI_Recv(grid, 1, vec, peer, TAG_G, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    int want[9] = {1, 2, -1, 3, 4, -1, 5, 6, -1};
    CHECK(n == 6, "vector receive count %d", n);
    for (int i = 0; i < 9; i++)
        CHECK(grid[i] == want[i], "vector receive: item %d is %d, want %d", i, grid[i], want[i]);
    MPI_Type_free(&vec);

    /* H: nonblocking receives of messages sent before the barrier */
    MPI_Barrier(MPI_COMM_WORLD);
    int h[3] = {0, 0, 0};
    MPI_Request q[3];
    MPI_Status sts[3];
    MPI_Irecv(&h[0], 1, MPI_INT, MPI_ANY_SOURCE, TAG_H1, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(&h[1], 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &q[1]);
    MPI_Irecv(&h[2], 1, MPI_INT, peer, TAG_H1, MPI_COMM_WORLD, &q[2]);
    MPI_Waitall(3, q, sts);
    CHECK(h[0] == 1 && h[1] == 2 && h[2] == 3, "nonblocking receives got %d %d %d (want 1 2 3)", h[0], h[1], h[2]);
    CHECK(sts[1].MPI_TAG == TAG_H2 && sts[1].MPI_SOURCE == peer, "any-tag receive: tag %d source %d", sts[1].MPI_TAG,
          sts[1].MPI_SOURCE);
    int part[3] = {0, 0, -7};
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Irecv(part, 2, MPI_INT, peer, TAG_D, MPI_COMM_WORLD, &r);
    err = MPI_Wait(&r, &st);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated nonblocking receive: error class %d", cls);
    CHECK(part[0] == 41 && part[1] == 42 && part[2] == -7, "truncated nonblocking receive wrote %d %d %d", part[0],
          part[1], part[2]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Irecv(&v, 1, MPI_INT, peer, TAG_C, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    CHECK(v == 19 && st.MPI_TAG == TAG_C, "synchronous message %d tag %d", v, st.MPI_TAG);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 == 0) {
        if (rank % 2 == 0)
            receiver(rank + 1);
        else
            sender(rank - 1);
    }
    return finish();
}
