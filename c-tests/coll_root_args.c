/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_SINGLE_COPY_MIN=0;OXMPI_SHM_COLL_MAX=0
 * Arguments significant only at the root (MPI 4.0 §6.5, §6.6): the other
 * ranks of a Gather(v) pass -1, MPI_DATATYPE_NULL and NULL for the
 * receive side, those of a Scatter(v) for the send side, and a Reduce's
 * non-roots NULL for recvbuf, as MPICH's tests do; the root works in
 * place; the non-roots' parts use a strided datatype whose type signature
 * matches the root's contiguous doubles. Short, medium and long parts,
 * every root, blocking, nonblocking and persistent. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = {1, 12, 1000, 20000};
    for (int ci = 0; ci < 4; ci++) {
        int n = counts[ci];
        MPI_Datatype strided;
        MPI_Type_vector(n, 1, 3, MPI_DOUBLE, &strided);
        MPI_Type_commit(&strided);
        double *mine = malloc(3 * n * sizeof(double)), *all = malloc((size_t)size * n * sizeof(double));
        int *cnts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
        for (int r = 0; r < size; r++) {
            cnts[r] = n;
            displs[r] = (size - 1 - r) * n; /* blocks in reverse order */
        }
        for (int way = 0; way < 3; way++) {
            for (int root = 0; root < size; root++) {
                int bad = 0;
                /* Gather(v): non-roots send n strided doubles */
                for (int gv = 0; gv < 2; gv++) {
                    int at = gv ? displs[root] : root * n;
                    bad = 0;
                    for (int i = 0; i < 3 * n; i++) mine[i] = i % 3 ? -1 : rank * 1e6 + i / 3 + gv;
                    for (int i = 0; i < size * n; i++) all[i] = -2;
                    if (rank == root)
                        for (int i = 0; i < n; i++) all[at + i] = rank * 1e6 + i + gv;
                    if (rank == root && !gv)
                        THREE_WAYS(way, MPI_Gather, MPI_Igather, MPI_Gather_init, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
                    else if (!gv)
                        THREE_WAYS(way, MPI_Gather, MPI_Igather, MPI_Gather_init, mine, 1, strided, NULL, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                    else if (rank == root)
                        THREE_WAYS(way, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, all, cnts, displs, MPI_DOUBLE, root, MPI_COMM_WORLD);
                    else
                        THREE_WAYS(way, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, mine, 1, strided, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                    if (rank == root)
                        for (int r = 0; r < size; r++)
                            for (int i = 0; i < n; i++)
                                bad += all[(gv ? displs[r] : r * n) + i] != r * 1e6 + i + gv;
                    CHECK(!bad, "%s gather%s of %d doubles to %d: %d wrong", way_name(way), gv ? "v" : "", n, root, bad);
                }
                /* Scatter(v): non-roots receive n strided doubles */
                for (int sv = 0; sv < 2; sv++) {
                    bad = 0;
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < n; i++) all[(sv ? displs[r] : r * n) + i] = r * 1e6 + i + sv;
                    for (int i = 0; i < 3 * n; i++) mine[i] = -3;
                    if (rank == root && !sv)
                        THREE_WAYS(way, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, all, n, MPI_DOUBLE, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                    else if (!sv)
                        THREE_WAYS(way, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, NULL, -1, MPI_DATATYPE_NULL, mine, 1, strided, root, MPI_COMM_WORLD);
                    else if (rank == root)
                        THREE_WAYS(way, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, all, cnts, displs, MPI_DOUBLE, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
                    else
                        THREE_WAYS(way, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, NULL, NULL, NULL, MPI_DATATYPE_NULL, mine, 1, strided, root, MPI_COMM_WORLD);
                    if (rank != root)
                        for (int i = 0; i < 3 * n; i++) bad += mine[i] != (i % 3 ? -3 : rank * 1e6 + i / 3 + sv);
                    CHECK(!bad, "%s scatter%s of %d doubles from %d: %d wrong", way_name(way), sv ? "v" : "", n, root, bad);
                }
                /* Reduce: non-roots pass NULL for recvbuf */
                bad = 0;
                for (int i = 0; i < n; i++) mine[i] = rank + i;
                for (int i = 0; i < n; i++) all[i] = -4;
                THREE_WAYS(way, MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, mine, rank == root ? all : NULL, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
                if (rank == root)
                    for (int i = 0; i < n; i++) bad += all[i] != size * (size - 1) / 2.0 + (double)size * i;
                CHECK(!bad, "%s reduce of %d doubles to %d: %d wrong", way_name(way), n, root, bad);
            }
        }
        MPI_Type_free(&strided);
        free(mine);
        free(all);
        free(cnts);
        free(displs);
    }
    return finish();
}
