! oxmpi-test: ranks=1,2
! Bad arguments from Fortran 77 under MPI_ERRORS_RETURN: each call
! returns its error class and nothing crashes. Negative counts of
! requests (MPI_WAITALL, _TESTALL, _WAITSOME, _TESTSOME, _WAITANY,
! _TESTANY, _STARTALL: MPI_ERR_COUNT, and no index written), of ranks
! (MPI_GROUP_INCL: MPI_ERR_ARG), of blocks (MPI_TYPE_STRUCT:
! MPI_ERR_COUNT) and of dimensions (MPI_CART_CREATE, MPI_DIMS_CREATE:
! MPI_ERR_ARG or MPI_ERR_DIMS); CHARACTER buffers shorter than the
! result, which get its first characters.
      INCLUDE 'expect.inc'

!     The error class of the code IERR.
      INTEGER FUNCTION CLASSOF(IERR)
      IMPLICIT NONE
      INTEGER IERR, K
      CALL MPI_ERROR_CLASS(IERR, CLASSOF, K)
      END

      PROGRAM FBAD
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, ERRS, RANK, G, G2, C, K, T, L, CLASSOF
      INTEGER REQS(4), STATS(MPI_STATUS_SIZE, 4), IDX(4), OUTC
      INTEGER RANKS(4), BL(2), DS(2), TS(2), DIMS(2)
      LOGICAL FLAG, P(2)
      CHARACTER*4 SHORT
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_SELF, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_WAITALL(-1, REQS, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'waitall -1', ERRS)
      CALL MPI_TESTALL(-1, REQS, FLAG, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'testall -1', ERRS)
!     (an OUTCOUNT left as the program passed it once had that many
!     indices renumbered, far past IDX)
      DO K = 1, 4
         IDX(K) = -5
      END DO
      OUTC = 1000000
      CALL MPI_WAITSOME(-1, REQS, OUTC, IDX, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'waitsome -1', ERRS)
      OUTC = 1000000
      CALL MPI_TESTSOME(-1, REQS, OUTC, IDX, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'testsome -1', ERRS)
      DO K = 1, 4
         CALL EXPECT(IDX(K), -5, 'indices after a failed waitsome',
     &        ERRS)
      END DO
      K = 41
      CALL MPI_WAITANY(-1, REQS, K, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'waitany -1', ERRS)
      CALL MPI_TESTANY(-1, REQS, K, FLAG, STATS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'testany -1', ERRS)
      CALL MPI_STARTALL(-1, REQS, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'startall -1', ERRS)
      CALL MPI_COMM_GROUP(MPI_COMM_WORLD, G, IERR)
      CALL MPI_GROUP_INCL(G, -1, RANKS, G2, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_ARG, 'group_incl -1', ERRS)
      CALL MPI_GROUP_FREE(G, IERR)
      CALL MPI_TYPE_STRUCT(-1, BL, DS, TS, T, IERR)
      CALL EXPECT(CLASSOF(IERR), MPI_ERR_COUNT, 'type_struct -1', ERRS)
      CALL MPI_CART_CREATE(MPI_COMM_WORLD, -1, DIMS, P, .FALSE., C,
     &     IERR)
      K = CLASSOF(IERR)
      IF (K .NE. MPI_ERR_ARG .AND. K .NE. MPI_ERR_DIMS) THEN
         ERRS = ERRS + 1
         PRINT *, 'cart_create -1: class ', K
      END IF
      CALL MPI_DIMS_CREATE(4, -1, DIMS, IERR)
      K = CLASSOF(IERR)
      IF (K .NE. MPI_ERR_ARG .AND. K .NE. MPI_ERR_DIMS) THEN
         ERRS = ERRS + 1
         PRINT *, 'dims_create -1: class ', K
      END IF
!     short buffers: the result's first characters
      CALL MPI_ERROR_STRING(MPI_ERR_TRUNCATE, SHORT, L, IERR)
      CALL EXPECT(IERR, MPI_SUCCESS, 'error_string short', ERRS)
      IF (L .LT. 4) ERRS = ERRS + 1
      CALL MPI_COMM_SET_NAME(MPI_COMM_WORLD, 'world', IERR)
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, SHORT, L, IERR)
      IF (SHORT .NE. 'worl') THEN
         ERRS = ERRS + 1
         PRINT *, 'get_name into 4 characters: [', SHORT, ']'
      END IF
      CALL MPI_TYPE_GET_NAME(MPI_INTEGER, SHORT, L, IERR)
      IF (SHORT .NE. 'MPI_') THEN
         ERRS = ERRS + 1
         PRINT *, 'type_get_name into 4 characters: [', SHORT, ']'
      END IF
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL,
     &     IERR)
      INCLUDE 'finish.inc'
      END
