//! Data symbols and callbacks that MPICH-built programs reference by name.

use std::os::raw::{c_int, c_void};

/// A pointer that may live in a `static`: it only names an address.
#[repr(transparent)]
pub struct Address(pub *const c_void);
// SAFETY: the pointer is never dereferenced through this wrapper; it is an
// address used for identity comparisons.
unsafe impl Sync for Address {}

static F_STATUS_IGNORE_STORAGE: [c_int; 5] = [0; 5];
static F_STATUSES_IGNORE_STORAGE: [c_int; 5] = [0; 5];
static F08_STATUS_IGNORE_STORAGE: [c_int; 5] = [0; 5];
static F08_STATUSES_IGNORE_STORAGE: [c_int; 5] = [0; 5];
static UNWEIGHTED_STORAGE: c_int = 0;
static WEIGHTS_EMPTY_STORAGE: c_int = 0;

#[no_mangle]
pub static MPI_F_STATUS_IGNORE: Address = Address(F_STATUS_IGNORE_STORAGE.as_ptr() as *const c_void);
#[no_mangle]
pub static MPI_F_STATUSES_IGNORE: Address = Address(F_STATUSES_IGNORE_STORAGE.as_ptr() as *const c_void);
#[no_mangle]
pub static MPI_F08_STATUS_IGNORE: Address = Address(F08_STATUS_IGNORE_STORAGE.as_ptr() as *const c_void);
#[no_mangle]
pub static MPI_F08_STATUSES_IGNORE: Address = Address(F08_STATUSES_IGNORE_STORAGE.as_ptr() as *const c_void);
#[no_mangle]
pub static MPI_UNWEIGHTED: Address = Address(&UNWEIGHTED_STORAGE as *const c_int as *const c_void);
#[no_mangle]
pub static MPI_WEIGHTS_EMPTY: Address = Address(&WEIGHTS_EMPTY_STORAGE as *const c_int as *const c_void);
/// The MPI_T "all handles" marker (MPI_T is not implemented yet; the
/// symbol exists because MPICH's header declares it).
#[no_mangle]
pub static MPI_T_PVAR_ALL_HANDLES: Address = Address(std::ptr::null());

/// MPI_COMM_DUP_FN (and the type and window twins): copy the attribute
/// value as it is.
///
/// # Safety
/// `attribute_val_out` must be valid for a `void *` write and `flag` for an
/// int write, as the attribute-copy protocol guarantees.
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _oldcomm: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if attribute_val_out.is_null() || flag.is_null() {
        return crate::error::ErrorClass::Arg.code();
    }
    // SAFETY: per the contract above.
    unsafe {
        *(attribute_val_out as *mut *mut c_void) = attribute_val_in;
        *flag = 1;
    }
    0
}

/// Where MPI_F_STATUS_IGNORE points.
pub fn f_status_ignore() -> usize {
    F_STATUS_IGNORE_STORAGE.as_ptr() as usize
}
