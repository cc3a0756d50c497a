//! Error handlers: the three predefined ones, set and read per communicator.

use super::handles::{self, ERRHANDLER_NULL, ERRORS_ABORT, ERRORS_ARE_FATAL, ERRORS_RETURN};
use super::{mpi_fn, out, with_state};
use crate::comm::ErrorMode;
use crate::err;
use std::os::raw::c_int;

fn mode(h: c_int) -> crate::error::MpiResult<ErrorMode> {
    match h {
        ERRORS_ARE_FATAL => Ok(ErrorMode::Fatal),
        ERRORS_RETURN => Ok(ErrorMode::Return),
        ERRORS_ABORT => Ok(ErrorMode::Abort),
        ERRHANDLER_NULL => err!(Arg, "the error handler is MPI_ERRHANDLER_NULL"),
        _ => err!(Arg, "invalid error handler handle 0x{h:08x}"),
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_set_errhandler / PMPI_Comm_set_errhandler(comm: c_int, errhandler: c_int) errors(Some(comm)) {
        let m = mode(errhandler)?;
        with_state(|st| {
            handles::comm_mut(st, comm)?.errors = m;
            Ok(())
        })
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_get_errhandler / PMPI_Comm_get_errhandler(comm: c_int, errhandler: *mut c_int) errors(Some(comm)) {
        let m = with_state(|st| Ok(handles::comm(st, comm)?.errors))?;
        let h = match m {
            ErrorMode::Fatal => ERRORS_ARE_FATAL,
            ErrorMode::Return => ERRORS_RETURN,
            ErrorMode::Abort => ERRORS_ABORT,
        };
        // SAFETY: valid pointer per the standard (checked non-null).
        unsafe { out(errhandler, "errhandler", h) }
    }
}

mpi_fn! {
    Initialized fn MPI_Errhandler_free / PMPI_Errhandler_free(errhandler: *mut c_int) errors(None) {
        if errhandler.is_null() {
            return err!(Arg, "errhandler is a null pointer");
        }
        // SAFETY: checked non-null; valid per the standard.
        let h = unsafe { *errhandler };
        mode(h)?;
        // The predefined handlers are never deallocated; the caller's
        // reference is released.
        // SAFETY: as above.
        unsafe { *errhandler = ERRHANDLER_NULL };
        Ok(())
    }
}
