/* Loaded ahead of oxmpi (LD_PRELOAD) in every task of a job started by
 * srun: the task EXIT_EARLY_RANK names (SLURM_PROCID) exits with status 3
 * before its program's main, so before MPI_Init, while the others wait in
 * MPI_Init's first exchange through the launcher, which srun does not end
 * by itself. tools/test_hosts.py checks that they end the job promptly. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void exit_early(void)
{
    const char *who = getenv("EXIT_EARLY_RANK"), *me = getenv("SLURM_PROCID");
    if (who && me && strcmp(who, me) == 0)
        _exit(3);
}
