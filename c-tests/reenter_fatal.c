/* oxmpi-test: ranks=2 expect=fail stderr="MPI_Comm_rank: an MPI function was called from a callback that oxmpi runs inside another MPI call|sizes fine"
 * A user operator that calls MPI on a communicator (here MPI_Comm_rank,
 * inside the MPI_Allreduce that runs it) ends the job with one clear
 * line, whatever the error handler; it used to wait for the lock its own
 * call held, for good. Datatype queries (MPI_Type_size on the operator's
 * datatype) work there. */
#include "common.h"

static void sum_and_ask(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int r, sz = -1;
    MPI_Type_size(*t, &sz);
    if (sz == (int)sizeof(int))
        fprintf(stderr, "sizes fine\n");
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    allreduce_by(sum_and_ask, 1);
    return finish();
}
