! oxmpi-test: ranks=1,2,3,4
! The predefined reduction operators on Fortran data from Fortran 77,
! each result against one computed here with the Fortran operators and
! intrinsics: SUM, PROD, MAX, MIN on INTEGER, INTEGER*1, *2 and *8,
! REAL, REAL*8 (as MPI_REAL8 and MPI_DOUBLE_PRECISION), COMPLEX and
! DOUBLE COMPLEX (SUM, PROD); BAND, BOR, BXOR on INTEGER and INTEGER*8
! (IAND, IOR, IEOR); LAND, LOR, LXOR on LOGICAL as gfortran stores it;
! MINLOC and MAXLOC on MPI_2REAL and MPI_2DOUBLE_PRECISION pairs (ties
! to the lower index); and MPI_ERR_OP for a bit operator on REAL.
      INCLUDE 'expect.inc'

      PROGRAM FOPS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, ERRS, RANK, NP, I, IV, IR, IA, IO, IX, IP, ICLASS
      INTEGER*1 I1, R1
      INTEGER*2 I2, R2
      INTEGER*8 I8, R8, X8
      REAL RV, RR, RS, P2(2), Q2(2)
      DOUBLE PRECISION DV, DR, DP, D2(2), E2(2)
      COMPLEX CV, CR, CP
      DOUBLE COMPLEX ZV, ZR, ZS
      LOGICAL L, LR, LA, LO, LX
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
!     INTEGER: rank + 1 from each
      IV = RANK + 1
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, NP * (NP + 1) / 2, 'INTEGER SUM', ERRS)
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_PROD,
     &     MPI_COMM_WORLD, IERR)
      IP = 1
      DO I = 1, NP
         IP = IP * I
      END DO
      CALL EXPECT(IR, IP, 'INTEGER PROD', ERRS)
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_MAX,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, NP, 'INTEGER MAX', ERRS)
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_MIN,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, 1, 'INTEGER MIN', ERRS)
!     bits of 6 * (rank + 1) + 1
      IV = 6 * (RANK + 1) + 1
      IA = -1
      IO = 0
      IX = 0
      DO I = 1, NP
         IA = IAND(IA, 6 * I + 1)
         IO = IOR(IO, 6 * I + 1)
         IX = IEOR(IX, 6 * I + 1)
      END DO
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_BAND,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, IA, 'INTEGER BAND', ERRS)
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_BOR,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, IO, 'INTEGER BOR', ERRS)
      CALL MPI_ALLREDUCE(IV, IR, 1, MPI_INTEGER, MPI_BXOR,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(IR, IX, 'INTEGER BXOR', ERRS)
!     INTEGER*1, *2, *8
      I1 = INT(RANK + 1, 1)
      CALL MPI_ALLREDUCE(I1, R1, 1, MPI_INTEGER1, MPI_MAX,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(INT(R1), NP, 'INTEGER*1 MAX', ERRS)
      I2 = INT(-100 * RANK, 2)
      CALL MPI_ALLREDUCE(I2, R2, 1, MPI_INTEGER2, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      CALL EXPECT(INT(R2), -50 * NP * (NP - 1), 'INTEGER*2 SUM', ERRS)
      I8 = 2_8**40 + RANK
      CALL MPI_ALLREDUCE(I8, R8, 1, MPI_INTEGER8, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (R8 .NE. NP * 2_8**40 + NP * (NP - 1) / 2) THEN
         ERRS = ERRS + 1
         PRINT *, 'INTEGER*8 SUM ', R8
      END IF
      X8 = 0
      DO I = 0, NP - 1
         X8 = IEOR(X8, 2_8**40 + I)
      END DO
      CALL MPI_ALLREDUCE(I8, R8, 1, MPI_INTEGER8, MPI_BXOR,
     &     MPI_COMM_WORLD, IERR)
      IF (R8 .NE. X8) THEN
         ERRS = ERRS + 1
         PRINT *, 'INTEGER*8 BXOR ', R8, X8
      END IF
!     REAL and REAL*8 (halves and quarters add and multiply exactly)
      RV = RANK + 0.5
      CALL MPI_ALLREDUCE(RV, RR, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD,
     &     IERR)
      RS = 0
      DO I = 0, NP - 1
         RS = RS + (I + 0.5)
      END DO
      IF (RR .NE. RS) THEN
         ERRS = ERRS + 1
         PRINT *, 'REAL SUM ', RR, RS
      END IF
      CALL MPI_ALLREDUCE(RV, RR, 1, MPI_REAL, MPI_MIN, MPI_COMM_WORLD,
     &     IERR)
      IF (RR .NE. 0.5) ERRS = ERRS + 1
      DV = (RANK + 1) * 0.5D0
      DP = 1
      DO I = 1, NP
         DP = DP * (I * 0.5D0)
      END DO
      CALL MPI_ALLREDUCE(DV, DR, 1, MPI_REAL8, MPI_PROD,
     &     MPI_COMM_WORLD, IERR)
      IF (DR .NE. DP) THEN
         ERRS = ERRS + 1
         PRINT *, 'REAL*8 PROD ', DR, DP
      END IF
      CALL MPI_ALLREDUCE(DV, DR, 1, MPI_DOUBLE_PRECISION, MPI_MAX,
     &     MPI_COMM_WORLD, IERR)
      IF (DR .NE. NP * 0.5D0) ERRS = ERRS + 1
!     COMPLEX product of (rank + 1) + i, DOUBLE COMPLEX sum
      CV = CMPLX(RANK + 1, 1)
      CP = (1.0, 0.0)
      DO I = 1, NP
         CP = CP * CMPLX(I, 1)
      END DO
      CALL MPI_ALLREDUCE(CV, CR, 1, MPI_COMPLEX, MPI_PROD,
     &     MPI_COMM_WORLD, IERR)
      IF (CR .NE. CP) THEN
         ERRS = ERRS + 1
         PRINT *, 'COMPLEX PROD ', CR, CP
      END IF
      ZV = DCMPLX(RANK * 0.25D0, -RANK)
      ZS = (0.0D0, 0.0D0)
      DO I = 0, NP - 1
         ZS = ZS + DCMPLX(I * 0.25D0, -I)
      END DO
      CALL MPI_ALLREDUCE(ZV, ZR, 1, MPI_DOUBLE_COMPLEX, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (ZR .NE. ZS) THEN
         ERRS = ERRS + 1
         PRINT *, 'DOUBLE COMPLEX SUM ', ZR, ZS
      END IF
!     LOGICAL: all but rank 1 true; only the last true; the even ranks
      LA = .TRUE.
      LO = .FALSE.
      LX = .FALSE.
      DO I = 0, NP - 1
         LA = LA .AND. I .NE. 1
         LO = LO .OR. I .EQ. NP - 1
         LX = LX .NEQV. MOD(I, 2) .EQ. 0
      END DO
      L = RANK .NE. 1
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LAND,
     &     MPI_COMM_WORLD, IERR)
      IF (LR .NEQV. LA) ERRS = ERRS + 1
      L = RANK .EQ. NP - 1
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LOR,
     &     MPI_COMM_WORLD, IERR)
      IF (LR .NEQV. LO) ERRS = ERRS + 1
      L = MOD(RANK, 2) .EQ. 0
      CALL MPI_ALLREDUCE(L, LR, 1, MPI_LOGICAL, MPI_LXOR,
     &     MPI_COMM_WORLD, IERR)
      IF (LR .NEQV. LX) THEN
         ERRS = ERRS + 1
         PRINT *, 'LOGICAL LXOR ', LR, LX
      END IF
!     pairs (value, index): values 3 * rank mod 4, ties to the lower
!     index
      P2(1) = MOD(3 * RANK, 4)
      P2(2) = RANK
      CALL MPI_ALLREDUCE(P2, Q2, 1, MPI_2REAL, MPI_MINLOC,
     &     MPI_COMM_WORLD, IERR)
      IF (Q2(1) .NE. 0 .OR. Q2(2) .NE. 0) THEN
         ERRS = ERRS + 1
         PRINT *, '2REAL MINLOC ', Q2
      END IF
      D2(1) = MOD(RANK, 2)
      D2(2) = RANK
      CALL MPI_ALLREDUCE(D2, E2, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC,
     &     MPI_COMM_WORLD, IERR)
      IF (NP .EQ. 1) THEN
         IF (E2(1) .NE. 0 .OR. E2(2) .NE. 0) ERRS = ERRS + 1
      ELSE IF (E2(1) .NE. 1 .OR. E2(2) .NE. 1) THEN
         ERRS = ERRS + 1
         PRINT *, '2DOUBLE_PRECISION MAXLOC ', E2
      END IF
!     no bit operators on REAL
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_ALLREDUCE(RV, RR, 1, MPI_REAL, MPI_BAND,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_ERROR_CLASS(IERR, ICLASS, I)
      CALL EXPECT(ICLASS, MPI_ERR_OP, 'BAND on REAL', ERRS)
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL,
     &     IERR)
      INCLUDE 'finish.inc'
      END
