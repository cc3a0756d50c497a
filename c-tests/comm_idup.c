/* oxmpi-test: ranks=1,2,3,4
 * MPI_Comm_idup never waits for the other members: a rank may start it,
 * then send the message its peer needs before the peer starts its own.
 * The copies work once their requests complete (by any completion call),
 * several may be in flight at once, mixed with blocking MPI_Comm_dup,
 * their traffic never mixes, and freed ids are reused.
 * MPI_Comm_idup_with_info gives the copy the info's hints. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c1, c2, c3, c4, d;
    MPI_Request r[3];
    int token = 42;
    if (rank == 0) {
        MPI_Comm_idup(MPI_COMM_WORLD, &c1, &r[0]);
        /* the others wait for this before they start their idup */
        for (int k = 1; k < size; k++) MPI_Send(&token, 1, MPI_INT, k, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_idup(MPI_COMM_WORLD, &c1, &r[0]);
    }
    MPI_Comm_idup(MPI_COMM_WORLD, &c2, &r[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &d); /* a blocking agreement while two are in flight */
    MPI_Comm_idup(MPI_COMM_SELF, &c3, &r[2]);
    int flag = 0;
    while (!flag) MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE);
    MPI_Request r4;
    MPI_Comm_idup(c1, &c4, &r4);
    MPI_Wait(&r4, MPI_STATUS_IGNORE);
    int s1, x = 1, y = 0;
    MPI_Comm_size(c4, &s1);
    CHECK(s1 == size, "size %d", s1);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c4);
    CHECK(y == size, "allreduce on a copy of a copy: %d", y);
    /* the same tag on the world, a blocking dup and three copies */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm cs[5] = {MPI_COMM_WORLD, c1, c2, c4, d};
    int got[5], val[5];
    MPI_Request q[5];
    for (int k = 0; k < 5; k++) MPI_Irecv(&got[k], 1, MPI_INT, left, 3, cs[k], &q[k]);
    for (int k = 4; k >= 0; k--) {
        val[k] = rank + 100 * k;
        MPI_Send(&val[k], 1, MPI_INT, right, 3, cs[k]);
    }
    MPI_Waitall(5, q, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 5; k++) CHECK(got[k] == left + 100 * k, "communicator %d got %d", k, got[k]);
    int result;
    MPI_Comm_compare(c1, c2, &result);
    CHECK(result == MPI_CONGRUENT, "congruent copies");
    MPI_Comm_free(&c4);
    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
    MPI_Comm_free(&c3);
    MPI_Comm_free(&d);
    /* made and freed many times, two in flight at a time */
    for (int k = 0; k < 500; k++) {
        MPI_Request rq[2];
        MPI_Comm_idup(MPI_COMM_WORLD, &c1, &rq[0]);
        MPI_Comm_idup(MPI_COMM_WORLD, &c2, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Comm_compare(c1, c2, &result);
        MPI_Barrier(c2);
        MPI_Comm_free(&c1);
        MPI_Comm_free(&c2);
    }
    /* copies of two communicators started in opposite orders on
     * alternate ranks: no agreement waits for another */
    MPI_Comm a, b, ca, cb;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    for (int k = 0; k < 200; k++) {
        MPI_Request rq[2];
        if (rank % 2) {
            MPI_Comm_idup(b, &cb, &rq[1]);
            MPI_Comm_idup(a, &ca, &rq[0]);
        } else {
            MPI_Comm_idup(a, &ca, &rq[0]);
            MPI_Comm_idup(b, &cb, &rq[1]);
        }
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        int va = rank, vb = rank + 1, ga = -1, gb = -1;
        MPI_Request q2[2];
        MPI_Irecv(&ga, 1, MPI_INT, left, 9, ca, &q2[0]);
        MPI_Irecv(&gb, 1, MPI_INT, left, 9, cb, &q2[1]);
        MPI_Send(&vb, 1, MPI_INT, right, 9, cb);
        MPI_Send(&va, 1, MPI_INT, right, 9, ca);
        MPI_Waitall(2, q2, MPI_STATUSES_IGNORE);
        CHECK(ga == left && gb == left + 1, "round %d: copies mixed (%d, %d)", k, ga, gb);
        MPI_Comm_free(&ca);
        MPI_Comm_free(&cb);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);

    /* MPI_Comm_idup_with_info: the copy's hints are the info's, not the
     * parent's; MPI_Comm_idup keeps the parent's */
    MPI_Info hint, used;
    MPI_Info_create(&hint);
    MPI_Info_set(hint, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, hint, &a);
    MPI_Info_set(hint, "mpi_assert_no_any_source", "true");
    MPI_Request copies[2];
    CHECK(MPI_Comm_idup_with_info(a, hint, &ca, &copies[0]) == MPI_SUCCESS, "idup_with_info");
    MPI_Comm_idup(a, &cb, &copies[1]);
    MPI_Info_free(&hint);
    MPI_Waitall(2, copies, MPI_STATUSES_IGNORE);
    char value[MPI_MAX_INFO_VAL + 1];
    int has = 0;
    MPI_Comm_get_info(ca, &used);
    MPI_Info_get(used, "mpi_assert_no_any_source", MPI_MAX_INFO_VAL, value, &has);
    CHECK(has && strcmp(value, "true") == 0, "idup_with_info's hint missing");
    MPI_Info_free(&used);
    MPI_Comm_get_info(cb, &used);
    MPI_Info_get(used, "mpi_assert_no_any_source", MPI_MAX_INFO_VAL, value, &has);
    CHECK(!has, "idup took a hint its parent did not have");
    MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, value, &has);
    CHECK(has, "idup lost its parent's hint");
    MPI_Info_free(&used);
    int mine = rank, theirs = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, right, 1, &theirs, 1, MPI_INT, left, 1, ca, MPI_STATUS_IGNORE);
    CHECK(theirs == left, "on the idup_with_info copy: %d", theirs);
    MPI_Comm_free(&ca);
    MPI_Comm_free(&cb);
    MPI_Comm_free(&a);
    return finish();
}
