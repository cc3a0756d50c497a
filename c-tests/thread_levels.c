/* oxmpi-test: ranks=1,2,4 variants=OXMPI_TEST_LEVEL=serialized
 * Calls from two threads through the one lock every MPI call takes
 * (oxmpi provides MPI_THREAD_SERIALIZED at most). Under
 * MPI_THREAD_FUNNELED a second thread breaks the level, calling MPI while
 * the main thread runs collectives, point-to-point and group calls (an
 * erroneous program, but its calls must still be serialized, never
 * interleaved inside the library): it makes, checks and frees groups,
 * whose table both threads' calls change, and reads the world's name.
 * With OXMPI_TEST_LEVEL=serialized the two threads take turns by a mutex
 * of their own, each running collectives and exchanges in one order on
 * every rank, as MPI_THREAD_SERIALIZED allows. Every result is checked. */
#include "common.h"
#include <pthread.h>

#define ROUNDS 2000

static int rank, size;
static volatile int stop;
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int turn;

/* one round of work on MPI_COMM_WORLD: an Allreduce and a ring exchange */
static void round_of(int k, int who)
{
    long v = rank + k, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long want = (long)size * (size - 1) / 2 + (long)size * k;
    CHECK(sum == want, "thread %d round %d: allreduce %ld, want %ld", who, k, sum, want);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&k, 1, MPI_INT, right, k, &got, 1, MPI_INT, left, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == k, "thread %d round %d: got %d from the left", who, k, got);
}

/* groups made and freed: their table is the state's, which the main
 * thread's calls use too; `n` ranks of the world's group, the result's
 * size and ranks checked */
static void groups(int n, const char *who)
{
    MPI_Group world, part;
    int ranks[64], got = -1;
    for (int i = 0; i < n; i++)
        ranks[i] = n - 1 - i;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &part);
    MPI_Group_size(part, &got);
    CHECK(got == n, "%s: a group of %d ranks has size %d", who, n, got);
    int first = 0, there = -1;
    MPI_Group_translate_ranks(part, 1, &first, world, &there);
    CHECK(there == n - 1, "%s: rank 0 of the group is world rank %d, not %d", who, there, n - 1);
    MPI_Group_free(&part);
    MPI_Group_free(&world);
}

/* the level breaker: local calls on the state's tables until told to stop */
static void *breaker(void *arg)
{
    (void)arg;
    long calls = 0;
    while (!stop) {
        groups((int)(calls % size) + 1, "breaker");
        char name[MPI_MAX_OBJECT_NAME];
        int len = 0;
        MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
        CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "breaker: world's name is %s", name);
        calls++;
    }
    return NULL;
}

/* thread `who` of the serialized pair: rounds who, who + 2, ... in turn */
static void *taker(void *arg)
{
    int who = (int)(long)arg;
    for (int k = who; k < ROUNDS; k += 2) {
        pthread_mutex_lock(&turn_lock);
        while (turn != who)
            pthread_cond_wait(&turn_cond, &turn_lock);
        round_of(k, who);
        turn = 1 - who;
        pthread_cond_broadcast(&turn_cond);
        pthread_mutex_unlock(&turn_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *level = getenv("OXMPI_TEST_LEVEL");
    int serialized = level && strcmp(level, "serialized") == 0, provided = -1;
    MPI_Init_thread(&argc, &argv, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED, &provided);
    CHECK(provided == (serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_FUNNELED), "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t th[2];
    if (serialized) {
        for (long w = 0; w < 2; w++)
            pthread_create(&th[w], NULL, taker, (void *)w);
        for (int w = 0; w < 2; w++)
            pthread_join(th[w], NULL);
    } else {
        pthread_create(&th[0], NULL, breaker, NULL);
        for (int k = 0; k < ROUNDS; k++) {
            round_of(k, 0);
            for (int g = 0; g < 50; g++)
                groups(size - (k + g) % size, "main");
        }
        stop = 1;
        pthread_join(th[0], NULL);
    }
    return finish();
}
