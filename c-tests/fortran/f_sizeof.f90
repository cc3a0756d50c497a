! oxmpi-test: ranks=1,2 mpich=no
! MPI_SIZEOF from the mpi module (MPI 4.0 section 19.1.9): the bytes of
! one element of a scalar or an array of any rank, for integer, real,
! complex and logical kinds and characters (a string's is its length),
! each matching MPI_TYPE_SIZE of the MPI type of that kind, and
! MPI_TYPE_MATCH_SIZE turning the size back into that type, as portable
! programs use them. (MPICH's module implements
! MPI_SIZEOF in its own library, which a swapped binary does not load:
! the test runs built by oxmpi only.)
include 'expect.inc'

program f_sizeof
  use mpi
  implicit none
  integer(1) :: i1
  integer(2) :: i2(3)
  integer(4) :: i4(2, 2)
  integer(8) :: i8
  real(4) :: r4(5)
  real(8) :: r8(2, 3, 4)
  complex(4) :: c4
  complex(8) :: c8(7)
  logical :: l
  character :: ch(3)
  character(len=7) :: word
  integer :: ierr, rank, errs, size, tsize, matched
  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_SIZEOF(i1, size, ierr)
  call same(size, MPI_INTEGER1, 1, 'integer(1)')
  call MPI_SIZEOF(i2, size, ierr)
  call same(size, MPI_INTEGER2, 2, 'integer(2) array')
  call MPI_SIZEOF(i4, size, ierr)
  call same(size, MPI_INTEGER4, 4, 'integer(4) 2-D array')
  call MPI_SIZEOF(i8, size, ierr)
  call same(size, MPI_INTEGER8, 8, 'integer(8)')
  call MPI_SIZEOF(r4, size, ierr)
  call same(size, MPI_REAL4, 4, 'real(4) array')
  call MPI_SIZEOF(r8, size, ierr)
  call same(size, MPI_REAL8, 8, 'real(8) 3-D array')
  call MPI_SIZEOF(c4, size, ierr)
  call same(size, MPI_COMPLEX, 8, 'complex(4)')
  call MPI_SIZEOF(c8, size, ierr)
  call same(size, MPI_DOUBLE_COMPLEX, 16, 'complex(8) array')
  call MPI_SIZEOF(l, size, ierr)
  call same(size, MPI_LOGICAL, 4, 'logical')
  call MPI_SIZEOF(ch, size, ierr)
  call same(size, MPI_CHARACTER, 1, 'character')
  call MPI_SIZEOF(word, size, ierr)
  call expect(size, len(word), 'MPI_SIZEOF of a string (its length)', errs)
  if (ierr /= MPI_SUCCESS) call expect(ierr, MPI_SUCCESS, 'MPI_SIZEOF ierror', errs)
  ! the portable way to name a kind's MPI type
  call MPI_SIZEOF(r8, size, ierr)
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, size, matched, ierr)
  call MPI_TYPE_SIZE(matched, tsize, ierr)
  call expect(tsize, 8, 'MPI_TYPE_MATCH_SIZE of real(8)', errs)
  call MPI_SIZEOF(i2, size, ierr)
  call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_INTEGER, size, matched, ierr)
  call MPI_TYPE_SIZE(matched, tsize, ierr)
  call expect(tsize, 2, 'MPI_TYPE_MATCH_SIZE of integer(2)', errs)

  include 'finish.inc'

contains

  ! MPI_SIZEOF's size is the expected bytes and MPI_TYPE_SIZE's of `type`
  subroutine same(size, type, bytes, what)
    integer, intent(in) :: size, type, bytes
    character(len=*), intent(in) :: what
    integer :: tsize, e
    call expect(size, bytes, 'MPI_SIZEOF of '//what, errs)
    call MPI_TYPE_SIZE(type, tsize, e)
    call expect(size, tsize, 'MPI_SIZEOF against MPI_TYPE_SIZE of '//what, errs)
  end subroutine same
end program f_sizeof
