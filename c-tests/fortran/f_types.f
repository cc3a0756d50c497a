! oxmpi-test: ranks=1,2,4
! Derived datatypes from Fortran 77: vector of a column-major matrix,
! contiguous, indexed, a struct built with MPI_GET_ADDRESS and sent from
! MPI_BOTTOM, size/extent queries, MPI-1's MPI_TYPE_EXTENT and
! MPI_ADDRESS, pack/unpack, and MPI_TYPE_GET_NAME on a predefined type.
      PROGRAM FTYPES
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, NEXT, PREV, I, J, ERRS
      INTEGER ROWT, CONT, IDXT, STRT, SZ, EXT1, A1, A2, POS, RLEN
      INTEGER(KIND=MPI_ADDRESS_KIND) LB, EXT, ADDR(2)
      INTEGER BLENS(2), TYPES(2), DISP(3), BL(3)
      DOUBLE PRECISION M(4, 5), R(6), V(6)
      INTEGER IVAL, IRV
      DOUBLE PRECISION DVAL, DRV
      CHARACTER*1 PACKED(64)
      CHARACTER*(MPI_MAX_OBJECT_NAME) TNAME
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
      DO J = 1, 5
         DO I = 1, 4
            M(I, J) = RANK * 100 + I * 10 + J
         END DO
      END DO
!     one row of a 4x5 column-major matrix: 5 elements, stride 4
      CALL MPI_TYPE_VECTOR(5, 1, 4, MPI_DOUBLE_PRECISION, ROWT, IERR)
      CALL MPI_TYPE_COMMIT(ROWT, IERR)
      CALL MPI_TYPE_SIZE(ROWT, SZ, IERR)
      IF (SZ .NE. 40) ERRS = ERRS + 1
      CALL MPI_TYPE_GET_EXTENT(ROWT, LB, EXT, IERR)
      IF (LB .NE. 0 .OR. EXT .NE. 8 * 17) ERRS = ERRS + 1
      CALL MPI_TYPE_EXTENT(ROWT, EXT1, IERR)
      IF (EXT1 .NE. 8 * 17) ERRS = ERRS + 1
      CALL MPI_SENDRECV(M(2, 1), 1, ROWT, NEXT, 1, R, 5,
     &     MPI_DOUBLE_PRECISION, PREV, 1, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      DO J = 1, 5
         IF (R(J) .NE. PREV * 100 + 20 + J) ERRS = ERRS + 1
      END DO
!     indexed: elements 1, 3-4, 6 of V
      BL(1) = 1
      BL(2) = 2
      BL(3) = 1
      DISP(1) = 0
      DISP(2) = 2
      DISP(3) = 5
      CALL MPI_TYPE_INDEXED(3, BL, DISP, MPI_DOUBLE_PRECISION, IDXT,
     &     IERR)
      CALL MPI_TYPE_COMMIT(IDXT, IERR)
      DO I = 1, 6
         V(I) = RANK + I * 0.5D0
         R(I) = 0
      END DO
      CALL MPI_SENDRECV(V, 1, IDXT, NEXT, 2, R, 4,
     &     MPI_DOUBLE_PRECISION, PREV, 2, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      IF (R(1) .NE. PREV + 0.5D0 .OR. R(2) .NE. PREV + 1.5D0 .OR.
     &    R(3) .NE. PREV + 2.0D0 .OR. R(4) .NE. PREV + 3.0D0)
     &     ERRS = ERRS + 1
!     contiguous
      CALL MPI_TYPE_CONTIGUOUS(3, MPI_INTEGER, CONT, IERR)
      CALL MPI_TYPE_COMMIT(CONT, IERR)
      CALL MPI_TYPE_SIZE(CONT, SZ, IERR)
      IF (SZ .NE. 12) ERRS = ERRS + 1
!     a struct of two separate variables, by absolute address
      IVAL = RANK + 7
      DVAL = RANK * 2.5D0
      CALL MPI_GET_ADDRESS(IVAL, ADDR(1), IERR)
      CALL MPI_GET_ADDRESS(DVAL, ADDR(2), IERR)
!     MPI-1's MPI_ADDRESS: the address if a default INTEGER holds it,
!     else an error of class MPI_ERR_ARG (through the error handler)
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_ADDRESS(IVAL, A1, IERR)
      IF (ADDR(1) .LE. 2147483647_8 .AND. ADDR(1) .GE. -2147483648_8)
     &     THEN
         IF (IERR .NE. MPI_SUCCESS .OR. A1 .NE. ADDR(1)) ERRS = ERRS + 1
      ELSE
         CALL MPI_ERROR_CLASS(IERR, A2, I)
         IF (A2 .NE. MPI_ERR_ARG) THEN
            ERRS = ERRS + 1
            PRINT *, 'MPI_ADDRESS beyond an INTEGER gave ', IERR
         END IF
      END IF
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD,
     &     MPI_ERRORS_ARE_FATAL, IERR)
      BLENS(1) = 1
      BLENS(2) = 1
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_DOUBLE_PRECISION
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, ADDR, TYPES, STRT, IERR)
      CALL MPI_TYPE_COMMIT(STRT, IERR)
      CALL MPI_SEND(MPI_BOTTOM, 1, STRT, NEXT, 3, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_GET_ADDRESS(IRV, ADDR(1), IERR)
      CALL MPI_GET_ADDRESS(DRV, ADDR(2), IERR)
      CALL MPI_TYPE_FREE(STRT, IERR)
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, ADDR, TYPES, STRT, IERR)
      CALL MPI_TYPE_COMMIT(STRT, IERR)
      CALL MPI_RECV(MPI_BOTTOM, 1, STRT, PREV, 3, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      IF (IRV .NE. PREV + 7 .OR. DRV .NE. PREV * 2.5D0) THEN
         ERRS = ERRS + 1
         PRINT *, 'struct from MPI_BOTTOM: ', IRV, DRV
      END IF
!     pack and unpack
      POS = 0
      CALL MPI_PACK(IVAL, 1, MPI_INTEGER, PACKED, 64, POS,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_PACK(DVAL, 1, MPI_DOUBLE_PRECISION, PACKED, 64, POS,
     &     MPI_COMM_WORLD, IERR)
      A2 = POS
      POS = 0
      CALL MPI_UNPACK(PACKED, 64, POS, IRV, 1, MPI_INTEGER,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_UNPACK(PACKED, 64, POS, DRV, 1, MPI_DOUBLE_PRECISION,
     &     MPI_COMM_WORLD, IERR)
      IF (POS .NE. A2 .OR. IRV .NE. IVAL .OR. DRV .NE. DVAL)
     &     ERRS = ERRS + 1
!     the name of a predefined type, blank padded
      CALL MPI_TYPE_GET_NAME(MPI_DOUBLE_PRECISION, TNAME, RLEN, IERR)
      IF (TNAME .NE. 'MPI_DOUBLE_PRECISION' .OR. RLEN .NE. 20) THEN
         ERRS = ERRS + 1
         PRINT *, 'type name "', TNAME(1:RLEN), '" ', RLEN
      END IF
      CALL MPI_TYPE_FREE(ROWT, IERR)
      CALL MPI_TYPE_FREE(IDXT, IERR)
      CALL MPI_TYPE_FREE(CONT, IERR)
      CALL MPI_TYPE_FREE(STRT, IERR)
      IF (ROWT .NE. MPI_DATATYPE_NULL) ERRS = ERRS + 1
      INCLUDE 'finish.inc'
      END
