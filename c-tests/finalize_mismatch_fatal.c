/* oxmpi-test: ranks=2,4 expect=fail stderr="rank 1: MPI_Barrier: world rank 0 called MPI_Finalize without taking part in this collective" mpich=no tcp=no
 * Under the default error handler, a rank that waits in a collective for
 * a rank that called MPI_Finalize instead (here rank 1 calls one
 * MPI_Barrier more than the others) ends the job with one line naming
 * itself, the function and the rank that went on, where MPICH and Open
 * MPI hang. (On one host only: over TCP it hangs as they do.) */
#include "common.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
