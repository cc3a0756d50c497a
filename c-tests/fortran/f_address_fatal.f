! oxmpi-test: ranks=1,2 expect=fail exit=1 stderr="use MPI_GET_ADDRESS"
! MPI-1's MPI_ADDRESS of a variable beyond the reach of a default
! INTEGER (every address of a position-independent program on 64-bit
! Linux) is an error under the default handler: one line naming the
! fix, and the job ends.
      PROGRAM FADDRF
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, A1, IVAL
      CALL MPI_INIT(IERR)
      CALL MPI_ADDRESS(IVAL, A1, IERR)
      PRINT *, 'MPI_ADDRESS returned ', IERR, A1
      CALL MPI_FINALIZE(IERR)
      END
