/* The Fortran bindings that take more than a mechanical mapping (the others
 * are generated into bindings.c): MPI_INIT without argc/argv, the functions
 * that return a value, the removed MPI-1 functions Fortran programs still
 * call; attributes and keyvals are in attr.c.
 * OXF_HAND(MPI_X) marks MPI_X as bound here for tools/gen_fortran.py. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "oxf.h"

/* The common blocks, in case the program has none (it has, when it
 * includes mpif.h; its copy then takes the place of these). */
struct oxf_priv1 mpipriv1_;
struct oxf_priv2 mpipriv2_;
MPI_Fint mpifcmb5_;
MPI_Fint mpifcmb9_;
char mpiprivc_[2];

char *oxf_cstr(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, f, len);
        c[len] = '\0';
    }
    return c;
}

char *oxf_cstr_info(const char *f, size_t len)
{
    while (len > 0 && *f == ' ') {
        f++;
        len--;
    }
    return oxf_cstr(f, len);
}

void oxf_fstr(const char *c, char *f, size_t len)
{
    if (!c)
        return;
    size_t n = strnlen(c, len);
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

char *oxf_out(size_t len)
{
    return calloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 1, 1);
}

/* ---- MPI_INIT, MPI_INIT_THREAD ---------------------------------------- */
OXF_HAND(MPI_Init)
OXF_HAND(MPI_Init_thread)

void oxf_mpi_init(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }
void oxf_pmpi_init(MPI_Fint *ierr) { *ierr = PMPI_Init(NULL, NULL); }
OXF_NAMES(oxf_mpi_init, mpi_init, MPI_INIT)
OXF_NAMES(oxf_pmpi_init, pmpi_init, PMPI_INIT)

void oxf_mpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}
void oxf_pmpi_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = PMPI_Init_thread(NULL, NULL, *required, provided);
}
OXF_NAMES(oxf_mpi_init_thread, mpi_init_thread, MPI_INIT_THREAD)
OXF_NAMES(oxf_pmpi_init_thread, pmpi_init_thread, PMPI_INIT_THREAD)

/* MPI_PCONTROL(LEVEL): C's is variadic; Fortran's takes the level alone
 * (MPI 4.0 section 15.2.4), with no IERROR. MPICH's takes an IERROR as
 * well, and programs written for it pass one: it is left as it was (the
 * call cannot fail), and a program that passes none has nothing written
 * through the stray second argument. */
OXF_HAND(MPI_Pcontrol)
void oxf_mpi_pcontrol(MPI_Fint *level) { MPI_Pcontrol(*level); }
void oxf_pmpi_pcontrol(MPI_Fint *level) { PMPI_Pcontrol(*level); }
OXF_NAMES(oxf_mpi_pcontrol, mpi_pcontrol, MPI_PCONTROL)
OXF_NAMES(oxf_pmpi_pcontrol, pmpi_pcontrol, PMPI_PCONTROL)

/* MPI_GREQUEST_START(QUERY_FN, FREE_FN, CANCEL_FN, EXTRA_STATE, REQUEST,
 * IERROR): the Fortran procedures take EXTRA_STATE (an address-sized
 * integer) by reference, a Fortran status, a LOGICAL, and return through
 * IERROR; C functions in between call them with what is kept here, which
 * the free function's call lets go. EXTRA_STATE is the program's own
 * variable, as MPICH and Open MPI pass it (MPICH's greqf test has the
 * free procedure change it). */
OXF_HAND(MPI_Grequest_start)
struct oxf_greq {
    void (*query)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    void (*free)(MPI_Aint *, MPI_Fint *);
    void (*cancel)(MPI_Aint *, MPI_Fint *, MPI_Fint *);
    MPI_Aint *extra;
};

static int greq_query(void *p, MPI_Status *s)
{
    struct oxf_greq *g = p;
    MPI_Fint f[MPI_F_STATUS_SIZE], ierr = MPI_SUCCESS;
    MPI_Status_c2f(s, f);
    g->query(g->extra, f, &ierr);
    MPI_Status_f2c(f, s);
    return ierr;
}

static int greq_free(void *p)
{
    struct oxf_greq *g = p;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int greq_cancel(void *p, int complete)
{
    struct oxf_greq *g = p;
    MPI_Fint done = complete != 0, ierr = MPI_SUCCESS;
    g->cancel(g->extra, &done, &ierr);
    return ierr;
}

static void grequest_start(int prof, void *query, void *free_fn, void *cancel, MPI_Aint *extra, MPI_Fint *request,
                           MPI_Fint *ierr)
{
    struct oxf_greq *g = malloc(sizeof *g);
    if (!g) {
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    g->query = (void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))query;
    g->free = (void (*)(MPI_Aint *, MPI_Fint *))free_fn;
    g->cancel = (void (*)(MPI_Aint *, MPI_Fint *, MPI_Fint *))cancel;
    g->extra = extra;
    MPI_Request r;
    *ierr = (prof ? PMPI_Grequest_start : MPI_Grequest_start)(greq_query, greq_free, greq_cancel, g, &r);
    if (*ierr == MPI_SUCCESS)
        *request = MPI_Request_c2f(r);
    else
        free(g);
}
void oxf_mpi_grequest_start(void *q, void *f, void *c, MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierr)
{
    grequest_start(0, q, f, c, extra, request, ierr);
}
void oxf_pmpi_grequest_start(void *q, void *f, void *c, MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierr)
{
    grequest_start(1, q, f, c, extra, request, ierr);
}
OXF_NAMES(oxf_mpi_grequest_start, mpi_grequest_start, MPI_GREQUEST_START)
OXF_NAMES(oxf_pmpi_grequest_start, pmpi_grequest_start, PMPI_GREQUEST_START)

/* MPI_INFO_CREATE_ENV(INFO, IERROR): Fortran has no argv to give. */
OXF_HAND(MPI_Info_create_env)
void oxf_mpi_info_create_env(MPI_Fint *info, MPI_Fint *ierr) { *ierr = MPI_Info_create_env(0, NULL, info); }
void oxf_pmpi_info_create_env(MPI_Fint *info, MPI_Fint *ierr) { *ierr = PMPI_Info_create_env(0, NULL, info); }
OXF_NAMES(oxf_mpi_info_create_env, mpi_info_create_env, MPI_INFO_CREATE_ENV)
OXF_NAMES(oxf_pmpi_info_create_env, pmpi_info_create_env, PMPI_INFO_CREATE_ENV)

/* MPI_INFO_GET_STRING: in Fortran BUFLEN counts no terminating NUL; the
 * value's first BUFLEN characters land in VALUE, blanks after them, and
 * VALUE stays as it was when BUFLEN is 0 or the key is not there. */
OXF_HAND(MPI_Info_get_string)
static void info_get_string(int prof, MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                            MPI_Fint *ierr, size_t key_len, size_t value_len)
{
    char *k = oxf_cstr_info(key, key_len);
    int room = *buflen > 0 ? *buflen + 1 : 0;
    char *v = calloc((size_t)room + 1, 1);
    *ierr = (prof ? PMPI_Info_get_string : MPI_Info_get_string)(*info, k, &room, v, flag);
    if (*ierr == MPI_SUCCESS && *flag) {
        if (*buflen > 0)
            oxf_fstr(v, value, value_len);
        *buflen = room - 1;
    }
    free(k);
    free(v);
}
void oxf_mpi_info_get_string(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                             MPI_Fint *ierr, size_t key_len, size_t value_len)
{
    info_get_string(0, info, key, buflen, value, flag, ierr, key_len, value_len);
}
void oxf_pmpi_info_get_string(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
                              MPI_Fint *ierr, size_t key_len, size_t value_len)
{
    info_get_string(1, info, key, buflen, value, flag, ierr, key_len, value_len);
}
OXF_NAMES(oxf_mpi_info_get_string, mpi_info_get_string, MPI_INFO_GET_STRING)
OXF_NAMES(oxf_pmpi_info_get_string, pmpi_info_get_string, PMPI_INFO_GET_STRING)

/* MPI_INFO_GET: VALUE stays as it was when the key is not there. */
OXF_HAND(MPI_Info_get)
static void info_get(int prof, MPI_Fint *info, char *key, MPI_Fint *valuelen, char *value, MPI_Fint *flag,
                     MPI_Fint *ierr, size_t key_len, size_t value_len)
{
    char *k = oxf_cstr_info(key, key_len);
    char *v = calloc((size_t)(*valuelen > 0 ? *valuelen : 0) + 1, 1);
    *ierr = (prof ? PMPI_Info_get : MPI_Info_get)(*info, k, *valuelen, v, flag);
    if (*ierr == MPI_SUCCESS && *flag)
        oxf_fstr(v, value, value_len);
    free(k);
    free(v);
}
void oxf_mpi_info_get(MPI_Fint *info, char *key, MPI_Fint *valuelen, char *value, MPI_Fint *flag, MPI_Fint *ierr,
                      size_t key_len, size_t value_len)
{
    info_get(0, info, key, valuelen, value, flag, ierr, key_len, value_len);
}
void oxf_pmpi_info_get(MPI_Fint *info, char *key, MPI_Fint *valuelen, char *value, MPI_Fint *flag, MPI_Fint *ierr,
                       size_t key_len, size_t value_len)
{
    info_get(1, info, key, valuelen, value, flag, ierr, key_len, value_len);
}
OXF_NAMES(oxf_mpi_info_get, mpi_info_get, MPI_INFO_GET)
OXF_NAMES(oxf_pmpi_info_get, pmpi_info_get, PMPI_INFO_GET)

/* ---- MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME, MPI_TESTSOME -------------
 * Fortran numbers the requests of an array from 1, C from 0: the indices C
 * returns are shifted; MPI_UNDEFINED stays as it is. */
OXF_HAND(MPI_Waitany)
OXF_HAND(MPI_Testany)
OXF_HAND(MPI_Waitsome)
OXF_HAND(MPI_Testsome)

static void from_one(MPI_Fint *index)
{
    if (*index != MPI_UNDEFINED)
        *index += 1;
}

/* Each of the four below starts its INDEX or OUTCOUNT at MPI_UNDEFINED:
 * a C call that fails before completing anything (a negative count, a bad
 * handle) leaves it alone, and what the program passed in must not be
 * renumbered as if C had written it (a garbage OUTCOUNT once had that many
 * indices renumbered, far past the program's array). */
static void waitany(int (*f)(int, MPI_Request *, int *, MPI_Status *), MPI_Fint *count, MPI_Fint *requests,
                    MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
{
    *index = MPI_UNDEFINED;
    *ierr = f(*count, (MPI_Request *)requests, index, oxf_status(status));
    from_one(index);
}
void oxf_mpi_waitany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
{
    waitany(MPI_Waitany, count, requests, index, status, ierr);
}
void oxf_pmpi_waitany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
{
    waitany(PMPI_Waitany, count, requests, index, status, ierr);
}
OXF_NAMES(oxf_mpi_waitany, mpi_waitany, MPI_WAITANY)
OXF_NAMES(oxf_pmpi_waitany, pmpi_waitany, PMPI_WAITANY)

static void testany(int (*f)(int, MPI_Request *, int *, int *, MPI_Status *), MPI_Fint *count, MPI_Fint *requests,
                    MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    *index = MPI_UNDEFINED;
    *ierr = f(*count, (MPI_Request *)requests, index, flag, oxf_status(status));
    from_one(index);
}
void oxf_mpi_testany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                     MPI_Fint *ierr)
{
    testany(MPI_Testany, count, requests, index, flag, status, ierr);
}
void oxf_pmpi_testany(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                      MPI_Fint *ierr)
{
    testany(PMPI_Testany, count, requests, index, flag, status, ierr);
}
OXF_NAMES(oxf_mpi_testany, mpi_testany, MPI_TESTANY)
OXF_NAMES(oxf_pmpi_testany, pmpi_testany, PMPI_TESTANY)

static void some(int (*f)(int, MPI_Request *, int *, int *, MPI_Status *), MPI_Fint *incount, MPI_Fint *requests,
                 MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    *outcount = MPI_UNDEFINED;
    *ierr = f(*incount, (MPI_Request *)requests, outcount, indices, oxf_statuses(statuses));
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        indices[i] += 1;
}
void oxf_mpi_waitsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                      MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(MPI_Waitsome, incount, requests, outcount, indices, statuses, ierr);
}
void oxf_pmpi_waitsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(PMPI_Waitsome, incount, requests, outcount, indices, statuses, ierr);
}
void oxf_mpi_testsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                      MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(MPI_Testsome, incount, requests, outcount, indices, statuses, ierr);
}
void oxf_pmpi_testsome(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierr)
{
    some(PMPI_Testsome, incount, requests, outcount, indices, statuses, ierr);
}
OXF_NAMES(oxf_mpi_waitsome, mpi_waitsome, MPI_WAITSOME)
OXF_NAMES(oxf_pmpi_waitsome, pmpi_waitsome, PMPI_WAITSOME)
OXF_NAMES(oxf_mpi_testsome, mpi_testsome, MPI_TESTSOME)
OXF_NAMES(oxf_pmpi_testsome, pmpi_testsome, PMPI_TESTSOME)

/* ---- functions with a value ------------------------------------------- */
OXF_HAND(MPI_Wtime)
OXF_HAND(MPI_Wtick)
OXF_HAND(MPI_Aint_add)
OXF_HAND(MPI_Aint_diff)

double oxf_mpi_wtime(void) { return MPI_Wtime(); }
double oxf_pmpi_wtime(void) { return PMPI_Wtime(); }
double oxf_mpi_wtick(void) { return MPI_Wtick(); }
double oxf_pmpi_wtick(void) { return PMPI_Wtick(); }
OXF_NAMES(oxf_mpi_wtime, mpi_wtime, MPI_WTIME)
OXF_NAMES(oxf_pmpi_wtime, pmpi_wtime, PMPI_WTIME)
OXF_NAMES(oxf_mpi_wtick, mpi_wtick, MPI_WTICK)
OXF_NAMES(oxf_pmpi_wtick, pmpi_wtick, PMPI_WTICK)

MPI_Aint oxf_mpi_aint_add(MPI_Aint *base, MPI_Aint *disp) { return MPI_Aint_add(*base, *disp); }
MPI_Aint oxf_pmpi_aint_add(MPI_Aint *base, MPI_Aint *disp) { return PMPI_Aint_add(*base, *disp); }
MPI_Aint oxf_mpi_aint_diff(MPI_Aint *a, MPI_Aint *b) { return MPI_Aint_diff(*a, *b); }
MPI_Aint oxf_pmpi_aint_diff(MPI_Aint *a, MPI_Aint *b) { return PMPI_Aint_diff(*a, *b); }
OXF_NAMES(oxf_mpi_aint_add, mpi_aint_add, MPI_AINT_ADD)
OXF_NAMES(oxf_pmpi_aint_add, pmpi_aint_add, PMPI_AINT_ADD)
OXF_NAMES(oxf_mpi_aint_diff, mpi_aint_diff, MPI_AINT_DIFF)
OXF_NAMES(oxf_pmpi_aint_diff, pmpi_aint_diff, PMPI_AINT_DIFF)

/* ---- MPI-1 functions removed in MPI-3.0 ---------------------------------
 * Their Fortran forms take addresses and extents as default INTEGERs; each
 * is the library's own C function of the same name, the values widened on
 * the way in and narrowed on the way out. */

/* A value that does not fit the INTEGER the caller gave (on 64-bit Linux,
 * most addresses): MPI_ERR_ARG through MPI_COMM_WORLD's error handler (the
 * handler for errors of no communicator), whose fatal default prints why. */
static MPI_Fint narrow(MPI_Aint v, MPI_Fint *ierr)
{
    static int code = MPI_ERR_ARG;
    if (*ierr != MPI_SUCCESS || (v <= INT32_MAX && v >= INT32_MIN))
        return (MPI_Fint)v;
    if (code == MPI_ERR_ARG && MPI_Add_error_code(MPI_ERR_ARG, &code) == MPI_SUCCESS)
        MPI_Add_error_string(code, "an address or extent does not fit the default INTEGER of MPI_ADDRESS, "
                                   "MPI_TYPE_EXTENT, MPI_TYPE_LB or MPI_TYPE_UB: use MPI_GET_ADDRESS or "
                                   "MPI_TYPE_GET_EXTENT, which take INTEGER(KIND=MPI_ADDRESS_KIND)");
    *ierr = MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    if (*ierr == MPI_SUCCESS) /* a user handler that returned */
        *ierr = code;
    return (MPI_Fint)v;
}

/* MPI_X(IN, RESULT, IERROR) with RESULT an MPI_Aint in C. */
#define NARROWED(lower, upper, cname, in_t, in)                                  \
    void oxf_mpi_##lower(in_t a, MPI_Fint *out, MPI_Fint *ierr)                  \
    {                                                                            \
        MPI_Aint v = 0;                                                          \
        *ierr = MPI_##cname(in, &v);                                             \
        *out = narrow(v, ierr);                                                  \
    }                                                                            \
    void oxf_pmpi_##lower(in_t a, MPI_Fint *out, MPI_Fint *ierr)                 \
    {                                                                            \
        MPI_Aint v = 0;                                                          \
        *ierr = PMPI_##cname(in, &v);                                            \
        *out = narrow(v, ierr);                                                  \
    }                                                                            \
    OXF_NAMES(oxf_mpi_##lower, mpi_##lower, MPI_##upper)                         \
    OXF_NAMES(oxf_pmpi_##lower, pmpi_##lower, PMPI_##upper)

NARROWED(address, ADDRESS, Address, void *, oxf_buf(a))
NARROWED(type_extent, TYPE_EXTENT, Type_extent, MPI_Fint *, *a)
NARROWED(type_lb, TYPE_LB, Type_lb, MPI_Fint *, *a)
NARROWED(type_ub, TYPE_UB, Type_ub, MPI_Fint *, *a)

void oxf_mpi_type_hvector(MPI_Fint *count, MPI_Fint *blocklen, MPI_Fint *stride, MPI_Fint *old, MPI_Fint *newtype,
                          MPI_Fint *ierr)
{
    *ierr = MPI_Type_hvector(*count, *blocklen, *stride, *old, newtype);
}
void oxf_pmpi_type_hvector(MPI_Fint *count, MPI_Fint *blocklen, MPI_Fint *stride, MPI_Fint *old, MPI_Fint *newtype,
                           MPI_Fint *ierr)
{
    *ierr = PMPI_Type_hvector(*count, *blocklen, *stride, *old, newtype);
}
OXF_NAMES(oxf_mpi_type_hvector, mpi_type_hvector, MPI_TYPE_HVECTOR)
OXF_NAMES(oxf_pmpi_type_hvector, pmpi_type_hvector, PMPI_TYPE_HVECTOR)

/* INTEGER displacements as MPI_Aint (NULL: out of memory). */
static MPI_Aint *widen(const MPI_Fint *v, MPI_Fint n)
{
    MPI_Aint *w = malloc(sizeof(MPI_Aint) * (size_t)(n > 0 ? n : 1));
    for (MPI_Fint i = 0; w && i < n; i++)
        w[i] = v[i];
    return w;
}

typedef int (*hindexed_fn)(int, int *, MPI_Aint *, MPI_Datatype, MPI_Datatype *);
static void hindexed(hindexed_fn f, MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *disps, MPI_Fint *old,
                     MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Aint *d = widen(disps, *count);
    *ierr = d ? f(*count, blocklens, d, *old, newtype) : MPI_ERR_NO_MEM;
    free(d);
}
void oxf_mpi_type_hindexed(MPI_Fint *c, MPI_Fint *b, MPI_Fint *d, MPI_Fint *o, MPI_Fint *n, MPI_Fint *e)
{
    hindexed(MPI_Type_hindexed, c, b, d, o, n, e);
}
void oxf_pmpi_type_hindexed(MPI_Fint *c, MPI_Fint *b, MPI_Fint *d, MPI_Fint *o, MPI_Fint *n, MPI_Fint *e)
{
    hindexed(PMPI_Type_hindexed, c, b, d, o, n, e);
}
OXF_NAMES(oxf_mpi_type_hindexed, mpi_type_hindexed, MPI_TYPE_HINDEXED)
OXF_NAMES(oxf_pmpi_type_hindexed, pmpi_type_hindexed, PMPI_TYPE_HINDEXED)

typedef int (*struct_fn)(int, int *, MPI_Aint *, MPI_Datatype *, MPI_Datatype *);
static void type_struct(struct_fn f, MPI_Fint *count, MPI_Fint *blocklens, MPI_Fint *disps, MPI_Fint *types,
                        MPI_Fint *newtype, MPI_Fint *ierr)
{
    MPI_Aint *d = widen(disps, *count);
    *ierr = d ? f(*count, blocklens, d, types, newtype) : MPI_ERR_NO_MEM;
    free(d);
}
void oxf_mpi_type_struct(MPI_Fint *c, MPI_Fint *b, MPI_Fint *d, MPI_Fint *t, MPI_Fint *n, MPI_Fint *e)
{
    type_struct(MPI_Type_struct, c, b, d, t, n, e);
}
void oxf_pmpi_type_struct(MPI_Fint *c, MPI_Fint *b, MPI_Fint *d, MPI_Fint *t, MPI_Fint *n, MPI_Fint *e)
{
    type_struct(PMPI_Type_struct, c, b, d, t, n, e);
}
OXF_NAMES(oxf_mpi_type_struct, mpi_type_struct, MPI_TYPE_STRUCT)
OXF_NAMES(oxf_pmpi_type_struct, pmpi_type_struct, PMPI_TYPE_STRUCT)

/* The Fortran handler SUBROUTINE H(COMM, CODE) takes its arguments by
 * reference, as MPI_Handler_function does: passed as is. */
void oxf_mpi_errhandler_create(MPI_Handler_function *fn, MPI_Fint *eh, MPI_Fint *ierr)
{
    *ierr = MPI_Errhandler_create(fn, eh);
}
void oxf_pmpi_errhandler_create(MPI_Handler_function *fn, MPI_Fint *eh, MPI_Fint *ierr)
{
    *ierr = PMPI_Errhandler_create(fn, eh);
}
void oxf_mpi_errhandler_set(MPI_Fint *comm, MPI_Fint *eh, MPI_Fint *ierr) { *ierr = MPI_Errhandler_set(*comm, *eh); }
void oxf_pmpi_errhandler_set(MPI_Fint *comm, MPI_Fint *eh, MPI_Fint *ierr) { *ierr = PMPI_Errhandler_set(*comm, *eh); }
void oxf_mpi_errhandler_get(MPI_Fint *comm, MPI_Fint *eh, MPI_Fint *ierr) { *ierr = MPI_Errhandler_get(*comm, eh); }
void oxf_pmpi_errhandler_get(MPI_Fint *comm, MPI_Fint *eh, MPI_Fint *ierr) { *ierr = PMPI_Errhandler_get(*comm, eh); }
OXF_NAMES(oxf_mpi_errhandler_create, mpi_errhandler_create, MPI_ERRHANDLER_CREATE)
OXF_NAMES(oxf_pmpi_errhandler_create, pmpi_errhandler_create, PMPI_ERRHANDLER_CREATE)
OXF_NAMES(oxf_mpi_errhandler_set, mpi_errhandler_set, MPI_ERRHANDLER_SET)
OXF_NAMES(oxf_pmpi_errhandler_set, pmpi_errhandler_set, PMPI_ERRHANDLER_SET)
OXF_NAMES(oxf_mpi_errhandler_get, mpi_errhandler_get, MPI_ERRHANDLER_GET)
OXF_NAMES(oxf_pmpi_errhandler_get, pmpi_errhandler_get, PMPI_ERRHANDLER_GET)
