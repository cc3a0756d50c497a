! oxmpi-test: ranks=1,2,4 expect=fail stderr="MPI_Abort(errorcode 7)|aborted the job with code 7" exit=7
! MPI_ABORT from Fortran 77: rank 0 aborts with code 7 while the others
! wait for a message that never comes; every rank ends, the job exits
! with 7, and the abort is said on stderr.
      PROGRAM FABORT
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, X
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      IF (RANK .EQ. 0) CALL MPI_ABORT(MPI_COMM_WORLD, 7, IERR)
      CALL MPI_RECV(X, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      CALL MPI_FINALIZE(IERR)
      END
