/* oxmpi-test: ranks=1,2,4 expect=fail stderr="MPI_Abort(errorcode 7)" exit=7
 * MPI_Abort ends every rank and the job exits with the given code. */
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
