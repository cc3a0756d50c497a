/* oxmpi-test: ranks=1,2,3,4,9
 * No rank leaves a barrier before every rank has entered it: on
 * MPI_COMM_WORLD and a duplicate of it (the whole world's barriers, which
 * go by arrival counts shared by both), on a communicator of the world
 * in reverse order and on halves of a split (through the mailboxes),
 * interleaved with other collectives and point-to-point messages, the
 * ranks arriving in a rotating order, some a few milliseconds late. Each
 * rank notes when it entered and left each barrier (CLOCK_MONOTONIC, one
 * clock for the host's processes); afterwards every rank checks that
 * each barrier's earliest leave came after its latest entry. At 9 ranks
 * the world's barriers gather at rank 0 instead. */
#define _GNU_SOURCE
#include "common.h"
#include <time.h>

enum { ROUNDS = 60, COMMS = 4 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pause_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comms[COMMS];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[3]);
    /* per round: when this rank entered and left the barrier */
    double in[ROUNDS], out[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm c = comms[i % COMMS];
        int crank, csize;
        MPI_Comm_rank(c, &crank);
        MPI_Comm_size(c, &csize);
        /* one rank of the communicator comes late, a different one each round */
        if (crank == i % csize && i % 3 != 2)
            pause_ms(1 + i % 4);
        in[i] = now();
        MPI_Barrier(c);
        out[i] = now();
        /* other traffic between the barriers */
        int x = rank, sum = 0;
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comms[(i + 1) % COMMS]);
        if (size > 1 && i % 5 == 0) {
            int to = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
            MPI_Sendrecv(&rank, 1, MPI_INT, to, i, &got, 1, MPI_INT, from, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(got == from, "round %d: sendrecv got %d from %d", i, got, from);
        }
    }
    /* every rank's times, then each barrier's latest entry against its
     * earliest leave among its members */
    double *ins = malloc(sizeof(double) * ROUNDS * size), *outs = malloc(sizeof(double) * ROUNDS * size);
    MPI_Allgather(in, ROUNDS, MPI_DOUBLE, ins, ROUNDS, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(out, ROUNDS, MPI_DOUBLE, outs, ROUNDS, MPI_DOUBLE, MPI_COMM_WORLD);
    int *colors = malloc(sizeof(int) * size), mine = rank % 2;
    MPI_Allgather(&mine, 1, MPI_INT, colors, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < ROUNDS; i++) {
        double last_in = 0, first_out = 1e300;
        for (int r = 0; r < size; r++) {
            /* the halves: only this rank's half met in this barrier */
            if (i % COMMS == 3 && colors[r] != mine)
                continue;
            last_in = ins[r * ROUNDS + i] > last_in ? ins[r * ROUNDS + i] : last_in;
            first_out = outs[r * ROUNDS + i] < first_out ? outs[r * ROUNDS + i] : first_out;
        }
        CHECK(first_out >= last_in, "round %d (communicator %d): a rank left %.1f us before the last one entered", i,
              i % COMMS, (last_in - first_out) * 1e6);
    }
    free(ins);
    free(outs);
    free(colors);
    for (int k = 1; k < COMMS; k++) MPI_Comm_free(&comms[k]);
    return finish();
}
