/* Shared by the C tests: error counting, the "No Errors" verdict, the
 * proof that oxmpi (not MPICH) is the library answering, and a user
 * operator that does not commute. */
#ifndef OXMPI_TEST_COMMON_H
#define OXMPI_TEST_COMMON_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_errors = 0;

/* A user operator that does not commute: inout = in x inout for each
 * item of 4 ints, a 2x2 integer matrix in row-major order. */
static inline void mat2_product(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* MPI_Allreduce of one int, `x`, by a user operator made of `f` (the
 * tests of what a user operator may do): the result. */
static inline int allreduce_by(MPI_User_function *f, int x)
{
    int y = 0;
    MPI_Op op;
    MPI_Op_create(f, 1, &op);
    MPI_Allreduce(&x, &y, 1, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    return y;
}

/* A random number below n, from a seed every rank sets alike, so that
 * all ranks draw the same sequence (the random tests). */
static unsigned long long test_seed = 20261124;
static inline unsigned draw(unsigned n)
{
    test_seed = test_seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(test_seed >> 33) % n;
}

/* The error class of error code `e`. */
static inline int class_of(int e)
{
    int c;
    MPI_Error_class(e, &c);
    return c;
}

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            int r_;                                                        \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                            \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", r_,       \
                    __FILE__, __LINE__, #cond);                            \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            test_errors++;                                                 \
        }                                                                  \
    } while (0)

/* The ways the collective tests run each operation. */
enum { BLOCKING, NONBLOCKING, PERSISTENT };

static inline const char *way_name(int way)
{
    return way == BLOCKING ? "blocking" : way == NONBLOCKING ? "nonblocking" : "persistent";
}

/* One collective `way`: blocking(args); nonblocking(args, &req) + wait; or
 * init(args, info, &req) + start + wait, twice, + free; the request freed
 * by the wait, or kept by a persistent one. */
#define THREE_WAYS(way, blocking, nonblocking, init, ...)                               \
    do {                                                                                \
        MPI_Request r_;                                                                 \
        if ((way) == BLOCKING) {                                                        \
            CHECK(blocking(__VA_ARGS__) == MPI_SUCCESS, #blocking);                     \
        } else if ((way) == NONBLOCKING) {                                              \
            CHECK(nonblocking(__VA_ARGS__, &r_) == MPI_SUCCESS, #nonblocking);          \
            CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE) == MPI_SUCCESS, #nonblocking);       \
            CHECK(r_ == MPI_REQUEST_NULL, #nonblocking " request not freed");           \
        } else {                                                                        \
            CHECK(init(__VA_ARGS__, MPI_INFO_NULL, &r_) == MPI_SUCCESS, #init);         \
            for (int k_ = 0; k_ < 2; k_++) {                                            \
                MPI_Start(&r_);                                                         \
                MPI_Wait(&r_, MPI_STATUS_IGNORE);                                       \
            }                                                                           \
            CHECK(r_ != MPI_REQUEST_NULL, #init " request lost");                       \
            MPI_Request_free(&r_);                                                      \
        }                                                                               \
    } while (0)

/* The library must be oxmpi, and MPICH's own library must not be mapped
 * (this matters when the test was built with MPICH's mpicc). */
static void check_library(void)
{
    /* OXMPI_TEST_REFERENCE=1: the test runs on another MPI, to compare */
    if (getenv("OXMPI_TEST_REFERENCE"))
        return;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    CHECK(strstr(v, "oxmpi") != NULL, "library version is \"%s\"", v);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps))
        CHECK(strstr(line, "libmpich.so.12.") == NULL, "MPICH's library is mapped: %s", line);
    if (maps)
        fclose(maps);
}

/* Before MPI_Init: OXMPI_TEST_RANK0_ENV=NAME=VALUE sets NAME to VALUE in
 * the rank the launcher numbers 0 (PMI_RANK) alone, so that a variant can
 * give the ranks settings that differ. */
static void env_for_rank0(void)
{
    const char *kv = getenv("OXMPI_TEST_RANK0_ENV"), *r = getenv("PMI_RANK");
    if (kv && r && strcmp(r, "0") == 0)
        putenv(strdup(kv));
}

/* Sum the errors of all ranks; rank 0 prints the verdict. Then finalize. */
static int finish(void)
{
    int total = 0, rank;
    check_library();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&test_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}
#endif
