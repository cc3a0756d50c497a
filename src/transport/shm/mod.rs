//! The shared-memory transport: one segment per job, mapped by every rank.
//!
//! Layout: a header page (geometry, then two cache lines per rank with its
//! doorbell, then one per rank with its mailboxes' publication counts),
//! then one `Ring` per ordered pair (src, dst), then the mailboxes of
//! every rank (blocking collectives publish their data there). Rank 0 creates
//! the segment in /dev/shm with mode 0600 and publishes its name through
//! PMI; once every rank has mapped it, rank 0 unlinks it, so it never
//! outlives the job (the launcher also sweeps its job's names at exit).

mod arrival;
pub mod ring;

pub use arrival::ARRIVAL_BYTES;

use crate::err;
use crate::error::MpiResult;
use crate::runtime::backoff::now_ns;
use ring::Ring;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const MAGIC: u64 = 0x6f786d7069736d31; // "oxmpism1"
const LINE: usize = 64;
const PAGE: usize = 4096;

#[repr(C)]
struct SegHeader {
    magic: AtomicU64,
    nranks: u64,
    nslots: u64,
    payload: u64,
    /// The operation (stamp) in which a rank found the members of a
    /// collective out of step (`p2p::mailbox`), or 0.
    spoilt: AtomicU64,
    /// When a rank last moved to another core (`Segment::spread`), in
    /// nanoseconds of CLOCK_MONOTONIC.
    spread_at: AtomicU64,
}

/// Per-rank lines: a futex word peers bump to wake a sleeping rank, and
/// where the rank waits. The second line is written at every wait of a
/// crowded host's short collective (`park`, `core_spare`); the first only
/// as the rank sleeps or dozes, so that `sleeping`, which every
/// publication reads for each reader, stays in the publishers' caches.
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
    /// (the rest of the first line: `parked` starts the second)
    _to_line2: [u64; 5],
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
/// A rank's core noted longer ago than this is stale (`Segment::crowded`).
const FRESH_NS: u64 = 2 * LOOK_EVERY_NS;

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

    /// Wake the rank sleeping on this bell (the caller saw it asleep).
    fn wake(&self) {
        self.bell.fetch_add(1, Ordering::Relaxed);
        futex_wake(&self.bell);
    }
}

/// Per-rank line: how many publications the rank made in each of its
/// mailboxes, so that a reader waiting for one looks at a single word
/// and then only at the slots written since its last look.
#[repr(C)]
struct Posts {
    published: [AtomicU64; 2],
}

pub struct Segment {
    base: *mut u8,
    bytes: usize,
    pub nranks: usize,
    pub me: usize,
    rings: Vec<Ring>,
    /// Where the mailboxes start.
    mailboxes: *mut u8,
    /// The CPUs this host's ranks spread over (`spread`), if they do.
    spread_over: Vec<usize>,
    /// When this rank next looks at where the ranks run (`spread`).
    next_look: AtomicU64,
    /// Its last look found its core crowded (`spread`).
    was_crowded: std::sync::atomic::AtomicBool,
}

/// The two mailboxes of every rank: whole short publications, and long
/// ones in pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boxes {
    Short,
    Long,
}

impl Boxes {
    /// Bytes of data one slot holds.
    pub const fn bytes(self) -> usize {
        match self {
            Boxes::Short => 4096,
            Boxes::Long => 32 << 10,
        }
    }

    /// Slots per rank: a rank may publish this many times before the
    /// readers of its oldest publication must be done. A root broadcasting
    /// small messages in a loop runs that far ahead of ranks that wait for
    /// a core (measured, 4 ranks on 2 cores, medians of 20 interleaved
    /// rounds: bcast of 8 B 0.55 us with 32 short slots, 0.36 with 128;
    /// barrier and allreduce alike; 256 made barriers slower). A root
    /// streaming a long broadcast fills every long slot before it waits,
    /// so on a crowded core the slots set how often it hands the core to
    /// a reader: 32 of them (1 MiB a rank) took a 1 MiB bcast among 4
    /// ranks on 2 cores from 113 us to 84 (best of 10 interleaved rounds;
    /// 64 KiB 8.7 to 5.2, gather and scan alike, nothing slower at 2 or 3
    /// ranks); 64 took the bcast to 72 but an allgather of 1 MiB blocks
    /// from 460 to 600, its pieces no longer in the cache when read.
    pub const fn slots(self) -> usize {
        match self {
            Boxes::Short => 128,
            Boxes::Long => 32,
        }
    }

    /// Where in a page the data of a rank's first slot starts, and how far
    /// apart the slots' data lie. A copy into or out of a slot runs at
    /// full speed only when its source does not lie a little below its
    /// destination in the page offsets (4K aliasing: each load waits for
    /// a store it only seems to overlap); long pieces start half a page
    /// off the page start, where the buffers malloc gives for them begin,
    /// so that neither the writer's copy in nor the readers' copies out
    /// stall (measured, best of 9 runs, 4 ranks: bcast of 64 KiB 5.1 us
    /// against 6.6 with pieces starting a line into a page, 1 MiB 95
    /// against 118; 2 ranks: alltoall of 64 KiB blocks 5.6 against 6.8,
    /// allgather 5.4 against 6.8 with pieces two lines after their
    /// headers); short ones stagger by two lines, so that small
    /// publications in different slots do not compete for the same cache
    /// sets.
    const fn data_offset(self) -> usize {
        match self {
            Boxes::Short => 2 * LINE,
            Boxes::Long => PAGE / 2,
        }
    }

    const fn data_stride(self) -> usize {
        match self {
            Boxes::Short => self.bytes() + 2 * LINE,
            Boxes::Long => self.bytes(),
        }
    }

    /// Bytes of the headers of every rank's slots of this kind: they lie
    /// together, so that small publications, which live in them, touch
    /// few pages.
    const fn heads(self, nranks: usize) -> usize {
        (nranks * self.slots() * std::mem::size_of::<Mailbox>()).div_ceil(PAGE) * PAGE
    }

    /// Bytes of every rank's slots of this kind, from a page boundary: the
    /// headers, then the data.
    const fn area(self, nranks: usize) -> usize {
        (self.heads(nranks) + self.data_offset() + nranks * self.slots() * self.data_stride()).div_ceil(PAGE) * PAGE
    }
}

/// The header of one mailbox slot: the stamp naming the publication in
/// it; its data follows it in the segment. Only its rank writes it; its
/// readers say what they have read in rows of their own
/// (`Segment::note_read`).
#[repr(C, align(64))]
pub struct Mailbox {
    /// The current publication (0: none yet).
    pub stamp: AtomicU64,
    pub len: AtomicU64,
    /// The publication's number in its mailbox (0 for the first).
    pub number: AtomicU64,
    /// A publication of at most `MAILBOX_INLINE` bytes, in the stamp's
    /// cache line: a reader fetches one line, not two.
    inline: [std::cell::UnsafeCell<u8>; MAILBOX_INLINE],
    /// In the long mailbox: the bytes of the whole stream this piece
    /// belongs to, and `LAST` on its last piece (see `p2p::mailbox`).
    pub stream: AtomicU64,
    _line2: [u64; 7],
}

/// `Mailbox::stream`'s mark of a stream's last piece.
pub const LAST: u64 = 1 << 63;

/// Publications up to this many bytes live beside their stamp.
pub const MAILBOX_INLINE: usize = 40;

// Every slot's header and data start on a cache line of their own.
const _: () = assert!(std::mem::size_of::<Mailbox>() == 2 * LINE && Boxes::Long.bytes().is_multiple_of(LINE));

/// A mailbox slot as its users see it: the header, and where its data is.
pub struct Slot<'a> {
    head: &'a Mailbox,
    data: *mut u8,
}

impl std::ops::Deref for Slot<'_> {
    type Target = Mailbox;
    fn deref(&self) -> &Mailbox {
        self.head
    }
}

impl Slot<'_> {
    /// Where a publication of `len` bytes lives.
    pub fn data(&self, len: usize) -> *mut u8 {
        if len <= MAILBOX_INLINE {
            self.head.inline.as_ptr() as *mut u8
        } else {
            self.data
        }
    }
}

// SAFETY: the segment is a mapping shared with other processes; all access
// goes through rings and atomics, which do their own synchronisation.
unsafe impl Send for Segment {}

pub struct Geometry {
    pub nslots: usize,
    pub payload: usize,
}

/// The lines of one rank's row of read marks (`Segment::note_read`): a
/// word per mailbox kind and writer.
fn read_row_lines(nranks: usize) -> usize {
    (2 * nranks * 8).div_ceil(LINE)
}

/// Where the rows of read marks start: after the segment header's line,
/// the doorbells' and the posts' lines (two and one per rank).
fn read_rows_at(nranks: usize) -> usize {
    LINE + 3 * nranks * LINE
}

/// Where the arrival lines start: after the rows of read marks, two lines
/// per rank.
fn arrivals_at(nranks: usize) -> usize {
    read_rows_at(nranks) + nranks * read_row_lines(nranks) * LINE
}

fn layout(nranks: usize, g: &Geometry) -> (usize, usize) {
    let header = (arrivals_at(nranks) + nranks * 2 * LINE).div_ceil(PAGE) * PAGE;
    let ring = Ring::bytes_needed(g.nslots, g.payload).div_ceil(LINE) * LINE;
    (header, ring)
}

/// The bytes of the whole segment.
fn total(nranks: usize, g: &Geometry) -> usize {
    mailboxes_at(nranks, g) + Boxes::Short.area(nranks) + Boxes::Long.area(nranks)
}

/// Where the mailboxes start: on the first page after the rings.
fn mailboxes_at(nranks: usize, g: &Geometry) -> usize {
    let (header, ring) = layout(nranks, g);
    (header + ring * nranks * nranks).div_ceil(PAGE) * PAGE
}

impl Segment {
    /// Rank 0: create and size the segment. Returns its name.
    pub fn create(name: &str, nranks: usize, me: usize, g: &Geometry) -> MpiResult<Segment> {
        let bytes = total(nranks, g);
        let cname = CString::new(name).unwrap();
        // SAFETY: plain libc calls with a valid C string; the descriptor is
        // closed before return.
        let base = unsafe {
            let fd = libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600);
            if fd < 0 {
                return err!(Other, "cannot create shared segment /dev/shm{name}: {}", std::io::Error::last_os_error());
            }
            if libc::ftruncate(fd, bytes as libc::off_t) != 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                libc::shm_unlink(cname.as_ptr());
                return err!(NoMem, "cannot size shared segment to {bytes} bytes: {e}");
            }
            let p = map(fd, bytes);
            libc::close(fd);
            p
        };
        let base = base.inspect_err(|_| {
            // SAFETY: unlink of the name we created.
            unsafe { libc::shm_unlink(cname.as_ptr()) };
        })?;
        // SAFETY: the mapping is at least a page and page-aligned.
        let h = unsafe { &mut *(base as *mut SegHeader) };
        h.nranks = nranks as u64;
        h.nslots = g.nslots as u64;
        h.payload = g.payload as u64;
        h.magic.store(MAGIC, Ordering::Release);
        Ok(Self::with_rings(base, bytes, nranks, me))
    }

    /// Other ranks: map the segment rank 0 created.
    pub fn attach(name: &str, me: usize) -> MpiResult<Segment> {
        let cname = CString::new(name).unwrap();
        // SAFETY: plain libc calls; the mapping is checked before use.
        unsafe {
            let fd = libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0);
            if fd < 0 {
                return err!(Other, "cannot open shared segment /dev/shm{name}: {}", std::io::Error::last_os_error());
            }
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(fd, &mut st);
            let bytes = st.st_size as usize;
            let base = map(fd, bytes);
            libc::close(fd);
            let base = base?;
            let h = &*(base as *const SegHeader);
            if h.magic.load(Ordering::Acquire) != MAGIC {
                libc::munmap(base as *mut libc::c_void, bytes);
                return err!(Other, "shared segment /dev/shm{name} is not an oxmpi segment");
            }
            Ok(Self::with_rings(base, bytes, h.nranks as usize, me))
        }
    }

    fn with_rings(base: *mut u8, bytes: usize, nranks: usize, me: usize) -> Segment {
        // SAFETY: the header was written by `create` before the magic.
        let h = unsafe { &*(base as *const SegHeader) };
        let g = Geometry { nslots: h.nslots as usize, payload: h.payload as usize };
        let (header, ring) = layout(nranks, &g);
        let rings = (0..nranks * nranks)
            // SAFETY: each ring lies inside the mapping at its own offset,
            // 64-aligned, zero-filled by ftruncate.
            .map(|i| unsafe { Ring::new(base.add(header + i * ring), g.nslots, g.payload) })
            .collect();
        // SAFETY: the mailboxes follow the rings inside the mapping.
        let mailboxes = unsafe { base.add(mailboxes_at(nranks, &g)) };
        Segment {
            base,
            bytes,
            nranks,
            me,
            rings,
            mailboxes,
            spread_over: Vec::new(),
            next_look: AtomicU64::new(0),
            was_crowded: Default::default(),
        }
    }

    /// The operation in which the mailboxes were given up, or 0
    /// (`SegHeader::spoilt`).
    pub fn spoilt(&self) -> u64 {
        self.header().spoilt.load(Ordering::Acquire)
    }

    /// Give the mailboxes up in operation `stamp` (the first one given
    /// stays).
    pub fn spoil(&self, stamp: u64) {
        let _ = self.header().spoilt.compare_exchange(0, stamp, Ordering::AcqRel, Ordering::Acquire);
    }

    fn header(&self) -> &SegHeader {
        // SAFETY: the header starts the mapping, written by `create`.
        unsafe { &*(self.base as *const SegHeader) }
    }

    /// Slot `k` of the mailbox of `rank` of the kind `kind`.
    pub fn mailbox(&self, kind: Boxes, rank: usize, k: usize) -> Slot<'_> {
        assert!(rank < self.nranks && k < kind.slots());
        let area = if kind == Boxes::Short { 0 } else { Boxes::Short.area(self.nranks) };
        let i = rank * kind.slots() + k;
        // SAFETY: the areas of each kind lie one after another after the
        // rings, inside the mapping (`total`), zero-filled by ftruncate,
        // each the headers of all its slots and then their data, all
        // 64-aligned; shared access goes through atomics and the
        // publish/read protocol.
        unsafe {
            let area = self.mailboxes.add(area);
            Slot {
                head: &*(area.add(i * std::mem::size_of::<Mailbox>()) as *const Mailbox),
                data: area.add(kind.heads(self.nranks) + kind.data_offset() + i * kind.data_stride()),
            }
        }
    }

    fn posts(&self, rank: usize) -> &Posts {
        assert!(rank < self.nranks);
        // SAFETY: the header page has one line per rank after the doorbells.
        unsafe { &*(self.base.add(LINE + (2 * self.nranks + rank) * LINE) as *const Posts) }
    }

    /// How many publications `rank` made in its `kind` mailbox: the
    /// stamps of all of them are visible once this is read.
    pub fn published(&self, kind: Boxes, rank: usize) -> u64 {
        self.posts(rank).published[kind as usize].load(Ordering::Acquire)
    }

    /// `reader`'s mark for `writer`'s `kind` mailbox: the number of the
    /// last publication of it the reader read, plus 1 (0: none).
    fn read_mark(&self, reader: usize, kind: Boxes, writer: usize) -> &AtomicU64 {
        assert!(reader < self.nranks && writer < self.nranks);
        let row = read_rows_at(self.nranks) + reader * read_row_lines(self.nranks) * LINE;
        // SAFETY: the header page(s) hold a row per rank after the posts
        // (`layout`), zero-filled by ftruncate, 8-aligned words.
        unsafe { &*(self.base.add(row + (kind as usize * self.nranks + writer) * 8) as *const AtomicU64) }
    }

    /// How far `reader` is with `writer`'s publications in its `kind`
    /// mailbox: done with those numbered below this (it reads them in
    /// order).
    pub fn read_through(&self, reader: usize, kind: Boxes, writer: usize) -> u64 {
        self.read_mark(reader, kind, writer).load(Ordering::Acquire)
    }

    /// We are done with `writer`'s publication `number` in its `kind`
    /// mailbox. The mark is on a line of our own, which the writer looks at
    /// only once in many publications: a shared count of reads per slot had
    /// every reader's atomic add pull the count's line from the other
    /// cores (perf: 14% of a 4-rank barrier loop's cycles). Measured, 2
    /// ranks, 8 B, medians of 4 alternations, count -> marks (in a slow
    /// hour of the VM's): allreduce 0.512 -> 0.392 us, barrier 0.458 ->
    /// 0.339, allgather 0.490 -> 0.372, alltoall 0.493 -> 0.374, bcast
    /// 0.183 -> 0.159, gather 0.218 -> 0.175, scatter 0.198 -> 0.207;
    /// in a fast one allreduce 0.190 -> 0.152, gather 0.117 -> 0.086, but
    /// scatter 0.101 -> 0.115. 4 ranks on 2 cores: even to a few % faster.
    ///
    /// A SeqCst read-modify-write (on our own line, so cheap): the writer
    /// may then be woken by `ring_bell_after_rmw`, without a fence. An
    /// older publication read late (an unsafe program's) does not move the
    /// mark back.
    pub fn note_read(&self, kind: Boxes, writer: usize, number: u64) {
        self.read_mark(self.me, kind, writer).fetch_max(number + 1, Ordering::SeqCst);
    }

    /// We made `n` publications in our `kind` mailbox, the last one's
    /// stamp stored.
    pub fn set_published(&self, kind: Boxes, n: u64) {
        self.posts(self.me).published[kind as usize].store(n, Ordering::Release);
    }

    pub fn unlink(name: &str) {
        let cname = CString::new(name).unwrap();
        // SAFETY: unlinking a name; harmless if it is already gone.
        unsafe { libc::shm_unlink(cname.as_ptr()) };
    }

    /// The ring carrying frames from `src` to `dst`.
    pub fn ring(&self, src: usize, dst: usize) -> &Ring {
        &self.rings[src * self.nranks + dst]
    }

    pub fn payload(&self) -> usize {
        self.rings[0].payload()
    }

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
        if d.sleeping.load(Ordering::SeqCst) != 0 {
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
            if d.sleeping.load(Ordering::Relaxed) != 0 {
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

    /// Have this host's ranks spread over `cpus` (`spread`): none while
    /// empty.
    pub fn spread_over(&mut self, cpus: Vec<usize>) {
        self.spread_over = cpus;
    }

    /// Called as this rank yields its core at `now`: once in a while
    /// (`LOOK_EVERY_NS`) it looks whether its core is crowded (`crowded`),
    /// and if its last look found so too, it moves to the least crowded
    /// core, unless another rank of the host moved less than `SETTLE_NS`
    /// ago. Left to itself the kernel now and then puts three of four
    /// ranks on one of two cores and leaves them there for a while; a
    /// move corrects that at once, without binding the rank for good
    /// (`runtime::affinity::move_to`).
    pub fn spread(&self, now: u64) {
        if self.spread_over.is_empty() || now < self.next_look.load(Ordering::Relaxed) {
            return;
        }
        self.next_look.store(now + LOOK_EVERY_NS, Ordering::Relaxed);
        let to = self.crowded(now);
        // (a rank that just woke up on a busy core may move off by itself)
        if !self.was_crowded.swap(to.is_some(), Ordering::Relaxed) {
            return;
        }
        let Some(cpu) = to else {
            return;
        };
        let h = self.header();
        let last = h.spread_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) < SETTLE_NS
            || h.spread_at.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        self.was_crowded.store(false, Ordering::Relaxed);
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
        if d.room.load(Ordering::Relaxed) != 0 {
            d.wake();
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping; no Ring outlives self.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.bytes) };
    }
}

/// # Safety
/// `fd` must be an open shared-memory descriptor at least `bytes` long.
unsafe fn map(fd: i32, bytes: usize) -> MpiResult<*mut u8> {
    // SAFETY: per the caller's contract.
    let p =
        unsafe { libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    if p == libc::MAP_FAILED {
        return err!(NoMem, "cannot map {bytes} bytes of shared memory: {}", std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
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
    // SAFETY: FUTEX_WAKE on a valid aligned u32; wakes at most one waiter.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
    }
}

/// Copy the first `n` bytes of a packed message at `remote_addr` in
/// process `pid` straight into items of `ty` at `dst`, scattering into the
/// type's blocks with one cross-memory read per batch of blocks. False if
/// the kernel refuses (ptrace policy, EPERM) or the copy is short; the
/// caller then falls back to pushed data.
///
/// # Safety
/// `dst` must be writable over the items the `n` bytes cover.
pub unsafe fn read_remote_into(
    pid: i32,
    remote_addr: u64,
    n: usize,
    ty: &crate::datatype::TypeInfo,
    dst: *mut u8,
) -> bool {
    const IOV_MAX: usize = 1024;
    let mut local: Vec<libc::iovec> = Vec::new();
    let mut done = 0usize;
    let mut batch_start = 0usize;
    let flush = |local: &mut Vec<libc::iovec>, from: usize, to: usize| -> bool {
        let mut remote =
            libc::iovec { iov_base: (remote_addr as usize + from) as *mut libc::c_void, iov_len: to - from };
        let mut iov = local.as_mut_slice();
        // The kernel may copy less than asked; advance and retry.
        while remote.iov_len > 0 {
            // SAFETY: `local` describes writable memory of the receive
            // buffer (caller's contract); the kernel checks the remote range.
            let got = unsafe { libc::process_vm_readv(pid, iov.as_ptr(), iov.len() as u64, &remote, 1, 0) };
            if got <= 0 {
                return false;
            }
            let mut got = got as usize;
            remote.iov_base = (remote.iov_base as usize + got) as *mut libc::c_void;
            remote.iov_len -= got;
            while got > 0 {
                let first = &mut iov[0];
                let take = got.min(first.iov_len);
                first.iov_base = (first.iov_base as usize + take) as *mut libc::c_void;
                first.iov_len -= take;
                got -= take;
                if first.iov_len == 0 {
                    iov = &mut iov[1..];
                }
            }
        }
        local.clear();
        true
    };
    if ty.is_contiguous() {
        local.push(libc::iovec { iov_base: dst as *mut libc::c_void, iov_len: n });
        return n == 0 || flush(&mut local, 0, n);
    }
    let mut item = 0;
    while done < n {
        for &(off, len) in &ty.blocks {
            let take = len.min(n - done);
            // SAFETY: inside the receive buffer's items (caller's contract).
            let base = dst.wrapping_offset(item as isize * ty.extent + off);
            local.push(libc::iovec { iov_base: base as *mut libc::c_void, iov_len: take });
            done += take;
            if local.len() == IOV_MAX || done == n {
                if !flush(&mut local, batch_start, done) {
                    return false;
                }
                batch_start = done;
            }
            if done == n {
                break;
            }
        }
        item += 1;
    }
    true
}

/// Write `src` into process `pid` at `remote_addr` with cross-memory
/// writes. False if refused or short.
pub fn write_remote(pid: i32, remote_addr: u64, src: &[u8]) -> bool {
    let mut done = 0usize;
    while done < src.len() {
        let local = libc::iovec { iov_base: src[done..].as_ptr() as *mut libc::c_void, iov_len: src.len() - done };
        let remote =
            libc::iovec { iov_base: (remote_addr as usize + done) as *mut libc::c_void, iov_len: src.len() - done };
        // SAFETY: `local` describes memory we own; the kernel checks the
        // remote range and our permission to write it.
        let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
}

/// Ask for the cache line at `p` in a state to be written (a hint; on
/// machines other than x86-64, nothing).
#[inline(always)]
pub fn prefetch_write(_p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache; it faults on nothing.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) _p, options(nostack, preserves_flags, readonly));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::affinity;

    /// A host's segment as each of its `n` ranks maps it (`what` names it).
    pub(super) fn ranks(what: &str, n: usize) -> Vec<Segment> {
        let name = format!("/oxmpi-test-{what}-{}", std::process::id());
        let g = Geometry { nslots: 4, payload: 1024 };
        let mut all = vec![Segment::create(&name, n, 0, &g).expect("segment")];
        all.extend((1..n).map(|r| Segment::attach(&name, r).expect("attach")));
        Segment::unlink(&name);
        all
    }

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
    fn a_rank_on_a_crowded_core_moves_and_stays_free_to_move() {
        let cpus = affinity::mask().expect("this thread's CPUs");
        if cpus.len() < 2 {
            return;
        }
        let mut all = ranks("spread", 3);
        all[0].spread_over(cpus.clone());
        let a = &all[0];
        // every other rank on this thread's core, were it not for the
        // moment it takes to look
        let crowd = || {
            for r in 1..3 {
                a.doorbell(r).cpu.store(this_cpu(), Ordering::Relaxed);
                a.doorbell(r).cpu_at.store(now_ns(), Ordering::Relaxed);
            }
        };
        // two looks a millisecond apart (here: at once)
        let look_twice = || {
            for _ in 0..2 {
                a.next_look.store(0, Ordering::Relaxed);
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
        look_twice();
        let moved = a.doorbell(0).cpu.load(Ordering::Relaxed);
        assert!(moved != here && moved != 0, "moved to an empty core, not {here}: {moved}");
        assert_eq!(affinity::mask(), Some(cpus), "and may run anywhere again");
        let moved_at = a.header().spread_at.load(Ordering::Relaxed);
        assert_ne!(moved_at, 0);
        look_twice();
        assert_eq!(a.header().spread_at.load(Ordering::Relaxed), moved_at, "no second move before the others settle");
    }

    #[test]
    fn read_marks_move_forward_only_and_apart() {
        let [a, b, c] = <[Segment; 3]>::try_from(ranks("marks", 3)).ok().expect("three ranks");
        assert_eq!(a.read_through(1, Boxes::Short, 0), 0, "nothing read yet");
        b.note_read(Boxes::Short, 0, 4);
        assert_eq!(a.read_through(1, Boxes::Short, 0), 5, "done with 0..=4 of rank 0's");
        b.note_read(Boxes::Short, 0, 2);
        assert_eq!(a.read_through(1, Boxes::Short, 0), 5, "an older one read late does not move it back");
        c.note_read(Boxes::Long, 0, 7);
        assert_eq!(a.read_through(2, Boxes::Long, 0), 8);
        assert_eq!(a.read_through(2, Boxes::Short, 0), 0, "each kind has its own mark");
        assert_eq!(a.read_through(1, Boxes::Long, 0), 0, "each reader has its own");
        assert_eq!(c.read_through(1, Boxes::Short, 2), 0, "and per writer");
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
