//! Each rank's doorbell (a futex word peers ring to wake it while it
//! sleeps) and where the host's ranks run: who wants a core, who waits
//! parked in a short collective, which ranks share a core, and moving a
//! rank off a crowded one.

use super::{Segment, LINE};
use crate::runtime::backoff::now_ns;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Per-rank lines: a futex word peers bump to wake a sleeping rank, and
/// where the rank waits. The second line is written at every wait of a
/// crowded host's short collective (`park`, `core_spare`); the first only
/// as the rank sleeps or dozes (and once as it enters MPI_Finalize), so
/// that `sleeping`, which every publication reads for each reader, stays
/// in the publishers' caches.
#[repr(C, align(64))]
pub struct Doorbell {
    pub bell: AtomicU32,
    pub sleeping: AtomicU32,
    /// Set with `sleeping` while the rank sleeps for room in its rings to
    /// peers: a peer that empties slots of one rings the bell.
    pub room: AtomicU32,
    /// The rank is in MPI_Finalize: its process may end.
    pub finalizing: AtomicU32,
    /// When the rank last yielded its core in a long wait (`doze`), in
    /// nanoseconds of CLOCK_MONOTONIC.
    pub dozed_at: AtomicU64,
    /// The rank's progress thread (`runtime::helper`) sleeps on `bell`:
    /// peers ring it as they do a sleeping rank, and as they take its
    /// frames (it may wait for room). Apart from `sleeping`, which also
    /// says the rank wants no core, while the program computes beside it.
    pub helper: AtomicU32,
    /// The bell's count when the rank last went to sleep (`sleep`): one
    /// `sleeping` whose bell has moved since was woken, and may wait for
    /// a core (`cores_taken`).
    slept_on: AtomicU32,
    /// The rank called MPI_Finalize (`enter_finalize`): it takes part in
    /// no collective of the program's from then on.
    in_finalize: AtomicU32,
    /// (the rest of the first line: `parked` starts the second)
    _to_line2: [u32; 7],
    /// The operation (`coll::shm::stamp` without piece) of the short
    /// publication this rank waits for, or 0 (`park`).
    pub parked: AtomicU64,
    /// The core this rank ran on when it last parked, looked at its
    /// core's other ranks (`core_spare`) or offered a long message
    /// (`note_core`), plus 1 (0: not yet known).
    pub cpu: AtomicU32,
    /// When a waiting rank last noted `cpu` (`core_spare`, `crowded`), in
    /// nanoseconds of CLOCK_MONOTONIC: how fresh it is.
    pub cpu_at: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Doorbell>() == 2 * LINE && std::mem::offset_of!(Doorbell, parked) == LINE);

/// A rank that yielded in a long wait this recently does not count as
/// wanting a core (`awake`).
const DOZE_FRESH_NS: u64 = 20_000;

/// How often a yielding rank looks at where its host's ranks run
/// (`Segment::spread`).
const LOOK_EVERY_NS: u64 = 1_000_000;
/// After a rank moved, the others wait this long before one moves again:
/// the moved rank's peers must note their cores anew first.
const SETTLE_NS: u64 = 10_000_000;
/// A rank's core noted longer ago than this is stale (`Segment::crowded`),
/// and a rank that has not noted it for so long computes between its
/// calls: the kernel balances such ranks by itself (they do not yield
/// their cores all the time), and a move only fights it. Measured, NAS
/// CG class A at 4 ranks on 2 cores, whose ranks compute about a
/// millisecond between waits: with 2 ms here, 8-12 moves a run, one
/// every 10-15 ms (`SETTLE_NS`), and 1.045 +- 0.014 of the time the same
/// library took without moving (12 alternated pairs; 1.056 +- 0.034 in
/// another 12, where looking without moving took 0.997 +- 0.021); with
/// 200 us, `LOOKS_BEFORE_MOVE` and a note at every yield (`spread`),
/// none in CG and MG (5 runs each), while loops of Barriers and of 64 KiB
/// Allgathers still move off a crowded core (without the note at every
/// yield, the Allgather's ranks, which wait outside short collectives and
/// noted their cores only at their looks, stayed three on one core for
/// 100 ms at a time).
const FRESH_NS: u64 = 200_000;
/// Looks in a row (`LOOK_EVERY_NS` apart at least) that must find a
/// rank's core crowded before it moves (`Segment::spread`): a kernel that
/// wakes a rank onto its waker's core corrects itself within a few
/// milliseconds; the crowding a move undoes lasts tens of them.
const LOOKS_BEFORE_MOVE: u32 = 3;

/// How often a rank about to yield looks whether other programs keep
/// every core busy (`Segment::cores_taken`).
const LOAD_LOOK_NS: u64 = 1_000_000;
/// Looks in a row that must find otherwise before the verdict changes:
/// a task that runs for a moment (a kernel worker, a shell) is no
/// program that keeps a core.
const LOAD_LOOKS: u32 = 2;

/// Looks a rank takes now and then as it waits (at where the host's
/// ranks run, `Segment::spread`; at the machine's load,
/// `Segment::cores_taken`), and how many in a row found what it looks for.
#[derive(Default)]
pub struct Looks {
    /// When the next look is due (`now_ns`).
    next: AtomicU64,
    in_a_row: AtomicU32,
}

impl Looks {
    /// Whether a look is due at `now`; the one after it `every` later.
    fn due(&self, now: u64, every: u64) -> bool {
        if now < self.next.load(Ordering::Relaxed) {
            return false;
        }
        self.next.store(now + every, Ordering::Relaxed);
        true
    }

    /// A look that `found` (or not) what is looked for: how many looks in
    /// a row have, this one counted (0 where it did not).
    fn streak(&self, found: bool) -> u32 {
        if !found {
            self.in_a_row.store(0, Ordering::Relaxed);
            return 0;
        }
        self.in_a_row.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Count looks in a row from none again (what they found was acted on).
    fn restart(&self) {
        self.in_a_row.store(0, Ordering::Relaxed);
    }
}

/// What a rank last found of the machine's load (`Segment::cores_taken`).
#[derive(Default)]
pub struct Load {
    /// The machine's CPUs, all of which the host's ranks may run on (0:
    /// they may not, and the load is not looked at).
    cpus: usize,
    /// Looks that found otherwise than `taken`.
    looks: Looks,
    taken: std::sync::atomic::AtomicBool,
}

/// How many tasks the kernel has runnable on the whole machine now, those
/// running included (the fourth field of /proc/loadavg, before its
/// slash), None where it cannot say. One read a look, of a file kept
/// open.
fn runnable_tasks() -> Option<usize> {
    use std::os::unix::fs::FileExt;
    static LOADAVG: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = LOADAVG.get_or_init(|| std::fs::File::open("/proc/loadavg").ok()).as_ref()?;
    let mut buf = [0u8; 128];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    text.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

/// The core this thread runs on, plus 1 (0: unknown).
fn this_cpu() -> u32 {
    // SAFETY: no arguments; a vDSO call on Linux (-1 where it fails).
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu.max(-1) + 1) as u32
}

impl Doorbell {
    /// Whether its rank may want a core (`Segment::awake`) at `now`.
    fn wants_core(&self, now: u64) -> bool {
        self.sleeping.load(Ordering::Relaxed) == 0
            && self.finalizing.load(Ordering::Relaxed) == 0
            && now.saturating_sub(self.dozed_at.load(Ordering::Relaxed)) >= DOZE_FRESH_NS
    }

    /// Whether the rank sleeps on the bell and no one rang it since it
    /// went to sleep (a rank rung wants a core, if it has none yet).
    fn asleep_unrung(&self) -> bool {
        self.sleeping.load(Ordering::Relaxed) != 0
            && self.bell.load(Ordering::Relaxed) == self.slept_on.load(Ordering::Relaxed)
    }

    /// Whether the rank or its progress thread sleeps on the bell.
    fn asleep(&self, order: Ordering) -> bool {
        self.sleeping.load(order) != 0 || self.helper.load(order) != 0
    }

    /// The progress thread sleeps up to `timeout_us` unless the bell's
    /// count moved from `seen` (its flag up since before it read `seen`).
    pub fn sleep_helper(&self, seen: u32, timeout_us: u64) {
        futex_wait(&self.bell, seen, timeout_us);
    }

    /// Wake the rank and its progress thread if they sleep on this bell
    /// (callers that saw neither asleep skip it: it is a system call).
    pub fn wake(&self) {
        self.bell.fetch_add(1, Ordering::Relaxed);
        futex_wake(&self.bell);
    }
}

impl Segment {
    pub fn doorbell(&self, rank: usize) -> &Doorbell {
        // SAFETY: the header page has two lines per rank after the first.
        unsafe { &*(self.base.add(LINE + rank * 2 * LINE) as *const Doorbell) }
    }

    /// Wake `dst` if it sleeps, right after a SeqCst read-modify-write of
    /// what it waits for: that RMW orders this load as the fence in
    /// `ring_bell` does (the sleeper's SeqCst fence precedes it or follows
    /// it in the single total order: either it sees our write, or we see
    /// `sleeping`), so no second fence is needed.
    pub fn ring_bell_after_rmw(&self, dst: usize) {
        let d = self.doorbell(dst);
        if d.asleep(Ordering::SeqCst) {
            d.wake();
        }
    }

    /// After publishing a frame for `dst`: wake it if it sleeps.
    pub fn ring_bell(&self, dst: usize) {
        self.ring_bells([dst]);
    }

    /// `ring_bell` for each of `dsts` after one publication they all
    /// read: one fence for all.
    pub fn ring_bells(&self, dsts: impl IntoIterator<Item = usize>) {
        // SeqCst fence: pairs with the fence in `sleep` (Dekker): either we
        // see `sleeping`, or the sleeper sees our frame when it re-checks.
        // (Measured: dropping it gains nothing visible on ping-pong.)
        std::sync::atomic::fence(Ordering::SeqCst);
        for dst in dsts {
            let d = self.doorbell(dst);
            if d.asleep(Ordering::Relaxed) {
                d.wake();
            }
        }
    }

    /// Sleep until a peer rings our bell, `still_idle` turns false, or the
    /// timeout passes. With `for_room`, peers that take frames from our
    /// rings to them ring too (see `took_frames`).
    pub fn sleep(&self, timeout_us: u64, for_room: bool, still_idle: impl FnOnce() -> bool) {
        let d = self.doorbell(self.me);
        d.sleeping.store(1, Ordering::Relaxed);
        if for_room {
            d.room.store(1, Ordering::Relaxed);
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        let seen = d.bell.load(Ordering::Relaxed);
        d.slept_on.store(seen, Ordering::Relaxed);
        if still_idle() {
            futex_wait(&d.bell, seen, timeout_us);
        }
        d.room.store(0, Ordering::Relaxed);
        d.sleeping.store(0, Ordering::Relaxed);
    }

    /// How many of this host's ranks may want a core at `now` (`now_ns`):
    /// neither asleep on their doorbells, nor yielding in a long wait
    /// (`doze`), nor past MPI_Finalize's barrier.
    pub fn awake(&self, now: u64) -> usize {
        self.wanting(now, |_| true)
    }

    /// `awake`, less the ranks parked in a short collective's wait
    /// (`park`), which hand their core to any rank that wants it: how
    /// many ranks a sender would share the cores with.
    pub fn busy(&self, now: u64) -> usize {
        self.wanting(now, |d| d.parked.load(Ordering::Relaxed) == 0)
    }

    /// The ranks that may want a core at `now` and pass `and`.
    fn wanting(&self, now: u64, and: impl Fn(&Doorbell) -> bool) -> usize {
        (0..self.nranks).map(|r| self.doorbell(r)).filter(|d| d.wants_core(now) && and(d)).count()
    }

    /// This rank yields its core in a long wait: for a moment it does not
    /// count as wanting one (its peers on the host spin instead of
    /// yielding to it).
    pub fn doze(&self) {
        self.doorbell(self.me).dozed_at.store(now_ns(), Ordering::Relaxed);
    }

    /// This rank called MPI_Finalize, everything it published before
    /// visible first (Release): a rank that sees it (`finalized`) and
    /// still lacks what it waits for from this one will never get it.
    pub fn enter_finalize(&self) {
        self.doorbell(self.me).in_finalize.store(1, Ordering::Release);
    }

    /// Whether local rank `q` called MPI_Finalize (`enter_finalize`).
    /// What it published before is visible once this is true.
    pub fn finalized(&self, q: usize) -> bool {
        self.doorbell(q).in_finalize.load(Ordering::Acquire) != 0
    }

    /// Note the core this rank runs on now (`Doorbell::cpu`).
    pub fn note_core(&self) {
        self.doorbell(self.me).cpu.store(this_cpu(), Ordering::Relaxed);
    }

    /// Whether local rank `q` was last seen on the core this rank runs on.
    pub fn shares_core(&self, q: usize) -> bool {
        let cpu = this_cpu();
        cpu != 0 && self.doorbell(q).cpu.load(Ordering::Relaxed) == cpu
    }

    /// This rank waits for a short publication of operation `op` (a
    /// stamp without piece number; 0: it waits no more), having published
    /// its own part of it (`core_spare`).
    pub fn park(&self, op: u64) {
        let d = self.doorbell(self.me);
        if op != 0 {
            d.cpu.store(this_cpu(), Ordering::Relaxed);
        }
        d.parked.store(op, Ordering::Relaxed);
    }

    /// Whether no other rank last seen on this rank's core may need it
    /// while this rank waits for local rank `writer`'s short publication
    /// of operation `op` (at `now`, `now_ns`): each of them wants no core
    /// (`awake`), or is
    /// parked (`park`) in `op` or a later operation of the same
    /// communicator and is not `writer`. A parked rank has published
    /// what it publishes in its operation, so this rank's wait needs
    /// nothing more of it; the ranks it needs run on the other cores.
    pub fn core_spare(&self, writer: usize, op: u64, now: u64) -> bool {
        let cpu = this_cpu();
        self.note_cpu(cpu, now);
        let done_with = |p: u64| p != 0 && p >> 32 == op >> 32 && (op as u32).wrapping_sub(p as u32) as i32 <= 0;
        (0..self.nranks).filter(|&q| q != self.me).all(|q| {
            let d = self.doorbell(q);
            d.cpu.load(Ordering::Relaxed) != cpu
                || (q != writer && done_with(d.parked.load(Ordering::Relaxed)))
                || !d.wants_core(now)
        })
    }

    /// Have waits look at the machine's load (`cores_taken`): the host's
    /// ranks may run on all of its `cpus` CPUs, so the tasks the kernel
    /// has runnable are this job's ranks and other programs on the cores
    /// they run on.
    pub fn watch_load(&mut self, cpus: usize) {
        self.load.cpus = cpus;
    }

    /// Whether other programs keep every core of the machine busy (as
    /// last found, looked at anew `LOAD_LOOK_NS` apart at most, at `now`):
    /// the tasks the kernel has runnable, less this host's ranks not
    /// asleep on their doorbells (or rung since they went to sleep; a
    /// rank waiting otherwise, or its progress thread awake, counts as
    /// another program's for the look),
    /// fill the CPUs, at `LOAD_LOOKS` looks in a row. Then a waiting rank
    /// sleeps on its doorbell rather than yield its core: a yield hands
    /// the core to such a program for the rest of its time slice, a
    /// millisecond or more, while a sleeper that its peer rings is woken
    /// and run at once. Measured, 4 ranks on 2 cores beside two busy
    /// loops, a Barrier loop: 800-1000 us a Barrier yielding, 100-190
    /// sleeping (four plain processes meeting on a futex beside them: 20-250
    /// us; by sched_yield: 2070). Beside one busy loop, yields still win
    /// (a Barrier 6-40 us yielding, 10-100 sleeping, where a rank's
    /// sleep lets a core go idle and its wake-up waits for the core to
    /// wake), and so they do with no other program (2 us, against 50).
    pub fn cores_taken(&self, now: u64) -> bool {
        self.cores_taken_by(now, runnable_tasks)
    }

    /// `cores_taken`, with `runnable` counting the machine's runnable
    /// tasks.
    fn cores_taken_by(&self, now: u64, runnable: impl FnOnce() -> Option<usize>) -> bool {
        let l = &self.load;
        let taken = l.taken.load(Ordering::Relaxed);
        if l.cpus == 0 || !l.looks.due(now, LOAD_LOOK_NS) {
            return taken;
        }
        let Some(runnable) = runnable() else {
            return taken;
        };
        let ours = (0..self.nranks).map(|q| self.doorbell(q)).filter(|d| !d.asleep_unrung()).count();
        if l.looks.streak((runnable.saturating_sub(ours) >= l.cpus) != taken) < LOAD_LOOKS {
            return taken;
        }
        l.looks.restart();
        l.taken.store(!taken, Ordering::Relaxed);
        !taken
    }

    /// Have this host's ranks spread over `cpus` (`spread`): none while
    /// empty.
    pub fn spread_over(&mut self, cpus: Vec<usize>) {
        self.spread_over = cpus;
    }

    /// Called as this rank yields its core at `now`: once in a while
    /// (`LOOK_EVERY_NS`) it looks whether its core is crowded (`crowded`),
    /// and if its last `LOOKS_BEFORE_MOVE` looks found so, it moves to the
    /// least crowded core, unless another rank of the host moved less than
    /// `SETTLE_NS` ago. Left to itself the kernel now and then puts three
    /// of four ranks on one of two cores and leaves them there for a
    /// while; a move corrects that at once, without binding the rank for
    /// good (`runtime::affinity::move_to`).
    pub fn spread(&self, now: u64) {
        if self.spread_over.is_empty() {
            return;
        }
        if !self.spread_looks.due(now, LOOK_EVERY_NS) {
            // (every yield notes the core, a look in `crowded`: a rank
            // that keeps yielding has a fresh note, one at work between
            // its waits a stale one)
            self.note_cpu(this_cpu(), now);
            return;
        }
        // (a rank that just woke up on a busy core may move off by itself)
        let crowded = self.crowded(now);
        if self.spread_looks.streak(crowded.is_some()) < LOOKS_BEFORE_MOVE {
            return;
        }
        let Some(cpu) = crowded else { return };
        let h = self.header();
        let last = h.spread_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SETTLE_NS
            || h.spread_at.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        self.spread_looks.restart();
        if crate::runtime::affinity::move_to(cpu, &self.spread_over) {
            self.note_cpu(cpu as u32 + 1, now);
        }
    }

    /// The least crowded of the CPUs the host's ranks spread over, if at
    /// least two more of the ranks that want a core at `now` (`awake`),
    /// this one counted, were last seen on this rank's core than on that
    /// one; this rank notes its core first. None unless every rank that
    /// wants a core noted its own in the last `FRESH_NS`: one at work
    /// between waits (an application's, computing) may run anywhere by
    /// now.
    fn crowded(&self, now: u64) -> Option<usize> {
        let mine = this_cpu();
        self.note_cpu(mine, now);
        let others =
            || (0..self.nranks).filter(|&q| q != self.me).map(|q| self.doorbell(q)).filter(|d| d.wants_core(now));
        if others().any(|d| now.saturating_sub(d.cpu_at.load(Ordering::Relaxed)) >= FRESH_NS) {
            return None;
        }
        let on = |cpu: u32| others().filter(|d| d.cpu.load(Ordering::Relaxed) == cpu).count() + (cpu == mine) as usize;
        let (least, cpu) = self.spread_over.iter().map(|&c| (on(c as u32 + 1), c)).min()?;
        (on(mine) >= least + 2).then_some(cpu)
    }

    /// This rank, waiting at `now`, runs on `cpu` (plus 1).
    fn note_cpu(&self, cpu: u32, now: u64) {
        let d = self.doorbell(self.me);
        d.cpu.store(cpu, Ordering::Relaxed);
        d.cpu_at.store(now, Ordering::Relaxed);
    }

    /// After emptying slots of `src`'s ring to us: wake `src` if it sleeps
    /// for room. The fence pairs with the one in `sleep` (Dekker): either
    /// we see `room`, or the sleeper sees the emptied slot.
    pub fn took_frames(&self, src: usize) {
        std::sync::atomic::fence(Ordering::SeqCst);
        let d = self.doorbell(src);
        if d.room.load(Ordering::Relaxed) != 0 || d.helper.load(Ordering::Relaxed) != 0 {
            d.wake();
        }
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout_us: u64) {
    let ts = libc::timespec { tv_sec: (timeout_us / 1_000_000) as _, tv_nsec: ((timeout_us % 1_000_000) * 1000) as _ };
    // SAFETY: FUTEX_WAIT on a valid, aligned u32 in a shared mapping (hence
    // not FUTEX_PRIVATE); it returns on wake, timeout, or value change.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, expected, &ts as *const libc::timespec);
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a valid aligned u32; wakes the rank and its
    // progress thread, the most that sleep on one bell.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::affinity;
    use crate::transport::shm::tests::ranks;

    /// Bind this thread to the CPU it runs on: its number.
    fn stay_here() -> usize {
        // SAFETY: sched_getcpu has no arguments.
        let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize;
        assert!(affinity::bind(cpu), "bound to CPU {cpu}");
        cpu
    }

    #[test]
    fn a_rank_finds_its_core_crowded_when_two_more_ranks_that_want_one_are_on_it() {
        let mut all = ranks("crowded", 4);
        let here = stay_here();
        let other = here + 1;
        all[0].spread_over(vec![here, other]);
        let a = &all[0];
        let put = |r: usize, cpu: usize| {
            a.doorbell(r).cpu.store(cpu as u32 + 1, Ordering::Relaxed);
            a.doorbell(r).cpu_at.store(now_ns(), Ordering::Relaxed);
        };
        put(1, here);
        put(2, here);
        put(3, other);
        assert_eq!(a.crowded(now_ns()), Some(other), "three on this core, one on the other");
        assert_eq!(a.doorbell(0).cpu.load(Ordering::Relaxed), here as u32 + 1, "it noted its own core");
        assert_eq!(a.crowded(now_ns() + FRESH_NS), None, "the others' cores, noted long ago, may have changed");
        put(2, other);
        assert_eq!(a.crowded(now_ns()), None, "two and two");
        put(2, here);
        a.doorbell(2).sleeping.store(1, Ordering::Relaxed);
        assert_eq!(a.crowded(now_ns()), None, "a sleeping rank wants no core: two and one");
        put(3, here);
        assert_eq!(a.crowded(now_ns()), Some(other), "three on this core, none on the other");
        a.doorbell(0).sleeping.store(1, Ordering::Relaxed);
        assert_eq!(a.crowded(now_ns()), Some(other), "the rank that looks counts, whatever its doorbell says");
        all[0].spread_over(Vec::new());
        assert_eq!(all[0].crowded(now_ns()), None, "not spread at all");
    }

    #[test]
    fn a_sleeping_progress_thread_is_rung_and_woken_but_its_rank_still_wants_a_core() {
        let all = ranks("helper", 2);
        let (a, b) = (&all[0], &all[1]);
        let d = b.doorbell(1);
        d.helper.store(1, Ordering::Relaxed);
        let seen = d.bell.load(Ordering::Relaxed);
        assert!(d.wants_core(now_ns()), "the program computes beside its sleeping progress thread");
        std::thread::scope(|s| {
            let sleeper = s.spawn(|| {
                let t = std::time::Instant::now();
                d.sleep_helper(seen, 10_000_000);
                t.elapsed()
            });
            // ring until it has slept and woken: a publication, then a
            // peer taking frames (it may wait for room)
            std::thread::sleep(std::time::Duration::from_millis(50));
            a.ring_bell(1);
            assert!(sleeper.join().expect("the sleeper") < std::time::Duration::from_secs(5), "a ring woke it");
        });
        let rung = d.bell.load(Ordering::Relaxed);
        assert_ne!(rung, seen, "the ring counted");
        a.took_frames(1);
        assert_ne!(d.bell.load(Ordering::Relaxed), rung, "taking its frames rings it too");
        d.helper.store(0, Ordering::Relaxed);
        let quiet = d.bell.load(Ordering::Relaxed);
        a.ring_bell(1);
        a.took_frames(1);
        assert_eq!(d.bell.load(Ordering::Relaxed), quiet, "awake, nobody rings it");
    }

    /// Three ranks, the first spread over this thread's CPUs (none where
    /// it has fewer than two: there is nowhere to move), and those CPUs.
    fn spread_ranks(what: &str) -> Option<(Vec<Segment>, Vec<usize>)> {
        let cpus = affinity::mask().expect("this thread's CPUs");
        if cpus.len() < 2 {
            return None;
        }
        let mut all = ranks(what, 3);
        all[0].spread_over(cpus.clone());
        Some((all, cpus))
    }

    #[test]
    fn a_rank_on_a_crowded_core_moves_and_stays_free_to_move() {
        let Some((all, cpus)) = spread_ranks("spread") else { return };
        let a = &all[0];
        // every other rank on this thread's core, were it not for the
        // moment it takes to look
        let crowd = || {
            for r in 1..3 {
                a.doorbell(r).cpu.store(this_cpu(), Ordering::Relaxed);
                a.doorbell(r).cpu_at.store(now_ns(), Ordering::Relaxed);
            }
        };
        // the looks before a move, a millisecond apart (here: at once)
        let look_again = || {
            for _ in 1..LOOKS_BEFORE_MOVE {
                a.spread_looks.next.store(0, Ordering::Relaxed);
                crowd();
                a.spread(now_ns());
            }
        };
        crowd();
        a.spread(now_ns());
        assert_eq!(a.header().spread_at.load(Ordering::Relaxed), 0, "no move at the first look");
        // (the kernel may move this thread again at any time: what
        // `spread` noted tells whether it moved)
        let here = a.doorbell(0).cpu.load(Ordering::Relaxed);
        look_again();
        let moved = a.doorbell(0).cpu.load(Ordering::Relaxed);
        assert!(moved != here && moved != 0, "moved to an empty core, not {here}: {moved}");
        assert_eq!(affinity::mask(), Some(cpus), "and may run anywhere again");
        let moved_at = a.header().spread_at.load(Ordering::Relaxed);
        assert_ne!(moved_at, 0);
        look_again();
        assert_eq!(a.header().spread_at.load(Ordering::Relaxed), moved_at, "no second move before the others settle");
    }

    #[test]
    fn every_yield_notes_the_core_and_only_enough_crowded_looks_move() {
        let Some((all, _)) = spread_ranks("looks") else { return };
        let a = &all[0];
        a.spread_looks.next.store(u64::MAX, Ordering::Relaxed);
        a.spread(12345);
        assert_eq!(a.doorbell(0).cpu_at.load(Ordering::Relaxed), 12345, "noted between looks");
        assert_ne!(a.doorbell(0).cpu.load(Ordering::Relaxed), 0);
        for look in 1..LOOKS_BEFORE_MOVE {
            for r in 1..3 {
                a.doorbell(r).cpu.store(this_cpu(), Ordering::Relaxed);
                a.doorbell(r).cpu_at.store(now_ns(), Ordering::Relaxed);
            }
            a.spread_looks.next.store(0, Ordering::Relaxed);
            a.spread(now_ns());
            assert_eq!(a.header().spread_at.load(Ordering::Relaxed), 0, "no move at crowded look {look}");
        }
        // a look that finds the core no longer crowded starts the count over
        for r in 1..3 {
            a.doorbell(r).sleeping.store(1, Ordering::Relaxed);
        }
        a.spread_looks.next.store(0, Ordering::Relaxed);
        a.spread(now_ns());
        assert_eq!(a.spread_looks.in_a_row.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_kernel_counts_at_least_this_thread_runnable() {
        assert!(runnable_tasks().is_some_and(|n| n >= 1), "{:?}", std::fs::read_to_string("/proc/loadavg"));
    }

    #[test]
    fn cores_are_taken_once_other_programs_fill_them_at_looks_in_a_row() {
        let mut all = ranks("load", 4);
        let never = || -> Option<usize> { panic!("no look") };
        assert!(!all[0].cores_taken_by(1, never), "not watched: never looks");
        all[0].watch_load(2);
        let a = &all[0];
        // a look a LOAD_LOOK_NS from the last, finding `runnable` tasks
        let t = std::cell::Cell::new(0);
        let look = |runnable: usize| {
            t.set(t.get() + LOAD_LOOK_NS);
            a.cores_taken_by(t.get(), || Some(runnable))
        };
        assert!(!look(5), "four ranks awake and one program: a core to spare");
        assert!(!look(6), "two programs beside the four ranks, at one look");
        assert!(look(6), "and at a second look in a row");
        assert!(a.cores_taken_by(t.get() + 1, never), "between looks, the last verdict");
        assert!(look(5), "one look finding a core spare");
        assert!(look(6), "and the count of looks starts over");
        assert!(look(5));
        assert!(!look(5), "two looks in a row");
        assert!(!look(0), "not even the looking rank");
        assert!(!a.cores_taken_by(t.get() + 2 * LOAD_LOOK_NS, || None), "no count, no change");
        // ranks 2 and 3 asleep: two tasks besides ranks 0 and 1 take both cores
        for r in [2, 3] {
            let d = a.doorbell(r);
            d.sleeping.store(1, Ordering::Relaxed);
            d.slept_on.store(d.bell.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        t.set(t.get() + 2 * LOAD_LOOK_NS);
        assert!(!look(4));
        assert!(look(4), "ranks asleep are not runnable");
        // rank 3 rung: woken, it may wait for a core, and counts as a rank
        a.ring_bell(3);
        assert!(look(4));
        assert!(!look(4), "one other program and three ranks: a core to spare");
    }

    #[test]
    fn a_dozing_rank_is_not_awake_for_a_moment() {
        let [a, b] = <[Segment; 2]>::try_from(ranks("doze", 2)).ok().expect("two ranks");
        assert_eq!(a.awake(now_ns()), 2);
        // the two calls may lie more than DOZE_FRESH_NS apart on a loaded
        // machine: seeing it once is enough
        assert!((0..1000).any(|_| {
            b.doze();
            a.awake(now_ns()) == 1
        }));
        std::thread::sleep(std::time::Duration::from_nanos(2 * DOZE_FRESH_NS));
        assert_eq!(a.awake(now_ns()), 2, "awake again once its doze is stale");
    }

    #[test]
    fn a_core_is_spare_while_the_others_on_it_wait_in_the_same_or_a_later_operation() {
        let [a, b, c] = <[Segment; 3]>::try_from(ranks("spare", 3)).ok().expect("three ranks");
        // this thread stays on one core: ranks b and a both note it
        stay_here();
        let op = |ctx: u64, seq: u32| ctx << 32 | seq as u64;
        let elsewhere = |s: &Segment, r: usize| s.doorbell(r).cpu.store(u32::MAX, Ordering::Relaxed);
        // a waits for c's part of operation 7 of context 5; b parks on a's
        // core, c runs on another
        elsewhere(&c, 2);
        let spare = |b_parked: u64| {
            b.park(b_parked);
            a.core_spare(2, op(5, 7), now_ns())
        };
        assert!(spare(op(5, 7)), "b published its part of the same operation: a may spin");
        assert!(spare(op(5, 8)), "b is ahead");
        assert!(!spare(op(5, 6)), "b is behind: it may still have to publish");
        assert!(!spare(op(6, 7)), "another communicator's operation: no telling");
        b.park(op(5, 0));
        assert!(a.core_spare(2, op(5, u32::MAX), now_ns()), "operation numbers wrap: 0 follows 2^32 - 1");
        assert!(!a.core_spare(1, op(5, 7), now_ns()), "b is what a waits for");
        b.park(0);
        assert!(!a.core_spare(2, op(5, 7), now_ns()), "b is not parked: it may be working");
        b.doorbell(1).finalizing.store(1, Ordering::Relaxed);
        assert!(a.core_spare(2, op(5, 7), now_ns()), "b wants no core");
        b.doorbell(1).finalizing.store(0, Ordering::Relaxed);
        elsewhere(&b, 1);
        assert!(a.core_spare(2, op(5, 7), now_ns()), "b runs on another core");
    }
}
