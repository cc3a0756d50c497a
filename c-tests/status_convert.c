/* oxmpi-test: ranks=1,2
 * MPI_Status_c2f / MPI_Status_f2c (MPI 4.0 section 19.3.5): a received
 * status survives the round trip field by field (count included);
 * MPI_STATUS_IGNORE and MPI_F_STATUS_IGNORE are refused with MPI_ERR_ARG;
 * the handle conversions are the identity on MPICH's integer handles. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, cls;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int data[7] = {1, 2, 3, 4, 5, 6, 7}, got[7];
    MPI_Status st, back;
    MPI_Sendrecv(data, 7, MPI_INT, (rank + 1) % size, 42, got, 7, MPI_INT, (rank + size - 1) % size, 42,
                 MPI_COMM_WORLD, &st);
    MPI_Fint f[MPI_F_STATUS_SIZE];
    CHECK(MPI_Status_c2f(&st, f) == MPI_SUCCESS, "c2f failed");
    CHECK(f[MPI_F_SOURCE] == (rank + size - 1) % size, "Fortran source %d", f[MPI_F_SOURCE]);
    CHECK(f[MPI_F_TAG] == 42, "Fortran tag %d", f[MPI_F_TAG]);
    memset(&back, 0xff, sizeof back);
    CHECK(MPI_Status_f2c(f, &back) == MPI_SUCCESS, "f2c failed");
    int count = -1;
    MPI_Get_count(&back, MPI_INT, &count);
    CHECK(count == 7, "count after the round trip %d", count);
    CHECK(back.MPI_SOURCE == st.MPI_SOURCE && back.MPI_TAG == st.MPI_TAG && back.MPI_ERROR == st.MPI_ERROR,
          "fields changed in the round trip");

    int e = MPI_Status_c2f(MPI_STATUS_IGNORE, f);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "c2f of MPI_STATUS_IGNORE gave class %d", cls);
    e = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "f2c of MPI_F_STATUS_IGNORE gave class %d", cls);

    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "communicator round trip");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "datatype round trip");
    return finish();
}
