/* oxmpi-test: ranks=2 expect=fail exit=7 stderr="MPI_Abort(errorcode 7) called; ending the job"
 * MPI_Abort from a user operator, inside the MPI_Allreduce that runs it
 * (the standard's way out of an error there, MPI 4.0 section 6.9.5),
 * ends the job with its error code; it used to wait for the lock its own
 * call held, for good. */
#include "common.h"

static void sum_or_abort(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++) {
        if (((int *)in)[i] < 0)
            MPI_Abort(MPI_COMM_WORLD, 7);
        ((int *)inout)[i] += ((int *)in)[i];
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    allreduce_by(sum_or_abort, -1);
    return finish();
}
