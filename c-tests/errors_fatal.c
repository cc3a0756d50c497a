/* oxmpi-test: ranks=1,2,4 expect=fail stderr="MPI_Send: destination rank"
 * Under the default handler, bad input ends the job with one clear line
 * naming the rank, the function and the reason. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Send(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
