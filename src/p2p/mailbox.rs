//! Short collectives through the mailboxes (`transport::shm::Mailbox`):
//! a rank publishes up to `MAILBOX_BYTES` under a stamp naming the
//! operation, in the next of its `MAILBOX_SLOTS` slots; its readers find
//! the stamp, copy the data out in place and count their reads; a slot
//! is written again only once every read of its previous publication is
//! done, so a rank runs at most that many publications ahead of its
//! slowest reader. No envelope, no matching, no request: a
//! publication costs the writer one pass over the data and a store, a
//! read one pass and an atomic add. Waiting keeps the point-to-point
//! traffic moving, and sleeps like any wait when a rank has nothing to do.

use super::Engine;
use crate::runtime::backoff::Backoff;
use crate::transport::shm::Segment;
pub use crate::transport::shm::{MAILBOX_BYTES, MAILBOX_SLOTS};
use std::sync::atomic::Ordering;

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

    /// Publish `data` (at most `MAILBOX_BYTES`) under `stamp` (never 0) for
    /// the world ranks `readers` (all on this host).
    pub fn publish(&mut self, stamp: u64, data: &[u8], readers: impl IntoIterator<Item = usize>) {
        debug_assert!(data.len() <= MAILBOX_BYTES && stamp != 0);
        let k = (self.mailbox_published % MAILBOX_SLOTS as u64) as usize;
        let (me, reads) = (self.seg.me, self.mailbox_reads[k]);
        let what = || format!("the readers of mailbox slot {k} (a short collective) to finish reading");
        self.wait_until(&what, |seg| seg.mailbox(me, k).acks.load(Ordering::Acquire) >= reads);
        let m = self.seg.mailbox(me, k);
        // SAFETY: our own mailbox, which no one reads until the stamp below
        // names this publication; `data` fits (checked by the callers).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), m.data(data.len()), data.len()) };
        m.len.store(data.len() as u64, Ordering::Relaxed);
        m.stamp.store(stamp, Ordering::Release);
        self.mailbox_published += 1;
        for r in readers {
            self.mailbox_reads[k] += 1;
            self.seg.ring_bell(self.local_index(r));
        }
    }

    /// A communicator with collective context `ctx` is freed, and the
    /// context may name another one soon, whose operations will be
    /// numbered from 1 again: once its publications here are read, wipe
    /// their stamps, so that none is taken for the new communicator's.
    pub fn retire_mailbox(&mut self, ctx: u32) {
        let me = self.seg.me;
        for k in 0..MAILBOX_SLOTS {
            if self.seg.mailbox(me, k).stamp.load(Ordering::Relaxed) >> 32 != ctx as u64 {
                continue;
            }
            let reads = self.mailbox_reads[k];
            let what = || format!("the readers of mailbox slot {k} before the communicator is freed");
            self.wait_until(&what, |seg| seg.mailbox(me, k).acks.load(Ordering::Acquire) >= reads);
            self.seg.mailbox(me, k).stamp.store(0, Ordering::Release);
        }
    }

    /// Wait for world rank `from` (on this host) to publish `stamp`, copy it into `out`
    /// (as much as fits) and count the read; the length published.
    pub fn read_mailbox(&mut self, from: usize, stamp: u64, out: &mut [u8]) -> usize {
        self.read_mailbox_at(from, stamp, 0, out)
    }

    /// As `read_mailbox`, from byte `at` of the publication on.
    pub fn read_mailbox_at(&mut self, from: usize, stamp: u64, at: usize, out: &mut [u8]) -> usize {
        // publications fill the slots in turn: look after the last one first
        let next = (self.mailbox_seen[from] + 1) % MAILBOX_SLOTS;
        let (world, from) = (from, self.local_index(from));
        let find = |seg: &Segment| {
            (0..MAILBOX_SLOTS)
                .map(|i| (next + i) % MAILBOX_SLOTS)
                .find(|&k| seg.mailbox(from, k).stamp.load(Ordering::Acquire) == stamp)
        };
        let what = || {
            format!(
                "world rank {world} to publish short collective {stamp:#x} (context {}, operation {})",
                stamp >> 32,
                stamp & 0xffff_ffff
            )
        };
        self.wait_until(&what, |seg| find(seg).is_some());
        let Some(k) = find(&self.seg) else { unreachable!("the stamp was found") };
        self.mailbox_seen[world] = k;
        let m = self.seg.mailbox(from, k);
        let len = m.len.load(Ordering::Relaxed) as usize;
        let n = len.saturating_sub(at).min(out.len());
        // SAFETY: the publication stays until we count our read below;
        // `at + n` is within it.
        unsafe { std::ptr::copy_nonoverlapping(m.data(len).add(at), out.as_mut_ptr(), n) };
        m.acks.fetch_add(1, Ordering::SeqCst);
        self.seg.ring_bell_after_rmw(from);
        len
    }
}
