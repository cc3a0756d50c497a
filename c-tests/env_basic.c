/* oxmpi-test: ranks=1,2,4
 * Environment queries: init state, versions, names, timers, sizes and
 * ranks of MPI_COMM_WORLD and MPI_COMM_SELF, predefined attributes. */
#include "common.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    int flag = -1, v, sv, rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME], host[256];

    MPI_Initialized(&flag);
    if (flag != 0) { printf("MPI_Initialized before MPI_Init gave %d\n", flag); return 1; }
    MPI_Get_version(&v, &sv);
    if (v != MPI_VERSION || sv != MPI_SUBVERSION) { printf("version %d.%d\n", v, sv); return 1; }

    /* info objects may be made and used before MPI_Init (MPI 4.0) */
    MPI_Info before, env;
    char val_s[64];
    MPI_Info_create_env(argc, argv, &env);
    MPI_Info_get(env, "maxprocs", sizeof val_s - 1, val_s, &flag);
    if (!flag || atoi(val_s) != atoi(getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "1")) {
        printf("MPI_Info_create_env before MPI_Init: maxprocs %s (flag %d)\n", flag ? val_s : "-", flag);
        return 1;
    }
    MPI_Info_free(&env);
    MPI_Info_create(&before);
    MPI_Info_set(before, "made", "before MPI_Init");

    MPI_Init(&argc, &argv);
    MPI_Info_get(before, "made", sizeof val_s - 1, val_s, &flag);
    CHECK(flag && strcmp(val_s, "before MPI_Init") == 0, "info made before MPI_Init: %s", flag ? val_s : "-");
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after init gave %d", flag);
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized before finalize gave %d", flag);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    CHECK(atoi(getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "1") == size, "size %d", size);
    MPI_Comm_rank(MPI_COMM_SELF, &v);
    MPI_Comm_size(MPI_COMM_SELF, &sv);
    CHECK(v == 0 && sv == 1, "self rank %d size %d", v, sv);

    MPI_Get_processor_name(name, &len);
    gethostname(host, sizeof host);
    CHECK(strcmp(name, host) == 0 && len == (int)strlen(host), "processor name %s (%d)", name, len);

    double t0 = MPI_Wtime(), tick = MPI_Wtick();
    usleep(20000);
    double t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 0.019 && t1 - t0 < 5, "Wtime advanced %g s over a 20 ms sleep", t1 - t0);
    CHECK(tick > 0 && tick <= 1e-3, "Wtick %g", tick);

    int *val;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag);
    CHECK(flag && *val >= 32767, "MPI_TAG_UB %d flag %d", flag ? *val : -1, flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag);
    CHECK(flag && (*val == 0 || *val == 1), "MPI_WTIME_IS_GLOBAL");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &val, &flag);
    CHECK(flag && *val == MPI_PROC_NULL, "MPI_HOST");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag);
    CHECK(flag && *val == size, "MPI_UNIVERSE_SIZE");
    MPI_Comm_get_attr(MPI_COMM_SELF, MPI_APPNUM, &val, &flag);
    CHECK(flag && *val == 0, "MPI_APPNUM");

    int provided, main_thread;
    MPI_Query_thread(&provided);
    CHECK(provided == MPI_THREAD_SINGLE, "MPI_Init provides MPI_THREAD_SINGLE, got %d", provided);
    MPI_Is_thread_main(&main_thread);
    CHECK(main_thread == 1, "the main thread is the main thread");

    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_string(MPI_ERR_RANK, msg, &len);
    CHECK(len > 0 && strstr(msg, "rank") != NULL, "error string \"%s\"", msg);
    int cls;
    MPI_Error_class(MPI_ERR_TRUNCATE, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "class %d", cls);

    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler");
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "freed handle is null");

    int rc = finish();
    MPI_Finalized(&flag);
    if (!flag) { printf("MPI_Finalized after finalize gave 0\n"); rc = 1; }
    /* and after MPI_Finalize */
    int nkeys = -1;
    if (MPI_Info_get_nkeys(before, &nkeys) != MPI_SUCCESS || nkeys != 1 || MPI_Info_free(&before) != MPI_SUCCESS) {
        printf("the info made before MPI_Init, after MPI_Finalize: %d keys\n", nkeys);
        rc = 1;
    }
    return rc;
}
