//! Info objects (MPI 4.0 §10): ordered (key, value) string pairs. They
//! are local to the process and only the C interface uses them, so they
//! live here, in a table of their own, which every MPI_Info_* call may use
//! before MPI_Init and after MPI_Finalize as well (MPI 4.0 allows it:
//! MPI_Info_create_env exists to be called first).
//! MPI_INFO_ENV describes how the program was started.

use super::env::write_c_string;
use super::{mpi_fn, out, with_state};
use crate::err;
use crate::error::MpiResult;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

pub const INFO_NULL: c_int = 0x1c000000;
pub const INFO_ENV: c_int = 0x5c000001;
const INFO_DIRECT: u32 = 0x9c00_0000;
const MAX_KEY: usize = 255;
const MAX_VAL: usize = 1024;

type Pairs = Vec<(String, String)>;

static INFOS: Mutex<Vec<Option<Pairs>>> = Mutex::new(Vec::new());

fn table() -> std::sync::MutexGuard<'static, Vec<Option<Pairs>>> {
    INFOS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The pairs of MPI_INFO_ENV: the command, its arguments, the job size,
/// the working directory and the thread level.
fn env_pairs() -> Pairs {
    let args: Vec<String> = std::env::args().collect();
    let mut v = vec![("command".to_string(), args.first().cloned().unwrap_or_default())];
    if args.len() > 1 {
        v.push(("argv".into(), args[1..].join(" ")));
    }
    // before MPI_Init (MPI_Info_create_env may come first): the
    // launcher's count
    let launched = || std::env::var("PMI_SIZE").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let size = with_state(|st| Ok(st.world().size())).unwrap_or_else(|_| launched());
    v.push(("maxprocs".into(), size.to_string()));
    if let Ok(d) = std::env::current_dir() {
        v.push(("wdir".into(), d.display().to_string()));
    }
    let level = with_state(|st| Ok(st.thread_level)).unwrap_or(0);
    let name = ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"]
        [level.clamp(0, 3) as usize];
    v.push(("thread_level".into(), name.into()));
    v
}

/// Run `f` on the pairs of an info handle.
fn with_info<T>(h: c_int, f: impl FnOnce(&mut Pairs) -> MpiResult<T>) -> MpiResult<T> {
    if h == INFO_ENV {
        return f(&mut env_pairs());
    }
    if h == INFO_NULL {
        return err!(Info, "the info object is MPI_INFO_NULL");
    }
    if (h as u32) & 0xfc00_0000 != INFO_DIRECT {
        return err!(Info, "invalid info handle 0x{h:08x}");
    }
    let mut t = table();
    match t.get_mut((h as u32 & 0x03ff_ffff) as usize) {
        Some(Some(p)) => f(p),
        Some(None) => err!(Info, "info 0x{h:08x} was freed (MPI_Info_free)"),
        None => err!(Info, "invalid info handle 0x{h:08x}"),
    }
}

/// Register pairs as a new info object; its handle.
pub fn new_info(p: Pairs) -> c_int {
    let mut t = table();
    let i = match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = Some(p);
            i
        }
        None => {
            t.push(Some(p));
            t.len() - 1
        }
    };
    (INFO_DIRECT | i as u32) as c_int
}

/// The pairs of an info handle (MPI_INFO_NULL: none).
pub fn pairs(h: c_int) -> MpiResult<Pairs> {
    if h == INFO_NULL {
        return Ok(vec![]);
    }
    with_info(h, |p| Ok(p.clone()))
}

/// Set `key` to `value` in the info object `h` (the library's own
/// output into a caller's info, as MPI_Comm_split_type's).
pub fn set_pair(h: c_int, key: &str, value: &str) -> MpiResult<()> {
    with_info(h, |p| {
        match p.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value.to_string(),
            None => p.push((key.to_string(), value.to_string())),
        }
        Ok(())
    })
}

fn key(k: *const c_char) -> MpiResult<String> {
    if k.is_null() {
        return err!(InfoKey, "the key is a null pointer");
    }
    // SAFETY: a C string per the standard.
    let s = unsafe { CStr::from_ptr(k) }.to_string_lossy().into_owned();
    if s.is_empty() || s.len() > MAX_KEY {
        return err!(InfoKey, "info key {s:?} must have 1 to {MAX_KEY} characters (MPI_MAX_INFO_KEY)");
    }
    Ok(s)
}

mpi_fn! {
    Always fn MPI_Info_create / PMPI_Info_create(info: *mut c_int) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(info, "info", new_info(vec![])) }
    }
}

mpi_fn! {
    Always fn MPI_Info_create_env / PMPI_Info_create_env(_argc: c_int, _argv: *mut *mut c_char, info: *mut c_int) errors(None) {
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(info, "info", new_info(env_pairs())) }
    }
}

mpi_fn! {
    Always fn MPI_Info_set / PMPI_Info_set(info: c_int, k: *const c_char, value: *const c_char) errors(None) {
        let k = key(k)?;
        if value.is_null() {
            return err!(InfoValue, "the value is a null pointer");
        }
        // SAFETY: a C string per the standard.
        let v = unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned();
        if v.len() > MAX_VAL {
            return err!(InfoValue, "info value for {k:?} has {} characters, more than MPI_MAX_INFO_VAL ({MAX_VAL})", v.len());
        }
        if info == INFO_ENV {
            return err!(Info, "MPI_INFO_ENV cannot be changed");
        }
        set_pair(info, &k, &v)
    }
}

mpi_fn! {
    Always fn MPI_Info_delete / PMPI_Info_delete(info: c_int, k: *const c_char) errors(None) {
        let k = key(k)?;
        if info == INFO_ENV {
            return err!(Info, "MPI_INFO_ENV cannot be changed");
        }
        with_info(info, |p| match p.iter().position(|(pk, _)| *pk == k) {
            Some(i) => {
                p.remove(i);
                Ok(())
            }
            None => err!(InfoNoKey, "info key {k:?} is not set"),
        })
    }
}

/// Look a key up: Some(value) or None.
fn lookup(info: c_int, k: *const c_char) -> MpiResult<Option<String>> {
    let k = key(k)?;
    with_info(info, |p| Ok(p.iter().find(|(pk, _)| *pk == k).map(|(_, v)| v.clone())))
}

mpi_fn! {
    Always fn MPI_Info_get / PMPI_Info_get(info: c_int, k: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) errors(None) {
        let v = lookup(info, k)?;
        if flag.is_null() || (v.is_some() && value.is_null()) || valuelen < 0 {
            return err!(Arg, "flag and value must not be null pointers, valuelen not negative");
        }
        // SAFETY: `valuelen + 1` bytes per the standard (checked non-null).
        unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                write_c_string(value, valuelen as usize + 1, &v);
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Always fn MPI_Info_get_string / PMPI_Info_get_string(info: c_int, k: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) errors(None) {
        let v = lookup(info, k)?;
        if flag.is_null() || buflen.is_null() {
            return err!(Arg, "buflen and flag must not be null pointers");
        }
        // SAFETY: checked non-null; `*buflen` bytes at `value` per the standard.
        unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                let room = *buflen;
                if room > 0 && !value.is_null() {
                    write_c_string(value, room as usize, &v);
                }
                // the size needed, terminator included
                *buflen = v.len() as c_int + 1;
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Always fn MPI_Info_get_valuelen / PMPI_Info_get_valuelen(info: c_int, k: *const c_char, valuelen: *mut c_int, flag: *mut c_int) errors(None) {
        let v = lookup(info, k)?;
        if flag.is_null() || valuelen.is_null() {
            return err!(Arg, "valuelen and flag must not be null pointers");
        }
        // SAFETY: checked non-null.
        unsafe {
            *flag = v.is_some() as c_int;
            if let Some(v) = v {
                *valuelen = v.len() as c_int;
            }
        }
        Ok(())
    }
}

mpi_fn! {
    Always fn MPI_Info_get_nkeys / PMPI_Info_get_nkeys(info: c_int, nkeys: *mut c_int) errors(None) {
        let n = with_info(info, |p| Ok(p.len()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(nkeys, "nkeys", n as c_int) }
    }
}

mpi_fn! {
    Always fn MPI_Info_get_nthkey / PMPI_Info_get_nthkey(info: c_int, n: c_int, k: *mut c_char) errors(None) {
        let name = with_info(info, |p| match p.get(n.max(0) as usize) {
            Some((k, _)) if n >= 0 => Ok(k.clone()),
            _ => err!(Arg, "key number {n} is out of range: the info has {} keys", p.len()),
        })?;
        if k.is_null() {
            return err!(Arg, "key is a null pointer");
        }
        // SAFETY: MPI_MAX_INFO_KEY + 1 bytes per the standard.
        unsafe { write_c_string(k, MAX_KEY + 1, &name) };
        Ok(())
    }
}

mpi_fn! {
    Always fn MPI_Info_dup / PMPI_Info_dup(info: c_int, newinfo: *mut c_int) errors(None) {
        let p = with_info(info, |p| Ok(p.clone()))?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(newinfo, "newinfo", new_info(p)) }
    }
}

mpi_fn! {
    Always fn MPI_Info_free / PMPI_Info_free(info: *mut c_int) errors(None) {
        if info.is_null() {
            return err!(Arg, "info is a null pointer");
        }
        // SAFETY: checked non-null.
        let h = unsafe { *info };
        if h == INFO_ENV {
            return err!(Info, "MPI_INFO_ENV cannot be freed");
        }
        with_info(h, |_| Ok(()))?;
        table()[(h as u32 & 0x03ff_ffff) as usize] = None;
        // SAFETY: checked non-null.
        unsafe { *info = INFO_NULL };
        Ok(())
    }
}
