! oxmpi-test: ranks=1,2 mpich=no
! What MPICH 4.0's Fortran interface lacks, hence no MPICH-built run:
! MPI 4.1's MPI_REMOVE_ERROR_STRING, _CODE and _CLASS (a class, a code
! and a string added, then removed in the order the standard asks:
! string, code, class; a class that still has a code stays, MPI_ERR_ARG,
! and a removed code has no class after), and MPI_AINT_ADD and
! MPI_AINT_DIFF, functions whose INTEGER(KIND=MPI_ADDRESS_KIND) type
! mpif.h must declare (MPICH 4.0's does not; Open MPI mended the same
! omission after open-mpi/ompi#3395).
      PROGRAM FNOTMPICH
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, ERRS, EC, CODE, L, K, RANK, NP, A(4)
      INTEGER(KIND=MPI_ADDRESS_KIND) A1, A3
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_ADD_ERROR_CLASS(EC, IERR)
      CALL MPI_ADD_ERROR_CODE(EC, CODE, IERR)
      CALL MPI_ADD_ERROR_STRING(CODE, 'gone soon', IERR)
      CALL MPI_ERROR_STRING(CODE, ESTR, L, IERR)
      IF (ESTR(1:L) .NE. 'gone soon') ERRS = ERRS + 1
!     the class still has a code: it stays
      CALL MPI_REMOVE_ERROR_CLASS(EC, IERR)
      CALL MPI_ERROR_CLASS(IERR, K, L)
      IF (K .NE. MPI_ERR_ARG) THEN
         ERRS = ERRS + 1
         PRINT *, 'removing a class with a code gave ', K
      END IF
      CALL MPI_REMOVE_ERROR_STRING(CODE, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      CALL MPI_REMOVE_ERROR_CODE(CODE, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      CALL MPI_REMOVE_ERROR_CLASS(EC, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
!     the code is gone: MPI_ERROR_CLASS refuses it
      CALL MPI_ERROR_CLASS(CODE, K, IERR)
      IF (IERR .EQ. MPI_SUCCESS) THEN
         ERRS = ERRS + 1
         PRINT *, 'a removed code still has class ', K
      END IF
!     address arithmetic
      CALL MPI_GET_ADDRESS(A(1), A1, IERR)
      CALL MPI_GET_ADDRESS(A(3), A3, IERR)
      IF (MPI_AINT_DIFF(A3, A1) .NE. 8) THEN
         ERRS = ERRS + 1
         PRINT *, 'aint_diff ', MPI_AINT_DIFF(A3, A1)
      END IF
      IF (MPI_AINT_ADD(A1, 8_MPI_ADDRESS_KIND) .NE. A3) THEN
         ERRS = ERRS + 1
         PRINT *, 'aint_add'
      END IF
      INCLUDE 'finish.inc'
      END
