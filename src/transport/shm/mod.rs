//! The shared-memory transport: one segment per job, mapped by every rank.
//!
//! Layout: a header page (geometry, then two cache lines per rank with its
//! doorbell, then one per rank with its mailboxes' publication counts),
//! then one `Ring` per ordered pair (src, dst), then the mailboxes of
//! every rank (blocking collectives publish their data there). Rank 0 creates
//! the segment in /dev/shm with mode 0600 and publishes its name through
//! PMI; the last rank to map it unlinks it (rank 0 too, once all have,
//! or when MPI_Init fails), so it never outlives the job (our launcher
//! also sweeps its job's names at exit).
//!
//! Here the segment, its mailboxes and read marks; the doorbells and
//! where ranks run in `doorbell`, the arrival lines in `arrival`, the
//! cross-memory copies that bypass the segment in `cma`, the rings in
//! `ring`.

mod arrival;
mod cma;
mod doorbell;
pub mod ring;

pub use arrival::{LineSet, ARRIVAL_BYTES, KEPT, SETS, STARTED};
pub use cma::{read_remote, read_remote_into, write_remote};
pub use doorbell::Doorbell;

use crate::err;
use crate::error::MpiResult;

use ring::Ring;
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Ranks that mapped the segment so far, its creator included: the
    /// one that makes it `nranks` removes the name (`attach`).
    attached: AtomicU64,
    /// The number of the collective on the arrival lines in which a rank
    /// found another in another collective (`p2p::arrival`), its set's
    /// index (`arrival::LineSet`) in the top byte, or 0.
    failed_arrival: AtomicU64,
}

impl SegHeader {
    /// The rings' geometry `create` wrote here.
    fn geometry(&self) -> Geometry {
        Geometry { nslots: self.nslots as usize, payload: self.payload as usize }
    }
}

const _: () = assert!(std::mem::size_of::<SegHeader>() <= LINE);

/// Per-rank line: how many publications the rank made in each of its
/// mailboxes, so that a reader waiting for one looks at a single word
/// and then only at the slots written since its last look.
#[repr(C)]
struct Posts {
    published: [AtomicU64; 2],
    /// The rank has asked the launcher for MPI_Init's last barrier
    /// (`wireup`): should it end now, the barrier still completes.
    joined: AtomicU64,
    /// Where the segment lies in the rank's memory: a rank reading it
    /// there by a cross-memory copy learns whether the kernel lets it
    /// read the rank's memory (`Segment::probe`).
    mapped_at: AtomicU64,
}

const _: () = assert!(std::mem::size_of::<Posts>() <= LINE);

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
    /// This rank's looks at where the host's ranks run (`spread`).
    spread_looks: doorbell::Looks,
    /// Other programs and the machine's load (`cores_taken`).
    load: doorbell::Load,
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

    /// The slot of publication `number`: `number % slots()`, by a mask
    /// (the slots are powers of two), where the remainder would cost a
    /// division on every publication and every read.
    pub const fn slot_of(self, number: u64) -> usize {
        const _: () = assert!(Boxes::Short.slots().is_power_of_two() && Boxes::Long.slots().is_power_of_two());
        (number & (self.slots() as u64 - 1)) as usize
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
    /// In the long mailbox: words from the writer to its readers
    /// (`p2p::mailbox::Ways`), 0 for none.
    pub note: [AtomicU64; 2],
    _line2: [u64; 5],
}

/// `Mailbox::stream`'s mark of a stream's last piece.
pub const LAST: u64 = 1 << 63;

/// `Mailbox::stream`'s mark of a publication by reference: its data is
/// the address, in its writer's memory, of the stream's bytes, which
/// readers copy from there by cross-memory reads (`p2p::mailbox`).
pub const BY_REFERENCE: u64 = 1 << 62;

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

/// The ring slots a pair gets by default (`OXMPI_SLOTS=auto`) on a host
/// running more ranks than cores: as many as keep the host's rings
/// within `CROWDED_RINGS` bytes of payload, from 8 to 64. There a sender
/// of many messages in a row runs ahead of receivers that wait for a
/// core, and the slots set how often it hands its core over for want of
/// room (a broadcast's root, each of a halo exchange's senders).
/// Measured, 4 ranks on 2 cores, medians of 4-5 interleaved runs, 8
/// slots against 64: Ibcast of 8 B 1.02 us against 0.59 (Open MPI
/// 0.75-0.90), of 64 KiB 21.3 against 8.5; rank 0 sending 8 B to each
/// other rank in a loop 1.03 against 0.54 (Open MPI 0.24-0.36); ping-pong
/// of 16 and 64 KiB beside two ranks in a barrier 3.0 and 10.6 against
/// 1.7 and 5.0; the blocking collectives, which go through the
/// mailboxes, alike; NAS CG, MG, IS and FT alike. On an uncrowded host
/// the receiver runs and keeps up, and 8 slots stay in the caches where
/// 64 (a MiB) do not: a 2-rank ping-pong (medians of 6 alternated runs)
/// took 0.13 us at 0 B with 8 and 0.17 with 64, 4 KiB 0.61 against 0.76,
/// 256 KiB 25 against 30, and no nonblocking collective got faster.
pub fn auto_slots(ranks: usize, crowded: bool, payload: usize) -> usize {
    if !crowded {
        return 8;
    }
    let fit = CROWDED_RINGS / (ranks * ranks * payload).max(1);
    fit.checked_ilog2().map_or(0, |b| 1 << b).clamp(8, 64)
}

/// `auto_slots`'s bound on the payload of a crowded host's rings: 64
/// slots of 16 KiB for up to 4 ranks, 16 at 8.
const CROWDED_RINGS: usize = 16 << 20;

/// The largest segment `Segment::populate` maps whole at MPI_Init (up to
/// 16 ranks a host); a larger one (32 ranks take 128 MiB of rings, every
/// pair's) is mapped page by page as its ranks reach it.
const POPULATE_MAX: usize = 64 << 20;

/// The size of /dev/shm, where shm_open puts the segment.
fn shm_size() -> Option<u64> {
    // SAFETY: statvfs is plain data (zero is a valid value of it); the
    // call gets a NUL-terminated path and a statvfs to write.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c"/dev/shm".as_ptr(), &mut st) == 0).then(|| st.f_blocks as u64 * st.f_frsize as u64)
    }
}

/// The lines of one rank's row of read marks (`Segment::note_read`): a
/// word per mailbox kind and writer, then, from a line of their own, its
/// reads of short publications as it makes them (`Segment::note_seen`).
fn read_row_lines(nranks: usize) -> usize {
    marks_lines(nranks) + (nranks * 8).div_ceil(LINE)
}

/// The lines of a row's read marks proper (`read_row_lines`).
fn marks_lines(nranks: usize) -> usize {
    (2 * nranks * 8).div_ceil(LINE)
}

/// Where the rows of read marks start: after the segment header's line,
/// the doorbells' and the posts' lines (two and one per rank).
fn read_rows_at(nranks: usize) -> usize {
    LINE + 3 * nranks * LINE
}

/// Where the arrival lines start: after the rows of read marks,
/// `arrival::LINES_PER_RANK` lines per rank.
fn arrivals_at(nranks: usize) -> usize {
    read_rows_at(nranks) + nranks * read_row_lines(nranks) * LINE
}

fn layout(nranks: usize, g: &Geometry) -> (usize, usize) {
    let header = (arrivals_at(nranks) + nranks * arrival::LINES_PER_RANK * LINE).div_ceil(PAGE) * PAGE;
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
        h.attached.store(1, Ordering::Relaxed);
        h.magic.store(MAGIC, Ordering::Release);
        Ok(Self::with_rings(base, bytes, nranks, me))
    }

    /// Other ranks: map the segment rank 0 created. The last of them to
    /// map it removes its name at once, so that no rank leaves MPI_Init
    /// with the name still there: a rank that dies just after, under a
    /// launcher that sweeps nothing (Hydra), whose kill may reach the
    /// creator before it removes the name itself, leaves nothing behind.
    pub fn attach(name: &str, me: usize) -> MpiResult<Segment> {
        let cname = CString::new(name).unwrap();
        // SAFETY: plain libc calls; the mapping is checked before use.
        unsafe {
            let fd = libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0);
            if fd < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOENT) {
                    // the name goes only once every rank mapped it, or as
                    // its creator gives up
                    return err!(
                        Other,
                        "cannot open shared segment /dev/shm{name}: it is gone: the host's first rank, which made it, ended or gave up during MPI_Init (its own line may say why)"
                    );
                }
                return err!(Other, "cannot open shared segment /dev/shm{name}: {e}");
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
            if h.attached.fetch_add(1, Ordering::AcqRel) + 1 == h.nranks {
                libc::shm_unlink(cname.as_ptr());
            }
            Ok(Self::with_rings(base, bytes, h.nranks as usize, me))
        }
    }

    fn with_rings(base: *mut u8, bytes: usize, nranks: usize, me: usize) -> Segment {
        // SAFETY: the header was written by `create` before the magic.
        let g = unsafe { &*(base as *const SegHeader) }.geometry();
        let (header, ring) = layout(nranks, &g);
        let rings = (0..nranks * nranks)
            // SAFETY: each ring lies inside the mapping at its own offset,
            // 64-aligned, zero-filled by ftruncate.
            .map(|i| unsafe { Ring::new(base.add(header + i * ring), g.nslots, g.payload) })
            .collect();
        // SAFETY: the mailboxes follow the rings inside the mapping.
        let mailboxes = unsafe { base.add(mailboxes_at(nranks, &g)) };
        // SAFETY: the header page has one line per rank after the
        // doorbells (`posts`).
        let posts = unsafe { &*(base.add(LINE + (2 * nranks + me) * LINE) as *const Posts) };
        posts.mapped_at.store(base as u64, Ordering::Release);
        Segment {
            base,
            bytes,
            nranks,
            me,
            rings,
            mailboxes,
            spread_over: Vec::new(),
            spread_looks: Default::default(),
            load: Default::default(),
        }
    }

    /// Map now, at MPI_Init, the pages of the segment this rank will
    /// touch (the header, its rings to and from each rank, and every
    /// rank's mailboxes), for a segment of up to `POPULATE_MAX` bytes.
    /// Otherwise each page faults the first time a message or a
    /// collective reaches it, which may be in the middle of a program's
    /// timed loop: measured, NAS-style kernels at class A, 4 ranks on 2
    /// cores, 180-810 page faults a rank in the timed part of CG, 350 in
    /// MG's, 120-180 in IS's (310 at 2 ranks): the ring slots and long
    /// mailboxes their untimed passes did not reach; none now. MPI_Init
    /// takes 3 ms longer at 2 ranks, 10 at 4 on 2 cores (MPICH's takes
    /// 30-45 and 110-140, Open MPI's 220-280). And a host whose /dev/shm
    /// cannot hold the segment fails here, with an error that says so,
    /// where it would have died of SIGBUS whenever a collective first
    /// reached a page past the room. Where the kernel lacks
    /// MADV_POPULATE_WRITE (before Linux 5.14) the pages fault as before.
    pub fn populate(&self) -> MpiResult<()> {
        if self.bytes > POPULATE_MAX {
            return Ok(());
        }
        let (header, ring) = layout(self.nranks, &self.header().geometry());
        let at = |i: usize| header + i * ring;
        let (n, me) = (self.nranks, self.me);
        let rings = (0..n).flat_map(|r| [me * n + r, r * n + me]).map(|i| at(i)..at(i) + ring);
        // SAFETY: no arguments.
        let page = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(1) as usize;
        // SAFETY: both point into this mapping, the mailboxes after its base.
        let mailboxes = unsafe { self.mailboxes.offset_from(self.base) } as usize;
        let spans = std::iter::once(0..header).chain(rings).chain(std::iter::once(mailboxes..self.bytes));
        for span in spans {
            let (from, to) = (span.start / page * page, span.end.div_ceil(page) * page);
            // SAFETY: a page-aligned range inside this process's mapping
            // of the segment (which covers whole pages); populating writes
            // no data.
            if unsafe { libc::madvise(self.base.add(from).cast(), to - from, libc::MADV_POPULATE_WRITE) } == 0 {
                continue;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EFAULT) {
                // a page would have raised SIGBUS: no room left for it
                return err!(
                    NoMem,
                    "this host's shared-memory segment needs {} bytes, more than /dev/shm has room for ({} bytes in all): make /dev/shm larger (docker run --shm-size=..., or mount -o remount,size=... /dev/shm)",
                    self.bytes,
                    shm_size().map_or("unknown".into(), |b| b.to_string())
                );
            }
            // no MADV_POPULATE_WRITE (EINVAL before Linux 5.14), or
            // nothing this rank can mend: the pages fault as before
            return Ok(());
        }
        Ok(())
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

    /// `reader`'s word for `writer`'s short mailbox on the line of its row
    /// that writers look at only when a wait for its mark drags on
    /// (`note_seen`).
    fn seen_mark(&self, reader: usize, writer: usize) -> &AtomicU64 {
        assert!(reader < self.nranks && writer < self.nranks);
        let row = read_rows_at(self.nranks) + (reader * read_row_lines(self.nranks) + marks_lines(self.nranks)) * LINE;
        // SAFETY: as `read_mark`: the row's last line(s), a word per writer.
        unsafe { &*(self.base.add(row + writer * 8) as *const AtomicU64) }
    }

    /// We are done with `writer`'s short publication `number` (and those
    /// before it), a read whose mark we store later (`note_read`): said
    /// by a plain store on a line of our own that no writer looks at
    /// while its wait for our mark is short.
    pub fn note_seen(&self, writer: usize, number: u64) {
        self.seen_mark(self.me, writer).store(number + 1, Ordering::Release);
    }

    /// How far `reader` is with `writer`'s short publications, by its
    /// `note_seen` (ahead of `read_through`'s mark, or equal).
    pub fn seen_through(&self, reader: usize, writer: usize) -> u64 {
        self.seen_mark(reader, writer).load(Ordering::Acquire)
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

    /// We have asked the launcher for MPI_Init's last barrier
    /// (`Posts::joined`).
    pub fn note_joined(&self) {
        self.posts(self.me).joined.store(1, Ordering::Release);
    }

    /// Whether this process may read the memory of `rank` (process `pid`)
    /// by cross-memory copies (ptrace policy, a container's filters): a
    /// read of the first word of its mapping of the segment. None: the
    /// rank has not mapped it yet.
    pub fn probe(&self, rank: usize, pid: i32) -> Option<bool> {
        let at = self.posts(rank).mapped_at.load(Ordering::Acquire);
        if at == 0 {
            return None;
        }
        let mut word = [0u8; 8];
        Some(cma::read_remote(pid, at, &mut word) && u64::from_ne_bytes(word) == MAGIC)
    }

    /// `rank` had asked the launcher for MPI_Init's last barrier.
    pub fn joined(&self, rank: usize) -> bool {
        self.posts(rank).joined.load(Ordering::Acquire) != 0
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

    /// The slots of each ring.
    pub fn slots(&self) -> usize {
        self.rings[0].slots()
    }

    /// The longest payload of one frame in a ring (`Ring::max_frame`).
    pub fn max_frame(&self) -> usize {
        self.rings[0].max_frame()
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

    /// A host's segment as each of its `n` ranks maps it (`what` names it).
    pub(super) fn ranks(what: &str, n: usize) -> Vec<Segment> {
        let name = format!("/oxmpi-test-{what}-{}", std::process::id());
        let g = Geometry { nslots: 4, payload: 1024 };
        let mut all = vec![Segment::create(&name, n, 0, &g).expect("segment")];
        all.extend((1..n).map(|r| Segment::attach(&name, r).expect("attach")));
        Segment::unlink(&name);
        all
    }

    #[test]
    fn a_publication_goes_to_its_number_modulo_the_slots() {
        for kind in [Boxes::Short, Boxes::Long] {
            for number in (0..1000).chain(u64::MAX - 300..=u64::MAX) {
                assert_eq!(kind.slot_of(number) as u64, number % kind.slots() as u64);
            }
        }
    }

    #[test]
    fn auto_slots_deepen_rings_only_on_a_crowded_host_within_a_bound() {
        let kib16 = 16 << 10;
        assert_eq!(auto_slots(4, false, kib16), 8, "a core per rank: receivers keep up");
        assert_eq!(auto_slots(2, true, kib16), 64);
        assert_eq!(auto_slots(4, true, kib16), 64);
        assert_eq!(auto_slots(5, true, kib16), 32);
        assert_eq!(auto_slots(8, true, kib16), 16);
        assert_eq!(auto_slots(64, true, kib16), 8, "never fewer than uncrowded");
        assert_eq!(auto_slots(4, true, 1 << 20), 8, "a large eager limit: fewer slots");
    }

    #[test]
    fn the_last_rank_to_map_the_segment_removes_its_name() {
        let name = format!("/oxmpi-test-name-{}", std::process::id());
        let exists = || std::path::Path::new(&format!("/dev/shm{name}")).exists();
        let g = Geometry { nslots: 4, payload: 1024 };
        let _a = Segment::create(&name, 3, 0, &g).expect("segment");
        let _b = Segment::attach(&name, 1).expect("attach");
        assert!(exists(), "rank 2 has yet to map it");
        let _c = Segment::attach(&name, 2).expect("attach");
        assert!(!exists(), "everyone mapped it: the name is gone");
    }

    #[test]
    fn populate_maps_a_ranks_rings_and_every_mailbox() {
        let name = format!("/oxmpi-test-populate-{}", std::process::id());
        let g = Geometry { nslots: 4, payload: 16 << 10 };
        let a = Segment::create(&name, 3, 0, &g).expect("segment");
        let c = Segment::attach(&name, 2).expect("attach");
        Segment::unlink(&name);
        let (header, ring) = layout(3, &g);
        // the pages wholly inside `span` that hold memory (shared: what any
        // rank populated), seen through c's mapping
        let resident = |span: std::ops::Range<usize>| {
            let (from, to) = (span.start.div_ceil(PAGE) * PAGE, span.end / PAGE * PAGE);
            let mut v = vec![0u8; (to - from) / PAGE];
            // SAFETY: a page-aligned range of c's mapping, a byte of v a page.
            assert_eq!(unsafe { libc::mincore(c.base.add(from).cast(), to - from, v.as_mut_ptr()) }, 0);
            (v.iter().filter(|&&p| p & 1 != 0).count(), v.len())
        };
        let ring_of = |src: usize, dst: usize| {
            let at = header + (src * 3 + dst) * ring;
            at..at + ring
        };
        let mailboxes = mailboxes_at(3, &g)..a.bytes;
        assert_eq!(resident(mailboxes.clone()).0, 0, "nothing has touched the mailboxes yet");
        a.populate().expect("populate");
        let (held, all) = resident(mailboxes);
        assert!(all > 0 && held == all, "every rank's mailboxes: {held} of {all} pages");
        for (src, dst) in [(0, 1), (0, 2), (1, 0), (2, 0)] {
            let (held, all) = resident(ring_of(src, dst));
            assert!(all > 0 && held == all, "rank 0's ring {src} -> {dst}: {held} of {all} pages");
        }
        assert_eq!(resident(ring_of(2, 1)).0, 0, "not a ring between two other ranks");
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
        c.note_seen(1, 9);
        assert_eq!(a.seen_through(2, 1), 10, "a read seen");
        assert_eq!(a.read_through(2, Boxes::Short, 1), 0, "is not yet marked");
        assert_eq!((a.seen_through(1, 0), a.seen_through(2, 0)), (0, 0), "per reader and writer");
    }
}
