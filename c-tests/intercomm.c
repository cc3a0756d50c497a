/* oxmpi-test: ranks=2,3,4
 * Intercommunicators: made from two halves of MPI_COMM_WORLD, queried
 * (test_inter, remote size and group), used for point-to-point (ranks
 * name the remote group), duplicated, merged in both orders, freed. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int color = rank < size / 2 ? 0 : 1;
    MPI_Comm half, inter, inter2, merged;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    int remote_leader = color == 0 ? size / 2 : 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 99, &inter);
    int flag, lsize, rsize, lrank;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    int expect_local = color == 0 ? size / 2 : size - size / 2;
    CHECK(flag && lsize == expect_local && rsize == size - expect_local, "inter: flag %d local %d remote %d", flag, lsize, rsize);
    MPI_Group rg;
    int first;
    MPI_Comm_remote_group(inter, &rg);
    MPI_Group world_g;
    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    int zero = 0;
    MPI_Group_translate_ranks(rg, 1, &zero, world_g, &first);
    CHECK(first == remote_leader, "remote group starts at world rank %d", first);
    MPI_Group_free(&rg);
    MPI_Group_free(&world_g);

    /* point-to-point across: local rank i talks to remote rank i % rsize */
    int peer = lrank % rsize, out = rank, in = -1;
    if (lrank < rsize) {
        MPI_Status st;
        MPI_Request rq;
        MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &rq);
        MPI_Send(&out, 1, MPI_INT, peer, 5, inter);
        MPI_Wait(&rq, &st);
        CHECK(st.MPI_SOURCE < rsize, "source %d is a remote rank", st.MPI_SOURCE);
    } else {
        /* the larger group's extra ranks send to remote 0 and receive nothing */
        MPI_Send(&out, 1, MPI_INT, 0, 6, inter);
    }
    if (color == 0 && lrank == 0 && rsize > lsize) {
        for (int k = lsize; k < rsize; k++) {
            int x;
            MPI_Recv(&x, 1, MPI_INT, k, 6, inter, MPI_STATUS_IGNORE);
            CHECK(x == size / 2 + k, "extra rank %d sent %d", k, x);
        }
    }
    if (color == 1 && lrank == 0 && rsize > lsize) {
        for (int k = lsize; k < rsize; k++) {
            int x;
            MPI_Recv(&x, 1, MPI_INT, k, 6, inter, MPI_STATUS_IGNORE);
        }
    }

    MPI_Comm_dup(inter, &inter2);
    /* a nonblocking copy of the intercommunicator talks like the original */
    MPI_Comm inter3;
    MPI_Request ir;
    MPI_Comm_idup(inter, &inter3, &ir);
    MPI_Wait(&ir, MPI_STATUS_IGNORE);
    MPI_Comm_test_inter(inter3, &flag);
    CHECK(flag, "idup of an intercommunicator is one");
    if (lrank < rsize) {
        int x = rank, y = -1;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 8, &y, 1, MPI_INT, MPI_ANY_SOURCE, 8, inter3, MPI_STATUS_IGNORE);
        CHECK(y >= 0, "across the idup'ed intercommunicator");
    }
    MPI_Comm_free(&inter3);
    MPI_Comm_test_inter(inter2, &flag);
    CHECK(flag, "dup of an intercommunicator is one");

    /* merge: the high group goes last */
    MPI_Intercomm_merge(inter2, color == 0, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    int expect = color == 1 ? lrank : (size - size / 2) + lrank;
    CHECK(msize == size && mrank == expect, "merged rank %d, expected %d", mrank, expect);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == size * (size - 1) / 2, "allreduce on the merged communicator");
    MPI_Comm_free(&merged);

    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int rc = MPI_Exscan(&rank, &sum, 1, MPI_INT, MPI_SUM, inter), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "exscan is not defined on intercommunicators: class %d", cls);
    rc = MPI_Send(&out, 1, MPI_INT, rsize, 0, inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "remote rank out of range: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &rsize);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "remote size of an intracommunicator: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Comm_free(&inter2);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    return finish();
}
