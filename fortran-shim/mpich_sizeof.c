/* MPI_SIZEOF for programs built with MPICH's mpif90 (its `use mpi`),
 * run on oxmpi through the library swap. MPICH's module resolves the
 * generic to a procedure of its own module `mpi_sizeofs`, one per type,
 * scalar or array (`v`), which such a binary calls by gfortran's module
 * name, __mpi_sizeofs_MOD_mpi_sizeof_<type>: defined here, each giving
 * the bytes of one element of its type. The element itself is never
 * read, so how it is passed does not matter; SIZE and IERROR come second
 * and third either way (MPICH's CHARACTER procedures take strings of
 * length 1 only). oxmpi's own `use mpi` has its own generic
 * (mpi_sizeof.f90). */
#include "oxf.h"

#define OXF_SIZEOF(name, bytes)                                                  \
    void __mpi_sizeofs_MOD_mpi_sizeof_##name(void *x, MPI_Fint *size, MPI_Fint *ierr) \
    {                                                                           \
        (void)x;                                                                \
        *size = (bytes);                                                        \
        *ierr = MPI_SUCCESS;                                                    \
    }

OXF_SIZEOF(i, 4)
OXF_SIZEOF(iv, 4)
OXF_SIZEOF(i1, 1)
OXF_SIZEOF(i1v, 1)
OXF_SIZEOF(i2, 2)
OXF_SIZEOF(i2v, 2)
OXF_SIZEOF(i8, 8)
OXF_SIZEOF(i8v, 8)
OXF_SIZEOF(r, 4)
OXF_SIZEOF(rv, 4)
OXF_SIZEOF(d, 8)
OXF_SIZEOF(dv, 8)
OXF_SIZEOF(cx, 8)
OXF_SIZEOF(cxv, 8)
OXF_SIZEOF(l, 4)
OXF_SIZEOF(lv, 4)

/* (CHARACTER of length 1 in MPICH's module: one byte) */
OXF_SIZEOF(ch, 1)
OXF_SIZEOF(chv, 1)
