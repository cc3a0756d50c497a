/* The Fortran bindings of attributes and keyvals: attribute values are
 * INTEGER(KIND=MPI_ADDRESS_KIND) in Fortran, pointers in C; keyvals take
 * Fortran copy and delete procedures; the predefined Fortran callbacks.
 * OXF_HAND(MPI_X) marks MPI_X as bound here for tools/gen_fortran.py. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "oxf.h"

/* ---- attributes ---------------------------------------------------------
 * A Fortran attribute is an integer, kept as the C attribute's pointer
 * value. The predefined attributes are set by the library as pointers to
 * an int; mpif.h names each by its C key plus one (MPICH's ABI), and
 * getting it from Fortran yields the int. */
static int predefined_int_attr(int keyval)
{
    return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_WTIME_IS_GLOBAL ||
           keyval == MPI_UNIVERSE_SIZE || keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

OXF_HAND(MPI_Comm_get_attr)
OXF_HAND(MPI_Comm_set_attr)
OXF_HAND(MPI_Type_get_attr)
OXF_HAND(MPI_Type_set_attr)
OXF_HAND(MPI_Attr_get)
OXF_HAND(MPI_Attr_put)

typedef int (*get_attr_fn)(int, int, void *, int *);
typedef int (*set_attr_fn)(int, int, void *);

static void get_attr(get_attr_fn get, MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *value, MPI_Fint *flag,
                     MPI_Fint *ierr)
{
    void *v = NULL;
    int key = predefined_int_attr(*keyval - 1) ? *keyval - 1 : *keyval;
    *ierr = get(*obj, key, &v, flag);
    if (*ierr == MPI_SUCCESS && *flag)
        *value = predefined_int_attr(key) ? (MPI_Aint) * (int *)v : (MPI_Aint)v;
}

#define GET_ATTR(lower, upper, cname)                                                            \
    void oxf_mpi_##lower(MPI_Fint *o, MPI_Fint *k, MPI_Aint *v, MPI_Fint *f, MPI_Fint *e)        \
    {                                                                                            \
        get_attr((get_attr_fn)MPI_##cname, o, k, v, f, e);                                       \
    }                                                                                            \
    void oxf_pmpi_##lower(MPI_Fint *o, MPI_Fint *k, MPI_Aint *v, MPI_Fint *f, MPI_Fint *e)       \
    {                                                                                            \
        get_attr((get_attr_fn)PMPI_##cname, o, k, v, f, e);                                      \
    }                                                                                            \
    OXF_NAMES(oxf_mpi_##lower, mpi_##lower, MPI_##upper)                                         \
    OXF_NAMES(oxf_pmpi_##lower, pmpi_##lower, PMPI_##upper)

#define SET_ATTR(lower, upper, cname)                                                            \
    void oxf_mpi_##lower(MPI_Fint *o, MPI_Fint *k, MPI_Aint *v, MPI_Fint *e)                     \
    {                                                                                            \
        *e = ((set_attr_fn)MPI_##cname)(*o, *k, (void *)*v);                                     \
    }                                                                                            \
    void oxf_pmpi_##lower(MPI_Fint *o, MPI_Fint *k, MPI_Aint *v, MPI_Fint *e)                    \
    {                                                                                            \
        *e = ((set_attr_fn)PMPI_##cname)(*o, *k, (void *)*v);                                    \
    }                                                                                            \
    OXF_NAMES(oxf_mpi_##lower, mpi_##lower, MPI_##upper)                                         \
    OXF_NAMES(oxf_pmpi_##lower, pmpi_##lower, PMPI_##upper)

GET_ATTR(comm_get_attr, COMM_GET_ATTR, Comm_get_attr)
GET_ATTR(type_get_attr, TYPE_GET_ATTR, Type_get_attr)
SET_ATTR(comm_set_attr, COMM_SET_ATTR, Comm_set_attr)
SET_ATTR(type_set_attr, TYPE_SET_ATTR, Type_set_attr)

/* MPI-1's MPI_ATTR_GET/PUT: the value is a default INTEGER. */
static void attr_get(int prof, MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *value, MPI_Fint *flag, MPI_Fint *ierr)
{
    MPI_Aint v = 0;
    get_attr((get_attr_fn)(prof ? PMPI_Comm_get_attr : MPI_Comm_get_attr), comm, keyval, &v, flag, ierr);
    if (*ierr == MPI_SUCCESS && *flag)
        *value = (MPI_Fint)v;
}
void oxf_mpi_attr_get(MPI_Fint *c, MPI_Fint *k, MPI_Fint *v, MPI_Fint *f, MPI_Fint *e) { attr_get(0, c, k, v, f, e); }
void oxf_pmpi_attr_get(MPI_Fint *c, MPI_Fint *k, MPI_Fint *v, MPI_Fint *f, MPI_Fint *e) { attr_get(1, c, k, v, f, e); }
void oxf_mpi_attr_put(MPI_Fint *c, MPI_Fint *k, MPI_Fint *v, MPI_Fint *e)
{
    *e = MPI_Comm_set_attr(*c, *k, (void *)(MPI_Aint)*v);
}
void oxf_pmpi_attr_put(MPI_Fint *c, MPI_Fint *k, MPI_Fint *v, MPI_Fint *e)
{
    *e = PMPI_Comm_set_attr(*c, *k, (void *)(MPI_Aint)*v);
}
OXF_NAMES(oxf_mpi_attr_get, mpi_attr_get, MPI_ATTR_GET)
OXF_NAMES(oxf_pmpi_attr_get, pmpi_attr_get, PMPI_ATTR_GET)
OXF_NAMES(oxf_mpi_attr_put, mpi_attr_put, MPI_ATTR_PUT)
OXF_NAMES(oxf_pmpi_attr_put, pmpi_attr_put, PMPI_ATTR_PUT)

/* ---- keyvals with Fortran callbacks -------------------------------------
 * The C keyval's extra state is a record of the Fortran procedures and
 * the Fortran extra state; C-side trampolines call the procedures with
 * every argument by reference. `old`: MPI-1's MPI_KEYVAL_CREATE, whose
 * procedures take default INTEGERs. The record lives as long as the
 * program (the standard lets a keyval's callbacks run after its free). */
typedef void (*f_copy)(MPI_Fint *, MPI_Fint *, void *, void *, void *, MPI_Fint *, MPI_Fint *);
typedef void (*f_delete)(MPI_Fint *, MPI_Fint *, void *, void *, MPI_Fint *);
struct keyval {
    f_copy copy;
    f_delete del;
    MPI_Aint extra;
    int old;
};

static int copy_trampoline(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct keyval *k = extra;
    MPI_Fint o = obj, kv = keyval, f = 0, ierr = MPI_SUCCESS;
    if (k->old) {
        MPI_Fint ex = (MPI_Fint)k->extra, vin = (MPI_Fint)(MPI_Aint)in, vout = 0;
        k->copy(&o, &kv, &ex, &vin, &vout, &f, &ierr);
        *(void **)out = (void *)(MPI_Aint)vout;
    } else {
        MPI_Aint ex = k->extra, vin = (MPI_Aint)in, vout = 0;
        k->copy(&o, &kv, &ex, &vin, &vout, &f, &ierr);
        *(void **)out = (void *)vout;
    }
    *flag = f != 0;
    return ierr;
}

static int delete_trampoline(int obj, int keyval, void *value, void *extra)
{
    struct keyval *k = extra;
    MPI_Fint o = obj, kv = keyval, ierr = MPI_SUCCESS;
    if (k->old) {
        MPI_Fint v = (MPI_Fint)(MPI_Aint)value, ex = (MPI_Fint)k->extra;
        k->del(&o, &kv, &v, &ex, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)value, ex = k->extra;
        k->del(&o, &kv, &v, &ex, &ierr);
    }
    return ierr;
}

typedef int (*create_keyval_fn)(void *, void *, int *, void *);

static void create_keyval(create_keyval_fn create, f_copy copy, f_delete del, MPI_Fint *keyval, MPI_Aint extra,
                          int old, MPI_Fint *ierr)
{
    struct keyval *k = malloc(sizeof *k);
    if (!k) {
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    *k = (struct keyval){copy, del, extra, old};
    *ierr = create((void *)copy_trampoline, (void *)delete_trampoline, keyval, k);
    if (*ierr != MPI_SUCCESS)
        free(k);
}

OXF_HAND(MPI_Comm_create_keyval)
OXF_HAND(MPI_Type_create_keyval)
OXF_HAND(MPI_Keyval_create)

#define CREATE_KEYVAL(lower, upper, cname)                                                       \
    void oxf_mpi_##lower(f_copy c, f_delete d, MPI_Fint *k, MPI_Aint *x, MPI_Fint *e)            \
    {                                                                                            \
        create_keyval((create_keyval_fn)MPI_##cname, c, d, k, *x, 0, e);                         \
    }                                                                                            \
    void oxf_pmpi_##lower(f_copy c, f_delete d, MPI_Fint *k, MPI_Aint *x, MPI_Fint *e)           \
    {                                                                                            \
        create_keyval((create_keyval_fn)PMPI_##cname, c, d, k, *x, 0, e);                        \
    }                                                                                            \
    OXF_NAMES(oxf_mpi_##lower, mpi_##lower, MPI_##upper)                                         \
    OXF_NAMES(oxf_pmpi_##lower, pmpi_##lower, PMPI_##upper)

CREATE_KEYVAL(comm_create_keyval, COMM_CREATE_KEYVAL, Comm_create_keyval)
CREATE_KEYVAL(type_create_keyval, TYPE_CREATE_KEYVAL, Type_create_keyval)

void oxf_mpi_keyval_create(f_copy c, f_delete d, MPI_Fint *k, MPI_Fint *x, MPI_Fint *e)
{
    create_keyval((create_keyval_fn)MPI_Comm_create_keyval, c, d, k, *x, 1, e);
}
void oxf_pmpi_keyval_create(f_copy c, f_delete d, MPI_Fint *k, MPI_Fint *x, MPI_Fint *e)
{
    create_keyval((create_keyval_fn)PMPI_Comm_create_keyval, c, d, k, *x, 1, e);
}
OXF_NAMES(oxf_mpi_keyval_create, mpi_keyval_create, MPI_KEYVAL_CREATE)
OXF_NAMES(oxf_pmpi_keyval_create, pmpi_keyval_create, PMPI_KEYVAL_CREATE)

/* The predefined Fortran callbacks (their values in extra state and
 * attributes are INTEGER(KIND=MPI_ADDRESS_KIND), or INTEGER for MPI-1's). */
void oxf_null_copy_fn(MPI_Fint *o, MPI_Fint *k, void *x, void *in, void *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)o, (void)k, (void)x, (void)in, (void)out;
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void oxf_dup_fn(MPI_Fint *o, MPI_Fint *k, void *x, MPI_Aint *in, MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)o, (void)k, (void)x;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void oxf_dup_fn_int(MPI_Fint *o, MPI_Fint *k, void *x, MPI_Fint *in, MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr)
{
    (void)o, (void)k, (void)x;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void oxf_null_delete_fn(MPI_Fint *o, MPI_Fint *k, void *v, void *x, MPI_Fint *ierr)
{
    (void)o, (void)k, (void)v, (void)x;
    *ierr = MPI_SUCCESS;
}
/* mpi.h has C macros of these names */
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_NULL_COPY_FN
#undef MPI_COMM_DUP_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_DUP_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_NULL_DELETE_FN
OXF_NAMES(oxf_null_copy_fn, mpi_comm_null_copy_fn, MPI_COMM_NULL_COPY_FN)
OXF_NAMES(oxf_null_copy_fn, mpi_type_null_copy_fn, MPI_TYPE_NULL_COPY_FN)
OXF_NAMES(oxf_null_copy_fn, mpi_null_copy_fn, MPI_NULL_COPY_FN)
OXF_NAMES(oxf_dup_fn, mpi_comm_dup_fn, MPI_COMM_DUP_FN)
OXF_NAMES(oxf_dup_fn, mpi_type_dup_fn, MPI_TYPE_DUP_FN)
OXF_NAMES(oxf_dup_fn_int, mpi_dup_fn, MPI_DUP_FN)
OXF_NAMES(oxf_null_delete_fn, mpi_comm_null_delete_fn, MPI_COMM_NULL_DELETE_FN)
OXF_NAMES(oxf_null_delete_fn, mpi_type_null_delete_fn, MPI_TYPE_NULL_DELETE_FN)
OXF_NAMES(oxf_null_delete_fn, mpi_null_delete_fn, MPI_NULL_DELETE_FN)
