! oxmpi-test: ranks=1,2,4
! The send modes and matched probes from Fortran 77, round a ring:
! MPI_SSEND, MPI_RSEND, MPI_BSEND through a buffer of MPI_PACK_SIZE
! plus MPI_BSEND_OVERHEAD (MPI_BUFFER_ATTACH, MPI_BUFFER_DETACH giving
! its size back), their nonblocking (MPI_ISSEND, MPI_IRSEND,
! MPI_IBSEND) and persistent forms (MPI_SEND_INIT, MPI_SSEND_INIT,
! MPI_RSEND_INIT, MPI_BSEND_INIT, MPI_RECV_INIT, started twice by
! MPI_STARTALL), MPI_MPROBE/MPI_MRECV and MPI_IMPROBE/MPI_IMRECV,
! MPI_SENDRECV_REPLACE, MPI_REQUEST_GET_STATUS (which leaves the request
! to its wait), MPI_GET_ELEMENTS(_X) of a partial item, and a status
! set by hand (MPI_STATUS_SET_ELEMENTS_X, MPI_STATUS_SET_CANCELLED,
! MPI_TEST_CANCELLED).
      INCLUDE 'expect.inc'

      PROGRAM FMODES
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, NEXT, PREV, I, K, ERRS, SZ, BSIZE, MSG
      INTEGER STATUS(MPI_STATUS_SIZE), STATS(MPI_STATUS_SIZE, 10)
      INTEGER REQS(10), SBUF(40), RBUF(40), PAIR, CNT
      INTEGER BUF(400)
      INTEGER(KIND=MPI_COUNT_KIND) CNTX
      LOGICAL FLAG
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
      DO I = 1, 40
         SBUF(I) = RANK * 1000 + I
      END DO
!     synchronous and ready sends (the receive posted first)
      CALL MPI_IRECV(RBUF, 4, MPI_INTEGER, PREV, 1, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_SSEND(SBUF, 4, MPI_INTEGER, NEXT, 1, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_WAIT(REQS(1), STATUS, IERR)
      CALL EXPECT(RBUF(4), PREV * 1000 + 4, 'ssend', ERRS)
      CALL MPI_IRECV(RBUF, 4, MPI_INTEGER, PREV, 2, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_RSEND(SBUF(2), 4, MPI_INTEGER, NEXT, 2, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_WAIT(REQS(1), STATUS, IERR)
      CALL EXPECT(RBUF(4), PREV * 1000 + 5, 'rsend', ERRS)
!     buffered sends: room for three messages of 4 ints
      CALL MPI_PACK_SIZE(4, MPI_INTEGER, MPI_COMM_WORLD, SZ, IERR)
      BSIZE = 3 * (SZ + MPI_BSEND_OVERHEAD)
      IF (BSIZE .GT. 1600) THEN
         ERRS = ERRS + 1
         PRINT *, 'pack_size ', SZ
         BSIZE = 1600
      END IF
      CALL MPI_BUFFER_ATTACH(BUF, BSIZE, IERR)
      CALL EXPECT(IERR, MPI_SUCCESS, 'buffer_attach', ERRS)
      CALL MPI_BSEND(SBUF(3), 4, MPI_INTEGER, NEXT, 3, MPI_COMM_WORLD,
     &     IERR)
      CALL MPI_IBSEND(SBUF(4), 4, MPI_INTEGER, NEXT, 4, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_RECV(RBUF, 4, MPI_INTEGER, PREV, 3, MPI_COMM_WORLD,
     &     STATUS, IERR)
      CALL EXPECT(RBUF(1), PREV * 1000 + 3, 'bsend', ERRS)
      CALL MPI_RECV(RBUF, 4, MPI_INTEGER, PREV, 4, MPI_COMM_WORLD,
     &     STATUS, IERR)
      CALL EXPECT(RBUF(1), PREV * 1000 + 4, 'ibsend', ERRS)
      CALL MPI_WAIT(REQS(2), STATUS, IERR)
!     nonblocking synchronous and ready sends
      CALL MPI_IRECV(RBUF, 4, MPI_INTEGER, PREV, 5, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_IRECV(RBUF(5), 4, MPI_INTEGER, PREV, 6, MPI_COMM_WORLD,
     &     REQS(2), IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_ISSEND(SBUF(5), 4, MPI_INTEGER, NEXT, 5, MPI_COMM_WORLD,
     &     REQS(3), IERR)
      CALL MPI_IRSEND(SBUF(6), 4, MPI_INTEGER, NEXT, 6, MPI_COMM_WORLD,
     &     REQS(4), IERR)
      CALL MPI_WAITALL(4, REQS, STATS, IERR)
      CALL EXPECT(RBUF(1), PREV * 1000 + 5, 'issend', ERRS)
      CALL EXPECT(RBUF(5), PREV * 1000 + 6, 'irsend', ERRS)
      CALL EXPECT(STATS(MPI_TAG, 2), 6, 'irsend status tag', ERRS)
!     persistent sends of every mode, started twice with new data; the
!     ready send's receive is posted (and a barrier passed) first
      DO K = 1, 4
         CALL MPI_RECV_INIT(RBUF(4 * K - 3), 4, MPI_INTEGER, PREV,
     &        10 + K, MPI_COMM_WORLD, REQS(K), IERR)
      END DO
      CALL MPI_SEND_INIT(SBUF, 4, MPI_INTEGER, NEXT, 11,
     &     MPI_COMM_WORLD, REQS(5), IERR)
      CALL MPI_SSEND_INIT(SBUF(5), 4, MPI_INTEGER, NEXT, 12,
     &     MPI_COMM_WORLD, REQS(6), IERR)
      CALL MPI_BSEND_INIT(SBUF(9), 4, MPI_INTEGER, NEXT, 13,
     &     MPI_COMM_WORLD, REQS(7), IERR)
      CALL MPI_RSEND_INIT(SBUF(13), 4, MPI_INTEGER, NEXT, 14,
     &     MPI_COMM_WORLD, REQS(8), IERR)
      DO I = 1, 2
         DO K = 1, 16
            SBUF(K) = RANK * 1000 + 100 * I + K
            RBUF(K) = -1
         END DO
         CALL MPI_STARTALL(4, REQS, IERR)
         CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
         CALL MPI_STARTALL(4, REQS(5), IERR)
         CALL MPI_WAITALL(8, REQS, STATS, IERR)
         DO K = 1, 16
            CALL EXPECT(RBUF(K), PREV * 1000 + 100 * I + K,
     &           'persistent sends', ERRS)
         END DO
      END DO
      DO K = 1, 8
         CALL MPI_REQUEST_FREE(REQS(K), IERR)
      END DO
      CALL MPI_BUFFER_DETACH(BUF, SZ, IERR)
      CALL EXPECT(SZ, BSIZE, 'buffer_detach size', ERRS)
!     matched probes: a message taken out of matching, then received
      CALL MPI_ISEND(SBUF, 3, MPI_INTEGER, NEXT, 20, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_MPROBE(PREV, 20, MPI_COMM_WORLD, MSG, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      CALL EXPECT(CNT, 3, 'mprobe count', ERRS)
      CALL EXPECT(STATUS(MPI_SOURCE), PREV, 'mprobe source', ERRS)
      CALL MPI_MRECV(RBUF, 3, MPI_INTEGER, MSG, STATUS, IERR)
      CALL EXPECT(MSG, MPI_MESSAGE_NULL, 'mrecv message', ERRS)
      CALL EXPECT(RBUF(3), SBUF(3) - RANK * 1000 + PREV * 1000,
     &     'mrecv', ERRS)
      CALL MPI_WAIT(REQS(1), STATUS, IERR)
      CALL MPI_ISEND(SBUF, 2, MPI_INTEGER, NEXT, 21, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      FLAG = .FALSE.
      DO WHILE (.NOT. FLAG)
         CALL MPI_IMPROBE(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, FLAG,
     &        MSG, STATUS, IERR)
      END DO
      CALL EXPECT(STATUS(MPI_SOURCE), PREV, 'improbe source', ERRS)
      CALL MPI_IMRECV(RBUF, 2, MPI_INTEGER, MSG, REQS(2), IERR)
      CALL MPI_WAITALL(2, REQS, STATS, IERR)
      CALL EXPECT(RBUF(2), SBUF(2) - RANK * 1000 + PREV * 1000,
     &     'imrecv', ERRS)
      CALL MPI_GET_COUNT(STATS(1, 2), MPI_INTEGER, CNT, IERR)
      CALL EXPECT(CNT, 2, 'imrecv count', ERRS)
!     sendrecv_replace: two ints go right, the left one's come back
      RBUF(1) = RANK
      RBUF(2) = -RANK
      CALL MPI_SENDRECV_REPLACE(RBUF, 2, MPI_INTEGER, NEXT, 30, PREV,
     &     30, MPI_COMM_WORLD, STATUS, IERR)
      CALL EXPECT(RBUF(1), PREV, 'sendrecv_replace', ERRS)
      CALL EXPECT(RBUF(2), -PREV, 'sendrecv_replace', ERRS)
!     request_get_status leaves the request active for its wait
      CALL MPI_IRECV(RBUF, 1, MPI_INTEGER, PREV, 31, MPI_COMM_WORLD,
     &     REQS(1), IERR)
      CALL MPI_SEND(SBUF, 1, MPI_INTEGER, NEXT, 31, MPI_COMM_WORLD,
     &     IERR)
      FLAG = .FALSE.
      DO WHILE (.NOT. FLAG)
         CALL MPI_REQUEST_GET_STATUS(REQS(1), FLAG, STATUS, IERR)
      END DO
      CALL EXPECT(STATUS(MPI_SOURCE), PREV, 'request_get_status', ERRS)
      IF (REQS(1) .EQ. MPI_REQUEST_NULL) THEN
         ERRS = ERRS + 1
         PRINT *, 'request_get_status freed the request'
      END IF
      CALL MPI_WAIT(REQS(1), STATUS, IERR)
      CALL EXPECT(REQS(1), MPI_REQUEST_NULL, 'wait after get_status',
     &     ERRS)
!     elements of a partial item: 3 ints into pairs
      CALL MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, PAIR, IERR)
      CALL MPI_TYPE_COMMIT(PAIR, IERR)
      CALL MPI_SENDRECV(SBUF, 3, MPI_INTEGER, NEXT, 32, RBUF, 2, PAIR,
     &     PREV, 32, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, PAIR, CNT, IERR)
      CALL EXPECT(CNT, MPI_UNDEFINED, 'get_count of a partial pair',
     &     ERRS)
      CALL MPI_GET_ELEMENTS(STATUS, PAIR, CNT, IERR)
      CALL EXPECT(CNT, 3, 'get_elements', ERRS)
      CALL MPI_GET_ELEMENTS_X(STATUS, PAIR, CNTX, IERR)
      CALL EXPECT(INT(CNTX), 3, 'get_elements_x', ERRS)
      CALL MPI_TEST_CANCELLED(STATUS, FLAG, IERR)
      IF (FLAG) THEN
         ERRS = ERRS + 1
         PRINT *, 'a received message said cancelled'
      END IF
!     a status set by hand
      CNTX = 6
      CALL MPI_STATUS_SET_ELEMENTS_X(STATUS, MPI_INTEGER, CNTX, IERR)
      CALL MPI_GET_COUNT(STATUS, PAIR, CNT, IERR)
      CALL EXPECT(CNT, 3, 'status_set_elements_x', ERRS)
      CALL MPI_STATUS_SET_CANCELLED(STATUS, .TRUE., IERR)
      CALL MPI_TEST_CANCELLED(STATUS, FLAG, IERR)
      IF (.NOT. FLAG) THEN
         ERRS = ERRS + 1
         PRINT *, 'status_set_cancelled did not take'
      END IF
      CALL MPI_TYPE_FREE(PAIR, IERR)
      INCLUDE 'finish.inc'
      END
