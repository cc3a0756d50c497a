/* oxmpi-test: ranks=2,4 expect=fail stderr="rank 1 exited without calling MPI_Finalize"
 * A rank that returns 0 without MPI_Finalize while others wait for it
 * ends the job instead of leaving them hanging. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        return 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
