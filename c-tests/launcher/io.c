/* Used by tools/test_launcher.py: rank 0 echoes stdin, every rank prints
 * an environment variable, and the exit code comes from argv. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    char line[256];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        while (fgets(line, sizeof line, stdin))
            printf("stdin: %s", line);
    const char *v = getenv("OXMPI_TEST_VALUE");
    printf("rank %d value %s\n", rank, v ? v : "(unset)");
    fflush(stdout);
    if (argc > 1 && atoi(argv[1]) == 98) {
        /* a deliberate hang: every rank waits for a message no one sends
         * (rank 0 with an Ibarrier open that the others never join) */
        int size, x;
        MPI_Request q;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (rank == 0)
            MPI_Ibarrier(MPI_COMM_WORLD, &q);
        MPI_Send(&rank, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (argc > 1 && atoi(argv[1]) == 99) {
        for (;;) MPI_Barrier(MPI_COMM_SELF); /* spins until killed */
    }
    MPI_Finalize();
    return 0;
}
