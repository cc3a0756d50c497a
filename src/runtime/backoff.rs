//! How a rank waits: spin briefly (a reply often comes within a
//! microsecond), then yield the core (other ranks may need it when there
//! are more ranks than cores), then sleep on the doorbell futex until a
//! peer rings or a short timeout passes.
//!
//! On a host with more ranks than cores the spin is cut to a few polls
//! while more ranks are awake than there are cores: then a spinning rank
//! holds a core another needs. While enough of them sleep (ranks waiting
//! in a barrier while two others exchange messages), it spins as on an
//! uncrowded host: a yield with no one to yield to is a system call of
//! half a microsecond on the test machine, paid before every reply. A
//! rank that has yielded for a while (`DOZE_AFTER`) waits for something
//! far off, not for a partner's next step: it stops counting as awake, so
//! that ranks still exchanging messages spin while others wait in a
//! barrier.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const SPIN_POLLS: u32 = 256;
/// With more ranks awake than cores a spinning rank holds the core its
/// peer needs, so it yields almost at once.
const SPIN_POLLS_CROWDED: u32 = 4;
/// This host's cores, when it runs more ranks than that (0: it does not).
static CORES_IF_OVERSUBSCRIBED: AtomicU32 = AtomicU32::new(0);

/// Called at init: this host runs `ranks` ranks and has `cores` cores.
pub fn set_host(ranks: usize, cores: usize) {
    let v = if ranks > cores { cores as u32 } else { 0 };
    CORES_IF_OVERSUBSCRIBED.store(v, Ordering::Relaxed);
}
const YIELD_FOR: Duration = Duration::from_micros(200);
/// Yielding this long, a rank dozes (see the module's comment).
const DOZE_AFTER: Duration = Duration::from_micros(20);
/// A sleeping rank also wakes this often on its own, as a safety net.
const SLEEP_US: u64 = 1000;

pub struct Backoff {
    polls: u32,
    since: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    pub fn new() -> Backoff {
        Backoff { polls: 0, since: None }
    }

    /// Called after a poll found nothing to do. `sleep(timeout_us)` blocks
    /// on the doorbell; `awake()` counts this host's ranks not asleep;
    /// `doze()` says this rank has yielded for a while.
    pub fn idle(&mut self, awake: impl FnOnce() -> usize, sleep: impl FnOnce(u64), doze: impl FnOnce()) {
        self.polls = self.polls.saturating_add(1);
        let cores = CORES_IF_OVERSUBSCRIBED.load(Ordering::Relaxed) as usize;
        let crowded = || cores > 0 && awake() > cores;
        if self.polls < SPIN_POLLS_CROWDED || (self.polls < SPIN_POLLS && !crowded()) {
            // no PAUSE instruction: the poll itself (loads of the rings'
            // heads) paces the loop, and a PAUSE (over a hundred cycles on
            // recent x86) only delays noticing the reply (measured: ping-pong
            // 0.230 -> 0.224 us median of eight alternating runs)
            return;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        let waited = since.elapsed();
        if waited < YIELD_FOR {
            if waited >= DOZE_AFTER {
                doze();
            }
            std::thread::yield_now();
        } else {
            sleep(SLEEP_US);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_then_yields_then_sleeps() {
        let mut b = Backoff::new();
        let mut slept = 0;
        for _ in 0..SPIN_POLLS {
            b.idle(|| 1, |_| slept += 1, || {});
        }
        assert_eq!(slept, 0, "no sleep while spinning or yielding");
        std::thread::sleep(YIELD_FOR + Duration::from_micros(50));
        b.idle(
            || 1,
            |t| {
                assert_eq!(t, SLEEP_US);
                slept += 1
            },
            || {},
        );
        assert_eq!(slept, 1);
    }

    #[test]
    fn dozes_only_after_yielding_a_while() {
        set_host(4, 2);
        let mut b = Backoff::new();
        let mut dozed = 0;
        for _ in 0..SPIN_POLLS_CROWDED + 2 {
            b.idle(|| 4, |_| panic!("no sleep"), || dozed += 1);
        }
        // not dozing yet, unless a loaded machine kept a yield away that long
        let since = b.since.expect("yielding");
        assert!(dozed == 0 || since.elapsed() >= DOZE_AFTER, "dozing before it has yielded for DOZE_AFTER");
        std::thread::sleep(DOZE_AFTER);
        let (mut dozed, mut slept) = (0, 0);
        b.idle(|| 4, |_| slept += 1, || dozed += 1);
        // dozing, or (a loaded machine overslept past YIELD_FOR) asleep
        assert_eq!(dozed + slept, 1, "dozing once it has yielded for DOZE_AFTER");
    }

    #[test]
    fn spins_on_while_ranks_that_want_a_core_fit_the_cores() {
        set_host(4, 2);
        let mut b = Backoff::new();
        for _ in 0..100 {
            b.idle(|| 2, |_| panic!("no sleep"), || {});
        }
        assert!(b.since.is_none(), "two ranks awake on two cores: still spinning");
        let mut b = Backoff::new();
        for _ in 0..SPIN_POLLS_CROWDED {
            b.idle(|| 4, |_| panic!("no sleep"), || {});
        }
        assert!(b.since.is_some(), "four ranks awake on two cores: yielding");
    }
}
