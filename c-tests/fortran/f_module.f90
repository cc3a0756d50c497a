! oxmpi-test: ranks=1,2,4
! The mpi module (use mpi) from free-form Fortran: its constants and
! sentinels are mpif.h's, and its explicit interfaces take keyword
! arguments and choice buffers of any type and rank (a scalar, a 2-D
! array, a string, a derived type's members); point-to-point with
! status, MPI_IN_PLACE, MPI_BOTTOM with a struct type of
! MPI_ADDRESS_KIND displacements, strings out (MPI_GET_PROCESSOR_NAME),
! MPI_WTIME, MPI_SIZEOF, and an error returned under MPI_ERRORS_RETURN.
include 'expect.inc'

program f_module
  use mpi
  implicit none
  type pair
    integer :: key
    double precision :: value
  end type pair
  integer :: ierr, rank, np, next, prev, i, errs, one, got, eclass, namelen
  integer :: status(MPI_STATUS_SIZE), reqs(2), grid(3, 4), blocks(2), types(2), pairtype
  integer(kind=MPI_ADDRESS_KIND) :: addr(2), disps(2)
  double precision :: sbuf(10), rbuf(10), t0
  character(len=8) :: word
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  type(pair) :: p
  integer(1) :: i1
  integer(2) :: i2(3)
  integer(8) :: i8
  real :: x
  complex :: z(2)
  logical :: flag
  character :: c
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(comm=MPI_COMM_WORLD, size=np, ierror=ierr)
  t0 = MPI_WTIME()
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! a ring (keyword arguments to routines with choice buffers, which
  ! MPICH's module has no interfaces for, are tools/test_launcher.py's)
  sbuf = [(rank * 100 + i, i = 1, 10)]
  rbuf = -1
  call MPI_SENDRECV(sbuf, 10, MPI_DOUBLE_PRECISION, next, 3, rbuf, 10, MPI_DOUBLE_PRECISION, prev, 3, &
                    MPI_COMM_WORLD, status, ierr)
  call expect(ierr, MPI_SUCCESS, 'sendrecv', errs)
  call expect(status(MPI_SOURCE), prev, 'sendrecv status source', errs)
  call expect(status(MPI_TAG), 3, 'sendrecv status tag', errs)
  call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, got, ierr)
  call expect(got, 10, 'get_count', errs)
  do i = 1, 10
    if (rbuf(i) /= prev * 100 + i) call expect(int(rbuf(i)), prev * 100 + i, 'sendrecv data', errs)
  end do

  ! a scalar buffer, nonblocking, statuses ignored
  one = rank
  got = -1
  call MPI_IRECV(got, 1, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(one, 1, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call expect(got, prev, 'scalar isend/irecv', errs)
  call expect(reqs(1), MPI_REQUEST_NULL, 'request freed', errs)

  ! a 2-D array reduced in place
  grid = rank + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, grid, size(grid), MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect(minval(grid), np * (np + 1) / 2, 'allreduce in place (min)', errs)
  call expect(maxval(grid), np * (np + 1) / 2, 'allreduce in place (max)', errs)

  ! a string
  word = 'nothing'
  if (rank == 0) word = 'fortran'
  call MPI_BCAST(word, len(word), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (word /= 'fortran') call expect(0, 1, 'bcast of a string: '//word, errs)

  ! a derived type's members by absolute address from MPI_BOTTOM
  p = pair(-1, -1d0)
  if (rank == 0) p = pair(42, 2.5d0)
  call MPI_GET_ADDRESS(p%key, addr(1), ierr)
  call MPI_GET_ADDRESS(p%value, addr(2), ierr)
  blocks = 1
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  disps = addr
  call MPI_TYPE_CREATE_STRUCT(2, blocks, disps, types, pairtype, ierr)
  call MPI_TYPE_COMMIT(pairtype, ierr)
  call MPI_BCAST(MPI_BOTTOM, 1, pairtype, 0, MPI_COMM_WORLD, ierr)
  call expect(p%key, 42, 'struct bcast from MPI_BOTTOM (key)', errs)
  if (p%value /= 2.5d0) call expect(0, 1, 'struct bcast from MPI_BOTTOM (value)', errs)
  call MPI_TYPE_FREE(pairtype, ierr)
  call expect(pairtype, MPI_DATATYPE_NULL, 'type freed', errs)

  ! a string out, with its hidden length
  host = ''
  call MPI_GET_PROCESSOR_NAME(host, namelen, ierr)
  if (namelen < 1 .or. len_trim(host) /= namelen) call expect(len_trim(host), namelen, 'processor name length', errs)

  if (MPI_WTIME() < t0) call expect(0, 1, 'MPI_WTIME runs backwards', errs)

  ! MPI_SIZEOF of the types MPICH's module has it for too (built by
  ! MPICH, the binary calls MPICH's procedure names, which oxmpi defines)
  call MPI_SIZEOF(one, got, ierr)
  call expect(got, 4, 'MPI_SIZEOF of an integer', errs)
  call MPI_SIZEOF(sbuf, got, ierr)
  call expect(got, 8, 'MPI_SIZEOF of a double precision array', errs)
  call MPI_SIZEOF(i1, got, ierr)
  call expect(got, 1, 'MPI_SIZEOF of an integer(1)', errs)
  call MPI_SIZEOF(i2, got, ierr)
  call expect(got, 2, 'MPI_SIZEOF of an integer(2) array', errs)
  call MPI_SIZEOF(i8, got, ierr)
  call expect(got, 8, 'MPI_SIZEOF of an integer(8)', errs)
  call MPI_SIZEOF(x, got, ierr)
  call expect(got, 4, 'MPI_SIZEOF of a real', errs)
  call MPI_SIZEOF(z, got, ierr)
  call expect(got, 8, 'MPI_SIZEOF of a complex array', errs)
  call MPI_SIZEOF(flag, got, ierr)
  call expect(got, 4, 'MPI_SIZEOF of a logical', errs)
  call MPI_SIZEOF(c, got, ierr)
  call expect(got, 1, 'MPI_SIZEOF of a character', errs)
  call expect(ierr, MPI_SUCCESS, 'MPI_SIZEOF ierror', errs)

  ! an error returned, not fatal
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(one, 1, MPI_INTEGER, np + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, eclass, i)
  call expect(eclass, MPI_ERR_RANK, 'send to a rank out of range', errs)

  include 'finish.inc'
end program f_module
