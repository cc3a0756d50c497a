/* IS: the NAS integer sort kernel. TOTAL_KEYS keys from the specification's
 * generator (each the scaled sum of four numbers) are ranked ten times by a
 * bucket sort: bucket sizes are summed with MPI_Allreduce, buckets are
 * dealt out to processes in key order, the counts go by MPI_Alltoall and the
 * keys by MPI_Alltoallv, and each process ranks its key range by counting.
 * Partial verification checks the ranks of five keys against the
 * specification's table each iteration; full verification that the keys
 * end up sorted across processes. */
#include <stdlib.h>
#include <string.h>
#include "nas.h"

#define MAX_ITERATIONS 10
#define TEST_ARRAY_SIZE 5
#define SEED 314159265ULL

struct params {
    int total_log2, max_key_log2, buckets_log2;
    long test_index[TEST_ARRAY_SIZE], test_rank[TEST_ARRAY_SIZE];
};

/* The specification's sizes and partial verification table. */
static const struct params *class_params(char c)
{
    static const struct params s = {16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}};
    static const struct params w = {20, 16, 10, {357773, 934767, 875723, 898999, 404505},
                                    {1249, 11698, 1039987, 1043896, 1048018}};
    static const struct params a = {23, 19, 10, {2112377, 662041, 5336171, 3642833, 4250760},
                                    {104, 17523, 123928, 8288932, 8388264}};
    return c == 'S' ? &s : c == 'W' ? &w : &a;
}

/* The rank the specification expects for test key i at `iteration`. */
static long expected_rank(const struct params *p, int i, int iteration)
{
    switch (CLASS_CHAR) {
    case 'S': return i <= 2 ? p->test_rank[i] + iteration : p->test_rank[i] - iteration;
    case 'W': return i < 2 ? p->test_rank[i] + (iteration - 2) : p->test_rank[i] - iteration;
    default: return i <= 2 ? p->test_rank[i] + (iteration - 1) : p->test_rank[i] - (iteration - 1);
    }
}

static int rank, np;
static const struct params *P;
static long total_keys, nkeys, max_key, nbuckets;
static int shift;
static int *keys, *sendbuf, *recvbuf, *counts;
static int *bucket_size, *bucket_total, *bucket_ptr, *send_count, *send_displ, *recv_count, *recv_displ;
static long my_min, my_max, nrecv, lesser;

/* One ranking (the timed unit of work); returns how many of the five test
 * keys this process found at their expected rank. */
static int rank_keys(int iteration, int *failed)
{
    if (rank == 0) {
        keys[iteration] = iteration;
        keys[iteration + MAX_ITERATIONS] = (int)(max_key - iteration);
    }
    /* the test keys' values, from the processes holding them */
    int test_val[TEST_ARRAY_SIZE] = {0}, test_all[TEST_ARRAY_SIZE];
    for (int i = 0; i < TEST_ARRAY_SIZE; i++)
        if (P->test_index[i] / nkeys == rank)
            test_val[i] = keys[P->test_index[i] % nkeys];

    memset(bucket_size, 0, sizeof(int) * nbuckets);
    for (long i = 0; i < nkeys; i++)
        bucket_size[keys[i] >> shift]++;
    bucket_ptr[0] = 0;
    for (long b = 1; b < nbuckets; b++)
        bucket_ptr[b] = bucket_ptr[b - 1] + bucket_size[b - 1];
    for (long i = 0; i < nkeys; i++)
        sendbuf[bucket_ptr[keys[i] >> shift]++] = keys[i];
    MPI_Allreduce(bucket_size, bucket_total, (int)nbuckets, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(test_val, test_all, TEST_ARRAY_SIZE, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    /* deal whole buckets out in key order, about nkeys keys per process */
    long acc = 0, local = 0;
    int p = 0, first = 0;
    memset(send_count, 0, sizeof(int) * np);
    my_min = my_max = -1;
    for (long b = 0; b < nbuckets; b++) {
        acc += bucket_total[b];
        local += bucket_size[b];
        if (acc >= (long)(p + 1) * nkeys || b == nbuckets - 1) {
            send_count[p] = (int)local;
            if (p == rank) {
                my_min = (long)first << shift;
                my_max = ((b + 1) << shift) - 1;
            }
            local = 0;
            first = (int)b + 1;
            if (++p == np)
                break;
        }
    }
    send_displ[0] = 0;
    for (int q = 1; q < np; q++)
        send_displ[q] = send_displ[q - 1] + send_count[q - 1];
    MPI_Alltoall(send_count, 1, MPI_INT, recv_count, 1, MPI_INT, MPI_COMM_WORLD);
    recv_displ[0] = 0;
    for (int q = 1; q < np; q++)
        recv_displ[q] = recv_displ[q - 1] + recv_count[q - 1];
    nrecv = recv_displ[np - 1] + recv_count[np - 1];
    MPI_Alltoallv(sendbuf, send_count, send_displ, MPI_INT, recvbuf, recv_count, recv_displ, MPI_INT,
                  MPI_COMM_WORLD);

    /* rank by counting: counts[j] = keys <= my_min + j held here */
    long range = my_max >= my_min && my_min >= 0 ? my_max - my_min + 1 : 0;
    memset(counts, 0, sizeof(int) * (range ? range : 1));
    for (long i = 0; i < nrecv; i++)
        counts[recvbuf[i] - my_min]++;
    for (long j = 1; j < range; j++)
        counts[j] += counts[j - 1];
    long n = nrecv;
    lesser = 0;
    MPI_Exscan(&n, &lesser, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        lesser = 0;

    int passed = 0;
    for (int i = 0; i < TEST_ARRAY_SIZE; i++) {
        long k = test_all[i];
        if (range == 0 || k < my_min || k > my_max)
            continue;
        long key_rank = lesser + (k > my_min ? counts[k - 1 - my_min] : 0);
        if (key_rank == expected_rank(P, i, iteration))
            passed++;
        else {
            *failed = 1;
            printf(" Failed partial verification: iteration %d, test key %d (value %ld): rank %ld, expected %ld\n",
                   iteration, i, k, key_rank, expected_rank(P, i, iteration));
        }
    }
    return passed;
}

/* The keys, placed by their ranks, ascend within and across processes. */
static int full_verify(void)
{
    long bad = 0;
    int *sorted = malloc(sizeof(int) * (nrecv ? nrecv : 1));
    for (long i = nrecv - 1; i >= 0; i--)
        sorted[--counts[recvbuf[i] - my_min]] = recvbuf[i];
    for (long i = 1; i < nrecv; i++)
        bad += sorted[i - 1] > sorted[i];
    int last = nrecv ? sorted[nrecv - 1] : -1, before = -1;
    MPI_Sendrecv(&last, 1, MPI_INT, rank + 1 < np ? rank + 1 : MPI_PROC_NULL, 0, &before, 1, MPI_INT,
                 rank > 0 ? rank - 1 : MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (nrecv && before > sorted[0])
        bad++;
    long all_bad, all_n;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&nrecv, &all_n, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    free(sorted);
    if (rank == 0 && (all_bad || all_n != total_keys))
        printf(" Full verification failed: %ld keys out of order, %ld of %ld keys\n", all_bad, all_n, total_keys);
    return all_bad == 0 && all_n == total_keys;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    P = class_params(CLASS_CHAR);
    total_keys = 1L << P->total_log2;
    max_key = 1L << P->max_key_log2;
    nbuckets = 1L << P->buckets_log2;
    shift = P->max_key_log2 - P->buckets_log2;
    if (total_keys % np != 0 || np > nbuckets) {
        if (rank == 0)
            fprintf(stderr, "is: %d processes do not divide the %ld keys of class %c\n", np, total_keys, CLASS_CHAR);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    nkeys = total_keys / np;
    long room = nkeys * 4 + 1024; /* a process may receive more than its share */
    keys = malloc(sizeof(int) * nkeys);
    sendbuf = malloc(sizeof(int) * nkeys);
    recvbuf = malloc(sizeof(int) * room);
    counts = malloc(sizeof(int) * max_key);
    bucket_size = malloc(sizeof(int) * nbuckets);
    bucket_total = malloc(sizeof(int) * nbuckets);
    bucket_ptr = malloc(sizeof(int) * nbuckets);
    send_count = malloc(sizeof(int) * np);
    send_displ = malloc(sizeof(int) * np);
    recv_count = malloc(sizeof(int) * np);
    recv_displ = malloc(sizeof(int) * np);

    /* this process's keys: four numbers each, from its place in the one sequence */
    uint64_t x = nas_mul(SEED, nas_pow(NAS_A, 4ULL * (uint64_t)(rank * nkeys)));
    long k4 = max_key / 4;
    for (long i = 0; i < nkeys; i++) {
        double s = nas_rand(&x, NAS_A);
        s += nas_rand(&x, NAS_A);
        s += nas_rand(&x, NAS_A);
        s += nas_rand(&x, NAS_A);
        keys[i] = (int)(k4 * s);
    }

    int failed = 0;
    rank_keys(1, &failed); /* once untimed, as the specification does */
    failed = 0;
    int passed = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 1; it <= MAX_ITERATIONS; it++)
        passed += rank_keys(it, &failed);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int all_passed;
    MPI_Reduce(&passed, &all_passed, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int full = full_verify();
    if (rank == 0) {
        int ok = full && all_passed == TEST_ARRAY_SIZE * MAX_ITERATIONS;
        printf(" NAS-style IS (oxmpi c-tests/bench/nas), class %c, %d processes\n", CLASS_CHAR, np);
        printf(" Partial verifications passed: %d of %d; full verification %s\n", all_passed,
               TEST_ARRAY_SIZE * MAX_ITERATIONS, full ? "passed" : "failed");
        nas_report("IS", total_keys, MAX_ITERATIONS, tmax, np, (double)MAX_ITERATIONS * total_keys / tmax / 1e6,
                   "keys ranked", ok);
    }
    MPI_Finalize();
    return 0;
}
