/* oxmpi-test: ranks=2,3,4 env=OXMPI_CHECK_COLLECTIVES=1 mpich=no
 * With OXMPI_CHECK_COLLECTIVES=1, ranks that disagree on a collective's
 * root, operator or operation get an error on every rank (MPI_ERR_ROOT,
 * MPI_ERR_OP, MPI_ERR_OTHER), and so do ranks passing counts of different
 * sizes where every rank's part must have one size (MPI_ERR_COUNT),
 * instead of a hang or wrong data, blocking or not, at any message size;
 * agreeing collectives afterwards still work, user-defined operators
 * whose handles differ between ranks (each rank made a different number
 * of them first, as ScaLAPACK's BLACS does) included. */
#include "common.h"

static void add(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

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
    /* counts of different sizes (the last rank passes half), where every
     * rank's part must have the same size: MPI_ERR_COUNT everywhere, at
     * sizes the point-to-point algorithms would pick differently by */
    int *all = calloc((size_t)size * BIG, sizeof(int));
    for (int n = 2; n <= BIG; n *= 64) {
        int mine = rank == size - 1 ? n / 2 : n;
        e = MPI_Bcast(buf, mine, MPI_CHAR, 0, MPI_COMM_WORLD);
        CHECK(class_of(e) == MPI_ERR_COUNT, "bcast of %d bytes, %d on rank %d: class %d", n, n / 2, size - 1,
              class_of(e));
        e = MPI_Allreduce(all, all + BIG, mine / 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(class_of(e) == MPI_ERR_COUNT, "allreduce of %d bytes, %d on rank %d: class %d", n, n / 2, size - 1,
              class_of(e));
        e = MPI_Gather(buf, mine, MPI_CHAR, all, mine, MPI_CHAR, 0, MPI_COMM_WORLD);
        CHECK(class_of(e) == MPI_ERR_COUNT, "gather of %d bytes, %d on rank %d: class %d", n, n / 2, size - 1,
              class_of(e));
        e = MPI_Allgather(buf, mine, MPI_CHAR, all, mine, MPI_CHAR, MPI_COMM_WORLD);
        CHECK(class_of(e) == MPI_ERR_COUNT, "allgather of %d bytes, %d on rank %d: class %d", n, n / 2, size - 1,
              class_of(e));
    }
    free(all);
    /* agreeing calls still work */
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS && y == size * (size + 1) / 2, "allreduce after the errors: %d, %d", e, y);
    /* the same user operator, under handles of their own: rank r made
     * and freed r operators first */
    for (int i = 0; i < rank; i++) {
        MPI_Op spare;
        MPI_Op_create(add, 1, &spare);
        MPI_Op_free(&spare);
    }
    MPI_Op mine;
    MPI_Op_create(add, 1, &mine);
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, mine, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS && y == size * (size + 1) / 2, "allreduce by a user operator: %d, %d", e, y);
    e = MPI_Reduce(&x, &y, 1, MPI_INT, mine, 0, MPI_COMM_WORLD);
    CHECK(e == MPI_SUCCESS && (rank || y == size * (size + 1) / 2), "reduce by a user operator: %d, %d", e, y);
    /* a user operator on one rank, a predefined one elsewhere */
    e = MPI_Allreduce(&x, &y, 1, MPI_INT, rank == 0 ? mine : MPI_SUM, MPI_COMM_WORLD);
    CHECK(class_of(e) == MPI_ERR_OP, "allreduce by a user operator on rank 0 only: class %d", class_of(e));
    MPI_Op_free(&mine);
    for (int i = 0; i < BIG; i++) buf[i] = rank == size - 1 ? (char)i : 0;
    e = MPI_Bcast(buf, BIG, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < BIG; i++) bad += buf[i] != (char)i;
    CHECK(e == MPI_SUCCESS && bad == 0, "long bcast after the errors: %d, %d wrong", e, bad);
    free(buf);
    return finish();
}
