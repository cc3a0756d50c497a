/* oxmpi-test: ranks=2 env=OXMPI_CHECK_COLLECTIVES=1 expect=fail stderr="MPI_Bcast: the ranks disagree on the root of MPI_Bcast" mpich=no
 * Under the default error handler a root disagreement found by
 * OXMPI_CHECK_COLLECTIVES=1 ends the job with one line naming the rank,
 * the function and the reason. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(&x, 1, MPI_INT, rank, MPI_COMM_WORLD);
    return finish();
}
