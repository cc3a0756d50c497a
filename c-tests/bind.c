/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_BIND=auto;OXMPI_BIND=core
 * Where MPI_Init leaves each rank (OXMPI_BIND): with OXMPI_BIND=auto and
 * more ranks on the host than CPUs in their (common) mask, or with
 * OXMPI_BIND=core, the host's i-th rank is bound to the i-th CPU of the
 * mask, round robin, and runs there; with none (the default), or fewer
 * ranks than CPUs under auto, its mask is as it was. Ranks given
 * different masks beforehand, or a host under a CPU quota, are left
 * alone. */
#define _GNU_SOURCE
#include "common.h"
#include <sched.h>

/* the i-th CPU of `set` (-1: none) */
static int nth_cpu(const cpu_set_t *set, int i)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set) && i-- == 0)
            return c;
    return -1;
}

/* whether the cgroup limits this process's CPU time (cpu.max not "max") */
static int under_quota(void)
{
    char buf[64] = "";
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (!f)
        return 0;
    int got = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    return got && strncmp(buf, "max", 3) != 0;
}

int main(int argc, char **argv)
{
    cpu_set_t before, after;
    CPU_ZERO(&before);
    CPU_ZERO(&after);
    sched_getaffinity(0, sizeof before, &before);
    MPI_Init(&argc, &argv);
    sched_getaffinity(0, sizeof after, &after);

    MPI_Comm host;
    int me, ranks;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &me);
    MPI_Comm_size(host, &ranks);
    /* did every rank of the host start with the same mask? */
    cpu_set_t *all = malloc(ranks * sizeof(cpu_set_t));
    MPI_Allgather(&before, sizeof before, MPI_BYTE, all, sizeof before, MPI_BYTE, host);
    int alike = 1;
    for (int r = 0; r < ranks; r++)
        alike &= CPU_EQUAL(&all[r], &before);

    const char *mode = getenv("OXMPI_BIND") ? getenv("OXMPI_BIND") : "none";
    int cpus = CPU_COUNT(&before);
    int wanted = strcmp(mode, "core") == 0 || (strcmp(mode, "auto") == 0 && ranks > cpus);
    if (wanted && alike && !under_quota()) {
        int cpu = nth_cpu(&before, me % cpus);
        CHECK(CPU_COUNT(&after) == 1 && CPU_ISSET(cpu, &after),
              "OXMPI_BIND=%s, rank %d of %d on %d CPUs: bound to %d CPUs, CPU %d %s", mode, me, ranks, cpus,
              CPU_COUNT(&after), cpu, CPU_ISSET(cpu, &after) ? "among them" : "not among them");
        CHECK(sched_getcpu() == cpu, "bound to CPU %d but running on %d", cpu, sched_getcpu());
    } else {
        CHECK(CPU_EQUAL(&before, &after), "OXMPI_BIND=%s, rank %d of %d on %d CPUs: mask changed (%d CPUs now)",
              mode, me, ranks, cpus, CPU_COUNT(&after));
    }
    /* the job works as before, bound or not */
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, host);
    CHECK(sum == ranks * (ranks - 1) / 2, "allreduce of the host's ranks: %d", sum);

    free(all);
    MPI_Comm_free(&host);
    return finish();
}
