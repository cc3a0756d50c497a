/* oxmpi-test: ranks=2 env=OXMPI_CHECK_TYPES=1 expect=fail stderr="type signature mismatch: rank 0 sent MPI_INT but this receive's datatype is MPI_FLOAT"
 * Under the default handler a type mismatch ends the job with one line
 * naming both types. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, x[4] = {1, 2, 3, 4};
    float f[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        MPI_Send(x, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(f, 4, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
