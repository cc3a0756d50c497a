! oxmpi-test: ranks=1,2,3,4
! Collectives from Fortran 77, each run three ways: blocking,
! nonblocking (MPI_I..., completed by MPI_WAIT) and persistent
! (MPI_..._INIT, started twice with MPI_START, then freed):
! allgatherv, scatterv, gatherv, alltoallv, alltoallw, exscan, scan,
! reduce_scatter(_block), and the other operations' nonblocking and
! persistent forms; several nonblocking collectives in flight at once,
! completed by MPI_TESTALL; two persistent ones started together by
! MPI_STARTALL; MPI_REDUCE_LOCAL and MPI_OP_COMMUTATIVE.
! Results against values computed here.
      INCLUDE 'ways.inc'

      SUBROUTINE CLEAR(A, N)
      INTEGER N, A(N), I
      DO I = 1, N
         A(I) = -1
      END DO
      END

!     A non-commutative operation (x op y = x), for MPI_OP_COMMUTATIVE.
      SUBROUTINE FIRST(INV, INOUT, LEN, DTYPE)
      INTEGER LEN, DTYPE, INV(LEN), INOUT(LEN), I
      DO I = 1, LEN
         INOUT(I) = INV(I)
      END DO
      END

      PROGRAM FWAYS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      EXTERNAL FIRST
      INTEGER IERR, RANK, NP, I, J, K, ERRS, MODE, REQ, ROOT, OP
      INTEGER IV(64), IR(64), COUNTS(8), DISPLS(8), SC(8), SD(8)
      INTEGER RC(8), RD(8), TYPES(8), REQS(4), T
      LOGICAL FLAG, COMMUTE
      DOUBLE PRECISION X(3), Y(3)
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
!     rank i's block: i+1 ints, in rank order (COUNTS, DISPLS)
      DO I = 1, NP
         COUNTS(I) = I
         DISPLS(I) = (I - 1) * I / 2
      END DO
      DO MODE = 1, 3
!     allgatherv
      DO I = 1, RANK + 1
         IV(I) = RANK * 10 + I
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_ALLGATHERV(IV, RANK + 1, MPI_INTEGER,
     &     IR, COUNTS, DISPLS, MPI_INTEGER, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IALLGATHERV(IV, RANK + 1, MPI_INTEGER,
     &     IR, COUNTS, DISPLS, MPI_INTEGER, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLGATHERV_INIT(IV, RANK + 1,
     &     MPI_INTEGER, IR, COUNTS, DISPLS, MPI_INTEGER, MPI_COMM_WORLD,
     &     MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      DO I = 1, NP
         DO J = 1, I
            CALL EXPECTM(IR(DISPLS(I) + J), (I - 1) * 10 + J,
     &           'allgatherv', MODE, ERRS)
         END DO
      END DO
!     scatterv from the last rank
      ROOT = NP - 1
      DO I = 1, NP * (NP + 1) / 2
         IV(I) = I * 3
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_SCATTERV(IV, COUNTS, DISPLS,
     &     MPI_INTEGER, IR, RANK + 1, MPI_INTEGER, ROOT,
     &     MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_ISCATTERV(IV, COUNTS, DISPLS,
     &     MPI_INTEGER, IR, RANK + 1, MPI_INTEGER, ROOT,
     &     MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_SCATTERV_INIT(IV, COUNTS, DISPLS,
     &     MPI_INTEGER, IR, RANK + 1, MPI_INTEGER, ROOT,
     &     MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      DO J = 1, RANK + 1
         CALL EXPECTM(IR(J), (DISPLS(RANK + 1) + J) * 3, 'scatterv',
     &        MODE, ERRS)
      END DO
!     gatherv to rank 0
      DO I = 1, RANK + 1
         IV(I) = -RANK - I
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_GATHERV(IV, RANK + 1, MPI_INTEGER,
     &     IR, COUNTS, DISPLS, MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IGATHERV(IV, RANK + 1, MPI_INTEGER,
     &     IR, COUNTS, DISPLS, MPI_INTEGER, 0, MPI_COMM_WORLD, REQ,
     &     IERR)
      IF (MODE .EQ. 3) CALL MPI_GATHERV_INIT(IV, RANK + 1, MPI_INTEGER,
     &     IR, COUNTS, DISPLS, MPI_INTEGER, 0, MPI_COMM_WORLD,
     &     MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      IF (RANK .EQ. 0) THEN
         DO I = 1, NP
            DO J = 1, I
               CALL EXPECTM(IR(DISPLS(I) + J), 1 - I - J, 'gatherv',
     &              MODE, ERRS)
            END DO
         END DO
      END IF
!     alltoallv: rank r sends d+1 ints r*100+d to rank d, receives r+1
!     from each
      K = 0
      DO I = 1, NP
         SC(I) = I
         SD(I) = K
         DO J = 1, I
            IV(K + J) = RANK * 100 + I - 1
         END DO
         K = K + I
         RC(I) = RANK + 1
         RD(I) = (I - 1) * (RANK + 1)
         TYPES(I) = MPI_INTEGER
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_ALLTOALLV(IV, SC, SD, MPI_INTEGER,
     &     IR, RC, RD, MPI_INTEGER, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IALLTOALLV(IV, SC, SD, MPI_INTEGER,
     &     IR, RC, RD, MPI_INTEGER, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLTOALLV_INIT(IV, SC, SD, MPI_INTEGER,
     &     IR, RC, RD, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, REQ,
     &     IERR)
      CALL DONE(MODE, REQ)
      DO I = 1, NP
         DO J = 1, RANK + 1
            CALL EXPECTM(IR(RD(I) + J), (I - 1) * 100 + RANK,
     &           'alltoallv', MODE, ERRS)
         END DO
      END DO
!     alltoallw: the same blocks, displacements in bytes
      CALL MPI_TYPE_SIZE(MPI_INTEGER, T, IERR)
      DO I = 1, NP
         SD(I) = SD(I) * T
         RD(I) = RD(I) * T
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_ALLTOALLW(IV, SC, SD, TYPES,
     &     IR, RC, RD, TYPES, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IALLTOALLW(IV, SC, SD, TYPES,
     &     IR, RC, RD, TYPES, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLTOALLW_INIT(IV, SC, SD, TYPES,
     &     IR, RC, RD, TYPES, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      DO I = 1, NP
         DO J = 1, RANK + 1
            CALL EXPECTM(IR(RD(I) / T + J), (I - 1) * 100 + RANK,
     &           'alltoallw', MODE, ERRS)
         END DO
      END DO
!     exscan: the sum of 1..rank (rank 0's result is undefined)
      IV(1) = RANK
      IR(1) = -1
      IF (MODE .EQ. 1) CALL MPI_EXSCAN(IV, IR, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IEXSCAN(IV, IR, 1, MPI_INTEGER,
     &     MPI_SUM, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_EXSCAN_INIT(IV, IR, 1, MPI_INTEGER,
     &     MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      IF (RANK .GT. 0) CALL EXPECTM(IR(1), RANK * (RANK - 1) / 2,
     &     'exscan', MODE, ERRS)
!     scan
      IV(1) = RANK + 1
      IF (MODE .EQ. 1) CALL MPI_SCAN(IV, IR, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_ISCAN(IV, IR, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_SCAN_INIT(IV, IR, 1, MPI_INTEGER,
     &     MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IR(1), (RANK + 1) * (RANK + 2) / 2, 'scan', MODE,
     &     ERRS)
!     reduce_scatter: rank i gets COUNTS(i) sums of the same ints
      DO I = 1, NP * (NP + 1) / 2
         IV(I) = I + RANK
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 1) CALL MPI_REDUCE_SCATTER(IV, IR, COUNTS,
     &     MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IREDUCE_SCATTER(IV, IR, COUNTS,
     &     MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_REDUCE_SCATTER_INIT(IV, IR, COUNTS,
     &     MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, REQ,
     &     IERR)
      CALL DONE(MODE, REQ)
      DO J = 1, RANK + 1
         CALL EXPECTM(IR(J), NP * (DISPLS(RANK + 1) + J)
     &        + NP * (NP - 1) / 2, 'reduce_scatter', MODE, ERRS)
      END DO
!     reduce_scatter_block: two each
      DO I = 1, 2 * NP
         IV(I) = I * (RANK + 1)
      END DO
      IF (MODE .EQ. 1) CALL MPI_REDUCE_SCATTER_BLOCK(IV, IR, 2,
     &     MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, IERR)
      IF (MODE .EQ. 2) CALL MPI_IREDUCE_SCATTER_BLOCK(IV, IR, 2,
     &     MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_REDUCE_SCATTER_BLOCK_INIT(IV, IR, 2,
     &     MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, REQ,
     &     IERR)
      CALL DONE(MODE, REQ)
      DO J = 1, 2
         CALL EXPECTM(IR(J), (2 * RANK + J) * NP,
     &        'reduce_scatter_block', MODE, ERRS)
      END DO
!     the operations of fixed block sizes, nonblocking and persistent
      IF (MODE .GT. 1) THEN
!     barrier
      IF (MODE .EQ. 2) CALL MPI_IBARRIER(MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_BARRIER_INIT(MPI_COMM_WORLD,
     &     MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
!     bcast from rank 1 (or 0)
      ROOT = MIN(1, NP - 1)
      IV(1) = -1
      IF (RANK .EQ. ROOT) IV(1) = 77
      IF (MODE .EQ. 2) CALL MPI_IBCAST(IV, 1, MPI_INTEGER, ROOT,
     &     MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_BCAST_INIT(IV, 1, MPI_INTEGER, ROOT,
     &     MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IV(1), 77, 'bcast', MODE, ERRS)
!     reduce and allreduce
      IV(1) = RANK + 1
      IR(1) = -1
      IF (MODE .EQ. 2) CALL MPI_IREDUCE(IV, IR, 1, MPI_INTEGER,
     &     MPI_PROD, ROOT, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_REDUCE_INIT(IV, IR, 1, MPI_INTEGER,
     &     MPI_PROD, ROOT, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      K = 1
      DO I = 1, NP
         K = K * I
      END DO
      IF (RANK .EQ. ROOT) CALL EXPECTM(IR(1), K, 'reduce', MODE, ERRS)
      IR(1) = -1
      IF (MODE .EQ. 2) CALL MPI_IALLREDUCE(IV, IR, 1, MPI_INTEGER,
     &     MPI_MIN, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLREDUCE_INIT(IV, IR, 1, MPI_INTEGER,
     &     MPI_MIN, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IR(1), 1, 'allreduce', MODE, ERRS)
!     gather, scatter, allgather, alltoall
      IV(1) = RANK * 3
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 2) CALL MPI_IGATHER(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, ROOT, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_GATHER_INIT(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, ROOT, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      IF (RANK .EQ. ROOT) THEN
         DO I = 1, NP
            CALL EXPECTM(IR(I), (I - 1) * 3, 'gather', MODE, ERRS)
         END DO
      END IF
      DO I = 1, NP
         IV(I) = I * 11
      END DO
      IR(1) = -1
      IF (MODE .EQ. 2) CALL MPI_ISCATTER(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, ROOT, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_SCATTER_INIT(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, ROOT, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IR(1), (RANK + 1) * 11, 'scatter', MODE, ERRS)
      IV(1) = RANK + 5
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 2) CALL MPI_IALLGATHER(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLGATHER_INIT(IV, 1, MPI_INTEGER, IR,
     &     1, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      DO I = 1, NP
         CALL EXPECTM(IR(I), I + 4, 'allgather', MODE, ERRS)
      END DO
      DO I = 1, NP
         IV(I) = RANK * 8 + I
      END DO
      CALL CLEAR(IR, 64)
      IF (MODE .EQ. 2) CALL MPI_IALLTOALL(IV, 1, MPI_INTEGER, IR, 1,
     &     MPI_INTEGER, MPI_COMM_WORLD, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_ALLTOALL_INIT(IV, 1, MPI_INTEGER, IR,
     &     1, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      DO I = 1, NP
         CALL EXPECTM(IR(I), (I - 1) * 8 + RANK + 1, 'alltoall', MODE,
     &        ERRS)
      END DO
      END IF
      END DO
!     three nonblocking collectives in flight, completed by MPI_TESTALL
      IV(1) = RANK
      IV(2) = 0
      IF (RANK .EQ. 0) IV(2) = 42
      CALL MPI_IALLREDUCE(IV(1), IR(1), 1, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_IBCAST(IV(2), 1, MPI_INTEGER, 0, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_IBARRIER(MPI_COMM_WORLD, REQS(3), IERR)
      FLAG = .FALSE.
      DO WHILE (.NOT. FLAG)
         CALL MPI_TESTALL(3, REQS, FLAG, MPI_STATUSES_IGNORE, IERR)
      END DO
      CALL EXPECTM(IR(1), NP - 1, 'iallreduce in flight', 2, ERRS)
      CALL EXPECTM(IV(2), 42, 'ibcast in flight', 2, ERRS)
      DO I = 1, 3
         CALL EXPECTM(REQS(I), MPI_REQUEST_NULL, 'testall', 2, ERRS)
      END DO
!     two persistent collectives started together
      CALL MPI_BARRIER_INIT(MPI_COMM_WORLD, MPI_INFO_NULL, REQS(1),
     &     IERR)
      CALL MPI_ALLREDUCE_INIT(IV(1), IR(1), 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, MPI_INFO_NULL, REQS(2), IERR)
      DO K = 1, 2
         IV(1) = RANK * K
         CALL MPI_STARTALL(2, REQS, IERR)
         CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
         CALL EXPECTM(IR(1), K * NP * (NP - 1) / 2, 'startall', 3, ERRS)
      END DO
      CALL MPI_REQUEST_FREE(REQS(1), IERR)
      CALL MPI_REQUEST_FREE(REQS(2), IERR)
!     reduce_local and op_commutative
      DO I = 1, 3
         X(I) = I
         Y(I) = 10 * I
      END DO
      CALL MPI_REDUCE_LOCAL(X, Y, 3, MPI_DOUBLE_PRECISION, MPI_SUM,
     &     IERR)
      DO I = 1, 3
         IF (Y(I) .NE. 11 * I) THEN
            ERRS = ERRS + 1
            PRINT *, 'reduce_local', I, Y(I)
         END IF
      END DO
      CALL MPI_OP_COMMUTATIVE(MPI_SUM, COMMUTE, IERR)
      IF (.NOT. COMMUTE) ERRS = ERRS + 1
      CALL MPI_OP_CREATE(FIRST, .FALSE., OP, IERR)
      CALL MPI_OP_COMMUTATIVE(OP, COMMUTE, IERR)
      IF (COMMUTE) ERRS = ERRS + 1
!     x op y = x: the rank-order fold leaves rank 0's value
      IV(1) = RANK + 100
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, OP, MPI_COMM_WORLD,
     &     IERR)
      CALL EXPECTM(IR(1), 100, 'user op in rank order', 1, ERRS)
      CALL MPI_OP_FREE(OP, IERR)
      INCLUDE 'finish.inc'
      END
