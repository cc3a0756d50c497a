/* Used by tools/test_hosts.py: each rank prints its network namespace (its
 * "host") and how many ranks MPI_COMM_TYPE_SHARED puts with it. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n; char host[256]; char ns[256] = "?";
    MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    ssize_t k = readlink("/proc/self/ns/net", ns, sizeof ns - 1); if (k > 0) ns[k] = 0;
    MPI_Comm shared; MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int sr; MPI_Comm_size(shared, &sr);
    printf("rank %d of %d in %s, %d on this host\n", r, n, ns, sr);
    MPI_Finalize();
}
