//! Blocking collectives through the mailboxes (`transport::shm::Mailbox`):
//! a rank publishes up to a slot's bytes under a stamp naming the
//! operation (and, in the long mailbox, the piece of it), in the next
//! slot of that mailbox; its readers find the stamp, copy the data out in
//! place and count their reads; a slot is written again only once every
//! read of its previous publication is done, so a rank runs at most a
//! mailbox's slots ahead of its slowest reader. No envelope, no
//! matching, no request: a publication costs the writer one pass over the
//! data and a store, a read one pass and an atomic add. Waiting keeps the
//! point-to-point traffic moving, and sleeps like any wait when a rank
//! has nothing to do.

use super::Engine;
use crate::runtime::backoff::Backoff;
pub use crate::transport::shm::Boxes;
use crate::transport::shm::Segment;
use std::sync::atomic::Ordering;

/// A rank's bookkeeping of one of its mailboxes.
pub struct Tally {
    /// Per slot: the reads expected so far.
    reads: Vec<u64>,
    /// Publications made.
    published: u64,
    /// Per world rank: the slot of its mailbox read last.
    seen: Vec<usize>,
}

impl Tally {
    pub fn new(kind: Boxes, ranks: usize) -> Tally {
        Tally { reads: vec![0; kind.slots()], published: 0, seen: vec![kind.slots() - 1; ranks] }
    }
}

/// The context of a stamp (`coll::shm::stamp`; the long mailbox's pieces
/// number themselves above it).
fn context_of(stamp: u64) -> u64 {
    (stamp >> 32) & 0xffff
}

impl Engine {
    /// Make progress until `done` holds; `what` names it for the SIGUSR2
    /// dump.
    fn wait_until(&mut self, what: &dyn Fn() -> String, done: impl Fn(&Segment) -> bool) {
        let mut backoff = Backoff::new();
        loop {
            if done(&self.seg) {
                return;
            }
            self.progress();
            if done(&self.seg) {
                return;
            }
            self.idle_unless(&mut backoff, || Some(what()), &done);
        }
    }

    fn tally(&mut self, kind: Boxes) -> &mut Tally {
        &mut self.mailboxes[kind as usize]
    }

    /// Wait until the readers of slot `k` of our `kind` mailbox are done.
    fn wait_read(&mut self, kind: Boxes, k: usize, why: &str) {
        let (me, reads) = (self.seg.me, self.tally(kind).reads[k]);
        let what = || format!("the readers of {kind:?} mailbox slot {k} ({why}) to finish reading");
        self.wait_until(&what, |seg| seg.mailbox(kind, me, k).acks.load(Ordering::Acquire) >= reads);
    }

    /// Publish `data` (at most `kind.bytes()`) under `stamp` (never 0) in
    /// our `kind` mailbox for the world ranks `readers` (all on this host).
    pub fn publish(&mut self, kind: Boxes, stamp: u64, data: &[u8], readers: impl IntoIterator<Item = usize>) {
        debug_assert!(data.len() <= kind.bytes() && stamp != 0);
        let t = self.tally(kind);
        let k = (t.published % kind.slots() as u64) as usize;
        self.wait_read(kind, k, "a blocking collective");
        let m = self.seg.mailbox(kind, self.seg.me, k);
        // SAFETY: our own mailbox, which no one reads until the stamp below
        // names this publication; `data` fits (checked by the callers).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), m.data(data.len()), data.len()) };
        m.len.store(data.len() as u64, Ordering::Relaxed);
        m.stamp.store(stamp, Ordering::Release);
        self.tally(kind).published += 1;
        for r in readers {
            self.tally(kind).reads[k] += 1;
            self.seg.ring_bell(self.local_index(r));
        }
    }

    /// A communicator with collective context `ctx` is freed, and the
    /// context may name another one soon, whose operations will be
    /// numbered from 1 again: once its publications here are read, wipe
    /// their stamps, so that none is taken for the new communicator's.
    pub fn retire_mailbox(&mut self, ctx: u32) {
        let me = self.seg.me;
        for kind in [Boxes::Short, Boxes::Long] {
            for k in 0..kind.slots() {
                if context_of(self.seg.mailbox(kind, me, k).stamp.load(Ordering::Relaxed)) != ctx as u64 {
                    continue;
                }
                self.wait_read(kind, k, "before the communicator is freed");
                self.seg.mailbox(kind, me, k).stamp.store(0, Ordering::Release);
            }
        }
    }

    /// Wait for world rank `from` (on this host) to publish `stamp` in its
    /// `kind` mailbox, copy it from byte `at` on into `out` (as much as
    /// fits) and count the read; the length published.
    pub fn read_mailbox(&mut self, kind: Boxes, from: usize, stamp: u64, at: usize, out: &mut [u8]) -> usize {
        let (from, k) = self.await_publication(kind, from, stamp);
        let m = self.seg.mailbox(kind, from, k);
        let len = m.len.load(Ordering::Relaxed) as usize;
        let n = len.saturating_sub(at).min(out.len());
        // SAFETY: the publication stays until we count our read below;
        // `at + n` is within it.
        unsafe { std::ptr::copy_nonoverlapping(m.data(len).add(at), out.as_mut_ptr(), n) };
        self.count_read(kind, from, k);
        len
    }

    /// Wait for world rank `from` (on this host) to publish `stamp` in its
    /// `kind` mailbox, hand the publication to `f` where it lies, then
    /// count the read.
    pub fn use_mailbox<T>(&mut self, kind: Boxes, from: usize, stamp: u64, f: impl FnOnce(&[u8]) -> T) -> T {
        let (from, k) = self.await_publication(kind, from, stamp);
        let m = self.seg.mailbox(kind, from, k);
        let len = m.len.load(Ordering::Relaxed) as usize;
        // SAFETY: the publication, `len` bytes, stays as it is until we
        // count our read below (its writer waits for that).
        let got = f(unsafe { std::slice::from_raw_parts(m.data(len), len) });
        self.count_read(kind, from, k);
        got
    }

    /// Wait for world rank `from`'s publication `stamp` in its `kind`
    /// mailbox: its local index and the slot.
    fn await_publication(&mut self, kind: Boxes, from: usize, stamp: u64) -> (usize, usize) {
        // publications fill the slots in turn: look after the last one first
        let next = (self.tally(kind).seen[from] + 1) % kind.slots();
        let (world, from) = (from, self.local_index(from));
        let find = |seg: &Segment| {
            (0..kind.slots())
                .map(|i| (next + i) % kind.slots())
                .find(|&k| seg.mailbox(kind, from, k).stamp.load(Ordering::Acquire) == stamp)
        };
        let what = || {
            format!(
                "world rank {world} to publish collective {stamp:#x} in its {kind:?} mailbox (context {}, operation {})",
                context_of(stamp),
                stamp & 0xffff_ffff
            )
        };
        self.wait_until(&what, |seg| find(seg).is_some());
        let Some(k) = find(&self.seg) else { unreachable!("the stamp was found") };
        self.tally(kind).seen[world] = k;
        (from, k)
    }

    /// Our read of slot `k` of local rank `from`'s `kind` mailbox is done.
    fn count_read(&self, kind: Boxes, from: usize, k: usize) {
        self.seg.mailbox(kind, from, k).acks.fetch_add(1, Ordering::SeqCst);
        self.seg.ring_bell_after_rmw(from);
    }
}
