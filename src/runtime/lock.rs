//! The one lock that serialises entry into the core, and the way round
//! it for the thread that called MPI_Init while it is the only thread
//! that calls MPI.
//!
//! Every call takes the state. A lock's atomic read-modify-write is a
//! full fence on x86: a call's first one waits until the last call's
//! writes to the shared segment (a frame its receiver polls, a
//! publication its readers read) have reached the other cores (perf put
//! a tenth of a loop of 8-byte Bcasts at 4 ranks on 2 cores on that one
//! instruction). MPICH and Open MPI take no lock below
//! `MPI_THREAD_MULTIPLE`; oxmpi keeps serialising a program that breaks
//! its thread level, and so lets one thread, the owner (the one that
//! called MPI_Init), in without the lock for as long as no other thread
//! has called MPI: the owner marks itself inside by a plain store, then
//! looks whether the calls are shared yet. The first call from any other
//! thread (and the progress thread's start) shares them for good: it
//! raises `SHARED`, makes every thread of the process pass a full fence
//! (`membarrier`, private expedited: the owner then either sees `SHARED`
//! or has its mark seen), waits for the owner to leave a call it made
//! without the lock, and from then on every call, the owner's included,
//! takes the lock. Where the kernel has no such fence the owner is never
//! let in without the lock.
//!
//! Measured, 2 ranks, 8-byte ping-pong round trips, medians of three
//! sets of 10-16 alternated runs: 0.526 -> 0.505, 0.518 -> 0.494 and
//! 0.544 -> 0.522 us. The collectives' loops gain less than this
//! machine's noise (Allreduce of 8 B at 2 ranks 0.260 -> 0.258; Bcast of
//! 8 B at 4 ranks on 2 cores 0.158 -> 0.158): the stall moves to the
//! next fence, a reader's read mark (`Segment::note_read`).

use super::State;
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// A spin lock that yields while another thread holds it (only the
/// progress thread, which takes it when free, or a program breaking
/// MPI_THREAD_SERIALIZED's promise), given back by a plain store: std's
/// Mutex gives itself back by an atomic swap, a full fence on x86 that
/// made every call wait, as it returned, until its writes to the shared
/// segment had reached the other cores' caches. Measured, 2 ranks, 8-byte
/// loops, 5 alternated runs: Bcast 0.046-0.066 -> 0.044-0.045 us, Barrier
/// 0.070-0.071 -> 0.067-0.069, Allreduce and Gather alike; 4 ranks on 2
/// cores, Bcast 0.111-0.116 -> 0.108-0.116.
type StateLock = spin::mutex::SpinMutex<Option<State>, spin::relax::Yield>;
type StateGuard = spin::mutex::SpinMutexGuard<'static, Option<State>, spin::relax::Yield>;
static STATE: StateLock = StateLock::new(None);

/// The thread holding STATE by its lock (its pthread_t), or 0.
static HOLDER: AtomicUsize = AtomicUsize::new(0);
/// The thread that may take the state without the lock while `SHARED` is
/// down (the one that called MPI_Init), or 0: none.
static OWNER: AtomicUsize = AtomicUsize::new(0);
/// Another thread has called MPI, or the progress thread runs: every
/// call takes the lock, for good.
static SHARED: AtomicBool = AtomicBool::new(false);
/// The owner is inside a call it made without the lock (only it writes
/// this).
static INSIDE: AtomicBool = AtomicBool::new(false);

/// How many times the program's calls took the state (the progress
/// thread steps aside while the program calls MPI: it drives progress).
pub static CALLS: AtomicU64 = AtomicU64::new(0);

/// `membarrier(2)` commands (linux/membarrier.h; not in the libc crate).
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

fn membarrier(cmd: libc::c_long) -> bool {
    // SAFETY: membarrier takes a command and two zero arguments.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_long, 0 as libc::c_long) == 0 }
}

/// This thread, as a number no other running thread has (never 0).
fn this_thread() -> usize {
    // SAFETY: no arguments, never fails.
    unsafe { libc::pthread_self() as usize }
}

/// The state, held; given back when dropped (panics included).
pub enum Guard {
    /// The owner's, without the lock.
    Alone(&'static mut Option<State>),
    Locked(StateGuard),
}

impl std::ops::Deref for Guard {
    type Target = Option<State>;
    fn deref(&self) -> &Option<State> {
        match self {
            Guard::Alone(s) => s,
            Guard::Locked(g) => g,
        }
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Option<State> {
        match self {
            Guard::Alone(s) => s,
            Guard::Locked(g) => g,
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        match self {
            // (the state's writes before the mark: a sharer waiting for
            // it goes on with them)
            Guard::Alone(_) => INSIDE.store(false, Ordering::Release),
            // (the mutex is given back after this)
            Guard::Locked(_) => HOLDER.store(0, Ordering::Relaxed),
        }
    }
}

/// The calling thread holds the state already: an MPI function called
/// from a callback that oxmpi runs inside an MPI call (a user operator;
/// attribute and error-handler functions run with the lock given back),
/// which would otherwise wait for the lock its own call holds, for good.
#[derive(Debug)]
pub struct Reentered;

/// Let this thread (MPI_Init's) take the state without the lock while no
/// other thread calls MPI, if the kernel has the fence that sharing
/// needs (Linux 4.14 on, unless a filter forbids it).
pub(super) fn own() {
    if membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
        OWNER.store(this_thread(), Ordering::Relaxed);
    }
}

/// The owner's way in without the lock, unless the calls are shared.
#[inline]
fn alone() -> Option<Result<Guard, Reentered>> {
    if INSIDE.load(Ordering::Relaxed) {
        return Some(Err(Reentered));
    }
    INSIDE.store(true, Ordering::Relaxed);
    // the mark before the look (a sharer's fence orders the CPU's side)
    compiler_fence(Ordering::SeqCst);
    if SHARED.load(Ordering::Relaxed) {
        INSIDE.store(false, Ordering::Release);
        return None;
    }
    // SAFETY: no other thread takes the state: every other caller shares
    // the calls first, and then waits until INSIDE is down again (this
    // guard's drop); this thread's own calls inside this one see INSIDE.
    Some(Ok(Guard::Alone(unsafe { &mut *STATE.as_mut_ptr() })))
}

/// From now on every call takes the lock: wait for the owner to leave a
/// call it made without it. Never from inside such a call.
pub(super) fn share() {
    if SHARED.swap(true, Ordering::SeqCst) {
        return;
    }
    // every thread past a full fence: the owner, if inside now, has its
    // mark seen below; if not, sees SHARED when it next comes
    if OWNER.load(Ordering::Relaxed) != 0 && !membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) {
        // (registered, so it cannot fail; should it, the yields below
        // are the owner's chance to be seen)
        std::thread::yield_now();
    }
    while INSIDE.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
}

/// The state, taken. Only valid while Running.
#[inline]
pub fn lock() -> Result<Guard, Reentered> {
    let me = this_thread();
    if !SHARED.load(Ordering::Relaxed) {
        if me == OWNER.load(Ordering::Relaxed) {
            if let Some(g) = alone() {
                if g.is_ok() {
                    count_call();
                }
                return g;
            }
        } else {
            share();
        }
    }
    if me == OWNER.load(Ordering::Relaxed) && INSIDE.load(Ordering::Relaxed) {
        // the owner called MPI without the lock and, inside that call,
        // again after another thread shared the calls
        return Err(Reentered);
    }
    let g = match STATE.try_lock() {
        Some(g) => g,
        // (only this thread stores itself there)
        None if HOLDER.load(Ordering::Relaxed) == me => return Err(Reentered),
        None => STATE.lock(),
    };
    HOLDER.store(me, Ordering::Relaxed);
    count_call();
    Ok(Guard::Locked(g))
}

/// The state if it can be had at once, without waiting for another
/// thread (nor sharing the calls: a thread ending the job).
pub fn try_lock() -> Option<Guard> {
    let me = this_thread();
    if !SHARED.load(Ordering::Relaxed) {
        // another thread than the owner would have to wait for it
        return if me == OWNER.load(Ordering::Relaxed) { alone()?.ok() } else { None };
    }
    if me == OWNER.load(Ordering::Relaxed) && INSIDE.load(Ordering::Relaxed) {
        return None;
    }
    STATE.try_lock().map(held)
}

/// The lock, taken by `try_lock` (the progress thread's, which the
/// calls are shared before it starts): marked held by this thread, so
/// that a user's reduction operator this thread runs (a nonblocking
/// reduction's step) and that calls MPI is told, not left waiting.
fn held(g: StateGuard) -> Guard {
    HOLDER.store(this_thread(), Ordering::Relaxed);
    Guard::Locked(g)
}

fn count_call() {
    // (only holders write it)
    CALLS.store(CALLS.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn the_owner_goes_alone_until_another_thread_calls_then_all_lock() {
        own();
        if OWNER.load(Ordering::Relaxed) == 0 {
            // no membarrier here: the owner locks like everyone
            assert!(matches!(lock(), Ok(Guard::Locked(_))));
            return;
        }
        let g = lock().expect("the owner's first call");
        assert!(matches!(g, Guard::Alone(_)));
        assert!(matches!(lock(), Err(Reentered)), "a call inside the owner's call");
        assert!(try_lock().is_none(), "the state is held");
        // another thread calls while the owner is inside: it shares the
        // calls and waits for the owner to leave
        let step = std::sync::Arc::new(AtomicU32::new(0));
        let other = {
            let step = step.clone();
            std::thread::spawn(move || {
                let g = lock().expect("another thread's call");
                let seen = step.load(Ordering::Acquire);
                assert!(matches!(g, Guard::Locked(_)));
                drop(g);
                seen
            })
        };
        while !SHARED.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        // shared now: a call inside the owner's is still told so
        assert!(matches!(lock(), Err(Reentered)));
        step.store(1, Ordering::Release);
        drop(g);
        assert_eq!(other.join().expect("the other thread"), 1, "it waited for the owner to leave");
        let g = lock().expect("the owner's call after sharing");
        assert!(matches!(g, Guard::Locked(_)), "shared for good");
        assert!(matches!(lock(), Err(Reentered)));
        drop(g);
        assert!(try_lock().is_some());
    }
}
