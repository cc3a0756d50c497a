! oxmpi-test: ranks=1,2,3,4
! Collectives from Fortran 77: bcast, reduce, allreduce with MPI_IN_PLACE,
! gather(v), scatter, allgather, alltoall, scan, a user operation
! (MPI_OP_CREATE with a Fortran function), MAXLOC on MPI_2INTEGER, and
! MPI_REDUCE_SCATTER_BLOCK, a REAL*16 sum; results against values computed
! here.
!     Composition of affine maps x -> M x + C (associative, not
!     commutative): INOUT becomes INOUT after IN.
      SUBROUTINE MYPROD(INV, INOUT, LEN, DTYPE)
      INTEGER LEN, DTYPE, I
      DOUBLE PRECISION INV(2, LEN), INOUT(2, LEN)
      DO I = 1, LEN
         INOUT(2, I) = INOUT(1, I) * INV(2, I) + INOUT(2, I)
         INOUT(1, I) = INOUT(1, I) * INV(1, I)
      END DO
      END

      PROGRAM FCOLL
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      EXTERNAL MYPROD
      INTEGER IERR, RANK, NP, I, J, ERRS, ROOT, OP
      INTEGER IV(64), IR(64), COUNTS(8), DISPLS(8), PAIR(2), PR(2)
      DOUBLE PRECISION X(4), Y(4), EXPECT, F(2, 4), G(2, 4), EM
      REAL*16 Q(2), QR(2)
      LOGICAL L, LR
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      DO ROOT = 0, NP - 1
         IV(1) = -1
         IF (RANK .EQ. ROOT) IV(1) = ROOT + 100
         CALL MPI_BCAST(IV, 1, MPI_INTEGER, ROOT, MPI_COMM_WORLD, IERR)
         IF (IV(1) .NE. ROOT + 100) ERRS = ERRS + 1
         IV(1) = RANK + 1
         IR(1) = 0
         CALL MPI_REDUCE(IV, IR, 1, MPI_INTEGER, MPI_SUM, ROOT,
     &        MPI_COMM_WORLD, IERR)
         IF (RANK .EQ. ROOT .AND. IR(1) .NE. NP * (NP + 1) / 2) THEN
            ERRS = ERRS + 1
            PRINT *, 'reduce ', IR(1)
         END IF
      END DO
!     allreduce in place on doubles
      DO I = 1, 4
         X(I) = RANK * 1.5D0 + I
      END DO
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, X, 4, MPI_DOUBLE_PRECISION,
     &     MPI_MAX, MPI_COMM_WORLD, IERR)
      DO I = 1, 4
         IF (X(I) .NE. (NP - 1) * 1.5D0 + I) ERRS = ERRS + 1
      END DO
!     REAL*16 is IEEE binary128: 2**-80 survives a sum only there
      Q(1) = (RANK + 1) * 2.0D0**(-80)
      Q(1) = Q(1) + 1
      Q(2) = -RANK
      CALL MPI_ALLREDUCE(Q, QR, 2, MPI_REAL16, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (QR(1) - NP .NE. NP * (NP + 1) / 2 * 2.0D0**(-80))
     &     ERRS = ERRS + 1
      IF (QR(2) .NE. -NP * (NP - 1) / 2) ERRS = ERRS + 1
!     logical and
      L = RANK .LT. NP
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LAND,
     &     MPI_COMM_WORLD, IERR)
      IF (.NOT. LR) ERRS = ERRS + 1
      L = RANK .EQ. 0
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LOR,
     &     MPI_COMM_WORLD, IERR)
      IF (.NOT. LR) ERRS = ERRS + 1
!     gather, gatherv, scatter, allgather, alltoall
      IV(1) = RANK * 10
      CALL MPI_GATHER(IV, 1, MPI_INTEGER, IR, 1, MPI_INTEGER, 0,
     &     MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, NP
            IF (IR(I) .NE. (I - 1) * 10) ERRS = ERRS + 1
         END DO
      END IF
      DO I = 1, NP
         COUNTS(I) = I
         DISPLS(I) = (I - 1) * I / 2
      END DO
      DO I = 1, RANK + 1
         IV(I) = RANK
      END DO
      CALL MPI_GATHERV(IV, RANK + 1, MPI_INTEGER, IR, COUNTS, DISPLS,
     &     MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, NP
            DO J = 1, I
               IF (IR(DISPLS(I) + J) .NE. I - 1) ERRS = ERRS + 1
            END DO
         END DO
      END IF
      DO I = 1, NP
         IV(I) = I * 7
      END DO
      CALL MPI_SCATTER(IV, 1, MPI_INTEGER, IR, 1, MPI_INTEGER, 0,
     &     MPI_COMM_WORLD, IERR)
      IF (IR(1) .NE. (RANK + 1) * 7) ERRS = ERRS + 1
      IV(1) = RANK
      IV(2) = -RANK
      CALL MPI_ALLGATHER(IV, 2, MPI_INTEGER, IR, 2, MPI_INTEGER,
     &     MPI_COMM_WORLD, IERR)
      DO I = 1, NP
         IF (IR(2*I-1) .NE. I - 1 .OR. IR(2*I) .NE. 1 - I)
     &        ERRS = ERRS + 1
      END DO
      DO I = 1, NP
         IV(I) = RANK * 100 + I - 1
      END DO
      CALL MPI_ALLTOALL(IV, 1, MPI_INTEGER, IR, 1, MPI_INTEGER,
     &     MPI_COMM_WORLD, IERR)
      DO I = 1, NP
         IF (IR(I) .NE. (I - 1) * 100 + RANK) ERRS = ERRS + 1
      END DO
!     scan
      IV(1) = RANK + 1
      CALL MPI_SCAN(IV, IR, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD,
     &     IERR)
      IF (IR(1) .NE. (RANK + 1) * (RANK + 2) / 2) ERRS = ERRS + 1
!     reduce_scatter_block
      DO I = 1, NP
         IV(I) = I
      END DO
      CALL MPI_REDUCE_SCATTER_BLOCK(IV, IR, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (IR(1) .NE. (RANK + 1) * NP) ERRS = ERRS + 1
!     maxloc on pairs
      PAIR(1) = MOD(RANK * 7, 5)
      PAIR(2) = RANK
      CALL MPI_ALLREDUCE(PAIR, PR, 1, MPI_2INTEGER, MPI_MAXLOC,
     &     MPI_COMM_WORLD, IERR)
      J = -1
      DO I = 0, NP - 1
         IF (MOD(I * 7, 5) .GT. J) THEN
            J = MOD(I * 7, 5)
            ROOT = I
         END IF
      END DO
      IF (PR(1) .NE. J .OR. PR(2) .NE. ROOT) ERRS = ERRS + 1
!     a user operation, not commutative: applied in rank order
      CALL MPI_OP_CREATE(MYPROD, .FALSE., OP, IERR)
      DO I = 1, 4
         F(1, I) = RANK + 2.0D0
         F(2, I) = I
      END DO
      CALL MPI_ALLREDUCE(F, G, 4, MPI_2DOUBLE_PRECISION, OP,
     &     MPI_COMM_WORLD, IERR)
      DO I = 1, 4
         EM = 1.0D0
         EXPECT = 0.0D0
         DO J = 0, NP - 1
            EM = EM * (J + 2.0D0)
            EXPECT = (J + 2.0D0) * EXPECT + I
         END DO
         IF (G(1, I) .NE. EM .OR. G(2, I) .NE. EXPECT) THEN
            ERRS = ERRS + 1
            PRINT *, 'user op ', G(1, I), G(2, I), ' expected ', EM,
     &           EXPECT
         END IF
      END DO
      CALL MPI_OP_FREE(OP, IERR)
      IF (OP .NE. MPI_OP_NULL) ERRS = ERRS + 1
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      INCLUDE 'finish.inc'
      END
