/* oxmpi-test: ranks=2,3,4 mpich=no variants=BARRIER_CASE=1
 * Rank 0 calls MPI_Barrier on MPI_COMM_WORLD (the world's barrier goes
 * by arrival counts) where the others call another collective of the
 * same operation number through the shared-memory mailboxes: an
 * MPI_Allreduce (BARRIER_CASE=0, the default), or an MPI_Bcast from
 * rank 0 (1), whose readers publish nothing that rank 0 could see. With
 * MPI_ERRORS_RETURN every rank gets MPI_ERR_OTHER instead of a hang,
 * noticed from either side, and agreeing collectives afterwards still
 * work (point-to-point, the mailboxes given up). Over TCP (no
 * mailboxes) it checks nothing. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, cls;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *transport = getenv("OXMPI_TRANSPORT"), *c = getenv("BARRIER_CASE");
    if (transport && strcmp(transport, "tcp") == 0)
        return finish();
    int which = c ? atoi(c) : 0, x = rank + 1, y = 0, e;
    if (rank == 0)
        e = MPI_Barrier(MPI_COMM_WORLD);
    else if (which == 0)
        e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else
        e = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OTHER, "case %d: class %d, not MPI_ERR_OTHER", which, cls);
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "case %d: barrier after", which);
    x = rank + 1;
    CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "case %d: allreduce", which);
    CHECK(y == size * (size + 1) / 2, "case %d: allreduce after: %d", which, y);
    return finish();
}
