//! Environment management: init and finalize, identity, timers, versions,
//! predefined attributes, and the texts of error codes.

use super::handles;
use super::{mpi_fn, out, with_state};
use crate::err;
use crate::runtime::{self, Phase};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

/// The largest tag a message may carry (MPI_TAG_UB).
pub const TAG_UB: i32 = i32::MAX;
/// The last predefined error class (the codes 0..=LAST_CODE are classes).
pub const LAST_CODE: i32 = 78;
/// MPI_ERR_LASTCODE (MPICH's value): MPI_LASTUSEDCODE starts here, and
/// the codes and classes a program adds come after it (MPI 4.0 §9.5: the
/// attribute is never below MPI_ERR_LASTCODE).
pub const ERR_LASTCODE: i32 = 0x3fff_ffff;
pub const MAX_ERROR_STRING: usize = 512;
pub const MAX_PROCESSOR_NAME: usize = 128;
pub const MAX_LIBRARY_VERSION_STRING: usize = 8192;

/// Copy `s` as a C string into `dst` (room for `cap` bytes with the NUL),
/// truncating; returns the length written.
///
/// # Safety
/// `dst` must be valid for `cap` bytes.
pub unsafe fn write_c_string(dst: *mut c_char, cap: usize, s: &str) -> usize {
    let n = s.len().min(cap - 1);
    // SAFETY: n + 1 <= cap bytes, per the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, dst, n);
        *dst.add(n) = 0;
    }
    n
}

mpi_fn! {
    Always fn MPI_Init / PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) errors(None) {
        runtime::init(0).map(|_| ())
    }
}

mpi_fn! {
    Always fn MPI_Init_thread / PMPI_Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) errors(None) {
        if !(0..=3).contains(&required) {
            return err!(Arg, "required thread level {required} is not one of MPI_THREAD_SINGLE..MPI_THREAD_MULTIPLE");
        }
        if provided.is_null() {
            return err!(Arg, "provided is a null pointer");
        }
        let level = runtime::init(required)?;
        // SAFETY: checked non-null above.
        unsafe { out(provided, "provided", level) }
    }
}

mpi_fn! {
    Initialized fn MPI_Finalize / PMPI_Finalize() errors(None) {
        // MPI_COMM_SELF's attributes go first, while MPI still works for
        // their delete callbacks
        super::attr::delete_all(super::attr::Kind::Comm, super::handles::COMM_SELF)?;
        runtime::finalize()
    }
}

mpi_fn! {
    Always fn MPI_Initialized / PMPI_Initialized(flag: *mut c_int) errors(None) {
        // SAFETY: the caller passes a valid int pointer (checked non-null).
        unsafe { out(flag, "flag", (runtime::phase() != Phase::Before) as c_int) }
    }
}

mpi_fn! {
    Always fn MPI_Finalized / PMPI_Finalized(flag: *mut c_int) errors(None) {
        // SAFETY: as above.
        unsafe { out(flag, "flag", (runtime::phase() == Phase::Finalized) as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Abort / PMPI_Abort(comm: c_int, errorcode: c_int) errors(None) {
        // (from a callback inside an MPI call the state is held: the
        // launcher's word for the rank then)
        let rank = with_state(|st| Ok(st.world().rank as i64)).unwrap_or_else(|_| runtime::launcher_rank());
        let _ = comm;
        crate::runtime::report(&format!("oxmpi: rank {rank}: MPI_Abort(errorcode {errorcode}) called; ending the job\n"));
        runtime::abort_job(errorcode, &format!("MPI_Abort({errorcode}) on rank {rank}"))
    }
}

mpi_fn! {
    Initialized fn MPI_Query_thread / PMPI_Query_thread(provided: *mut c_int) errors(None) {
        let level = with_state(|st| Ok(st.thread_level))?;
        // SAFETY: valid int pointer per the standard (checked non-null).
        unsafe { out(provided, "provided", level) }
    }
}

mpi_fn! {
    Initialized fn MPI_Is_thread_main / PMPI_Is_thread_main(flag: *mut c_int) errors(None) {
        let main = with_state(|st| Ok(st.main_thread == std::thread::current().id()))?;
        // SAFETY: as above.
        unsafe { out(flag, "flag", main as c_int) }
    }
}

mpi_fn! {
    Always fn MPI_Get_version / PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) errors(None) {
        // SAFETY: valid int pointers per the standard (checked non-null).
        unsafe {
            out(version, "version", 4)?;
            out(subversion, "subversion", 0)
        }
    }
}

pub fn library_version() -> String {
    format!(
        "oxmpi {} (MPI {}.{}, MPICH ABI libmpi.so.12), an MPI implementation in Rust; built {} {}",
        env!("CARGO_PKG_VERSION"),
        4,
        0,
        std::env::consts::ARCH,
        if cfg!(debug_assertions) { "debug" } else { "release" }
    )
}

mpi_fn! {
    Always fn MPI_Get_library_version / PMPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) errors(None) {
        if version.is_null() {
            return err!(Arg, "version is a null pointer");
        }
        // SAFETY: the standard requires MPI_MAX_LIBRARY_VERSION_STRING bytes.
        let n = unsafe { write_c_string(version, MAX_LIBRARY_VERSION_STRING, &library_version()) };
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Get_processor_name / PMPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) errors(None) {
        if name.is_null() {
            return err!(Arg, "name is a null pointer");
        }
        let host = with_state(|st| Ok(st.hostname.clone()))?;
        // SAFETY: the standard requires MPI_MAX_PROCESSOR_NAME bytes.
        let n = unsafe { write_c_string(name, MAX_PROCESSOR_NAME, &host) };
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(resultlen, "resultlen", n as c_int) }
    }
}

fn clock_origin() -> std::time::Instant {
    static ORIGIN: OnceLock<std::time::Instant> = OnceLock::new();
    *ORIGIN.get_or_init(std::time::Instant::now)
}

/// Seconds on a monotonic clock (MPI_WTIME_IS_GLOBAL is false).
#[no_mangle]
pub extern "C" fn PMPI_Wtime() -> f64 {
    clock_origin().elapsed().as_secs_f64()
}

#[no_mangle]
pub extern "C" fn MPI_Wtime() -> f64 {
    PMPI_Wtime()
}

/// The resolution of MPI_Wtime: the monotonic clock's.
#[no_mangle]
pub extern "C" fn PMPI_Wtick() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_getres writes one timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9).max(1e-9)
}

#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    PMPI_Wtick()
}

mpi_fn! {
    Initialized fn MPI_Comm_size / PMPI_Comm_size(comm: c_int, size: *mut c_int) errors(Some(comm)) {
        let n = with_state(|st| Ok(handles::comm(st, comm)?.size()))?;
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(size, "size", n as c_int) }
    }
}

mpi_fn! {
    Initialized fn MPI_Comm_rank / PMPI_Comm_rank(comm: c_int, rank: *mut c_int) errors(Some(comm)) {
        let r = with_state(|st| Ok(handles::comm(st, comm)?.rank))?;
        // SAFETY: valid int pointer (checked non-null).
        unsafe { out(rank, "rank", r as c_int) }
    }
}

/// Memory MPI_Alloc_mem handed out and not yet freed, by address:
/// MPI_Free_mem takes only these.
fn allocations() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<usize>> {
    static LIVE: std::sync::Mutex<std::collections::BTreeSet<usize>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where MPI_Alloc_mem's memory starts: a cache line, so that no two
/// ranks' copies of it in shared memory share one.
const ALLOC_ALIGN: usize = 64;

mpi_fn! {
    Initialized fn MPI_Alloc_mem / PMPI_Alloc_mem(size: isize, info: c_int, baseptr: *mut c_void) errors(None) {
        if size < 0 {
            return err!(Arg, "size {size} is negative");
        }
        if baseptr.is_null() {
            return err!(Arg, "baseptr is a null pointer");
        }
        // the one hint there is (MPI 4.1 §9.2): a power of two, or ignored
        let hint = super::info::pairs(info)?
            .into_iter()
            .find(|(k, _)| k == "mpi_minimum_memory_alignment")
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .filter(|a| a.is_power_of_two());
        let align = hint.map_or(ALLOC_ALIGN, |a| a.max(ALLOC_ALIGN));
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: posix_memalign writes `p` only; a size of 0 still gets
        // an address of its own, which MPI_Free_mem takes back.
        if unsafe { libc::posix_memalign(&mut p, align, (size as usize).max(1)) } != 0 {
            return err!(NoMem, "cannot allocate {size} bytes");
        }
        allocations().insert(p as usize);
        // SAFETY: baseptr points to a pointer (the standard's `void *baseptr`).
        unsafe { *(baseptr as *mut *mut c_void) = p };
        Ok(())
    }
}

mpi_fn! {
    Initialized fn MPI_Free_mem / PMPI_Free_mem(base: *mut c_void) errors(None) {
        if !allocations().remove(&(base as usize)) {
            return err!(Base, "{base:?} is not the start of memory MPI_Alloc_mem gave and MPI_Free_mem has not taken back");
        }
        // SAFETY: allocated by posix_memalign in MPI_Alloc_mem, freed once.
        unsafe { libc::free(base) };
        Ok(())
    }
}

mpi_fn! {
    /// MPI_Pcontrol(level, ...): the profiling interface's switch, for a
    /// profiling library to intercept (MPI 4.0 §15.2.4); the MPI library
    /// itself makes no use of it and returns at once, as the standard
    /// says. Its variadic arguments are never read, which the C calling
    /// conventions allow a callee declared with the first alone.
    Always fn MPI_Pcontrol / PMPI_Pcontrol(level: c_int) errors(None) {
        let _ = level;
        Ok(())
    }
}
