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
//! others' sizes, so the tables let them agree), in pieces or as
//! messages. Longer broadcasts, gathers, scatters, allgathers (and
//! allgathervs of parts of one size) and alltoalls go the same
//! ways in pieces through the long mailboxes, every rank a few pieces
//! ahead of its reads: each byte is copied in once and out once by
//! memcpy, and ranks sharing a core pass it on while it is in the cache
//! (`tuning::in_pieces` says when that beats a single cross-memory copy).
//! A scan of up to two pieces has each rank fold the pieces of the ranks
//! before it as they come. A long reduce-scatter among more than two
//! ranks has every rank fold its segment piece by piece straight from the
//! others' mailboxes; a long allreduce is that, then an allgather of the
//! folded segments; a long reduce has the root fold every piece straight
//! from the others' mailboxes. The path is chosen from the operation, the
//! byte count and the host, which every member knows alike, so all take
//! it together.

use super::tuning::{self, Pieces};
use super::Scratch;
use crate::comm::Group;
use crate::datatype::TypeInfo;
use crate::err;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op::{self, Op};
use crate::p2p::arrival::{Kind, ARRIVAL_BYTES};
use crate::p2p::mailbox::{Boxes, Seen};
use crate::p2p::request::ReqId;
use crate::p2p::Engine;
use std::ops::Range;

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
    let long =
        || pieces.is_some_and(|(op, n, item)| tuning::in_pieces(op, n, bytes, item)) && bytes <= tuning::shm_long_max();
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
fn check_size(from: usize, theirs: usize, mine: usize) -> MpiResult<()> {
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
    err!(Type, "rank {from}'s pieces of this collective do not line up with this rank's: its datatype differs")
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

/// What a reduction combines: items of `ty` by `op`.
#[derive(Clone, Copy)]
pub struct Reduction<'a> {
    pub ty: &'a TypeInfo,
    pub op: Op,
}

/// `acc` = `acc` op `theirs`: the ranks before folded with the next one,
/// in rank order. `theirs` is spoilt when the op does not commute (apply
/// writes its result there).
fn fold(r: Reduction, acc: &mut [u8], theirs: &mut [u8]) -> MpiResult<()> {
    if r.op.symmetric() {
        op::apply(r.op, r.ty, theirs, acc)
    } else {
        op::apply(r.op, r.ty, acc, theirs)?;
        acc.copy_from_slice(theirs);
        Ok(())
    }
}

/// This rank's part of a reduction whose result overwrites `data`: `from`,
/// or (None) a copy of `data`, kept in `copy`.
fn kept<'a>(from: Option<&'a [u8]>, data: &[u8], copy: &'a mut Option<Scratch>) -> &'a [u8] {
    match from {
        Some(from) => from,
        None => copy.insert(Scratch::from_slice(data)),
    }
}

/// Rank `r`'s (world rank `from`'s) short publication `stamp` folded into
/// `data` where it lies (`fold_into`, through `spare` when the op does
/// not commute), unless it has another size or a fold failed before:
/// what the read saw.
#[allow(clippy::too_many_arguments)]
fn fold_published(
    e: &mut Engine,
    (r, from): (usize, usize),
    stamp: u64,
    data: &mut [u8],
    spare: &mut [u8],
    red: Reduction,
    failed: &mut FirstError,
) -> MpiResult<Seen> {
    e.use_mailbox(Boxes::Short, from, stamp, |theirs, seen| {
        if !seen.astray && seen.len == data.len() && failed.ok() {
            failed.keep(fold_into(data, spare, r == 0, red, theirs));
        }
        seen
    })
}

/// Everyone's part (`from`, or None: `data`) reduced into the `data` of
/// `to`, in rank order. A reduce
/// (`follow`) reads a writer whose part went in pieces (it has another
/// size) to its end, so that the members stay in step.
#[allow(clippy::too_many_arguments)]
fn gather_reduce(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    to: usize,
    follow: bool,
) -> MpiResult<()> {
    if m.me != to {
        return e.publish(Boxes::Short, stamp, own(from, data), [m.world(to)]);
    }
    if let Some(from) = from {
        data.copy_from_slice(from);
    }
    // this rank's part, when the result starts with another's
    let mut copy = None;
    let mine = if to == 0 { &[][..] } else { kept(from, data, &mut copy) };
    // (an op that commutes folds straight from the mailboxes)
    let mut spare = Scratch::zeroed(if red.op.symmetric() { 0 } else { data.len() });
    let mut failed = FirstError::default();
    // v0 op v1 op ...: `data` holds v0 from the start when `to` is 0
    for r in (0..m.group.size()).filter(|&r| r != 0 || to != 0) {
        if r == to {
            if failed.ok() {
                failed.keep(fold_into(data, &mut spare, r == 0, red, mine));
            }
            continue;
        }
        let from = m.world(r);
        let seen = fold_published(e, (r, from), stamp, data, &mut spare, red, &mut failed)?;
        if seen.astray && follow {
            read_stream(e, from, stamp, &mut [], |p| p)?;
        } else if seen.astray {
            e.give_up_mailboxes(stamp);
        }
        failed.keep(check_size(r, seen.stream, data.len()));
    }
    failed.result()
}

/// This rank's part of a reduction, where it lies: in `from`, or (None)
/// in the buffer its result goes to.
fn own<'a>(from: Option<&'a [u8]>, data: &'a [u8]) -> &'a [u8] {
    from.unwrap_or(data)
}

/// Reduce to `root` this rank's part, `from` or (None) `data`; the
/// root's `data` receives the result (another rank's may be empty when
/// `from` holds its part).
pub fn reduce(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    root: usize,
) -> MpiResult<()> {
    if !whole(own(from, data).len()) {
        return reduce_cut(e, m, stamp, from, data, red, root);
    }
    gather_reduce(e, m, stamp, from, data, red, root, true)
}

/// Up to this many ranks, an allreduce or a barrier has every rank
/// publish once and read everyone (one hand-over, n - 1 reads each);
/// beyond, the contributions meet at rank 0 and its result goes out (two
/// hand-overs, n - 1 reads in all at each step).
const ALL_READ_ALL: usize = 8;

/// Allreduce of this rank's part, `from` or (None) `data`, into `data`.
pub fn allreduce(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if !whole(data.len()) {
        return allreduce_cut(e, m, stamp, from, data, red);
    }
    if let Some(from) = from {
        data.copy_from_slice(from);
    }
    if n <= ALL_READ_ALL && e.by_arrivals(m.group, data.len()) {
        // everyone folds every part, in rank order
        let (len, mut acc, mut spare) = (data.len(), Line::default(), Line::default());
        e.arrive(stamp, Kind::Allreduce, own(from, data), |r, part| {
            check_size(r, part.len(), len)?;
            fold_into(&mut acc.0[..len], &mut spare.0[..len], r == 0, red, part)
        })?;
        data.copy_from_slice(&acc.0[..len]);
        return Ok(());
    }
    if n > ALL_READ_ALL {
        let done = gather_reduce(e, m, stamp, None, data, red, 0, false);
        // a failed rank 0 publishes nothing: the others fail for the size
        let out: &mut [u8] = if done.is_ok() { data } else { &mut [] };
        let passed = bcast_in(e, m, stamp, out, 0, false);
        return done.and(passed);
    }
    e.publish(Boxes::Short, stamp, data, m.others(me))?;
    let mut copy = None;
    let mine = kept(from, data, &mut copy);
    fold_short(e, m, stamp, mine, n, data, red)
}

/// The parts of ranks `0..upto` folded into `data` in rank order (v0 op
/// v1 op ...): this rank's from `mine`, the others' read from their short
/// mailboxes.
#[allow(clippy::too_many_arguments)]
fn fold_short(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    mine: &[u8],
    upto: usize,
    data: &mut [u8],
    red: Reduction,
) -> MpiResult<()> {
    // (an op that commutes folds straight from the mailboxes)
    let mut spare = Scratch::zeroed(if red.op.symmetric() { 0 } else { data.len() });
    let mut failed = FirstError::default();
    for r in 0..upto {
        if r == m.me {
            if failed.ok() {
                failed.keep(fold_into(data, &mut spare, r == 0, red, mine));
            }
            continue;
        }
        let seen = fold_published(e, (r, m.world(r)), stamp, data, &mut spare, red, &mut failed)?;
        if seen.astray {
            e.give_up_mailboxes(stamp);
        }
        failed.keep(check_size(r, seen.stream, data.len()));
    }
    failed.result()
}

/// Scan (Exscan when `exclusive`) of this rank's part, `from` or (None)
/// `data`, into `data`: each rank publishes its part to the ranks after
/// it and folds the parts of those before it (and its own, unless
/// `exclusive`) in rank order. Rank 0 of an Exscan leaves `data` alone.
pub fn scan(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    exclusive: bool,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if !whole(own(from, data).len()) {
        return scan_cut(e, m, stamp, from, data, red, exclusive);
    }
    // the last rank's part is read by no one
    if me + 1 < n {
        e.publish(Boxes::Short, stamp, own(from, data), (me + 1..n).map(|r| m.world(r)))?;
    }
    // an exscan never folds its own part
    let mut copy = None;
    let mine = if exclusive { &[][..] } else { kept(from, data, &mut copy) };
    fold_short(e, m, stamp, mine, if exclusive { me } else { me + 1 }, data, red)
}

/// `scan` in pieces: each rank publishes its part's pieces to the ranks
/// after it and folds piece p of every rank before it (and its own),
/// straight from their mailboxes, in rank order, into piece p of `data`.
/// A piece of this rank's part in `data` is published and folded before
/// the result overwrites it.
#[allow(clippy::too_many_arguments)]
fn scan_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    exclusive: bool,
) -> MpiResult<()> {
    let (n, me, len) = (m.group.size(), m.me, data.len());
    let cut = Cut::new(len, red.ty.size);
    let mut fold = Fold::new(cut.size);
    pipeline(e, cut.pieces, |e, step| match step {
        Step::Publish(_) if me + 1 == n => Ok(()),
        Step::Publish(p) => {
            let last = p + 1 == cut.pieces;
            let part = &own(from, data)[cut.piece(0..len, p)];
            e.publish_piece(piece(stamp, p), part, len, last, (me + 1..n).map(|r| m.world(r)))
        }
        Step::Read(p) => {
            let at = cut.piece(0..len, p);
            let upto = if exclusive { me } else { me + 1 };
            for r in 0..upto {
                if r == me {
                    fold.take(r == 0, red, &own(from, data)[at.clone()])?;
                    continue;
                }
                let (done, seen) = fold.take_from(e, m.world(r), piece(stamp, p), r == 0, red, (len, at.len()))?;
                in_step(e, stamp, r, (seen.stream, seen.len), (len, at.len()))?;
                done?;
            }
            if upto > 0 {
                data[at.clone()].copy_from_slice(&fold.acc[..at.len()]);
            }
            Ok(())
        }
    })
}

/// Nobody leaves before everyone has come: with few ranks, each reports
/// to all and waits for all (the whole world by its arrival counts,
/// `p2p::arrival`); with more, everyone reports to local rank 0, which
/// then releases them.
pub fn barrier(e: &mut Engine, m: &Members, stamp: u64) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if n <= ALL_READ_ALL && e.by_arrivals(m.group, 0) {
        return e.arrive(stamp, Kind::Barrier, &[], |_, _| Ok(()));
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

/// Everyone's `b`-byte block, in rank order, into `all` (this rank's own
/// block must be in place already).
pub fn allgather(e: &mut Engine, m: &Members, stamp: u64, all: &mut [u8]) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let b = all.len() / n.max(1);
    if n <= ALL_READ_ALL && e.by_arrivals(m.group, b) {
        let mut mine = Line::default();
        mine.0[..b].copy_from_slice(&all[me * b..(me + 1) * b]);
        return e.arrive(stamp, Kind::Allgather, &mine.0[..b], |r, part| {
            check_size(r, part.len(), b)?;
            all[r * b..(r + 1) * b].copy_from_slice(part);
            Ok(())
        });
    }
    allgatherv(e, m, stamp, all, |r| r * b..(r + 1) * b, Some(b))
}

/// Every rank's part `at(r)` of `all` to every other (this rank's own
/// part is in place), as an allgatherv's, whose parts' sizes every rank
/// knows: whole when they are short in all, else in pieces, which needs
/// parts of one size (`equal`: Some(their bytes)).
pub fn allgatherv(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
    equal: Option<usize>,
) -> MpiResult<()> {
    match equal {
        Some(b) if !whole(b * m.group.size()) => allgather_cut(e, m, stamp, 0, all, at, Cut::new(b, 1), b),
        _ => allgather_whole(e, m, stamp, all, at),
    }
}

/// Every rank's part `at(r)` of `all` to every other, whole (this rank's
/// own part is in place; the parts may have sizes of their own).
fn allgather_whole(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    e.publish(Boxes::Short, stamp, &all[at(me)], m.others(me))?;
    let mut failed = FirstError::default();
    for r in (0..n).filter(|&r| r != me) {
        let want = at(r).len();
        let seen = e.read_mailbox(Boxes::Short, m.world(r), stamp, 0, &mut all[at(r)])?;
        failed.keep(check_size(r, seen.len, want));
    }
    failed.result()
}

/// Every rank's block `at(r)` of `all` to every other, in pieces (this
/// rank's own block is in place); the pieces' stamps count from `first`;
/// every member's stream has `stream` bytes.
#[allow(clippy::too_many_arguments)]
fn allgather_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    first: usize,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
    cut: Cut,
    stream: usize,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if n == 1 {
        return Ok(());
    }
    pipeline(e, cut.pieces, |e, step| match step {
        Step::Publish(p) => {
            let last = p + 1 == cut.pieces;
            e.publish_piece(piece(stamp, first + p), &all[cut.piece(at(me), p)], stream, last, m.others(me))
        }
        Step::Read(p) => {
            for r in (0..n).filter(|&r| r != me) {
                let out = &mut all[cut.piece(at(r), p)];
                let want = (stream, out.len());
                let seen = e.read_mailbox(Boxes::Long, m.world(r), piece(stamp, first + p), 0, out)?;
                in_step(e, stamp, r, (seen.stream, seen.len), want)?;
            }
            Ok(())
        }
    })
}

/// Gather: every other rank's block (`mine`) into block r of the root's
/// `all` (n equal blocks; the root's own is in place already, and its
/// `mine` is not used). Each rank publishes its block for the root
/// alone, whole when the blocks are short in all, else in pieces: a rank
/// runs ahead of the root by up to a mailbox's slots.
pub fn gather(e: &mut Engine, m: &Members, stamp: u64, mine: &[u8], all: &mut [u8], root: usize) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if me != root {
        if whole(mine.len() * n) {
            return e.publish(Boxes::Short, stamp, mine, [m.world(root)]);
        }
        return publish_stream(e, stamp, mine, |p| p * n + me, || [m.world(root)]);
    }
    let b = all.len() / n.max(1);
    let mut failed = FirstError::default();
    for r in (0..n).filter(|&r| r != root) {
        failed.keep(read_part(e, m, stamp, r, &mut all[r * b..(r + 1) * b], (0, 1), |p| p * n + r)?);
    }
    failed.result()
}

/// Scatter: block r of the root's `all` (n equal blocks) into rank r's
/// `mine` (the root's own block is its caller's to copy). Short in all,
/// one publication of the others' blocks, every other rank reading its
/// block of it; longer,
/// each block in pieces published for its rank alone.
pub fn scatter(e: &mut Engine, m: &Members, stamp: u64, all: &[u8], mine: &mut [u8], root: usize) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if me != root {
        let b = mine.len();
        return read_part(e, m, stamp, root, mine, (place_in(me, root) * b, n - 1), |p| p * n + me)?;
    }
    let b = all.len() / n.max(1);
    if whole(all.len()) {
        return publish_but_own(e, stamp, all, b, root, m.others(root));
    }
    let cut = Cut::new(b, 1);
    for p in 0..cut.pieces {
        for r in (0..n).filter(|&r| r != root) {
            let part = &all[cut.piece(r * b..(r + 1) * b, p)];
            e.publish_piece(piece(stamp, p * n + r), part, b, p + 1 == cut.pieces, [m.world(r)])?;
        }
    }
    Ok(())
}

/// Publish the `b`-byte blocks of `all`, in rank order, but block `own`
/// (its writer's, which it copies across itself) for `readers`: a short
/// Alltoall's or Scatter's publication. A quarter less to copy in at 4
/// ranks, half at 2 (measured, 1 KiB blocks, medians of interleaved runs:
/// Alltoall 6.45 -> 5.86 us at 4 ranks on 2 cores, 2.82 -> 2.71 at 3,
/// 0.858 -> 0.794 at 2; Scatter 0.526 -> 0.484 at 4, 0.188 -> 0.175 at 2;
/// 8-byte blocks, inline in the slot's header either way, alike).
fn publish_but_own(
    e: &mut Engine,
    stamp: u64,
    all: &[u8],
    b: usize,
    own: usize,
    readers: impl IntoIterator<Item = usize>,
) -> MpiResult<()> {
    e.publish_filled(Boxes::Short, stamp, all.len() - b, readers, |to| {
        to[..own * b].copy_from_slice(&all[..own * b]);
        to[own * b..].copy_from_slice(&all[(own + 1) * b..]);
    })
}

/// Where rank `me`'s block lies, in blocks, in a publication of rank
/// `writer`'s that leaves the writer's own block out (`publish_but_own`).
fn place_in(me: usize, writer: usize) -> usize {
    if me < writer {
        me
    } else {
        me - 1
    }
}

/// Read rank `from`'s part of a gather or scatter into `out`: whole
/// (from byte `at` of a publication of `parts` parts) when `out.len()`
/// times the members is short, else in pieces (numbered by `number`). A
/// writer whose part has another size, and so may have gone the other
/// way, is followed to its end, as much as fits, so that the members
/// stay in step; Err(the sizes differ) then, in the outer result.
fn read_part(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: usize,
    out: &mut [u8],
    (at, parts): (usize, usize),
    number: impl Fn(usize) -> usize,
) -> MpiResult<MpiResult<()>> {
    let (b, world) = (out.len(), m.world(from));
    let theirs = if whole(b * m.group.size()) {
        let seen = e.read_following(Boxes::Short, world, stamp, at, out)?;
        if seen.astray {
            // its part was longer: it went in pieces
            read_stream(e, world, stamp, out, number)?;
            seen.stream
        } else {
            seen.len / parts
        }
    } else {
        let seen = read_stream(e, world, stamp, out, number)?;
        if seen.astray {
            // its part was short enough to go whole
            e.read_following(Boxes::Short, world, stamp, at, out)?;
            seen.stream / parts
        } else {
            seen.stream
        }
    };
    Ok(check_size(from, theirs, b))
}

/// The most ranks an alltoallv or alltoallw goes through the mailboxes
/// among (`alltoallv`): a publication starts with 8 bytes per rank.
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
/// table, and from them all learns every block that goes outside. Those
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
    let table = 8 * n;
    // (offset, length) of each block in the publication, in rank order
    // while they fit (and come to at most OXMPI_SHM_COLL_MAX bytes)
    let cap = Boxes::Short.bytes().min(table + tuning::shm_max());
    let mut end = table;
    let mut mine = PerRank::new();
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
    let mine = &mine[..];
    e.publish_filled(Boxes::Short, stamp, end, m.others(me), |out| {
        for (r, &(off, len)) in mine.iter().enumerate() {
            out[8 * r..8 * r + 4].copy_from_slice(&off.to_le_bytes());
            out[8 * r + 4..8 * r + 8].copy_from_slice(&len.to_le_bytes());
            if off != OUTSIDE && r != me {
                let at = table + off as usize;
                out[at..at + len as usize].copy_from_slice(v.block(r));
            }
        }
    })?;
    let mut t = Outside::new();
    t.note(mine.iter().copied());
    let mut failed = FirstError::default();
    for q in (0..n).filter(|&q| q != me) {
        let read = e.use_mailbox(Boxes::Short, m.world(q), stamp, |data, seen| {
            let word = |at: usize| data.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
            if seen.astray {
                return Err(format!("published this operation in its long mailbox ({} bytes)", seen.stream));
            }
            if data.len() < table {
                return Err(format!("published {} bytes, less than a table", data.len()));
            }
            let entry = |r: usize| (word(8 * r).unwrap_or(0), word(8 * r + 4).unwrap_or(0));
            t.note((0..n).filter(|&r| r != q).map(entry));
            match entry(me) {
                (OUTSIDE, len) => Ok(Ok(Some(len))),
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
            Ok(Ok(Ok(Some(len)))) => t.theirs.push((q, len)),
            // the sizes differ
            Ok(Ok(Err(err))) => failed.keep(Err(err)),
            Ok(Err(what)) => {
                e.give_up_mailboxes(stamp);
                return err!(Other, "rank {q} took part in this alltoallv another way: it {what}");
            }
            Err(err) => return Err(err),
        }
    }
    // as for an alltoall, a block decides (here the longest outside, as
    // if every rank's were that long); the bytes in all stay bounded
    let by_pieces = t.heaviest > 0
        && !t.huge
        && tuning::in_pieces(Pieces::Alltoall, n, t.longest.saturating_mul(n), 1)
        && t.heaviest <= tuning::shm_long_max();
    if by_pieces {
        failed.keep(varied_cut(e, m, stamp, v, (mine, &t)));
        return Ok((Vec::new(), failed.result()));
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
            e.read_agreed(Boxes::Long, m.world(from), piece(stamp, item), into)?;
            if p == 0 {
                failed.keep(check_size(from, len, want));
            }
            Ok(())
        }
    })?;
    failed.result()
}

/// Block r of `sends` to rank r, block r of `recvs` from it (equal blocks).
pub fn alltoall(e: &mut Engine, m: &Members, stamp: u64, sends: &[u8], recvs: &mut [u8]) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let b = sends.len() / n.max(1);
    if n <= ALL_READ_ALL && e.by_arrivals(m.group, sends.len()) {
        // every block on the line, each rank reading its own of each
        return e.arrive(stamp, Kind::Alltoall, sends, |r, part| {
            check_size(r, part.len() / n, b)?;
            recvs[r * b..(r + 1) * b].copy_from_slice(&part[me * b..(me + 1) * b]);
            Ok(())
        });
    }
    if whole(sends.len()) {
        recvs[me * b..(me + 1) * b].copy_from_slice(&sends[me * b..(me + 1) * b]);
        publish_but_own(e, stamp, sends, b, me, m.others(me))?;
        let mut failed = FirstError::default();
        for r in (0..n).filter(|&r| r != me) {
            let at = place_in(me, r) * b;
            let seen = e.read_mailbox(Boxes::Short, m.world(r), stamp, at, &mut recvs[r * b..(r + 1) * b])?;
            failed.keep(check_size(r, seen.len / (n - 1), b));
        }
        return failed.result();
    }
    let block = |r: usize| r * b..(r + 1) * b;
    alltoall_cut(e, m, stamp, sends, block, recvs, block, Cut::new(b, 1), b)
}

/// Block `out(r)` of `sends` to each other rank r, and r's block for
/// this rank into `into(r)` of `recvs`, in pieces (this rank's own block
/// is copied across first). The pieces' stamps count from 0; every
/// member's stream has `stream` bytes.
#[allow(clippy::too_many_arguments)]
fn alltoall_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    sends: &[u8],
    out: impl Fn(usize) -> Range<usize>,
    recvs: &mut [u8],
    into: impl Fn(usize) -> Range<usize>,
    cut: Cut,
    stream: usize,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    recvs[into(me)].copy_from_slice(&sends[out(me)]);
    // item t: piece t % pieces of the block for the rank 1 + t / pieces
    // after this one, and of the block from as far before
    let at = |t: usize| (1 + t / cut.pieces.max(1), t % cut.pieces.max(1));
    let items = (n - 1) * cut.pieces;
    pipeline(e, items, |e, step| match step {
        Step::Publish(t) => {
            let (i, p) = at(t);
            let to = (me + i) % n;
            e.publish_piece(piece(stamp, t), &sends[cut.piece(out(to), p)], stream, t + 1 == items, [m.world(to)])
        }
        Step::Read(t) => {
            let (i, p) = at(t);
            let from = (me + n - i) % n;
            let into = &mut recvs[cut.piece(into(from), p)];
            let want = (stream, into.len());
            let seen = e.read_mailbox(Boxes::Long, m.world(from), piece(stamp, t), 0, into)?;
            in_step(e, stamp, from, (seen.stream, seen.len), want)
        }
    })
}

/// Allreduce of a vector too long to publish whole, in pieces: rank r
/// gets segment r of everyone's part and folds them in rank order (the
/// result every other algorithm computes, `fold_segments`), then the
/// folded segments go to everyone as in an allgather. This rank's part
/// is `from` or (None) `data`.
fn allreduce_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
) -> MpiResult<()> {
    let (n, me, len) = (m.group.size(), m.me, data.len());
    let seg = (len / red.ty.size).div_ceil(n) * red.ty.size;
    let part = |r: usize| (r * seg).min(len)..((r + 1) * seg).min(len);
    let cut = Cut::new(seg, red.ty.size);
    match from {
        Some(from) => fold_segments(e, m, stamp, from, part, cut, &mut data[part(me)], red)?,
        None => {
            // `data` is read while the segments fold
            let mut folded = Scratch::for_overwrite(part(me).len());
            fold_segments(e, m, stamp, data, part, cut, &mut folded, red)?;
            data[part(me)].copy_from_slice(&folded);
        }
    }
    allgather_cut(e, m, stamp, (n - 1) * cut.pieces, data, part, cut, len)
}

/// Reduce-scatter: segment `part(r)` of everyone's `input` folded in rank
/// order (the result every other algorithm computes) for rank r, this
/// rank's into `out`.
pub fn reduce_scatter(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    input: &[u8],
    part: impl Fn(usize) -> Range<usize>,
    out: &mut [u8],
    red: Reduction,
) -> MpiResult<()> {
    if whole(input.len()) {
        let mut all = Scratch::for_overwrite(input.len());
        allreduce(e, m, stamp, Some(input), &mut all, red)?;
        out.copy_from_slice(&all[part(m.me)]);
        return Ok(());
    }
    let most = (0..m.group.size()).map(|r| part(r).len()).max().unwrap_or(0);
    fold_segments(e, m, stamp, input, part, Cut::new(most, red.ty.size), out, red)
}

/// Segment `part(r)` of everyone's `input`, cut alike into pieces by
/// `cut`, folded in rank order for rank r; this rank's into `out`. Each
/// piece is folded straight from the others' mailboxes, the pieces for
/// all of them published together; unless a piece for each other rank
/// takes more slots than `pipeline` keeps ahead: then the segments are
/// gathered as in an alltoall first. The pieces' stamps are the first
/// (n - 1) * `cut.pieces`.
#[allow(clippy::too_many_arguments)]
fn fold_segments(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    input: &[u8],
    part: impl Fn(usize) -> Range<usize>,
    cut: Cut,
    out: &mut [u8],
    red: Reduction,
) -> MpiResult<()> {
    let (n, me, len) = (m.group.size(), m.me, input.len());
    let mine = part(me);
    if n == 1 {
        out.copy_from_slice(&input[mine]);
        return Ok(());
    }
    if n - 1 > AHEAD {
        let most = cut.size * cut.pieces;
        let mut got = Scratch::for_overwrite(most * n);
        alltoall_cut(e, m, stamp, input, &part, &mut got, |r| r * most..r * most + mine.len(), cut, len)?;
        let (first, rest) = got.split_at_mut(most);
        out.copy_from_slice(&first[..mine.len()]);
        for theirs in rest.chunks_mut(most) {
            // the others wait for this rank's folded segment
            fold(red, out, &mut theirs[..mine.len()]).inspect_err(|_| e.give_up_mailboxes(stamp))?;
        }
        return Ok(());
    }
    // piece g of the segment of the rank i after this one (1 <= i < n)
    let at = |g: usize, i: usize| piece(stamp, g * (n - 1) + i - 1);
    let mut spare = Scratch::for_overwrite(cut.size);
    pipeline_by(e, cut.pieces, AHEAD / (n - 1), |e, step| match step {
        Step::Publish(g) => (1..n).try_for_each(|i| {
            let (to, last) = ((me + i) % n, g + 1 == cut.pieces && i + 1 == n);
            e.publish_piece(at(g, i), &input[cut.piece(part(to), g)], len, last, [m.world(to)])
        }),
        Step::Read(g) => {
            let here = cut.piece(mine.clone(), g);
            let want = (len, here.len());
            for r in 0..n {
                let acc = &mut out[here.start - mine.start..here.end - mine.start];
                let spare = &mut spare[..here.len()];
                let done = if r == me {
                    fold_into(acc, spare, r == 0, red, &input[here.clone()])
                } else {
                    let (done, seen) = e.use_mailbox(Boxes::Long, m.world(r), at(g, (me + n - r) % n), |c, seen| {
                        let fits = !seen.astray && (seen.stream, seen.len) == want;
                        (if fits { fold_into(acc, spare, r == 0, red, c) } else { Ok(()) }, seen)
                    })?;
                    if seen.astray {
                        e.give_up_mailboxes(stamp);
                    }
                    in_step(e, stamp, r, (seen.stream, seen.len), want)?;
                    done
                };
                // the others wait for this rank's folded segment: a fold
                // failing here alone would leave them waiting
                done.inspect_err(|_| e.give_up_mailboxes(stamp))?;
            }
            Ok(())
        }
    })
}

/// A piece of a reduction folded in rank order from where each part lies
/// (another rank's mailbox, or this rank's own data).
struct Fold {
    acc: Scratch,
    /// A copy of the next part, for an op that does not commute (`fold`
    /// writes its result there).
    spare: Scratch,
}

impl Fold {
    fn new(size: usize) -> Fold {
        Fold { acc: Scratch::for_overwrite(size), spare: Scratch::for_overwrite(size) }
    }

    /// The next rank's part `c` folded into the first `c.len()` bytes of
    /// `acc` (`first`: it is rank 0's, which starts them).
    fn take(&mut self, first: bool, red: Reduction, c: &[u8]) -> MpiResult<()> {
        let n = c.len();
        fold_into(&mut self.acc[..n], &mut self.spare[..n], first, red, c)
    }

    /// World rank `from`'s piece `stamp` folded in straight from its long
    /// mailbox (`first`: as `take`) when it is what is expected (`want`:
    /// its stream's size and the piece's length); the fold's outcome and
    /// what the read saw.
    fn take_from(
        &mut self,
        e: &mut Engine,
        from: usize,
        stamp: u64,
        first: bool,
        red: Reduction,
        want: (usize, usize),
    ) -> MpiResult<(MpiResult<()>, Seen)> {
        e.use_mailbox(Boxes::Long, from, stamp, |c, seen| {
            let fits = !seen.astray && (seen.stream, c.len()) == want;
            (if fits { self.take(first, red, c) } else { Ok(()) }, seen)
        })
    }
}

/// The next rank's part `c` folded into `acc` (`first`: it is rank 0's,
/// which starts it); in place when the op commutes (it only reads `c`),
/// through `spare` (as long) when not.
fn fold_into(acc: &mut [u8], spare: &mut [u8], first: bool, red: Reduction, c: &[u8]) -> MpiResult<()> {
    if first {
        acc.copy_from_slice(c);
        Ok(())
    } else if red.op.symmetric() {
        op::apply(red.op, red.ty, c, acc)
    } else {
        spare.copy_from_slice(c);
        fold(red, acc, spare)
    }
}

/// Reduce of a vector too long to publish whole to `root`, in pieces:
/// every other rank publishes its vector for the root, which folds each
/// piece in rank order straight from the mailboxes (v0 op v1 op ...: the
/// result every other algorithm computes). This rank's part is `from` or
/// (None) `data`.
fn reduce_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    root: usize,
) -> MpiResult<()> {
    let (n, me, len) = (m.group.size(), m.me, own(from, data).len());
    let cut = Cut::new(len, red.ty.size);
    let whole = 0..len;
    if me != root {
        for p in 0..cut.pieces {
            let at = cut.piece(whole.clone(), p);
            e.publish_piece(piece(stamp, p), &own(from, data)[at], len, p + 1 == cut.pieces, [m.world(root)])?;
        }
        return Ok(());
    }
    let mut fold = Fold::new(cut.size);
    // every piece is read even after a failure: its writer waits for it
    let mut failed = FirstError::default();
    // per rank: its stream was read to its last piece
    let mut ended = vec![false; n];
    ended[root] = true;
    for p in 0..cut.pieces {
        let at = cut.piece(whole.clone(), p);
        // rank 0's piece, then each next one folded in
        for (r, ended) in ended.iter_mut().enumerate() {
            if r == root {
                if failed.ok() {
                    failed.keep(fold.take(r == 0, red, &own(from, data)[at.clone()]));
                }
                continue;
            }
            if *ended {
                continue;
            }
            // after a failure the pieces are still read, and folded in vain
            let (done, seen) = fold.take_from(e, m.world(r), piece(stamp, p), r == 0, red, (len, at.len()))?;
            if seen.astray {
                // its part was short enough to go whole
                e.read_following(Boxes::Short, m.world(r), stamp, 0, &mut [])?;
            }
            failed.keep(check_size(r, seen.stream, len));
            if seen.stream == len && seen.len != at.len() {
                failed.keep(err!(
                    Type,
                    "rank {r}'s pieces of this reduction do not line up with the root's: its datatype differs"
                ));
            }
            failed.keep(done);
            *ended = seen.last;
        }
        if failed.ok() {
            data[at.clone()].copy_from_slice(&fold.acc[..at.len()]);
        }
    }
    // a longer stream than the root's is read to its end
    for (r, ended) in ended.iter_mut().enumerate() {
        let mut p = cut.pieces;
        while !*ended {
            *ended = e.use_mailbox(Boxes::Long, m.world(r), piece(stamp, p), |_, seen| seen.last)?;
            p += 1;
        }
    }
    failed.result()
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
