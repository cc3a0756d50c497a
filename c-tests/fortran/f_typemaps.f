! oxmpi-test: ranks=1,2
! Datatype constructors and queries from Fortran 77, each type's layout
! read back by MPI_PACK of one item over INTEGERs numbered 1, 2, ...:
! MPI_TYPE_(CREATE_)HVECTOR, MPI_TYPE_(CREATE_)HINDEXED (byte
! displacements as INTEGER and as INTEGER(KIND=MPI_ADDRESS_KIND)),
! _CREATE_HINDEXED_BLOCK, _CREATE_INDEXED_BLOCK, _CREATE_SUBARRAY and
! _CREATE_DARRAY in Fortran order, _CREATE_RESIZED, _DUP,
! MPI_TYPE_STRUCT;
! the extents (MPI_TYPE_LB, _UB, _GET_EXTENT_X, _GET_TRUE_EXTENT(_X),
! _SIZE_X), MPI_TYPE_GET_ENVELOPE/_CONTENTS, names, attributes on a type
! (MPI_TYPE_CREATE_KEYVAL, _SET_ATTR, _GET_ATTR, _DELETE_ATTR,
! _FREE_KEYVAL), MPI_TYPE_MATCH_SIZE and MPI_TYPE_CREATE_F90_INTEGER,
! _REAL, _COMPLEX, external32 packing (big-endian) and MPI_PACK_SIZE;
! memory from MPI_ALLOC_MEM, reached by an absolute type from
! MPI_BOTTOM, and given back by MPI_FREE_MEM (its address passed by
! %VAL, as Fortran 77 has no pointers).
! (MPI_AINT_ADD and MPI_AINT_DIFF are in f_not_in_mpich.f: MPICH's
! mpif.h does not declare their type.)
!     The INTEGERs one item of type T covers in A (1, 2, ... in A) must
!     be WANT(1..NW) in order; ERRS goes up (and WHAT is said) if not.
      SUBROUTINE LAYOUT(T, A, WANT, NW, WHAT, ERRS)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER T, A(*), NW, WANT(NW), ERRS, POS, IERR, I, SZ
      INTEGER PACKED(64), GOT(64)
      CHARACTER*(*) WHAT
      CALL MPI_TYPE_COMMIT(T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      IF (SZ .NE. 4 * NW) THEN
         ERRS = ERRS + 1
         PRINT *, WHAT, ': size ', SZ, ' want ', 4 * NW
         RETURN
      END IF
      POS = 0
      CALL MPI_PACK(A, 1, T, PACKED, 256, POS, MPI_COMM_SELF, IERR)
      POS = 0
      CALL MPI_UNPACK(PACKED, 256, POS, GOT, NW, MPI_INTEGER,
     &     MPI_COMM_SELF, IERR)
      DO I = 1, NW
         IF (GOT(I) .NE. WANT(I)) THEN
            ERRS = ERRS + 1
            PRINT *, WHAT, ': integer ', I, ' is ', GOT(I), ' want ',
     &           WANT(I)
            RETURN
         END IF
      END DO
      END

      INCLUDE 'expect.inc'

      PROGRAM FTYPEMAPS
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, ERRS, RANK, I, T, T2, A(100), W(16)
      INTEGER BL(4), ID(4), TY(4)
      INTEGER SIZES(2), SUBS(2), STARTS(2), DIST(1), DARG(1), PS(1)
      INTEGER G(1), NI, NA, ND, COMB, INTS(4), TYPES(4), KEY, L, SZ
      INTEGER(KIND=MPI_ADDRESS_KIND) AD(4), LB, EXT, VAL, EXTRA
      INTEGER(KIND=MPI_ADDRESS_KIND) POS, ESZ, BASE
      INTEGER B(100)
      INTEGER(KIND=MPI_COUNT_KIND) LBX, EXTX, SZX
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CHARACTER*12 XBUF
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      DO I = 1, 100
         A(I) = I
      END DO
!     3 blocks of 2, 20 bytes (5 INTEGERs) apart
      CALL MPI_TYPE_HVECTOR(3, 2, 20, MPI_INTEGER, T, IERR)
      W(1) = 1
      W(2) = 2
      W(3) = 6
      W(4) = 7
      W(5) = 11
      W(6) = 12
      CALL LAYOUT(T, A, W, 6, 'type_hvector', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
      CALL MPI_TYPE_CREATE_HVECTOR(3, 2, 20_MPI_ADDRESS_KIND,
     &     MPI_INTEGER, T, IERR)
      CALL LAYOUT(T, A, W, 6, 'type_create_hvector', ERRS)
      CALL MPI_TYPE_GET_ENVELOPE(T, NI, NA, ND, COMB, IERR)
      CALL EXPECT(COMB, MPI_COMBINER_HVECTOR, 'envelope combiner', ERRS)
      CALL EXPECT(NI, 2, 'envelope integers', ERRS)
      CALL EXPECT(NA, 1, 'envelope addresses', ERRS)
      CALL EXPECT(ND, 1, 'envelope types', ERRS)
      CALL MPI_TYPE_GET_CONTENTS(T, 4, 4, 4, INTS, AD, TYPES, IERR)
      CALL EXPECT(INTS(1), 3, 'contents count', ERRS)
      CALL EXPECT(INTS(2), 2, 'contents blocklength', ERRS)
      CALL EXPECT(INT(AD(1)), 20, 'contents stride', ERRS)
      CALL EXPECT(TYPES(1), MPI_INTEGER, 'contents type', ERRS)
!     a copy, named, with an attribute
      CALL MPI_TYPE_DUP(T, T2, IERR)
      CALL LAYOUT(T2, A, W, 6, 'type_dup', ERRS)
      CALL MPI_TYPE_SET_NAME(T2, 'columns', IERR)
      CALL MPI_TYPE_GET_NAME(T2, NAME, L, IERR)
      IF (NAME(1:L) .NE. 'columns') THEN
         ERRS = ERRS + 1
         PRINT *, 'type name ', NAME(1:L)
      END IF
      EXTRA = 0
      CALL MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_NULL_COPY_FN,
     &     MPI_TYPE_NULL_DELETE_FN, KEY, EXTRA, IERR)
      VAL = 2_MPI_ADDRESS_KIND**40 + 7
      CALL MPI_TYPE_SET_ATTR(T2, KEY, VAL, IERR)
      VAL = 0
      CALL MPI_TYPE_GET_ATTR(T2, KEY, VAL, FLAG, IERR)
      IF (.NOT. FLAG .OR. VAL .NE. 2_MPI_ADDRESS_KIND**40 + 7) THEN
         ERRS = ERRS + 1
         PRINT *, 'type_get_attr ', FLAG, VAL
      END IF
      CALL MPI_TYPE_DELETE_ATTR(T2, KEY, IERR)
      CALL MPI_TYPE_GET_ATTR(T2, KEY, VAL, FLAG, IERR)
      IF (FLAG) ERRS = ERRS + 1
      CALL MPI_TYPE_FREE_KEYVAL(KEY, IERR)
      CALL MPI_TYPE_FREE(T2, IERR)
      CALL MPI_TYPE_FREE(T, IERR)
!     blocks of 2 and 1 at bytes 0 and 40
      BL(1) = 2
      BL(2) = 1
      ID(1) = 0
      ID(2) = 40
      CALL MPI_TYPE_HINDEXED(2, BL, ID, MPI_INTEGER, T, IERR)
      W(1) = 1
      W(2) = 2
      W(3) = 11
      CALL LAYOUT(T, A, W, 3, 'type_hindexed', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
      AD(1) = 0
      AD(2) = 40
      CALL MPI_TYPE_CREATE_HINDEXED(2, BL, AD, MPI_INTEGER, T, IERR)
      CALL LAYOUT(T, A, W, 3, 'type_create_hindexed', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     blocks of 3 at bytes 8 and 60
      AD(1) = 8
      AD(2) = 60
      CALL MPI_TYPE_CREATE_HINDEXED_BLOCK(2, 3, AD, MPI_INTEGER, T,
     &     IERR)
      W(1) = 3
      W(2) = 4
      W(3) = 5
      W(4) = 16
      W(5) = 17
      W(6) = 18
      CALL LAYOUT(T, A, W, 6, 'type_create_hindexed_block', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     single INTEGERs at 0, 4 and 9 INTEGERs
      ID(1) = 0
      ID(2) = 4
      ID(3) = 9
      CALL MPI_TYPE_CREATE_INDEXED_BLOCK(3, 1, ID, MPI_INTEGER, T, IERR)
      W(1) = 1
      W(2) = 5
      W(3) = 10
      CALL LAYOUT(T, A, W, 3, 'type_create_indexed_block', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     rows 2-3 of columns 3-4 of a 4 x 5 array, in Fortran order
      SIZES(1) = 4
      SIZES(2) = 5
      SUBS(1) = 2
      SUBS(2) = 2
      STARTS(1) = 1
      STARTS(2) = 2
      CALL MPI_TYPE_CREATE_SUBARRAY(2, SIZES, SUBS, STARTS,
     &     MPI_ORDER_FORTRAN, MPI_INTEGER, T, IERR)
      W(1) = 10
      W(2) = 11
      W(3) = 14
      W(4) = 15
      CALL LAYOUT(T, A, W, 4, 'type_create_subarray', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     process 1's block of 8 INTEGERs spread over 2 processes
      G(1) = 8
      DIST(1) = MPI_DISTRIBUTE_BLOCK
      DARG(1) = MPI_DISTRIBUTE_DFLT_DARG
      PS(1) = 2
      CALL MPI_TYPE_CREATE_DARRAY(2, 1, 1, G, DIST, DARG, PS,
     &     MPI_ORDER_FORTRAN, MPI_INTEGER, T, IERR)
      W(1) = 5
      W(2) = 6
      W(3) = 7
      W(4) = 8
      CALL LAYOUT(T, A, W, 4, 'type_create_darray', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     MPI-1 struct: INTEGERs at bytes 0 and 8
      BL(1) = 1
      BL(2) = 1
      ID(1) = 0
      ID(2) = 8
      TY(1) = MPI_INTEGER
      TY(2) = MPI_INTEGER
      CALL MPI_TYPE_STRUCT(2, BL, ID, TY, T, IERR)
      W(1) = 1
      W(2) = 3
      CALL LAYOUT(T, A, W, 2, 'type_struct', ERRS)
      CALL MPI_TYPE_LB(T, L, IERR)
      CALL EXPECT(L, 0, 'type_lb', ERRS)
      CALL MPI_TYPE_UB(T, L, IERR)
      CALL EXPECT(L, 12, 'type_ub', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     an INTEGER stretched to 12 bytes: two of them are A(1) and A(4)
      CALL MPI_TYPE_CREATE_RESIZED(MPI_INTEGER, 0_MPI_ADDRESS_KIND,
     &     12_MPI_ADDRESS_KIND, T, IERR)
      CALL MPI_TYPE_CONTIGUOUS(2, T, T2, IERR)
      W(1) = 1
      W(2) = 4
      CALL LAYOUT(T2, A, W, 2, 'type_create_resized', ERRS)
      CALL MPI_TYPE_FREE(T2, IERR)
      CALL MPI_TYPE_GET_EXTENT_X(T, LBX, EXTX, IERR)
      CALL EXPECT(INT(LBX), 0, 'get_extent_x lb', ERRS)
      CALL EXPECT(INT(EXTX), 12, 'get_extent_x extent', ERRS)
      CALL MPI_TYPE_GET_TRUE_EXTENT(T, LB, EXT, IERR)
      CALL EXPECT(INT(EXT), 4, 'get_true_extent', ERRS)
      CALL MPI_TYPE_GET_TRUE_EXTENT_X(T, LBX, EXTX, IERR)
      CALL EXPECT(INT(EXTX), 4, 'get_true_extent_x', ERRS)
      CALL MPI_TYPE_SIZE_X(T, SZX, IERR)
      CALL EXPECT(INT(SZX), 4, 'type_size_x', ERRS)
      CALL MPI_TYPE_FREE(T, IERR)
!     types by size and by precision
      CALL MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, 8, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 8, 'type_match_size real 8', ERRS)
      CALL MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_INTEGER, 4, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 4, 'type_match_size integer 4', ERRS)
      CALL MPI_TYPE_CREATE_F90_INTEGER(9, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 4, 'f90_integer range 9', ERRS)
      CALL MPI_TYPE_CREATE_F90_INTEGER(10, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 8, 'f90_integer range 10', ERRS)
      CALL MPI_TYPE_CREATE_F90_REAL(6, MPI_UNDEFINED, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 4, 'f90_real precision 6', ERRS)
      CALL MPI_TYPE_CREATE_F90_REAL(MPI_UNDEFINED, 300, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 8, 'f90_real range 300', ERRS)
      CALL MPI_TYPE_CREATE_F90_COMPLEX(15, MPI_UNDEFINED, T, IERR)
      CALL MPI_TYPE_SIZE(T, SZ, IERR)
      CALL EXPECT(SZ, 16, 'f90_complex precision 15', ERRS)
!     external32: three INTEGERs, big-endian
      CALL MPI_PACK_EXTERNAL_SIZE('external32', 3, MPI_INTEGER, ESZ,
     &     IERR)
      CALL EXPECT(INT(ESZ), 12, 'pack_external_size', ERRS)
      POS = 0
      CALL MPI_PACK_EXTERNAL('external32', A(2), 3, MPI_INTEGER, XBUF,
     &     12_MPI_ADDRESS_KIND, POS, IERR)
      CALL EXPECT(INT(POS), 12, 'pack_external position', ERRS)
      CALL EXPECT(ICHAR(XBUF(4:4)), 2, 'external32 low byte last',
     &     ERRS)
      CALL EXPECT(ICHAR(XBUF(1:1)), 0, 'external32 high byte first',
     &     ERRS)
      POS = 0
      CALL MPI_UNPACK_EXTERNAL('external32', XBUF, 12_MPI_ADDRESS_KIND,
     &     POS, W, 3, MPI_INTEGER, IERR)
      CALL EXPECT(W(3), 4, 'unpack_external', ERRS)
      CALL MPI_PACK_SIZE(3, MPI_INTEGER, MPI_COMM_WORLD, SZ, IERR)
      IF (SZ .LT. 12) THEN
         ERRS = ERRS + 1
         PRINT *, 'pack_size ', SZ
      END IF
!     100 INTEGERs of MPI_ALLOC_MEM's memory, there and back
      CALL MPI_ALLOC_MEM(400_MPI_ADDRESS_KIND, MPI_INFO_NULL, BASE,
     &     IERR)
      CALL EXPECT(IERR, MPI_SUCCESS, 'alloc_mem', ERRS)
      AD(1) = BASE
      CALL MPI_TYPE_CREATE_HINDEXED_BLOCK(1, 100, AD, MPI_INTEGER, T,
     &     IERR)
      CALL MPI_TYPE_COMMIT(T, IERR)
      CALL MPI_SENDRECV(A, 100, MPI_INTEGER, 0, 1, MPI_BOTTOM, 1, T, 0,
     &     1, MPI_COMM_SELF, MPI_STATUS_IGNORE, IERR)
      CALL MPI_SENDRECV(MPI_BOTTOM, 1, T, 0, 2, B, 100, MPI_INTEGER, 0,
     &     2, MPI_COMM_SELF, MPI_STATUS_IGNORE, IERR)
      DO I = 1, 100
         CALL EXPECT(B(I), I, 'alloc_mem memory', ERRS)
      END DO
      CALL MPI_TYPE_FREE(T, IERR)
      CALL MPI_FREE_MEM(%VAL(BASE), IERR)
      CALL EXPECT(IERR, MPI_SUCCESS, 'free_mem', ERRS)
      INCLUDE 'finish.inc'
      END
