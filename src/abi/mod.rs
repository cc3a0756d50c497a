//! The C boundary: the only place with `extern "C"`. One file per chapter
//! of the standard. Every entry point is written once through `mpi_fn!`,
//! which defines `PMPI_X` (the implementation) and `MPI_X` (calling it),
//! checks that MPI is initialised, catches panics, and hands errors to the
//! communicator's error handler.

pub mod attr;
pub mod coll;
pub mod comm;
pub mod data;
pub mod datatype;
pub mod env;
pub mod errhan;
pub mod handles;
pub mod info;
pub mod neighbor;
pub mod pt2pt;
pub mod request;
pub mod topo;

use crate::comm::ErrorMode;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime::{self, Phase, State};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const SUCCESS: c_int = 0;

/// Whether a function may be called outside Init..Finalize.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Only between MPI_Init and MPI_Finalize.
    Initialized,
    /// At any time (MPI_Initialized, MPI_Get_version, MPI_Error_string, ...).
    Always,
}

/// Run one MPI call: check the phase, run `body` catching panics, and
/// route an error through the error handler of `comm` (a handle; the
/// world's when None).
pub fn boundary(name: &'static str, when: When, comm: Option<c_int>, body: impl FnOnce() -> MpiResult<()>) -> c_int {
    if when == When::Initialized {
        match runtime::phase() {
            Phase::Running => {}
            Phase::Before => return fatal_outside(name, "called before MPI_Init"),
            Phase::Finalized => return fatal_outside(name, "called after MPI_Finalize"),
        }
    }
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(MpiError::new(ErrorClass::Intern, format!("internal error (a bug in oxmpi, please report it): {what}")))
        }
    };
    match result {
        Ok(()) => SUCCESS,
        Err(e) => raise(name, comm, e),
    }
}

/// Hand an error to the error handler of `comm`: return its class, or
/// print one line and end the job.
pub fn raise(name: &str, comm: Option<c_int>, e: MpiError) -> c_int {
    let (mode, rank) = {
        let g = runtime::lock();
        match g.as_ref().ok().and_then(|g| g.as_ref()) {
            Some(st) => {
                let c = comm.and_then(|h| handles::comm(st, h).ok()).unwrap_or(st.world());
                (c.errors, st.world().rank as i64)
            }
            None => (ErrorMode::Fatal, runtime::launcher_rank()),
        }
    };
    match mode {
        ErrorMode::Return => return e.code,
        ErrorMode::User(i) => return errhan::call_user(i, comm.unwrap_or(handles::COMM_WORLD), e.code),
        _ => {}
    }
    let who = if rank >= 0 { format!("rank {rank}") } else { "process".to_string() };
    runtime::report(&format!("oxmpi: {who}: {name}: {} [{}]\n", e.msg, crate::error::class_text(e.class.code())));
    runtime::abort_job(1, &format!("{name}: {}", e.msg))
}

fn fatal_outside(name: &str, why: &str) -> c_int {
    runtime::report(&format!(
        "oxmpi: {name} {why}; every MPI call except a few queries must come between MPI_Init and MPI_Finalize\n"
    ));
    runtime::abort_job(1, why)
}

/// Run `f` on the locked state (present: the boundary checked the phase).
pub fn with_state<T>(f: impl FnOnce(&mut State) -> MpiResult<T>) -> MpiResult<T> {
    let Ok(mut g) = runtime::lock() else {
        return crate::err!(
            Other,
            "an MPI function was called from a callback that oxmpi runs inside another MPI call (a user operator); oxmpi allows datatype queries there, nothing that needs a communicator or request"
        );
    };
    match g.as_mut() {
        Some(st) => f(st),
        None => crate::err!(Other, "MPI is not initialized"),
    }
}

/// Write through a C out-pointer, or fail with MPI_ERR_ARG naming it.
///
/// # Safety
/// `p` must be null or valid for a write of T.
pub unsafe fn out<T>(p: *mut T, what: &str, v: T) -> MpiResult<()> {
    if p.is_null() {
        return crate::err!(Arg, "{what} is a null pointer");
    }
    // SAFETY: non-null; validity per the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Define `PMPI_X` with the body and `MPI_X` calling it.
macro_rules! mpi_fn {
    ($(#[$m:meta])* $when:ident fn $name:ident / $pname:ident ( $($arg:ident : $ty:ty),* $(,)? ) errors($comm:expr) $body:block) => {
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments must be valid as the MPI standard specifies
        /// for this function.
        #[no_mangle]
        pub unsafe extern "C" fn $pname($($arg: $ty),*) -> std::os::raw::c_int {
            $crate::abi::boundary(stringify!($name), $crate::abi::When::$when, $comm, || -> $crate::error::MpiResult<()> { $body })
        }

        $(#[$m])*
        ///
        /// # Safety
        /// As for the PMPI_ twin.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> std::os::raw::c_int {
            // SAFETY: same contract as the PMPI_ twin.
            unsafe { $pname($($arg),*) }
        }
    };
}
pub(crate) use mpi_fn;
