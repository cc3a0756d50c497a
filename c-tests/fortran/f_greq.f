! oxmpi-test: ranks=1,2
! Generalized requests from Fortran 77: MPI_GREQUEST_START with Fortran
! query, free and cancel procedures, which get EXTRA_STATE (the
! program's own variable) by reference and a Fortran status; the status
! the query procedure fills is the wait's; MPI_CANCEL calls the cancel
! procedure with a LOGICAL saying whether the request is complete.
      SUBROUTINE QFN(EXTRA, STATUS, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      INTEGER STATUS(MPI_STATUS_SIZE), IERR
      STATUS(MPI_SOURCE) = 5
      STATUS(MPI_TAG) = 42
      CALL MPI_STATUS_SET_ELEMENTS(STATUS, MPI_INTEGER, 3, IERR)
      EXTRA = EXTRA + 10
      IERR = MPI_SUCCESS
      END
      SUBROUTINE FFN(EXTRA, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      INTEGER IERR
      EXTRA = EXTRA + 100
      IERR = MPI_SUCCESS
      END
      SUBROUTINE CFN(EXTRA, COMPLETE, IERR)
      INCLUDE 'mpif.h'
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA
      LOGICAL COMPLETE
      INTEGER IERR
      IF (COMPLETE) EXTRA = EXTRA + 1000
      IERR = MPI_SUCCESS
      END
      PROGRAM FGREQ
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      EXTERNAL QFN, FFN, CFN
      INTEGER IERR, RANK, ERRS, REQ, CNT
      INTEGER STATUS(MPI_STATUS_SIZE)
      LOGICAL FLAG
      INTEGER(KIND=MPI_ADDRESS_KIND) STATE
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      STATE = 0
      CALL MPI_GREQUEST_START(QFN, FFN, CFN, STATE, REQ, IERR)
      CALL MPI_TEST(REQ, FLAG, STATUS, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_GREQUEST_COMPLETE(REQ, IERR)
      CALL MPI_CANCEL(REQ, IERR)
      CALL MPI_WAIT(REQ, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      IF (STATUS(MPI_SOURCE) .NE. 5 .OR. STATUS(MPI_TAG) .NE. 42
     &     .OR. CNT .NE. 3) THEN
         ERRS = ERRS + 1
         PRINT *, 'status ', STATUS(MPI_SOURCE), STATUS(MPI_TAG), CNT
      END IF
!     cancel (complete), query, free: each once, on the program's STATE
      IF (STATE .NE. 1110 .OR. REQ .NE. MPI_REQUEST_NULL) THEN
         ERRS = ERRS + 1
         PRINT *, 'extra state ', STATE
      END IF
      INCLUDE 'finish.inc'
      END
