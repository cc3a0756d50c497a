/* oxmpi-test: ranks=1,2,3,4
 * Communicator management: dup, split (odd sizes too), create,
 * create_group, split_type, compare, names, groups and their algebra;
 * traffic on different communicators with the same tags never mixes;
 * 16,000 communicators alive at once; freed ids are reused; bad input. */
#include "common.h"

/* MPI 4.0 §7.4.2's hardware splits on one host: a guided split by
 * "mpi_shared_memory" is the shared one; by no resource, or one not
 * known, MPI_COMM_NULL; unguided, MPI_COMM_NULL (no strict subset shares
 * a resource, oxmpi knowing no finer one than the host), the info left
 * alone. Then MPI_COMM_TYPE_SHARED on an intercommunicator (as MPICH):
 * both groups, whole. */
static void hardware_splits(int rank, int size)
{
    MPI_Comm c;
    int s, flag, len = MPI_MAX_INFO_VAL;
    char v[MPI_MAX_INFO_VAL];
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, MPI_INFO_NULL, &c);
    CHECK(c == MPI_COMM_NULL, "guided split without info");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c);
    CHECK(c == MPI_COMM_NULL, "guided split without a resource");
    MPI_Info_set(info, "mpi_hw_resource_type", "no-such-thing");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c);
    CHECK(c == MPI_COMM_NULL, "guided split by an unknown resource");
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, size - rank, info, &c);
    CHECK(c != MPI_COMM_NULL, "guided split by mpi_shared_memory");
    MPI_Comm_size(c, &s);
    int r;
    MPI_Comm_rank(c, &r);
    CHECK(s == size && r == size - 1 - rank, "guided split size %d rank %d", s, r);
    MPI_Comm_free(&c);
    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, info, &c);
    CHECK(c == MPI_COMM_NULL, "unguided split of one host's ranks");
    MPI_Info_get_string(info, "mpi_hw_resource_type", &len, v, &flag);
    CHECK(!flag, "unguided split that made nothing named %s", v);
    MPI_Info_free(&info);
    if (size < 2)
        return;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 5, &inter);
    MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
    int ls, rs, inner;
    MPI_Comm_test_inter(c, &inner);
    MPI_Comm_size(c, &ls);
    MPI_Comm_remote_size(c, &rs);
    CHECK(inner && ls == (size + 1 - rank % 2) / 2 && rs == size - ls, "intercommunicator shared split: %d %d %d", inner,
          ls, rs);
    int mine = rank, theirs = -1;
    MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_MIN, c);
    CHECK(theirs == 1 - rank % 2, "allreduce over the split intercommunicator: %d", theirs);
    MPI_Comm_free(&c);
    MPI_Comm_split_type(inter, MPI_UNDEFINED, rank, MPI_INFO_NULL, &c);
    CHECK(c == MPI_COMM_NULL, "intercommunicator split by MPI_UNDEFINED");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    int rank, size, r, s, result;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm dup, half, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &s);
    CHECK(r == rank && s == size, "dup rank %d size %d", r, s);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK(result == MPI_CONGRUENT, "world vs dup: %d", result);
    MPI_Comm_compare(dup, dup, &result);
    CHECK(result == MPI_IDENT, "dup vs itself: %d", result);

    /* the same tag on two communicators: messages never cross */
    int a = rank, b = rank + 100, got_a = -1, got_b = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request q[2];
    MPI_Irecv(&got_b, 1, MPI_INT, left, 7, dup, &q[0]);
    MPI_Irecv(&got_a, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &q[1]);
    MPI_Send(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    MPI_Send(&b, 1, MPI_INT, right, 7, dup);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    CHECK(got_a == left && got_b == left + 100, "cross-talk: world got %d, dup got %d", got_a, got_b);

    /* split by parity, reversed order by key */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_rank(half, &r);
    MPI_Comm_size(half, &s);
    int expect_size = (size + 1 - rank % 2) / 2;
    CHECK(s == expect_size, "split size %d, expected %d", s, expect_size);
    CHECK(r == (expect_size - 1) - rank / 2, "split rank %d (reversed by key)", r);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    int esum = 0;
    for (int i = rank % 2; i < size; i += 2) esum += i;
    CHECK(sum == esum, "allreduce on the split: %d, expected %d", sum, esum);
    MPI_Comm undefined;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &undefined);
    CHECK((rank == 0) == (undefined != MPI_COMM_NULL), "MPI_UNDEFINED color gives MPI_COMM_NULL");
    if (undefined != MPI_COMM_NULL) MPI_Comm_free(&undefined);

    /* groups */
    MPI_Group world_g, even_g, rev_g, u, i, d;
    MPI_Comm_group(MPI_COMM_WORLD, &world_g);
    int evens[4], ne = 0;
    for (int k = 0; k < size; k += 2) evens[ne++] = k;
    MPI_Group_incl(world_g, ne, evens, &even_g);
    MPI_Group_size(even_g, &s);
    MPI_Group_rank(even_g, &r);
    CHECK(s == ne && r == (rank % 2 ? MPI_UNDEFINED : rank / 2), "incl size %d rank %d", s, r);
    int range[1][3] = {{size - 1, 0, -1}};
    MPI_Group_range_incl(world_g, 1, range, &rev_g);
    MPI_Group_compare(world_g, rev_g, &result);
    CHECK(result == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "reversed group compare %d", result);
    MPI_Group_union(even_g, world_g, &u);
    MPI_Group_intersection(world_g, even_g, &i);
    MPI_Group_difference(world_g, even_g, &d);
    int su, si, sd;
    MPI_Group_size(u, &su);
    MPI_Group_size(i, &si);
    MPI_Group_size(d, &sd);
    CHECK(su == size && si == ne && sd == size - ne, "union %d intersection %d difference %d", su, si, sd);
    int tr_in[2] = {0, ne - 1}, tr_out[2];
    MPI_Group_translate_ranks(even_g, 2, tr_in, world_g, tr_out);
    CHECK(tr_out[0] == 0 && tr_out[1] == 2 * (ne - 1), "translate %d %d", tr_out[0], tr_out[1]);
    MPI_Group ex;
    int ex_r[1] = {0};
    MPI_Group_excl(world_g, 1, ex_r, &ex);
    MPI_Group_size(ex, &s);
    CHECK(s == size - 1, "excl size %d", s);
    if (size > 1) {
        MPI_Group_rank(ex, &r);
        CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1), "excl rank %d", r);
    }

    /* create and create_group on the even ranks; reverse order with create */
    MPI_Comm evc, evg;
    MPI_Comm_create(MPI_COMM_WORLD, even_g, &evc);
    CHECK((rank % 2 == 0) == (evc != MPI_COMM_NULL), "create membership");
    if (rank % 2 == 0) {
        MPI_Comm_create_group(MPI_COMM_WORLD, even_g, 5, &evg);
        MPI_Comm_rank(evg, &r);
        CHECK(r == rank / 2, "create_group rank %d", r);
        MPI_Barrier(evg);
        MPI_Comm_free(&evg);
        MPI_Comm_free(&evc);
    }
    MPI_Comm_create(MPI_COMM_WORLD, rev_g, &rev);
    MPI_Comm_rank(rev, &r);
    CHECK(r == size - 1 - rank, "reversed communicator rank %d", r);
    int token = rank, from = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, (r + 1) % size, 0, &from, 1, MPI_INT, (r + size - 1) % size, 0, rev, &st);
    CHECK(from == (rank + 1) % size && st.MPI_SOURCE == (r + size - 1) % size, "ring on reversed comm: from %d source %d", from, st.MPI_SOURCE);

    /* split_type shared: everyone here shares the host */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &s);
    CHECK(s == size, "shared split size %d", s);
    MPI_Comm_free(&node);
    hardware_splits(rank, size);

    /* names and error handlers are per communicator */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_set_name(dup, "my dup");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "my dup") == 0, "name %s", name);
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world name %s", name);
    int flag;
    MPI_Comm_test_inter(dup, &flag);
    CHECK(!flag, "intracommunicator");

    /* 16,000 communicators alive at once, then freed and reused */
    enum { MANY = 16000 };
    MPI_Comm *many = malloc(MANY * sizeof(MPI_Comm));
    for (int k = 0; k < MANY; k++) MPI_Comm_dup(k % 2 ? dup : MPI_COMM_WORLD, &many[k]);
    int x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, many[MANY - 1]);
    CHECK(y == size, "allreduce on the 16000th communicator: %d", y);
    for (int k = 0; k < MANY; k++) MPI_Comm_free(&many[k]);
    CHECK(many[0] == MPI_COMM_NULL, "freed handle is null");
    for (int k = 0; k < MANY; k++) MPI_Comm_dup(MPI_COMM_WORLD, &many[k]);
    for (int k = 0; k < MANY; k++) MPI_Comm_free(&many[k]);
    free(many);

    /* bad input */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc, cls;
#define EXPECT(call, c) do { rc = (call); MPI_Error_class(rc, &cls); CHECK(cls == (c), "%s gave class %d, expected %d", #call, cls, c); } while (0)
    MPI_Comm gone;
    MPI_Comm_dup(MPI_COMM_WORLD, &gone);
    MPI_Comm stale = gone;
    MPI_Comm_free(&gone);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    EXPECT(MPI_Comm_size(stale, &s), MPI_ERR_COMM);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, 0, stale), MPI_ERR_COMM);
    MPI_Comm wc = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_free(&wc), MPI_ERR_COMM);
    MPI_Group bad;
    int twice[2] = {0, 0}, out_of_range[1] = {size};
    EXPECT(MPI_Group_incl(world_g, 2, twice, &bad), MPI_ERR_RANK);
    EXPECT(MPI_Group_incl(world_g, 1, out_of_range, &bad), MPI_ERR_RANK);
    EXPECT(MPI_Group_size(MPI_GROUP_NULL, &s), MPI_ERR_GROUP);
    EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &bad), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Group_free(&world_g);
    CHECK(world_g == MPI_GROUP_NULL, "freed group is null");
    MPI_Group_free(&even_g);
    MPI_Group_free(&rev_g);
    MPI_Group_free(&u);
    MPI_Group_free(&i);
    MPI_Group_free(&d);
    MPI_Group_free(&ex);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    return finish();
}
