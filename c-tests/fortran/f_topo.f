! oxmpi-test: ranks=1,2,3,4
! Process topologies from Fortran 77: a Cartesian grid (MPI_CART_COORDS,
! MPI_CART_RANK across a periodic dimension, MPI_CARTDIM_GET,
! MPI_CART_SUB, MPI_CART_MAP), a graph ring (MPI_GRAPHDIMS_GET,
! MPI_GRAPH_GET, MPI_GRAPH_NEIGHBORS(_COUNT), MPI_GRAPH_MAP), a
! distributed graph with weights (MPI_DIST_GRAPH_CREATE) and one ring
! of neighbours without (MPI_DIST_GRAPH_CREATE_ADJACENT with
! MPI_UNWEIGHTED), and on that ring every neighbourhood collective
! three ways: blocking, nonblocking (MPI_INEIGHBOR_...) and persistent
! (MPI_NEIGHBOR_..._INIT). Results against values computed here.
      INCLUDE 'ways.inc'

      PROGRAM FTOPO
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, J, K, ERRS, MODE, REQ, LEFT, RIGHT
      INTEGER CART, SUB, GRAPH, DIST, RING, NDIMS, NEWRANK, NN, NE
      INTEGER DIMS(2), COORDS(2), C2(2), IDX(8), EDGES(16), NB(16)
      INTEGER SRCS(2), DSTS(2), SW(2), DW(2), INDEG, OUTDEG, DEGS(1)
      INTEGER IV(8), IR(8), SC(2), SD(2), RC(2), RD(2), TYPES(2), T
      INTEGER(KIND=MPI_ADDRESS_KIND) SDB(2), RDB(2)
      LOGICAL PERIODS(2), REMAIN(2), WEIGHTED
      ERRS = 0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      LEFT = MOD(RANK - 1 + NP, NP)
      RIGHT = MOD(RANK + 1, NP)
!     a Cartesian grid, periodic in its first dimension
      DIMS(1) = 0
      DIMS(2) = 0
      CALL MPI_DIMS_CREATE(NP, 2, DIMS, IERR)
      PERIODS(1) = .TRUE.
      PERIODS(2) = .FALSE.
      CALL MPI_CART_CREATE(MPI_COMM_WORLD, 2, DIMS, PERIODS, .FALSE.,
     &     CART, IERR)
      CALL MPI_CARTDIM_GET(CART, NDIMS, IERR)
      CALL EXPECTM(NDIMS, 2, 'cartdim_get', 1, ERRS)
      CALL MPI_CART_COORDS(CART, RANK, 2, COORDS, IERR)
      CALL EXPECTM(COORDS(1), RANK / DIMS(2), 'cart_coords 1', 1, ERRS)
      CALL EXPECTM(COORDS(2), MOD(RANK, DIMS(2)), 'cart_coords 2', 1,
     &     ERRS)
      C2(1) = COORDS(1) + DIMS(1)
      C2(2) = COORDS(2)
      CALL MPI_CART_RANK(CART, C2, K, IERR)
      CALL EXPECTM(K, RANK, 'cart_rank (periodic)', 1, ERRS)
      REMAIN(1) = .FALSE.
      REMAIN(2) = .TRUE.
      CALL MPI_CART_SUB(CART, REMAIN, SUB, IERR)
      CALL MPI_COMM_SIZE(SUB, K, IERR)
      CALL EXPECTM(K, DIMS(2), 'cart_sub size', 1, ERRS)
      CALL MPI_COMM_RANK(SUB, K, IERR)
      CALL EXPECTM(K, COORDS(2), 'cart_sub rank', 1, ERRS)
      CALL MPI_CARTDIM_GET(SUB, NDIMS, IERR)
      CALL EXPECTM(NDIMS, 1, 'cart_sub dims', 1, ERRS)
      CALL MPI_COMM_FREE(SUB, IERR)
      CALL MPI_COMM_FREE(CART, IERR)
      CALL MPI_CART_MAP(MPI_COMM_WORLD, 2, DIMS, PERIODS, NEWRANK, IERR)
      IF (NEWRANK .LT. 0 .OR. NEWRANK .GE. NP) THEN
         ERRS = ERRS + 1
         PRINT *, 'cart_map', NEWRANK
      END IF
!     a graph: node i's neighbours are i+1 and i-1
      DO I = 1, NP
         IDX(I) = 2 * I
         EDGES(2 * I - 1) = MOD(I, NP)
         EDGES(2 * I) = MOD(I - 2 + NP, NP)
      END DO
      CALL MPI_GRAPH_CREATE(MPI_COMM_WORLD, NP, IDX, EDGES, .FALSE.,
     &     GRAPH, IERR)
      CALL MPI_GRAPHDIMS_GET(GRAPH, NN, NE, IERR)
      CALL EXPECTM(NN, NP, 'graphdims_get nodes', 1, ERRS)
      CALL EXPECTM(NE, 2 * NP, 'graphdims_get edges', 1, ERRS)
      CALL MPI_GRAPH_GET(GRAPH, 8, 16, IDX, NB, IERR)
      DO I = 1, 2 * NP
         CALL EXPECTM(NB(I), EDGES(I), 'graph_get', 1, ERRS)
      END DO
      CALL MPI_GRAPH_NEIGHBORS_COUNT(GRAPH, RANK, K, IERR)
      CALL EXPECTM(K, 2, 'graph_neighbors_count', 1, ERRS)
      CALL MPI_GRAPH_NEIGHBORS(GRAPH, RANK, 2, NB, IERR)
      CALL EXPECTM(NB(1), RIGHT, 'graph_neighbors 1', 1, ERRS)
      CALL EXPECTM(NB(2), LEFT, 'graph_neighbors 2', 1, ERRS)
      CALL MPI_GRAPH_MAP(MPI_COMM_WORLD, NP, IDX, EDGES, NEWRANK, IERR)
      IF (NEWRANK .LT. 0 .OR. NEWRANK .GE. NP) THEN
         ERRS = ERRS + 1
         PRINT *, 'graph_map', NEWRANK
      END IF
      CALL MPI_COMM_FREE(GRAPH, IERR)
!     a distributed graph: each rank gives the edge to its right, of
!     weight rank + 1
      SRCS(1) = RANK
      DSTS(1) = RIGHT
      DW(1) = RANK + 1
      DEGS(1) = 1
      CALL MPI_DIST_GRAPH_CREATE(MPI_COMM_WORLD, 1, SRCS, DEGS, DSTS,
     &     DW, MPI_INFO_NULL, .FALSE., DIST, IERR)
      CALL MPI_DIST_GRAPH_NEIGHBORS_COUNT(DIST, INDEG, OUTDEG,
     &     WEIGHTED, IERR)
      CALL EXPECTM(INDEG, 1, 'dist_graph indegree', 1, ERRS)
      CALL EXPECTM(OUTDEG, 1, 'dist_graph outdegree', 1, ERRS)
      IF (.NOT. WEIGHTED) THEN
         ERRS = ERRS + 1
         PRINT *, 'dist_graph_create: not weighted'
      END IF
      CALL MPI_DIST_GRAPH_NEIGHBORS(DIST, 1, SRCS, SW, 1, DSTS, DW,
     &     IERR)
      CALL EXPECTM(SRCS(1), LEFT, 'dist_graph source', 1, ERRS)
      CALL EXPECTM(SW(1), LEFT + 1, 'dist_graph source weight', 1, ERRS)
      CALL EXPECTM(DSTS(1), RIGHT, 'dist_graph destination', 1, ERRS)
      CALL EXPECTM(DW(1), RANK + 1, 'dist_graph dest weight', 1, ERRS)
      CALL MPI_COMM_FREE(DIST, IERR)
!     a ring of neighbours, left and right, unweighted
      SRCS(1) = LEFT
      SRCS(2) = RIGHT
      DSTS(1) = LEFT
      DSTS(2) = RIGHT
      CALL MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 2, SRCS,
     &     MPI_UNWEIGHTED, 2, DSTS, MPI_UNWEIGHTED, MPI_INFO_NULL,
     &     .FALSE., RING, IERR)
      CALL MPI_DIST_GRAPH_NEIGHBORS_COUNT(RING, INDEG, OUTDEG,
     &     WEIGHTED, IERR)
      CALL EXPECTM(INDEG, 2, 'adjacent indegree', 1, ERRS)
      CALL EXPECTM(OUTDEG, 2, 'adjacent outdegree', 1, ERRS)
      IF (WEIGHTED) THEN
         ERRS = ERRS + 1
         PRINT *, 'MPI_UNWEIGHTED graph said weighted'
      END IF
      CALL MPI_DIST_GRAPH_NEIGHBORS(RING, 2, NB, SW, 2, NB(3), DW,
     &     IERR)
      CALL EXPECTM(NB(1), LEFT, 'adjacent source 1', 1, ERRS)
      CALL EXPECTM(NB(2), RIGHT, 'adjacent source 2', 1, ERRS)
      CALL EXPECTM(NB(3), LEFT, 'adjacent destination 1', 1, ERRS)
      CALL EXPECTM(NB(4), RIGHT, 'adjacent destination 2', 1, ERRS)
      CALL MPI_TYPE_SIZE(MPI_INTEGER, T, IERR)
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_INTEGER
      DO MODE = 1, 3
!     allgather: the left neighbour's value, then the right one's
      IV(1) = RANK * 10
      IR(1) = -1
      IR(2) = -1
      IF (MODE .EQ. 1) CALL MPI_NEIGHBOR_ALLGATHER(IV, 1, MPI_INTEGER,
     &     IR, 1, MPI_INTEGER, RING, IERR)
      IF (MODE .EQ. 2) CALL MPI_INEIGHBOR_ALLGATHER(IV, 1, MPI_INTEGER,
     &     IR, 1, MPI_INTEGER, RING, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_NEIGHBOR_ALLGATHER_INIT(IV, 1,
     &     MPI_INTEGER, IR, 1, MPI_INTEGER, RING, MPI_INFO_NULL, REQ,
     &     IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IR(1), LEFT * 10, 'neighbor_allgather 1', MODE, ERRS)
      CALL EXPECTM(IR(2), RIGHT * 10, 'neighbor_allgather 2', MODE,
     &     ERRS)
!     allgatherv: placed the other way round
      RC(1) = 1
      RC(2) = 1
      RD(1) = 1
      RD(2) = 0
      IR(1) = -1
      IR(2) = -1
      IF (MODE .EQ. 1) CALL MPI_NEIGHBOR_ALLGATHERV(IV, 1, MPI_INTEGER,
     &     IR, RC, RD, MPI_INTEGER, RING, IERR)
      IF (MODE .EQ. 2) CALL MPI_INEIGHBOR_ALLGATHERV(IV, 1,
     &     MPI_INTEGER, IR, RC, RD, MPI_INTEGER, RING, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_NEIGHBOR_ALLGATHERV_INIT(IV, 1,
     &     MPI_INTEGER, IR, RC, RD, MPI_INTEGER, RING, MPI_INFO_NULL,
     &     REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL EXPECTM(IR(2), LEFT * 10, 'neighbor_allgatherv 1', MODE,
     &     ERRS)
      CALL EXPECTM(IR(1), RIGHT * 10, 'neighbor_allgatherv 2', MODE,
     &     ERRS)
!     alltoall: block k goes to destination k. Over three or more ranks
!     the left neighbour's block for its right comes first; over fewer,
!     every edge joins the same pair, and the k-th edge out meets the
!     k-th edge in (MPI 4.1 section 8.6; MPICH 4.0.2 pairs them in
!     reverse, fixed in pmodels/mpich#7945)
      IV(1) = RANK * 100 + 1
      IV(2) = RANK * 100 + 2
      IR(1) = -1
      IR(2) = -1
      IF (MODE .EQ. 1) CALL MPI_NEIGHBOR_ALLTOALL(IV, 1, MPI_INTEGER,
     &     IR, 1, MPI_INTEGER, RING, IERR)
      IF (MODE .EQ. 2) CALL MPI_INEIGHBOR_ALLTOALL(IV, 1, MPI_INTEGER,
     &     IR, 1, MPI_INTEGER, RING, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_NEIGHBOR_ALLTOALL_INIT(IV, 1,
     &     MPI_INTEGER, IR, 1, MPI_INTEGER, RING, MPI_INFO_NULL, REQ,
     &     IERR)
      CALL DONE(MODE, REQ)
      IF (NP .GT. 2) THEN
         CALL EXPECTM(IR(1), LEFT * 100 + 2, 'neighbor_alltoall 1',
     &        MODE, ERRS)
         CALL EXPECTM(IR(2), RIGHT * 100 + 1, 'neighbor_alltoall 2',
     &        MODE, ERRS)
      ELSE
         CALL EXPECTM(IR(1), LEFT * 100 + 1, 'neighbor_alltoall 1',
     &        MODE, ERRS)
         CALL EXPECTM(IR(2), LEFT * 100 + 2, 'neighbor_alltoall 2',
     &        MODE, ERRS)
      END IF
!     alltoallv: one int to the left, two to the right
      SC(1) = 1
      SC(2) = 2
      SD(1) = 0
      SD(2) = 1
      IV(1) = RANK * 100 + 11
      IV(2) = RANK * 100 + 21
      IV(3) = RANK * 100 + 22
      IF (NP .GT. 2) THEN
         RC(1) = 2
         RC(2) = 1
      ELSE
         RC(1) = 1
         RC(2) = 2
      END IF
      RD(1) = 0
      RD(2) = 4
      DO I = 1, 8
         IR(I) = -1
      END DO
      IF (MODE .EQ. 1) CALL MPI_NEIGHBOR_ALLTOALLV(IV, SC, SD,
     &     MPI_INTEGER, IR, RC, RD, MPI_INTEGER, RING, IERR)
      IF (MODE .EQ. 2) CALL MPI_INEIGHBOR_ALLTOALLV(IV, SC, SD,
     &     MPI_INTEGER, IR, RC, RD, MPI_INTEGER, RING, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_NEIGHBOR_ALLTOALLV_INIT(IV, SC, SD,
     &     MPI_INTEGER, IR, RC, RD, MPI_INTEGER, RING, MPI_INFO_NULL,
     &     REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL ALLV(IR, NP, LEFT, RIGHT, 'neighbor_alltoallv', MODE, ERRS)
!     alltoallw: the same, displacements in bytes
      DO K = 1, 2
         SDB(K) = SD(K) * T
         RDB(K) = RD(K) * T
      END DO
      DO I = 1, 8
         IR(I) = -1
      END DO
      IF (MODE .EQ. 1) CALL MPI_NEIGHBOR_ALLTOALLW(IV, SC, SDB, TYPES,
     &     IR, RC, RDB, TYPES, RING, IERR)
      IF (MODE .EQ. 2) CALL MPI_INEIGHBOR_ALLTOALLW(IV, SC, SDB, TYPES,
     &     IR, RC, RDB, TYPES, RING, REQ, IERR)
      IF (MODE .EQ. 3) CALL MPI_NEIGHBOR_ALLTOALLW_INIT(IV, SC, SDB,
     &     TYPES, IR, RC, RDB, TYPES, RING, MPI_INFO_NULL, REQ, IERR)
      CALL DONE(MODE, REQ)
      CALL ALLV(IR, NP, LEFT, RIGHT, 'neighbor_alltoallw', MODE, ERRS)
      END DO
      CALL MPI_COMM_FREE(RING, IERR)
      INCLUDE 'finish.inc'
      END

!     The receive buffer of the ring's alltoallv (blocks at 0 and 4):
!     over three or more ranks the left neighbour's two ints for its
!     right, then the right one's int for its left; over fewer, the
!     one neighbour's blocks in its order.
      SUBROUTINE ALLV(IR, NP, LEFT, RIGHT, WHAT, MODE, ERRS)
      IMPLICIT NONE
      INTEGER IR(8), NP, LEFT, RIGHT, MODE, ERRS
      CHARACTER*(*) WHAT
      IF (NP .GT. 2) THEN
         CALL EXPECTM(IR(1), LEFT * 100 + 21, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(2), LEFT * 100 + 22, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(5), RIGHT * 100 + 11, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(6), -1, WHAT, MODE, ERRS)
      ELSE
         CALL EXPECTM(IR(1), LEFT * 100 + 11, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(2), -1, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(5), LEFT * 100 + 21, WHAT, MODE, ERRS)
         CALL EXPECTM(IR(6), LEFT * 100 + 22, WHAT, MODE, ERRS)
      END IF
      CALL EXPECTM(IR(3), -1, WHAT, MODE, ERRS)
      END
