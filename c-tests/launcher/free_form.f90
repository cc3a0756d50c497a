! A free-form Fortran program that includes mpif.h, which must read as
! free form as well as fixed (as MPICH's does): built by mpif90 in
! tools/test_launcher.py, it prints the ranks and the sum of their ranks.
program free_form
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, total
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  call MPI_ALLREDUCE(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'ranks ', np, ' sum ', total
  call MPI_FINALIZE(ierr)
end program free_form
