/* What the machine allows, without MPI: the floors under the
 * oversubscribed collectives (more processes than cores).
 *   switch:          two processes pinned to one core hand it to each
 *                    other by sched_yield; microseconds per hand-over
 *   yield_barrier_P: P processes (not pinned) meet in a barrier on one
 *                    shared counter, waiting by sched_yield; per barrier
 *   core_barrier_P:  the same, each process with its own arrival count
 *                    and the core it last ran on; a waiting process yields
 *                    only while one that has not arrived was last seen on
 *                    its core, and spins otherwise (what oxmpi's short
 *                    collectives do)
 *   futex_barrier_P: the same, waiting asleep on a futex that the last
 *                    one to arrive wakes
 *   line:            two processes, each pinned to one of the first two CPUs
 *                    it may run on, take turns writing one cache line, each
 *                    waiting to see the other's write: microseconds per pass
 *                    of the line from one CPU to the other (the floor under
 *                    a small message between ranks on two cores); printed
 *                    with P = 2 only
 *   alltoall_copy_P: P processes (not pinned) each copy the 1 MiB block
 *                    meant for them out of every process's P MiB send
 *                    area (shared memory) into their own P MiB receive
 *                    area, between yield barriers: an alltoall of 1 MiB
 *                    blocks with one memcpy per byte and no messages;
 *                    per round
 *   allgather_copy_P: the same from every process's one 1 MiB block
 *   bcast_copy_P:    the same, every process but the first copying the
 *                    first one's 1 MiB block
 *   alltoall_cma_P, allgather_cma_P, bcast_cma_P: the same from the
 *                    others' private memory by one cross-memory copy
 *                    (process_vm_readv) per block, a process's own block by
 *                    memcpy: what the single-copy algorithms can do
 *   alltoall64k_copy_P, alltoall64k_cma_P: alltoall_copy_P and
 *                    alltoall_cma_P with 64 KiB blocks
 * Prints RESULT <case> <case> <microseconds>, like the MPI benchmarks.
 *   floor [P]   (default 4) */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *shared(size_t len)
{
    void *p = mmap(0, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

static void *shared_page(void)
{
    return shared(4096);
}

/* fork p - 1 children; each process gets its index */
static int spawn(int p)
{
    fflush(stdout);
    for (int i = 1; i < p; i++)
        if (fork() == 0)
            return i;
    return 0;
}

static void reap(int p)
{
    for (int i = 1; i < p; i++) wait(NULL);
}

/* the first two CPUs of this process's mask in cpus[0] and cpus[1]: how
 * many it found (at most 2) */
static int first_cpus(int cpus[2])
{
    cpu_set_t all;
    int found = 0;
    sched_getaffinity(0, sizeof all, &all);
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &all))
            cpus[found++] = c;
    return found;
}

/* two processes, the first pinned to CPU cpus[0] and the second to
 * cpus[1], take turns n times writing one shared line, each waiting for
 * the other's write (giving its CPU away by sched_yield if `yield`, else
 * spinning); seconds per turn */
static double take_turns(const int cpus[2], long n, int yield)
{
    volatile long *turn = shared_page();
    cpu_set_t all, one;
    sched_getaffinity(0, sizeof all, &all);
    int id = spawn(2);
    CPU_ZERO(&one);
    CPU_SET(cpus[id], &one);
    sched_setaffinity(0, sizeof one, &one);
    double t = now();
    for (long i = 0; i < n; i++) {
        while (*turn != 2 * i + id)
            if (yield)
                sched_yield();
        *turn = 2 * i + id + 1;
    }
    t = now() - t;
    if (id)
        exit(0);
    reap(2);
    sched_setaffinity(0, sizeof all, &all);
    return t / (2.0 * n);
}

/* switch: both on the first CPU, handing it over by sched_yield */
static double hand_over(long n)
{
    int cpus[2];
    first_cpus(cpus);
    cpus[1] = cpus[0];
    return take_turns(cpus, n, 1);
}

/* line: one on each of the first two CPUs, spinning; -1 with fewer */
static double line_pass(long n)
{
    int cpus[2];
    return first_cpus(cpus) == 2 ? take_turns(cpus, n, 0) : -1;
}

/* a barrier on `count` by sched_yield: round k of p processes */
static void meet(long *count, long k, int p)
{
    __atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < (k + 1) * p) sched_yield();
}

static double yield_barrier(int p, int n)
{
    long *count = shared_page();
    int id = spawn(p);
    double t = 0;
    for (long k = 0; k <= n; k++) {
        if (k == 1)
            t = now(); /* round 0 only lines everyone up */
        meet(count, k, p);
    }
    t = now() - t;
    if (id)
        exit(0);
    reap(p);
    return t / n;
}

/* each process copies `blocks` blocks of `mib` bytes of the first
 * `sources` processes' send areas into its own receive area: block me of
 * each (alltoall, blocks = p) or the only one (allgather, blocks = 1);
 * with fewer sources than processes only the others copy (bcast: sources
 * = 1). The send areas are in shared memory, copied by memcpy; with
 * `cma`, each process's own, the others' read by process_vm_readv */
static double copy_rounds(int p, size_t mib, int blocks, int sources, int n, int cma)
{
    const size_t area = (size_t)blocks * mib;
    long *count = shared_page();
    struct where {
        pid_t pid;
        char *sends;
    } *at = shared((size_t)p * sizeof *at);
    char *all = cma ? NULL : shared((size_t)p * area);
    int id = spawn(p);
    char *sends = cma ? malloc(area) : all + id * area, *recvs = malloc((size_t)p * mib);
    for (size_t i = 0; i < area; i++) sends[i] = (char)(i + id);
    for (size_t i = 0; i < (size_t)p * mib; i++) recvs[i] = 0;
    at[id].pid = getpid();
    at[id].sends = sends;
    double t = 0;
    for (long k = 0; k <= n; k++) {
        if (k == 1)
            t = now();
        meet(count, k, p);
        int reads = sources == p || id >= sources;
        for (int r = 0; reads && r < sources; r++) {
            size_t off = (blocks > 1 ? (size_t)id : 0) * mib;
            if (!cma || r == id) {
                memcpy(recvs + (size_t)r * mib, (cma ? sends : all + r * area) + off, mib);
                continue;
            }
            struct iovec mine = {recvs + (size_t)r * mib, mib}, theirs = {at[r].sends + off, mib};
            if (process_vm_readv(at[r].pid, &mine, 1, &theirs, 1, 0) != (ssize_t)mib) {
                perror("process_vm_readv");
                exit(1);
            }
        }
    }
    meet(count, n + 1, p);
    t = now() - t;
    if (id)
        exit(0);
    reap(p);
    return t / n;
}

struct arrival {
    long round;
    int cpu;
    char pad[64 - sizeof(long) - sizeof(int)];
};

static double core_barrier(int p, int n)
{
    struct arrival *a = shared((size_t)p * sizeof *a);
    int id = spawn(p);
    double t = 0;
    for (long k = 0; k <= n; k++) {
        if (k == 1)
            t = now();
        a[id].cpu = sched_getcpu();
        __atomic_store_n(&a[id].round, k + 1, __ATOMIC_RELEASE);
        for (;;) {
            int cpu = sched_getcpu(), all = 1, mine = 0;
            a[id].cpu = cpu;
            for (int r = 0; r < p; r++)
                if (__atomic_load_n(&a[r].round, __ATOMIC_ACQUIRE) <= k) {
                    all = 0;
                    mine |= __atomic_load_n(&a[r].cpu, __ATOMIC_RELAXED) == cpu;
                }
            if (all)
                break;
            if (mine)
                sched_yield();
        }
    }
    t = now() - t;
    if (id)
        exit(0);
    reap(p);
    return t / n;
}

static double futex_barrier(int p, int n)
{
    int *count = shared_page(), *round = count + 16;
    int id = spawn(p);
    double t = 0;
    for (int k = 0; k <= n; k++) {
        if (k == 1)
            t = now();
        if (__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST) == p) {
            *count = 0;
            __atomic_store_n(round, k + 1, __ATOMIC_SEQ_CST);
            syscall(SYS_futex, round, FUTEX_WAKE, p, NULL, NULL, 0);
        } else {
            while (__atomic_load_n(round, __ATOMIC_ACQUIRE) <= k)
                syscall(SYS_futex, round, FUTEX_WAIT, k, NULL, NULL, 0);
        }
    }
    t = now() - t;
    if (id)
        exit(0);
    reap(p);
    return t / n;
}

int main(int argc, char **argv)
{
    int p = argc > 1 ? atoi(argv[1]) : 4;
    if (p < 2) {
        fprintf(stderr, "floor: needs at least 2 processes\n");
        return 1;
    }
    double line = p == 2 ? line_pass(1000000) : -1;
    if (line > 0)
        printf("RESULT line line %.3f\n", line * 1e6);
    printf("RESULT switch switch %.3f\n", hand_over(100000) * 1e6);
    printf("RESULT yield_barrier_%d yield_barrier_%d %.3f\n", p, p, yield_barrier(p, 100000) * 1e6);
    printf("RESULT core_barrier_%d core_barrier_%d %.3f\n", p, p, core_barrier(p, 100000) * 1e6);
    printf("RESULT futex_barrier_%d futex_barrier_%d %.3f\n", p, p, futex_barrier(p, 20000) * 1e6);
    const char *ways[] = {"copy", "cma"};
    for (int cma = 0; cma < 2; cma++) {
        const char *w = ways[cma];
        const size_t mib = 1 << 20;
        printf("RESULT alltoall_%s_%d alltoall_%s_%d %.3f\n", w, p, w, p, copy_rounds(p, mib, p, p, 200, cma) * 1e6);
        printf("RESULT allgather_%s_%d allgather_%s_%d %.3f\n", w, p, w, p, copy_rounds(p, mib, 1, p, 200, cma) * 1e6);
        printf("RESULT bcast_%s_%d bcast_%s_%d %.3f\n", w, p, w, p, copy_rounds(p, mib, 1, 1, 200, cma) * 1e6);
        printf("RESULT alltoall64k_%s_%d alltoall64k_%s_%d %.3f\n", w, p, w, p,
               copy_rounds(p, mib / 16, p, p, 3200, cma) * 1e6);
    }
    return 0;
}
