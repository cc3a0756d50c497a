/* oxmpi-test: ranks=1,2,4 expect=fail stderr="MPI_Abort(errorcode 7)|aborted the job with code 7: MPI_Abort(7) on rank 0" exit=7
 * MPI_Abort ends every rank and the job exits with the given code; the
 * rank says so on stderr, and so does mpiexec, with the rank's message
 * as written (spaces and all). */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
