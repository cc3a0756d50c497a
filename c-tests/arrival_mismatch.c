/* oxmpi-test: ranks=2,3,4 mpich=no variants=MISMATCH_CASE=1;MISMATCH_CASE=2;MISMATCH_CASE=3;MISMATCH_CASE=4;MISMATCH_CASE=5;MISMATCH_CASE=6;MISMATCH_CASE=7;MISMATCH_CASE=8;MISMATCH_CASE=9;MISMATCH_CASE=10;MISMATCH_CASE=11;MISMATCH_CASE=12
 * Rank 0 calls one collective on MPI_COMM_WORLD where the others call
 * another of the same operation number. The world's barrier and its
 * short allreduce, allgather and alltoall go on the ranks' arrival
 * lines, the rest through the shared-memory mailboxes:
 *   0 (the default): rank 0 MPI_Barrier, the others MPI_Allreduce
 *     (both on the lines: the kinds differ);
 *   1: rank 0 MPI_Barrier, the others MPI_Bcast from rank 0, whose
 *     readers publish nothing that rank 0 could see;
 *   2: rank 0 MPI_Allreduce, the others MPI_Allgather of one int (both
 *     on the lines);
 *   3: rank 0 MPI_Alltoall, the others MPI_Allreduce of one int (both
 *     on the lines);
 *   4: rank 0 MPI_Allreduce of one int on the world in reverse order
 *     (a split of it), the others on MPI_COMM_WORLD (both on the lines:
 *     the communicators differ; through the mailboxes the ranks would
 *     wait for each other for good). The two communicators' collectives
 *     are then a call apart between rank 0 and the others, so that no
 *     collective of either can follow: the verdict goes by messages;
 *   5: rank 0 MPI_Alltoallv of one int a rank, the others MPI_Alltoall of
 *     one int (both on the lines);
 *   6: rank 0 MPI_Alltoallv of 16 ints a rank (its part too long for its
 *     line: an empty one there, its blocks in its mailboxes), the others
 *     MPI_Allreduce of one int (on the lines). Between two ranks an
 *     Alltoallv whose blocks do not fit goes to the mailboxes with no
 *     line, and a mailbox publication does not say its collective: there
 *     the two see only parts of different sizes, MPI_ERR_COUNT and
 *     MPI_ERR_TRUNCATE, as for one collective of two sizes (the later one
 *     to look may see only the first one's give-up: MPI_ERR_OTHER);
 *   7: rank 0 MPI_Ibarrier (on the lines), the others MPI_Iallreduce of
 *     one int (as messages), each then MPI_Wait: rank 0 sees their
 *     messages, and they see it give the operation up;
 *   8: rank 0 MPI_Iallreduce of one int (on the lines), the others of
 *     16 (too long for a line: as messages): rank 0 gets
 *     MPI_ERR_TRUNCATE (their parts are longer), they MPI_ERR_OTHER (it
 *     gave the operation up);
 *   9: rank 0 MPI_Barrier, the others MPI_Ibarrier and MPI_Wait (each on
 *     the lines, but blocking and nonblocking ones each on lines of their
 *     own: each side finds the other's part on its other lines);
 *  10, 11: cases 7 and 9 on a duplicate of MPI_COMM_WORLD, whose
 *     nonblocking collectives have arrival lines of their own too;
 *  12: six persistent MPI_Allreduce_init of one int on MPI_COMM_WORLD
 *     (every kept set of lines given out), then rank 0 makes a seventh,
 *     whose making agrees on the lines of a freed one, on the blocking
 *     lines, where the others call MPI_Barrier.
 * (A collective whose other ranks need nothing of rank 0, as a Gather to
 * it, ends for them before rank 0 fails: they are a collective ahead of
 * it from then on, and the next ones fail or hang, as in any MPI.)
 * With MPI_ERRORS_RETURN every rank gets MPI_ERR_OTHER instead of a hang,
 * noticed from either side, and agreeing collectives afterwards still
 * work (point-to-point, the mailboxes and lines given up). Over TCP (no
 * mailboxes) it checks nothing. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, cls;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *transport = getenv("OXMPI_TRANSPORT"), *c = getenv("MISMATCH_CASE");
    if (transport && strcmp(transport, "tcp") == 0)
        return finish();
    int which = c ? atoi(c) : 0, x = rank + 1, y = 0, e = MPI_SUCCESS;
    int *all = calloc(size, sizeof(int)), *xs = calloc(size, sizeof(int));
    MPI_Comm rev, dup;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    /* cases 10 and 11 are 7 and 9 on the duplicate */
    MPI_Comm on = which >= 10 ? dup : MPI_COMM_WORLD;
    which = which == 10 ? 7 : which == 11 ? 9 : which;
    switch (which) {
    case 0:
        e = rank == 0 ? MPI_Barrier(MPI_COMM_WORLD) : MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 1: e = rank == 0 ? MPI_Barrier(MPI_COMM_WORLD) : MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD); break;
    case 2:
        e = rank == 0 ? MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                      : MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        break;
    case 3:
        e = rank == 0 ? MPI_Alltoall(xs, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD)
                      : MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 4: e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, rank == 0 ? rev : MPI_COMM_WORLD); break;
    case 5:
    case 6: {
        int k = which == 5 ? 1 : 16, *vs = calloc((size_t)size * k, sizeof(int)), *vr = calloc((size_t)size * k, sizeof(int));
        int *counts = calloc(size, sizeof(int)), *displs = calloc(size, sizeof(int));
        for (int r = 0; r < size; r++) counts[r] = k, displs[r] = r * k;
        if (rank == 0)
            e = MPI_Alltoallv(vs, counts, displs, MPI_INT, vr, counts, displs, MPI_INT, MPI_COMM_WORLD);
        else if (which == 5)
            e = MPI_Alltoall(xs, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        else
            e = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        free(vs), free(vr), free(counts), free(displs);
        break;
    }
    case 7:
    case 8: {
        MPI_Request q;
        int v[16] = {0}, w[16];
        if (rank == 0)
            e = which == 7 ? MPI_Ibarrier(on, &q) : MPI_Iallreduce(v, w, 1, MPI_INT, MPI_SUM, on, &q);
        else
            e = MPI_Iallreduce(v, w, which == 7 ? 1 : 16, MPI_INT, MPI_SUM, on, &q);
        CHECK(e == MPI_SUCCESS, "case %d: start: %d", which, e);
        e = MPI_Wait(&q, MPI_STATUS_IGNORE);
        break;
    }
    case 12: {
        MPI_Request q[7];
        for (int k = 0; k < 6; k++)
            CHECK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[k]) == MPI_SUCCESS,
                  "case 12: init %d", k);
        e = rank == 0 ? MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[6])
                      : MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < 6; k++) MPI_Request_free(&q[k]);
        break;
    }
    case 9: {
        MPI_Request q;
        if (rank == 0) {
            e = MPI_Barrier(on);
        } else {
            CHECK(MPI_Ibarrier(on, &q) == MPI_SUCCESS, "case 9: start");
            e = MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        break;
    }
    }
    MPI_Error_class(e, &cls);
    if (which == 8 && rank == 0)
        CHECK(cls == MPI_ERR_TRUNCATE, "case 8: class %d, not MPI_ERR_TRUNCATE", cls);
    else if (which == 6 && size == 2) {
        /* The first to notice sees parts of two sizes; the other may see
         * only that one gave the operation up (MPI_ERR_OTHER), if it looks
         * after the give-up. At least one must have seen the sizes. */
        int other = MPI_SUCCESS, sized = cls == MPI_ERR_COUNT || cls == MPI_ERR_TRUNCATE;
        CHECK(sized || cls == MPI_ERR_OTHER, "case 6: class %d, not MPI_ERR_COUNT, TRUNCATE or OTHER", cls);
        MPI_Sendrecv(&cls, 1, MPI_INT, 1 - rank, 6, &other, 1, MPI_INT, 1 - rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(sized || other == MPI_ERR_COUNT || other == MPI_ERR_TRUNCATE,
              "case 6: neither rank saw the sizes differ (classes %d and %d)", cls, other);
    } else
        CHECK(cls == MPI_ERR_OTHER, "case %d: class %d, not MPI_ERR_OTHER", which, cls);
    if (which == 4) {
        int total = test_errors;
        for (int r = 1; r < size; r++) {
            int theirs = 0;
            if (rank == 0)
                MPI_Recv(&theirs, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (rank == r)
                MPI_Send(&test_errors, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            total += theirs;
        }
        if (rank == 0)
            printf(total == 0 ? "No Errors\n" : "Found %d errors\n", total);
        MPI_Finalize();
        return total != 0;
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "case %d: barrier after", which);
    x = rank + 1;
    CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "case %d: allreduce", which);
    CHECK(y == size * (size + 1) / 2, "case %d: allreduce after: %d", which, y);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);
    free(all), free(xs);
    return finish();
}
