/* oxmpi-test: ranks=2,3,4 variants=OXMPI_UNEXPECTED_BYTES=4096;OXMPI_SLOTS=2,OXMPI_EAGER_LIMIT=256;OXMPI_SINGLE_COPY=0
 * Random point-to-point traffic, every choice drawn alike on every rank
 * from one seed (P2P_RANDOM_SEED, P2P_RANDOM_STEPS): each step sends
 * 1 to 12 messages between random pairs (a rank to itself too), of 0 B
 * to 2 MiB (eager, rendezvous, single copy), in a random mode (Send,
 * Isend, Ssend, Issend), some on one tag so that their order matters
 * (MPI's non-overtaking rule), some to be received from MPI_ANY_SOURCE
 * on a tag of their own. Receives are posted before the sends or after
 * them (the messages then wait as unexpected ones, over a small budget
 * in a variant), taken by Irecv, Recv, Probe + Recv or Mprobe + Mrecv, in
 * a random order that keeps each pair's order per tag. Every payload and
 * status is checked. */
#include "common.h"

#define MAXM 12


typedef struct {
    int src, dst, tag, len, mode, how, any;
} Msg;

static int step;
static char val(int m, long i) { return (char)(step * 31 + m * 7 + i * 13); }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_seed = 424242;
    if (getenv("P2P_RANDOM_SEED"))
        test_seed = strtoull(getenv("P2P_RANDOM_SEED"), NULL, 0);
    int steps = getenv("P2P_RANDOM_STEPS") ? atoi(getenv("P2P_RANDOM_STEPS")) : 400;
    static const int lens[] = {0, 1, 8, 200, 1000, 5000, 40000, 300000, 2100000};
    char *sbuf[MAXM], *rbuf[MAXM];
    for (int m = 0; m < MAXM; m++) {
        sbuf[m] = malloc(2100000);
        rbuf[m] = malloc(2100001);
    }
    for (step = 0; step < steps; step++) {
        Msg msg[MAXM];
        int nm = 1 + draw(MAXM), recv_first = draw(2);
        for (int m = 0; m < nm; m++) {
            Msg *x = &msg[m];
            x->src = draw(size);
            x->dst = draw(size);
            /* big ones are rarer */
            int k = draw(9);
            x->len = lens[k >= 7 && draw(3) ? k - 3 : k];
            x->mode = draw(4); /* Send, Isend, Ssend, Issend */
            x->how = draw(4);  /* Irecv, Recv, Probe + Recv, Mprobe + Mrecv */
            x->any = draw(4) == 0;
            /* tags 0 and 1 are shared: order matters; a message received
             * from any source has a tag of its own (a sender may already
             * be in the next step) */
            x->tag = x->any ? 1000 + step % 2000 * MAXM + m : (int)draw(2);
            if (!recv_first && (x->mode == 0 || x->mode == 2) && x->src != x->dst) /* blocking before receives: */
                x->mode += 1;                                                     /* would wait for ever */
            if (x->src == x->dst && (x->mode == 0 || x->mode == 2))
                x->mode += 1; /* to itself: the receive is posted later on this rank */
            if (recv_first && x->how != 0)
                x->how = 0; /* receives first: nonblocking ones */
        }
        /* receive order: a random permutation in which the messages of
         * one (src, dst, tag) then take the places their kind got, in
         * send order */
        int order[MAXM];
        for (int m = 0; m < nm; m++) order[m] = m;
        for (int m = nm - 1; m > 0; m--) {
            int j = draw(m + 1), t = order[m];
            order[m] = order[j];
            order[j] = t;
        }
        for (int a = 0; a < nm; a++)
            for (int b = a + 1; b < nm; b++) {
                Msg *p = &msg[order[a]], *q = &msg[order[b]];
                if (p->src == q->src && p->dst == q->dst && p->tag == q->tag && order[a] > order[b]) {
                    int t = order[a];
                    order[a] = order[b];
                    order[b] = t;
                }
            }
        MPI_Request rr[MAXM], sr[MAXM];
        int nr = 0, ns = 0, bad = 0;
        int rmsg[MAXM];
        MPI_Status st;
        for (int m = 0; m < nm; m++)
            if (msg[m].src == rank)
                for (long i = 0; i < msg[m].len; i++) sbuf[m][i] = val(m, i);
        if (recv_first)
            for (int o = 0; o < nm; o++) {
                Msg *x = &msg[order[o]];
                if (x->dst != rank)
                    continue;
                rmsg[nr] = order[o];
                MPI_Irecv(rbuf[order[o]], x->len + 1, MPI_CHAR, x->any ? MPI_ANY_SOURCE : x->src, x->tag, MPI_COMM_WORLD,
                          &rr[nr++]);
            }
        for (int m = 0; m < nm; m++) {
            Msg *x = &msg[m];
            if (x->src != rank)
                continue;
            switch (x->mode) {
            case 0: MPI_Send(sbuf[m], x->len, MPI_CHAR, x->dst, x->tag, MPI_COMM_WORLD); break;
            case 1: MPI_Isend(sbuf[m], x->len, MPI_CHAR, x->dst, x->tag, MPI_COMM_WORLD, &sr[ns++]); break;
            case 2: MPI_Ssend(sbuf[m], x->len, MPI_CHAR, x->dst, x->tag, MPI_COMM_WORLD); break;
            default: MPI_Issend(sbuf[m], x->len, MPI_CHAR, x->dst, x->tag, MPI_COMM_WORLD, &sr[ns++]); break;
            }
        }
        if (!recv_first)
            for (int o = 0; o < nm; o++) {
                int m = order[o];
                Msg *x = &msg[m];
                if (x->dst != rank)
                    continue;
                int from = x->any ? MPI_ANY_SOURCE : x->src, n = -1;
                MPI_Message mm;
                switch (x->how) {
                case 0:
                    rmsg[nr] = m;
                    MPI_Irecv(rbuf[m], x->len + 1, MPI_CHAR, from, x->tag, MPI_COMM_WORLD, &rr[nr++]);
                    continue;
                case 1: MPI_Recv(rbuf[m], x->len + 1, MPI_CHAR, from, x->tag, MPI_COMM_WORLD, &st); break;
                case 2:
                    MPI_Probe(from, x->tag, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_CHAR, &n);
                    bad += n != x->len || st.MPI_SOURCE != x->src;
                    MPI_Recv(rbuf[m], x->len + 1, MPI_CHAR, st.MPI_SOURCE, x->tag, MPI_COMM_WORLD, &st);
                    break;
                default:
                    MPI_Mprobe(from, x->tag, MPI_COMM_WORLD, &mm, &st);
                    MPI_Mrecv(rbuf[m], x->len + 1, MPI_CHAR, &mm, &st);
                    break;
                }
                MPI_Get_count(&st, MPI_CHAR, &n);
                bad += n != x->len || st.MPI_SOURCE != x->src || st.MPI_TAG != x->tag;
            }
        MPI_Status rst[MAXM];
        MPI_Waitall(nr, rr, rst);
        for (int k = 0; k < nr; k++) {
            Msg *x = &msg[rmsg[k]];
            int n = -1;
            MPI_Get_count(&rst[k], MPI_CHAR, &n);
            bad += n != x->len || rst[k].MPI_SOURCE != x->src || rst[k].MPI_TAG != x->tag;
        }
        MPI_Status sst[MAXM];
        MPI_Waitall(ns, sr, sst);
        for (int m = 0; m < nm; m++)
            if (msg[m].dst == rank)
                for (long i = 0; i < msg[m].len; i++) bad += rbuf[m][i] != val(m, i);
        CHECK(bad == 0, "step %d (%d messages, receives %s the sends): %d wrong", step, nm,
              recv_first ? "before" : "after", bad);
    }
    for (int m = 0; m < MAXM; m++) {
        free(sbuf[m]);
        free(rbuf[m]);
    }
    return finish();
}
