! oxmpi-test: ranks=1,2,3,4
! Communicators, groups, topologies, attributes and strings from Fortran
! 77: split/dup/compare, group translate, a periodic Cartesian grid
! (LOGICAL arguments), MPI_TAG_UB and a keyval with Fortran callbacks
! (copied on dup by MPI_COMM_DUP_FN and by a user procedure), names,
! info keys and values, error strings, processor name, MPI_WTIME,
! MPI_COMM_GET_PARENT, MPI_PCONTROL.
      SUBROUTINE MYCOPY(OLDCOMM, KEYVAL, EXTRA, VIN, VOUT, FLAG, IERR)
      INCLUDE 'mpif.h'
      INTEGER OLDCOMM, KEYVAL, IERR
      INTEGER(KIND=MPI_ADDRESS_KIND) EXTRA, VIN, VOUT
      LOGICAL FLAG
      VOUT = VIN + EXTRA
      FLAG = .TRUE.
      IERR = MPI_SUCCESS
      END

      SUBROUTINE MYDEL(COMM, KEYVAL, VAL, EXTRA, IERR)
      INCLUDE 'mpif.h'
      INTEGER COMM, KEYVAL, IERR, NDEL
      INTEGER(KIND=MPI_ADDRESS_KIND) VAL, EXTRA
      COMMON /DELS/ NDEL
      NDEL = NDEL + 1
      IERR = MPI_SUCCESS
      END

      SUBROUTINE MYHANDLER(COMM, CODE)
      INTEGER COMM, CODE, SEEN
      COMMON /HANDLED/ SEEN
      SEEN = CODE
      END

      PROGRAM FCOMM
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      EXTERNAL MYCOPY, MYDEL, MYHANDLER
      INTEGER EH, SEEN
      COMMON /HANDLED/ SEEN
      INTEGER IERR, RANK, NP, ERRS, HALF, SUB, DUP, RES, I, NDEL
      INTEGER WGRP, SGRP, R1(4), R2(4), CART, DIMS(2), COORDS(2)
      INTEGER SRC, DST, KEY, KEY2, NKEYS, RLEN, VLEN, ECLASS
      LOGICAL PERIODS(2), FLAG
      INTEGER(KIND=MPI_ADDRESS_KIND) VAL
      INTEGER INFO
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CHARACTER*(MPI_MAX_INFO_VAL) VALUE
      CHARACTER*(MPI_MAX_INFO_KEY) IKEY
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      DOUBLE PRECISION T0, T1
      COMMON /DELS/ NDEL
      ERRS = 0
      NDEL = 0
      CALL MPI_INIT(IERR)
      T0 = MPI_WTIME()
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
!     split into even and odd ranks, ordered by descending rank
      CALL MPI_COMM_SPLIT(MPI_COMM_WORLD, MOD(RANK, 2), -RANK, SUB,
     &     IERR)
      CALL MPI_COMM_SIZE(SUB, HALF, IERR)
      IF (HALF .NE. (NP + 1 - MOD(RANK, 2)) / 2) ERRS = ERRS + 1
      CALL MPI_COMM_RANK(SUB, I, IERR)
      CALL MPI_COMM_GROUP(MPI_COMM_WORLD, WGRP, IERR)
      CALL MPI_COMM_GROUP(SUB, SGRP, IERR)
      R1(1) = 0
      CALL MPI_GROUP_TRANSLATE_RANKS(SGRP, 1, R1, WGRP, R2, IERR)
      IF (MOD(R2(1), 2) .NE. MOD(RANK, 2)) ERRS = ERRS + 1
      CALL MPI_GROUP_FREE(SGRP, IERR)
      CALL MPI_GROUP_FREE(WGRP, IERR)
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUP, IERR)
      CALL MPI_COMM_COMPARE(DUP, MPI_COMM_WORLD, RES, IERR)
      IF (RES .NE. MPI_CONGRUENT) ERRS = ERRS + 1
!     a periodic 1-D ring as a Cartesian grid: shift by one
      DIMS(1) = 0
      DIMS(2) = 0
      CALL MPI_DIMS_CREATE(NP, 1, DIMS, IERR)
      PERIODS(1) = .TRUE.
      CALL MPI_CART_CREATE(MPI_COMM_WORLD, 1, DIMS, PERIODS, .FALSE.,
     &     CART, IERR)
      CALL MPI_CART_SHIFT(CART, 0, 1, SRC, DST, IERR)
      IF (SRC .NE. MOD(RANK + NP - 1, NP) .OR.
     &    DST .NE. MOD(RANK + 1, NP)) ERRS = ERRS + 1
      CALL MPI_CART_GET(CART, 1, DIMS, PERIODS, COORDS, IERR)
      IF (.NOT. PERIODS(1) .OR. COORDS(1) .NE. RANK) ERRS = ERRS + 1
      CALL MPI_TOPO_TEST(CART, I, IERR)
      IF (I .NE. MPI_CART) ERRS = ERRS + 1
      CALL MPI_COMM_FREE(CART, IERR)
!     predefined attribute: the value itself
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, VAL, FLAG,
     &     IERR)
      IF (.NOT. FLAG .OR. VAL .LT. 32767) THEN
         ERRS = ERRS + 1
         PRINT *, 'MPI_TAG_UB ', VAL, FLAG
      END IF
      CALL MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, I, FLAG, IERR)
      IF (.NOT. FLAG .OR. I .NE. VAL) ERRS = ERRS + 1
!     keyvals with Fortran callbacks
      CALL MPI_COMM_CREATE_KEYVAL(MYCOPY, MYDEL, KEY, 5_8, IERR)
      CALL MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN,
     &     MPI_COMM_NULL_DELETE_FN, KEY2, 0_8, IERR)
      VAL = 1000 + RANK
      CALL MPI_COMM_SET_ATTR(DUP, KEY, VAL, IERR)
      CALL MPI_COMM_SET_ATTR(DUP, KEY2, VAL, IERR)
      CALL MPI_COMM_DUP(DUP, HALF, IERR)
      CALL MPI_COMM_GET_ATTR(HALF, KEY, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. VAL .NE. 1005 + RANK) THEN
         ERRS = ERRS + 1
         PRINT *, 'copied by MYCOPY: ', VAL, FLAG
      END IF
      CALL MPI_COMM_GET_ATTR(HALF, KEY2, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. VAL .NE. 1000 + RANK) ERRS = ERRS + 1
      CALL MPI_COMM_FREE(HALF, IERR)
      IF (NDEL .NE. 1) ERRS = ERRS + 1
      CALL MPI_COMM_DELETE_ATTR(DUP, KEY, IERR)
      IF (NDEL .NE. 2) ERRS = ERRS + 1
      CALL MPI_COMM_FREE_KEYVAL(KEY, IERR)
      CALL MPI_COMM_FREE_KEYVAL(KEY2, IERR)
!     names
      CALL MPI_COMM_SET_NAME(DUP, 'my communicator   ', IERR)
      CALL MPI_COMM_GET_NAME(DUP, NAME, RLEN, IERR)
      IF (NAME .NE. 'my communicator' .OR. RLEN .NE. 15) THEN
         ERRS = ERRS + 1
         PRINT *, 'name "', NAME(1:RLEN), '" ', RLEN
      END IF
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, NAME, RLEN, IERR)
      IF (NAME .NE. 'MPI_COMM_WORLD') ERRS = ERRS + 1
      CALL MPI_COMM_FREE(DUP, IERR)
      CALL MPI_COMM_FREE(SUB, IERR)
      IF (SUB .NE. MPI_COMM_NULL) ERRS = ERRS + 1
!     info: keys and values with trailing blanks dropped
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, 'color', 'deep blue   ', IERR)
      CALL MPI_INFO_SET(INFO, 'size', '42', IERR)
      CALL MPI_INFO_GET_NKEYS(INFO, NKEYS, IERR)
      IF (NKEYS .NE. 2) ERRS = ERRS + 1
      CALL MPI_INFO_GET_NTHKEY(INFO, 0, IKEY, IERR)
      IF (IKEY .NE. 'color') ERRS = ERRS + 1
      CALL MPI_INFO_GET(INFO, 'color', MPI_MAX_INFO_VAL, VALUE, FLAG,
     &     IERR)
      IF (.NOT. FLAG .OR. VALUE .NE. 'deep blue') ERRS = ERRS + 1
      CALL MPI_INFO_GET_VALUELEN(INFO, 'color', VLEN, FLAG, IERR)
      IF (VLEN .NE. 9) ERRS = ERRS + 1
      VLEN = 4
      CALL MPI_INFO_GET_STRING(INFO, 'color', VLEN, VALUE, FLAG, IERR)
      IF (.NOT. FLAG .OR. VLEN .NE. 9 .OR. VALUE(1:4) .NE. 'deep')
     &     THEN
         ERRS = ERRS + 1
         PRINT *, 'info_get_string ', VLEN, ' "', VALUE(1:9), '"'
      END IF
      VALUE = 'kept'
      CALL MPI_INFO_GET(INFO, 'none', MPI_MAX_INFO_VAL, VALUE, FLAG,
     &     IERR)
      IF (FLAG .OR. VALUE .NE. 'kept') ERRS = ERRS + 1
!     leading blanks go too; a short BUFLEN leaves blanks after the value
      CALL MPI_INFO_SET(INFO, '  shade', ' dark ', IERR)
      VALUE = 'xxxxxxxx'
      CALL MPI_INFO_GET(INFO, 'shade', MPI_MAX_INFO_VAL, VALUE, FLAG,
     &     IERR)
      IF (.NOT. FLAG .OR. VALUE .NE. 'dark') THEN
         ERRS = ERRS + 1
         PRINT *, 'info_get of a key set with blanks "', VALUE(1:8), '"'
      END IF
      VALUE = 'xxxxxxxx'
      VLEN = 2
      CALL MPI_INFO_GET_STRING(INFO, 'shade', VLEN, VALUE, FLAG, IERR)
      IF (.NOT. FLAG .OR. VLEN .NE. 4 .OR. VALUE .NE. 'da') THEN
         ERRS = ERRS + 1
         PRINT *, 'info_get_string, BUFLEN 2 "', VALUE(1:8), '"'
      END IF
      CALL MPI_INFO_FREE(INFO, IERR)
      IF (INFO .NE. MPI_INFO_NULL) ERRS = ERRS + 1
!     a Fortran error handler sees the error code
      SEEN = MPI_SUCCESS
      CALL MPI_COMM_CREATE_ERRHANDLER(MYHANDLER, EH, IERR)
      CALL MPI_COMM_DUP(MPI_COMM_WORLD, DUP, IERR)
      CALL MPI_COMM_SET_ERRHANDLER(DUP, EH, IERR)
      CALL MPI_SEND(I, 1, MPI_INTEGER, NP, 0, DUP, IERR)
      CALL MPI_ERROR_CLASS(SEEN, ECLASS, I)
      IF (ECLASS .NE. MPI_ERR_RANK) THEN
         ERRS = ERRS + 1
         PRINT *, 'the Fortran handler saw ', SEEN
      END IF
      CALL MPI_ERRHANDLER_FREE(EH, IERR)
      CALL MPI_COMM_FREE(DUP, IERR)
!     error strings and classes
      CALL MPI_ERROR_STRING(MPI_ERR_RANK, ESTR, RLEN, IERR)
      IF (RLEN .LE. 0 .OR. ESTR(RLEN+1:RLEN+1) .NE. ' ')
     &     ERRS = ERRS + 1
      CALL MPI_ERROR_CLASS(MPI_ERR_TAG, ECLASS, IERR)
      IF (ECLASS .NE. MPI_ERR_TAG) ERRS = ERRS + 1
      CALL MPI_GET_PROCESSOR_NAME(PNAME, RLEN, IERR)
      IF (RLEN .LE. 0) ERRS = ERRS + 1
      CALL MPI_INITIALIZED(FLAG, IERR)
      IF (.NOT. FLAG) ERRS = ERRS + 1
      T1 = MPI_WTIME()
      IF (T1 .LT. T0 .OR. MPI_WTICK() .LE. 0.0D0) ERRS = ERRS + 1
!     no parent (started by mpiexec); the profiling switch returns
      CALL MPI_COMM_GET_PARENT(DUP, IERR)
      IF (DUP .NE. MPI_COMM_NULL) ERRS = ERRS + 1
!     (the standard's binding has no IERROR: nothing is written through
!     a second argument; MPICH's has one, which programs written for it
!     pass, and which is left as it was)
      CALL MPI_PCONTROL(1)
      IERR = 12345
      CALL MPI_PCONTROL(0, IERR)
      IF (IERR .NE. 12345) THEN
         ERRS = ERRS + 1
         PRINT *, 'MPI_PCONTROL wrote a second argument: ', IERR
      END IF
      INCLUDE 'finish.inc'
      END
