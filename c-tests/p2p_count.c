/* oxmpi-test: ranks=1,2,3,4
 * The MPI 4 large-count (_c) point-to-point functions and the send modes
 * they share with the int ones: every rank sends to the next one round a
 * ring (at 1 rank to itself) by each of Send_c, Ssend_c, Bsend_c, Rsend_c,
 * Isend_c, Issend_c, Ibsend(_c), Irsend_c, the persistent Send_init_c,
 * Ssend_init_c, Bsend_init_c, Rsend_init(_c) into Irecv_c or Recv_init_c;
 * then Sendrecv_c, Sendrecv_replace(_c), Mprobe + Mrecv_c, Improbe +
 * Imrecv_c, Get_elements_c of a derived type, and Buffer_attach_c /
 * Buffer_detach_c. Each message is checked item by item. */
#include "common.h"

#define N 1000
static int rank, size, right, left;

static int val(int from, int tag, int i) { return from * 100000 + tag * 1000 + i; }

static void fill(int *b, int from, int tag)
{
    for (int i = 0; i < N; i++) b[i] = val(from, tag, i);
}

static void expect(const int *b, int tag, const char *how)
{
    int bad = 0;
    for (int i = 0; i < N; i++) bad += b[i] != val(left, tag, i);
    CHECK(bad == 0, "%s: %d of %d items wrong", how, bad, N);
}

enum { SEND, SSEND, BSEND, RSEND, ISEND, ISSEND, IBSEND, IBSEND_C, IRSEND, SEND_INIT, SSEND_INIT, BSEND_INIT,
       RSEND_INIT, RSEND_INIT_C, MODES };
static const char *mode_name[] = {"Send_c",      "Ssend_c",      "Bsend_c",     "Rsend_c",     "Isend_c",
                                  "Issend_c",    "Ibsend",       "Ibsend_c",    "Irsend_c",    "Send_init_c",
                                  "Ssend_init_c", "Bsend_init_c", "Rsend_init", "Rsend_init_c"};

/* one message of N ints to the right by `mode`, received from the left
 * into an Irecv_c (or a Recv_init_c when `persistent_recv`) */
static void one(int mode, int persistent_recv)
{
    int s[N], r[N], tag = mode;
    fill(s, rank, tag);
    memset(r, 0xff, sizeof r);
    MPI_Request rq, sq;
    MPI_Count n = N;
    if (persistent_recv) {
        MPI_Recv_init_c(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq);
        MPI_Start(&rq);
    } else {
        MPI_Irecv_c(r, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq);
    }
    /* a ready send needs the receive posted first: everyone has posted */
    MPI_Barrier(MPI_COMM_WORLD);
    int err = MPI_SUCCESS, started = 0;
    switch (mode) {
    case SEND: err = MPI_Send_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD); break;
    case SSEND: err = MPI_Ssend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD); break;
    case BSEND: err = MPI_Bsend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD); break;
    case RSEND: err = MPI_Rsend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD); break;
    case ISEND: err = MPI_Isend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq), started = 1; break;
    case ISSEND: err = MPI_Issend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq), started = 1; break;
    case IBSEND: err = MPI_Ibsend(s, N, MPI_INT, right, tag, MPI_COMM_WORLD, &sq), started = 1; break;
    case IBSEND_C: err = MPI_Ibsend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq), started = 1; break;
    case IRSEND: err = MPI_Irsend_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq), started = 1; break;
    case SEND_INIT: err = MPI_Send_init_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq); break;
    case SSEND_INIT: err = MPI_Ssend_init_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq); break;
    case BSEND_INIT: err = MPI_Bsend_init_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq); break;
    case RSEND_INIT: err = MPI_Rsend_init(s, N, MPI_INT, right, tag, MPI_COMM_WORLD, &sq); break;
    case RSEND_INIT_C: err = MPI_Rsend_init_c(s, n, MPI_INT, right, tag, MPI_COMM_WORLD, &sq); break;
    }
    CHECK(err == MPI_SUCCESS, "%s failed", mode_name[mode]);
    if (mode >= SEND_INIT) {
        MPI_Start(&sq);
        started = 1;
    }
    if (started)
        MPI_Wait(&sq, MPI_STATUS_IGNORE);
    MPI_Status st;
    MPI_Wait(&rq, &st);
    MPI_Count got = -1;
    MPI_Get_count_c(&st, MPI_INT, &got);
    CHECK(got == N && st.MPI_SOURCE == left && st.MPI_TAG == tag, "%s: count %lld from %d tag %d", mode_name[mode],
          (long long)got, st.MPI_SOURCE, st.MPI_TAG);
    char how[64];
    snprintf(how, sizeof how, "%s into %s", mode_name[mode], persistent_recv ? "Recv_init_c" : "Irecv_c");
    expect(r, tag, how);
    if (mode >= SEND_INIT)
        MPI_Request_free(&sq);
    if (persistent_recv)
        MPI_Request_free(&rq);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* room for a few buffered sends (one is in flight at a time, but the
     * space of one delivered may be taken back lazily) */
    MPI_Count room = 4 * (N * sizeof(int) + MPI_BSEND_OVERHEAD);
    void *pool = malloc(room);
    CHECK(MPI_Buffer_attach_c(pool, room) == MPI_SUCCESS, "Buffer_attach_c");

    for (int mode = 0; mode < MODES; mode++)
        for (int pr = 0; pr < 2; pr++) one(mode, pr);

    void *back = NULL;
    MPI_Count back_size = 0;
    CHECK(MPI_Buffer_detach_c(&back, &back_size) == MPI_SUCCESS, "Buffer_detach_c");
    CHECK(back == pool && back_size == room, "Buffer_detach_c gave %p, %lld bytes (attached %p, %lld)", back,
          (long long)back_size, pool, (long long)room);
    free(pool);

    /* Sendrecv_c: right and left at once */
    int s[N], r[N];
    MPI_Status st;
    fill(s, rank, 40);
    MPI_Sendrecv_c(s, N, MPI_INT, right, 40, r, N, MPI_INT, left, 40, MPI_COMM_WORLD, &st);
    expect(r, 40, "Sendrecv_c");
    /* Sendrecv_replace and its _c: one buffer out and back in */
    fill(r, rank, 41);
    MPI_Sendrecv_replace(r, N, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD, &st);
    expect(r, 41, "Sendrecv_replace");
    fill(r, rank, 42);
    MPI_Sendrecv_replace_c(r, N, MPI_INT, right, 42, left, 42, MPI_COMM_WORLD, &st);
    expect(r, 42, "Sendrecv_replace_c");

    /* matched probes: the message taken is the one probed */
    MPI_Request sq;
    MPI_Message m;
    fill(s, rank, 43);
    MPI_Isend(s, N, MPI_INT, right, 43, MPI_COMM_WORLD, &sq);
    MPI_Mprobe(left, 43, MPI_COMM_WORLD, &m, &st);
    memset(r, 0, sizeof r);
    MPI_Mrecv_c(r, N, MPI_INT, &m, &st);
    CHECK(m == MPI_MESSAGE_NULL, "Mrecv_c leaves MPI_MESSAGE_NULL");
    expect(r, 43, "Mrecv_c");
    MPI_Wait(&sq, MPI_STATUS_IGNORE);
    fill(s, rank, 44);
    MPI_Isend(s, N, MPI_INT, right, 44, MPI_COMM_WORLD, &sq);
    int flag = 0;
    while (!flag) MPI_Improbe(left, 44, MPI_COMM_WORLD, &flag, &m, &st);
    MPI_Request rq;
    memset(r, 0, sizeof r);
    MPI_Imrecv_c(r, N, MPI_INT, &m, &rq);
    MPI_Wait(&rq, &st);
    expect(r, 44, "Imrecv_c");
    MPI_Wait(&sq, MPI_STATUS_IGNORE);

    /* Get_elements_c counts basic items: 3 pairs of ints (and a half pair) */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Sendrecv(s, 7, MPI_INT, right, 45, r, 4, pair, left, 45, MPI_COMM_WORLD, &st);
    MPI_Count elements = -1, items = -1;
    MPI_Get_elements_c(&st, pair, &elements);
    MPI_Get_count_c(&st, pair, &items);
    CHECK(elements == 7, "Get_elements_c of 7 ints as pairs: %lld", (long long)elements);
    CHECK(items == MPI_UNDEFINED, "Get_count_c of 7 ints as pairs: %lld", (long long)items);
    MPI_Type_free(&pair);
    return finish();
}
