/* oxmpi-test: ranks=1,2
 * MPI_Init_thread reports the thread level truthfully: asking for more
 * than the library gives yields its maximum, never more. */
#include "common.h"

int main(int argc, char **argv)
{
    int provided = -1, q = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&q);
    CHECK(q == provided, "Query_thread %d vs provided %d", q, provided);
    /* oxmpi serialises calls with one lock: it must not claim MULTIPLE */
    CHECK(provided == MPI_THREAD_SERIALIZED, "provided %d", provided);
    return finish();
}
