//! Attribute caching (MPI 4.0 §7.7): keyvals with their copy and delete
//! callbacks, values attached to communicators and datatypes, and the
//! predefined communicator attributes. Callbacks are C function pointers
//! and values opaque C pointers, so all of it lives here at the boundary;
//! no lock is held while a callback runs (it may call MPI).

use super::handles;
use super::{mpi_fn, out, with_state};
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// What a keyval's attributes attach to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Comm,
    Type,
}

type CopyFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

#[derive(Clone, Copy)]
struct Keyval {
    kind: Kind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    extra: usize,
    freed: bool,
}

#[derive(Default)]
struct Attrs {
    keyvals: Vec<Keyval>,
    /// Per object: (keyval, value) in the order they were set.
    values: HashMap<(Kind, c_int), Vec<(c_int, usize)>>,
}

static ATTRS: Mutex<Option<Attrs>> = Mutex::new(None);

fn with_attrs<T>(f: impl FnOnce(&mut Attrs) -> T) -> T {
    let mut g = ATTRS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Attrs::default))
}

pub const KEYVAL_INVALID: c_int = 0x24000000;
const KEYVAL_DIRECT: u32 = 0xa400_0000;

fn keyval_index(k: c_int) -> Option<usize> {
    ((k as u32) & 0xfc00_0000 == KEYVAL_DIRECT).then_some((k as u32 & 0x03ff_ffff) as usize)
}

/// Keyval `k` for `kind`'s attributes. One the program freed lives on
/// while attributes still use it (MPI 4.0 §7.7.2: the actual free waits
/// for them): their delete callbacks, or the program's saved copy of the
/// handle, may still get, delete, or free it again (as MPICH counts it).
fn keyval(k: c_int, kind: Kind) -> MpiResult<Keyval> {
    let found = keyval_index(k).and_then(|i| with_attrs(|a| a.keyvals.get(i).copied()));
    let in_use = || with_attrs(|a| a.values.values().any(|l| l.iter().any(|(kk, _)| *kk == k)));
    match found {
        Some(kv) if kv.freed && !in_use() => err!(Keyval, "keyval 0x{k:08x} was freed"),
        Some(kv) if kv.kind != kind => err!(Keyval, "keyval 0x{k:08x} is for {:?} attributes, not {kind:?}", kv.kind),
        Some(kv) => Ok(kv),
        None if k == KEYVAL_INVALID => err!(Keyval, "the keyval is MPI_KEYVAL_INVALID"),
        None => err!(Keyval, "invalid keyval 0x{k:08x}"),
    }
}

/// A callback's non-zero return becomes the call's error.
fn check_callback(rc: c_int, what: &str) -> MpiResult<()> {
    if rc == 0 {
        return Ok(());
    }
    Err(MpiError::new(ErrorClass::Other, format!("the attribute {what} callback returned error {rc}")))
}

fn create_keyval(
    kind: Kind,
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    keyval: *mut c_int,
    extra: *mut c_void,
) -> MpiResult<()> {
    let i = with_attrs(|a| {
        a.keyvals.push(Keyval { kind, copy, delete, extra: extra as usize, freed: false });
        a.keyvals.len() - 1
    });
    // SAFETY: valid per the standard (checked non-null).
    unsafe { out(keyval, "keyval", (KEYVAL_DIRECT | i as u32) as c_int) }
}

fn free_keyval(kind: Kind, k: *mut c_int) -> MpiResult<()> {
    if k.is_null() {
        return err!(Arg, "keyval is a null pointer");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *k };
    keyval(h, kind)?;
    with_attrs(|a| a.keyvals[keyval_index(h).unwrap()].freed = true);
    // SAFETY: checked non-null.
    unsafe { *k = KEYVAL_INVALID };
    Ok(())
}

/// Delete attribute `k` of `obj`, if set: its delete callback first, and
/// the attribute stays when that fails (the error is the caller's, as in
/// MPICH: a failed delete leaves what it could not delete).
fn delete_one(kind: Kind, obj: c_int, k: c_int) -> MpiResult<()> {
    let kv = with_attrs(|a| a.keyvals.get(keyval_index(k)?).copied());
    let value =
        with_attrs(|a| a.values.get(&(kind, obj)).and_then(|l| l.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v)));
    let Some(v) = value else {
        return Ok(());
    };
    if let Some(Keyval { delete: Some(f), extra, .. }) = kv {
        // SAFETY: a user callback with the standard's signature.
        check_callback(unsafe { f(obj, k, v as *mut c_void, extra as *mut c_void) }, "delete")?;
    }
    with_attrs(|a| {
        if let Some(list) = a.values.get_mut(&(kind, obj)) {
            list.retain(|(kk, _)| *kk != k);
        }
    });
    Ok(())
}

fn set_attr(kind: Kind, obj: c_int, k: c_int, value: *mut c_void) -> MpiResult<()> {
    if keyval(k, kind)?.freed {
        return err!(Keyval, "keyval 0x{k:08x} was freed: it takes no new attributes");
    }
    delete_one(kind, obj, k)?;
    with_attrs(|a| a.values.entry((kind, obj)).or_default().push((k, value as usize)));
    Ok(())
}

fn get_attr(kind: Kind, obj: c_int, k: c_int) -> MpiResult<Option<usize>> {
    keyval(k, kind)?;
    Ok(with_attrs(|a| a.values.get(&(kind, obj)).and_then(|l| l.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v))))
}

/// On MPI_Comm_dup / MPI_Type_dup: offer every attribute of `from` to its
/// copy callback and attach the copies it makes to `to`.
pub fn copy_all(kind: Kind, from: c_int, to: c_int) -> MpiResult<()> {
    let list = with_attrs(|a| a.values.get(&(kind, from)).cloned().unwrap_or_default());
    for (k, v) in list {
        let Some(kv) = with_attrs(|a| a.keyvals.get(keyval_index(k)?).copied()) else { continue };
        let Some(copy) = kv.copy else { continue };
        let mut out_val: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: a user (or predefined) callback with the standard's
        // signature; the out pointers are valid locals.
        let rc = unsafe {
            copy(from, k, kv.extra as *mut c_void, v as *mut c_void, &mut out_val as *mut _ as *mut c_void, &mut flag)
        };
        check_callback(rc, "copy")?;
        if flag != 0 {
            with_attrs(|a| a.values.entry((kind, to)).or_default().push((k, out_val as usize)));
        }
    }
    Ok(())
}

/// On MPI_Comm_free / MPI_Type_free, and for MPI_COMM_SELF first thing in
/// MPI_Finalize: delete every attribute of `obj`, the last set first
/// (the standard asks that order of MPI_Finalize, where libraries hang
/// their clean-up on MPI_COMM_SELF: "Allowing User Functions at Process
/// Termination").
pub fn delete_all(kind: Kind, obj: c_int) -> MpiResult<()> {
    let keys: Vec<c_int> =
        with_attrs(|a| a.values.get(&(kind, obj)).map(|l| l.iter().map(|(k, _)| *k).collect()).unwrap_or_default());
    for k in keys.into_iter().rev() {
        delete_one(kind, obj, k)?;
    }
    with_attrs(|a| a.values.remove(&(kind, obj)));
    Ok(())
}

/// The largest error code or class in use (MPI_LASTUSEDCODE): the
/// program's own, numbered on from MPI_ERR_LASTCODE.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(super::env::ERR_LASTCODE);

/// Storage of the predefined attributes' values: C callers receive
/// pointers to these.
static TAG_UB_VALUE: AtomicI32 = AtomicI32::new(super::env::TAG_UB);
static HOST_VALUE: AtomicI32 = AtomicI32::new(-1);
static IO_VALUE: AtomicI32 = AtomicI32::new(-2);
static WTIME_IS_GLOBAL_VALUE: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE_VALUE: AtomicI32 = AtomicI32::new(1);
static APPNUM_VALUE: AtomicI32 = AtomicI32::new(0);

fn predefined(keyval: c_int, world_size: usize) -> Option<&'static AtomicI32> {
    Some(match keyval {
        0x64400001 => &TAG_UB_VALUE,
        0x64400003 => &HOST_VALUE,
        0x64400005 => &IO_VALUE,
        0x64400007 => &WTIME_IS_GLOBAL_VALUE,
        0x64400009 => {
            UNIVERSE_SIZE_VALUE.store(world_size as i32, Ordering::Relaxed);
            &UNIVERSE_SIZE_VALUE
        }
        0x6440000b => &LAST_USED_CODE,
        0x6440000d => &APPNUM_VALUE,
        _ => return None,
    })
}

/// Write a found attribute (C: `*(void **)attribute_val = value`).
///
/// # Safety
/// `attribute_val` and `flag` valid per the standard (checked non-null).
unsafe fn give(attribute_val: *mut c_void, flag: *mut c_int, v: Option<usize>) -> MpiResult<()> {
    if attribute_val.is_null() || flag.is_null() {
        return err!(Arg, "attribute_val and flag must not be null pointers");
    }
    // SAFETY: per the caller's contract.
    unsafe {
        *flag = v.is_some() as c_int;
        if let Some(v) = v {
            *(attribute_val as *mut usize) = v;
        }
    }
    Ok(())
}

fn comm_get(comm: c_int, k: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> MpiResult<()> {
    let size = with_state(|st| handles::comm(st, comm).map(|_| st.world().size()))?;
    let v = match predefined(k, size) {
        Some(cell) => Some(cell as *const AtomicI32 as usize),
        None => get_attr(Kind::Comm, comm, k)?,
    };
    // SAFETY: valid per the standard.
    unsafe { give(attribute_val, flag, v) }
}

fn comm_set(comm: c_int, k: c_int, value: *mut c_void) -> MpiResult<()> {
    with_state(|st| handles::comm(st, comm).map(|_| ()))?;
    if predefined(k, 0).is_some() {
        return err!(Keyval, "predefined attribute 0x{k:08x} cannot be set");
    }
    set_attr(Kind::Comm, comm, k, value)
}

fn comm_delete(comm: c_int, k: c_int) -> MpiResult<()> {
    with_state(|st| handles::comm(st, comm).map(|_| ()))?;
    keyval(k, Kind::Comm)?;
    delete_one(Kind::Comm, comm, k)
}

mpi_fn! {
    Initialized fn MPI_Comm_create_keyval / PMPI_Comm_create_keyval(copy_fn: Option<CopyFn>, delete_fn: Option<DeleteFn>, comm_keyval: *mut c_int, extra_state: *mut c_void) errors(None) {
        create_keyval(Kind::Comm, copy_fn, delete_fn, comm_keyval, extra_state)
    }
}
mpi_fn! {
    Initialized fn MPI_Keyval_create / PMPI_Keyval_create(copy_fn: Option<CopyFn>, delete_fn: Option<DeleteFn>, keyval: *mut c_int, extra_state: *mut c_void) errors(None) {
        create_keyval(Kind::Comm, copy_fn, delete_fn, keyval, extra_state)
    }
}
mpi_fn! {
    Initialized fn MPI_Comm_free_keyval / PMPI_Comm_free_keyval(comm_keyval: *mut c_int) errors(None) {
        free_keyval(Kind::Comm, comm_keyval)
    }
}
mpi_fn! {
    Initialized fn MPI_Keyval_free / PMPI_Keyval_free(keyval: *mut c_int) errors(None) {
        free_keyval(Kind::Comm, keyval)
    }
}
mpi_fn! {
    Initialized fn MPI_Comm_set_attr / PMPI_Comm_set_attr(comm: c_int, comm_keyval: c_int, attribute_val: *mut c_void) errors(Some(comm)) {
        comm_set(comm, comm_keyval, attribute_val)
    }
}
mpi_fn! {
    Initialized fn MPI_Attr_put / PMPI_Attr_put(comm: c_int, keyval: c_int, attribute_val: *mut c_void) errors(Some(comm)) {
        comm_set(comm, keyval, attribute_val)
    }
}
mpi_fn! {
    Initialized fn MPI_Comm_get_attr / PMPI_Comm_get_attr(comm: c_int, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) errors(Some(comm)) {
        comm_get(comm, comm_keyval, attribute_val, flag)
    }
}
mpi_fn! {
    Initialized fn MPI_Attr_get / PMPI_Attr_get(comm: c_int, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) errors(Some(comm)) {
        comm_get(comm, keyval, attribute_val, flag)
    }
}
mpi_fn! {
    Initialized fn MPI_Comm_delete_attr / PMPI_Comm_delete_attr(comm: c_int, comm_keyval: c_int) errors(Some(comm)) {
        comm_delete(comm, comm_keyval)
    }
}
mpi_fn! {
    Initialized fn MPI_Attr_delete / PMPI_Attr_delete(comm: c_int, keyval: c_int) errors(Some(comm)) {
        comm_delete(comm, keyval)
    }
}

mpi_fn! {
    Initialized fn MPI_Type_create_keyval / PMPI_Type_create_keyval(type_copy_attr_fn: Option<CopyFn>, type_delete_attr_fn: Option<DeleteFn>, type_keyval: *mut c_int, extra_state: *mut c_void) errors(None) {
        create_keyval(Kind::Type, type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_free_keyval / PMPI_Type_free_keyval(type_keyval: *mut c_int) errors(None) {
        free_keyval(Kind::Type, type_keyval)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_set_attr / PMPI_Type_set_attr(datatype: c_int, type_keyval: c_int, attribute_val: *mut c_void) errors(None) {
        handles::datatype(datatype)?;
        set_attr(Kind::Type, datatype, type_keyval, attribute_val)
    }
}
mpi_fn! {
    Initialized fn MPI_Type_get_attr / PMPI_Type_get_attr(datatype: c_int, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) errors(None) {
        handles::datatype(datatype)?;
        let v = get_attr(Kind::Type, datatype, type_keyval)?;
        // SAFETY: valid per the standard.
        unsafe { give(attribute_val, flag, v) }
    }
}
mpi_fn! {
    Initialized fn MPI_Type_delete_attr / PMPI_Type_delete_attr(datatype: c_int, type_keyval: c_int) errors(None) {
        handles::datatype(datatype)?;
        keyval(type_keyval, Kind::Type)?;
        delete_one(Kind::Type, datatype, type_keyval)
    }
}
