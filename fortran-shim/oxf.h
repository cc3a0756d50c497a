/* The Fortran 77 (mpif.h) bindings: what the generated wrappers in
 * bindings.c and the hand-written ones in special.c share.
 *
 * Fortran passes every argument by reference and each CHARACTER argument's
 * length as a hidden size_t after the others. Handles are MPI_Fint both in
 * C and in Fortran (MPICH's ABI), so they pass unchanged; the sentinels
 * MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, MPI_UNWEIGHTED and
 * MPI_WEIGHTS_EMPTY are variables in common blocks (as MPICH's mpif.h lays
 * them out), recognised by their address. */
#ifndef OXF_H
#define OXF_H

#include <stddef.h>
#include <mpi.h>

/* The common blocks of mpif.h (gfortran's names: lower case, one
 * underscore). The program's copy, if it has one, takes the place of ours. */
struct oxf_priv1 { MPI_Fint bottom, in_place, status_ignore[MPI_F_STATUS_SIZE]; };
struct oxf_priv2 { MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE], errcodes_ignore[1]; };
extern struct oxf_priv1 mpipriv1_;
extern struct oxf_priv2 mpipriv2_;
extern MPI_Fint mpifcmb5_; /* MPI_UNWEIGHTED */
extern MPI_Fint mpifcmb9_; /* MPI_WEIGHTS_EMPTY */

static inline void *oxf_buf(void *p)
{
    if (p == (void *)&mpipriv1_.bottom)
        return MPI_BOTTOM;
    if (p == (void *)&mpipriv1_.in_place)
        return MPI_IN_PLACE;
    return p;
}

static inline MPI_Status *oxf_status(MPI_Fint *s)
{
    return s == mpipriv1_.status_ignore ? MPI_STATUS_IGNORE : (MPI_Status *)s;
}

static inline MPI_Status *oxf_statuses(MPI_Fint *s)
{
    return s == mpipriv2_.statuses_ignore ? MPI_STATUSES_IGNORE : (MPI_Status *)s;
}

static inline int *oxf_weights(MPI_Fint *w)
{
    if (w == &mpifcmb5_)
        return MPI_UNWEIGHTED;
    if (w == &mpifcmb9_)
        return MPI_WEIGHTS_EMPTY;
    return w;
}

/* A Fortran string as a C string without its trailing blanks (malloc'd;
 * NULL only when out of memory). */
char *oxf_cstr(const char *f, size_t len);
/* An info key or value from Fortran: without its leading blanks too (the
 * Fortran info calls strip both ends, as MPICH's and Open MPI's do and
 * MPICH's test suite checks). */
char *oxf_cstr_info(const char *f, size_t len);
/* A C string into a Fortran string: truncated or padded with blanks. */
void oxf_fstr(const char *c, char *f, size_t len);
/* Room for what a C function writes into an output string for a Fortran
 * string of `len` characters (every MPI_MAX_* fits). */
char *oxf_out(size_t len);

/* OXF_HAND(MPI_X) in a hand-written file: MPI_X is bound there, and
 * tools/gen_fortran.py generates no wrapper for it. */
#define OXF_HAND(name)

/* Every Fortran name of one binding: gfortran's (mpi_x_), with a second
 * underscore (-fsecond-underscore), without underscore, upper case. */
#define OXF_ALIAS(impl, name) extern __typeof__(impl) name __attribute__((alias(#impl)));
#define OXF_NAMES(impl, lower, upper) \
    OXF_ALIAS(impl, lower##_) OXF_ALIAS(impl, lower##__) OXF_ALIAS(impl, lower) OXF_ALIAS(impl, upper)

#endif
