/* oxmpi-test: ranks=2,3,4,5
 * Intercommunicators split and created from intercommunicators (MPI 4.0
 * §7.4.2), as MPICH's test utilities make them: MPI_Comm_split of an
 * intercommunicator pairs the processes of each color in one group with
 * those of the same color in the other, ordered by key (a color the other
 * group lacks, or MPI_UNDEFINED, gives MPI_COMM_NULL); MPI_Comm_create
 * joins a subgroup of each side (a process outside its subgroup, or facing
 * an empty one, gets MPI_COMM_NULL). Every result is checked by its sizes,
 * its groups' world ranks and a Bcast and an Allreduce across it. */
#include "common.h"

/* The world ranks of `comm`'s local (remote = 0) or remote group. */
static void world_ranks(MPI_Comm comm, int remote, int *out, int *n)
{
    MPI_Group g, world;
    if (remote)
        MPI_Comm_remote_group(comm, &g);
    else
        MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(g, n);
    int idx[64];
    for (int i = 0; i < *n; i++) idx[i] = i;
    MPI_Group_translate_ranks(g, *n, idx, world, out);
    MPI_Group_free(&g);
    MPI_Group_free(&world);
}

/* `inter`'s groups must be `local` and `remote` (world ranks, in order),
 * and collectives must cross it: the remote leader's world rank arrives
 * by Bcast, the sum of the remote group's world ranks by Allreduce. */
static void check_inter(MPI_Comm inter, const int *local, int nl, const int *remote, int nr, const char *what)
{
    int flag, got[64], n;
    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "%s: not an intercommunicator", what);
    world_ranks(inter, 0, got, &n);
    CHECK(n == nl, "%s: local size %d, expected %d", what, n, nl);
    for (int i = 0; i < n && i < nl; i++) CHECK(got[i] == local[i], "%s: local rank %d is world %d, expected %d", what, i, got[i], local[i]);
    world_ranks(inter, 1, got, &n);
    CHECK(n == nr, "%s: remote size %d, expected %d", what, n, nr);
    for (int i = 0; i < n && i < nr; i++) CHECK(got[i] == remote[i], "%s: remote rank %d is world %d, expected %d", what, i, got[i], remote[i]);

    int me, wrank, lrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_rank(inter, &lrank);
    /* the group holding world rank min(local[0], remote[0]) sends first */
    int first = local[0] < remote[0];
    for (int round = 0; round < 2; round++) {
        int sending = round == 0 ? first : !first, value = -1;
        if (sending) {
            me = lrank == 0 ? MPI_ROOT : MPI_PROC_NULL;
            value = wrank;
        } else {
            me = 0;
        }
        MPI_Bcast(&value, 1, MPI_INT, me, inter);
        if (!sending)
            CHECK(value == remote[0], "%s: Bcast brought %d, expected %d", what, value, remote[0]);
    }
    int sum = -1, expect = 0;
    for (int i = 0; i < nr; i++) expect += remote[i];
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == expect, "%s: Allreduce brought %d, expected %d", what, sum, expect);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* left: world ranks 0 .. h-1, right: h .. size-1 */
    int h = size / 2, left = rank < h;
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, left, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, left ? h : 0, 7, &inter);
    int lw[64], rw[64], nl = 0, nr = 0;
    for (int r = 0; r < size; r++) {
        if ((r < h) == left)
            lw[nl++] = r;
        else
            rw[nr++] = r;
    }

    /* one color, keys reversing each group: a dup with reversed ranks */
    MPI_Comm s;
    MPI_Comm_split(inter, 0, size - rank, &s);
    int rl[64], rr[64];
    for (int i = 0; i < nl; i++) rl[i] = lw[nl - 1 - i];
    for (int i = 0; i < nr; i++) rr[i] = rw[nr - 1 - i];
    check_inter(s, rl, nl, rr, nr, "split, one color");
    MPI_Comm_free(&s);

    /* colors by world rank parity: each parity pairs with the other
     * group's same parity, unless that group has none of it */
    int color = rank % 2, lc[64], rc[64], nlc = 0, nrc = 0;
    for (int i = 0; i < nl; i++)
        if (lw[i] % 2 == color) lc[nlc++] = lw[i];
    for (int i = 0; i < nr; i++)
        if (rw[i] % 2 == color) rc[nrc++] = rw[i];
    MPI_Comm_split(inter, color, 0, &s);
    if (nrc == 0) {
        CHECK(s == MPI_COMM_NULL, "split by parity: no partner of color %d, yet a communicator", color);
    } else {
        check_inter(s, lc, nlc, rc, nrc, "split by parity");
        MPI_Comm_free(&s);
    }

    /* the last rank of the world stays out */
    MPI_Comm_split(inter, rank == size - 1 ? MPI_UNDEFINED : 3, rank, &s);
    /* (it is the right group's last member) */
    int nl2 = left ? nl : nl - 1, nr2 = left ? nr - 1 : nr;
    if (rank == size - 1 || nr2 == 0) {
        CHECK(s == MPI_COMM_NULL, "split with MPI_UNDEFINED: a communicator where none belongs");
    } else {
        check_inter(s, lw, nl2, rw, nr2, "split with MPI_UNDEFINED");
        MPI_Comm_free(&s);
    }

    /* MPI_Comm_create: each side drops its first member */
    MPI_Group g, sub;
    MPI_Comm_group(inter, &g);
    int zero = 0;
    MPI_Group_excl(g, 1, &zero, &sub);
    MPI_Comm c;
    MPI_Comm_create(inter, sub, &c);
    if (lw[0] == rank || nl == 1 || nr == 1) {
        CHECK(c == MPI_COMM_NULL, "create without each side's first: a communicator where none belongs");
    } else {
        check_inter(c, lw + 1, nl - 1, rw + 1, nr - 1, "create without each side's first");
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&sub);

    /* MPI_Comm_create with each side's whole group: a dup */
    MPI_Comm_create(inter, g, &c);
    check_inter(c, lw, nl, rw, nr, "create with whole groups");
    MPI_Comm_free(&c);
    MPI_Group_free(&g);

    /* a group with a member outside the local group is an error */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Group rg;
    MPI_Comm_remote_group(inter, &rg);
    int rc2 = MPI_Comm_create(inter, rg, &c), cls;
    MPI_Error_class(rc2, &cls);
    CHECK(cls == MPI_ERR_GROUP, "create with the remote group: class %d", cls);
    MPI_Group_free(&rg);

    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    return finish();
}
