/* oxmpi-test: ranks=2 expect=fail stderr="MPI_Recv: message from rank 0"
 * A truncated receive under the default handler ends the job. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, big[8] = {0}, small[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(big, 8, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(small, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
