/* oxmpi-test: ranks=2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_ASYNC_PROGRESS=1
 * A rank waiting on a peer that is busy outside MPI does not burn its
 * core: it waits for a message (nothing of its own to send), for room
 * in its ring to the peer (eager messages the peer has not taken yet),
 * and for room to push a long message the peer asked for but stopped
 * taking. In each case rank 1 sleeps 0.4 s before it takes anything,
 * and rank 0's CPU time over its wait, beyond what moving the data
 * costs when rank 1 takes it at once, must stay well below the wall
 * time. (The check is of oxmpi's waiting, not of the standard: skipped
 * when the test runs on another MPI.) Over TCP the long message is 16
 * times longer, more than the sender queues and the kernel's socket
 * buffers hold together. With OXMPI_ASYNC_PROGRESS=1 rank 1's progress
 * thread may complete the operations while rank 1 sleeps: a short wait is
 * then no error. */
#include "common.h"
#include <time.h>
#include <unistd.h>

#define EAGER_MSGS 64
#define EAGER_BYTES 16384
#define LONG_ITEMS (1 << 20)

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double wall0, cpu0;

static void start(void)
{
    wall0 = clock_s(CLOCK_MONOTONIC);
    cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* `must_wait`: the operation cannot complete while rank 1 sleeps;
 * `work`: CPU seconds the operation costs when nobody sleeps (moving the
 * data), allowed on top */
static void stop(const char *what, int must_wait, double work)
{
    double wall = clock_s(CLOCK_MONOTONIC) - wall0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    /* a progress thread (OXMPI_ASYNC_PROGRESS=1) moves rank 1's side on
     * while rank 1 sleeps */
    const char *helper = getenv("OXMPI_ASYNC_PROGRESS");
    if (wall < 0.3) {
        CHECK(!must_wait || (helper && strcmp(helper, "0") != 0), "%s: the wait took %.3f s, less than rank 1's sleep",
              what, wall);
        return;
    }
    if (!getenv("OXMPI_TEST_REFERENCE"))
        CHECK(cpu - work < wall / 4, "%s: %.3f s of CPU (%.3f s of it moving the data) over a %.3f s wait: the rank spins",
              what, cpu, work, wall);
}

/* 3: a long non-contiguous message (pushed piece by piece) whose
 * receiver matched it, then stopped taking pieces for `nap` microseconds:
 * rank 1 posts the receive (which answers the waiting envelope at once,
 * without taking any data) only once it has the go message sent behind
 * the envelope, and then sleeps. Returns rank 0's CPU seconds. */
static double long_push(int rank, int items, MPI_Datatype every_other, int *data, useconds_t nap)
{
    int token = 7;
    double cpu = 0;
    if (rank == 0) {
        for (int i = 0; i < items; i++) data[2 * i] = i;
        MPI_Request r;
        MPI_Isend(data, 1, every_other, 1, 2, MPI_COMM_WORLD, &r);
        MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        start();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    } else if (rank == 1) {
        MPI_Request r;
        MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(data, items, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
        if (nap) usleep(nap);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int ok = 1;
        for (int i = 0; i < items; i++) ok &= data[i] == i;
        CHECK(ok, "the long message arrived wrong");
    }
    return cpu;
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int token = 7;

    /* 1: waiting for a message (rank 1 sleeps from the go message on) */
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        start();
        MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stop("waiting for a message", 1, 0);
    } else if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usleep(400000);
        MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }

    /* 2: eager messages beyond what the ring holds, then a wait */
    static char eager[EAGER_MSGS][EAGER_BYTES];
    MPI_Request reqs[EAGER_MSGS];
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
        for (int i = 0; i < EAGER_MSGS; i++) {
            memset(eager[i], i, EAGER_BYTES);
            MPI_Isend(eager[i], EAGER_BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &reqs[i]);
        }
        start();
        MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stop("waiting with eager messages queued", 1, 0);
        MPI_Waitall(EAGER_MSGS, reqs, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        usleep(400000);
        for (int i = 0; i < EAGER_MSGS; i++) {
            MPI_Recv(eager[i], EAGER_BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = 1;
            for (int k = 0; k < EAGER_BYTES; k++) ok &= eager[i][k] == (char)i;
            CHECK(ok, "eager message %d arrived wrong", i);
        }
        MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }

    /* 3: once with rank 1 taking at once (what moving the data costs),
     * then with it asleep */
    const char *transport = getenv("OXMPI_TRANSPORT");
    int items = transport && strcmp(transport, "tcp") == 0 ? 16 * LONG_ITEMS : LONG_ITEMS;
    MPI_Datatype every_other;
    MPI_Type_vector(items, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int *data = malloc(2 * (size_t)items * sizeof(int));
    double work = long_push(rank, items, every_other, data, 0);
    long_push(rank, items, every_other, data, 400000);
    if (rank == 0) stop("pushing a long message", 1, work);
    free(data);
    MPI_Type_free(&every_other);
    return finish();
}
