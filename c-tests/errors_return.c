/* oxmpi-test: ranks=1,2,4
 * Bad input under MPI_ERRORS_RETURN gets the right error class, and the
 * job carries on. */
#include "common.h"

#define EXPECT(call, cls)                                                         \
    do {                                                                          \
        int rc_ = (call), c_ = -1;                                                \
        MPI_Error_class(rc_, &c_);                                                \
        CHECK(c_ == (cls), "%s returned class %d, expected %s (%d)", #call, c_, #cls, cls); \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, x = 1, y[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler now returns");

    EXPECT(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Recv(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Recv(&x, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    EXPECT(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(&x, 1, (MPI_Datatype)0x4c0004ff, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, 0, (MPI_Comm)0x44000077), MPI_ERR_COMM);
    EXPECT(MPI_Send(NULL, 4, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Send(MPI_IN_PLACE, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Recv(MPI_IN_PLACE, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_BUFFER);
    MPI_Request bogus = (MPI_Request)0x12345678;
    EXPECT(MPI_Wait(&bogus, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    MPI_Request stale = (MPI_Request)0xac00ffff;
    EXPECT(MPI_Wait(&stale, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    EXPECT(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Reduce(&x, y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    double d = 1, dr;
    EXPECT(MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(&x, y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(&x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    /* for one-sided accumulates only (MPI 4.0 §12.3.4) */
    EXPECT(MPI_Allreduce(&x, y, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce(&x, y, 1, MPI_INT, MPI_NO_OP, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(&x, y, 1, MPI_INT, MPI_REPLACE), MPI_ERR_OP);
    if (size > 1) {
        int root_or_not = rank == 0 ? MPI_SUCCESS : MPI_ERR_BUFFER;
        EXPECT(MPI_Reduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), root_or_not);
        if (rank != 0) /* the root's half of that reduce still needs partners */
            MPI_Reduce(&x, y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    }

    /* truncation: 4 ints into room for 2 */
    int big[4] = {1, 2, 3, 4}, small[2];
    MPI_Status st;
    MPI_Request r;
    MPI_Isend(big, 4, MPI_INT, rank, 3, MPI_COMM_WORLD, &r);
    EXPECT(MPI_Recv(small, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(small[0] == 1 && small[1] == 2, "truncated prefix %d %d", small[0], small[1]);
    /* truncation reported through Waitall as MPI_ERR_IN_STATUS */
    MPI_Request rs[2];
    MPI_Status sts[2];
    MPI_Irecv(small, 2, MPI_INT, rank, 4, MPI_COMM_WORLD, &rs[0]);
    MPI_Isend(big, 4, MPI_INT, rank, 4, MPI_COMM_WORLD, &rs[1]);
    EXPECT(MPI_Waitall(2, rs, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS, "statuses %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);

    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)7), MPI_ERR_ARG);
    char s[MPI_MAX_ERROR_STRING];
    int len;
    EXPECT(MPI_Error_string(-3, s, &len), MPI_ERR_ARG);

    /* after all that, communication still works */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Allreduce(&x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return finish();
}
