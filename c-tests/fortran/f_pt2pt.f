! oxmpi-test: ranks=1,2,4
! Point-to-point from Fortran 77: blocking and nonblocking, status
! fields, MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE, probe, get_count,
! sendrecv, isendrecv(_replace), MPI_PROC_NULL, errors returned under
! MPI_ERRORS_RETURN;
! WAITANY/TESTANY/WAITSOME/TESTSOME number the requests from 1.
      PROGRAM FPT2PT
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, NEXT, PREV, I, ERRS, CNT
      INTEGER STATUS(MPI_STATUS_SIZE), STATS(MPI_STATUS_SIZE, 2)
      INTEGER REQS(2), ECLASS, IDX, OUTCNT, IDXS(2), DONE
      LOGICAL LFLAG
      INTEGER SBUF(100), RBUF(100)
      DOUBLE PRECISION D(10), DR(10)
      ERRS = 0
      CALL MPI_INIT(IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
      DO I = 1, 100
         SBUF(I) = RANK * 1000 + I
         RBUF(I) = -1
      END DO
!     ring with isend/irecv, waitall with statuses
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 7, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_ISEND(SBUF, 100, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, STATS, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
      IF (STATS(MPI_SOURCE, 1) .NE. PREV) THEN
         ERRS = ERRS + 1
         PRINT *, 'waitall status source ', STATS(MPI_SOURCE, 1)
      END IF
      IF (STATS(MPI_TAG, 1) .NE. 7) ERRS = ERRS + 1
      CALL MPI_GET_COUNT(STATS(1, 1), MPI_INTEGER, CNT, IERR)
      IF (CNT .NE. 100) THEN
         ERRS = ERRS + 1
         PRINT *, 'get_count ', CNT
      END IF
      DO I = 1, 100
         IF (RBUF(I) .NE. PREV * 1000 + I) ERRS = ERRS + 1
      END DO
      IF (REQS(1) .NE. MPI_REQUEST_NULL) ERRS = ERRS + 1
!     the index of the receive, request 1, is 1 in Fortran: WAITANY
!     and TESTANY (after the send is done), WAITSOME and TESTSOME
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, NEXT, 10, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAIT(REQS(2), STATUS, IERR)
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 10, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
      IF (IDX .NE. 1 .OR. STATUS(MPI_SOURCE) .NE. PREV) THEN
         ERRS = ERRS + 1
         PRINT *, 'waitany index ', IDX
      END IF
      CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
      IF (IDX .NE. MPI_UNDEFINED) ERRS = ERRS + 1
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, NEXT, 11, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAIT(REQS(2), STATUS, IERR)
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 11, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      LFLAG = .FALSE.
      DO WHILE (.NOT. LFLAG)
         CALL MPI_TESTANY(2, REQS, IDX, LFLAG, STATUS, IERR)
      END DO
      IF (IDX .NE. 1) THEN
         ERRS = ERRS + 1
         PRINT *, 'testany index ', IDX
      END IF
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, NEXT, 12, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAIT(REQS(2), STATUS, IERR)
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 12, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAITSOME(2, REQS, OUTCNT, IDXS, STATS, IERR)
      IF (OUTCNT .NE. 1 .OR. IDXS(1) .NE. 2 .OR.
     &     STATS(MPI_TAG, 1) .NE. 12) THEN
         ERRS = ERRS + 1
         PRINT *, 'waitsome ', OUTCNT, ' index ', IDXS(1)
      END IF
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 13, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, NEXT, 13, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      DONE = 0
      DO WHILE (DONE .LT. 2)
         CALL MPI_TESTSOME(2, REQS, OUTCNT, IDXS, STATS, IERR)
         DO I = 1, OUTCNT
            IF (IDXS(I) .LT. 1 .OR. IDXS(I) .GT. 2) ERRS = ERRS + 1
            IF (IDXS(I) .EQ. 1 .AND. STATS(MPI_TAG, I) .NE. 13) THEN
               ERRS = ERRS + 1
               PRINT *, 'testsome: the receive has tag ',
     &              STATS(MPI_TAG, I)
            END IF
            DONE = DONE + 1
         END DO
      END DO
!     the same with MPI_STATUSES_IGNORE
      CALL MPI_IRECV(RBUF, 100, MPI_INTEGER, PREV, 8, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_ISEND(SBUF, 50, MPI_INTEGER, NEXT, 8, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
      IF (IERR .NE. MPI_SUCCESS) ERRS = ERRS + 1
!     blocking doubles, probe first, status ignored on receive
      DO I = 1, 10
         D(I) = RANK + I / 4.0D0
      END DO
      IF (RANK .EQ. 0) THEN
         CALL MPI_SEND(D, 10, MPI_DOUBLE_PRECISION, NEXT, 9,
     &        MPI_COMM_WORLD, IERR)
         CALL MPI_PROBE(PREV, 9, MPI_COMM_WORLD, STATUS, IERR)
         CALL MPI_GET_COUNT(STATUS, MPI_DOUBLE_PRECISION, CNT, IERR)
         IF (CNT .NE. 10) ERRS = ERRS + 1
         CALL MPI_RECV(DR, 10, MPI_DOUBLE_PRECISION, PREV, 9,
     &        MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      ELSE
         CALL MPI_RECV(DR, 10, MPI_DOUBLE_PRECISION, PREV, 9,
     &        MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
         CALL MPI_SEND(D, 10, MPI_DOUBLE_PRECISION, NEXT, 9,
     &        MPI_COMM_WORLD, IERR)
      END IF
      DO I = 1, 10
         IF (DR(I) .NE. PREV + I / 4.0D0) ERRS = ERRS + 1
      END DO
!     sendrecv with MPI_ANY_SOURCE and the status it fills
      CALL MPI_SENDRECV(RANK, 1, MPI_INTEGER, NEXT, 3, CNT, 1,
     &     MPI_INTEGER, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, STATUS, IERR)
      IF (CNT .NE. PREV .OR. STATUS(MPI_SOURCE) .NE. PREV) THEN
         ERRS = ERRS + 1
         PRINT *, 'sendrecv got ', CNT, ' from ', STATUS(MPI_SOURCE)
      END IF
!     isendrecv (MPI 4.0): one request, the receive's status;
!     isendrecv_replace swaps the neighbours' values in place
      CALL MPI_ISENDRECV(RANK, 1, MPI_INTEGER, NEXT, 4, CNT, 1,
     &     MPI_INTEGER, PREV, 4, MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_WAIT(REQS(1), STATUS, IERR)
      IF (CNT .NE. PREV .OR. STATUS(MPI_SOURCE) .NE. PREV .OR.
     &     STATUS(MPI_TAG) .NE. 4 .OR. IERR .NE. MPI_SUCCESS) THEN
         ERRS = ERRS + 1
         PRINT *, 'isendrecv got ', CNT, ' from ', STATUS(MPI_SOURCE)
      END IF
      CNT = RANK
      CALL MPI_ISENDRECV_REPLACE(CNT, 1, MPI_INTEGER, NEXT, 5, PREV,
     &     5, MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_WAIT(REQS(1), MPI_STATUS_IGNORE, IERR)
      IF (CNT .NE. PREV) THEN
         ERRS = ERRS + 1
         PRINT *, 'isendrecv_replace got ', CNT
      END IF
!     MPI_PROC_NULL: returns at once, source MPI_PROC_NULL
      CALL MPI_RECV(RBUF, 1, MPI_INTEGER, MPI_PROC_NULL, 0,
     &     MPI_COMM_WORLD, STATUS, IERR)
      IF (STATUS(MPI_SOURCE) .NE. MPI_PROC_NULL) ERRS = ERRS + 1
!     iprobe finds nothing
      CALL MPI_IPROBE(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, LFLAG,
     &     STATUS, IERR)
      IF (LFLAG) THEN
         ERRS = ERRS + 1
         PRINT *, 'iprobe found a message no rank sent'
      END IF
!     errors come back as codes under MPI_ERRORS_RETURN
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_SEND(SBUF, 1, MPI_INTEGER, NP, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_ERROR_CLASS(IERR, ECLASS, I)
      IF (ECLASS .NE. MPI_ERR_RANK) THEN
         ERRS = ERRS + 1
         PRINT *, 'bad rank gave class ', ECLASS
      END IF
      CALL MPI_SEND(SBUF, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_ERROR_CLASS(IERR, ECLASS, I)
      IF (ECLASS .NE. MPI_ERR_COUNT) ERRS = ERRS + 1
      CALL MPI_SEND(SBUF, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_ERROR_CLASS(IERR, ECLASS, I)
      IF (ECLASS .NE. MPI_ERR_TYPE) ERRS = ERRS + 1
      INCLUDE 'finish.inc'
      END
