/* mpio.h: MPI-IO lives in mpi.h in oxmpi; this file exists for programs that include it. */
#include <mpi.h>
