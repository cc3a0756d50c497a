//! Blocking collectives through the shared-memory mailboxes
//! (`p2p::mailbox`): no envelopes, matching or requests. Short ones, up
//! to `OXMPI_SHM_COLL_MAX` bytes, publish whole: a broadcast is one
//! publication read by everyone; a reduction gathers the contributions
//! at local rank 0, which folds them in rank order (v0 op v1 op ... so
//! the result is the one every other algorithm computes) and publishes
//! the result; a scan has each rank publish its part to the ranks after
//! it and fold those of the ranks before it, so that no rank waits for a
//! later one; a barrier is a reduction of nothing (those of the whole
//! world, and its allreduces, allgathers and alltoalls of up to a line's
//! bytes, go on the ranks' arrival lines instead, `p2p::arrival`); an allgather or
//! alltoall is one publication per rank, each reading its part of
//! everyone's; a gather is one publication per rank read by the root
//! alone, a scatter the root's one publication of every block, each rank
//! reading its own; an allgatherv is one publication per rank of its own
//! size, which every rank knows; an alltoallv or alltoallw is one
//! publication per rank of the blocks that fit, with a table of every
//! block's size saying which others go outside it (no rank knows the
//! others' sizes, so the tables let them agree): whole in long
//! publications right after it where each fits one (among more than two
//! ranks), else in pieces, read in place or as messages. Longer broadcasts, gathers, scatters, allgathers (and
//! allgathervs of parts of one size) and alltoalls go the same
//! ways in pieces through the long mailboxes, every rank a few pieces
//! ahead of its reads (an alltoall among more than two ranks whose
//! blocks for the others fit one long slot goes as one publication per
//! rank, as a short one does, and so does an allgatherv's part of a size
//! of its own where each fits one long slot): each byte is copied in once
//! and out once by memcpy, and ranks sharing a core pass it on while it
//! is in the cache (`tuning::in_pieces` says when that beats a single
//! cross-memory copy). Between two ranks, an allgather's or alltoall's
//! longer blocks go there too, the two choosing alike per call between
//! pieces and publications by reference, which each reader copies
//! straight out of the writer's memory (`blocks::two_ways`,
//! `tuning::either_way`).
//! A scan of up to two pieces goes along the ranks: each reads the prefix
//! of the ranks before it from the rank before, folds its own piece in
//! after it and publishes the result for the next. A long reduce-scatter among more than two
//! ranks has every rank fold its segment piece by piece straight from the
//! others' mailboxes; a long allreduce is that, then an allgather of the
//! folded segments; a long reduce has the root fold every piece straight
//! from the others' mailboxes. The path is chosen from the operation, the
//! byte count and the host, which every member knows alike, so all take
//! it together. Here what they share, the broadcast and the barrier; the
//! collectives that move blocks are in `blocks`, the reductions in
//! `reduce`, the alltoallv and alltoallw in `varied`.

use super::tuning::{self, Pieces};
use crate::comm::Group;
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op;
use crate::p2p::arrival::{Kind, ARRIVAL_BYTES};
use crate::p2p::mailbox::{Boxes, Note, Seen, Way};
use crate::p2p::Engine;
use std::ops::Range;

mod blocks;
mod reduce;
mod varied;
pub use blocks::{allgather, allgatherv, allgatherv_form, alltoall, gather, scatter};
use reduce::ALL_READ_ALL;
pub use reduce::{allreduce, folding, reduce, reduce_scatter, scan, Reduction};
pub use varied::{alltoallv, Varied, VARIED_MAX_RANKS};

/// Names one operation of one communicator in the mailboxes.
pub fn stamp(ctx: u32, seq: u32) -> u64 {
    (ctx as u64) << 32 | seq as u64
}

/// Whether a collective moving `bytes` in all goes through the
/// mailboxes: whole when short enough, and in pieces when it has a form
/// in pieces (`pieces`: which, among how many ranks, items of how many
/// bytes) and `tuning::in_pieces` says so.
pub fn fits(bytes: usize, pieces: Option<(Pieces, usize, usize)>) -> bool {
    let short = tuning::shm_max();
    let long = || {
        pieces.is_some_and(|(op, n, item)| tuning::in_pieces(op, n, bytes, item) || tuning::either_way(op, n, bytes))
            && bytes <= tuning::shm_long_max()
    };
    (short > 0 && bytes <= Boxes::Short.bytes().min(short)) || (!whole(bytes) && long())
}

/// Whether a collective moving `bytes` in all publishes whole.
fn whole(bytes: usize) -> bool {
    bytes <= Boxes::Short.bytes()
}

/// The stamp of piece `p` of a long publication: above the context
/// (`stamp`'s bits 32..48), modulo 2^16, which no reader can fall behind
/// by, a mailbox having far fewer slots.
fn piece(stamp: u64, p: usize) -> u64 {
    stamp | (p as u64 & 0xffff) << 48
}

/// A part of a collective on the arrival lines (`p2p::arrival`), aligned
/// for any item a reduction folds.
#[repr(align(16))]
struct Line([u8; ARRIVAL_BYTES]);

impl Default for Line {
    fn default() -> Line {
        Line([0; ARRIVAL_BYTES])
    }
}

/// Rank `from`'s publication of `theirs` bytes where this rank expects
/// `mine`: the members passed counts or datatypes of different sizes.
pub fn check_size(from: usize, theirs: usize, mine: usize) -> MpiResult<()> {
    if theirs == mine {
        return Ok(());
    }
    let class = if theirs > mine { ErrorClass::Truncate } else { ErrorClass::Count };
    Err(MpiError::new(
        class,
        format!("rank {from} took part in this collective with {theirs} bytes where this rank has room for {mine}: the counts and datatypes of a collective must give the same sizes on every rank"),
    ))
}

/// The first of the errors met while every read of a collective is still
/// done (its writers wait for them).
#[derive(Default)]
struct FirstError(Option<MpiError>);

impl FirstError {
    fn keep(&mut self, r: MpiResult<()>) {
        if let (None, Err(e)) = (&self.0, r) {
            self.0 = Some(e);
        }
    }

    fn ok(&self) -> bool {
        self.0.is_none()
    }

    fn result(self) -> MpiResult<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// A read of a lockstep collective in pieces found rank `from` out of
/// step (`theirs`: its stream's size and this piece's length, `mine`: the
/// same expected here): the pieces of the members no longer pair up, so
/// the mailboxes are given up, which fails everyone's waits.
fn in_step(e: &Engine, stamp: u64, from: usize, theirs: (usize, usize), mine: (usize, usize)) -> MpiResult<()> {
    if theirs == mine {
        return Ok(());
    }
    e.give_up_mailboxes(stamp);
    check_size(from, theirs.0, mine.0)?;
    mismatch(from)
}

/// Rank `from`'s part of a collective does not line up with this rank's
/// though its size is the same.
fn mismatch(from: usize) -> MpiResult<()> {
    err!(Type, "rank {from}'s pieces of this collective do not line up with this rank's: its datatype differs")
}

/// Rank `from` took a collective's blocks the other way (`p2p::agreed`:
/// read in place where this rank's went in pieces, or the reverse),
/// though their sizes agree: the members' choice, which is theirs alike
/// by construction, was not (a fault in oxmpi, not in the program).
fn diverged(from: usize) -> MpiResult<()> {
    err!(Intern, "rank {from} took this collective's blocks the other way (read in place or in pieces) than this rank, though their sizes agree: the ranks' shared choice of the way diverged, a fault in oxmpi")
}

/// How blocks are cut into pieces for the long mailbox: `size` bytes
/// each, whole items, `pieces` per block (the last shorter, or empty for
/// a shorter block), the same on every rank.
#[derive(Clone, Copy)]
struct Cut {
    size: usize,
    pieces: usize,
}

impl Cut {
    /// For blocks of at most `b` bytes of `item`-byte items.
    fn new(b: usize, item: usize) -> Cut {
        let size = Boxes::Long.bytes() / item * item;
        Cut { size, pieces: b.div_ceil(size) }
    }

    /// Piece `p` of the block at `r`.
    fn piece(self, r: Range<usize>, p: usize) -> Range<usize> {
        let start = (r.start + p * self.size).min(r.end);
        start..(start + self.size).min(r.end)
    }
}

enum Step {
    Publish(usize),
    Read(usize),
}

/// How many items a rank publishes before it reads the same item of the
/// others. Fewer than the long mailbox's slots: a rank waiting for room
/// then waits only on readers who have everything they need from it.
const AHEAD: usize = Boxes::Long.slots() / 2;

/// Items 0..items, which every rank publishes and reads alike, in
/// lockstep: item t + AHEAD is published before item t is read.
fn pipeline(e: &mut Engine, items: usize, step: impl FnMut(&mut Engine, Step) -> MpiResult<()>) -> MpiResult<()> {
    pipeline_by(e, items, AHEAD, step)
}

/// `pipeline` with item t + `ahead` published before item t is read
/// (items of several publications each keep fewer of them ahead).
fn pipeline_by(
    e: &mut Engine,
    items: usize,
    ahead: usize,
    mut step: impl FnMut(&mut Engine, Step) -> MpiResult<()>,
) -> MpiResult<()> {
    for t in 0..items.min(ahead) {
        step(e, Step::Publish(t))?;
    }
    for t in 0..items {
        step(e, Step::Read(t))?;
        if t + ahead < items {
            step(e, Step::Publish(t + ahead))?;
        }
    }
    Ok(())
}

/// The members of a communicator, as a blocking collective sees them.
pub struct Members<'a> {
    pub group: &'a Group,
    pub me: usize,
}

impl Members<'_> {
    fn world(&self, r: usize) -> usize {
        self.group.world_rank(r)
    }

    fn others(&self, except: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.group.size()).filter(move |&r| r != except).map(|r| self.world(r))
    }
}

/// `buf` from `root` to everyone.
pub fn bcast(e: &mut Engine, m: &Members, stamp: u64, buf: &mut [u8], root: usize) -> MpiResult<()> {
    bcast_in(e, m, stamp, buf, root, true)
}

/// `bcast`; with `follow`, a reader follows a root whose part has another
/// size (and so went the other way, whole or in pieces) to its end, so
/// that they stay in step. Without, it gives the mailboxes up: in a
/// reduction's last step, the root may be astray in a pattern of
/// another operation.
fn bcast_in(e: &mut Engine, m: &Members, stamp: u64, buf: &mut [u8], root: usize, follow: bool) -> MpiResult<()> {
    let len = buf.len();
    if whole(len) {
        if m.me == root {
            return e.publish(Boxes::Short, stamp, buf, m.others(root));
        }
        let seen = e.read_following(Boxes::Short, m.world(root), stamp, 0, buf)?;
        if seen.astray && !follow {
            e.give_up_mailboxes(stamp);
        } else if seen.astray {
            // the root's part was longer: it went in pieces
            read_stream(e, m.world(root), stamp, buf, |p| p)?;
        }
        return check_size(root, seen.stream, len);
    }
    if m.me == root {
        return publish_stream(e, stamp, buf, |p| p, || m.others(root));
    }
    // the root's stream is read to its last piece whatever its size (its
    // pieces wait for that), as much as fits
    let seen = read_stream(e, m.world(root), stamp, buf, |p| p)?;
    if seen.astray {
        // the root's part was short enough to go whole
        e.read_following(Boxes::Short, m.world(root), stamp, 0, buf)?;
    }
    check_size(root, seen.stream, len)
}

/// Publish `data` (not empty) as a stream of pieces for `readers()`,
/// piece p under the operation's piece `number(p)`, the last one marked
/// (`read_stream` reads it).
fn publish_stream<R: IntoIterator<Item = usize>>(
    e: &mut Engine,
    stamp: u64,
    data: &[u8],
    number: impl Fn(usize) -> usize,
    readers: impl Fn() -> R,
) -> MpiResult<()> {
    let pieces = data.len().div_ceil(Boxes::Long.bytes());
    for (p, part) in data.chunks(Boxes::Long.bytes()).enumerate() {
        e.publish_piece(piece(stamp, number(p)), part, data.len(), p + 1 == pieces, readers())?;
    }
    Ok(())
}

/// Read world rank `from`'s stream of pieces `stamp` to its last into
/// `out`, as much as fits (its writer waits for every read); what its
/// first piece said (astray: nothing read). Piece p is the writer's
/// piece `number(p)` of the operation.
fn read_stream(
    e: &mut Engine,
    from: usize,
    stamp: u64,
    out: &mut [u8],
    number: impl Fn(usize) -> usize,
) -> MpiResult<Seen> {
    let (size, len) = (Boxes::Long.bytes(), out.len());
    let mut read = |e: &mut Engine, p: usize| {
        let at = (p * size).min(len);
        e.read_following(Boxes::Long, from, piece(stamp, number(p)), 0, &mut out[at..(at + size).min(len)])
    };
    let first = read(e, 0)?;
    let (mut seen, mut p) = (first, 0);
    while !seen.last && !seen.astray {
        p += 1;
        seen = read(e, p)?;
    }
    Ok(first)
}

/// Nobody leaves before everyone has come: with few ranks, each reports
/// to all and waits for all (the whole world by its arrival counts,
/// `p2p::arrival`); with more, everyone reports to local rank 0, which
/// then releases them.
pub fn barrier(e: &mut Engine, m: &Members, stamp: u64) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if e.by_arrivals(m.group, 0) {
        return e.arrive(m.group, stamp, Kind::Barrier, &[], |_, _| Ok(()));
    }
    if n <= ALL_READ_ALL {
        e.publish(Boxes::Short, stamp, &[], m.others(me))?;
        for r in (0..n).filter(|&r| r != me) {
            e.read_mailbox(Boxes::Short, m.world(r), stamp, 0, &mut [])?;
        }
        return Ok(());
    }
    if m.me == 0 {
        for r in 1..m.group.size() {
            e.read_mailbox(Boxes::Short, m.world(r), stamp, 0, &mut [])?;
        }
    } else {
        e.publish(Boxes::Short, stamp, &[], [m.world(0)])?;
    }
    bcast_in(e, m, stamp, &mut [], 0, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_a_block_and_keep_their_operation() {
        let size = Boxes::Long.bytes();
        for b in [1, size - 1, size, size + 1, 17 * size + 3] {
            let cut = Cut::new(b, 1);
            let ranges: Vec<_> = (0..cut.pieces).map(|p| cut.piece(2 * b..3 * b, p)).collect();
            assert_eq!(ranges[0].start, 2 * b);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()));
            assert_eq!(ranges.last().unwrap().end, 3 * b);
            // a shorter block in the same cut: empty pieces at its end
            assert!(cut.piece(0..b / 2, cut.pieces - 1).len() < size);
        }
        // pieces hold whole items
        assert_eq!(Cut::new(100_000, 12).size % 12, 0);
        let s = stamp(32767 * 2 + 1, 0xffff_fffe);
        let stamps: Vec<u64> = (0..1 << 16).map(|p| piece(s, p)).collect();
        assert!(stamps.iter().all(|&k| k & 0xffff_ffff_ffff == s));
        let mut sorted = stamps.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), stamps.len());
    }
}
