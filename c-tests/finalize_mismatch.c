/* oxmpi-test: ranks=2,3,4 mpich=no tcp=no variants=MISMATCH_CASE=0;MISMATCH_CASE=1;MISMATCH_CASE=2;MISMATCH_CASE=3;MISMATCH_CASE=4;MISMATCH_CASE=5;MISMATCH_CASE=6;MISMATCH_CASE=7;MISMATCH_CASE=0,OXMPI_SHM_COLL_MAX=0,OXMPI_SHM_COLL_LONG_MAX=0;MISMATCH_CASE=1,OXMPI_SHM_COLL_MAX=0,OXMPI_SHM_COLL_LONG_MAX=0;MISMATCH_CASE=2,OXMPI_SHM_COLL_MAX=0,OXMPI_SHM_COLL_LONG_MAX=0;MISMATCH_CASE=4,OXMPI_SHM_COLL_MAX=0,OXMPI_SHM_COLL_LONG_MAX=0;MISMATCH_CASE=6,OXMPI_SHM_COLL_MAX=0,OXMPI_SHM_COLL_LONG_MAX=0
 * Some ranks call MPI_Finalize while others still wait for them in a
 * collective (an erroneous program: a process completes all its
 * communication before MPI_Finalize). MPICH and Open MPI hang there; on
 * one host oxmpi's waiting ranks fail with MPI_ERR_OTHER, saying which
 * rank called MPI_Finalize, and then finalize too:
 *   0 (the default): rank 1 calls one MPI_Barrier more than the others
 *     (on the arrival lines);
 *   1: rank 0 calls one MPI_Barrier less than the others, which wait for
 *     it;
 *   2: rank 1 calls one MPI_Allreduce of 256 doubles more (its part goes
 *     through the mailboxes, and it waits for rank 0's);
 *   3: rank 0 broadcasts 8 bytes on and on, the others having gone to
 *     MPI_Finalize: its mailbox's slots fill, and it waits for readers
 *     that are gone;
 *   4: rank 1 calls one MPI_Ibarrier more, and MPI_Wait;
 *   5: on a communicator of ranks 0 and 1 only (a split: the mailboxes,
 *     not the world's lines), rank 1 calls one MPI_Bcast of 256 doubles
 *     from rank 0 more;
 *   6: rank 1 calls one MPI_Allreduce of 1 MiB more (as point-to-point
 *     messages where each rank has a core; through the mailboxes, in
 *     pieces, where ranks share cores);
 *   7: rank 1 calls one MPI_Neighbor_allgather more on a ring (a periodic
 *     Cartesian communicator: always as messages), whose neighbours
 *     include rank 0.
 * Cases 0, 1, 2, 4 and 6 run again with every collective as messages
 * (OXMPI_SHM_COLL_MAX=0, OXMPI_SHM_COLL_LONG_MAX=0). (Case 3 as messages
 * is no error: the root's sends go eagerly, and the others take them
 * into their queues of unexpected messages as they finalize.)
 * Each rank's exit code says whether its own checks held (the ranks do
 * not meet again to add them up). (On one host only: over TCP it hangs,
 * as in MPICH.) */
#include "common.h"

/* `e`, from a collective that waited for a rank in MPI_Finalize, is
 * MPI_ERR_OTHER (the reason, which names that rank, goes with the default
 * handler's line: finalize_mismatch_fatal.c) */
static void check_finalized(int which, int e)
{
    int cls;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OTHER, "case %d: class %d, not MPI_ERR_OTHER", which, cls);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *c = getenv("MISMATCH_CASE");
    int which = c ? atoi(c) : 0;
    double xs[256], ys[256];
    for (int i = 0; i < 256; i++) xs[i] = rank + i;
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
    /* every rank's collectives agree up to here */
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "case %d: first barrier", which);
    switch (which) {
    case 0:
        if (rank == 1)
            check_finalized(which, MPI_Barrier(MPI_COMM_WORLD));
        break;
    case 1:
        if (rank != 0)
            check_finalized(which, MPI_Barrier(MPI_COMM_WORLD));
        break;
    case 2:
        if (rank == 1)
            check_finalized(which, MPI_Allreduce(xs, ys, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        break;
    case 3:
        if (rank == 0) {
            int e = MPI_SUCCESS, k = 0;
            for (; k < 100000 && e == MPI_SUCCESS; k++) e = MPI_Bcast(xs, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            CHECK(k > 1, "case 3: the first broadcast failed (the root needs no reader to publish it)");
            check_finalized(which, e);
        }
        break;
    case 4:
        if (rank == 1) {
            MPI_Request q;
            CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &q) == MPI_SUCCESS, "case 4: start");
            check_finalized(which, MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        break;
    case 5:
        if (rank == 1)
            check_finalized(which, MPI_Bcast(xs, 256, MPI_DOUBLE, 0, pair));
        break;
    }
    if (which == 6 && rank == 1) {
        double *big = calloc(1 << 17, sizeof(double)), *sum = calloc(1 << 17, sizeof(double));
        check_finalized(which, MPI_Allreduce(big, sum, 1 << 17, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        free(big), free(sum);
    }
    if (which == 7) {
        int size, periodic = 1, got[2];
        MPI_Comm ring;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
        MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
        if (rank == 1)
            check_finalized(which, MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, ring));
        MPI_Comm_free(&ring);
    }
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Finalize();
    if (test_errors == 0 && rank == 0)
        printf("No Errors\n");
    return test_errors != 0;
}
