//! The collectives that move blocks through the mailboxes, whole or in
//! pieces: allgather(v), gather, scatter and alltoall.

use super::*;
use crate::runtime::backoff::thread_cpu_ns;

/// Everyone's `b`-byte block, in rank order, into `all` (this rank's own
/// block must be in place already; `own`: where it lies too, in the
/// caller's send buffer, see `allgatherv`).
pub fn allgather(e: &mut Engine, m: &Members, stamp: u64, all: &mut [u8], own: Option<&[u8]>) -> MpiResult<()> {
    let b = all.len() / m.group.size().max(1);
    allgatherv(e, m, stamp, all, |r| r * b..(r + 1) * b, Some(b), own)
}

/// Every rank's part `at(r)` of `all` to every other (this rank's own
/// part is in place), as an allgatherv's, whose parts' sizes every rank
/// knows: on the arrival lines when each fits one, as an allgather's (an
/// Allgatherv's counts are alike on every rank, so all go there or
/// none), whole when they are short in all, else in pieces when they are
/// of one size (`equal`: Some(their bytes)), or whole in the long
/// mailbox when each fits a slot (`allgatherv_form`). Between two ranks,
/// a long part goes in pieces or is read straight out of its writer's
/// memory (`two_ways`): from `own`, the same bytes in the caller's send
/// buffer, where there is one, since lines just copied into `all` would
/// be pulled from the writer's core.
pub fn allgatherv(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
    equal: Option<usize>,
    own: Option<&[u8]>,
) -> MpiResult<()> {
    let longest = equal.unwrap_or_else(|| (0..m.group.size()).map(|r| at(r).len()).max().unwrap_or(0));
    if e.by_arrivals(m.group, longest) {
        let mut mine = Line::default();
        let b = at(m.me).len();
        mine.0[..b].copy_from_slice(&all[at(m.me)]);
        return e.arrive(m.group, stamp, Kind::Allgather, &mine.0[..b], |r, part| {
            check_size(r, part.len(), at(r).len())?;
            all[at(r)].copy_from_slice(part);
            Ok(())
        });
    }
    match equal {
        Some(b) if m.group.size() == 2 && tuning::either_way(Pieces::Allgather, 2, 2 * b) => {
            let (mine, theirs) = (at(m.me), at(1 - m.me));
            let (low, high) = all.split_at_mut(mine.start.max(theirs.start));
            let (mine, theirs) = if mine.start < theirs.start {
                (&low[mine], &mut high[..theirs.len()])
            } else {
                (&high[..mine.len()], &mut low[theirs])
            };
            two_ways(e, m, stamp, (own.filter(|o| o.len() == mine.len()).unwrap_or(mine), theirs), false)
        }
        Some(b) if !whole(b * m.group.size()) => match tuning::agreed_blocks(Pieces::Allgather, m.group.size()) {
            Some(forced) => agreed(e, m, (stamp, Kind::Allgather), b, forced, |e, way, (note, heard)| match way {
                // (from the send buffer, whose lines the writer has not
                // just written, where there is one)
                Way::Read => read_in_place(e, m, stamp, (own.filter(|o| o.len() == b), note, heard), 0, (all, at)),
                Way::Pieces => allgather_cut(e, m, stamp, 0, all, at, Cut::new(b, 1), b, Some((note, heard))),
            }),
            None => allgather_cut(e, m, stamp, 0, all, at, Cut::new(b, 1), b, None),
        },
        None if !whole((0..m.group.size()).map(|r| at(r).len()).sum()) => {
            allgather_whole(e, m, stamp, Boxes::Long, all, at)
        }
        _ => allgather_whole(e, m, stamp, Boxes::Short, all, at),
    }
}

/// The form in pieces (for `fits`) of an allgatherv among `n` ranks whose
/// parts are of one size (`equal`) or, the longest `longest` bytes, of
/// sizes of their own: parts of one size go in pieces; among more than
/// two ranks, parts that each fit a long slot go whole, one long
/// publication a rank (`allgather_whole`), as parts of one piece do.
pub fn allgatherv_form(n: usize, equal: Option<usize>, longest: usize) -> Option<(Pieces, usize, usize)> {
    (equal.is_some() || (n > 2 && longest <= Boxes::Long.bytes())).then_some((Pieces::Allgather, n, 1))
}

/// Every rank's part `at(r)` of `all` to every other, whole in the
/// `kind` mailbox (this rank's own part is in place; the parts may have
/// sizes of their own), read parked. In the long mailbox each part is a
/// stream of its own length and its last piece, as `allgather_cut`
/// publishes a part of one piece: an allgatherv's parts of sizes of their
/// own that each fit a slot go so (measured, medians of 6-10 alternated
/// runs, against the point-to-point algorithm, already a third of Open
/// MPI's time; rank r's part (r + 1) times 1, 2 or 4 KiB: 3 ranks on 2
/// cores, 2 and 4 KiB, 0.78 and 0.87 of the time; 4 ranks, 1 and 4 KiB,
/// 0.68 and 0.74; 8 ranks, 1 and 4 KiB, 0.51 and 0.46).
fn allgather_whole(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    kind: Boxes,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let mine = &all[at(me)];
    match kind {
        Boxes::Short => e.publish(kind, stamp, mine, m.others(me))?,
        Boxes::Long => e.publish_piece(stamp, mine, mine.len(), true, m.others(me))?,
    }
    let mut failed = FirstError::default();
    for r in (0..n).filter(|&r| r != me) {
        let want = at(r).len();
        let seen = e.read_whole(kind, m.world(r), stamp, 0, &mut all[at(r)])?;
        failed.keep(if seen.astray || (seen.stream, seen.last) != (seen.len, true) {
            // the rank took another way (nothing was read), or published
            // the first of the pieces of a longer part
            e.give_up_mailboxes(stamp);
            check_size(r, seen.stream, want).and(mismatch(r))
        } else {
            check_size(r, seen.len, want)
        });
    }
    failed.result()
}

/// Every rank's block `at(r)` of `all` to every other, in pieces (this
/// rank's own block is in place); the pieces' stamps count from `first`;
/// every member's stream has `stream` bytes. `notes`: words for the
/// readers, and what hears each member's (from its first piece).
#[allow(clippy::too_many_arguments)]
pub(super) fn allgather_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    first: usize,
    all: &mut [u8],
    at: impl Fn(usize) -> Range<usize>,
    cut: Cut,
    stream: usize,
    mut notes: Option<(Note, Heard)>,
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    if n == 1 {
        return Ok(());
    }
    pipeline(e, cut.pieces, |e, step| match step {
        Step::Publish(p) => {
            let (data, last) = (&all[cut.piece(at(me), p)], p + 1 == cut.pieces);
            e.publish_piece_noted(piece(stamp, first + p), data, (stream, last), words(&notes), m.others(me))
        }
        Step::Read(p) => {
            for r in (0..n).filter(|&r| r != me) {
                let out = &mut all[cut.piece(at(r), p)];
                let want = (stream, out.len());
                let seen = if cut.pieces == 1 {
                    // its own part published whole, the rank only reads
                    // (measured, 4 ranks on 2 cores, parts of 2 and 4 KiB:
                    // 0.83 and 0.94 of the time of reads that do not park)
                    e.read_whole(Boxes::Long, m.world(r), piece(stamp, first + p), 0, out)?
                } else {
                    e.read_mailbox(Boxes::Long, m.world(r), piece(stamp, first + p), 0, out)?
                };
                if seen.by_reference && !seen.astray {
                    // read in place (its part, `p2p::agreed`)
                    e.give_up_mailboxes(stamp);
                    return check_size(r, seen.stream, stream).and(diverged(r));
                }
                if let Some((_, heard)) = notes.as_mut().filter(|_| p == 0 && !seen.astray) {
                    heard(e, r, seen.note);
                }
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
        return publish_but_own(e, Boxes::Short, stamp, all, b, root, m.others(root));
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
/// (its writer's, which it copies across itself) for `readers` in the
/// `kind` mailbox (a long one as a stream of one piece): an Alltoall's
/// or a short Scatter's publication. A quarter less to copy in at 4
/// ranks, half at 2 (measured, 1 KiB blocks, medians of interleaved runs:
/// Alltoall 6.45 -> 5.86 us at 4 ranks on 2 cores, 2.82 -> 2.71 at 3,
/// 0.858 -> 0.794 at 2; Scatter 0.526 -> 0.484 at 4, 0.188 -> 0.175 at 2;
/// 8-byte blocks, inline in the slot's header either way, alike).
fn publish_but_own(
    e: &mut Engine,
    kind: Boxes,
    stamp: u64,
    all: &[u8],
    b: usize,
    own: usize,
    readers: impl IntoIterator<Item = usize>,
) -> MpiResult<()> {
    let len = all.len() - b;
    let fill = |to: &mut [u8]| {
        to[..own * b].copy_from_slice(&all[..own * b]);
        to[own * b..].copy_from_slice(&all[(own + 1) * b..]);
    };
    match kind {
        Boxes::Short => e.publish_filled(kind, stamp, len, readers, fill),
        Boxes::Long => e.publish_piece_filled(stamp, len, len, true, readers, fill),
    }
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

/// Block r of `sends` to rank r, block r of `recvs` from it (equal blocks).
pub fn alltoall(e: &mut Engine, m: &Members, stamp: u64, sends: &[u8], recvs: &mut [u8]) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let b = sends.len() / n.max(1);
    if e.by_arrivals(m.group, sends.len()) {
        // every block on the line, each rank reading its own of each
        return e.arrive(m.group, stamp, Kind::Alltoall, sends, |r, part| {
            check_size(r, part.len() / n, b)?;
            recvs[r * b..(r + 1) * b].copy_from_slice(&part[me * b..(me + 1) * b]);
            Ok(())
        });
    }
    // the blocks for the others in one publication: short, or long
    // among more than two ranks (between two it is one piece anyway)
    let kind = if whole(sends.len()) {
        Some(Boxes::Short)
    } else {
        (n > 2 && sends.len() - b <= Boxes::Long.bytes()).then_some(Boxes::Long)
    };
    if let Some(kind) = kind {
        return alltoall_whole(e, m, stamp, kind, sends, recvs);
    }
    let block = |r: usize| r * b..(r + 1) * b;
    if n == 2 && tuning::either_way(Pieces::Alltoall, 2, sends.len()) {
        recvs[block(me)].copy_from_slice(&sends[block(me)]);
        return two_ways(e, m, stamp, (&sends[block(1 - me)], &mut recvs[block(1 - me)]), false);
    }
    if let Some(forced) = tuning::agreed_blocks(Pieces::Alltoall, n) {
        return alltoall_agreed(e, m, stamp, (sends, recvs), b, forced);
    }
    alltoall_cut(e, m, stamp, (sends, block), (recvs, block), Cut::new(b, 1), b, None)
}

/// `alltoall` of blocks of `b` bytes that go in pieces or are read in
/// place (from byte `me * b` of every other's send buffer), as the members
/// agree (`agreed`).
fn alltoall_agreed(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    (sends, recvs): (&[u8], &mut [u8]),
    b: usize,
    forced: Option<Way>,
) -> MpiResult<()> {
    let block = |r: usize| r * b..(r + 1) * b;
    recvs[block(m.me)].copy_from_slice(&sends[block(m.me)]);
    agreed(e, m, (stamp, Kind::Alltoall), b, forced, |e, way, (note, heard)| match way {
        Way::Read => read_in_place(e, m, stamp, (Some(sends), note, heard), m.me * b, (recvs, block)),
        Way::Pieces => {
            alltoall_cut(e, m, stamp, (sends, block), (recvs, block), Cut::new(b, 1), b, Some((note, heard)))
        }
    })
}

/// A call of collective `kind`, operation `stamp`, of blocks of `b` bytes
/// that go in pieces or are read in place, `go(way, words)`, the way every
/// member takes alike (`p2p::agreed`; `forced`: OXMPI_CROWDED_BLOCKS),
/// with the words this rank reports to the others and what hears
/// theirs; timed for the next calls' choice by the processor time it
/// took this rank, not the time it spent: on a host with more ranks than
/// cores a rank's call runs while the others it waits for may not, so
/// its length says when they ran, not what the way costs the cores. Read
/// in place, a writer waits until every reader has run; in pieces, a rank
/// often finds its peers' pieces written while it waited for a core and
/// leaves at once. Measured, 4 ranks on 2 cores (Xeon), Alltoall of 64
/// KiB blocks in a loop: timed by the clock, every rank's estimates put
/// pieces at 21-29 us a call and reading at 34-78, and the loop took 52
/// us a call where reading alone took 35-45; timed by the processor, 35
/// (Open MPI 37), the 64 KiB Allgather and both at 1 MiB unchanged.
fn agreed(
    e: &mut Engine,
    m: &Members,
    (stamp, kind): (u64, Kind),
    b: usize,
    forced: Option<Way>,
    go: impl FnOnce(&mut Engine, Way, (Note, Heard)) -> MpiResult<()>,
) -> MpiResult<()> {
    let of = agreed_of(stamp, kind);
    let (way, note, timed) = e.agreed_way(of, m.group, m.me, b, forced);
    let start = timed.then(thread_cpu_ns);
    let done = go(e, way, (note, &mut |e: &mut Engine, r, note| e.agreed_heard(of, r, b, note)));
    if let (Ok(()), Some(start)) = (&done, start) {
        e.agreed_took(of, b, way, thread_cpu_ns().saturating_sub(start));
    }
    done
}

/// What `p2p::agreed` keys a communicator's calls of collective `kind` by
/// (operation `stamp`): the communicator's context, and the operation.
pub(super) fn agreed_of(stamp: u64, kind: Kind) -> u64 {
    (stamp >> 32) << 8 | kind as u64
}

/// Every member's stream published by reference (this rank's is `mine`,
/// or where None its part `into(me)` of `recvs`), and every other's read
/// in place from byte `from` on into `into(r)` of `recvs`, each one's
/// words (`note`) heard; then a wait for every other to have read this
/// rank's (its data must stay as it is until then).
fn read_in_place(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    (mine, note, heard): (Option<&[u8]>, Note, Heard),
    from: usize,
    (recvs, into): (&mut [u8], impl Fn(usize) -> Range<usize>),
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let stream = mine.map_or(into(me).len(), <[u8]>::len);
    e.publish_by_reference(piece(stamp, 0), mine.unwrap_or(&recvs[into(me)]), note, m.others(me))?;
    let mut failed = FirstError::default();
    // each from the rank after it on: readers of one writer at once
    // contend for the lock of its page tables, which pins its pages (4
    // ranks on 2 cores, 64 KiB Alltoall read in place, medians of 12
    // alternated runs: 37.8 -> 35.4 us, after 49.3 -> 46.8 in 8)
    for r in (1..n).map(|i| (me + i) % n) {
        let seen = e.read_mailbox(Boxes::Long, m.world(r), piece(stamp, 0), from, &mut recvs[into(r)])?;
        failed.keep(if seen.astray || !seen.by_reference || seen.stream != stream {
            // another operation, another size, or pieces
            e.give_up_mailboxes(stamp);
            if seen.astray || seen.by_reference {
                check_size(r, seen.stream, stream).and(mismatch(r))
            } else {
                // each of its blocks a stream of its own
                check_size(r, seen.stream, into(r).len()).and(diverged(r))
            }
        } else {
            heard(e, r, seen.note);
            Ok(())
        });
    }
    // (given up, this fails unless every other has read it)
    let read_here = e.await_reads(Boxes::Long);
    failed.result().and(read_here)
}

/// Between two ranks, this rank's long block `mine` to the other and the
/// other's into `theirs` (an Alltoall's or an Allgather's, of one size,
/// `tuning::either_way`, or an Alltoallv's blocks outside its tables,
/// whose sizes each side knows from them), both the way their calls
/// took less time lately (`Way`, `Ways`), in pieces or by reference for
/// the other to read straight out of the writer's buffer (the writer then
/// waits for that read); each reader takes either, as the first piece
/// says (ranks told different ways by OXMPI_TWO_RANK_BLOCKS mix them).
/// Every publication reports this rank's estimates to the other, and
/// every read takes the other's report. `agreed`: the operation has a
/// publication in the short mailbox too (an Alltoallv's tables), so a
/// writer found there is not astray.
pub(super) fn two_ways(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    (mine, theirs): (&[u8], &mut [u8]),
    agreed: bool,
) -> MpiResult<()> {
    let start = std::time::Instant::now();
    let (other, out, into) = (1 - m.me, mine.len(), theirs.len());
    let from = m.world(other);
    // (the costs kept for the longer block: alike on both ranks)
    let key = out.max(into);
    let way = e.long_way(key, from, tuning::two_rank_blocks());
    let note = e.ways().report(key);
    let (cut_out, cut_in) = (Cut::new(out, 1), Cut::new(into, 1));
    // how the other's block came
    let mut came = Way::Pieces;
    let mut read = |e: &mut Engine, p: usize| {
        if came == Way::Read || p >= cut_in.pieces {
            return Ok(());
        }
        let at = cut_in.piece(0..into, p);
        let want = (into, at.len());
        // (its first piece may be the whole block, by reference)
        let to = if p == 0 { &mut theirs[..] } else { &mut theirs[at] };
        let stamp_p = piece(stamp, p);
        let seen = if agreed {
            e.read_agreed(Boxes::Long, from, stamp_p, 0, to)?
        } else {
            e.read_mailbox(Boxes::Long, from, stamp_p, 0, to)?
        };
        if seen.astray {
            return check_size(other, seen.stream, into).and(mismatch(other));
        }
        if p == 0 {
            e.ways().reported(seen.note);
        }
        if seen.by_reference {
            came = Way::Read;
            if seen.stream != into {
                e.give_up_mailboxes(stamp);
            }
            return check_size(other, seen.stream, into);
        }
        in_step(e, stamp, other, (seen.stream, seen.len), want)
    };
    let done = match way {
        Way::Read => {
            e.publish_by_reference(piece(stamp, 0), mine, note, [from])?;
            let got = (0..cut_in.pieces).try_for_each(|p| read(e, p));
            // (given up, this fails unless the other has read it)
            let read_here = e.await_reads(Boxes::Long);
            got.and(read_here)
        }
        Way::Pieces => pipeline(e, cut_out.pieces.max(cut_in.pieces), |e, step| match step {
            Step::Publish(p) if p < cut_out.pieces => {
                let (part, last) = (&mine[cut_out.piece(0..out, p)], p + 1 == cut_out.pieces);
                e.publish_piece_noted(piece(stamp, p), part, (out, last), note, [from])
            }
            Step::Publish(_) => Ok(()),
            Step::Read(p) => read(e, p),
        }),
    };
    if done.is_ok() && came == way {
        e.ways().took(key, way, start.elapsed().as_nanos() as u64);
    }
    done
}

/// `alltoall` whose blocks for the others fit one publication in the
/// `kind` mailbox: one publication a rank, each reader taking its block
/// of it and waiting parked (`Engine::read_whole`). In the long mailbox
/// that takes one publication where pieces take one a block (measured,
/// medians of 5-8 alternated runs: 4 ranks on 2 cores, blocks of 2 and 8
/// KiB, 0.86 and 0.74 of the time in pieces; 3 ranks, 2, 8 and 16 KiB,
/// 0.93, 0.95 and 0.83; 8 and 16 ranks, 1 KiB, 0.70 and 0.65; with 20-50
/// us of work between calls, skewed by rank, 0.97-1.00: the parked waits
/// cost ranks that arrive apart nothing). A long one is a stream of its
/// own length and its last piece, which tells it from the first piece of
/// a rank whose blocks are longer (never its stream's last among more
/// than two ranks).
fn alltoall_whole(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    kind: Boxes,
    sends: &[u8],
    recvs: &mut [u8],
) -> MpiResult<()> {
    let (n, me) = (m.group.size(), m.me);
    let b = sends.len() / n;
    let len = sends.len() - b;
    recvs[me * b..(me + 1) * b].copy_from_slice(&sends[me * b..(me + 1) * b]);
    publish_but_own(e, kind, stamp, sends, b, me, m.others(me))?;
    let mut failed = FirstError::default();
    for r in (0..n).filter(|&r| r != me) {
        let at = place_in(me, r) * b;
        let seen = e.read_whole(kind, m.world(r), stamp, at, &mut recvs[r * b..(r + 1) * b])?;
        let piece = kind == Boxes::Long && !seen.astray && (seen.stream, seen.len, seen.last) != (len, len, true);
        failed.keep(if piece {
            // the first of its pieces: its blocks are longer
            e.give_up_mailboxes(stamp);
            check_size(r, seen.stream, b).and(mismatch(r))
        } else if seen.astray {
            // its blocks went the other way, `seen.len` bytes of them:
            // nothing was read, whatever their size (the mailboxes are
            // given up)
            check_size(r, seen.len / (n - 1), b).and(mismatch(r))
        } else {
            check_size(r, seen.len / (n - 1), b)
        });
    }
    failed.result()
}

/// What hears a member's words in a collective's publications (the
/// member, its words).
type Heard<'a> = &'a mut dyn FnMut(&mut Engine, usize, Note);

/// The words a `_cut` collective's pieces carry (none: zeros).
fn words(notes: &Option<(Note, Heard)>) -> Note {
    notes.as_ref().map_or([0; 2], |(note, _)| *note)
}

/// Block `out(r)` of `sends` to each other rank r, and r's block for
/// this rank into `into(r)` of `recvs`, in pieces (this rank's own block
/// is copied across first). The pieces' stamps count from 0; every
/// member's stream has `stream` bytes. `notes`: words for every piece's
/// reader, and what hears each member's words (the member, from its
/// first piece to this rank).
#[allow(clippy::too_many_arguments)]
pub(super) fn alltoall_cut(
    e: &mut Engine,
    m: &Members,
    stamp: u64,
    (sends, out): (&[u8], impl Fn(usize) -> Range<usize>),
    (recvs, into): (&mut [u8], impl Fn(usize) -> Range<usize>),
    cut: Cut,
    stream: usize,
    mut notes: Option<(Note, Heard)>,
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
            let (data, last) = (&sends[cut.piece(out(to), p)], t + 1 == items);
            e.publish_piece_noted(piece(stamp, t), data, (stream, last), words(&notes), [m.world(to)])
        }
        Step::Read(t) => {
            let (i, p) = at(t);
            let from = (me + n - i) % n;
            let into = &mut recvs[cut.piece(into(from), p)];
            let want = (stream, into.len());
            let seen = e.read_mailbox(Boxes::Long, m.world(from), piece(stamp, t), 0, into)?;
            if seen.by_reference && !seen.astray {
                // read in place (its whole send buffer, `p2p::agreed`)
                e.give_up_mailboxes(stamp);
                return check_size(from, seen.stream / n, stream).and(diverged(from));
            }
            if !seen.astray && seen.last != (t + 1 == items) {
                // a rank whose blocks fit one long publication sends them
                // whole, as its stream's last piece (`alltoall_whole`)
                e.give_up_mailboxes(stamp);
                return check_size(from, seen.stream / (n - 1), stream).and(mismatch(from));
            }
            if let Some((_, heard)) = notes.as_mut().filter(|_| p == 0 && !seen.astray) {
                heard(e, from, seen.note);
            }
            in_step(e, stamp, from, (seen.stream, seen.len), want)
        }
    })
}
