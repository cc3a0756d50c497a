/* Memory the ranks share outside MPI, for tests in which a rank computes
 * without calling MPI until its peers say, there, that they are done. */
#ifndef OXMPI_TEST_OUTSIDE_H
#define OXMPI_TEST_OUTSIDE_H
#include "common.h"
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* One int per rank (up to 1024), zeroed, shared by every rank of the
 * world; `tag` names the segment while it is being opened. */
static volatile int *shared_counters(const char *tag)
{
    int rank;
    char name[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) snprintf(name, sizeof name, "/%s-%d", tag, (int)getpid());
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = shm_open(name, rank == 0 ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (rank == 0 && fd >= 0) CHECK(ftruncate(fd, 4096) == 0, "ftruncate");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) fd = shm_open(name, O_RDWR, 0600);
    volatile int *got = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (got == MAP_FAILED) {
        fprintf(stderr, "rank %d: cannot share memory outside MPI (%s)\n", rank, name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) shm_unlink(name);
    return got;
}

/* Seconds of CLOCK_MONOTONIC. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#endif
