! The mpi module's interfaces: a routine with choice buffers called by
! keyword, its arguments in another order than the binding's (an
! explicit interface allows that; MPICH's module has none for such
! routines). Built by mpif90 in tools/test_launcher.py, it prints each
! rank's neighbour in a ring.
program use_mpi_keywords
  use mpi
  implicit none
  integer :: ierr, rank, np, got, status(MPI_STATUS_SIZE)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call MPI_SENDRECV(recvbuf=got, recvcount=1, recvtype=MPI_INTEGER, source=mod(rank + np - 1, np), &
                    recvtag=0, sendbuf=rank, sendcount=1, sendtype=MPI_INTEGER, dest=mod(rank + 1, np), &
                    sendtag=0, comm=MPI_COMM_WORLD, status=status, ierror=ierr)
  print '(a,i0,a,i0)', 'rank ', rank, ' got ', got
  call MPI_FINALIZE(ierr)
end program use_mpi_keywords
