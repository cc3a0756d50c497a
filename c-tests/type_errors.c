/* oxmpi-test: ranks=1,2
 * Datatypes misused in communication get the right error class:
 * uncommitted and freed types, overlapping receive layouts, negative
 * counts, and reductions a type cannot take. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, rc, cls, buf[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#define EXPECT(call, c) do { rc = (call); MPI_Error_class(rc, &cls); CHECK(cls == (c), "%s gave class %d, expected %d", #call, cls, c); } while (0)
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    EXPECT(MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Recv(buf, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    EXPECT(MPI_Bcast(buf, 1, t, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Type_commit(&t);
    MPI_Datatype copy = t;
    MPI_Type_free(&t);
    EXPECT(MPI_Send(buf, 1, copy, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Type_commit(&copy), MPI_ERR_TYPE);
    EXPECT(MPI_Send(buf, -2, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);

    /* overlapping blocks: may send from, may not receive into */
    int bl[2] = {2, 2}, d[2] = {0, 1};
    MPI_Datatype ov;
    MPI_Type_indexed(2, bl, d, MPI_INT, &ov);
    MPI_Type_commit(&ov);
    MPI_Request r;
    rc = MPI_Isend(buf, 1, ov, rank, 1, MPI_COMM_WORLD, &r);
    CHECK(rc == MPI_SUCCESS, "sending from an overlapping type is allowed");
    EXPECT(MPI_Recv(buf, 1, ov, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    MPI_Recv(buf, 4, MPI_INT, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Type_free(&ov);

    MPI_Datatype cc;
    MPI_Type_contiguous(3, MPI_CHAR, &cc);
    MPI_Type_commit(&cc);
    EXPECT(MPI_Allreduce(buf, buf + 8, 1, cc, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Type_free(&cc);

    int pos = 0;
    char small[4];
    EXPECT(MPI_Pack(buf, 2, MPI_INT, small, sizeof small, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Pack_external("native", buf, 1, MPI_INT, small, 4, (MPI_Aint *)&pos), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
