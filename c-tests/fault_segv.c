/* oxmpi-test: ranks=2,4 expect=fail stderr="rank 1 was killed by signal 11" exit=139
 * A rank that crashes ends the job: the others, blocked in a receive,
 * are killed, and mpiexec says which rank died and how. */
#include <mpi.h>
#include <signal.h>

int main(int argc, char **argv)
{
    int rank, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        raise(SIGSEGV);
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
