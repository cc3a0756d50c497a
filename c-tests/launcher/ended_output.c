/* Used by tools/test_launcher.py: what the ranks of a job that a failing
 * rank ends had printed must reach mpiexec's output, a file included,
 * with no fflush of the program's. Every rank prints a line, rank 0 adds
 * a line without its newline, and once all have printed rank 0 ends the
 * job (argv[1]: "abort" by MPI_Abort, "segv" by dying of SIGSEGV) while
 * the others wait in a barrier. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d printed this\n", rank);
    if (rank == 0)
        printf("rank 0 left this line open");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (argc > 1 && !strcmp(argv[1], "segv"))
            raise(SIGSEGV);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
