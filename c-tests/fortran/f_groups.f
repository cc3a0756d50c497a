! oxmpi-test: ranks=1,2,3,4
! Groups, communicators and the environment from Fortran 77:
! MPI_INIT_THREAD with MPI_QUERY_THREAD and MPI_IS_THREAD_MAIN; every
! group constructor and MPI_GROUP_COMPARE; MPI_COMM_CREATE and
! MPI_COMM_CREATE_GROUP on the even ranks; MPI_COMM_SPLIT_TYPE; hints
! through MPI_COMM_DUP_WITH_INFO, MPI_COMM_IDUP(_WITH_INFO),
! MPI_COMM_SET_INFO, MPI_COMM_GET_INFO, MPI_INFO_DUP, MPI_INFO_DELETE
! and MPI_INFO_CREATE_ENV; an intercommunicator between the even and
! the odd ranks (MPI_INTERCOMM_CREATE, MPI_COMM_TEST_INTER,
! MPI_COMM_REMOTE_SIZE, MPI_COMM_REMOTE_GROUP, a bcast with MPI_ROOT
! and MPI_PROC_NULL, an allreduce, MPI_INTERCOMM_MERGE);
! the MPI-1 error handler and attribute calls (MPI_ERRHANDLER_CREATE,
! _SET, _GET, MPI_KEYVAL_CREATE, MPI_ATTR_PUT, MPI_ATTR_DELETE); a user
! error class, code and string raised by MPI_COMM_CALL_ERRHANDLER
! (f_not_in_mpich.f removes them: MPI 4.1, not in MPICH 4.0);
! MPI_GET_VERSION, MPI_GET_LIBRARY_VERSION, MPI_FINALIZED.
! MPICH 4.0.2 differs in two places: its MPI_COMM_IDUP drops the
! parent's hints (MPI 4.0's MPI_COMM_DUP copies them, and MPI_COMM_IDUP
! is its nonblocking form), and its MPI_INFO_CREATE_ENV
! has no maxprocs (which keys it holds is the implementation's choice;
! oxmpi's has maxprocs).
      INCLUDE 'expect.inc'

!     An MPI-1 error handler: counts its calls and keeps the last code.
      SUBROUTINE HANDLER(COMM, CODE)
      INTEGER COMM, CODE, CALLS, LAST
      COMMON /SEEN/ CALLS, LAST
      CALLS = CALLS + 1
      LAST = CODE
      END

!     Whether INFO holds KEY with the value WANT.
      LOGICAL FUNCTION HOLDS(INFO, KEY, WANT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER INFO, IERR
      CHARACTER*(*) KEY, WANT
      CHARACTER*(MPI_MAX_INFO_VAL) VALUE
      LOGICAL FLAG
      CALL MPI_INFO_GET(INFO, KEY, MPI_MAX_INFO_VAL, VALUE, FLAG, IERR)
      HOLDS = FLAG .AND. VALUE .EQ. WANT
      END

      PROGRAM FGROUPS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      EXTERNAL HANDLER
      LOGICAL HOLDS
      INTEGER IERR, RANK, NP, I, K, ERRS, PROVIDED, NEVEN, NODD
      INTEGER G, GE, GO, GU, GX, RES, CE, CG, CS, CD, CA, CB
      INTEGER EVENS(8), RANGES(3, 1), REQS(2), INFO, I2, USED, ENV
      INTEGER LOCAL, INTER, MERGED, RG, EH, EH2, KEY, VAL, EC, CODE
      INTEGER V, SV, L, CALLS, LAST
      COMMON /SEEN/ CALLS, LAST
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_INFO_VAL) VALUE
      CHARACTER*(MPI_MAX_LIBRARY_VERSION_STRING) LIB
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      ERRS = 0
      CALLS = 0
      CALL MPI_INIT_THREAD(MPI_THREAD_FUNNELED, PROVIDED, IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      IF (PROVIDED .LT. MPI_THREAD_SINGLE .OR.
     &    PROVIDED .GT. MPI_THREAD_MULTIPLE) THEN
         ERRS = ERRS + 1
         PRINT *, 'init_thread provided ', PROVIDED
      END IF
      CALL MPI_QUERY_THREAD(K, IERR)
      CALL EXPECT(K, PROVIDED, 'query_thread', ERRS)
      CALL MPI_IS_THREAD_MAIN(FLAG, IERR)
      IF (.NOT. FLAG) ERRS = ERRS + 1
!     groups: the even ranks, the odd ones, and back
      NEVEN = (NP + 1) / 2
      NODD = NP / 2
      DO I = 1, NEVEN
         EVENS(I) = 2 * (I - 1)
      END DO
      CALL MPI_COMM_GROUP(MPI_COMM_WORLD, G, IERR)
      CALL MPI_GROUP_SIZE(G, K, IERR)
      CALL EXPECT(K, NP, 'group_size', ERRS)
      CALL MPI_GROUP_RANK(G, K, IERR)
      CALL EXPECT(K, RANK, 'group_rank', ERRS)
      CALL MPI_GROUP_INCL(G, NEVEN, EVENS, GE, IERR)
      CALL MPI_GROUP_EXCL(G, NEVEN, EVENS, GO, IERR)
      CALL MPI_GROUP_SIZE(GO, K, IERR)
      CALL EXPECT(K, NODD, 'group_excl size', ERRS)
      CALL MPI_GROUP_RANK(GE, K, IERR)
      IF (MOD(RANK, 2) .EQ. 0) THEN
         CALL EXPECT(K, RANK / 2, 'group_incl rank', ERRS)
      ELSE
         CALL EXPECT(K, MPI_UNDEFINED, 'group_incl rank', ERRS)
      END IF
      CALL MPI_GROUP_UNION(GE, GO, GU, IERR)
      CALL MPI_GROUP_COMPARE(GU, G, RES, IERR)
      IF (NP .LE. 2) THEN
         CALL EXPECT(RES, MPI_IDENT, 'union of evens and odds', ERRS)
      ELSE
         CALL EXPECT(RES, MPI_SIMILAR, 'union of evens and odds', ERRS)
      END IF
      CALL MPI_GROUP_FREE(GU, IERR)
      CALL MPI_GROUP_INTERSECTION(G, GE, GX, IERR)
      CALL MPI_GROUP_COMPARE(GX, GE, RES, IERR)
      CALL EXPECT(RES, MPI_IDENT, 'group_intersection', ERRS)
      CALL MPI_GROUP_FREE(GX, IERR)
      CALL MPI_GROUP_DIFFERENCE(G, GE, GX, IERR)
      CALL MPI_GROUP_COMPARE(GX, GO, RES, IERR)
      CALL EXPECT(RES, MPI_IDENT, 'group_difference', ERRS)
      CALL MPI_GROUP_FREE(GX, IERR)
      RANGES(1, 1) = 0
      RANGES(2, 1) = NP - 1
      RANGES(3, 1) = 2
      CALL MPI_GROUP_RANGE_INCL(G, 1, RANGES, GX, IERR)
      CALL MPI_GROUP_COMPARE(GX, GE, RES, IERR)
      CALL EXPECT(RES, MPI_IDENT, 'group_range_incl', ERRS)
      CALL MPI_GROUP_FREE(GX, IERR)
      CALL MPI_GROUP_RANGE_EXCL(G, 1, RANGES, GX, IERR)
      CALL MPI_GROUP_COMPARE(GX, GO, RES, IERR)
      CALL EXPECT(RES, MPI_IDENT, 'group_range_excl', ERRS)
      CALL MPI_GROUP_FREE(GX, IERR)
!     communicators of the even ranks: every rank creates, the evens
!     alone create from their group
      CALL MPI_COMM_CREATE(MPI_COMM_WORLD, GE, CE, IERR)
      IF (MOD(RANK, 2) .EQ. 0) THEN
         CALL MPI_ALLREDUCE(RANK, K, 1, MPI_INTEGER, MPI_SUM, CE, IERR)
         CALL EXPECT(K, NEVEN * (NEVEN - 1), 'comm_create sum', ERRS)
         CALL MPI_COMM_CREATE_GROUP(MPI_COMM_WORLD, GE, 5, CG, IERR)
         CALL MPI_COMM_SIZE(CG, K, IERR)
         CALL EXPECT(K, NEVEN, 'comm_create_group size', ERRS)
         CALL MPI_COMM_RANK(CG, K, IERR)
         CALL EXPECT(K, RANK / 2, 'comm_create_group rank', ERRS)
         CALL MPI_COMM_FREE(CG, IERR)
         CALL MPI_COMM_FREE(CE, IERR)
      ELSE
         CALL EXPECT(CE, MPI_COMM_NULL, 'comm_create on an odd rank',
     &        ERRS)
      END IF
      CALL MPI_GROUP_FREE(GE, IERR)
      CALL MPI_GROUP_FREE(GO, IERR)
      CALL MPI_GROUP_FREE(G, IERR)
      CALL MPI_COMM_SPLIT_TYPE(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
     &     MPI_INFO_NULL, CS, IERR)
      CALL MPI_COMM_SIZE(CS, K, IERR)
      CALL EXPECT(K, NP, 'comm_split_type shared', ERRS)
      CALL MPI_COMM_FREE(CS, IERR)
!     hints: a copy with one, copies of that copy with another or not
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, 'mpi_assert_no_any_tag', 'true', IERR)
      CALL MPI_COMM_DUP_WITH_INFO(MPI_COMM_WORLD, INFO, CD, IERR)
      CALL MPI_INFO_SET(INFO, 'mpi_assert_no_any_source', 'true', IERR)
      CALL MPI_COMM_IDUP_WITH_INFO(CD, INFO, CA, REQS(1), IERR)
      CALL MPI_COMM_IDUP(CD, CB, REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
      CALL MPI_COMM_GET_INFO(CA, USED, IERR)
      IF (.NOT. HOLDS(USED, 'mpi_assert_no_any_source', 'true')) THEN
         ERRS = ERRS + 1
         PRINT *, 'idup_with_info lost its hint'
      END IF
      CALL MPI_INFO_FREE(USED, IERR)
      CALL MPI_COMM_GET_INFO(CB, USED, IERR)
      IF (.NOT. HOLDS(USED, 'mpi_assert_no_any_tag', 'true')) THEN
         ERRS = ERRS + 1
         PRINT *, 'idup lost its parent''s hint'
      END IF
      IF (HOLDS(USED, 'mpi_assert_no_any_source', 'true')) THEN
         ERRS = ERRS + 1
         PRINT *, 'idup took a hint its parent did not have'
      END IF
      CALL MPI_INFO_FREE(USED, IERR)
      CALL MPI_INFO_DUP(INFO, I2, IERR)
      CALL MPI_INFO_DELETE(INFO, 'mpi_assert_no_any_source', IERR)
      CALL MPI_INFO_GET(INFO, 'mpi_assert_no_any_source',
     &     MPI_MAX_INFO_VAL, VALUE, FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_COMM_SET_INFO(CB, I2, IERR)
      CALL MPI_COMM_GET_INFO(CB, USED, IERR)
      IF (.NOT. HOLDS(USED, 'mpi_assert_no_any_source', 'true')) THEN
         ERRS = ERRS + 1
         PRINT *, 'comm_set_info lost a hint of the dup'
      END IF
      CALL MPI_INFO_FREE(USED, IERR)
      CALL MPI_INFO_FREE(I2, IERR)
      CALL MPI_INFO_FREE(INFO, IERR)
      CALL MPI_COMM_FREE(CA, IERR)
      CALL MPI_COMM_FREE(CB, IERR)
      CALL MPI_INFO_CREATE_ENV(ENV, IERR)
      CALL MPI_INFO_GET(ENV, 'maxprocs', MPI_MAX_INFO_VAL, VALUE, FLAG,
     &     IERR)
      K = -1
      IF (FLAG) READ (VALUE, *) K
      CALL EXPECT(K, NP, 'info_create_env maxprocs', ERRS)
      CALL MPI_INFO_FREE(ENV, IERR)
!     the even ranks and the odd ones, joined and merged
      IF (NP .GE. 2) THEN
         CALL MPI_COMM_SPLIT(MPI_COMM_WORLD, MOD(RANK, 2), RANK, LOCAL,
     &        IERR)
         CALL MPI_INTERCOMM_CREATE(LOCAL, 0, MPI_COMM_WORLD,
     &        1 - MOD(RANK, 2), 9, INTER, IERR)
         CALL MPI_COMM_TEST_INTER(INTER, FLAG, IERR)
         IF (.NOT. FLAG) ERRS = ERRS + 1
         CALL MPI_COMM_REMOTE_SIZE(INTER, K, IERR)
         IF (MOD(RANK, 2) .EQ. 0) THEN
            CALL EXPECT(K, NODD, 'comm_remote_size', ERRS)
         ELSE
            CALL EXPECT(K, NEVEN, 'comm_remote_size', ERRS)
         END IF
         CALL MPI_COMM_REMOTE_GROUP(INTER, RG, IERR)
         CALL MPI_GROUP_SIZE(RG, L, IERR)
         CALL EXPECT(L, K, 'comm_remote_group', ERRS)
         CALL MPI_GROUP_FREE(RG, IERR)
!        a bcast from the even ranks' first (MPI_ROOT; the other even
!        ranks MPI_PROC_NULL), then an allreduce: each side gets the
!        sum over the other side
         IF (RANK .EQ. 0) THEN
            K = MPI_ROOT
            VAL = 99
         ELSE IF (MOD(RANK, 2) .EQ. 0) THEN
            K = MPI_PROC_NULL
            VAL = -1
         ELSE
            K = 0
            VAL = -1
         END IF
         CALL MPI_BCAST(VAL, 1, MPI_INTEGER, K, INTER, IERR)
         IF (MOD(RANK, 2) .EQ. 1) THEN
            CALL EXPECT(VAL, 99, 'intercomm bcast', ERRS)
         ELSE IF (RANK .NE. 0) THEN
            CALL EXPECT(VAL, -1, 'intercomm bcast at MPI_PROC_NULL',
     &           ERRS)
         END IF
         CALL MPI_ALLREDUCE(RANK, K, 1, MPI_INTEGER, MPI_SUM, INTER,
     &        IERR)
         IF (MOD(RANK, 2) .EQ. 0) THEN
            CALL EXPECT(K, NODD * NODD, 'intercomm allreduce', ERRS)
         ELSE
            CALL EXPECT(K, NEVEN * (NEVEN - 1), 'intercomm allreduce',
     &           ERRS)
         END IF
         CALL MPI_INTERCOMM_MERGE(INTER, MOD(RANK, 2) .EQ. 1, MERGED,
     &        IERR)
         CALL MPI_COMM_RANK(MERGED, K, IERR)
         IF (MOD(RANK, 2) .EQ. 0) THEN
            CALL EXPECT(K, RANK / 2, 'intercomm_merge rank', ERRS)
         ELSE
            CALL EXPECT(K, NEVEN + RANK / 2, 'intercomm_merge rank',
     &           ERRS)
         END IF
         CALL MPI_COMM_FREE(MERGED, IERR)
         CALL MPI_COMM_FREE(INTER, IERR)
         CALL MPI_COMM_FREE(LOCAL, IERR)
      END IF
      CALL MPI_COMM_TEST_INTER(MPI_COMM_WORLD, FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
!     an MPI-1 error handler raised with a code of the program's own
      CALL MPI_ERRHANDLER_CREATE(HANDLER, EH, IERR)
      CALL MPI_ERRHANDLER_SET(CD, EH, IERR)
      CALL MPI_ERRHANDLER_GET(CD, EH2, IERR)
      CALL EXPECT(EH2, EH, 'errhandler_get', ERRS)
      CALL MPI_ERRHANDLER_FREE(EH2, IERR)
      CALL MPI_COMM_GET_ERRHANDLER(CD, EH2, IERR)
      CALL EXPECT(EH2, EH, 'comm_get_errhandler', ERRS)
      CALL MPI_ERRHANDLER_FREE(EH2, IERR)
      CALL MPI_ADD_ERROR_CLASS(EC, IERR)
      CALL MPI_ADD_ERROR_CODE(EC, CODE, IERR)
      CALL MPI_ADD_ERROR_STRING(CODE, 'the answer was not 42', IERR)
      CALL MPI_ERROR_STRING(CODE, ESTR, L, IERR)
      IF (ESTR(1:L) .NE. 'the answer was not 42') THEN
         ERRS = ERRS + 1
         PRINT *, 'error_string: ', ESTR(1:L)
      END IF
      CALL MPI_ERROR_CLASS(CODE, K, IERR)
      CALL EXPECT(K, EC, 'error_class of an added code', ERRS)
      CALL MPI_COMM_CALL_ERRHANDLER(CD, CODE, IERR)
      CALL EXPECT(CALLS, 1, 'handler calls', ERRS)
      CALL EXPECT(LAST, CODE, 'handler code', ERRS)
      CALL MPI_ERRHANDLER_FREE(EH, IERR)
!     MPI-1 attributes
      CALL MPI_KEYVAL_CREATE(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, KEY,
     &     0, IERR)
      CALL MPI_ATTR_PUT(CD, KEY, 1234, IERR)
      CALL MPI_ATTR_GET(CD, KEY, VAL, FLAG, IERR)
      IF (.NOT. FLAG) ERRS = ERRS + 1
      CALL EXPECT(VAL, 1234, 'attr_get', ERRS)
      CALL MPI_ATTR_DELETE(CD, KEY, IERR)
      CALL MPI_ATTR_GET(CD, KEY, VAL, FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_KEYVAL_FREE(KEY, IERR)
      CALL EXPECT(KEY, MPI_KEYVAL_INVALID, 'keyval_free', ERRS)
      CALL MPI_COMM_FREE(CD, IERR)
!     versions
      CALL MPI_GET_VERSION(V, SV, IERR)
      IF (V .LT. 4) THEN
         ERRS = ERRS + 1
         PRINT *, 'get_version ', V, SV
      END IF
      CALL MPI_GET_LIBRARY_VERSION(LIB, L, IERR)
      IF (L .LE. 0 .OR. L .GT. MPI_MAX_LIBRARY_VERSION_STRING) THEN
         ERRS = ERRS + 1
         PRINT *, 'get_library_version length ', L
      ELSE IF (LEN_TRIM(LIB(1:L)) .EQ. 0) THEN
         ERRS = ERRS + 1
         PRINT *, 'get_library_version: blank'
      END IF
      CALL MPI_FINALIZED(FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      INCLUDE 'finish.inc'
      END
