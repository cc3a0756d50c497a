/* oxmpi-test: ranks=1,2 mpich=no
 * MPI 4.1's MPI_Remove_error_class/code/string (beyond MPICH 4, so not
 * built with MPICH's mpicc): a code goes only after its string, a class
 * only after its codes and its string (MPI 4.1 §9.5 makes the other
 * orders erroneous: MPI_ERR_ARG), a string only if there is one, and a
 * removed code is no longer known. */
#include "common.h"

int main(int argc, char **argv)
{
    int cls, code, back, rc;
    MPI_Init(&argc, &argv);
    MPI_Add_error_class(&cls);
    MPI_Add_error_string(cls, "a class of its own");
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "transient");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Remove_error_class(cls);
    CHECK(class_of(rc) == MPI_ERR_ARG, "removing a class with codes gave %d", class_of(rc));
    rc = MPI_Remove_error_code(code);
    CHECK(class_of(rc) == MPI_ERR_ARG, "removing a code with a string gave %d", class_of(rc));
    rc = MPI_Remove_error_string(code);
    CHECK(rc == MPI_SUCCESS, "remove string: %d", rc);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, msg, &len);
    CHECK(len == 0, "string removed: '%s'", msg);
    rc = MPI_Remove_error_string(code);
    CHECK(class_of(rc) == MPI_ERR_ARG, "removing a string that is not there gave %d", class_of(rc));
    rc = MPI_Remove_error_code(code);
    CHECK(rc == MPI_SUCCESS, "remove code: %d", rc);
    rc = MPI_Remove_error_class(cls);
    CHECK(class_of(rc) == MPI_ERR_ARG, "removing a class with a string gave %d", class_of(rc));
    rc = MPI_Remove_error_string(cls);
    CHECK(rc == MPI_SUCCESS, "remove the class's string: %d", rc);
    rc = MPI_Remove_error_class(cls);
    CHECK(rc == MPI_SUCCESS, "removing the emptied class: %d", rc);
    rc = MPI_Error_class(code, &back);
    CHECK(class_of(rc) == MPI_ERR_ARG, "a removed code is no longer known (%d)", class_of(rc));
    rc = MPI_Remove_error_class(cls);
    CHECK(class_of(rc) == MPI_ERR_ARG, "a removed class is no longer known (%d)", class_of(rc));
    rc = MPI_Remove_error_code(MPI_ERR_RANK);
    CHECK(class_of(rc) == MPI_ERR_ARG, "predefined codes cannot be removed (%d)", class_of(rc));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
