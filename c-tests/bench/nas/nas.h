/* Shared by the NAS-style kernels (written from the NAS Parallel Benchmarks
 * specification, NPB 3 rules): the specification's pseudo-random generator,
 * the class letter, timing and the closing report. */
#ifndef NAS_H
#define NAS_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#ifndef CLASS
#define CLASS S
#endif
#define NAS_STR2(x) #x
#define NAS_STR(x) NAS_STR2(x)
/* The class as a character: 'S', 'W' or 'A'. */
#define CLASS_CHAR (NAS_STR(CLASS)[0])

/* The specification's generator: x(k+1) = a * x(k) mod 2^46, numbers
 * returned as x * 2^-46 in (0, 1). Kept as integers (exact, and the same
 * sequence the specification's double-precision recipe computes). */
#define NAS_A 1220703125ULL /* 5^13 */
#define NAS_MOD_MASK ((1ULL << 46) - 1)

static inline uint64_t nas_mul(uint64_t x, uint64_t a)
{
    return (uint64_t)(((unsigned __int128)x * a) & NAS_MOD_MASK);
}

/* The next number after *x (updated). */
static inline double nas_rand(uint64_t *x, uint64_t a)
{
    *x = nas_mul(*x, a);
    return (double)*x * 0x1p-46;
}

/* a^n mod 2^46. */
static inline uint64_t nas_pow(uint64_t a, uint64_t n)
{
    uint64_t r = 1;
    while (n) {
        if (n & 1)
            r = nas_mul(r, a);
        a = nas_mul(a, a);
        n >>= 1;
    }
    return r;
}

/* The usual NAS closing report (rank 0 only). */
static inline void nas_report(const char *name, long long size, int niter, double secs, int nprocs, double mops,
                              const char *optype, int verified)
{
    printf("\n\n %s Benchmark Completed.\n", name);
    printf(" Class           = %24c\n", CLASS_CHAR);
    printf(" Size            = %24lld\n", size);
    printf(" Iterations      = %24d\n", niter);
    printf(" Time in seconds = %24.3f\n", secs);
    printf(" Total processes = %24d\n", nprocs);
    printf(" Mop/s total     = %24.2f\n", mops);
    printf(" Mop/s/process   = %24.2f\n", mops / nprocs);
    printf(" Operation type  = %24s\n", optype);
    printf(" Verification    = %24s\n", verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
    printf("\n %s\n", verified ? "VERIFICATION SUCCESSFUL" : "VERIFICATION FAILED");
    fflush(stdout);
}

#endif
