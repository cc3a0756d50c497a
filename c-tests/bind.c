/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_BIND=auto;OXMPI_BIND=core;OXMPI_BIND=none
 * Where MPI_Init leaves each rank (OXMPI_BIND): with OXMPI_BIND=auto and
 * more ranks on the host than CPUs in their (common) mask, or with
 * OXMPI_BIND=core, the host's i-th rank is bound to the i-th CPU of the
 * mask, round robin, and runs there; with spread (the default) or none,
 * or fewer ranks than CPUs under auto, its mask is as it was. Ranks
 * given different masks beforehand, or a host under a CPU quota, are
 * left alone. Under spread, ranks crowded onto one CPU of a host with
 * more ranks than CPUs spread out again over the mask while they wait
 * in barriers, each free to run anywhere in it afterwards. */
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

    const char *mode = getenv("OXMPI_BIND") ? getenv("OXMPI_BIND") : "spread";
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
    if (strcmp(mode, "spread") == 0 && ranks > cpus && alike && !under_quota()) {
        /* every rank on the mask's first CPU but for the last, on the
         * second, if that leaves the first with two more (three of four
         * ranks on one of two CPUs: the kernel's crowding, which it
         * leaves for a while); else every rank on the first; then each
         * free again */
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(nth_cpu(&before, me == ranks - 1 && ranks - 1 >= 3 ? 1 : 0), &one);
        sched_setaffinity(0, sizeof one, &one);
        sched_setaffinity(0, sizeof before, &before);
        int even = 0, *where = malloc(ranks * sizeof(int)), *count = calloc(CPU_SETSIZE, sizeof(int));
        int looks = 0, late = 0;
        double start = MPI_Wtime();
        /* every rank counts alike from the same places, and agrees on the
         * time: all stop together. At least 50 looks; while other work
         * loads the CPUs (which the ranks' places then follow too), up to
         * 20 s of them. */
        for (; !even && !(looks >= 50 && late); looks++) {
            for (int i = 0; i < 1000; i++)
                MPI_Barrier(host);
            int cpu = sched_getcpu();
            MPI_Allgather(&cpu, 1, MPI_INT, where, 1, MPI_INT, host);
            memset(count, 0, CPU_SETSIZE * sizeof(int));
            for (int r = 0; r < ranks; r++)
                if (where[r] >= 0 && where[r] < CPU_SETSIZE)
                    count[where[r]]++;
            int most = 0, least = ranks;
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &before)) {
                    most = count[c] > most ? count[c] : most;
                    least = count[c] < least ? count[c] : least;
                }
            even = most - least <= 1;
            late = MPI_Wtime() - start > 20.0;
            MPI_Allreduce(MPI_IN_PLACE, &late, 1, MPI_INT, MPI_MAX, host);
        }
        CHECK(even, "OXMPI_BIND=spread, %d ranks on %d CPUs crowded onto one: not spread out after %d000 barriers (%.1f s)",
              ranks, cpus, looks, MPI_Wtime() - start);
        cpu_set_t now;
        sched_getaffinity(0, sizeof now, &now);
        CHECK(CPU_EQUAL(&before, &now), "OXMPI_BIND=spread: rank %d's mask changed (%d CPUs now)", me, CPU_COUNT(&now));
        free(where);
        free(count);
    }
    /* the job works as before, bound or not */
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, host);
    CHECK(sum == ranks * (ranks - 1) / 2, "allreduce of the host's ranks: %d", sum);

    free(all);
    MPI_Comm_free(&host);
    return finish();
}
