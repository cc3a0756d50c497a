C     Used by tools/test_launcher.py: as ended_output.c, in Fortran: every
C     rank writes a line to unit 6, rank 0 one to a file of its own
C     (unit 10, argv(1)), and rank 0 then ends the job by MPI_ABORT while
C     the others wait in a barrier.
      PROGRAM ENDED
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK
      CHARACTER*256 NAME
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      WRITE (6, '(A,I0,A)') 'rank ', RANK, ' wrote this'
      IF (RANK .EQ. 0) THEN
         CALL GETARG(1, NAME)
         OPEN (10, FILE=NAME)
         WRITE (10, '(A)') 'rank 0 wrote this to unit 10'
      END IF
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_FINALIZE(IERR)
      END
