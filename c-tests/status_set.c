/* oxmpi-test: ranks=1,2
 * MPI_Status_set_elements(_x) and MPI_Status_set_cancelled (MPI 4.0
 * §13.3, what a generalized request's query function fills in): after
 * MPI_Status_set_elements(status, type, n), MPI_Get_elements gives n and
 * MPI_Get_count a compatible value (MPI_UNDEFINED when n basic elements
 * are not whole items), for predefined, pair and derived types; the
 * cancelled flag and the source, tag and error fields are left alone,
 * and set_cancelled leaves the count alone. Bad arguments (with
 * MPI_ERRORS_RETURN) are errors. The profiling switch MPI_Pcontrol
 * returns at once, and a process started by mpiexec has no parent
 * (MPI_Comm_get_parent gives MPI_COMM_NULL). (Debian's MPICH 4.0.2
 * sets a status to count items, not elements, so that MPI_Get_elements
 * of a pair or derived type returns another number than was set, and
 * crashes on MPI_STATUS_IGNORE.) */
#include "common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Status st;
    st.MPI_SOURCE = 3, st.MPI_TAG = 11, st.MPI_ERROR = MPI_ERR_PENDING;
    int n = -1, cancelled = -1;
    MPI_Count big = -1;

    CHECK(MPI_Status_set_elements(&st, MPI_INT, 10) == MPI_SUCCESS, "set_elements");
    MPI_Get_elements(&st, MPI_INT, &n);
    CHECK(n == 10, "elements %d", n);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 10, "count %d", n);
    MPI_Get_count(&st, MPI_SHORT, &n);
    CHECK(n == 20, "the bytes of 10 ints as shorts: %d", n);
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 11 && st.MPI_ERROR == MPI_ERR_PENDING, "other fields changed");

    /* a pair type: 5 elements are two pairs and a value */
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 5);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    CHECK(n == 5, "pair elements %d", n);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    CHECK(n == MPI_UNDEFINED, "5 elements are not whole pairs: %d", n);
    MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 4);
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    CHECK(n == 2, "4 elements are 2 pairs: %d", n);

    /* a derived type of 2 ints and a double: 4 elements are one item
     * and one int of the next */
    MPI_Datatype mixed, parts[2] = {MPI_INT, MPI_DOUBLE};
    int lens[2] = {2, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Type_create_struct(2, lens, disps, parts, &mixed);
    MPI_Type_commit(&mixed);
    MPI_Status_set_elements_x(&st, mixed, (MPI_Count)4);
    MPI_Get_elements_x(&st, mixed, &big);
    CHECK(big == 4, "derived elements %lld", (long long)big);
    MPI_Get_count(&st, mixed, &n);
    CHECK(n == MPI_UNDEFINED, "4 elements are not whole items: %d", n);
    MPI_Status_set_elements(&st, mixed, 6);
    MPI_Get_count(&st, mixed, &n);
    CHECK(n == 2, "6 elements are 2 items: %d", n);
    MPI_Type_free(&mixed);

    /* large counts */
    MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)3 << 31);
    MPI_Get_elements_x(&st, MPI_DOUBLE, &big);
    CHECK(big == (MPI_Count)3 << 31, "large elements %lld", (long long)big);
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK(n == MPI_UNDEFINED, "a count beyond int is MPI_UNDEFINED: %d", n);

    /* the cancelled flag and the count are independent */
    MPI_Status_set_elements(&st, MPI_CHAR, 7);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &cancelled);
    MPI_Get_elements(&st, MPI_CHAR, &n);
    CHECK(cancelled && n == 7, "cancelled %d, elements %d", cancelled, n);
    MPI_Status_set_elements(&st, MPI_CHAR, 9);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "set_elements cleared the cancelled flag");
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &cancelled);
    MPI_Get_elements(&st, MPI_CHAR, &n);
    CHECK(!cancelled && n == 9, "cancelled %d, elements %d", cancelled, n);

    /* MPI_Pcontrol: the library makes no use of it */
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS && MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(2, "x", 3) == MPI_SUCCESS,
          "pcontrol");
    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL, "a parent");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int e = MPI_Status_set_elements(&st, MPI_INT, -1);
    CHECK(class_of(e) == MPI_ERR_COUNT, "negative count: class %d", class_of(e));
    e = MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1);
    CHECK(class_of(e) == MPI_ERR_ARG, "MPI_STATUS_IGNORE: class %d", class_of(e));
    e = MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1);
    CHECK(class_of(e) == MPI_ERR_TYPE, "MPI_DATATYPE_NULL: class %d", class_of(e));
    e = MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1);
    CHECK(class_of(e) == MPI_ERR_ARG, "set_cancelled of MPI_STATUS_IGNORE: class %d", class_of(e));
    e = MPI_Comm_get_parent(NULL);
    CHECK(class_of(e) == MPI_ERR_ARG, "get_parent into NULL: class %d", class_of(e));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
