//! Error handlers and error codes: the predefined handlers, user handlers
//! (MPI_Comm_create_errhandler), calling them, and user error classes,
//! codes and strings (MPI_Add_error_*).

use super::attr::LAST_USED_CODE;
use super::env::{write_c_string, LAST_CODE, MAX_ERROR_STRING};
use super::handles::{self, ERRHANDLER_NULL, ERRORS_ABORT, ERRORS_ARE_FATAL, ERRORS_RETURN};
use super::{mpi_fn, out, with_state};
use crate::comm::ErrorMode;
use crate::err;
use crate::error::MpiResult;
use std::collections::HashMap;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// A user error handler: `void handler(MPI_Comm *, int *, ...)`.
type HandlerFn = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

const ERRHANDLER_DIRECT: u32 = 0x9400_0000;

#[derive(Default)]
struct Registry {
    handlers: Vec<HandlerFn>,
    /// User error code -> its class (user classes map to themselves).
    classes: HashMap<c_int, c_int>,
    strings: HashMap<c_int, String>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    let mut g = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Registry::default))
}

fn mode(h: c_int) -> MpiResult<ErrorMode> {
    match h {
        ERRORS_ARE_FATAL => Ok(ErrorMode::Fatal),
        ERRORS_RETURN => Ok(ErrorMode::Return),
        ERRORS_ABORT => Ok(ErrorMode::Abort),
        ERRHANDLER_NULL => err!(Arg, "the error handler is MPI_ERRHANDLER_NULL"),
        _ if (h as u32) & 0xfc00_0000 == ERRHANDLER_DIRECT => {
            let i = h as u32 & 0x03ff_ffff;
            if with_registry(|r| (i as usize) < r.handlers.len()) {
                Ok(ErrorMode::User(i))
            } else {
                err!(Arg, "invalid error handler handle 0x{h:08x}")
            }
        }
        _ => err!(Arg, "invalid error handler handle 0x{h:08x}"),
    }
}

fn handle(m: ErrorMode) -> c_int {
    match m {
        ErrorMode::Fatal => ERRORS_ARE_FATAL,
        ErrorMode::Return => ERRORS_RETURN,
        ErrorMode::Abort => ERRORS_ABORT,
        ErrorMode::User(i) => (ERRHANDLER_DIRECT | i) as c_int,
    }
}

/// Call user handler `i` for `comm` with `code`; the code it leaves.
pub fn call_user(i: u32, comm: c_int, code: c_int) -> c_int {
    let Some(f) = with_registry(|r| r.handlers.get(i as usize).copied()) else { return code };
    let (mut c, mut e) = (comm, code);
    // SAFETY: a user handler with the standard's signature; the pointers
    // are valid locals. No lock is held (it may call MPI).
    unsafe { f(&mut c, &mut e) };
    e
}

fn create(function: Option<HandlerFn>, errhandler: *mut c_int) -> MpiResult<()> {
    let Some(f) = function else {
        return err!(Arg, "the error handler function is a null pointer");
    };
    let i = with_registry(|r| {
        r.handlers.push(f);
        r.handlers.len() - 1
    });
    // SAFETY: valid per the standard (checked non-null).
    unsafe { out(errhandler, "errhandler", (ERRHANDLER_DIRECT | i as u32) as c_int) }
}

mpi_fn! {
    Initialized fn MPI_Comm_create_errhandler / PMPI_Comm_create_errhandler(comm_errhandler_fn: Option<HandlerFn>, errhandler: *mut c_int) errors(None) {
        create(comm_errhandler_fn, errhandler)
    }
}

mpi_fn! {
    Initialized fn MPI_Errhandler_create / PMPI_Errhandler_create(function: Option<HandlerFn>, errhandler: *mut c_int) errors(None) {
        create(function, errhandler)
    }
}

fn set(comm: c_int, errhandler: c_int) -> MpiResult<()> {
    let m = mode(errhandler)?;
    with_state(|st| {
        handles::comm_mut(st, comm)?.errors = m;
        Ok(())
    })
}

fn get(comm: c_int, errhandler: *mut c_int) -> MpiResult<()> {
    let m = with_state(|st| Ok(handles::comm(st, comm)?.errors))?;
    // SAFETY: valid per the standard (checked non-null).
    unsafe { out(errhandler, "errhandler", handle(m)) }
}

mpi_fn! {
    Initialized fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler(comm: c_int, errhandler: c_int) errors(Some(comm)) {
        set(comm, errhandler)
    }
}
mpi_fn! {
    Initialized fn MPI_Errhandler_set / PMPI_Errhandler_set(comm: c_int, errhandler: c_int) errors(Some(comm)) {
        set(comm, errhandler)
    }
}
mpi_fn! {
    Initialized fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler(comm: c_int, errhandler: *mut c_int) errors(Some(comm)) {
        get(comm, errhandler)
    }
}
mpi_fn! {
    Initialized fn MPI_Errhandler_get / PMPI_Errhandler_get(comm: c_int, errhandler: *mut c_int) errors(Some(comm)) {
        get(comm, errhandler)
    }
}

mpi_fn! {
    Initialized fn MPI_Errhandler_free / PMPI_Errhandler_free(errhandler: *mut c_int) errors(None) {
        if errhandler.is_null() {
            return err!(Arg, "errhandler is a null pointer");
        }
        // SAFETY: checked non-null; valid per the standard.
        mode(unsafe { *errhandler })?;
        // Handlers stay registered while communicators may use them; the
        // caller's reference is released.
        // SAFETY: as above.
        unsafe { *errhandler = ERRHANDLER_NULL };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_call_errhandler / PMPI_Comm_call_errhandler(comm: c_int, errorcode: c_int) errors(Some(comm)) {
        let m = with_state(|st| Ok(handles::comm(st, comm)?.errors))?;
        match m {
            ErrorMode::Return => Ok(()),
            ErrorMode::User(i) => {
                call_user(i, comm, errorcode);
                Ok(())
            }
            ErrorMode::Fatal | ErrorMode::Abort => {
                let text = error_text(errorcode).unwrap_or_else(|| format!("error code {errorcode}"));
                Err(crate::error::MpiError::new(crate::error::ErrorClass::Other, format!("MPI_Comm_call_errhandler with error {errorcode}: {text}")))
            }
        }
    }
}

/// The class of an error code, predefined or user-defined.
pub fn class_of(code: c_int) -> Option<c_int> {
    if (0..=LAST_CODE).contains(&code) {
        return Some(code);
    }
    with_registry(|r| r.classes.get(&code).copied())
}

fn error_text(code: c_int) -> Option<String> {
    if (0..=LAST_CODE).contains(&code) {
        return Some(crate::error::class_text(code).to_string());
    }
    with_registry(|r| r.classes.contains_key(&code).then(|| r.strings.get(&code).cloned().unwrap_or_default()))
}

mpi_fn! {
    Always fn MPI_Error_string / PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) errors(None) {
        if string.is_null() {
            return err!(Arg, "string is a null pointer");
        }
        let Some(text) = error_text(errorcode) else {
            return err!(Arg, "{errorcode} is not an MPI error code");
        };
        // SAFETY: the standard requires MPI_MAX_ERROR_STRING bytes.
        let n = unsafe { write_c_string(string, MAX_ERROR_STRING, &text) };
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}

mpi_fn! {
    Always fn MPI_Error_class / PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) errors(None) {
        let Some(c) = class_of(errorcode) else {
            return err!(Arg, "{errorcode} is not an MPI error code");
        };
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(errorclass, "errorclass", c) }
    }
}

/// A new error code or class number (after MPI_ERR_LASTCODE).
fn next_code() -> c_int {
    LAST_USED_CODE.fetch_add(1, Ordering::Relaxed) + 1
}

mpi_fn! {
    Initialized fn MPI_Add_error_class / PMPI_Add_error_class(errorclass: *mut c_int) errors(None) {
        let c = next_code();
        with_registry(|r| r.classes.insert(c, c));
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(errorclass, "errorclass", c) }
    }
}

mpi_fn! {
    Initialized fn MPI_Add_error_code / PMPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) errors(None) {
        let is_class = (0..=LAST_CODE).contains(&errorclass) || with_registry(|r| r.classes.get(&errorclass) == Some(&errorclass));
        if !is_class {
            return err!(Arg, "{errorclass} is not an error class");
        }
        let c = next_code();
        with_registry(|r| r.classes.insert(c, errorclass));
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(errorcode, "errorcode", c) }
    }
}

mpi_fn! {
    Initialized fn MPI_Add_error_string / PMPI_Add_error_string(errorcode: c_int, string: *const c_char) errors(None) {
        if string.is_null() {
            return err!(Arg, "string is a null pointer");
        }
        if (0..=LAST_CODE).contains(&errorcode) || class_of(errorcode).is_none() {
            return err!(Arg, "{errorcode} is not a user-defined error code or class");
        }
        // SAFETY: a C string per the standard.
        let s = unsafe { std::ffi::CStr::from_ptr(string) }.to_string_lossy().into_owned();
        if s.len() >= MAX_ERROR_STRING {
            return err!(Arg, "the error string has {} characters; at most {} fit (MPI_MAX_ERROR_STRING)", s.len(), MAX_ERROR_STRING - 1);
        }
        with_registry(|r| r.strings.insert(errorcode, s));
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Remove_error_string / PMPI_Remove_error_string(errorcode: c_int) errors(None) {
        if (0..=LAST_CODE).contains(&errorcode) || class_of(errorcode).is_none() {
            return err!(Arg, "{errorcode} is not a user-defined error code or class");
        }
        match with_registry(|r| r.strings.remove(&errorcode)) {
            Some(_) => Ok(()),
            None => err!(Arg, "error code {errorcode} has no string to remove (MPI_Add_error_string gives one)"),
        }
    }
}

mpi_fn! {
    Initialized fn MPI_Remove_error_code / PMPI_Remove_error_code(errorcode: c_int) errors(None) {
        let (is_code, named) = with_registry(|r| {
            (r.classes.get(&errorcode).is_some_and(|&c| c != errorcode), r.strings.contains_key(&errorcode))
        });
        if !is_code {
            return err!(Arg, "{errorcode} is not a user-defined error code (classes go with MPI_Remove_error_class)");
        }
        // (MPI 4.1 §9.5: erroneous while its string is there)
        if named {
            return err!(Arg, "error code {errorcode} still has a string; remove it first (MPI_Remove_error_string)");
        }
        with_registry(|r| r.classes.remove(&errorcode));
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Remove_error_class / PMPI_Remove_error_class(errorclass: c_int) errors(None) {
        let state = with_registry(|r| {
            let is_class = r.classes.get(&errorclass) == Some(&errorclass);
            let in_use = r.classes.iter().any(|(&code, &class)| class == errorclass && code != errorclass);
            (is_class, in_use, r.strings.contains_key(&errorclass))
        });
        // (MPI 4.1 §9.5: erroneous while its codes or its string are there)
        match state {
            (false, ..) => err!(Arg, "{errorclass} is not a user-defined error class"),
            (true, true, _) => err!(Arg, "error class {errorclass} still has error codes; remove them first (MPI_Remove_error_code)"),
            (true, false, true) => err!(Arg, "error class {errorclass} still has a string; remove it first (MPI_Remove_error_string)"),
            (true, false, false) => {
                with_registry(|r| r.classes.remove(&errorclass));
                Ok(())
            }
        }
    }
}
