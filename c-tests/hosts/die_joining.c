/* Loaded ahead of oxmpi (LD_PRELOAD) in every rank of a job: the rank
 * DIE_JOINING_RANK names (PMI_RANK) kills itself with SIGKILL as it opens
 * its host's shared segment by name, in MPI_Init, after the segment's
 * creator made it and before the last rank mapped it (while the name must
 * still exist). tools/test_hosts.py checks that no name is left in
 * /dev/shm under a launcher that sweeps nothing (Hydra). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

int shm_open(const char *name, int oflag, mode_t mode)
{
    const char *who = getenv("DIE_JOINING_RANK"), *me = getenv("PMI_RANK");
    if (who && me && strcmp(who, me) == 0 && !(oflag & O_CREAT) && strncmp(name, "/oxmpi", 6) == 0)
        raise(SIGKILL);
    int (*real)(const char *, int, mode_t) = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
    return real(name, oflag, mode);
}
