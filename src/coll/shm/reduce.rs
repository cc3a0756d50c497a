//! Reductions through the mailboxes: reduce, allreduce (the world's short
//! ones on the arrival lines), scan and exscan, reduce-scatter, whole or
//! in pieces, folding in rank order (v0 op v1 op ...) so that the result
//! is the one every other algorithm computes.

use super::blocks::{allgather_cut, alltoall_cut};
use super::*;
use crate::coll::Scratch;
use crate::datatype::{TypeInfo, TypeRef};
use crate::op::Op;
use crate::p2p::arrival::Take;

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

/// Room for a short collective's bytes: on the stack when they fit a
/// line, else in a buffer from the pool (which costs a lock to take and
/// one to give back, a good part of a short reduction's time).
#[derive(Default)]
struct Room {
    line: Line,
    scratch: Option<Scratch>,
}

impl Room {
    /// `len` bytes of it, to be written before they are read.
    fn take(&mut self, len: usize) -> &mut [u8] {
        if len <= ARRIVAL_BYTES {
            &mut self.line.0[..len]
        } else {
            self.scratch.insert(Scratch::for_overwrite(len))
        }
    }
}

/// This rank's part of a reduction whose result overwrites `data`: `from`,
/// or (None) a copy of `data`, kept in `copy`.
fn kept<'a>(from: Option<&'a [u8]>, data: &[u8], copy: &'a mut Room) -> &'a [u8] {
    match from {
        Some(from) => from,
        None => {
            let room = copy.take(data.len());
            room.copy_from_slice(data);
            room
        }
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
    let mut copy = Room::default();
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
pub(super) const ALL_READ_ALL: usize = 8;

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
    if e.by_arrivals(m.group, data.len()) {
        // everyone folds every part, in rank order
        let (len, mut acc, mut spare) = (data.len(), Line::default(), Line::default());
        e.arrive(m.group, stamp, Kind::Allreduce, own(from, data), |r, part| {
            check_size(r, part.len(), len)?;
            fold_into(&mut acc.0[..len], &mut spare.0[..len], r == 0, red, part)
        })?;
        data.copy_from_slice(&acc.0[..len]);
        return Ok(());
    }
    if let Some(from) = from {
        data.copy_from_slice(from);
    }
    if n > ALL_READ_ALL {
        let done = gather_reduce(e, m, stamp, None, data, red, 0, false);
        // a failed rank 0 publishes nothing: the others fail for the size
        let out: &mut [u8] = if done.is_ok() { data } else { &mut [] };
        let passed = bcast_in(e, m, stamp, out, 0, false);
        return done.and(passed);
    }
    e.publish(Boxes::Short, stamp, data, m.others(me))?;
    let mut copy = Room::default();
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
    if tuning::scan_chain(n) {
        return scan_chain(e, m, stamp, from, data, red, exclusive);
    }
    // the last rank's part is read by no one
    if me + 1 < n {
        e.publish(Boxes::Short, stamp, own(from, data), (me + 1..n).map(|r| m.world(r)))?;
    }
    // an exscan never folds its own part
    let mut copy = Room::default();
    let mine = if exclusive { &[][..] } else { kept(from, data, &mut copy) };
    fold_short(e, m, stamp, mine, if exclusive { me } else { me + 1 }, data, red)
}

/// Short `scan` along the ranks (`tuning::scan_chain`): rank r reads
/// rank r - 1's prefix (v0 op ... op v(r-1)) from its short mailbox,
/// folds its own part in after it, and publishes the result for rank
/// r + 1 alone: the folds `fold_short` makes, in the same order. One
/// publication and one read a rank, where each reading every earlier
/// rank's part makes n(n-1)/2 reads in all. A rank that fails (its
/// count is not its predecessor's) publishes an empty part, so that the
/// next one fails too rather than wait (giving the mailboxes up would
/// fail the ranks before it, gone on to their next collective).
fn scan_chain(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    from: Option<&[u8]>,
    data: &mut [u8],
    red: Reduction,
    exclusive: bool,
) -> MpiResult<()> {
    let (n, me, len) = (m.group.size(), m.me, data.len());
    let mut copy = Room::default();
    let mine = kept(from, data, &mut copy);
    // the prefix on the stack when it fits a line (measured, 2 cores,
    // Scans of 8 bytes in loops, each run's best of 3, medians of 12
    // alternated runs, against a buffer from the pool: 4 ranks 0.31 ->
    // 0.25 us a call, and in a quieter hour 0.23 -> 0.16; 8 ranks, 6 runs,
    // 0.59 -> 0.46)
    let mut room = Room::default();
    let acc = room.take(len);
    if me == 0 {
        acc.copy_from_slice(mine);
    } else {
        let mut take = || {
            let seen = e.use_mailbox(Boxes::Short, m.world(me - 1), stamp, |theirs, seen| {
                if !seen.astray && seen.len == len {
                    acc.copy_from_slice(theirs);
                }
                seen
            })?;
            if seen.astray {
                e.give_up_mailboxes(stamp);
            }
            check_size(me - 1, seen.stream, len)?;
            if exclusive {
                data.copy_from_slice(acc);
            }
            let mut spare = Scratch::zeroed(if red.op.symmetric() { 0 } else { len });
            fold_into(acc, &mut spare, false, red, mine)
        };
        if let Err(why) = take() {
            // an empty part for the next rank, which fails on it in turn
            // (a rank after a failed one must not fold a part of its size
            // as the prefix); this rank's error is the one to report (a
            // publication fails only where the mailboxes were given up,
            // and the next rank's wait fails on that)
            if me + 1 < n {
                let _passed_on = e.publish(Boxes::Short, stamp, &[], [m.world(me + 1)]);
            }
            return Err(why);
        }
    }
    if me + 1 < n {
        e.publish(Boxes::Short, stamp, acc, [m.world(me + 1)])?;
    }
    if !exclusive {
        data.copy_from_slice(acc);
    }
    Ok(())
}

/// `scan` in pieces, along the ranks: rank r reads piece p of rank
/// r - 1's prefix (v0 op ... op v(r-1)) straight from its mailbox, folds
/// its own piece in after it, and publishes the result for rank r + 1.
/// Each fold is the one the ranks before it made, in the same order, so
/// the result is what folding every part in rank order gives; each rank
/// reads one stream, where reading every earlier rank's part took
/// n(n-1)/2 reads in all. Measured, `coll quick`, 5 alternated runs, on 2
/// cores: 4 ranks, Scans of 8, 32 and 64 KiB 3.9-4.7, 11.7-20.8 and
/// 23-36 us -> 2.8-3.1, 10.0-10.9 and 19.8-21.3 (Open MPI's 64 KiB:
/// 23-35); 8 ranks, 8 and 64 KiB 12-16 and 108-120 -> 4.7-5.9 and 39-40;
/// 2 ranks alike. Up to 64 KiB only (`tuning::in_pieces`): with pieces
/// up to 1 MiB, 4 ranks went no faster than the point-to-point chain's
/// single copies, within this machine's noise, and 2 ranks a little
/// slower. A piece of this rank's part in `data` is read before the
/// result overwrites it.
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
    let mut fold = Fold::new(cut.size, red);
    // an exscan's result is the prefix before this rank's part
    let mut before = Scratch::for_overwrite(if exclusive && me > 0 { cut.size } else { 0 });
    let next = (me + 1 < n).then(|| m.world(me + 1));
    for p in 0..cut.pieces {
        let at = cut.piece(0..len, p);
        let k = at.len();
        if me > 0 {
            let prior = m.world(me - 1);
            let (done, seen) = fold.take_from(e, prior, piece(stamp, p), true, red, (len, k))?;
            if !seen.astray && (seen.stream, seen.len) != (len, k) {
                // another count: the rest of its stream read (so that the
                // members stay in step) and an empty last piece passed on,
                // on which the next rank fails in turn, the mailboxes not
                // given up (the ranks before have gone on to their next
                // collective: `scan_chain`)
                let (mut rest, mut q) = (seen, p);
                while !rest.last && !rest.astray {
                    q += 1;
                    rest = e.read_following(Boxes::Long, prior, piece(stamp, q), 0, &mut [])?;
                }
                if let Some(next) = next {
                    let _passed_on = e.publish_piece(piece(stamp, p), &[], 0, true, [next]);
                }
                check_size(me - 1, seen.stream, len)?;
                return mismatch(me - 1);
            }
            in_step(e, stamp, me - 1, (seen.stream, seen.len), (len, k))?;
            done?;
            if exclusive {
                before[..k].copy_from_slice(&fold.acc[..k]);
            }
        }
        fold.take(me == 0, red, &own(from, data)[at.clone()])?;
        if let Some(next) = next {
            e.publish_piece(piece(stamp, p), &fold.acc[..k], len, p + 1 == cut.pieces, [next])?;
        }
        match (exclusive, me) {
            (true, 0) => {}
            (true, _) => data[at].copy_from_slice(&before[..k]),
            (false, _) => data[at].copy_from_slice(&fold.acc[..k]),
        }
    }
    Ok(())
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
    allgather_cut(e, m, stamp, (n - 1) * cut.pieces, data, part, cut, len, None)
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
        alltoall_cut(e, m, stamp, (input, &part), (&mut got, |r| r * most..r * most + mine.len()), cut, len, None)?;
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
    /// For pieces of up to `size` bytes of reduction `red` (a spare only
    /// for an op that does not commute: a buffer from the pool costs a
    /// lock to take and one to give back).
    fn new(size: usize, red: Reduction) -> Fold {
        let spare = if red.op.symmetric() { 0 } else { size };
        Fold { acc: Scratch::for_overwrite(size), spare: Scratch::for_overwrite(spare) }
    }

    /// The next rank's part `c` folded into the first `c.len()` bytes of
    /// `acc` (`first`: it is rank 0's, which starts them).
    fn take(&mut self, first: bool, red: Reduction, c: &[u8]) -> MpiResult<()> {
        let n = c.len();
        // (empty for an op that commutes, which `fold_into` folds in place)
        let spare = n.min(self.spare.len());
        fold_into(&mut self.acc[..n], &mut self.spare[..spare], first, red, c)
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

/// A nonblocking all-reduction's `take` on the arrival lines
/// (`Engine::start_arrival`), as `allreduce` folds the parts there: each
/// part, of `len` bytes, folded in as it comes in rank order, and the
/// result written to `out` once the last of `n` is.
///
/// # Safety
/// `out` must hold `len` writable bytes until the request completes (the
/// user's recvbuf, which MPI leaves to the collective until then).
pub unsafe fn folding(ty: TypeRef, op: Op, len: usize, n: usize, out: usize) -> Take {
    let (mut acc, mut spare) = (Line::default(), Line::default());
    Box::new(move |r, part| {
        check_size(r, part.len(), len)?;
        fold_into(&mut acc.0[..len], &mut spare.0[..len], r == 0, Reduction { ty: &ty, op }, part)?;
        if r + 1 == n {
            // SAFETY: per the contract, `out` holds `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(acc.0.as_ptr(), out as *mut u8, len) };
        }
        Ok(())
    })
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
    let mut fold = Fold::new(cut.size, red);
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
