! The mpi module's interfaces check arguments: a REAL count is a
! compile-time error (tools/test_launcher.py expects mpif90 to refuse
! this program).
program use_mpi_mismatch
  use mpi
  implicit none
  integer :: ierr, buf(4)
  real :: count
  count = 4
  call MPI_INIT(ierr)
  call MPI_SEND(buf, count, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
end program use_mpi_mismatch
