/* oxmpi-test: ranks=2 variants=OXMPI_CHECK_TYPES=1;OXMPI_CHECK_TYPES=1,OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY=0
 * With OXMPI_CHECK_TYPES=1 a receive whose type signature differs from
 * the sender's fails with MPI_ERR_TYPE naming both types; matching
 * signatures pass however the types were built (10 x MPI_INT received as
 * 2 x contiguous(5, MPI_INT)), and MPI_PACKED matches anything. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, rc, cls;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *on = getenv("OXMPI_CHECK_TYPES");
    int checking = on && strcmp(on, "1") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ibuf[100000];
    double dbuf[50000];
    MPI_Datatype five;
    MPI_Type_contiguous(5, MPI_INT, &five);
    MPI_Type_commit(&five);
    int sizes[2] = {10, 100000};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k];
        if (rank == 0) {
            for (int i = 0; i < n; i++) ibuf[i] = i;
            MPI_Send(ibuf, n, MPI_INT, 1, 1, MPI_COMM_WORLD);
            MPI_Send(ibuf, n, MPI_INT, 1, 2, MPI_COMM_WORLD);
            MPI_Send(ibuf, n, MPI_INT, 1, 3, MPI_COMM_WORLD);
        } else if (rank == 1) {
            rc = MPI_Recv(ibuf, n / 5, five, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && ibuf[n - 1] == n - 1, "ints received as contiguous(5, int): rc %d", rc);
            rc = MPI_Recv(dbuf, n / 2, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Error_class(rc, &cls);
            if (checking) {
                CHECK(cls == MPI_ERR_TYPE, "%d ints received as doubles: class %d, expected MPI_ERR_TYPE", n, cls);
            } else {
                CHECK(cls == MPI_SUCCESS, "without checking the mismatch passes unseen, class %d", cls);
            }
            rc = MPI_Recv(dbuf, n * 4, MPI_PACKED, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS, "MPI_PACKED receives anything: rc %d", rc);
        }
    }
    MPI_Type_free(&five);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
