/* oxmpi-test: ranks=1,2,3,4 variants=OXMPI_CROWDED_BLOCKS=read;OXMPI_CROWDED_BLOCKS=pieces
 * Long blocking Alltoalls, Alltoallvs and Allgathers (from a send buffer
 * and in place) on three communicators at once, many times
 * in a row: the world, a duplicate of it (the same members, another
 * context) and all ranks but the last (fewer members), each making its
 * own number of calls, at two block sizes interleaved. Among three or
 * more ranks on a host with more ranks than cores oxmpi sends such
 * blocks in pieces or has every reader copy its block straight out of
 * every writer's send buffer, all members taking the same way at each
 * call, chosen from what the communicator's last call of that size
 * reported (auto) or as OXMPI_CROWDED_BLOCKS says: a rank that counted
 * another communicator's calls, or another size's, would take another
 * way than its peers. An Alltoallv's blocks differ in size by pair (some
 * short, some longer than a long slot, some long enough for messages),
 * lie in its buffers in reverse rank order and apart, and go the way
 * its members agree on where each writer's longest is between a long
 * slot and the single-copy size. Every send buffer is written over as soon as the
 * call returns (a reader still copying from it would get wrong bytes),
 * and every byte is checked. */
#include "common.h"

static int rank;

static unsigned char val(int from, int to, size_t i, int k, int comm)
{
    return (unsigned char)(from * 37 + to * 11 + i * 13 + k * 7 + comm * 101 + (i >> 11));
}

static const size_t sizes[] = {20000, 65536 + 8, 300000};
#define ROUNDS 70

/* One Alltoall of blocks of `b` bytes on `comm` (tagged `tag` in the
 * bytes) in round `k`, checked. */
static void alltoall(MPI_Comm comm, int tag, size_t b, int k)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    unsigned char *s = malloc(b * n), *r = malloc(b * n);
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < b; i++) s[q * b + i] = val(me, q, i, k, tag);
    memset(r, 0xee, b * n);
    int e = MPI_Alltoall(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, comm);
    memset(s, 0xa5, b * n);
    CHECK(e == MPI_SUCCESS, "alltoall %d of %zu bytes, round %d: error %d", tag, b, k, e);
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < b; i++)
            if (r[q * b + i] != val(q, me, i, k, tag)) {
                CHECK(0, "alltoall %d of %zu bytes, round %d: byte %zu from rank %d wrong", tag, b, k, i, q);
                break;
            }
    free(s), free(r);
}

/* Bytes of rank `from`'s Alltoallv block for rank `to` around `b`. */
static size_t vlen(int from, int to, size_t b)
{
    return (from + to) % 4 == 3 ? 100 : b + (size_t)((from * 3 + to) % 4) * 1000;
}

/* One Alltoallv of blocks of about `b` bytes (`vlen`) on `comm` in round
 * `k`, the send blocks in reverse rank order 64 bytes apart, checked. */
static void alltoallv(MPI_Comm comm, int tag, size_t b, int k)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *sc = malloc(4 * sizeof(int) * n), *sd = sc + n, *rc = sd + n, *rd = rc + n;
    size_t sent = 0, got = 0;
    for (int q = n - 1; q >= 0; q--) sd[q] = (int)sent, sc[q] = (int)vlen(me, q, b), sent += sc[q] + 64;
    for (int q = 0; q < n; q++) rd[q] = (int)got, rc[q] = (int)vlen(q, me, b), got += rc[q];
    unsigned char *s = malloc(sent), *r = malloc(got);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < sc[q]; i++) s[sd[q] + i] = val(me, q, i, k, tag);
    memset(r, 0xee, got);
    int e = MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, comm);
    memset(s, 0xa5, sent);
    CHECK(e == MPI_SUCCESS, "alltoallv %d of about %zu bytes, round %d: error %d", tag, b, k, e);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < rc[q]; i++)
            if (r[rd[q] + i] != val(q, me, i, k, tag)) {
                CHECK(0, "alltoallv %d of about %zu bytes, round %d: byte %d from rank %d wrong", tag, b, k, i, q);
                break;
            }
    free(s), free(r), free(sc);
}

/* One Allgather of blocks of `b` bytes on `comm` in round `k`, from a
 * send buffer or (`in_place`) in place, checked. */
static void allgather(MPI_Comm comm, int tag, size_t b, int k, int in_place)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    unsigned char *s = malloc(b), *r = malloc(b * n);
    memset(r, 0xee, b * n);
    unsigned char *mine = in_place ? r + me * b : s;
    for (size_t i = 0; i < b; i++) mine[i] = val(me, n, i, k, tag);
    int e = in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, r, (int)b, MPI_BYTE, comm)
                     : MPI_Allgather(s, (int)b, MPI_BYTE, r, (int)b, MPI_BYTE, comm);
    memset(s, 0xa5, b);
    CHECK(e == MPI_SUCCESS, "allgather %d of %zu bytes, round %d: error %d", tag, b, k, e);
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < b; i++)
            if (r[q * b + i] != val(q, n, i, k, tag)) {
                CHECK(0, "allgather %d of %zu bytes, round %d: byte %zu from rank %d wrong", tag, b, k, i, q);
                break;
            }
    free(s), free(r);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, most;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, size > 1 && rank == size - 1 ? MPI_UNDEFINED : 0, rank, &most);
    for (int k = 0; k < ROUNDS; k++) {
        size_t b = sizes[k % 3];
        alltoall(MPI_COMM_WORLD, 0, b, k);
        if (most != MPI_COMM_NULL) {
            alltoall(most, 1, b, k);
            alltoall(most, 1, sizes[(k + 1) % 3], k);
        }
        if (k % 3 == 0) alltoall(dup, 2, b, k);
        alltoallv(MPI_COMM_WORLD, 6, b, k);
        if (most != MPI_COMM_NULL && k % 2 == 1) alltoallv(most, 7, sizes[(k + 2) % 3], k);
        allgather(MPI_COMM_WORLD, 4, b, k, k % 2);
        if (most != MPI_COMM_NULL && k % 2 == 0) allgather(most, 5, b, k, 0);
    }
    if (most != MPI_COMM_NULL) MPI_Comm_free(&most);
    MPI_Comm_free(&dup);
    /* a context freed and taken again, by other members: all but the
     * first rank */
    MPI_Comm_split(MPI_COMM_WORLD, size > 1 && rank == 0 ? MPI_UNDEFINED : 0, rank, &most);
    if (most != MPI_COMM_NULL) {
        for (int k = 0; k < ROUNDS; k++) alltoall(most, 3, sizes[1], k);
        MPI_Comm_free(&most);
    }
    return finish();
}
