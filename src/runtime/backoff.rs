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
//! rank that has yielded for a while (`DOZE_AFTER_NS`) waits for something
//! far off, not for a partner's next step: it stops counting as awake, so
//! that ranks still exchanging messages spin while others wait in a
//! barrier.
//!
//! A rank waiting in a short collective on such a host also spins on
//! while its core is spare (`Segment::core_spare`): every other rank
//! last seen on that core has published its part of this collective (or
//! a later one) and waits too, so the ranks it still needs run on other
//! cores, and a yield would only hand the core to a rank that hands it
//! back. It yields after `SPARE_SPIN_NS` anyway, as ranks move between
//! cores, and not at all with one core, where what it waits for can run
//! only if it yields. Measured, 4 ranks on 2 cores: a barrier loop makes
//! 2.0 context switches per barrier (one per core, the least there can
//! be) against 2.36 before; medians of 10 alternating runs on a noisy
//! day, barrier 4.9 -> 3.8 us, allreduce, alltoall and allgather of 8 B
//! 5.5, 5.2, 4.9 -> 4.3, 4.2, 3.9; on a quiet one 2.9 -> 2.8 and 3-6%.
//! When its core is not spare, a rank there has yet to do its part, and
//! cannot while this one holds the core: it yields at its first poll, not
//! after the crowded host's few. With that and one read of the clock per
//! yield where there were three, 4 ranks on 2 cores, medians of 10
//! alternated `coll quick` runs: Barrier 2.22 -> 2.01 us, 8-byte
//! Allgather, Allreduce and Alltoall 2.37, 2.44, 2.40 -> 2.15, 2.27,
//! 2.16, the 1 KiB ones 5-9% less too. Each switch of a core between
//! two ranks costs a process of this library about 0.6 us in user space
//! on this machine (2 ranks on one CPU, a barrier loop, `getrusage`),
//! where two bare processes meeting through shared memory spend 0.2: the
//! polls, clock reads and misses of its waits between switches.
//!
//! Where other programs keep every core of the machine busy
//! (`Segment::cores_taken`), a wait sleeps where it would yield: a yield
//! hands the core to such a program for the rest of its time slice,
//! while a sleeper is woken, and run, as soon as its peer rings.

use std::sync::atomic::{AtomicU32, Ordering};
#[cfg(test)]
use std::time::Duration;

const SPIN_POLLS: u32 = 256;
/// With more ranks awake than cores a spinning rank holds the core its
/// peer needs, so it yields almost at once.
const SPIN_POLLS_CROWDED: u32 = 4;
/// This host's cores, when it runs more ranks than that (0: it does not).
static CORES_IF_OVERSUBSCRIBED: AtomicU32 = AtomicU32::new(0);

/// Whether a waiting rank may spin on a core no one else needs
/// (`idle`'s `spare`): the host runs more ranks than cores (otherwise it
/// spins anyway), and has another core for the ranks it waits for.
pub fn spare_cores_help() -> bool {
    CORES_IF_OVERSUBSCRIBED.load(Ordering::Relaxed) > 1
}

/// Whether the ranks that want a core now (`wanting`, such as
/// `Segment::busy`) outnumber this host's cores (never where it has a
/// core per rank).
pub fn outnumbered(wanting: impl FnOnce() -> usize) -> bool {
    let cores = CORES_IF_OVERSUBSCRIBED.load(Ordering::Relaxed) as usize;
    cores > 0 && wanting() > cores
}

/// Called at init: this host runs `ranks` ranks and has `cores` cores.
pub fn set_host(ranks: usize, cores: usize) {
    let v = if ranks > cores { cores as u32 } else { 0 };
    CORES_IF_OVERSUBSCRIBED.store(v, Ordering::Relaxed);
}
const YIELD_FOR_NS: u64 = 200_000;
/// Yielding this long, a rank dozes (see the module's comment).
const DOZE_AFTER_NS: u64 = 20_000;
/// A sleeping rank also wakes this often on its own, as a safety net.
const SLEEP_US: u64 = 1000;

pub struct Backoff {
    polls: u32,
    /// When this wait first yielded (`now_ns`).
    since: Option<u64>,
    /// When this crowded wait began to spin on a spare core (`now_ns`).
    spare_since: Option<u64>,
    /// The clock (`now_ns`) as last read while spinning: `coarse_now`.
    clock: u64,
    /// `polls` when `clock` was read.
    clock_poll: u32,
    /// The rank's count of frames that waited for room and went out, when
    /// last seen (`restart_if_moved`).
    moved: u64,
}

/// How long a crowded wait spins at most on a core no one else needs
/// (`idle`'s `spare`): what it waits for may be on a rank that moved.
const SPARE_SPIN_NS: u64 = 20_000;
/// A spinning wait reads the clock once in this many polls
/// (`coarse_now`).
const CLOCK_EVERY: u32 = 16;

/// CLOCK_MONOTONIC in nanoseconds (one clock for every process).
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The processor time this thread has used, in nanoseconds (a system
/// call, not the vDSO's: a fraction of a microsecond).
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec to write.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    pub fn new() -> Backoff {
        Backoff { polls: 0, since: None, spare_since: None, clock: 0, clock_poll: 0, moved: 0 }
    }

    /// The clock for the spinning polls, read again once in `CLOCK_EVERY`
    /// of them: what it times (dozes, the spin on a spare core) lasts
    /// 20 us, many polls, while a read of the clock costs as much as a
    /// poll. Measured, 4 ranks on 2 cores, a barrier loop under `perf`:
    /// 10% of a rank's time in `clock_gettime` when each poll read it
    /// (once to count the ranks awake, once per rank to see if its core
    /// was spare, once for the spin's length).
    fn coarse_now(&mut self) -> u64 {
        if self.clock == 0 || self.polls.is_multiple_of(CLOCK_EVERY) {
            return self.fresh_now();
        }
        self.clock
    }

    /// The clock read now, or earlier in this poll: one read for a yield
    /// (its first one, after one poll, reads it once, not three times).
    fn fresh_now(&mut self) -> u64 {
        if self.clock == 0 || self.clock_poll != self.polls {
            (self.clock, self.clock_poll) = (now_ns(), self.polls);
        }
        self.clock
    }

    /// `moved` counts this rank's frames that waited for room in a full
    /// ring and went out. While it grows the receivers are taking them,
    /// so the wait starts over, spinning: a rank that went on to sleep
    /// would cost each receiver a wake-up system call per slot it empties
    /// (`Segment::took_frames`). Measured, 2 ranks streaming 8-byte sends
    /// (the sender far ahead, as a gather's non-roots in a loop): 0.9 us
    /// a message with a wake-up per message, against 0.14 for Open MPI,
    /// which only polls. A receiver that stops taking still lets the
    /// sender sleep, after the usual spin and yield.
    pub fn restart_if_moved(&mut self, moved: u64) {
        if moved != self.moved {
            *self = Backoff { moved, ..Backoff::new() };
        }
    }

    /// Whether this wait has gone on to sleep (past its yields), as of its
    /// last idle round.
    pub fn sleeps(&self) -> bool {
        self.since.is_some_and(|since| self.clock.saturating_sub(since) >= YIELD_FOR_NS)
    }

    /// Called after a poll found nothing to do. `sleep(timeout_us)` blocks
    /// on the doorbell; `awake(now)` counts this host's ranks not asleep
    /// at `now` (`now_ns`); `yielding(now, dozing)` comes before each
    /// yield of the core, `dozing` once this rank has yielded for a while,
    /// and says whether to yield (false: sleep instead, the cores being
    /// taken by other programs: `Segment::cores_taken`);
    /// `spare(now)` says whether its core is spare (None: a wait that
    /// cannot tell, outside a short collective).
    pub fn idle(
        &mut self,
        awake: impl FnOnce(u64) -> usize,
        sleep: impl FnOnce(u64),
        yielding: impl FnOnce(u64, bool) -> bool,
        spare: impl FnOnce(u64) -> Option<bool>,
    ) {
        self.polls = self.polls.saturating_add(1);
        let cores = CORES_IF_OVERSUBSCRIBED.load(Ordering::Relaxed) as usize;
        // on a crowded host, a wait in a short collective spins on while
        // its core is spare, for SPARE_SPIN_NS at most, and yields at once
        // while a rank on its core has yet to do its part: until that rank
        // runs, a spin only delays it
        let mut spare_now = None;
        if cores > 0 && self.since.is_none() {
            let now = self.coarse_now();
            spare_now = spare(now);
            if spare_now == Some(true) {
                let t = *self.spare_since.get_or_insert(now);
                if now.saturating_sub(t) < SPARE_SPIN_NS {
                    return;
                }
            }
        }
        // (a wait that can tell spins only on a spare core, as above)
        let spin = || {
            self.polls < SPIN_POLLS_CROWDED || (self.polls < SPIN_POLLS && !outnumbered(|| awake(self.coarse_now())))
        };
        if spare_now.is_none() && spin() {
            // no PAUSE instruction: the poll itself (loads of the rings'
            // heads) paces the loop, and a PAUSE (over a hundred cycles on
            // recent x86) only delays noticing the reply (measured: ping-pong
            // 0.230 -> 0.224 us median of eight alternating runs)
            return;
        }
        let now = self.fresh_now();
        let waited = now.saturating_sub(*self.since.get_or_insert(now));
        if waited < YIELD_FOR_NS && yielding(now, waited >= DOZE_AFTER_NS) {
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
            b.idle(|_| 1, |_| slept += 1, |_, _| true, |_| None);
        }
        assert_eq!(slept, 0, "no sleep while spinning or yielding");
        std::thread::sleep(Duration::from_nanos(YIELD_FOR_NS + 50_000));
        b.idle(
            |_| 1,
            |t| {
                assert_eq!(t, SLEEP_US);
                slept += 1
            },
            |_, _| true,
            |_| None,
        );
        assert_eq!(slept, 1);
    }

    #[test]
    fn sleeps_instead_of_yielding_when_told_the_cores_are_taken() {
        set_host(4, 2);
        let mut b = Backoff::new();
        let mut slept = 0;
        for _ in 0..SPIN_POLLS_CROWDED {
            b.idle(|_| 4, |_| slept += 1, |_, _| false, |_| None);
        }
        assert_eq!(slept, 1, "asleep at its first would-be yield");
        assert!(!b.sleeps(), "still within the time it would yield: not past its yields");
    }

    /// An idle round of `b` with four ranks awake, counting its dozes
    /// and sleeps.
    fn idle_counting(b: &mut Backoff, dozed: &mut u32, slept: &mut u32) {
        b.idle(
            |_| 4,
            |_| *slept += 1,
            |_, dozing| {
                *dozed += dozing as u32;
                true
            },
            |_| None,
        );
    }

    #[test]
    fn dozes_only_after_yielding_a_while() {
        set_host(4, 2);
        let mut b = Backoff::new();
        let (mut dozed, mut slept) = (0, 0);
        for _ in 0..SPIN_POLLS_CROWDED + 2 {
            idle_counting(&mut b, &mut dozed, &mut slept);
        }
        // not dozing yet, unless a loaded machine kept a yield away that
        // long (nor asleep, unless one kept it past YIELD_FOR_NS)
        let yielded = now_ns() - b.since.expect("yielding");
        assert!(dozed == 0 || yielded >= DOZE_AFTER_NS, "dozing before it has yielded for DOZE_AFTER_NS");
        assert!(slept == 0 || yielded >= YIELD_FOR_NS, "asleep before it has yielded for YIELD_FOR_NS");
        std::thread::sleep(Duration::from_nanos(DOZE_AFTER_NS));
        let (mut dozed, mut slept) = (0, 0);
        idle_counting(&mut b, &mut dozed, &mut slept);
        // dozing, or (a loaded machine overslept past YIELD_FOR_NS) asleep
        assert_eq!(dozed + slept, 1, "dozing once it has yielded for DOZE_AFTER_NS");
    }

    #[test]
    fn spins_on_while_ranks_that_want_a_core_fit_the_cores() {
        set_host(4, 2);
        let mut b = Backoff::new();
        for _ in 0..100 {
            b.idle(|_| 2, |_| panic!("no sleep"), |_, _| true, |_| None);
        }
        assert!(b.since.is_none(), "two ranks awake on two cores: still spinning");
        let mut b = Backoff::new();
        for _ in 0..SPIN_POLLS_CROWDED {
            b.idle(|_| 4, |_| panic!("no sleep"), |_, _| true, |_| None);
        }
        assert!(b.since.is_some(), "four ranks awake on two cores, none on a spare core: yielding");
    }

    #[test]
    fn yields_at_once_when_a_rank_on_its_core_has_its_part_to_do() {
        set_host(4, 2);
        let mut b = Backoff::new();
        b.idle(|_| 4, |_| panic!("no sleep"), |_, _| true, |_| Some(false));
        assert!(b.since.is_some(), "its core is needed: yielding at the first poll");
        let mut b = Backoff::new();
        b.idle(|_| 4, |_| panic!("no sleep"), |_, _| true, |_| None);
        assert!(b.since.is_none(), "a wait that cannot tell spins its few polls first");
    }

    #[test]
    fn spins_on_a_spare_core_for_a_while_then_yields() {
        set_host(4, 2);
        let mut b = Backoff::new();
        for _ in 0..SPIN_POLLS_CROWDED + 100 {
            b.idle(|_| 4, |_| {}, |_, _| true, |_| Some(true));
        }
        // still spinning, unless a loaded machine kept this long
        let spun = now_ns() - b.spare_since.expect("spinning on a spare core");
        assert!(b.since.is_none() || spun >= SPARE_SPIN_NS, "yielding though its core is spare");
        std::thread::sleep(Duration::from_nanos(SPARE_SPIN_NS));
        for _ in 0..CLOCK_EVERY {
            b.idle(|_| 4, |_| {}, |_, _| true, |_| Some(true));
        }
        assert!(b.since.is_some(), "yielding after spinning SPARE_SPIN_NS: what it waits for may have moved");
    }
}
