/* oxmpi-test: ranks=1,2
 * MPI_Alloc_mem and MPI_Free_mem (MPI 4.0 §9.2): memory of every size,
 * 0 included, that a program may write and communicate from and into;
 * the alignment hint mpi_minimum_memory_alignment (MPI 4.1) honoured;
 * with MPI_ERRORS_RETURN, a negative size or a bad info handle is an
 * error and allocates nothing, and freeing memory MPI_Alloc_mem did not
 * give (or gave and took back) is MPI_ERR_BASE. */
#include "common.h"
#include <stdint.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Aint sizes[] = {0, 1, 1000, 1 << 20, 64 << 20};
    for (int k = 0; k < 5; k++) {
        char *p = NULL;
        CHECK(MPI_Alloc_mem(sizes[k], MPI_INFO_NULL, &p) == MPI_SUCCESS && p != NULL, "alloc of %ld bytes",
              (long)sizes[k]);
        if (p && sizes[k] > 0) {
            memset(p, k + 1, sizes[k]);
            CHECK(p[sizes[k] - 1] == k + 1, "last byte of %ld", (long)sizes[k]);
        }
        CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "free of %ld bytes", (long)sizes[k]);
    }

    /* two live at once are apart */
    int *a = NULL, *b = NULL;
    MPI_Alloc_mem(0, MPI_INFO_NULL, &a);
    MPI_Alloc_mem(0, MPI_INFO_NULL, &b);
    CHECK(a != b, "two allocations of 0 bytes share an address");
    MPI_Free_mem(a);
    MPI_Free_mem(b);

    /* as communication buffers, 1 MiB from the right rank */
    int n = 1 << 18;
    int *out, *in;
    MPI_Alloc_mem((MPI_Aint)n * sizeof(int), MPI_INFO_NULL, &out);
    MPI_Alloc_mem((MPI_Aint)n * sizeof(int), MPI_INFO_NULL, &in);
    for (int i = 0; i < n; i++) out[i] = rank * 3 + i;
    MPI_Sendrecv(out, n, MPI_INT, right, 0, in, n, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i += 1021) CHECK(in[i] == left * 3 + i, "in[%d] = %d", i, in[i]);
    MPI_Free_mem(out);
    MPI_Free_mem(in);

    /* the alignment hint */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    for (int k = 0; k < 4; k++) {
        char *p = NULL;
        CHECK(MPI_Alloc_mem(100 + k, info, &p) == MPI_SUCCESS, "aligned alloc");
        CHECK(((uintptr_t)p & 4095) == 0, "%p is not aligned to 4096 bytes", (void *)p);
        MPI_Free_mem(p);
    }
    MPI_Info_free(&info);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (!getenv("OXMPI_TEST_REFERENCE")) {
        /* (MPICH lets these pass or crash) */
        char *p = NULL;
        int e = MPI_Alloc_mem(-1, MPI_INFO_NULL, &p);
        CHECK(class_of(e) == MPI_ERR_ARG && p == NULL, "negative size: class %d", class_of(e));
        MPI_Info freed;
        MPI_Info_create(&freed);
        MPI_Info bad = freed;
        MPI_Info_free(&freed);
        e = MPI_Alloc_mem(8, bad, &p);
        CHECK(class_of(e) == MPI_ERR_INFO && p == NULL, "freed info: class %d", class_of(e));
        int on_stack = 0;
        e = MPI_Free_mem(&on_stack);
        CHECK(class_of(e) == MPI_ERR_BASE, "free of a stack address: class %d", class_of(e));
        MPI_Alloc_mem(16, MPI_INFO_NULL, &p);
        e = MPI_Free_mem(p + 8);
        CHECK(class_of(e) == MPI_ERR_BASE, "free inside an allocation: class %d", class_of(e));
        CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "free");
        e = MPI_Free_mem(p);
        CHECK(class_of(e) == MPI_ERR_BASE, "second free: class %d", class_of(e));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return finish();
}
