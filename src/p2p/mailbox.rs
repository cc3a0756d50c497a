//! Blocking collectives through the mailboxes (`transport::shm::Mailbox`):
//! a rank publishes up to a slot's bytes under a stamp naming the
//! operation (and, in the long mailbox, the piece of it), in the next
//! slot of that mailbox; its readers find the stamp, copy the data out in
//! place and move their read mark for that writer (`Segment::note_read`,
//! in a row of their own: the number of the last publication read); a
//! slot is written again only once every reader of its previous
//! publication has marked it read, so a rank runs at most a mailbox's
//! slots ahead of its slowest reader. No envelope, no matching, no
//! request: a publication costs the writer one pass over the data and a
//! store (and, once in many, a look at its readers' marks), a read one
//! pass and an atomic on a line of the reader's own. Waiting keeps the
//! point-to-point traffic moving, and sleeps like any wait when a rank has
//! nothing to do.
//!
//! A reader reads a writer's publications in order; a program that runs
//! collectives of two communicators in different orders on their common
//! members (unsafe: it hangs wherever collectives synchronize) may read an
//! older one after a newer, and its writer, which takes the mark for all
//! before it, may then write the older one's slot over once it is a
//! mailbox's slots ahead.

use super::waits::ASTRAY_EVERY;
use super::Engine;
use crate::err;
use crate::error::MpiResult;
pub use crate::transport::shm::Boxes;
use crate::transport::shm::{Segment, LAST};
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What a reader learns of a publication besides its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    /// Its bytes.
    pub len: usize,
    /// The bytes of the whole stream a long publication is a piece of
    /// (a short one is its own stream).
    pub stream: usize,
    /// Whether it is its stream's last piece.
    pub last: bool,
    /// Nothing was read: the writer published this operation in its other
    /// mailbox (its part has another size, so it took the other path);
    /// `len` and `stream` are its stream's size there.
    pub astray: bool,
}

/// Where an awaited publication was found.
enum Found {
    /// Slot `k` of the writer's (local index) mailbox.
    Here(usize, usize),
    /// The writer published the operation in its other mailbox instead.
    Astray(Seen),
}

/// Tags of user-started collectives going as point-to-point messages:
/// `TAG_USER + (number % TAG_SPAN)`, with the communicator's collective
/// number that also names the operation in the mailboxes
/// (`coll::shm::stamp`).
pub const TAG_USER: i32 = 1 << 21;
const TAG_SPAN: u32 = 1 << 30;

/// The point-to-point tag of a communicator's collective number `seq`.
pub fn user_tag(seq: u32) -> i32 {
    TAG_USER + (seq % TAG_SPAN) as i32
}

/// The tag of the messages a collective through the mailboxes sends
/// beside its publications (an alltoallv's blocks that do not fit):
/// negative, apart from `user_tag`'s, which a reader watches for as the
/// sign of a writer that took the other path.
pub fn aside_tag(seq: u32) -> i32 {
    -2 - (seq % TAG_SPAN) as i32
}

/// The bits of a stamp naming the operation (a long publication's piece
/// number above them aside).
pub(super) const OPERATION: u64 = (1 << 48) - 1;

/// How long a reader waits, at least, between full looks at every slot of
/// its writer's mailbox (for a publication older than the one it read
/// last, which only unsafe programs await). A full look loads every slot
/// header, lines the writer's core wrote; paced by looks alone, it comes
/// often in the many short waits of oversubscribed ranks, and costs more
/// the deeper the mailbox (measured, 4 ranks on 2 cores, 128 short slots,
/// medians of 20 interleaved rounds: allreduce of 8 B 6.4 us with a full
/// look every 64 looks, 5.9 with one every 500 us at most).
const FULL_LOOK_EVERY: Duration = Duration::from_micros(500);

/// A rank's bookkeeping of one of its mailboxes.
pub struct Tally {
    /// Per slot: the number of the publication in it and its readers
    /// (local ranks), who must be done with it before the slot is written
    /// again (none: nothing to wait for).
    slots: Vec<(u64, Vec<usize>)>,
    /// Per local rank: the number below which it is known to have read
    /// all our publications for it (its read mark, as last looked at).
    done: Vec<u64>,
    /// Publications made.
    published: u64,
    /// Per world rank: the number of its publication read last, plus 1.
    after: Vec<u64>,
}

impl Tally {
    pub fn new(kind: Boxes, ranks: usize) -> Tally {
        Tally { slots: vec![(0, Vec::new()); kind.slots()], done: vec![0; ranks], published: 0, after: vec![0; ranks] }
    }
}

/// The context of a stamp (`coll::shm::stamp`; the long mailbox's pieces
/// number themselves above it).
fn context_of(stamp: u64) -> u64 {
    (stamp >> 32) & 0xffff
}

/// Where a writer awaited in one mailbox went instead.
enum Elsewhere {
    /// The same operation in its other mailbox.
    Mailbox(Seen),
    /// Point-to-point messages from this world rank.
    Messages(usize),
    /// Its arrival line, as a collective of this shape (`arrival`).
    Arrival(u64),
}

impl Engine {
    fn tally(&mut self, kind: Boxes) -> &mut Tally {
        &mut self.mailboxes[kind as usize]
    }

    /// Wait until the readers of slot `k` of our `kind` mailbox are done
    /// with what is in it. A reader's mark is looked at only when what we
    /// knew of it does not suffice: most often, with many slots, it does.
    #[inline]
    fn wait_read(&mut self, kind: Boxes, k: usize, why: &str) -> MpiResult<()> {
        let me = self.seg.me;
        for i in 0..self.tally(kind).slots[k].1.len() {
            let (number, r) = (self.tally(kind).slots[k].0, self.tally(kind).slots[k].1[i]);
            if self.tally(kind).done[r] > number {
                continue;
            }
            let mut mark = self.seg.read_through(r, kind, me);
            if mark <= number {
                // only this slot's publication: the reader may be unable to
                // read our later ones until we read its (a pipeline's
                // pieces published ahead, every rank reusing a slot)
                let what = || format!("local rank {r}, reader of {kind:?} mailbox slot {k} ({why}), to finish reading");
                // (on failure the readers stay: a later wait waits again)
                self.wait_until(&what, |seg| seg.read_through(r, kind, me) > number)?;
                mark = self.seg.read_through(r, kind, me);
            }
            // all it has read so far: the next slots need no look
            self.tally(kind).done[r] = mark;
        }
        self.tally(kind).slots[k].1.clear();
        Ok(())
    }

    /// Publish `data` (at most `kind.bytes()`) under `stamp` (never 0) in
    /// our `kind` mailbox for the world ranks `readers` (all on this host).
    pub fn publish(
        &mut self,
        kind: Boxes,
        stamp: u64,
        data: &[u8],
        readers: impl IntoIterator<Item = usize>,
    ) -> MpiResult<()> {
        self.publish_in(kind, stamp, data.len(), None, readers, |to| to.copy_from_slice(data))
    }

    /// `publish` of `len` bytes that `fill` writes in place (no copy
    /// built beforehand).
    pub fn publish_filled(
        &mut self,
        kind: Boxes,
        stamp: u64,
        len: usize,
        readers: impl IntoIterator<Item = usize>,
        fill: impl FnOnce(&mut [u8]),
    ) -> MpiResult<()> {
        self.publish_in(kind, stamp, len, None, readers, fill)
    }

    /// Publish `data` in the long mailbox as a piece of a stream of
    /// `stream` bytes (its last piece if `last`): readers check the size
    /// they expect against it, and follow a stream of another size to its
    /// end.
    pub fn publish_piece(
        &mut self,
        stamp: u64,
        data: &[u8],
        stream: usize,
        last: bool,
        readers: impl IntoIterator<Item = usize>,
    ) -> MpiResult<()> {
        self.publish_piece_filled(stamp, data.len(), stream, last, readers, |to| to.copy_from_slice(data))
    }

    /// `publish_piece` of `len` bytes that `fill` writes in place.
    pub fn publish_piece_filled(
        &mut self,
        stamp: u64,
        len: usize,
        stream: usize,
        last: bool,
        readers: impl IntoIterator<Item = usize>,
        fill: impl FnOnce(&mut [u8]),
    ) -> MpiResult<()> {
        let about = stream as u64 | if last { LAST } else { 0 };
        self.publish_in(Boxes::Long, stamp, len, Some(about), readers, fill)
    }

    #[inline]
    fn publish_in(
        &mut self,
        kind: Boxes,
        stamp: u64,
        len: usize,
        about: Option<u64>,
        readers: impl IntoIterator<Item = usize>,
        fill: impl FnOnce(&mut [u8]),
    ) -> MpiResult<()> {
        assert!(len <= kind.bytes() && stamp != 0);
        let mut readers = readers.into_iter().peekable();
        if readers.peek().is_none() {
            // (a communicator of one rank) no one would read it
            return Ok(());
        }
        let number = self.tally(kind).published;
        let k = (number % kind.slots() as u64) as usize;
        self.wait_read(kind, k, "a blocking collective")?;
        let m = self.seg.mailbox(kind, self.seg.me, k);
        // SAFETY: our own mailbox, which no one reads until the stamp below
        // names this publication; `len` fits (asserted).
        fill(unsafe { std::slice::from_raw_parts_mut(m.data(len), len) });
        m.len.store(len as u64, Ordering::Relaxed);
        if let Some(about) = about {
            m.stream.store(about, Ordering::Relaxed);
        }
        m.number.store(number, Ordering::Relaxed);
        m.stamp.store(stamp, Ordering::Release);
        self.tally(kind).published = number + 1;
        self.seg.set_published(kind, number + 1);
        self.tally(kind).slots[k].0 = number;
        for r in readers {
            let r = self.local_index(r);
            self.tally(kind).slots[k].1.push(r);
        }
        self.seg.ring_bells(self.mailboxes[kind as usize].slots[k].1.iter().copied());
        // the next slot's header lines were last read by its readers'
        // cores (the stamp): fetch them for writing now, while the caller
        // goes on, not when the next publication stalls on them (measured,
        // 2 ranks, bcast of 8 B in a loop, medians of 6 alternating runs:
        // 0.154 -> 0.114 us; alltoall and allreduce of 8 B 0.255 -> 0.23,
        // 0.29 -> 0.26). The second line too, though a short publication
        // leaves it alone: scatter of 8 B 0.122 -> 0.115 us, gather 0.095
        // -> 0.086 (the pair of lines travels together, it seems).
        let next = self.seg.mailbox(kind, self.seg.me, (k + 1) % kind.slots());
        crate::transport::shm::prefetch_write(&next.stamp as *const _ as *const u8);
        crate::transport::shm::prefetch_write(&next.stream as *const _ as *const u8);
        Ok(())
    }

    /// A communicator with collective context `ctx` is freed, and the
    /// context may name another one soon, whose operations will be
    /// numbered from 1 again: once its publications here are read, wipe
    /// their stamps, so that none is taken for the new communicator's.
    pub fn retire_mailbox(&mut self, ctx: u32) {
        let me = self.seg.me;
        if self.seg.spoilt() != 0 {
            // unused from now on, and what is in them may never be read
            return;
        }
        for kind in [Boxes::Short, Boxes::Long] {
            for k in 0..kind.slots() {
                if context_of(self.seg.mailbox(kind, me, k).stamp.load(Ordering::Relaxed)) != ctx as u64 {
                    continue;
                }
                if self.wait_read(kind, k, "before the communicator is freed").is_err() {
                    return;
                }
                self.seg.mailbox(kind, me, k).stamp.store(0, Ordering::Release);
            }
        }
    }

    /// Wait for world rank `from` (on this host) to publish `stamp` in its
    /// `kind` mailbox, copy it from byte `at` on into `out` (as much as
    /// fits) and count the read.
    ///
    /// A writer found to have taken the other path (`Seen::astray`) leaves
    /// the members out of step: the mailboxes are given up.
    pub fn read_mailbox(&mut self, kind: Boxes, from: usize, stamp: u64, at: usize, out: &mut [u8]) -> MpiResult<Seen> {
        self.read_or_give_up(kind, from, stamp, at, out, kind == Boxes::Short)
    }

    /// `read_mailbox` of a publication that is its writer's whole part
    /// of a collective in which this rank has published its own whole
    /// part already: even in the long mailbox it waits parked, as a short
    /// collective's reader does (`wait_parked`), its core's other ranks
    /// needing nothing more of it.
    pub fn read_whole(&mut self, kind: Boxes, from: usize, stamp: u64, at: usize, out: &mut [u8]) -> MpiResult<Seen> {
        self.read_or_give_up(kind, from, stamp, at, out, true)
    }

    /// `read_watching` that gives the mailboxes up on a writer astray.
    fn read_or_give_up(
        &mut self,
        kind: Boxes,
        from: usize,
        stamp: u64,
        at: usize,
        out: &mut [u8],
        parks: bool,
    ) -> MpiResult<Seen> {
        let seen = self.read_watching(kind, from, stamp, at, out, true, parks)?;
        if seen.astray {
            self.give_up_mailboxes(stamp);
        }
        Ok(seen)
    }

    /// `read_mailbox` for a reader that follows a writer astray (reads
    /// its stream in the other mailbox to its end, so that the members stay
    /// in step): nothing given up.
    #[inline]
    pub fn read_following(
        &mut self,
        kind: Boxes,
        from: usize,
        stamp: u64,
        at: usize,
        out: &mut [u8],
    ) -> MpiResult<Seen> {
        self.read_watching(kind, from, stamp, at, out, true, kind == Boxes::Short)
    }

    /// `read_mailbox` of a publication that the members agreed beforehand
    /// goes in this mailbox (an alltoallv's blocks outside its tables,
    /// whose operation has a publication in the other mailbox too):
    /// no watch for a writer astray.
    pub fn read_agreed(&mut self, kind: Boxes, from: usize, stamp: u64, at: usize, out: &mut [u8]) -> MpiResult<Seen> {
        self.read_watching(kind, from, stamp, at, out, false, kind == Boxes::Short)
    }

    /// `read_following`, watching for a writer astray or not, waiting
    /// parked or not (`await_publication`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn read_watching(
        &mut self,
        kind: Boxes,
        from: usize,
        stamp: u64,
        at: usize,
        out: &mut [u8],
        watch: bool,
        parks: bool,
    ) -> MpiResult<Seen> {
        let (from, k) = match self.await_publication(kind, from, stamp, watch, parks)? {
            Found::Here(from, k) => (from, k),
            Found::Astray(seen) => return Ok(seen),
        };
        let m = self.seg.mailbox(kind, from, k);
        let seen = seen(kind, &m);
        let n = seen.len.saturating_sub(at).min(out.len());
        // SAFETY: the publication stays until we count our read below;
        // `at + n` is within it.
        unsafe { std::ptr::copy_nonoverlapping(m.data(seen.len).add(at), out.as_mut_ptr(), n) };
        self.count_read(kind, from, k);
        Ok(seen)
    }

    /// Wait for world rank `from` (on this host) to publish `stamp` in its
    /// `kind` mailbox, hand the publication to `f` where it lies, then
    /// count the read (a writer astray: `f` gets nothing, as
    /// `read_following`).
    pub fn use_mailbox<T>(
        &mut self,
        kind: Boxes,
        from: usize,
        stamp: u64,
        f: impl FnOnce(&[u8], Seen) -> T,
    ) -> MpiResult<T> {
        let (from, k) = match self.await_publication(kind, from, stamp, true, kind == Boxes::Short)? {
            Found::Here(from, k) => (from, k),
            Found::Astray(seen) => return Ok(f(&[], seen)),
        };
        let m = self.seg.mailbox(kind, from, k);
        let seen = seen(kind, &m);
        // SAFETY: the publication, `len` bytes, stays as it is until we
        // count our read below (its writer waits for that).
        let got = f(unsafe { std::slice::from_raw_parts(m.data(seen.len), seen.len) }, seen);
        self.count_read(kind, from, k);
        Ok(got)
    }

    /// Wait for world rank `from`'s publication `stamp` in its `kind`
    /// mailbox: its local index and the slot.
    ///
    /// A rank reads a writer's publications in the order they were made
    /// (collectives run in one order on every member), so the one awaited
    /// comes after the one read last: a look checks the slot after that
    /// one, then those written since, and a wait the slot the writer's
    /// next publication goes to, reading its count of publications only
    /// once that slot is written. Only a program that runs
    /// collectives of two communicators in different orders on their
    /// common members (unsafe: it hangs wherever collectives synchronize)
    /// awaits an earlier publication; every slot is looked at now and then
    /// for it. With `watch`, a writer that took the other path (published
    /// the operation in its other mailbox, or sent it as messages) is
    /// noticed too. With `parks`, a wait parks (`wait_parked`): this rank
    /// has published all it publishes in the operation.
    #[inline]
    fn await_publication(
        &mut self,
        kind: Boxes,
        from: usize,
        stamp: u64,
        watch: bool,
        parks: bool,
    ) -> MpiResult<Found> {
        let slots = kind.slots() as u64;
        let after = self.tally(kind).after[from];
        let (world, from) = (from, self.local_index(from));
        let at = |p: u64| (p % slots) as usize;
        let ours = |seg: &Segment, k: usize| seg.mailbox(kind, from, k).stamp.load(Ordering::Acquire) == stamp;
        // among publications `ps` (the last `slots` of them are in the slots)
        let among = |seg: &Segment, ps: std::ops::Range<u64>| {
            let ps = ps.start.max(ps.end.saturating_sub(slots))..ps.end;
            ps.map(at).find(|&k| ours(seg, k))
        };
        let mut before = 0;
        let mut here = ours(&self.seg, at(after)).then(|| at(after));
        if here.is_none() {
            // once the count is read, every publication it counts is seen
            // (one awaiting our read is never written over)
            before = self.seg.published(kind, from);
            here = among(&self.seg, after..before);
        }
        if let Some(k) = here {
            return Ok(self.found(kind, world, from, k));
        }
        let (looked, looks, found) = (Cell::new(before), Cell::new(0u32), Cell::new(None));
        // when this wait last looked at every slot (first: when it was
        // first due, so a quick wait never reads the clock)
        let full_look = Cell::new(None::<Instant>);
        let find = |seg: &Segment| {
            if found.get().is_none() {
                looks.set(looks.get().wrapping_add(1));
                // the slot the writer's next publication goes to, first: the
                // one awaited is most often that one, found with the one
                // cache line its writer wrote; while it still holds an
                // older one, nothing was published since, and the count of
                // publications (another line) is not read
                let next = seg.mailbox(kind, from, at(looked.get()));
                let mut k = None;
                if next.stamp.load(Ordering::Acquire) == stamp {
                    k = Some(at(looked.get()));
                } else if next.number.load(Ordering::Relaxed) >= looked.get() {
                    let now = seg.published(kind, from);
                    k = among(seg, looked.get()..now);
                    looked.set(now);
                }
                if k.is_none() && looks.get().is_multiple_of(ASTRAY_EVERY) {
                    match full_look.get() {
                        None => full_look.set(Some(Instant::now())),
                        Some(t) if t.elapsed() >= FULL_LOOK_EVERY => {
                            k = (0..kind.slots()).find(|&k| ours(seg, k));
                            full_look.set(Some(Instant::now()));
                        }
                        Some(_) => {}
                    }
                }
                found.set(k);
            }
            found.get()
        };
        let what = || {
            format!(
                "world rank {world} to publish collective {stamp:#x} in its {kind:?} mailbox (context {}, operation {})",
                context_of(stamp),
                stamp & 0xffff_ffff
            )
        };
        // the same operation in the writer's other mailbox, or (a member
        // whose part is larger than the mailboxes take) as messages
        let other = if kind == Boxes::Short { Boxes::Long } else { Boxes::Short };
        let (ctx, tag) = (context_of(stamp) as u32, user_tag(stamp as u32));
        let astray = |e: &Engine| {
            if !watch {
                return None;
            }
            let seg = &e.seg;
            (0..other.slots())
                .map(|k| seg.mailbox(other, from, k))
                .find_map(|m| {
                    let s = m.stamp.load(Ordering::Acquire);
                    (s != 0 && s & OPERATION == stamp & OPERATION).then(|| {
                        let there = seen(other, &m);
                        Elsewhere::Mailbox(Seen { astray: true, len: there.stream, ..there })
                    })
                })
                .or_else(|| e.messages_of(ctx, tag).map(Elsewhere::Messages))
                .or_else(|| seg.posted_arrival(from, stamp & OPERATION, e.arrivals).map(Elsewhere::Arrival))
        };
        // a short collective's reader (or a long one's, `read_whole`) has
        // published its own part: on a host with more ranks than cores (at
        // least two), it parks while it waits
        let got = if parks {
            self.wait_parked(&what, |seg| find(seg).is_some(), astray, from, stamp)
        } else {
            self.wait_unless(&what, |seg| find(seg).is_some(), astray, None)
        };
        match got? {
            Some(Elsewhere::Mailbox(seen)) => return Ok(Found::Astray(seen)),
            Some(Elsewhere::Messages(src)) => {
                self.give_up_mailboxes(stamp);
                return err!(
                    Truncate,
                    "world rank {src} sent its part of this collective as point-to-point messages, which it does when its part is larger than the shared-memory path this rank took: the ranks passed counts or datatypes of different sizes"
                );
            }
            Some(Elsewhere::Arrival(shape)) => {
                self.give_up_mailboxes(stamp);
                return Err(super::arrival::posted_instead(world, shape));
            }
            None => {}
        }
        let Some(k) = find(&self.seg) else { unreachable!("the stamp was found") };
        Ok(self.found(kind, world, from, k))
    }

    /// World rank `world`'s (local index `from`) publication awaited is in
    /// slot `k`: the next one comes after it.
    fn found(&mut self, kind: Boxes, world: usize, from: usize, k: usize) -> Found {
        let number = self.seg.mailbox(kind, from, k).number.load(Ordering::Relaxed);
        self.tally(kind).after[world] = number + 1;
        Found::Here(from, k)
    }

    /// Our read of slot `k` of local rank `from`'s `kind` mailbox is done.
    fn count_read(&self, kind: Boxes, from: usize, k: usize) {
        let number = self.seg.mailbox(kind, from, k).number.load(Ordering::Relaxed);
        self.seg.note_read(kind, from, number);
        self.seg.ring_bell_after_rmw(from);
    }
}

/// A publication's length, and its stream's size and end (a short one is
/// a whole stream).
pub(super) fn seen(kind: Boxes, m: &crate::transport::shm::Slot) -> Seen {
    let len = m.len.load(Ordering::Relaxed) as usize;
    match kind {
        Boxes::Short => Seen { len, stream: len, last: true, astray: false },
        Boxes::Long => {
            let about = m.stream.load(Ordering::Relaxed);
            Seen { len, stream: (about & !LAST) as usize, last: about & LAST != 0, astray: false }
        }
    }
}
