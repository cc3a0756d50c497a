//! The progress thread (`OXMPI_ASYNC_PROGRESS=1`): nonblocking
//! operations move on while the program computes outside MPI, as
//! MPICH's `MPIR_CVAR_ASYNC_PROGRESS` makes them. Off by default, as
//! there: without it they move whenever the program is inside any MPI
//! call, which costs nothing extra.
//!
//! The thread takes the state's lock only when it is free: a thread of
//! the program inside an MPI call drives progress itself, and a blocked
//! call holds the lock. With the lock, and live requests, it makes one
//! pass of progress and then sleeps on the rank's doorbell
//! (`Doorbell::helper`), which its host's peers ring as they send it
//! frames or take its frames: the next step of a collective or a
//! long message starts as soon as a peer makes it possible. With no
//! request live it sleeps until the program makes one; while the
//! program calls MPI, or is inside a call, it steps aside (the program
//! drives progress then) and looks again after a nap. Peers over
//! TCP ring no bell: with any, it looks at most `LONGEST_US` apart while
//! requests are live.

use super::lock::{self, CALLS};
use super::Phase;
use crate::transport::shm::Doorbell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

/// The first wait on the doorbell after a pass that left requests live;
/// each wait that no ring cuts short doubles it, up to `LONGEST_US`, or
/// `LONGEST_RUNG_US` where every peer rings (none over TCP): there the
/// doorbell says when a pass can move anything, and the timeout only
/// guards.
const FIRST_US: u64 = 50;
const LONGEST_US: u64 = 1000;
const LONGEST_RUNG_US: u64 = 20_000;
/// While the program calls MPI, or is inside a call, the thread naps,
/// from this long, each nap twice the last, up to `BUSY_MOST`.
const BUSY_FIRST: Duration = Duration::from_micros(50);
const BUSY_MOST: Duration = Duration::from_micros(200);
/// With no request live it sleeps until one is made; this long at most.
const IDLE_MOST: Duration = Duration::from_millis(100);

static STOP: AtomicBool = AtomicBool::new(false);
static THREAD: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);
/// The thread sleeps for want of requests (set and cleared with the state
/// held, as requests are made).
static IDLE: AtomicBool = AtomicBool::new(false);
static HANDLE: OnceLock<Thread> = OnceLock::new();

/// This rank's doorbell, in the segment, which outlives the thread
/// (`stop` joins it before MPI_Finalize takes the segment down).
struct Bell(*const Doorbell);
// SAFETY: the doorbell is atomics in shared memory that other processes
// use concurrently; the pointer stays valid until `stop` returns.
unsafe impl Send for Bell {}

/// Start the thread (MPI_Init, with OXMPI_ASYNC_PROGRESS set); `tcp`:
/// the rank has peers over TCP.
pub fn start(bell: *const Doorbell, tcp: bool) -> std::io::Result<()> {
    // the thread takes the state too: every call locks from now on
    lock::share();
    STOP.store(false, Ordering::Relaxed);
    let bell = Bell(bell);
    let t = std::thread::Builder::new().name("oxmpi-progress".into()).spawn(move || {
        let bell = bell;
        // signals sent to the process go to the program's threads, whose
        // handlers expect them there
        // SAFETY: a full set, initialized by sigfillset, masks this thread only.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        }
        // a panic here is a bug; end the job as the C boundary would
        if std::panic::catch_unwind(|| run(&bell, tcp)).is_err() {
            super::abort_job(1, "internal error (a bug in oxmpi, please report it): the progress thread panicked");
        }
    })?;
    let _ = HANDLE.set(t.thread().clone());
    *THREAD.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
    Ok(())
}

/// Stop the thread, asleep on `bell` or not, and wait for it
/// (MPI_Finalize, holding the lock, which the thread only ever tries);
/// nothing if it does not run.
pub fn stop(bell: &Doorbell) {
    let Some(t) = THREAD.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
    STOP.store(true, Ordering::Release);
    t.thread().unpark();
    bell.wake();
    let _ = t.join();
}

/// What the thread does after a look at the state.
enum Next {
    /// Sleep on the doorbell unless its count moved from this: a pass
    /// left requests live.
    Ring(u32),
    /// Sleep until a request is made (`request_made`).
    Idle,
    /// The program is calling MPI, or inside a call (it holds the lock):
    /// look again after a nap.
    Busy,
}

fn run(bell: &Bell, tcp: bool) {
    let longest = if tcp { LONGEST_US } else { LONGEST_RUNG_US };
    // SAFETY: valid until `stop` has joined this thread (see `Bell`).
    let d = unsafe { &*bell.0 };
    let (mut wait, mut nap, mut calls) = (FIRST_US, BUSY_FIRST, CALLS.load(Ordering::Relaxed));
    while !STOP.load(Ordering::Acquire) {
        // the program called MPI since the last look: it drives progress
        // itself (a pass now would contend for the lock, and the flag up
        // would cost its peers a wake-up call per frame)
        let called = CALLS.load(Ordering::Relaxed);
        let next = if called != std::mem::replace(&mut calls, called) {
            Next::Busy
        } else {
            match lock::try_lock() {
                Some(mut g) => match g.as_mut() {
                    Some(st) if super::phase() == Phase::Running => {
                        let mut seen = None;
                        if st.engine.has_requests() {
                            // up before the pass (Dekker, as `Segment::sleep`):
                            // a peer's frame the pass misses rings the bell
                            d.helper.store(1, Ordering::Relaxed);
                            std::sync::atomic::fence(Ordering::SeqCst);
                            seen = Some(d.bell.load(Ordering::Relaxed));
                            st.engine.progress();
                        }
                        // (under the lock, as requests are made)
                        let live = st.engine.has_requests();
                        IDLE.store(!live, Ordering::Relaxed);
                        match seen {
                            Some(seen) if live => Next::Ring(seen),
                            _ => Next::Idle,
                        }
                    }
                    _ => Next::Idle,
                },
                None => Next::Busy,
            }
        };
        if let Next::Ring(seen) = next {
            d.sleep_helper(seen, wait);
            let rung = d.bell.load(Ordering::Relaxed) != seen;
            d.helper.store(0, Ordering::Relaxed);
            wait = if rung { FIRST_US } else { (wait * 2).min(longest) };
            nap = BUSY_FIRST;
            continue;
        }
        d.helper.store(0, Ordering::Relaxed);
        wait = FIRST_US;
        if let Next::Busy = next {
            std::thread::park_timeout(nap);
            nap = (nap * 2).min(BUSY_MOST);
        } else {
            nap = BUSY_FIRST;
            std::thread::park_timeout(IDLE_MOST);
        }
    }
}

/// A request was made (the state held): wake the thread if it sleeps for
/// want of one.
#[inline]
pub fn request_made() {
    if IDLE.load(Ordering::Relaxed) {
        IDLE.store(false, Ordering::Relaxed);
        if let Some(t) = HANDLE.get() {
            t.unpark();
        }
    }
}
