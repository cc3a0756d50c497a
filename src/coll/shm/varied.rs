//! Alltoallv and alltoallw through the mailboxes: one publication per
//! rank of the blocks that fit, with a table of every block's size, the
//! others in long publications of whole blocks, in pieces or as messages.

use super::blocks::agreed_of;
use super::*;
use crate::p2p::request::ReqId;
use crate::runtime::backoff::thread_cpu_ns;

/// The most ranks an alltoallv or alltoallw goes through the mailboxes
/// among (`alltoallv`): a publication starts with 8 bytes per rank (and
/// 16 of the writer's words).
pub const VARIED_MAX_RANKS: usize = 64;

/// Entries of an alltoallv's ranks (at most `VARIED_MAX_RANKS`), on the
/// stack and only as many as there are: zeroing whole tables of the most
/// ranks took an eighth of an 8-byte Alltoallv's time at 2 ranks.
type PerRank<T> = arrayvec::ArrayVec<T, VARIED_MAX_RANKS>;

/// A block of an alltoallv that does not go in its writer's publication
/// (`alltoallv`): as a message or in pieces.
const OUTSIDE: u32 = u32::MAX;

/// A block's length in an alltoallv's table: HUGE for one of 4 GiB or
/// more (which goes as a message).
const HUGE: u32 = u32::MAX;

/// The bit of a table's offset (`OUTSIDE` aside) saying that the block
/// lies in one of its writer's long publications (`alltoallv`): the
/// publication's number above `LONG_AT`, the offset in it below.
const IN_LONG: u32 = 1 << 31;
const LONG_AT: u32 = 15;

/// The bit of a table's offset (`IN_LONG` clear) saying that the block is
/// read in place, at the offset below it in the span its writer
/// publishes by reference (`choose`).
const IN_PLACE: u32 = 1 << 30;

/// Where an entry `off` with `IN_LONG` puts its block: the long
/// publication's number and the offset in it.
fn long_place(off: u32) -> (usize, usize) {
    (((off & !IN_LONG) >> LONG_AT) as usize, (off & ((1 << LONG_AT) - 1)) as usize)
}

/// Whether a table's entry `off` puts its block in the writer's short
/// publication.
fn inline(off: u32) -> bool {
    off & (IN_LONG | IN_PLACE) == 0
}

/// Where a reader finds a block that its writer's table puts in a long
/// publication or in the span read in place (`off`): the publication's
/// number and the offset in it.
fn beside(off: u32) -> (usize, usize) {
    if off & IN_LONG != 0 {
        long_place(off)
    } else {
        (0, (off & !IN_PLACE) as usize)
    }
}

/// An alltoallv's or alltoallw's blocks, as `alltoallv` moves them.
pub trait Varied {
    /// Bytes of this rank's block for rank r.
    fn size(&self, r: usize) -> usize;
    /// This rank's block for rank r, in a row.
    fn block(&self, r: usize) -> &[u8];
    /// Bytes expected from rank q.
    fn expect(&self, q: usize) -> usize;
    /// Rank q's block came in its publication: put it in place.
    fn land(&mut self, q: usize, data: &[u8]);
    /// Where rank q's block lands when it comes outside the publication,
    /// `expect(q)` bytes: the user's buffer or a staging area (the
    /// caller's to unpack once the operation is done).
    fn landing(&mut self, q: usize) -> &mut [u8];
    /// Post the message of this rank's block for rank r.
    fn send(&mut self, e: &mut Engine, r: usize) -> MpiResult<ReqId>;
    /// Post the receive of rank q's block into `landing(q)`.
    fn recv(&mut self, e: &mut Engine, q: usize) -> ReqId;
}

/// Alltoallv or alltoallw through the mailboxes: every rank makes one
/// publication, a table of (offset, length) per rank and then the
/// blocks for the other ranks that fit (up to OXMPI_SHM_COLL_MAX bytes of
/// them), in rank order; a block that does not fit goes outside it,
/// which its table entry says with the block's length. So the members
/// agree without knowing each other's sizes: each reads every other's
/// table, and from them all learns every block that goes outside. Among
/// more than two ranks, a rank whose blocks beyond its short publication
/// each fit one long slot publishes them whole in long publications right
/// after it, as many in each as fit (`in_long`; its table gives their
/// places there), which its readers read once every table is read: one
/// round of publications, as an alltoall's (measured, medians of 6-8
/// alternated runs, against the same blocks outside in pieces: 4 ranks
/// on 2 cores, blocks of 2, 8, 16 and 32 KiB, 0.64, 0.66, 0.77 and 0.87
/// of the time; 3 ranks, 4 KiB, 0.69; 8 ranks, 2, 4 and 8 KiB, 0.59, 0.68
/// and 0.79; 16 ranks, 1 KiB, 0.67). On a crowded host, a rank's blocks
/// beyond its short publication that would go in pieces go so or are
/// read in place, as the members agree, and those that would go as
/// messages are read in place (`choose`). The rest outside
/// go in pieces through the long mailboxes, in lockstep, where
/// `tuning::in_pieces` says so for the rank with the most bytes outside,
/// else as messages. Returns the requests posted, for the caller to
/// wait for, and the first error of sizes that differ (the members
/// still stay in step, messages pairing up and pieces read as far as
/// they fit). This rank's own block is the caller's.
pub fn alltoallv(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    v: &mut impl Varied,
) -> MpiResult<(Vec<ReqId>, MpiResult<()>)> {
    let (n, me) = (m.group.size(), m.me);
    debug_assert!(n <= VARIED_MAX_RANKS);
    // (offset, length) a rank, and the writer's words (`Choice::note`)
    let table = 8 * n + 16;
    // on the arrival lines, this rank's part when its blocks fit one,
    // else (empty) word that its table is in its mailboxes; between two
    // ranks only when both parts fit (each knows both: its block and the
    // other's, where they differ the longer decides on both), so that
    // longer blocks are not held up by a look at the lines
    let lines = e.by_arrivals(m.group, 0) && (n != 2 || n + v.size(1 - me).max(v.expect(1 - me)) <= ARRIVAL_BYTES);
    let mut line = Line::default();
    let on_line = if lines { line_part(n, me, v, &mut line.0) } else { None };
    let part = &line.0[..on_line.unwrap_or(0)];
    if lines {
        e.post_part(stamp, Kind::Alltoallv, part);
    }
    let mut mine = PerRank::new();
    let mut choice = None;
    if on_line.is_some() {
        // (no block goes outside: that is all the table says now)
        mine.extend((0..n).map(|r| (0, v.size(r) as u32)));
    } else {
        // (offset, length) of each block in the publication, in rank
        // order while they fit (and come to at most OXMPI_SHM_COLL_MAX
        // bytes)
        let cap = Boxes::Short.bytes().min(table + tuning::shm_max());
        let mut end = table;
        for r in 0..n {
            let len = v.size(r);
            mine.push(if r == me {
                (0, 0)
            } else if end + len <= cap {
                end += len;
                ((end - len - table) as u32, len as u32)
            } else {
                (OUTSIDE, u32::try_from(len).unwrap_or(HUGE))
            });
        }
        let long = in_long(n, &mut mine);
        choice = if long.is_empty() { choose(e, m, stamp, v, &mut mine) } else { None };
        let note = choice.as_ref().map_or([0; 2], |c| c.note);
        let mine = &mine[..];
        e.publish_filled(Boxes::Short, stamp, end, m.others(me), |out| {
            out[8 * n..8 * n + 8].copy_from_slice(&note[0].to_le_bytes());
            out[8 * n + 8..8 * n + 16].copy_from_slice(&note[1].to_le_bytes());
            for (r, &(off, len)) in mine.iter().enumerate() {
                out[8 * r..8 * r + 4].copy_from_slice(&off.to_le_bytes());
                out[8 * r + 4..8 * r + 8].copy_from_slice(&len.to_le_bytes());
                if inline(off) && r != me {
                    let at = table + off as usize;
                    out[at..at + len as usize].copy_from_slice(v.block(r));
                }
            }
        })?;
        for (k, &bytes) in long.iter().enumerate() {
            let within = |off: u32| off != OUTSIDE && off & IN_LONG != 0 && long_place(off).0 == k;
            let readers = (0..n).filter(|&r| within(mine[r].0)).map(|r| m.world(r));
            e.publish_piece_filled(piece(stamp, k), bytes, bytes, true, readers, |out| {
                for (r, &(off, len)) in mine.iter().enumerate().filter(|(_, &(off, _))| within(off)) {
                    let at = long_place(off).1;
                    out[at..at + len as usize].copy_from_slice(v.block(r));
                }
            })?;
        }
        if let Some(span) = choice.as_ref().and_then(|c| c.span) {
            let readers = (0..n).filter(|&r| in_span(mine[r].0)).map(|r| m.world(r));
            e.publish_span(piece(stamp, 0), span, [0; 2], readers)?;
        }
    }
    let mine = &mine[..];
    let mut t = Outside::new();
    t.note(mine.iter().copied());
    let mut failed = FirstError::default();
    // the ranks whose tables are in their mailboxes, in rank order
    let mut tabled = PerRank::<usize>::new();
    if lines {
        // (a rank whose part is not one: the first such)
        let mut unlike = None;
        e.take_parts(m.group, stamp, Kind::Alltoallv, part, |q, theirs| {
            match (q == me, theirs.is_empty()) {
                (true, _) => {}
                (false, true) => tabled.push(q),
                (false, false) => match line_block(n, q, me, theirs) {
                    Some(block) => failed.keep(check_size(q, block.len(), v.expect(q)).map(|()| v.land(q, block))),
                    None => unlike = unlike.or(Some(q)),
                },
            }
            Ok(())
        })?;
        if let Some(q) = unlike {
            // (the ranks whose tables went to their mailboxes wait no more
            // for this rank's reads)
            e.give_up_mailboxes(stamp);
            return err!(
                Other,
                "rank {q} took part in this alltoallv another way: its part on its arrival line is not one"
            );
        }
    } else {
        tabled.extend((0..n).filter(|&q| q != me));
    }
    // the blocks for this rank in their writers' long publications or
    // read in place: rank, entry, length
    let mut longs = PerRank::<(usize, u32, usize)>::new();
    // the words of the writers that report (`Choice::note`)
    let mut notes = PerRank::<(usize, Note)>::new();
    for &q in &tabled {
        let read = e.use_mailbox(Boxes::Short, m.world(q), stamp, |data, seen| {
            let word = |at: usize| data.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
            if seen.astray {
                return Err(format!("published this operation in its long mailbox ({} bytes)", seen.stream));
            }
            if data.len() < table {
                return Err(format!("published {} bytes, less than a table", data.len()));
            }
            let entry = |r: usize| (word(8 * r).unwrap_or(0), word(8 * r + 4).unwrap_or(0));
            let note = |at: usize| data.get(at..at + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8")));
            if note(8 * n) != 0 || note(8 * n + 8) != 0 {
                notes.push((q, [note(8 * n), note(8 * n + 8)]));
            }
            t.note((0..n).filter(|&r| r != q).map(entry));
            match entry(me) {
                // outside, in a long publication or read in place
                (off, len) if !inline(off) => Ok(Ok(Some((off, len)))),
                (off, len) => {
                    let at = table + off as usize;
                    let Some(block) = data.get(at..at + len as usize) else {
                        let bytes = data.len();
                        return Err(format!("published {bytes} bytes, and its table puts {len} for this rank at {at}"));
                    };
                    Ok(check_size(q, block.len(), v.expect(q)).map(|()| {
                        v.land(q, block);
                        None
                    }))
                }
            }
        });
        match read {
            Ok(Ok(Ok(None))) => {}
            Ok(Ok(Ok(Some((OUTSIDE, len))))) => t.theirs.push((q, len)),
            Ok(Ok(Ok(Some((off, len))))) => longs.push((q, off, len as usize)),
            // the sizes differ
            Ok(Ok(Err(err))) => failed.keep(Err(err)),
            Ok(Err(what)) => {
                e.give_up_mailboxes(stamp);
                return err!(Other, "rank {q} took part in this alltoallv another way: it {what}");
            }
            Err(err) => return Err(err),
        }
    }
    // (each writer made its long publication right after its short one,
    // so these are there already, or nearly; each from the rank after
    // this one on, as an alltoall's read in place)
    let first = longs.iter().position(|&(q, _, _)| q > me).unwrap_or(0);
    longs.rotate_left(first);
    for &(q, off, len) in &longs {
        let (k, at) = beside(off);
        let landing = v.landing(q);
        let want = landing.len();
        e.read_agreed(Boxes::Long, m.world(q), piece(stamp, k), at, &mut landing[..len.min(want)])?;
        failed.keep(check_size(q, len, want));
    }
    for &(q, note) in &notes {
        e.agreed_heard_note(agreed_of(stamp, Kind::Alltoallv), q, note);
    }
    if choice.as_ref().is_some_and(|c| c.span.is_some()) {
        // this rank's blocks must stay as they are until they are read
        failed.keep(e.await_reads(Boxes::Long));
    }
    // as for an alltoall, a block decides (here the longest outside, as
    // if every rank's were that long); the bytes in all stay bounded
    let by_pieces = t.heaviest > 0
        && !t.huge
        && tuning::in_pieces(Pieces::Alltoall, n, t.longest.saturating_mul(n), 1)
        && t.heaviest <= tuning::shm_long_max();
    if by_pieces {
        failed.keep(varied_cut(e, m, stamp, v, (mine, &t)));
        if let Some(c) = choice.filter(|_| failed.ok()) {
            c.took(e, stamp);
        }
        return Ok((Vec::new(), failed.result()));
    }
    // between two ranks whose blocks both go outside (both know it from
    // the tables), as an alltoall's long blocks go
    let other = 1 - me;
    let both = n == 2 && mine[other].0 == OUTSIDE && t.theirs(other) > 0;
    if both && !t.huge && tuning::either_way(Pieces::Alltoall, 2, t.longest.saturating_mul(2)) {
        let block = v.block(other) as *const [u8];
        // SAFETY: this rank's block for the other, which lies apart from
        // where the other's lands (a send buffer or a packed copy of it,
        // against a receive buffer or a staging area).
        failed.keep(blocks::two_ways(e, m, stamp, (unsafe { &*block }, v.landing(other)), true));
        return Ok((Vec::new(), failed.result()));
    }
    if t.heaviest == 0 {
        if let Some(c) = choice.filter(|_| failed.ok()) {
            c.took(e, stamp);
        }
    }
    let mut posted = Vec::new();
    for r in (0..n).filter(|&r| r != me && mine[r].0 == OUTSIDE) {
        match v.send(e, r) {
            Ok(id) => posted.push(id),
            Err(err) => failed.keep(Err(err)),
        }
    }
    for &(q, _) in &t.theirs {
        posted.push(v.recv(e, q));
    }
    Ok((posted, failed.result()))
}

/// Among more than two ranks, when the blocks of `mine` (an alltoallv's
/// table, `alltoallv`) that go outside the short publication would go in
/// pieces and each fits one long slot: mark them as in long
/// publications, in rank order, as many in each as fit, up to `AHEAD`
/// publications, and return their bytes (else none). The readers of
/// those then read them beside the short ones, with no second round of
/// publications, as in `alltoall_whole`.
fn in_long(n: usize, mine: &mut [(u32, u32)]) -> arrayvec::ArrayVec<usize, AHEAD> {
    let mut long = arrayvec::ArrayVec::new();
    if n <= 2 {
        // (before the sums: a tenth of a 2-rank 8-byte Alltoallv's
        // instructions went to them)
        return long;
    }
    let outside = || mine.iter().filter(|&&(off, _)| off == OUTSIDE).map(|&(_, len)| len as usize);
    let (bytes, longest) = (outside().sum::<usize>(), outside().max().unwrap_or(0));
    let slot = Boxes::Long.bytes();
    let fits = longest <= slot && bytes <= (AHEAD * slot).min(tuning::shm_long_max());
    if bytes == 0 || !fits || !tuning::in_pieces(Pieces::Alltoall, n, longest * n, 1) {
        return long;
    }
    // filled in rank order, as many blocks in each as fit
    let mut placed = PerRank::new();
    for len in outside() {
        if long.last().is_none_or(|&end| end + len > slot) {
            if long.is_full() {
                return arrayvec::ArrayVec::new();
            }
            long.push(0);
        }
        let k = long.len() - 1;
        placed.push(IN_LONG | (k as u32) << LONG_AT | long[k] as u32);
        long[k] += len;
    }
    for (entry, off) in mine.iter_mut().filter(|&&mut (off, _)| off == OUTSIDE).zip(placed) {
        entry.0 = off;
    }
    long
}

/// Whether a table's entry `off` has its block read in place, in its
/// writer's span.
fn in_span(off: u32) -> bool {
    // (`OUTSIDE` has `IN_LONG` set)
    off & (IN_LONG | IN_PLACE) == IN_PLACE
}

/// The way an alltoallv's blocks beyond the short publications go
/// (`choose`), and what times it where the members agree on it.
struct Choice {
    way: Way,
    /// Where the way is agreed: the size it is agreed for (this rank's
    /// longest block outside) and the thread's processor time when the
    /// call chose.
    timed: Option<(usize, u64)>,
    /// This rank's words for the others (in its table; zeros: none).
    note: Note,
    /// The span of this process's memory its blocks are read in place
    /// from (`Way::Read`): address, bytes.
    span: Option<(usize, usize)>,
}

impl Choice {
    /// The call went as chosen: take note of the processor time it took.
    fn took(self, e: &mut Engine, stamp: u64) {
        if let Some((key, start)) = self.timed {
            let ns = thread_cpu_ns().saturating_sub(start);
            e.agreed_took(agreed_of(stamp, Kind::Alltoallv), key, self.way, ns);
        }
    }
}

/// Among more than two ranks on a crowded host, how the blocks of `mine`
/// (an alltoallv's table, `alltoallv`) that go outside the short
/// publication go: where they would go in pieces (`tuning::in_pieces`,
/// for the longest), so or read in place, as an alltoall's long blocks
/// (`blocks::agreed`: the way the communicator's last calls of this size
/// took every member less processor time, each member's estimates in its
/// table); where they would go as messages, read in place (one
/// cross-memory copy each as well, but no handshake per block). Read in
/// place, they are marked so, at their offsets in the span of this
/// process's memory from the first one's start to the last one's end,
/// which the returned choice holds to publish by reference. None where
/// none of that applies (OXMPI_CROWDED_BLOCKS=pieces forces the pieces
/// or messages). Measured, Alltoallv in a loop, medians of 6-10
/// alternated runs, against pieces or messages always (Open MPI): 4 ranks
/// on 2 cores (Xeon), blocks of 40, 64 and 120 KiB in pieces, 38.6, 42.9
/// and 105 us against 43.8, 66.8 and 154 (41.0, 58.2, 165); 256 KiB and
/// 1 MiB as messages, 243 and 873 against 277 and 996 (268, 1161); 3
/// ranks, 64 KiB, 33.4 against 41.1 (37.3).
fn choose(e: &mut Engine, m: &Members, stamp: u64, v: &impl Varied, mine: &mut [(u32, u32)]) -> Option<Choice> {
    let n = m.group.size();
    let forced = tuning::agreed_blocks(Pieces::Alltoall, n)?;
    let outside = || (0..n).filter(|&r| mine[r].0 == OUTSIDE);
    let key = outside().map(|r| mine[r].1).max()? as usize;
    if key == HUGE as usize {
        return None;
    }
    let mut choice = if tuning::in_pieces(Pieces::Alltoall, n, key * n, 1) {
        let (way, note, timed) = e.agreed_way(agreed_of(stamp, Kind::Alltoallv), m.group, m.me, key, forced);
        Choice { way, timed: timed.then(|| (key, thread_cpu_ns())), note, span: None }
    } else if forced != Some(Way::Pieces) && outside().all(|r| e.may_be_read(m.world(r))) {
        Choice { way: Way::Read, timed: None, note: [0; 2], span: None }
    } else {
        return None;
    };
    if choice.way == Way::Read {
        let at = |r: usize| v.block(r).as_ptr() as usize;
        let (first, end) = (outside().map(at).min()?, outside().map(|r| at(r) + v.size(r)).max()?);
        if end - first >= IN_PLACE as usize {
            // (blocks that far apart go the other way, untimed)
            return None;
        }
        for (r, entry) in mine.iter_mut().enumerate().filter(|(_, e)| e.0 == OUTSIDE) {
            entry.0 = IN_PLACE | (at(r) - first) as u32;
        }
        choice.span = Some((first, end - first));
    }
    Some(choice)
}

/// This rank's part of an alltoallv on its arrival line (`alltoallv`):
/// a byte per rank, the length of its block for that rank (its own 0),
/// then those blocks in rank order; Some(its bytes) when they fit a line.
fn line_part(n: usize, me: usize, v: &impl Varied, out: &mut [u8; ARRIVAL_BYTES]) -> Option<usize> {
    let mut end = n;
    for r in 0..n {
        let len = if r == me { 0 } else { v.size(r) };
        if end > ARRIVAL_BYTES || len > ARRIVAL_BYTES - end {
            return None;
        }
        out[r] = len as u8;
        out[end..end + len].copy_from_slice(if r == me { &[] } else { v.block(r) });
        end += len;
    }
    Some(end)
}

/// Rank q's block for rank `me` in q's part of an alltoallv on its
/// arrival line (`line_part`); None when `part` is not such a part.
fn line_block(n: usize, q: usize, me: usize, part: &[u8]) -> Option<&[u8]> {
    let lens = part.get(..n)?;
    let total = n + lens.iter().map(|&l| l as usize).sum::<usize>();
    if total != part.len() || lens[q] != 0 {
        return None;
    }
    let at = n + lens[..me].iter().map(|&l| l as usize).sum::<usize>();
    part.get(at..at + lens[me] as usize)
}

/// What an alltoallv's tables say goes outside the publications
/// (`alltoallv`).
struct Outside {
    /// The most bytes one rank sends outside.
    heaviest: usize,
    /// The longest block outside.
    longest: usize,
    /// Some block is of 4 GiB or more.
    huge: bool,
    /// The ranks whose block for this rank goes outside, in rank order,
    /// with its length (an empty block never does).
    theirs: PerRank<(usize, u32)>,
}

impl Outside {
    /// Nothing outside yet.
    fn new() -> Outside {
        Outside { heaviest: 0, longest: 0, huge: false, theirs: PerRank::new() }
    }

    /// The length of rank q's block for this rank when it goes outside,
    /// or 0.
    fn theirs(&self, q: usize) -> usize {
        self.theirs.iter().find(|&&(r, _)| r == q).map_or(0, |&(_, len)| len as usize)
    }

    /// Take note of one rank's table `entries` (offset, length).
    fn note(&mut self, entries: impl Iterator<Item = (u32, u32)>) {
        let mut sum = 0;
        for (_, len) in entries.filter(|&(off, _)| off == OUTSIDE) {
            sum += len as usize;
            self.longest = self.longest.max(len as usize);
            self.huge |= len == HUGE;
        }
        self.heaviest = self.heaviest.max(sum);
    }
}

/// The blocks of an alltoallv that go outside the publications, in
/// pieces, in lockstep as `alltoall_cut`: item t is piece t % P of the
/// block for the rank 1 + t / P after this one and of the block from as
/// far before, P being the pieces of the longest block (every rank knows
/// it from the tables); a block with fewer pieces skips the rest, on
/// both sides alike. Each side goes by the writer's length (from its
/// table), so that a reader expecting another reads what fits and the
/// members stay in step; Err(the sizes differ) then.
fn varied_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    v: &mut impl Varied,
    (mine, t): (&[(u32, u32)], &Outside),
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let cut = Cut::new(t.longest, 1);
    let per = cut.pieces.max(1);
    let pieces = |len: usize| Cut::new(len, 1).pieces.max(1);
    let at = |t: usize| (1 + t / per, t % per);
    let mut failed = FirstError::default();
    pipeline(e, (n - 1) * per, |e, step| match step {
        Step::Publish(item) => {
            let (i, p) = at(item);
            let to = (me + i) % n;
            let (off, len) = (mine[to].0, mine[to].1 as usize);
            if off != OUTSIDE || p >= pieces(len) {
                return Ok(());
            }
            let last = p + 1 == pieces(len);
            e.publish_piece(piece(stamp, item), &v.block(to)[cut.piece(0..len, p)], len, last, [m.world(to)])
        }
        Step::Read(item) => {
            let (i, p) = at(item);
            let from = (me + n - i) % n;
            let len = t.theirs(from);
            if len == 0 || p >= pieces(len) {
                return Ok(());
            }
            let landing = v.landing(from);
            let want = landing.len();
            let range = cut.piece(0..len, p);
            let into = &mut landing[range.start.min(want)..range.end.min(want)];
            e.read_agreed(Boxes::Long, m.world(from), piece(stamp, item), 0, into)?;
            if p == 0 {
                failed.keep(check_size(from, len, want));
            }
            Ok(())
        }
    })?;
    failed.result()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rank s's blocks of an alltoallv among 3: `s + r` bytes of value
    /// `10 * s + r` for rank r, times `scale`.
    struct Blocks {
        s: usize,
        scale: usize,
        data: Vec<Vec<u8>>,
    }

    impl Blocks {
        fn new(s: usize, scale: usize) -> Blocks {
            Blocks { s, scale, data: (0..3).map(|r| vec![(10 * s + r) as u8; (s + r) * scale]).collect() }
        }
    }

    impl Varied for Blocks {
        fn size(&self, r: usize) -> usize {
            self.data[r].len()
        }
        fn block(&self, r: usize) -> &[u8] {
            &self.data[r]
        }
        fn expect(&self, q: usize) -> usize {
            (q + self.s) * self.scale
        }
        fn land(&mut self, _: usize, _: &[u8]) {}
        fn landing(&mut self, _: usize) -> &mut [u8] {
            &mut []
        }
        fn send(&mut self, _: &mut Engine, _: usize) -> MpiResult<ReqId> {
            unreachable!("no messages here")
        }
        fn recv(&mut self, _: &mut Engine, _: usize) -> ReqId {
            unreachable!("no messages here")
        }
    }

    #[test]
    fn a_table_entry_says_where_its_block_is() {
        // inline in the short publication, at its offset
        assert!(inline(0) && inline(4000) && !in_span(4000));
        // the third long publication, 100 bytes in
        let long = IN_LONG | 2 << LONG_AT | 100;
        assert!(!inline(long) && !in_span(long));
        assert_eq!(beside(long), (2, 100));
        // read in place, at its offset in the writer's span (up to 1 GiB)
        for at in [0, 65_536, (IN_PLACE - 1) as usize] {
            let off = IN_PLACE | at as u32;
            assert!(!inline(off) && in_span(off));
            assert_eq!(beside(off), (0, at));
        }
        // outside: neither in a publication nor in a span
        assert!(!inline(OUTSIDE) && !in_span(OUTSIDE));
    }

    #[test]
    fn a_part_on_an_arrival_line_gives_each_reader_its_block() {
        for s in 0..3 {
            let mut line = [0u8; ARRIVAL_BYTES];
            let len = line_part(3, s, &Blocks::new(s, 1), &mut line).expect("fits");
            let part = &line[..len];
            for me in (0..3).filter(|&me| me != s) {
                assert_eq!(line_block(3, s, me, part), Some(&vec![(10 * s + me) as u8; s + me][..]), "{s} to {me}");
            }
            // a part cut short, or one that gives its own rank a block, is
            // not one
            assert_eq!(line_block(3, s, (s + 1) % 3, &part[..len - 1]), None);
            let mut own = part.to_vec();
            own[s] = 1;
            own.push(0);
            assert_eq!(line_block(3, s, (s + 1) % 3, &own), None);
        }
        // rank 2's blocks for the others, 2 + 3 = 5 times 7 bytes, and a
        // byte a rank: 38 fit; 5 times 8 with them, 43, do not
        assert_eq!(line_part(3, 2, &Blocks::new(2, 7), &mut [0; ARRIVAL_BYTES]), Some(38));
        assert_eq!(line_part(3, 2, &Blocks::new(2, 8), &mut [0; ARRIVAL_BYTES]), None);
    }
}
