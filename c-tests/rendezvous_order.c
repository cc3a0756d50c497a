/* oxmpi-test: ranks=2 variants=OXMPI_TRANSPORT=tcp;OXMPI_SINGLE_COPY=0
 * Long messages that arrive before their receives are posted: taken out
 * of order by tag, through a matched probe after a pause, into a too
 * small buffer (MPI_ERR_TRUNCATE), and a
 * cancelled one. Over TCP the first part of each long message travels
 * with its announcement, before the receiver matched it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int errs = 0;

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 13 + seed);
}

static void check(const unsigned char *b, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 13 + seed)) {
            printf("%s: byte %d is %d, expected %d\n", what, i, b[i], (unsigned char)(i * 13 + seed));
            errs++;
            return;
        }
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int big = 1 << 20, mid = 200 << 10, small = 100 << 10;
    unsigned char *a = malloc(big), *b = malloc(big), *c = malloc(big);

    /* 1: two long messages, both unexpected, taken in the other order */
    if (rank == 0) {
        MPI_Request r[2];
        fill(a, big, 1);
        fill(b, mid, 2);
        MPI_Isend(a, big, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(b, mid, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    } else {
        usleep(100000);
        MPI_Status st;
        MPI_Recv(c, big, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st);
        int n;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n != mid)
            printf("tag 2: %d bytes, expected %d\n", n, mid), errs++;
        check(c, mid, 2, "tag 2 taken first");
        MPI_Recv(c, big, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(c, big, 1, "tag 1 taken second");
    }

    /* 2: a matched probe, a pause, then the matched receive */
    if (rank == 0) {
        fill(a, mid + 7, 3);
        MPI_Send(a, mid + 7, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
    } else {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(0, 3, MPI_COMM_WORLD, &m, &st);
        usleep(50000);
        MPI_Mrecv(c, mid + 7, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        check(c, mid + 7, 3, "matched probe");
    }

    /* 3: a long message into a buffer too small for it */
    if (rank == 0) {
        fill(a, 5 * small, 4);
        MPI_Send(a, 5 * small, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
    } else {
        usleep(20000);
        MPI_Status st;
        int rc = MPI_Recv(c, small, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &st);
        int cls;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_TRUNCATE)
            printf("truncated receive returned class %d, expected MPI_ERR_TRUNCATE\n", cls), errs++;
        /* the buffer's content is not checked: MPI leaves it undefined
         * (MPICH writes nothing, oxmpi the part that fits) */
    }

    /* 4: a long send cancelled while its receiver waits for something
     * else (so it is unmatched: the cancel must succeed); the next long
     * message with the same tag arrives intact. Skipped on the reference
     * (OXMPI_TEST_REFERENCE=1): MPICH 4.0.2 (ch4:ucx) cannot cancel sends,
     * and its MPI_Wait then waits for a match, which MPI 4.0 section 3.8.4
     * rules out ("guaranteed to return, irrespective of the activities of
     * other processes"). */
    if (getenv("OXMPI_TEST_REFERENCE")) {
    } else if (rank == 0) {
        MPI_Request r;
        MPI_Status st;
        int cancelled;
        fill(a, big, 5);
        MPI_Isend(a, big, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        if (!cancelled)
            printf("the unmatched long send was not cancelled\n"), errs++;
        MPI_Send(&cancelled, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
        fill(b, mid, 6);
        MPI_Send(b, mid, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        int cancelled;
        MPI_Recv(&cancelled, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!cancelled)
            MPI_Recv(c, big, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(c, big, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(c, mid, 6, "after a cancelled send");
    }

    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "Found %d errors\n" : "No Errors\n", all);
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return 0;
}
