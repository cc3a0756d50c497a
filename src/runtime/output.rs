//! The program's own output, when a launcher may end the job.
//!
//! A rank's stdout is whatever its launcher gave it: our mpiexec passes
//! its own on (a file, a pipe, a terminal), Hydra and Slurm a pipe. To a
//! file or a pipe C's stdio buffers it whole, and a rank killed because
//! another failed loses what it had printed; MPICH's ranks write it
//! unbuffered and Open MPI's to a terminal of their own, line by line.
//! So a launched rank's stdout is made line-buffered at MPI_Init (the
//! launcher makes Fortran's units unbuffered: libgfortran reads its
//! environment before MPI_Init), and a rank that ends the job flushes
//! every stream first, as MPICH's `exit` does.

use std::ffi::CStr;

extern "C" {
    // glibc's stream; the libc crate does not declare it
    static mut stdout: *mut libc::FILE;
}

/// Make C's stdout line-buffered (what a rank printed up to its last
/// newline is written out), as on a terminal.
pub fn line_buffer_stdout() {
    // SAFETY: glibc's stdout is a valid stream for the process's life;
    // setvbuf with no buffer of ours only changes its mode (glibc keeps
    // what is already buffered).
    unsafe { libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOLBF, 0) };
}

/// Write out what C's streams and, if the program is Fortran, gfortran's
/// units hold, before the process ends without `exit`.
pub fn flush_all() {
    // SAFETY: fflush(NULL) flushes every open output stream.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    // gfortran's FLUSH subroutine, given no unit, flushes every unit
    // (libgfortran's ABI: void _gfortran_flush_i4(int *unit)); it is there
    // only in a process that loaded libgfortran
    const NAME: &CStr = c"_gfortran_flush_i4";
    // SAFETY: a lookup in the loaded objects; the symbol, if any, has the
    // signature above.
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, NAME.as_ptr());
        if !f.is_null() {
            let flush: extern "C" fn(*const i32) = std::mem::transmute(f);
            flush(std::ptr::null());
        }
    }
}
