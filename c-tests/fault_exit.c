/* oxmpi-test: ranks=2,4 expect=fail stderr="rank 1 exited with code 3" exit=3
 * A rank that exits early with an error ends the job with its status. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        exit(3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
