/* oxmpi-test: ranks=1,2,3,4,9
 * Short blocking collectives (the shared-memory mailbox path) under
 * stress: thousands of back-to-back Bcast/Reduce/Allreduce/Barrier calls
 * with rotating roots on three communicators (world, a duplicate, and
 * halves of a split), interleaved with point-to-point messages and a
 * nonblocking collective in flight, every result checked; sizes on both
 * sides of the mailbox limit (4 KiB); communicators freed and made
 * again (their context ids come back); a strided datatype and a user
 * operator that does not commute; broadcasts of two communicators taken
 * in another order than the root made them; at 9 ranks the mailbox
 * reductions and barrier gather at rank 0 instead of every rank reading
 * every other; calls in which some ranks pass a predefined type (the
 * short path straight to the mailboxes) and others a derived one, or
 * MPI_IN_PLACE, for the same bytes. */
#include "common.h"

static int rank, size;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int lens[] = {1, 100, 1024, 1025, 3000}; /* ints: 4 B to 12 KiB */
    int *buf = malloc(3000 * sizeof(int)), *out = malloc(3000 * sizeof(int));
    int bad = 0;
    for (int it = 0; it < 3000; it++) {
        int n = lens[it % 5], root = it % size;
        /* a nonblocking allreduce in flight across the blocking ones */
        int nbx = rank + it, nby = -1;
        MPI_Request nbr;
        MPI_Iallreduce(&nbx, &nby, 1, MPI_INT, MPI_SUM, dup, &nbr);
        for (int i = 0; i < n; i++) buf[i] = rank == root ? it * 7 + i : -1;
        MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) bad += buf[i] != it * 7 + i;
        for (int i = 0; i < n; i++) buf[i] = rank + i + it;
        MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, dup);
        for (int i = 0; i < n; i++) bad += out[i] != size * (i + it) + size * (size - 1) / 2;
        MPI_Reduce(buf, out, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD);
        for (int i = 0; i < n && rank == root; i++) bad += out[i] != size - 1 + i + it;
        /* a message round the ring between collectives */
        int tok = it, got = -1;
        MPI_Sendrecv(&tok, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size, 3,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += got != it;
        MPI_Barrier(half);
        int hx = hrank + 1, hy = 0;
        MPI_Allreduce(&hx, &hy, 1, MPI_INT, MPI_SUM, half);
        bad += hy != hsize * (hsize + 1) / 2;
        MPI_Wait(&nbr, MPI_STATUS_IGNORE);
        bad += nby != size * it + size * (size - 1) / 2;
        if (bad) {
            CHECK(bad == 0, "iteration %d (%d ints, root %d): %d wrong", it, n, root, bad);
            break;
        }
    }
    /* communicators freed and made again reuse context ids, and number
     * their operations from the start again: nothing of the old one's
     * may be read as the new one's */
    for (int it = 0; it < 300 && bad == 0; it++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int root = it % size, v = rank == root ? it * 3 + 1 : -1, sum = 0, one = it;
        MPI_Bcast(&v, 1, MPI_INT, root, c);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        bad += (v != it * 3 + 1) + (sum != it * size);
        MPI_Comm_free(&c);
    }
    CHECK(bad == 0, "short collectives on re-made communicators: %d wrong", bad);
    /* the root broadcasts on dup, then 20 times on world; the others take
     * world's 20 first. Unsafe by MPI 4.0 section 6.14 (it hangs where a
     * broadcast synchronizes), but a short broadcast does not here, as in
     * MPICH: a reader finds a publication older than the last it read */
    int early = -1, late[20];
    if (rank == 0) {
        early = 99;
        MPI_Bcast(&early, 1, MPI_INT, 0, dup);
        for (int i = 0; i < 20; i++) {
            late[i] = 1000 + i;
            MPI_Bcast(&late[i], 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
    } else {
        for (int i = 0; i < 20; i++) {
            late[i] = -1;
            MPI_Bcast(&late[i], 1, MPI_INT, 0, MPI_COMM_WORLD);
        }
        MPI_Bcast(&early, 1, MPI_INT, 0, dup);
    }
    for (int i = 0; i < 20; i++) bad += late[i] != 1000 + i;
    CHECK(bad == 0 && early == 99, "broadcasts taken in another order: %d wrong, early %d", bad, early);
    /* one call, two paths: ranks that pass a predefined type go straight
     * to the mailboxes, ranks that pass the same bytes as a contiguous
     * derived type take the general path there; in place on some ranks */
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    int odd = rank % 2, *all = malloc(4 * size * sizeof(int)), *got = malloc(4 * size * sizeof(int));
    for (int it = 0; it < 50 && bad == 0; it++) {
        int root = it % size;
        for (int i = 0; i < 4; i++) buf[i] = rank == root ? it * 10 + i : -1;
        MPI_Bcast(buf, odd ? 1 : 4, odd ? four : MPI_INT, root, MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++) bad += buf[i] != it * 10 + i;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 4; i++) all[4 * r + i] = 1000 * rank + 10 * r + i + it;
        MPI_Alltoall(all, odd ? 1 : 4, odd ? four : MPI_INT, got, odd ? 1 : 4, odd ? four : MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 4; i++) bad += got[4 * r + i] != 1000 * r + 10 * rank + i + it;
        for (int i = 0; i < 4; i++) buf[i] = rank * 4 + i + it;
        MPI_Allgather(buf, odd ? 1 : 4, odd ? four : MPI_INT, got, odd ? 1 : 4, odd ? four : MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < 4 * size; r++) bad += got[r] != r + it;
        for (int i = 0; i < 4; i++) out[i] = buf[i] = rank + i + it;
        MPI_Allreduce(odd ? MPI_IN_PLACE : buf, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++) bad += out[i] != size * (i + it) + size * (size - 1) / 2;
    }
    CHECK(bad == 0, "collectives whose ranks took different paths: %d wrong", bad);
    MPI_Type_free(&four);
    free(all), free(got);
    /* a strided type through the short path: every other int of 50 */
    MPI_Datatype strided;
    MPI_Type_vector(25, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < 50; i++) buf[i] = rank == size - 1 ? i : -1;
    MPI_Bcast(buf, 1, strided, size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < 50; i++) bad += buf[i] != (i % 2 == 0 || rank == size - 1 ? i : -1);
    CHECK(bad == 0, "strided bcast: %d wrong", bad);
    MPI_Type_free(&strided);
    /* a user operator that does not commute: the product in rank order */
    MPI_Op op;
    MPI_Op_create(mat2_product, 0, &op);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    int m[4] = {rank + 1, 1, 1, 0}, prod[4], want[4] = {1, 0, 0, 1};
    for (int r = 0; r < size; r++) {
        int a[4] = {r + 1, 1, 1, 0};
        int len = 1;
        mat2_product(want, a, &len, NULL); /* a = want * a */
        memcpy(want, a, sizeof a);
    }
    MPI_Allreduce(m, prod, 1, mat, op, MPI_COMM_WORLD);
    CHECK(memcmp(prod, want, sizeof want) == 0, "non-commuting allreduce: %d %d %d %d", prod[0], prod[1], prod[2],
          prod[3]);
    MPI_Type_free(&mat);
    MPI_Op_free(&op);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free(buf), free(out);
    return finish();
}
