/* oxmpi-test: ranks=1,2,4 variants=OXMPI_SINGLE_COPY=0;OXMPI_SINGLE_COPY_MIN=0
 * Probe, Iprobe, Mprobe/Mrecv and Improbe/Imrecv, short and long
 * messages, wildcards, and MPI_PROC_NULL. A call completing one operation
 * leaves its status's MPI_ERROR field as it was (MPI 4.0 §3.2.5), as does
 * a Waitall or Testsome that succeeds. */
#include "common.h"

int main(int argc, char **argv)
{
    int rank, size, flag, count;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    int lens[] = {5, 50000};
    for (int l = 0; l < 2; l++) {
        int n = lens[l];
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) out[i] = rank * 100 + i;

        /* nothing there yet: a tag no one uses */
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag, "Iprobe found a message that was never sent");

        MPI_Request r;
        MPI_Isend(out, n, MPI_INT, right, 10 + l, MPI_COMM_WORLD, &r);
        MPI_Probe(left, 10 + l, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == 10 + l, "Probe: count %d source %d", count, st.MPI_SOURCE);
        flag = 0;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(st.MPI_SOURCE == left, "Iprobe source %d", st.MPI_SOURCE);
        /* probing does not receive: the message is still there */
        MPI_Recv(in, n, MPI_INT, left, 10 + l, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(in[n - 1] == left * 100 + n - 1, "probed message data");

        /* matched probe: the message belongs to the handle */
        MPI_Message msg;
        MPI_Isend(out, n, MPI_INT, right, 20 + l, MPI_COMM_WORLD, &r);
        MPI_Mprobe(MPI_ANY_SOURCE, 20 + l, MPI_COMM_WORLD, &msg, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == n && msg != MPI_MESSAGE_NULL, "Mprobe count %d", count);
        MPI_Iprobe(MPI_ANY_SOURCE, 20 + l, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a matched-probed message is no longer visible to probes");
        memset(in, 0, n * sizeof(int));
        MPI_Mrecv(in, n, MPI_INT, &msg, &st);
        CHECK(msg == MPI_MESSAGE_NULL && in[0] == left * 100 && st.MPI_SOURCE == left, "Mrecv");
        MPI_Wait(&r, MPI_STATUS_IGNORE);

        MPI_Isend(out, n, MPI_INT, right, 30 + l, MPI_COMM_WORLD, &r);
        flag = 0;
        while (!flag) MPI_Improbe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        CHECK(st.MPI_TAG == 30 + l, "Improbe tag %d", st.MPI_TAG);
        MPI_Request rr;
        MPI_Imrecv(in, n, MPI_INT, &msg, &rr);
        MPI_Wait(&rr, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == n && in[n - 1] == left * 100 + n - 1, "Imrecv count %d", count);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        free(out);
        free(in);
    }

    /* a synchronous send completes once its message is matched by Mprobe */
    int x = rank, y = -1;
    MPI_Request r;
    MPI_Message msg;
    MPI_Issend(&x, 1, MPI_INT, right, 40, MPI_COMM_WORLD, &r);
    MPI_Mprobe(left, 40, MPI_COMM_WORLD, &msg, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Mrecv(&y, 1, MPI_INT, &msg, &st);
    CHECK(y == left, "Issend + Mprobe value %d", y);

    /* MPI_PROC_NULL */
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Probe PROC_NULL");
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe PROC_NULL gives MPI_MESSAGE_NO_PROC");
    MPI_Mrecv(&y, 1, MPI_INT, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0 && st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv of NO_PROC");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Message bogus = (MPI_Message)0xac000fff;
    int rc = MPI_Mrecv(&y, 1, MPI_INT, &bogus, &st), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Mrecv of a bogus message gave class %d", cls);
    /* MPI_ERROR untouched: every single completion, and array ones that
     * succeed */
    {
        MPI_Status st;
        MPI_Message m;
        MPI_Request rq[2];
        MPI_Status sts[2];
        int a = rank, b = -1, idx[2], outcount;
#define UNTOUCHED(what) CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "%s set MPI_ERROR to %d", what, st.MPI_ERROR)
        st.MPI_ERROR = MPI_ERR_DIMS;
        MPI_Sendrecv(&a, 1, MPI_INT, right, 77, &b, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &st);
        UNTOUCHED("MPI_Sendrecv");
        MPI_Send(&a, 1, MPI_INT, right, 78, MPI_COMM_WORLD);
        MPI_Probe(left, 78, MPI_COMM_WORLD, &st);
        UNTOUCHED("MPI_Probe");
        do MPI_Iprobe(left, 78, MPI_COMM_WORLD, &flag, &st); while (!flag);
        UNTOUCHED("MPI_Iprobe");
        MPI_Mprobe(left, 78, MPI_COMM_WORLD, &m, &st);
        UNTOUCHED("MPI_Mprobe");
        MPI_Mrecv(&b, 1, MPI_INT, &m, &st);
        UNTOUCHED("MPI_Mrecv");
        MPI_Isend(&a, 1, MPI_INT, right, 79, MPI_COMM_WORLD, &rq[0]);
        MPI_Recv(&b, 1, MPI_INT, left, 79, MPI_COMM_WORLD, &st);
        UNTOUCHED("MPI_Recv");
        MPI_Wait(&rq[0], &st);
        UNTOUCHED("MPI_Wait");
        MPI_Isend(&a, 1, MPI_INT, right, 80, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&b, 1, MPI_INT, left, 80, MPI_COMM_WORLD, &rq[1]);
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_ERR_DIMS;
        MPI_Waitall(2, rq, sts);
        CHECK(sts[0].MPI_ERROR == MPI_ERR_DIMS && sts[1].MPI_ERROR == MPI_ERR_DIMS, "a successful MPI_Waitall set MPI_ERROR to %d %d",
              sts[0].MPI_ERROR, sts[1].MPI_ERROR);
        MPI_Isend(&a, 1, MPI_INT, right, 81, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&b, 1, MPI_INT, left, 81, MPI_COMM_WORLD, &rq[1]);
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_ERR_DIMS;
        for (int done = 0; done < 2; done += outcount == MPI_UNDEFINED ? 0 : outcount) {
            MPI_Testsome(2, rq, &outcount, idx, sts);
            for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++)
                CHECK(sts[i].MPI_ERROR == MPI_ERR_DIMS, "a successful MPI_Testsome set MPI_ERROR to %d", sts[i].MPI_ERROR);
        }
        st.MPI_ERROR = MPI_ERR_DIMS;
        MPI_Isend(&a, 1, MPI_INT, right, 82, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&b, 1, MPI_INT, left, 82, MPI_COMM_WORLD, &rq[1]);
        for (flag = 0; !flag;) MPI_Test(&rq[1], &flag, &st);
        UNTOUCHED("MPI_Test");
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
#undef UNTOUCHED
    }
    return finish();
}
