//! Blocking collectives through the mailboxes (`transport::shm::Mailbox`):
//! a rank publishes up to a slot's bytes under a stamp naming the
//! operation (and, in the long mailbox, the piece of it), in the next
//! slot of that mailbox; its readers find the stamp, copy the data out in
//! place and move their read mark for that writer (`Segment::note_read`,
//! in a row of their own: the number of the last publication read; of
//! short publications at every 16th read and whenever the reader waits,
//! each read said meanwhile on a line the writer looks at only when its
//! wait for the mark drags on, `Engine::count_read`); a
//! slot is written again only once every reader of its previous
//! publication has marked it read, so a rank runs at most a mailbox's
//! slots ahead of its slowest reader. No envelope, no matching, no
//! request: a publication costs the writer one pass over the data and a
//! store (and, once in many, a look at its readers' marks), a read one
//! pass and a store on a line of the reader's own. Waiting keeps the
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
use crate::error::{MpiError, MpiResult};
pub use crate::transport::shm::Boxes;
use crate::transport::shm::{LineSet, Segment, BY_REFERENCE, LAST};
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
    /// It was published by reference (`Engine::publish_by_reference`):
    /// its `len` bytes, the whole stream, were read straight out of its
    /// writer's memory.
    pub by_reference: bool,
    /// In the long mailbox: its writer's words for its readers (0: none).
    pub note: Note,
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

/// A reader stores its read marks of short publications at every this
/// many reads (and whenever it waits): `Engine::count_read`.
const MARK_EVERY: u32 = 16;
const _: () = assert!(MARK_EVERY as usize <= Boxes::Short.slots() / 4);

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
    /// Per local rank: the read mark we owe it as a reader (0: none),
    /// not yet stored (`Engine::count_read`).
    owed: Vec<u64>,
    /// Reads since our marks were last stored.
    unmarked: u32,
}

impl Tally {
    pub fn new(kind: Boxes, ranks: usize) -> Tally {
        Tally {
            slots: vec![(0, Vec::new()); kind.slots()],
            done: vec![0; ranks],
            published: 0,
            after: vec![0; ranks],
            owed: vec![0; ranks],
            unmarked: 0,
        }
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
    /// MPI_Finalize: never (`Engine::finalized_instead`).
    Finalize(MpiError),
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
        let t = &mut self.mailboxes[kind as usize];
        let (number, readers) = (t.slots[k].0, &t.slots[k].1);
        if readers.iter().all(|&r| t.done[r] > number) {
            // known to be read by all, as most often
            t.slots[k].1.clear();
            return Ok(());
        }
        self.wait_read_marks(kind, k, why)
    }

    /// `wait_read` where a reader's mark must be looked at.
    fn wait_read_marks(&mut self, kind: Boxes, k: usize, why: &str) -> MpiResult<()> {
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
                let read = |seg: &Segment| {
                    seg.read_through(r, kind, me) > number || (kind == Boxes::Short && seg.seen_through(r, me) > number)
                };
                // a short read's mark may be owed (`count_read`) by a
                // reader that went on without waiting: now and then, and
                // at every wake-up once this wait sleeps, look at what it
                // has seen (a reader in MPI_Finalize owes none)
                let seen = |e: &Engine| {
                    if read(&e.seg) {
                        return Some(Ok(()));
                    }
                    e.finalized_instead(r, read, "taking part in a collective whose data this rank published for it")
                        .map(Err)
                };
                if let Some(Err(error)) =
                    self.wait_unless(&what, |seg| seg.read_through(r, kind, me) > number, seen, None)?
                {
                    return Err(error);
                }
                mark = self.seg.read_through(r, kind, me);
                if kind == Boxes::Short {
                    mark = mark.max(self.seg.seen_through(r, me));
                }
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
        self.publish_piece_in(stamp, len, (stream, last), [0; 2], readers, fill)
    }

    /// `publish_piece_filled` with words for the readers (`note`).
    fn publish_piece_in(
        &mut self,
        stamp: u64,
        len: usize,
        (stream, last): (usize, bool),
        note: Note,
        readers: impl IntoIterator<Item = usize>,
        fill: impl FnOnce(&mut [u8]),
    ) -> MpiResult<()> {
        let about = stream as u64 | if last { LAST } else { 0 };
        self.publish_in(Boxes::Long, stamp, len, Some((about, note)), readers, fill)
    }

    /// Publish `data`, a whole stream, by reference in the long mailbox
    /// for `readers`: the slot holds its address, and each reader copies
    /// it straight out of this process's memory by a cross-memory read,
    /// one copy where pieces take two. `data` must stay as it is until
    /// they are done (`await_reads`). Only for readers that may read this
    /// process (`Engine::long_way`). `note`: words for the readers
    /// (`Ways::report`).
    pub fn publish_by_reference(
        &mut self,
        stamp: u64,
        data: &[u8],
        note: Note,
        readers: impl IntoIterator<Item = usize>,
    ) -> MpiResult<()> {
        self.publish_span(stamp, (data.as_ptr() as usize, data.len()), note, readers)
    }

    /// `publish_by_reference` of the `len` bytes of this process's memory
    /// from `addr` on, of which the readers read only the parts the
    /// collective gives them (an alltoallv's blocks, `shm::alltoallv`):
    /// those parts must stay as they are until they are done.
    pub fn publish_span(
        &mut self,
        stamp: u64,
        (addr, len): (usize, usize),
        note: Note,
        readers: impl IntoIterator<Item = usize>,
    ) -> MpiResult<()> {
        let about = len as u64 | LAST | BY_REFERENCE;
        let at = (addr as u64).to_ne_bytes();
        self.publish_in(Boxes::Long, stamp, at.len(), Some((about, note)), readers, |to| to.copy_from_slice(&at))
    }

    /// `publish_piece` with words for the readers (`note`).
    pub fn publish_piece_noted(
        &mut self,
        stamp: u64,
        data: &[u8],
        (stream, last): (usize, bool),
        note: Note,
        readers: impl IntoIterator<Item = usize>,
    ) -> MpiResult<()> {
        self.publish_piece_in(stamp, data.len(), (stream, last), note, readers, |to| to.copy_from_slice(data))
    }

    /// Wait until every reader of our latest publication in the `kind`
    /// mailbox has read it (one by reference: until then its data must
    /// stay as it is).
    pub fn await_reads(&mut self, kind: Boxes) -> MpiResult<()> {
        let Some(number) = self.tally(kind).published.checked_sub(1) else { return Ok(()) };
        self.wait_read(kind, kind.slot_of(number), "a publication read in place")
    }

    #[inline]
    fn publish_in(
        &mut self,
        kind: Boxes,
        stamp: u64,
        len: usize,
        about: Option<(u64, Note)>,
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
        let k = kind.slot_of(number);
        self.wait_read(kind, k, "a blocking collective")?;
        let m = self.seg.mailbox(kind, self.seg.me, k);
        // SAFETY: our own mailbox, which no one reads until the stamp below
        // names this publication; `len` fits (asserted).
        fill(unsafe { std::slice::from_raw_parts_mut(m.data(len), len) });
        m.len.store(len as u64, Ordering::Relaxed);
        if let Some((about, note)) = about {
            m.stream.store(about, Ordering::Relaxed);
            m.note[0].store(note[0], Ordering::Relaxed);
            m.note[1].store(note[1], Ordering::Relaxed);
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
        let next = self.seg.mailbox(kind, self.seg.me, kind.slot_of(k as u64 + 1));
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
        let (local, k) = match self.await_publication(kind, from, stamp, watch, parks)? {
            Found::Here(local, k) => (local, k),
            Found::Astray(seen) => return Ok(seen),
        };
        self.take(kind, from, local, k, at, out)
    }

    /// Copy the publication in slot `k` of world rank `world`'s (local
    /// index `from`) `kind` mailbox, from byte `at` on, into `out` (as
    /// much as fits), and count the read.
    fn take(&mut self, kind: Boxes, world: usize, from: usize, k: usize, at: usize, out: &mut [u8]) -> MpiResult<Seen> {
        let m = self.seg.mailbox(kind, from, k);
        let seen = seen(kind, &m);
        let n = seen.len.saturating_sub(at).min(out.len());
        if seen.by_reference {
            let pid = self.pids[world];
            // SAFETY: the address, 8 bytes in the slot's data.
            let addr = unsafe { (m.data(8) as *const u64).read_unaligned() };
            let read = crate::transport::shm::read_remote(pid, addr + at as u64, &mut out[..n]);
            // (its writer waits for this mark, read or not)
            self.count_read(kind, from, k);
            if !read {
                return err!(
                    Other,
                    "could not read world rank {world}'s part of a collective straight out of its memory (process {pid}): the kernel refused the cross-memory read, or the buffer is gone"
                );
            }
            return Ok(seen);
        }
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
        if seen.by_reference {
            // no reader in place takes one (only blocks of a collective
            // of two go so): another operation, the members out of step
            self.count_read(kind, from, k);
            self.give_up_mailboxes(stamp);
            return Ok(f(&[], Seen { astray: true, ..seen }));
        }
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
        let at = |p: u64| kind.slot_of(p);
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
            let never = e.finalized_instead(from, |seg| find(seg).is_some(), "taking part in this collective");
            if never.is_some() || !watch {
                return never.map(Elsewhere::Finalize);
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
                .or_else(|| {
                    seg.posted_arrival(from, stamp & OPERATION, &e.arrivals, LineSet::all()).map(Elsewhere::Arrival)
                })
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
            Some(Elsewhere::Finalize(error)) => {
                self.give_up_mailboxes(stamp);
                return Err(error);
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
    /// The mark of a read of a short publication is owed, stored with the
    /// `MARK_EVERY`-th read or when this rank next waits (`store_marks`):
    /// a writer a mailbox ahead of its reader (the non-roots of a loop of
    /// Gathers) polls the mark's line, and a store there at every read
    /// took the line back each time (perf, 2 ranks, a loop of 8-byte
    /// Gathers: a quarter of the root's time in `count_read`). The read is
    /// said at once only on a line of ours that a writer looks at when its
    /// wait for our mark drags on (`Segment::note_seen`): a reader that
    /// left MPI owing it, and a writer whose slot it holds, a mailbox of
    /// publications for others later.
    fn count_read(&mut self, kind: Boxes, from: usize, k: usize) {
        let number = self.seg.mailbox(kind, from, k).number.load(Ordering::Relaxed);
        if kind == Boxes::Long {
            self.seg.note_read(kind, from, number);
            self.seg.ring_bell_after_rmw(from);
            return;
        }
        let t = &mut self.mailboxes[kind as usize];
        t.owed[from] = t.owed[from].max(number + 1);
        t.unmarked += 1;
        self.seg.note_seen(from, t.owed[from] - 1);
        if t.unmarked >= MARK_EVERY {
            self.store_marks();
        }
    }

    /// Store the read marks owed (`count_read`), waking writers asleep
    /// waiting for them.
    pub(super) fn store_marks(&mut self) {
        let t = &mut self.mailboxes[Boxes::Short as usize];
        t.unmarked = 0;
        for (from, owed) in t.owed.iter_mut().enumerate() {
            if *owed != 0 {
                self.seg.note_read(Boxes::Short, from, *owed - 1);
                self.seg.ring_bell_after_rmw(from);
                *owed = 0;
            }
        }
    }

    /// Whether read marks are owed (`count_read`).
    #[inline]
    pub(super) fn owes_marks(&self) -> bool {
        self.mailboxes[Boxes::Short as usize].unmarked != 0
    }
}

/// How a writer's long block goes to its one reader (the blocks of an
/// Alltoall or Allgather of two ranks): copied in and out of the long
/// mailbox in pieces, or read by the reader straight out of the writer's
/// memory by the kernel's cross-memory copy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Way {
    Pieces,
    Read,
}

/// Which `Way` costs the two ranks less time on their cores, per block
/// size (by powers of two). Neither wins everywhere on a virtual machine
/// whose host moves its CPUs: pieces copy twice but at memcpy's pace
/// while the two CPUs pass cache lines quickly (2 ranks, Alltoall of 64
/// KiB and 1 MiB blocks: 6.0 and 85 us in pieces against 8.2 and 107
/// read), while they are far apart every line the reader pulls from the
/// writer's core is slow and pieces lose four- to fivefold (32-39 and
/// 355-535 us against 8.8 and 106).
///
/// Each rank times its calls and reports its estimates in the header of
/// its next publication (`Report`), so that both weigh the same sums and
/// take the same way: a call where one writes pieces and the other is
/// read costs more than either way (measured, 1 MiB blocks: 140-170 us
/// where each way alone took 87-139), and only calls of one way on both
/// sides count. Timing the copies alone does not do: two ranks' copies of
/// pieces, in and out on both cores at once, sum to about what their
/// reads do, yet finish a third sooner (2 ranks, 64 KiB blocks: 7.2-8.1 us
/// against 10.3-11.4). An estimate falls at once to a faster call and
/// rises by at most a quarter a call, so a late partner or a preempted
/// call moves it little but a slow spell soon shows. The way not taken is
/// tried again after `gap` calls, a gap that doubles at each try (up to
/// `MAX_GAP`: a try costs a slow spell's pieces a few per cent) and
/// starts again where the other way wins; the two ranks count alike, so
/// they try together. A try is `TRY_CALLS` calls in a row: the first
/// call of a way after the other costs more than the way does, and an
/// estimate falls at once to the faster call after it.
#[derive(Default)]
pub struct Ways {
    sizes: [Costs; 32],
    /// Whether this process may read the others' memory (probed once).
    reads: Option<bool>,
}

/// One block size's estimates, in nanoseconds (0: none yet).
#[derive(Clone, Copy, Default)]
struct Costs {
    /// This rank's, and the other's as last reported.
    mine: Report,
    theirs: Report,
    tries: Tries,
}

/// When the way not taken is tried again: the best way last called for,
/// the calls since the other was last tried, and the calls to make
/// before it is tried again (`Ways`, and `p2p::agreed` alike), and the
/// try under way.
#[derive(Clone, Copy, Default)]
pub(super) struct Tries {
    last: Option<Way>,
    since: u32,
    gap: u32,
    /// The way being tried, and its calls still to come.
    trying: Option<(Way, u32)>,
}

impl Tries {
    /// This call's way where `best` is the cheaper: `best`, or the other
    /// once the gap is past (the gap doubles at each try, up to
    /// `MAX_GAP`, and starts again where the best way changes).
    pub(super) fn way(&mut self, best: Way) -> Way {
        if let Some((way, left)) = self.trying {
            self.trying = (left > 1).then_some((way, left - 1));
            return way;
        }
        if self.last.is_some_and(|w| w != best) {
            self.gap = MIN_GAP;
        }
        self.last = Some(best);
        self.since += 1;
        if self.since <= self.gap.max(MIN_GAP) {
            return best;
        }
        self.since = 0;
        self.gap = (self.gap.max(MIN_GAP) * 2).min(MAX_GAP);
        let other = match best {
            Way::Pieces => Way::Read,
            Way::Read => Way::Pieces,
        };
        self.trying = (TRY_CALLS > 1).then_some((other, TRY_CALLS - 1));
        other
    }
}

/// A rank's estimates of its calls of one block size, by each way.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub struct Report {
    pub(super) pieces: u64,
    pub(super) read: u64,
}

/// The header words a `Report` goes in (`Mailbox::note`).
pub type Note = [u64; 2];

pub(super) const MIN_GAP: u32 = 8;
pub(super) const MAX_GAP: u32 = 256;
/// The calls a try of the way not taken lasts. The first call of a way
/// after the other finds its ranks coming to it apart (pieces let a rank
/// run ahead into its next call; read in place, every writer waits for
/// all its readers): 4 ranks on 2 CPUs, 64 KiB Alltoall in a loop, a lone
/// read among pieces took each rank 35-85 us of processor time where the
/// reads after it took 13-24, so the read, a third faster there, was
/// never taken (loops of 150 calls, best of 5, 6 alternated runs: 36-61
/// us a call against 28-36 with tries of two calls, and 65 in one run;
/// Open MPI 31-51). A longer try costs more where the way tried is the
/// dearer: the 64 KiB Allgather, whose pieces win, took 2-3% longer with
/// tries of three.
pub(super) const TRY_CALLS: u32 = 2;

/// A `Report`'s form in a publication's header: the block size's power
/// of two (never 0 there: blocks of this kind are long) and the
/// estimate in pieces, then the read's, in 16 ns units.
const UNIT: u64 = 16;
const FIELD: u64 = (1 << 29) - 1;

impl Report {
    pub(super) fn encode(self, class: usize) -> Note {
        [(class as u64) << 58 | (self.pieces / UNIT).min(FIELD), self.read / UNIT]
    }

    /// The size class and report header words hold (None: none).
    pub(super) fn decode(note: Note) -> Option<(usize, Report)> {
        let class = (note[0] >> 58) as usize;
        (class != 0).then(|| (class, Report { pieces: (note[0] & FIELD) * UNIT, read: note[1] * UNIT }))
    }
}

/// An estimate `old` given a new measure `ns`.
pub(super) fn estimate(old: u64, ns: u64) -> u64 {
    if old == 0 {
        ns.max(1)
    } else {
        ns.clamp(1, old + old / 4)
    }
}

pub(super) fn class(bytes: usize) -> usize {
    ((usize::BITS - bytes.leading_zeros()) as usize).clamp(1, 31)
}

impl Costs {
    /// The way whose calls took the two ranks less; before pieces are
    /// measured (tried after `MIN_GAP` calls) the read, as point-to-point
    /// messages go, so that a program that makes few such calls (NAS FT:
    /// a handful of transposes of 32 MiB blocks at 2 ranks) is not slowed
    /// by trials.
    fn best(&self) -> Way {
        let (a, b) = (self.mine, self.theirs);
        let pieces = (a.pieces != 0 && b.pieces != 0).then(|| a.pieces + b.pieces);
        let read = (a.read != 0 && b.read != 0).then(|| a.read + b.read);
        match (pieces, read) {
            (Some(p), r) if r.is_none_or(|r| p <= r) => Way::Pieces,
            _ => Way::Read,
        }
    }
}

impl Ways {
    /// The way to take for the blocks of a call keyed `bytes` (the longer
    /// of the two, alike on both ranks; `reads`: the reader may read this
    /// process's memory).
    pub fn pick(&mut self, bytes: usize, reads: bool) -> Way {
        let c = &mut self.sizes[class(bytes)];
        if !reads {
            return Way::Pieces;
        }
        let best = c.best();
        c.tries.way(best)
    }

    /// This rank's call keyed `bytes`, both ranks' blocks going `way`,
    /// took `ns`.
    pub fn took(&mut self, bytes: usize, way: Way, ns: u64) {
        let mine = &mut self.sizes[class(bytes)].mine;
        match way {
            Way::Pieces => mine.pieces = estimate(mine.pieces, ns),
            Way::Read => mine.read = estimate(mine.read, ns),
        }
    }

    /// The header words reporting this rank's estimates for calls keyed
    /// `bytes`.
    pub fn report(&self, bytes: usize) -> Note {
        let c = class(bytes);
        self.sizes[c].mine.encode(c)
    }

    /// Header words from the other rank (`report`).
    pub fn reported(&mut self, note: Note) {
        if let Some((c, report)) = Report::decode(note) {
            self.sizes[c].theirs = report;
        }
    }
}

impl Engine {
    /// The way (`Ways`) for this rank's long block of `bytes` to its one
    /// reader, world rank `reader` on this host; `forced`: that way where
    /// the reader may take it.
    pub fn long_way(&mut self, bytes: usize, reader: usize, forced: Option<Way>) -> Way {
        let reads = self.may_be_read(reader);
        match forced {
            Some(Way::Read) if reads => Way::Read,
            Some(_) => Way::Pieces,
            None => self.ways.pick(bytes, reads),
        }
    }

    /// Whether world rank `reader` on this host may read this process's
    /// memory (cross-memory copies on, and a read probed once).
    pub fn may_be_read(&mut self, reader: usize) -> bool {
        if self.ways.reads.is_none() && self.single_copy {
            let l = self.local_index(reader);
            self.ways.reads = self.seg.probe(l, self.pids[reader]);
        }
        self.single_copy && self.ways.reads == Some(true)
    }

    /// What this rank's long blocks to one reader cost lately.
    pub fn ways(&mut self) -> &mut Ways {
        &mut self.ways
    }
}

/// A publication's length, and its stream's size and end (a short one is
/// a whole stream).
pub(super) fn seen(kind: Boxes, m: &crate::transport::shm::Slot) -> Seen {
    let len = m.len.load(Ordering::Relaxed) as usize;
    match kind {
        Boxes::Short => Seen { len, stream: len, last: true, astray: false, by_reference: false, note: [0; 2] },
        Boxes::Long => {
            let about = m.stream.load(Ordering::Relaxed);
            let (stream, by_reference) = ((about & !(LAST | BY_REFERENCE)) as usize, about & BY_REFERENCE != 0);
            // (by reference, the slot holds only the address)
            let len = if by_reference { stream } else { len };
            let note = [m.note[0].load(Ordering::Relaxed), m.note[1].load(Ordering::Relaxed)];
            Seen { len, stream, last: about & LAST != 0, astray: false, by_reference, note }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ranks' calls for one block size, each way's calls taking
    /// both as given (a call of mixed ways not counted): the ways each
    /// takes.
    fn calls(w: &mut [Ways; 2], n: usize, pieces: u64, read: u64) -> Vec<[Way; 2]> {
        let b = 1 << 20;
        (0..n)
            .map(|_| {
                let ways = [w[0].pick(b, true), w[1].pick(b, true)];
                if ways[0] == ways[1] {
                    for x in w.iter_mut() {
                        x.took(b, ways[0], if ways[0] == Way::Pieces { pieces } else { read });
                    }
                }
                let notes = [w[0].report(b), w[1].report(b)];
                w[0].reported(notes[1]);
                w[1].reported(notes[0]);
                ways
            })
            .collect()
    }

    #[test]
    fn two_ranks_take_the_cheaper_way_together_and_try_the_other_now_and_then() {
        let mut w = [Ways::default(), Ways::default()];
        // pieces 80 us a call against a read's 100: pieces,
        // the read tried once in a while, ever less often
        let ways = calls(&mut w, 600, 80_000, 100_000);
        assert!(ways.iter().all(|p| p[0] == p[1]), "the two ranks take one way at every call");
        let gap = MIN_GAP as usize;
        assert!(ways[..gap].iter().all(|p| p[0] == Way::Read), "reads until pieces are tried");
        assert!(ways[gap + 4..].iter().filter(|p| p[0] == Way::Pieces).count() > 500);
        let tries = TRY_CALLS as usize;
        assert!(ways[300..].iter().filter(|p| p[0] == Way::Read).count() <= 2 * tries, "tries grow rare");
        // a slow spell: pieces now 5x dearer; the way changes within a
        // try's gap and a few calls
        let ways = calls(&mut w, 300, 400_000, 100_000);
        assert!(ways.iter().all(|p| p[0] == p[1]));
        let first = ways.iter().position(|p| p[0] == Way::Read).unwrap();
        assert!(ways[first..first + 20].iter().filter(|p| p[0] == Way::Read).count() >= 15);
        assert!(ways[MAX_GAP as usize / 2..].iter().filter(|p| p[0] == Way::Pieces).count() <= 3 * tries);
        // no reads where the reader may not read this process
        assert!((0..50).all(|_| w[0].pick(1 << 20, false) == Way::Pieces));
    }

    #[test]
    fn a_report_survives_its_header_words() {
        let r = Report { pieces: 98_765, read: 7_890_000 };
        let (class, back) = Report::decode(r.encode(21)).unwrap();
        assert_eq!(class, 21);
        assert_eq!(back, Report { pieces: 98_765 / UNIT * UNIT, read: 7_890_000 / UNIT * UNIT });
        assert!(Report::decode([0; 2]).is_none());
    }
}
