/* oxmpi-test: ranks=1,2,4
 * Attribute caching with copy and delete callbacks (on dup, free, set
 * and delete; the predefined callbacks and the MPI-1 names; datatype
 * attributes), info objects and MPI_INFO_ENV, communicator hints, user
 * error handlers (called, inherited by dup), MPI_Comm_call_errhandler,
 * and user error classes, codes and strings. A failing delete callback
 * leaves its attribute, a failing copy callback fails the dup; MPI_Finalize
 * deletes MPI_COMM_SELF's attributes first, the last set first. */
#include "common.h"

static int copies, deletes;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k;
    copies++;
    *(void **)out = (void *)((char *)in + *(int *)extra);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c; (void)k; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* fails while `refuse` is set */
static int refuse;
static int refusing_delete(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c; (void)k; (void)val; (void)extra;
    return refuse ? MPI_ERR_OTHER : MPI_SUCCESS;
}
static int refusing_copy(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return MPI_ERR_OTHER;
}

/* MPI_COMM_SELF's attributes, deleted at MPI_Finalize: the order seen */
static int finalized_order[3], finalized_n;
static int at_finalize(MPI_Comm c, int k, void *val, void *extra)
{
    (void)k; (void)extra;
    int inited = 0;
    MPI_Initialized(&inited);
    if (c == MPI_COMM_SELF && finalized_n < 3 && inited)
        finalized_order[finalized_n++] = (int)(MPI_Aint)val;
    return MPI_SUCCESS;
}

static int handler_calls, last_code;
static void handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    handler_calls++;
    last_code = *code;
}

int main(int argc, char **argv)
{
    int rank, flag;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* attributes */
    int step = 10, key, key_dup, key_none;
    MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &step);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_none, NULL);
    static char base[64];
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_attr(c1, key, base);
    MPI_Comm_set_attr(c1, key_dup, base + 1);
    MPI_Comm_set_attr(c1, key_none, base + 2);
    void *v;
    MPI_Comm_get_attr(c1, key, &v, &flag);
    CHECK(flag && v == base, "get_attr");
    MPI_Comm_dup(c1, &c2);
    CHECK(copies == 1, "copy callback ran %d times", copies);
    MPI_Comm_get_attr(c2, key, &v, &flag);
    CHECK(flag && v == base + 10, "copied attribute went through the callback");
    MPI_Comm_get_attr(c2, key_dup, &v, &flag);
    CHECK(flag && v == base + 1, "MPI_COMM_DUP_FN copies the value");
    MPI_Comm_get_attr(c2, key_none, &v, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    MPI_Comm_set_attr(c2, key, base + 5); /* replacing deletes the old value */
    CHECK(deletes == 1, "replace ran delete %d times", deletes);
    MPI_Comm_delete_attr(c2, key);
    CHECK(deletes == 2, "delete_attr ran delete %d times", deletes);
    MPI_Comm_get_attr(c2, key, &v, &flag);
    CHECK(!flag, "deleted attribute is gone");
    MPI_Comm_free(&c2);
    MPI_Comm_free(&c1);
    CHECK(deletes == 3, "free ran delete for the remaining attribute: %d", deletes);
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "freed keyval");
    /* MPI-1 names */
    int old_key;
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &old_key, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, old_key, base);
    MPI_Attr_get(MPI_COMM_WORLD, old_key, &v, &flag);
    CHECK(flag && v == base, "MPI_Attr_get");
    MPI_Attr_delete(MPI_COMM_WORLD, old_key);
    MPI_Keyval_free(&old_key);
    /* predefined attributes still answer */
    int *tag_ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
    /* datatype attributes, copied by MPI_Type_dup */
    int tkey;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
    MPI_Datatype t, t2;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_set_attr(t, tkey, base + 3);
    MPI_Type_dup(t, &t2);
    MPI_Type_get_attr(t2, tkey, &v, &flag);
    CHECK(flag && v == base + 3, "datatype attribute copied by Type_dup");
    MPI_Type_delete_attr(t2, tkey);
    MPI_Type_get_attr(t2, tkey, &v, &flag);
    CHECK(!flag, "datatype attribute deleted");
    MPI_Type_free(&t);
    MPI_Type_free(&t2);
    MPI_Type_free_keyval(&tkey);

    /* info */
    MPI_Info info, info2;
    char val[MPI_MAX_INFO_VAL + 1], keyname[MPI_MAX_INFO_KEY + 1];
    int nkeys, len;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "two");
    MPI_Info_set(info, "alpha", "one");
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 2, "nkeys %d", nkeys);
    MPI_Info_get_nthkey(info, 1, keyname);
    CHECK(strcmp(keyname, "beta") == 0, "nthkey %s", keyname);
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strcmp(val, "one") == 0, "info get %s", val);
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag && len == 3, "valuelen %d", len);
    int buflen = 2;
    MPI_Info_get_string(info, "beta", &buflen, val, &flag);
    CHECK(flag && buflen == 4 && strcmp(val, "t") == 0, "get_string truncates and says how much is needed: %d '%s'", buflen, val);
    MPI_Info_dup(info, &info2);
    MPI_Info_delete(info, "beta");
    MPI_Info_get(info2, "beta", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag, "dup is independent");
    MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(!flag, "deleted key");
    MPI_Comm_set_info(MPI_COMM_WORLD, info2);
    MPI_Info used;
    MPI_Comm_get_info(MPI_COMM_WORLD, &used);
    MPI_Info_get(used, "beta", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strcmp(val, "two") == 0, "communicator hints");
    MPI_Info_free(&used);
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(flag && atoi(val) == size, "MPI_INFO_ENV maxprocs %s", val);
    MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strstr(val, "attr_info_errhandler") != NULL, "MPI_INFO_ENV command %s", val);
    MPI_Info env;
    MPI_Info_create_env(argc, argv, &env);
    MPI_Info_get_nkeys(env, &nkeys);
    CHECK(nkeys >= 3, "Info_create_env keys %d", nkeys);
    MPI_Info_free(&env);
    MPI_Info_free(&info2);

    /* user error handlers */
    MPI_Errhandler eh, got;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_set_errhandler(c1, eh);
    MPI_Comm_dup(c1, &c2);
    MPI_Comm_get_errhandler(c2, &got);
    CHECK(got == eh, "dup inherits the error handler");
    int x = 0, rc = MPI_Send(&x, 1, MPI_INT, 99999, 0, c2);
    CHECK(handler_calls == 1 && last_code == rc && rc != MPI_SUCCESS, "user handler called %d times, code %d", handler_calls, last_code);
    MPI_Comm_call_errhandler(c1, MPI_ERR_OTHER);
    CHECK(handler_calls == 2 && last_code == MPI_ERR_OTHER, "call_errhandler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&c2);
    MPI_Comm_free(&c1);

    /* user error classes, codes and strings */
    int cls, code, back, lastused, *lu;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "my special failure");
    MPI_Error_class(code, &back);
    CHECK(back == cls, "class of the new code %d", back);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_Error_string(code, msg, &len);
    CHECK(strcmp(msg, "my special failure") == 0, "error string '%s'", msg);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lu, &flag);
    lastused = *lu;
    CHECK(flag && lastused >= code, "MPI_LASTUSEDCODE %d", lastused);
    /* MPI 4.0 §9.5: never below MPI_ERR_LASTCODE, whose value is a constant */
    CHECK(lastused >= MPI_ERR_LASTCODE && cls > MPI_ERR_LASTCODE && code > MPI_ERR_LASTCODE,
          "MPI_LASTUSEDCODE %d, new class %d and code %d against MPI_ERR_LASTCODE %d", lastused, cls, code, MPI_ERR_LASTCODE);

    /* bad input */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#define EXPECT(call, c) do { rc = (call); MPI_Error_class(rc, &back); CHECK(back == (c), "%s gave class %d, expected %d", #call, back, c); } while (0)
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, 12345, base), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Info_get(info, "", MPI_MAX_INFO_VAL, val, &flag), MPI_ERR_INFO_KEY);
    EXPECT(MPI_Info_delete(info, "nothere"), MPI_ERR_INFO_NOKEY);
    EXPECT(MPI_Info_get_nthkey(info, 5, keyname), MPI_ERR_ARG);
    EXPECT(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO);
    EXPECT(MPI_Add_error_code(12345, &code), MPI_ERR_ARG);

    /* a failing delete callback leaves the attribute; a failing copy
     * callback fails the dup */
    MPI_Comm dupw, d2;
    int key_refuse, key_nocopy;
    MPI_Comm_dup(MPI_COMM_WORLD, &dupw);
    MPI_Comm_set_errhandler(dupw, MPI_ERRORS_RETURN);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refusing_delete, &key_refuse, NULL);
    MPI_Comm_set_attr(dupw, key_refuse, (void *)1);
    refuse = 1;
    CHECK(MPI_Comm_set_attr(dupw, key_refuse, (void *)2) != MPI_SUCCESS, "replacing: the delete callback failed");
    CHECK(MPI_Comm_delete_attr(dupw, key_refuse) != MPI_SUCCESS, "deleting: the delete callback failed");
    MPI_Comm_get_attr(dupw, key_refuse, &v, &flag);
    CHECK(flag && v == (void *)1, "a failed delete removed the attribute (flag %d)", flag);
    refuse = 0;
    MPI_Comm_delete_attr(dupw, key_refuse);
    MPI_Comm_get_attr(dupw, key_refuse, &v, &flag);
    CHECK(!flag, "deleted once the callback agreed");
    MPI_Comm_create_keyval(refusing_copy, MPI_COMM_NULL_DELETE_FN, &key_nocopy, NULL);
    MPI_Comm_set_attr(dupw, key_nocopy, (void *)3);
    CHECK(MPI_Comm_dup(dupw, &d2) != MPI_SUCCESS, "the copy callback failed, the dup did not");
    /* a keyval freed while an attribute uses it lives on for that
     * attribute: a saved copy of the handle still gets and deletes it,
     * but takes no new attribute; gone once the attribute is */
    int key_saved, key_copy;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key_saved, NULL);
    key_copy = key_saved;
    MPI_Comm_set_attr(dupw, key_saved, (void *)5);
    MPI_Comm_free_keyval(&key_saved);
    CHECK(key_saved == MPI_KEYVAL_INVALID, "freed keyval handle");
    CHECK(MPI_Comm_get_attr(dupw, key_copy, &v, &flag) == MPI_SUCCESS && flag && v == (void *)5,
          "the attribute of a freed keyval");
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, key_copy, (void *)6) != MPI_SUCCESS, "a freed keyval took a new attribute");
    CHECK(MPI_Comm_delete_attr(dupw, key_copy) == MPI_SUCCESS, "deleting the attribute of a freed keyval");
    CHECK(MPI_Comm_get_attr(dupw, key_copy, &v, &flag) != MPI_SUCCESS, "the keyval outlived its last attribute");
    MPI_Comm_free(&dupw);
    MPI_Comm_free_keyval(&key_refuse);
    MPI_Comm_free_keyval(&key_nocopy);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Info_free(&info);
    MPI_Comm_free_keyval(&key_dup);
    MPI_Comm_free_keyval(&key_none);

    /* three attributes on MPI_COMM_SELF: MPI_Finalize deletes them, the
     * last set first, while MPI is still initialized */
    int key_fin;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key_fin, NULL);
    int key_fin2, key_fin3;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key_fin2, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key_fin3, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, key_fin2, (void *)1);
    MPI_Comm_set_attr(MPI_COMM_SELF, key_fin, (void *)2);
    MPI_Comm_set_attr(MPI_COMM_SELF, key_fin3, (void *)3);
    int rc2 = finish();
    if (finalized_n != 3 || finalized_order[0] != 3 || finalized_order[1] != 2 || finalized_order[2] != 1) {
        printf("MPI_Finalize deleted MPI_COMM_SELF's attributes as %d: %d %d %d, not 3 2 1\n", finalized_n,
               finalized_order[0], finalized_order[1], finalized_order[2]);
        rc2 = 1;
    }
    return rc2;
}
