/* Used by tools/test_hosts.py.
 *   tcp_job wait FILE   every rank waits until FILE exists (strangers
 *                       knock on the ranks' ports meanwhile), then the job
 *                       exchanges eager and long messages and reduces; prints
 *                       "No Errors" when every byte arrived right.
 *   tcp_job vanish      the last rank dies (SIGKILL) while rank 0 streams
 *                       a long message to it: the job must end, not hang. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int exchange(int rank, int size, int len)
{
    int errs = 0, to = (rank + 1) % size, from = (rank + size - 1) % size;
    unsigned char *out = malloc(len), *in = malloc(len);
    for (int i = 0; i < len; i++)
        out[i] = (unsigned char)(i * 7 + rank);
    MPI_Sendrecv(out, len, MPI_BYTE, to, len & 0x7fff, in, len, MPI_BYTE, from, len & 0x7fff, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < len; i++)
        errs += in[i] != (unsigned char)(i * 7 + from);
    free(out);
    free(in);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 2 && strcmp(argv[1], "wait") == 0) {
        while (access(argv[2], F_OK) != 0)
            usleep(10000);
        for (int len = 1; len <= (8 << 20); len *= 8)
            errs += exchange(rank, size, len);
        int all;
        MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf(all ? "Found %d errors\n" : "No Errors\n", all);
    } else if (argc > 1 && strcmp(argv[1], "vanish") == 0) {
        int len = 256 << 20;
        char *buf = calloc(1, len);
        if (rank == 0)
            MPI_Send(buf, len, MPI_BYTE, size - 1, 0, MPI_COMM_WORLD);
        else if (rank == size - 1) {
            MPI_Request r;
            MPI_Irecv(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
            int flag = 0;
            for (int i = 0; i < 20 && !flag; i++)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            raise(SIGKILL);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        printf("rank %d: the job went on without its last rank\n", rank);
    }
    MPI_Finalize();
    return 0;
}
