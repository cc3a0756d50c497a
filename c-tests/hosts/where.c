/* Used by tools/test_hosts.py: each rank prints its network namespace (its
 * "host") and how many ranks MPI_COMM_TYPE_SHARED puts with it, and how
 * many MPI_COMM_TYPE_HW_UNGUIDED does (0: MPI_COMM_NULL) and the resource
 * it names in the info passed. */
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
    MPI_Info info; MPI_Info_create(&info);
    MPI_Comm part; MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &part);
    int pr = 0; if (part != MPI_COMM_NULL) MPI_Comm_size(part, &pr);
    char res[64] = "none"; int flag; MPI_Info_get_string(info, "mpi_hw_resource_type", &(int){64}, res, &flag);
    printf("rank %d of %d in %s, %d on this host, unguided %d by %s\n", r, n, ns, sr, pr, res);
    MPI_Finalize();
}
