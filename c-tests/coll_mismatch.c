/* oxmpi-test: ranks=2,3,4 env=OXMPI_CHECK_COLLECTIVES=1 mpich=no
 * With OXMPI_CHECK_COLLECTIVES=1, ranks that disagree on a collective's
 * root, operator or operation get an error on every rank (MPI_ERR_ROOT,
 * MPI_ERR_OP, MPI_ERR_OTHER) instead of a hang or wrong data, blocking or
 * not, at any message size; agreeing collectives afterwards still work. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, cls, e;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    enum { BIG = 1 << 20 };
    char *buf = calloc(BIG, 1);
    int x = rank + 1, y = 0;

    /* every rank names itself the root: small and long messages */
    for (int n = 1; n <= BIG; n *= 1024) {
        e = MPI_Bcast(buf, n, MPI_CHAR, rank, MPI_COMM_WORLD);
        MPI_Error_class(e, &cls);
        CHECK(cls == MPI_ERR_ROOT, "bcast of %d bytes with a root per rank: class %d", n, cls);
    }
    /* only the last rank disagrees, on a nonblocking reduce */
    MPI_Request r;
    e = MPI_Ireduce(&x, &y, 1, MPI_INT, MPI_SUM, rank == size - 1 ? 1 : 0, MPI_COMM_WORLD, &r);
    CHECK(e == MPI_SUCCESS, "ireduce starts: %d", e);
    e = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "ireduce with one rank's root different: class %d", cls);
    /* different operators */
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, rank == 0 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "allreduce with different operators: class %d", cls);
    /* different operations */
    if (rank == 0)
        e = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    else
        e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OTHER, "bcast on rank 0, allreduce elsewhere: class %d", cls);
    /* agreeing calls still work */
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS && y == size * (size + 1) / 2, "allreduce after the errors: %d, %d", e, y);
    for (int i = 0; i < BIG; i++) buf[i] = rank == size - 1 ? (char)i : 0;
    e = MPI_Bcast(buf, BIG, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < BIG; i++) bad += buf[i] != (char)i;
    CHECK(e == MPI_SUCCESS && bad == 0, "long bcast after the errors: %d, %d wrong", e, bad);
    free(buf);
    return finish();
}
