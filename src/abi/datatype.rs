//! Datatype queries (predefined types so far).

use super::handles;
use super::{mpi_fn, out};
use std::os::raw::c_int;

mpi_fn! {
    Initialized fn MPI_Type_size / PMPI_Type_size(datatype: c_int, size: *mut c_int) errors(None) {
        let ty = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe { out(size, "size", ty.size as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Type_get_extent / PMPI_Type_get_extent(datatype: c_int, lb: *mut isize, extent: *mut isize) errors(None) {
        let ty = handles::datatype(datatype)?;
        // SAFETY: valid per the standard (checked non-null).
        unsafe {
            out(lb, "lb", 0)?;
            out(extent, "extent", ty.extent as isize)
        }
    }
}
