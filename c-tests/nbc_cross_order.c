/* oxmpi-test: ranks=1,2,3,4,9
 * The standard orders collectives per communicator only (MPI 4.0 §6.12:
 * "All processes must call collective operations (blocking and
 * nonblocking) in the same order per communicator"); a nonblocking one
 * starts without waiting for anyone, so ranks may start it before or
 * after a collective on another communicator and the program is correct.
 * Here the even ranks start theirs first and the odd ranks after, on
 * MPI_COMM_WORLD and two duplicates of it (all three whole-world, short
 * collectives, where the arrival lines take blocking ones):
 *  1. MPI_Ibarrier on one duplicate against a blocking MPI_Allreduce on
 *     the other;
 *  2. MPI_Iallreduce on MPI_COMM_WORLD against MPI_Barrier on a
 *     duplicate;
 *  3. MPI_Iallreduce on one duplicate and MPI_Iallgather on the other,
 *     both open at once, in opposite orders;
 *  4. MPI_Ialltoall on MPI_COMM_WORLD and MPI_Iallreduce on a duplicate,
 *     in opposite orders;
 *  5. a persistent MPI_Allreduce_init on one duplicate, started, against
 *     a blocking MPI_Allgather on MPI_COMM_WORLD;
 *  6. MPI_Ibarrier on MPI_COMM_WORLD, then MPI_Ibarrier on a duplicate
 *     on the even ranks, the other order on the odd, then a blocking
 *     MPI_Allreduce on the other duplicate before the waits;
 *  7. a persistent MPI_Allreduce_init and MPI_Barrier_init of
 *     MPI_COMM_WORLD, made once, started each time in opposite orders,
 *     with an MPI_Ibarrier of MPI_COMM_WORLD first on the even ranks and
 *     last on the odd: once initialized, persistent collectives "can be
 *     started in any order and the order can be different at different
 *     processes" (MPI 4.0 §6.13);
 *  8. ten persistent MPI_Allreduce_init of MPI_COMM_WORLD (more than
 *     get arrival lines of their own: the rest go as messages), started
 *     first to last on the even ranks and last to first on the odd;
 *  9. six more duplicates, made anew each time (more than get arrival
 *     lines of their own for nonblocking collectives: the rest go as
 *     messages), an MPI_Iallreduce on each started first to last on the
 *     even ranks and last to first on the odd, with a blocking
 *     MPI_Allreduce on another duplicate halfway;
 * 10. an MPI_Iallreduce on a new duplicate, which is freed while it is
 *     still open, then one on a duplicate made after (it gets the freed
 *     one's context id, and its lines), against an MPI_Ibarrier of
 *     MPI_COMM_WORLD in opposite orders;
 * 11. a persistent MPI_Allreduce_init and MPI_Barrier_init of a
 *     duplicate, made once, started each time in opposite orders, with
 *     an MPI_Ibarrier of that duplicate first on the even ranks and last
 *     on the odd (as case 7 on MPI_COMM_WORLD);
 * 12. a duplicate made and freed, then three splits by parity (from 2
 *     ranks, communicators of part of the world, which never get lines
 *     but take context ids), then a duplicate made after them: it takes
 *     the lines the freed one gave back, though its context id is
 *     another. An MPI_Iallreduce on it and one on a duplicate made at
 *     the start, in opposite orders, with an MPI_Iallgather on it;
 * 13. (from 2 ranks) an intercommunicator between the even and the odd
 *     ranks, merged with the odd ranks first: a communicator of the whole
 *     world in another rank order, which takes lines too. An
 *     MPI_Iallgather and an MPI_Iallreduce on it against an MPI_Ibarrier
 *     of MPI_COMM_WORLD, in opposite orders;
 * 14. two MPI_Comm_idup of MPI_COMM_WORLD at once (at most one takes
 *     the lines left, the other goes as messages), both waited, then an
 *     MPI_Iallreduce on each and an MPI_Ibarrier of the first duplicate
 *     made at the start, started first to last on the even ranks and
 *     last to first on the odd.
 * Each case runs 50 times in a row, every result checked; MPICH passes it.
 */
#include "common.h"

enum { TIMES = 50 };

static int rank, size;

/* The sum of every rank's rank + k */
static int sum_of(int k)
{
    return size * (size - 1) / 2 + size * k;
}

/* a then b on the even ranks, b then a on the odd */
#define IN_TURN(a, b)                                                                                                  \
    do {                                                                                                               \
        if (rank % 2 == 0) {                                                                                           \
            a;                                                                                                         \
            b;                                                                                                         \
        } else {                                                                                                       \
            b;                                                                                                         \
            a;                                                                                                         \
        }                                                                                                              \
    } while (0)

/* Case `which`: persistent `kept[0]` and `kept[1]` (an Allreduce and a
 * Barrier of `c`) and an Ibarrier of `c` into `kept[2]`, the Ibarrier
 * first and the Allreduce before the Barrier on the even ranks, all the
 * other way round on the odd; then wait for the three. */
static void start_kept(int which, MPI_Request kept[3], MPI_Comm c)
{
    if (rank % 2 == 0) {
        CHECK(MPI_Ibarrier(c, &kept[2]) == MPI_SUCCESS, "case %d: Ibarrier", which);
        CHECK(MPI_Start(&kept[0]) == MPI_SUCCESS, "case %d: start allreduce", which);
        CHECK(MPI_Start(&kept[1]) == MPI_SUCCESS, "case %d: start barrier", which);
    } else {
        CHECK(MPI_Start(&kept[1]) == MPI_SUCCESS, "case %d: start barrier", which);
        CHECK(MPI_Start(&kept[0]) == MPI_SUCCESS, "case %d: start allreduce", which);
        CHECK(MPI_Ibarrier(c, &kept[2]) == MPI_SUCCESS, "case %d: Ibarrier", which);
    }
    MPI_Status sts[3];
    CHECK(MPI_Waitall(3, kept, sts) == MPI_SUCCESS, "case %d: waitall", which);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm one, two;
    MPI_Comm_dup(MPI_COMM_WORLD, &one);
    MPI_Comm_dup(MPI_COMM_WORLD, &two);
    int *all = malloc(sizeof(int) * size), *out = malloc(sizeof(int) * size), *back = malloc(sizeof(int) * size);
    int kept_in = 0, kept_out = -1;
    MPI_Request kept[3];
    MPI_Allreduce_init(&kept_in, &kept_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &kept[0]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &kept[1]);
    enum { MANY = 10 };
    int many_in[MANY], many_out[MANY];
    MPI_Request many[MANY];
    for (int k = 0; k < MANY; k++)
        MPI_Allreduce_init(&many_in[k], &many_out[k], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &many[k]);
    int dkept_in = 0, dkept_out = -1;
    MPI_Request dkept[3];
    MPI_Allreduce_init(&dkept_in, &dkept_out, 1, MPI_INT, MPI_SUM, two, MPI_INFO_NULL, &dkept[0]);
    MPI_Barrier_init(two, MPI_INFO_NULL, &dkept[1]);
    for (int t = 0; t < TIMES; t++) {
        MPI_Request q[2];
        MPI_Status st[2];
        int x = rank + t, y = -1, z = -1, mine = rank;

        /* 1 */
        IN_TURN(CHECK(MPI_Ibarrier(one, &q[0]) == MPI_SUCCESS, "case 1: Ibarrier"),
                CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, two) == MPI_SUCCESS, "case 1: Allreduce"));
        CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 1: wait");
        CHECK(y == sum_of(t), "case 1, time %d: allreduce %d, not %d", t, y, sum_of(t));

        /* 2 */
        y = -1;
        IN_TURN(CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS, "case 2"),
                CHECK(MPI_Barrier(one) == MPI_SUCCESS, "case 2: Barrier"));
        CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 2: wait");
        CHECK(y == sum_of(t), "case 2, time %d: iallreduce %d, not %d", t, y, sum_of(t));

        /* 3 */
        y = -1;
        for (int r = 0; r < size; r++) all[r] = -1;
        IN_TURN(CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_MAX, one, &q[0]) == MPI_SUCCESS, "case 3: Iallreduce"),
                CHECK(MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, two, &q[1]) == MPI_SUCCESS, "case 3"));
        CHECK(MPI_Waitall(2, q, st) == MPI_SUCCESS, "case 3: waitall");
        CHECK(y == size - 1 + t, "case 3, time %d: max %d, not %d", t, y, size - 1 + t);
        for (int r = 0; r < size; r++) CHECK(all[r] == r, "case 3, time %d: allgather[%d] = %d", t, r, all[r]);

        /* 4 */
        y = -1;
        for (int r = 0; r < size; r++) out[r] = 1000 * rank + r + t, back[r] = -1;
        IN_TURN(CHECK(MPI_Ialltoall(out, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS, "case 4"),
                CHECK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, two, &q[1]) == MPI_SUCCESS, "case 4: Iallreduce"));
        CHECK(MPI_Waitall(2, q, st) == MPI_SUCCESS, "case 4: waitall");
        CHECK(y == sum_of(t), "case 4, time %d: iallreduce %d", t, y);
        for (int r = 0; r < size; r++)
            CHECK(back[r] == 1000 * r + rank + t, "case 4, time %d: alltoall from %d = %d", t, r, back[r]);

        /* 5 */
        MPI_Request p;
        y = -1;
        for (int r = 0; r < size; r++) all[r] = -1;
        CHECK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, one, MPI_INFO_NULL, &p) == MPI_SUCCESS, "case 5: init");
        IN_TURN(CHECK(MPI_Start(&p) == MPI_SUCCESS, "case 5: start"),
                CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS, "case 5"));
        CHECK(MPI_Wait(&p, MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 5: wait");
        CHECK(y == sum_of(t), "case 5, time %d: persistent allreduce %d", t, y);
        for (int r = 0; r < size; r++) CHECK(all[r] == r, "case 5, time %d: allgather[%d] = %d", t, r, all[r]);
        MPI_Request_free(&p);

        /* 6 */
        z = -1;
        IN_TURN(CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &q[0]) == MPI_SUCCESS, "case 6: Ibarrier world"),
                CHECK(MPI_Ibarrier(one, &q[1]) == MPI_SUCCESS, "case 6: Ibarrier one"));
        CHECK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, two) == MPI_SUCCESS, "case 6: Allreduce");
        CHECK(MPI_Waitall(2, q, st) == MPI_SUCCESS, "case 6: waitall");
        CHECK(z == sum_of(t), "case 6, time %d: allreduce %d", t, z);

        /* 7 */
        kept_in = rank + t, kept_out = -1;
        start_kept(7, kept, MPI_COMM_WORLD);
        CHECK(kept_out == sum_of(t), "case 7, time %d: persistent allreduce %d", t, kept_out);

        /* 8 */
        for (int k = 0; k < MANY; k++) many_in[k] = rank + t + k, many_out[k] = -1;
        for (int k = 0; k < MANY; k++)
            CHECK(MPI_Start(&many[rank % 2 == 0 ? k : MANY - 1 - k]) == MPI_SUCCESS, "case 8: start");
        MPI_Status many_st[MANY];
        CHECK(MPI_Waitall(MANY, many, many_st) == MPI_SUCCESS, "case 8: waitall");
        for (int k = 0; k < MANY; k++)
            CHECK(many_out[k] == sum_of(t + k), "case 8, time %d: persistent allreduce %d: %d", t, k, many_out[k]);

        /* 9 */
        MPI_Comm six[6];
        MPI_Request six_q[6];
        int six_out[6];
        for (int k = 0; k < 6; k++) MPI_Comm_dup(MPI_COMM_WORLD, &six[k]);
        for (int i = 0; i < 6; i++) {
            int k = rank % 2 == 0 ? i : 5 - i, v = rank + t + k;
            if (i == 3)
                CHECK(MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, one) == MPI_SUCCESS, "case 9: Allreduce");
            /* an Iallreduce's send buffer may not change until it completes */
            six_out[k] = v;
            CHECK(MPI_Iallreduce(MPI_IN_PLACE, &six_out[k], 1, MPI_INT, MPI_SUM, six[k], &six_q[k]) == MPI_SUCCESS,
                  "case 9: Iallreduce %d", k);
        }
        MPI_Status six_st[6];
        CHECK(MPI_Waitall(6, six_q, six_st) == MPI_SUCCESS, "case 9: waitall");
        CHECK(z == sum_of(t), "case 9, time %d: allreduce %d", t, z);
        for (int k = 0; k < 6; k++) {
            CHECK(six_out[k] == sum_of(t + k), "case 9, time %d: iallreduce on dup %d: %d", t, k, six_out[k]);
            MPI_Comm_free(&six[k]);
        }

        /* 10 */
        MPI_Comm gone, next;
        int early = -1, late = -1;
        MPI_Comm_dup(MPI_COMM_WORLD, &gone);
        CHECK(MPI_Iallreduce(&x, &early, 1, MPI_INT, MPI_SUM, gone, &q[0]) == MPI_SUCCESS, "case 10: Iallreduce");
        MPI_Comm_free(&gone);
        MPI_Comm_dup(MPI_COMM_WORLD, &next);
        MPI_Request more[2];
        IN_TURN(CHECK(MPI_Iallreduce(&mine, &late, 1, MPI_INT, MPI_MAX, next, &more[0]) == MPI_SUCCESS, "case 10"),
                CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &more[1]) == MPI_SUCCESS, "case 10: Ibarrier"));
        CHECK(MPI_Waitall(2, more, st) == MPI_SUCCESS, "case 10: waitall");
        CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 10: wait on the freed one's");
        CHECK(early == sum_of(t), "case 10, time %d: iallreduce on the freed duplicate %d", t, early);
        CHECK(late == size - 1, "case 10, time %d: max %d, not %d", t, late, size - 1);
        MPI_Comm_free(&next);

        /* 11 */
        dkept_in = rank + t, dkept_out = -1;
        start_kept(11, dkept, two);
        CHECK(dkept_out == sum_of(t), "case 11, time %d: persistent allreduce %d", t, dkept_out);

        /* 12 */
        MPI_Comm brief, parts[3], after;
        MPI_Comm_dup(MPI_COMM_WORLD, &brief);
        MPI_Comm_free(&brief);
        for (int k = 0; k < 3; k++) MPI_Comm_split(MPI_COMM_WORLD, rank % 2, k, &parts[k]);
        MPI_Comm_dup(MPI_COMM_WORLD, &after);
        int on_after = rank + t, on_one = rank;
        IN_TURN(CHECK(MPI_Iallreduce(MPI_IN_PLACE, &on_after, 1, MPI_INT, MPI_SUM, after, &q[0]) == MPI_SUCCESS,
                      "case 12: Iallreduce on the later duplicate"),
                CHECK(MPI_Iallreduce(MPI_IN_PLACE, &on_one, 1, MPI_INT, MPI_MAX, one, &q[1]) == MPI_SUCCESS,
                      "case 12: Iallreduce on the first"));
        MPI_Request gather;
        CHECK(MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, after, &gather) == MPI_SUCCESS, "case 12: Iallgather");
        CHECK(MPI_Waitall(2, q, st) == MPI_SUCCESS, "case 12: waitall");
        CHECK(MPI_Wait(&gather, MPI_STATUS_IGNORE) == MPI_SUCCESS, "case 12: wait");
        CHECK(on_after == sum_of(t), "case 12, time %d: iallreduce on the later duplicate %d", t, on_after);
        CHECK(on_one == size - 1, "case 12, time %d: max %d, not %d", t, on_one, size - 1);
        for (int r = 0; r < size; r++) CHECK(all[r] == r, "case 12, time %d: allgather[%d] = %d", t, r, all[r]);
        MPI_Comm_free(&after);

        /* 13 */
        if (size > 1) {
            MPI_Comm inter, merged;
            /* parts[0] holds the ranks of this one's parity; the other
             * group's leader is world rank 1 - rank % 2 */
            MPI_Intercomm_create(parts[0], 0, MPI_COMM_WORLD, 1 - rank % 2, 77, &inter);
            MPI_Intercomm_merge(inter, rank % 2 == 0, &merged);
            int at, in_merged = rank + t;
            MPI_Comm_rank(merged, &at);
            MPI_Request three[3];
            IN_TURN(CHECK(MPI_Iallgather(&rank, 1, MPI_INT, all, 1, MPI_INT, merged, &three[0]) == MPI_SUCCESS,
                          "case 13: Iallgather"),
                    CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &three[1]) == MPI_SUCCESS, "case 13: Ibarrier"));
            CHECK(MPI_Iallreduce(MPI_IN_PLACE, &in_merged, 1, MPI_INT, MPI_SUM, merged, &three[2]) == MPI_SUCCESS,
                  "case 13: Iallreduce");
            MPI_Status three_st[3];
            CHECK(MPI_Waitall(3, three, three_st) == MPI_SUCCESS, "case 13: waitall");
            CHECK(in_merged == sum_of(t), "case 13, time %d: iallreduce %d", t, in_merged);
            /* the odd ranks first, each group in its world order */
            int odd = size / 2;
            for (int r = 0; r < size; r++) {
                int want = r < odd ? 2 * r + 1 : 2 * (r - odd);
                CHECK(all[r] == want, "case 13, time %d: allgather[%d] = %d, not %d", t, r, all[r], want);
            }
            CHECK(all[at] == rank, "case 13: rank %d is %d in the merged communicator", rank, at);
            MPI_Comm_free(&merged);
            MPI_Comm_free(&inter);
        }
        for (int k = 0; k < 3; k++) MPI_Comm_free(&parts[k]);

        /* 14 */
        MPI_Comm twins[2];
        MPI_Request made[2], four[3];
        CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &twins[0], &made[0]) == MPI_SUCCESS, "case 14: idup");
        CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &twins[1], &made[1]) == MPI_SUCCESS, "case 14: idup");
        MPI_Status made_st[2];
        CHECK(MPI_Waitall(2, made, made_st) == MPI_SUCCESS, "case 14: waitall idup");
        int in_twin[2] = {rank + t, rank + t + 1};
        for (int i = 0; i < 3; i++) {
            int k = rank % 2 == 0 ? i : 2 - i;
            if (k == 2)
                CHECK(MPI_Ibarrier(one, &four[2]) == MPI_SUCCESS, "case 14: Ibarrier");
            else
                CHECK(MPI_Iallreduce(MPI_IN_PLACE, &in_twin[k], 1, MPI_INT, MPI_SUM, twins[k], &four[k]) ==
                          MPI_SUCCESS,
                      "case 14: Iallreduce %d", k);
        }
        MPI_Status four_st[3];
        CHECK(MPI_Waitall(3, four, four_st) == MPI_SUCCESS, "case 14: waitall");
        for (int k = 0; k < 2; k++)
            CHECK(in_twin[k] == sum_of(t + k), "case 14, time %d: iallreduce on idup %d: %d", t, k, in_twin[k]);
        MPI_Comm_free(&twins[0]);
        MPI_Comm_free(&twins[1]);
    }
    MPI_Request_free(&dkept[0]);
    MPI_Request_free(&dkept[1]);
    for (int k = 0; k < MANY; k++) MPI_Request_free(&many[k]);
    MPI_Request_free(&kept[0]);
    MPI_Request_free(&kept[1]);
    MPI_Comm_free(&one);
    MPI_Comm_free(&two);
    free(all), free(out), free(back);
    return finish();
}
