/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SINGLE_COPY_MIN=0,OXMPI_COLL_BCAST=scatter_allgather,OXMPI_COLL_ALLREDUCE=rabenseifner,OXMPI_COLL_ALLGATHER=recursive_doubling,OXMPI_COLL_ALLTOALL=bruck,OXMPI_COLL_BARRIER=dissemination;OXMPI_COLL_BCAST=binomial,OXMPI_COLL_ALLREDUCE=reduce_bcast,OXMPI_COLL_ALLGATHER=ring,OXMPI_COLL_ALLTOALL=pairwise,OXMPI_SHM_COLL_MAX=0,OXMPI_COLL_BARRIER=linear;OXMPI_COLL_ALLGATHER=linear,OXMPI_COLL_ALLTOALL=linear,OXMPI_COLL_ALLREDUCE=linear;OXMPI_SHM_SCAN=every;OXMPI_SHM_SCAN=chain
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v/w), Scan, Exscan,
 * Reduce_scatter(_block) and Reduce_local on MPI_COMM_WORLD: every root,
 * counts from 0 to 256 Ki ints, MPI_IN_PLACE, a derived (strided) type,
 * checked against values computed here; then bad input under
 * MPI_ERRORS_RETURN. */
#include "common.h"

/* the value rank r puts at position i */
static int val(int r, int i) { return r * 100003 + i * 7 + 1; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int counts[] = {0, 1, 5, 1000, 65536};
    int *rc = malloc(size * sizeof(int)), *dis = malloc(size * sizeof(int));

    for (int c = 0; c < 5; c++) {
        int n = counts[c];
        int *mine = malloc((n + 1) * sizeof(int));
        int *all = malloc(((size_t)n * size + 1) * sizeof(int));
        for (int i = 0; i < n; i++) mine[i] = val(rank, i);
        for (int root = 0; root < size; root++) {
            /* Gather, then in place at the root */
            for (int i = 0; i < n * size; i++) all[i] = -1;
            MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
            int bad = 0;
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
            CHECK(bad == 0, "gather %d from root %d: %d wrong", n, root, bad);
            if (rank == root) {
                for (int i = 0; i < n * size; i++) all[i] = i < root * n || i >= (root + 1) * n ? -1 : val(root, i - root * n);
                MPI_Gather(MPI_IN_PLACE, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
                bad = 0;
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
                CHECK(bad == 0, "in-place gather %d at %d: %d wrong", n, root, bad);
            } else {
                MPI_Gather(mine, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
            }
            /* Scatter: rank r gets the root's block r */
            for (int r = 0; r < size && rank == root; r++)
                for (int i = 0; i < n; i++) all[r * n + i] = val(r, i) + root;
            for (int i = 0; i < n; i++) mine[i] = -1;
            MPI_Scatter(all, n, MPI_INT, mine, n, MPI_INT, root, MPI_COMM_WORLD);
            bad = 0;
            for (int i = 0; i < n; i++) bad += mine[i] != val(rank, i) + root;
            CHECK(bad == 0, "scatter %d from %d: %d wrong", n, root, bad);
            if (rank == root)
                MPI_Scatter(all, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, MPI_COMM_WORLD);
            else
                MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, mine, n, MPI_INT, root, MPI_COMM_WORLD);
            bad = 0;
            for (int i = 0; i < n; i++) bad += mine[i] != val(rank, i) + root;
            CHECK(bad == 0, "scatter (root in place) %d from %d: %d wrong", n, root, bad);
            for (int i = 0; i < n; i++) mine[i] = val(rank, i);
        }
        /* Allgather, not in place and in place */
        for (int i = 0; i < n * size; i++) all[i] = -1;
        MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
        int bad = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
        CHECK(bad == 0, "allgather %d: %d wrong", n, bad);
        for (int i = 0; i < n * size; i++) all[i] = i / (n ? n : 1) == rank ? val(rank, i - rank * n) : -1;
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
        bad = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) bad += all[r * n + i] != val(r, i);
        CHECK(bad == 0, "in-place allgather %d: %d wrong", n, bad);
        /* Alltoall: block r of rank s's send holds val(s, r*n + i) */
        int *snd = malloc(((size_t)n * size + 1) * sizeof(int));
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) snd[r * n + i] = val(rank, r * n + i);
        MPI_Alltoall(snd, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
        bad = 0;
        for (int s = 0; s < size; s++)
            for (int i = 0; i < n; i++) bad += all[s * n + i] != val(s, rank * n + i);
        CHECK(bad == 0, "alltoall %d: %d wrong", n, bad);
        memcpy(all, snd, (size_t)n * size * sizeof(int));
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
        bad = 0;
        for (int s = 0; s < size; s++)
            for (int i = 0; i < n; i++) bad += all[s * n + i] != val(s, rank * n + i);
        CHECK(bad == 0, "in-place alltoall %d: %d wrong", n, bad);
        /* Scan / Exscan with SUM, in place too; Reduce_scatter_block */
        MPI_Scan(mine, snd, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int r = 0; r <= rank; r++) e += val(r, i);
            bad += snd[i] != e;
        }
        CHECK(bad == 0, "scan %d: %d wrong", n, bad);
        for (int i = 0; i < n; i++) snd[i] = val(rank, i);
        MPI_Exscan(MPI_IN_PLACE, snd, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n && rank > 0; i++) {
            int e = 0;
            for (int r = 0; r < rank; r++) e += val(r, i);
            bad += snd[i] != e;
        }
        CHECK(bad == 0, "exscan %d: %d wrong", n, bad);
        for (int i = 0; i < n; i++) snd[i] = -7;
        MPI_Exscan(mine, snd, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++) {
            int e = rank ? 0 : -7; /* rank 0's recvbuf is left alone */
            for (int r = 0; r < rank; r++) e += val(r, i);
            bad += snd[i] != e;
        }
        CHECK(bad == 0, "exscan %d not in place: %d wrong", n, bad);
        for (int i = 0; i < n * size; i++) snd[i] = val(rank, i);
        MPI_Reduce_scatter_block(snd, all, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i < n; i++) bad += all[i] != val(size - 1, rank * n + i);
        CHECK(bad == 0, "reduce_scatter_block %d: %d wrong", n, bad);
        free(snd);
        free(mine);
        free(all);
    }

    /* v variants: rank r contributes r+1 items, placed in reverse rank
     * order with a gap of 2 */
    int total = 0;
    for (int r = size - 1; r >= 0; r--) { rc[r] = r + 1; dis[r] = total; total += r + 3; }
    int *vb = malloc(total * sizeof(int)), mv[8];
    for (int i = 0; i <= rank; i++) mv[i] = val(rank, i);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < total; i++) vb[i] = -7;
        MPI_Gatherv(mv, rank + 1, MPI_INT, vb, rc, dis, MPI_INT, root, MPI_COMM_WORLD);
        int bad = 0;
        for (int r = 0; r < size && rank == root; r++) {
            for (int i = 0; i <= r; i++) bad += vb[dis[r] + i] != val(r, i);
            bad += vb[dis[r] + r + 1] != -7;
        }
        CHECK(bad == 0, "gatherv at %d: %d wrong", root, bad);
        int got[8] = {0};
        MPI_Scatterv(vb, rc, dis, MPI_INT, got, rank + 1, MPI_INT, root, MPI_COMM_WORLD);
        bad = 0;
        for (int i = 0; i <= rank; i++) bad += got[i] != val(rank, i);
        CHECK(bad == 0, "scatterv from %d: %d wrong", root, bad);
    }
    for (int i = 0; i < total; i++) vb[i] = -7;
    MPI_Allgatherv(mv, rank + 1, MPI_INT, vb, rc, dis, MPI_INT, MPI_COMM_WORLD);
    int bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++) bad += vb[dis[r] + i] != val(r, i);
    CHECK(bad == 0, "allgatherv: %d wrong", bad);
    /* in place, then into ints spaced out by a resized type (two ints'
     * extent): the gaps keep their -7 */
    for (int i = 0; i < total; i++) vb[i] = -7;
    for (int i = 0; i <= rank; i++) vb[dis[rank] + i] = val(rank, i);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, vb, rc, dis, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < r + 3 && dis[r] + i < total; i++) bad += vb[dis[r] + i] != (i <= r ? val(r, i) : -7);
    CHECK(bad == 0, "allgatherv in place: %d wrong", bad);
    MPI_Datatype spaced;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &spaced);
    MPI_Type_commit(&spaced);
    int *wide = malloc(2 * total * sizeof(int));
    for (int i = 0; i < 2 * total; i++) wide[i] = -7;
    MPI_Allgatherv(mv, rank + 1, MPI_INT, wide, rc, dis, spaced, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 2 * (r + 3) && 2 * dis[r] + i < 2 * total; i++)
            bad += wide[2 * dis[r] + i] != (i % 2 == 0 && i / 2 <= r ? val(r, i / 2) : -7);
    CHECK(bad == 0, "allgatherv into a resized type: %d wrong", bad);
    free(wide);
    MPI_Type_free(&spaced);

    /* Alltoallv: rank s sends r+1 items to rank r; Alltoallw with the
     * same layout in bytes */
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rcv = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    int *sbuf = malloc(64 * size * sizeof(int)), *rbuf = malloc(64 * size * sizeof(int));
    for (int r = 0; r < size; r++) {
        sc[r] = r + 1; sd[r] = 16 * r; rcv[r] = rank + 1; rd[r] = 16 * (size - 1 - r);
        for (int i = 0; i < sc[r]; i++) sbuf[sd[r] + i] = val(rank, 50 * r + i);
    }
    for (int i = 0; i < 16 * size; i++) rbuf[i] = -1;
    MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rcv, rd, MPI_INT, MPI_COMM_WORLD);
    bad = 0;
    for (int s = 0; s < size; s++)
        for (int i = 0; i <= rank; i++) bad += rbuf[rd[s] + i] != val(s, 50 * rank + i);
    CHECK(bad == 0, "alltoallv: %d wrong", bad);
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) { sd[r] *= sizeof(int); rd[r] *= sizeof(int); types[r] = MPI_INT; }
    for (int i = 0; i < 16 * size; i++) rbuf[i] = -1;
    MPI_Alltoallw(sbuf, sc, sd, types, rbuf, rcv, rd, types, MPI_COMM_WORLD);
    bad = 0;
    for (int s = 0; s < size; s++)
        for (int i = 0; i <= rank; i++) bad += rbuf[rd[s] / (int)sizeof(int) + i] != val(s, 50 * rank + i);
    CHECK(bad == 0, "alltoallw: %d wrong", bad);

    /* Alltoallw with a strided type on the send side, then on the
     * receive side: those parts are packed or unpacked around the exchange */
    MPI_Datatype v2;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v2);
    MPI_Type_commit(&v2);
    int *sv = malloc(4 * size * sizeof(int)), *flat2 = malloc(2 * size * sizeof(int));
    MPI_Datatype *vtypes = malloc(size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) {
        sv[4 * r] = val(rank, r); sv[4 * r + 1] = -1; sv[4 * r + 2] = val(rank, r + 50); sv[4 * r + 3] = -1;
        vtypes[r] = v2; sc[r] = 1; sd[r] = 4 * r * (int)sizeof(int); rcv[r] = 2; rd[r] = 2 * r * (int)sizeof(int);
    }
    MPI_Alltoallw(sv, sc, sd, vtypes, flat2, rcv, rd, types, MPI_COMM_WORLD);
    bad = 0;
    for (int s = 0; s < size; s++) bad += flat2[2 * s] != val(s, rank) || flat2[2 * s + 1] != val(s, rank + 50);
    CHECK(bad == 0, "alltoallw from a vector type: %d wrong", bad);
    for (int i = 0; i < 4 * size; i++) sv[i] = -2;
    MPI_Alltoallw(flat2, rcv, rd, types, sv, sc, sd, vtypes, MPI_COMM_WORLD);
    bad = 0;
    for (int s = 0; s < size; s++)
        bad += sv[4 * s] != val(rank, s) || sv[4 * s + 2] != val(rank, s + 50) || sv[4 * s + 1] != -2 || sv[4 * s + 3] != -2;
    CHECK(bad == 0, "alltoallw into a vector type: %d wrong", bad);
    MPI_Type_free(&v2);
    free(sv); free(flat2); free(vtypes);

    /* Derived type: gather a strided column (every 3rd int) into
     * contiguous ints at the root, and allgather it back as columns */
    MPI_Datatype col;
    MPI_Type_vector(4, 1, 3, MPI_INT, &col);
    MPI_Type_commit(&col);
    int colbuf[12], flat[64];
    for (int i = 0; i < 12; i++) colbuf[i] = i % 3 == 0 ? val(rank, i) : -3;
    MPI_Gather(colbuf, 1, col, flat, 4, MPI_INT, 0, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size && rank == 0; r++)
        for (int k = 0; k < 4; k++) bad += flat[r * 4 + k] != val(r, 3 * k);
    CHECK(bad == 0, "gather of a vector type: %d wrong", bad);
    /* allgather 4 ints from each rank into columns (extent 10 ints) */
    int *cols = malloc(10 * size * sizeof(int)), four[4];
    for (int k = 0; k < 4; k++) four[k] = val(rank, 3 * k);
    for (int i = 0; i < 10 * size; i++) cols[i] = -3;
    MPI_Allgather(four, 4, MPI_INT, cols, 1, col, MPI_COMM_WORLD);
    bad = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 10; i++) bad += cols[r * 10 + i] != (i % 3 == 0 ? val(r, i) : -3);
    CHECK(bad == 0, "allgather into a vector type: %d wrong", bad);
    /* gather the same into columns at the root (short: through shared
     * memory), then in place, and scatter the columns back to columns */
    for (int i = 0; i < 10 * size; i++) cols[i] = -3;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && rank == 0) {
            for (int i = 10; i < 10 * size; i++) cols[i] = -3;
            MPI_Gather(MPI_IN_PLACE, 4, MPI_INT, cols, 1, col, 0, MPI_COMM_WORLD);
        } else {
            MPI_Gather(four, 4, MPI_INT, cols, 1, col, 0, MPI_COMM_WORLD);
        }
        bad = 0;
        for (int r = 0; r < size && rank == 0; r++)
            for (int i = 0; i < 10; i++) bad += cols[r * 10 + i] != (i % 3 == 0 ? val(r, i) : -3);
        CHECK(bad == 0, "gather into a vector type%s: %d wrong", pass ? " in place" : "", bad);
    }
    int back[10];
    for (int i = 0; i < 10; i++) back[i] = -4;
    MPI_Scatter(cols, 1, col, back, 1, col, 0, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < 10; i++) bad += back[i] != (i % 3 == 0 ? val(rank, i) : -4);
    CHECK(bad == 0, "scatter of a vector type into a vector type: %d wrong", bad);
    /* the root scatters columns, the others receive plain ints (they go
     * straight to the mailboxes, the root the general way) */
    int got4[4] = {-4, -4, -4, -4};
    MPI_Scatter(cols, 1, col, got4, 4, MPI_INT, 0, MPI_COMM_WORLD);
    bad = 0;
    for (int k = 0; k < 4; k++) bad += got4[k] != val(rank, 3 * k);
    CHECK(bad == 0, "scatter of a vector type into ints: %d wrong", bad);
    free(cols);
    MPI_Type_free(&col);

    /* Reduce_scatter with uneven counts, Reduce_local */
    int tot = size * (size + 1) / 2, *in = malloc(tot * sizeof(int)), out[8];
    for (int i = 0; i < tot; i++) in[i] = val(rank, i);
    MPI_Reduce_scatter(in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int start = rank * (rank + 1) / 2;
    bad = 0;
    for (int i = 0; i <= rank; i++) {
        int e = 0;
        for (int r = 0; r < size; r++) e += val(r, start + i);
        bad += out[i] != e;
    }
    CHECK(bad == 0, "reduce_scatter: %d wrong", bad);
    double a[3] = {1, 5, -2}, b[3] = {4, 2, -1};
    MPI_Reduce_local(a, b, 3, MPI_DOUBLE, MPI_MAX);
    CHECK(b[0] == 4 && b[1] == 5 && b[2] == -1, "reduce_local max");
    int la[2] = {2, 3}, lb[2] = {5, 7};
    MPI_Reduce_local(la, lb, 2, MPI_INT, MPI_PROD);
    CHECK(lb[0] == 10 && lb[1] == 21, "reduce_local prod");

    /* bad input returns the right class */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, e;
    e = MPI_Gather(mv, 1, MPI_INT, vb, 1, MPI_INT, size, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ROOT, "gather root out of range: class %d", cls);
    e = MPI_Scatter(vb, 1, MPI_INT, mv, -1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COUNT, "scatter negative count: class %d", cls);
    e = MPI_Allgather(mv, 1, MPI_INT, vb, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_TYPE, "allgather null type: class %d", cls);
    e = MPI_Scan(mv, vb, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_OP, "scan sum of a pair type: class %d", cls);
    e = MPI_Reduce_local(MPI_IN_PLACE, lb, 2, MPI_INT, MPI_SUM);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "reduce_local in place: class %d", cls);
    if (size > 1) {
        /* the others send 2 ints where the root expects 1 */
        int two[2] = {1, 2}, got[8];
        e = MPI_Gather(two, rank == 0 ? 1 : 2, MPI_INT, got, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Error_class(e, &cls);
        CHECK(rank == 0 ? cls == MPI_ERR_TRUNCATE : e == MPI_SUCCESS, "gather of too much: class %d", cls);
    }
    /* (MPICH does not check this one and crashes in memcpy) */
    if (size > 1 && !getenv("OXMPI_TEST_REFERENCE")) {
        e = MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, vb, 1, MPI_INT, (rank + 1) % size, MPI_COMM_WORLD);
        MPI_Error_class(e, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "in-place gather at a non-root: class %d", cls);
        /* every rank named another as root, so all failed locally */
    }
    free(in); free(vb); free(sc); free(sd); free(rcv); free(rd); free(sbuf); free(rbuf); free(types);
    free(rc); free(dis);
    return finish();
}
