//! Which algorithm each collective uses: chosen by communicator and
//! message size, or forced by the `OXMPI_COLL_*` tunables (read once, at
//! MPI_Init; see `runtime::tunables` for their meaning and defaults).

use crate::err;
use crate::error::MpiResult;
use crate::p2p::mailbox::Way;
use crate::runtime::tunables;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Barrier {
    Dissemination,
    /// Every rank tells every other at once.
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bcast {
    Binomial,
    ScatterAllgather,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allreduce {
    RecursiveDoubling,
    Rabenseifner,
    ReduceBcast,
    /// Reduce-scatter and allgather, each with every transfer at once
    /// (power-of-two sizes; Rabenseifner otherwise).
    Linear,
    /// Every rank's vector to every rank at once, each folding them all
    /// in rank order.
    Allgather,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allgather {
    Ring,
    RecursiveDoubling,
    /// Every part sent to every rank at once.
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alltoall {
    Pairwise,
    Bruck,
    /// Every send and receive posted at once.
    Linear,
}

/// The settings: a forced algorithm (None: auto) and the auto thresholds.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    barrier: Option<Barrier>,
    bcast: Option<Bcast>,
    bcast_long: usize,
    allreduce: Option<Allreduce>,
    allreduce_long: usize,
    allgather: Option<Allgather>,
    allgather_short: usize,
    alltoall: Option<Alltoall>,
    alltoall_short: usize,
    check: bool,
    shm_max: usize,
    shm_long_max: usize,
    single_copy_min: usize,
    crowded_blocks: Option<Way>,
    /// OXMPI_SHM_SCAN: Some(true) along the ranks, Some(false) every
    /// rank reading every earlier one.
    shm_scan: Option<bool>,
}

static TUNING: OnceLock<Tuning> = OnceLock::new();

/// OXMPI_TWO_RANK_BLOCKS: the way every long block between two ranks
/// takes (None: the two ranks choose per call, `p2p::mailbox::Ways`).
static TWO_RANK_BLOCKS: OnceLock<Option<Way>> = OnceLock::new();

/// The way OXMPI_TWO_RANK_BLOCKS forces for a blocking Allgather's or
/// Alltoall's long blocks between two ranks (`either_way`), if any.
pub fn two_rank_blocks() -> Option<Way> {
    TWO_RANK_BLOCKS.get().copied().flatten()
}

/// Read and check the tunables (MPI_Init): an unknown algorithm name is
/// an error naming the choices.
pub fn init() -> MpiResult<()> {
    fn pick<T: Copy>(name: &str, choices: &[(&str, T)]) -> MpiResult<Option<T>> {
        let v = tunables::value(name);
        if v == "auto" {
            return Ok(None);
        }
        match choices.iter().find(|(n, _)| *n == v) {
            Some(&(_, t)) => Ok(Some(t)),
            None => {
                let names: Vec<&str> = choices.iter().map(|c| c.0).collect();
                err!(Arg, "{name}={v} is not an algorithm; use auto, {}", names.join(", "))
            }
        }
    }
    let t = Tuning {
        barrier: pick("OXMPI_COLL_BARRIER", &[("dissemination", Barrier::Dissemination), ("linear", Barrier::Linear)])?,
        bcast: pick(
            "OXMPI_COLL_BCAST",
            &[("binomial", Bcast::Binomial), ("scatter_allgather", Bcast::ScatterAllgather)],
        )?,
        bcast_long: tunables::size("OXMPI_BCAST_LONG"),
        allreduce: pick(
            "OXMPI_COLL_ALLREDUCE",
            &[
                ("recursive_doubling", Allreduce::RecursiveDoubling),
                ("rabenseifner", Allreduce::Rabenseifner),
                ("reduce_bcast", Allreduce::ReduceBcast),
                ("linear", Allreduce::Linear),
                ("allgather", Allreduce::Allgather),
            ],
        )?,
        allreduce_long: tunables::size("OXMPI_ALLREDUCE_LONG"),
        allgather: pick(
            "OXMPI_COLL_ALLGATHER",
            &[
                ("ring", Allgather::Ring),
                ("recursive_doubling", Allgather::RecursiveDoubling),
                ("linear", Allgather::Linear),
            ],
        )?,
        allgather_short: tunables::size("OXMPI_ALLGATHER_SHORT"),
        alltoall: pick(
            "OXMPI_COLL_ALLTOALL",
            &[("pairwise", Alltoall::Pairwise), ("bruck", Alltoall::Bruck), ("linear", Alltoall::Linear)],
        )?,
        alltoall_short: tunables::size("OXMPI_ALLTOALL_SHORT"),
        check: tunables::flag("OXMPI_CHECK_COLLECTIVES"),
        shm_max: tunables::size("OXMPI_SHM_COLL_MAX"),
        shm_long_max: tunables::size("OXMPI_SHM_COLL_LONG_MAX"),
        single_copy_min: tunables::size("OXMPI_SINGLE_COPY_MIN"),
        crowded_blocks: pick("OXMPI_CROWDED_BLOCKS", &[("pieces", Way::Pieces), ("read", Way::Read)])?,
        shm_scan: pick("OXMPI_SHM_SCAN", &[("chain", true), ("every", false)])?,
    };
    let _ = TUNING.set(t);
    // (not among the settings all ranks share: readers take either way)
    let two = pick("OXMPI_TWO_RANK_BLOCKS", &[("pieces", Way::Pieces), ("read", Way::Read)])?;
    let _ = TWO_RANK_BLOCKS.set(two);
    Ok(())
}

/// The settings `init` read; read now if it has not run (a unit test,
/// or a call before MPI_Init), the built-in defaults if they are bad.
/// Not `get_or_init`: `init` sets the cell, and setting it from inside
/// its own initializer would block forever. A reference: every
/// collective asks, and the settings are many words.
fn get() -> &'static Tuning {
    if let Some(t) = TUNING.get() {
        return t;
    }
    let _ = init();
    TUNING.get().unwrap_or(&FALLBACK)
}

/// The settings when the tunables cannot be read (`init` failed).
static FALLBACK: Tuning = Tuning {
    barrier: None,
    bcast: None,
    bcast_long: 256 << 10,
    allreduce: None,
    allreduce_long: 16 << 10,
    allgather: None,
    allgather_short: 64 << 10,
    alltoall: None,
    alltoall_short: 256,
    check: false,
    shm_max: 0,
    shm_long_max: 0,
    single_copy_min: 0,
    crowded_blocks: None,
    shm_scan: None,
};

/// Broadcast of `bytes` among `n` ranks. With single-copy transfers the
/// binomial tree wins at 4 ranks even at 1 MiB (202 vs 460 us on the
/// 2-core test machine); scatter-allgather pays off when log2(n) full
/// sends by the root outweigh its 2(n-1) piece steps, so from 8 ranks.
pub fn bcast(n: usize, bytes: usize) -> Bcast {
    let t = get();
    t.bcast.unwrap_or(if n >= 8 && bytes >= t.bcast_long { Bcast::ScatterAllgather } else { Bcast::Binomial })
}

/// Barrier among `n` ranks.
pub fn barrier(n: usize) -> Barrier {
    get().barrier.unwrap_or(if flat(n) { Barrier::Linear } else { Barrier::Dissemination })
}

/// On a crowded host (see `CROWDED`), up to this many ranks, the plans of
/// short collectives post every transfer in one step (`flat`).
const FLAT_MOST: usize = 8;

/// Whether short collectives among `n` ranks post every transfer at once
/// (linear barrier, allgather and alltoall, allreduce by allgather): on a
/// crowded host, where a rank waiting for a partner waits for the
/// scheduler to run it, a dissemination, Bruck or recursive doubling
/// waits so once per round, and posting all at once lets whichever rank
/// runs move everything it can (more ranks post more messages: up to
/// `FLAT_MOST`). These are the plans of nonblocking and persistent
/// collectives (blocking ones go through the mailboxes there). Measured,
/// 4 ranks on 2 cores, 8-byte calls waited at once, best of 5 runs of
/// 20000 (3 alternations): Ialltoall 6.5-7.3 us against 4.3-4.7 (Open
/// MPI 4.4-4.8), Iallgather 7.1-8.1 against 4.3-7.9 (5.2-5.8). A
/// broadcast's root sending to every rank at once gained nothing over
/// the binomial tree (8 B 1.55-1.75 against 1.59-1.60, 4 KiB 2.8-2.9
/// against 2.9-3.4).
pub fn flat(n: usize) -> bool {
    crowded() && n > 2 && n <= FLAT_MOST
}

/// Whether a short Scan or Exscan among `n` ranks goes along the ranks
/// (`coll::shm::reduce::scan_chain`) rather than each rank reading every
/// earlier rank's part: as OXMPI_SHM_SCAN says, or (auto) on a crowded
/// host (alike on every rank), among more than two (between two they are
/// the same). There a rank waits for the scheduler anyway, and a loop of
/// them runs a rank ahead by up to a mailbox's slots: n - 1 reads where
/// there were n(n-1)/2. Measured, 4
/// ranks on 2 cores, Scans of 1 and 128 doubles in loops of 50000, best
/// of 3, 5 alternated runs: 0.31-0.44 and 0.57-1.11 us -> 0.26-0.34 and
/// 0.50-0.83 (Open MPI 0.27-0.53 and 3.2-4.6); with 20 us of work
/// between calls, alike (41-43 us a call), and at 8 ranks 85-99 -> 83-87.
/// On a host with a core per rank a chain of n - 1 steps, each a line
/// passed between cores, should be slower than reads that go at once
/// (not measured: the test machine has 2 cores).
pub fn scan_chain(n: usize) -> bool {
    n > 2 && get().shm_scan.unwrap_or_else(crowded)
}

/// On a crowded host the linear allreduce beats Rabenseifner up to about
/// this many bytes (measured at 4 ranks on 2 cores: 0.7x at 64 KiB, even at
/// 256 KiB, 1.5x slower at 512 KiB, where every rank reading three pieces
/// at once strains the caches).
const CROWDED_LINEAR_MAX: usize = 256 << 10;

/// Allreduce of `count` items, `bytes` in all, among `n` ranks. Two ranks
/// take recursive doubling at every size: Rabenseifner's two exchanges of
/// half the vector cost more than the one exchange of all of it saves in
/// combining (measured on 2 cores, doubles, recursive doubling against
/// Rabenseifner, Open MPI: 64 KiB 8.5 against 13.1 (18.0) us, 128 KiB
/// 14.2 against 21.5 (25.7), 1 MiB 107 against 116 (138); even at 16 KiB).
pub fn allreduce(n: usize, count: usize, bytes: usize) -> Allreduce {
    let t = get();
    let pof2 = if n == 0 { 1 } else { 1 << n.ilog2() };
    let a = t.allreduce.unwrap_or(if flat(n) && bytes < t.allreduce_long {
        Allreduce::Allgather
    } else if n > 2 && bytes >= t.allreduce_long && count >= pof2 {
        if crowded() && bytes <= CROWDED_LINEAR_MAX {
            Allreduce::Linear
        } else {
            Allreduce::Rabenseifner
        }
    } else {
        Allreduce::RecursiveDoubling
    });
    if a == Allreduce::Linear && !n.is_power_of_two() {
        Allreduce::Rabenseifner
    } else {
        a
    }
}

/// Allgather of `total` bytes in all among `n` ranks.
pub fn allgather(n: usize, total: usize) -> Allgather {
    let t = get();
    let a = t.allgather.unwrap_or(if total < t.allgather_short && flat(n) {
        Allgather::Linear
    } else if total < t.allgather_short {
        Allgather::RecursiveDoubling
    } else if n > 2 && crowded() {
        Allgather::Linear
    } else {
        Allgather::Ring
    });
    if a == Allgather::RecursiveDoubling && !n.is_power_of_two() {
        Allgather::Ring
    } else {
        a
    }
}

/// Whether Alltoall's algorithm is left to oxmpi (OXMPI_COLL_ALLTOALL
/// unset).
pub fn alltoall_auto() -> bool {
    get().alltoall.is_none()
}

/// Alltoall of `block` bytes per pair among `n` ranks (None: the blocks
/// differ, as in Alltoallv).
pub fn alltoall(n: usize, block: Option<usize>) -> Alltoall {
    let t = get();
    let spread = if n > 2 && crowded() { Alltoall::Linear } else { Alltoall::Pairwise };
    match (t.alltoall, block) {
        (Some(Alltoall::Bruck), None) | (None, None) => spread,
        (Some(a), _) => a,
        (None, Some(b)) if n > 2 && b <= t.alltoall_short && !flat(n) => Alltoall::Bruck,
        (None, Some(_)) => spread,
    }
}

/// The whole job runs on one host with more ranks than cores: a rank
/// waiting for a partner's turn waits for the scheduler, so the auto
/// choices post every transfer at once (every rank sees the same host,
/// so all choose alike).
static CROWDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The shortest message point-to-point moves by one cross-memory copy
/// on this host (the engine's `single_copy_min`, cut on a crowded host).
static SINGLE_COPY_FROM: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(usize::MAX);

/// Called at init: whether the job is crowded (see `CROWDED`), and from
/// how many bytes point-to-point messages go by single copy.
pub fn set_crowded(yes: bool, single_copy_from: usize) {
    CROWDED.store(yes, std::sync::atomic::Ordering::Relaxed);
    SINGLE_COPY_FROM.store(single_copy_from, std::sync::atomic::Ordering::Relaxed);
}

fn crowded() -> bool {
    CROWDED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether collectives check that the ranks agree (OXMPI_CHECK_COLLECTIVES).
pub fn check_collectives() -> bool {
    get().check
}

/// The largest message short blocking collectives send through the
/// shared-memory mailboxes (OXMPI_SHM_COLL_MAX; 0: never).
pub fn shm_max() -> usize {
    get().shm_max
}

/// The largest Bcast, Gather, Scatter, Allgather(v), Alltoall(v),
/// Allreduce or Reduce (bytes in all) blocking collectives send through
/// the long mailboxes in pieces (OXMPI_SHM_COLL_LONG_MAX; 0: never). It matters on a crowded host
/// only (elsewhere pieces stop at OXMPI_SINGLE_COPY_MIN), where pieces
/// beat the point-to-point algorithms at every size measured: 4 ranks on
/// 2 cores, best of 5, Bcast of 32 MiB 6.5 ms against 11.2, Allgather of
/// 8 and 32 MiB blocks 9.3 and 35 against 12.8 and 48, Allreduce of
/// 32 MiB 16 against 36, Alltoall of 8 and 16 MiB blocks 11.4 and 23.8
/// against 13.5 and 26.7 (Open MPI 18.9, 14.3 and 52, 57, 13.0 and 26.8);
/// so the default (1 GiB) only keeps a bound. Those were calls back to
/// back; an alltoall's long blocks, whose ranks arrive apart in an
/// application, and a scatter's, all copied in by its root, no longer go
/// in pieces there (`in_pieces`).
pub fn shm_long_max() -> usize {
    get().shm_long_max
}

/// The collectives with a form in pieces through the long mailboxes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pieces {
    Bcast,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    Allreduce,
    Reduce,
    ReduceScatter,
    Scan,
}

/// Whether a blocking `op` moving `bytes` in all among `n` ranks may go
/// through the long mailboxes in pieces: two copies through shared
/// memory, one in and one out, against the single cross-memory copy of
/// the algorithms over point-to-point. Never when an OXMPI_COLL_*
/// variable forces the operation's algorithm, nor for an allreduce or a
/// reduce of 2 ranks or of items larger than a piece. On a crowded host
/// (more ranks than cores), where ranks sharing a core pass the pieces
/// through its caches, at any size (an alltoall or a scatter only while
/// its blocks are no longer than point-to-point's single-copy threshold,
/// see below); otherwise while the longest message over point-to-point would
/// be below OXMPI_SINGLE_COPY_MIN (pipelined too; a third of it for an
/// alltoall's or allgather's blocks, see below). Measured on the
/// 2-core test machine, whose two cores sometimes share a cache and
/// sometimes do not: at 4 ranks, 1 MiB blocks, pieces against single
/// copies, allgather 478-670 against 838-988 us with a shared cache and
/// 818-957 against 1165-1239 us without; alltoall 935-1060 against
/// 1266-1295 and 1514-1765 against 960-970, but in the three sessions
/// since, pieces won every alternation (the last: best of 40 calls
/// 919-1195 against 1236-1607, Open MPI 1185-1458); at 2 ranks, alltoall
/// of 1 MiB blocks 118-120 against 131 with a shared cache and 323
/// against 135 without; allreduce of 1 MiB at 2
/// ranks 161 against Rabenseifner's 121 us (at 3 ranks 337 against 293,
/// but 64 KiB 24 against 49); reduce at 3 and 4 ranks, 64 KiB and 1 MiB,
/// 0.5-0.9 of the binomial tree's time (at 2 ranks even). A scan or
/// exscan goes in pieces only up to two pieces in all (see below).
pub fn in_pieces(op: Pieces, n: usize, bytes: usize, item: usize) -> bool {
    let t = get();
    let auto = match op {
        Pieces::Bcast => t.bcast.is_none(),
        Pieces::Gather | Pieces::Scatter => true,
        Pieces::Allgather => t.allgather.is_none(),
        Pieces::Alltoall => t.alltoall.is_none(),
        // a reduce's and a reduce-scatter's algorithms follow
        // OXMPI_COLL_ALLREDUCE's forcing
        Pieces::Allreduce | Pieces::Reduce | Pieces::ReduceScatter => {
            t.allreduce.is_none() && n > 2 && item <= crate::transport::shm::Boxes::Long.bytes()
        }
        // measured at 2 and 4 ranks on 2 cores: 64 KiB 0.25-0.35 of the
        // point-to-point chain's time, but 128 KiB to 1 MiB 0.8-1.2 of it
        // (the chain's one cross-memory copy catches up)
        Pieces::Scan => {
            item <= crate::transport::shm::Boxes::Long.bytes()
                && bytes <= 2 * crate::transport::shm::Boxes::Long.bytes()
        }
    };
    let crowd = crowded()
        && match op {
            Pieces::Scan => false,
            // An alltoall's pieces need all its ranks running at once,
            // each rank's copies in and out in lockstep with the others';
            // a cross-memory read needs only the reader. Where ranks
            // arrive apart (an application computes between calls), blocks
            // point-to-point moves by single copy go faster so. Measured,
            // 4 ranks on 2 cores, alltoall loops with 1-3 ms of work
            // between calls, skewed by rank (whole loop, pieces against
            // point-to-point): blocks of 64 and 128 KiB 1045 and 1058
            // against 1143 and 1163 ms, but 256 KiB 633 against 596,
            // 1 MiB 551-586 against 532-557 and 8 MiB 1143-1935 against
            // 1047-1107 (Open MPI 1034-1099); NAS FT class A (8 MiB
            // blocks) 1.99-2.06 s against 1.94-1.98, its time in Alltoall
            // 210-265 ms a rank against 98-257 (Open MPI 1.92-1.99 s).
            // Back to back, with no work between, 1 MiB blocks took
            // 797-858 us against 858-888.
            //
            // A scatter's pieces all go through its root, which copies
            // every block in while the others copy theirs out; by single
            // copy the others read their blocks at once and the root
            // copies nothing. Measured, 4 ranks on 2 cores, calls back to
            // back, best of 6 alternations (pieces against point-to-point,
            // Open MPI): blocks of 128 KiB 23 against 35 (32) us, 256 KiB
            // 75 against 53 (57), 1 MiB 302 against 199 (277). A gather's
            // root copies every block out either way: pieces, whose
            // blocks come in from all ranks at once, kept up (128 KiB 17
            // against 32, 256 KiB 35 against 66, 1 MiB 168 against 162).
            Pieces::Alltoall | Pieces::Scatter => {
                bytes / n.max(1) <= SINGLE_COPY_FROM.load(std::sync::atomic::Ordering::Relaxed)
            }
            _ => true,
        };
    // elsewhere pieces go where the point-to-point algorithms' longest
    // message would be pipelined through the shared slots (one block of
    // an allgather, alltoall, gather, scatter or reduce-scatter, the
    // whole of the others), two copies either way, the writer's and the
    // reader's at once...
    let message = match op {
        Pieces::Allgather | Pieces::Alltoall | Pieces::Gather | Pieces::Scatter | Pieces::ReduceScatter => {
            bytes / n.max(1)
        }
        _ => bytes,
    };
    // ...but where every rank sends and receives alike, each copies both
    // in and out, and single copies (point-to-point reads an exchange's
    // messages from a quarter of OXMPI_SINGLE_COPY_MIN) win sooner.
    // Measured at 2 ranks on 2 cores, best of 6 alternations, pieces
    // against single copies (Open MPI): Allgather of 32 KiB blocks 5.2
    // against 5.5 us (5.5), 48 KiB 7.5 against 6.9, 64 KiB 9.4 against
    // 8.2 (8.3); Alltoall 32 KiB 5.0 against 5.5 (5.4), 48 KiB 7.2
    // against 6.9, 64 KiB 8.7 against 8.3 (8.3). Pieces also suffer most
    // from this machine's slow spells: 64 KiB Allgather 20-31 us against
    // 8.8-9.0 (Open MPI 10.2-10.4). Measured again on 2026-11-28 (pieces
    // forced by OXMPI_SINGLE_COPY_MIN=1G): Alltoall of 64 KiB and 1 MiB
    // blocks 5.8-6.2 and 80-86 us in pieces against 8.2 and 104 read, but
    // in a slow spell (runs in a row) 32-39 and 355-535 against 8.8 and
    // 106: neither wins always, so from a third of OXMPI_SINGLE_COPY_MIN
    // two ranks' blocks go through the mailboxes by either way, chosen
    // per call (`either_way`).
    // A bcast's, gather's or scatter's one message between two ranks goes
    // from a blocking send, which its receiver has the sender help copy
    // (by cross-memory copies, each side half of it) from
    // `p2p::SPLIT_MIN` on: both cores copy once, where pieces have one copy
    // in and one out, the reader's pulling every line across from the
    // writer's core. Measured, 2 ranks on 2 cores, calls in a loop,
    // medians of the best of 3 alternations, split against pieces (Open
    // MPI): Bcast of 32 KiB 3.65 against 3.78 us (4.52), 64 KiB 4.98
    // against 7.29 (6.60), 96 KiB 5.82 against 10.69 (8.79); Gather and
    // Scatter of 32 KiB 4.32 and 4.49 against 3.68 and 4.28 (5.11, 5.05),
    // 48 KiB 5.21 and 5.41 against 5.56 and 6.49, bests 5.18 and 5.31
    // against 4.70 and 4.52 (6.58, 6.52), 64 KiB 5.91 and 6.12 against
    // 6.69 and 8.62 (7.93, 7.95), 96 KiB 7.62 and 7.79 against 9.82 and
    // 12.40 (11.07, 11.12). So a bcast splits from SPLIT_MIN, a gather's
    // or scatter's block from twice that.
    let split = n == 2 && SINGLE_COPY_FROM.load(std::sync::atomic::Ordering::Relaxed) != usize::MAX;
    let most = match op {
        Pieces::Allgather | Pieces::Alltoall => t.single_copy_min / 3,
        Pieces::Bcast if split => crate::p2p::SPLIT_MIN.min(t.single_copy_min),
        Pieces::Gather | Pieces::Scatter if split => (2 * crate::p2p::SPLIT_MIN).min(t.single_copy_min),
        _ => t.single_copy_min,
    };
    auto && (crowd || message < most)
}

/// Whether a blocking Alltoall's or Allgather's (`op`) blocks in pieces
/// among `n` ranks go the way every member takes alike per call
/// (`p2p::agreed`): among more than two ranks on a crowded host; with the
/// way OXMPI_CROWDED_BLOCKS forces, if any (a setting all ranks share).
pub fn agreed_blocks(op: Pieces, n: usize) -> Option<Option<Way>> {
    let takes = matches!(op, Pieces::Alltoall | Pieces::Allgather);
    (takes && n > 2 && crowded()).then(|| get().crowded_blocks)
}

/// Whether a blocking Allgather's or Alltoall's blocks between two ranks
/// (`n`, moving `bytes` in all) on a host with a core for each go through
/// the long mailbox though they are too long for `in_pieces`: there the
/// two send their blocks in pieces or have them read straight out of
/// their buffers, whichever their calls found faster lately
/// (`p2p::mailbox::Ways`), where the point-to-point algorithm always
/// reads. Not where an OXMPI_COLL_* variable forces the algorithm, nor
/// without cross-memory copies (`OXMPI_SINGLE_COPY=0`).
pub fn either_way(op: Pieces, n: usize, bytes: usize) -> bool {
    let t = get();
    let auto = match op {
        Pieces::Allgather => t.allgather.is_none(),
        Pieces::Alltoall => t.alltoall.is_none(),
        _ => false,
    };
    let reads = SINGLE_COPY_FROM.load(std::sync::atomic::Ordering::Relaxed) != usize::MAX;
    auto && n == 2 && reads && !crowded() && bytes / 2 >= t.single_copy_min / 3
}

/// The settings every rank must share, as one word for the PMI
/// key-value space (compared across the job at MPI_Init): a hash of their
/// description (`DefaultHasher::new` hashes alike in every process).
pub fn fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}", get()).hash(&mut h);
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests that set the crowding, which the choices read
    /// (tests run at once).
    static CROWDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_crowded_alltoall_or_scatter_goes_in_pieces_only_up_to_the_single_copy_threshold() {
        let _held = CROWDING.lock().unwrap_or_else(|p| p.into_inner());
        // the defaults: no algorithm forced
        let below = get().single_copy_min;
        set_crowded(true, 128 << 10);
        assert!(in_pieces(Pieces::Alltoall, 4, 4 * (128 << 10), 1), "128 KiB blocks");
        assert!(!in_pieces(Pieces::Alltoall, 4, 4 * (128 << 10) + 4, 1), "a byte more a block");
        assert!(!in_pieces(Pieces::Alltoall, 4, 4 * (8 << 20), 1), "NAS FT's 8 MiB blocks");
        assert!(in_pieces(Pieces::Scatter, 4, 4 * (128 << 10), 1), "a scatter's 128 KiB blocks");
        assert!(!in_pieces(Pieces::Scatter, 4, 4 * (1 << 20), 1), "a scatter's 1 MiB blocks");
        assert!(in_pieces(Pieces::Gather, 4, 4 * (1 << 20), 1), "a gather's 1 MiB blocks");
        assert!(in_pieces(Pieces::Allgather, 4, 4 * (8 << 20), 1), "other operations at any size");
        set_crowded(true, usize::MAX);
        assert!(in_pieces(Pieces::Alltoall, 4, 4 * (8 << 20), 1), "no single copy: pieces at any size");
        set_crowded(false, below);
        let third = below / 3;
        assert!(
            in_pieces(Pieces::Alltoall, 2, 2 * (third - 1), 1),
            "uncrowded: blocks below a third of OXMPI_SINGLE_COPY_MIN"
        );
        assert!(!in_pieces(Pieces::Alltoall, 2, 2 * third, 1), "uncrowded: blocks from a third of it");
        assert!(either_way(Pieces::Alltoall, 2, 2 * third), "two ranks: from there they choose");
        assert!(either_way(Pieces::Allgather, 2, 2 * (8 << 20)), "an allgather's too, at any size");
        assert!(!either_way(Pieces::Alltoall, 2, 2 * (third - 1)), "below: pieces");
        assert!(!either_way(Pieces::Alltoall, 3, 3 * third), "two ranks only");
        assert!(!either_way(Pieces::Bcast, 2, 2 * third), "an Allgather's or Alltoall's only");
        assert!(!in_pieces(Pieces::Allgather, 4, 4 * third, 1), "an allgather's too");
        assert!(in_pieces(Pieces::Gather, 4, 4 * below - 4, 1), "a gather's blocks below it");
        assert!(!in_pieces(Pieces::Gather, 4, 4 * below, 1), "a gather's blocks from it");
        assert!(in_pieces(Pieces::Bcast, 4, below - 1, 1), "a bcast's one message below it");
        assert!(!in_pieces(Pieces::Bcast, 4, below, 1), "a bcast's one message from it");
        // two ranks: the one message is split from SPLIT_MIN (a gather's
        // or scatter's block from twice that)
        let split = crate::p2p::SPLIT_MIN;
        assert!(in_pieces(Pieces::Bcast, 2, split - 1, 1), "two ranks: a bcast below SPLIT_MIN");
        assert!(!in_pieces(Pieces::Bcast, 2, split, 1), "two ranks: a bcast from SPLIT_MIN");
        assert!(
            in_pieces(Pieces::Scatter, 2, 2 * (2 * split - 1), 1),
            "two ranks: a scatter's blocks below 2 SPLIT_MIN"
        );
        assert!(!in_pieces(Pieces::Gather, 2, 2 * (2 * split), 1), "two ranks: a gather's blocks from 2 SPLIT_MIN");
        set_crowded(false, usize::MAX);
        assert!(in_pieces(Pieces::Bcast, 2, below - 1, 1), "no single copy: a bcast's one message below it");
        set_crowded(false, usize::MAX);
    }

    #[test]
    fn a_crowded_host_posts_short_collectives_at_once_from_3_to_8_ranks() {
        let _held = CROWDING.lock().unwrap_or_else(|p| p.into_inner());
        // the defaults: no algorithm forced
        set_crowded(true, 128 << 10);
        for n in [3, 4, 8] {
            assert_eq!(barrier(n), Barrier::Linear, "{n} ranks");
            assert_eq!(allreduce(n, 1, 8), Allreduce::Allgather, "{n} ranks");
            assert_eq!(allgather(n, 8 * n), Allgather::Linear, "{n} ranks");
            assert_eq!(alltoall(n, Some(8)), Alltoall::Linear, "{n} ranks");
        }
        for n in [2, 9] {
            assert_eq!(barrier(n), Barrier::Dissemination, "{n} ranks");
            assert_eq!(allreduce(n, 1, 8), Allreduce::RecursiveDoubling, "{n} ranks");
        }
        assert_eq!(alltoall(9, Some(8)), Alltoall::Bruck);
        assert_eq!(allreduce(4, 2048, 16 << 10), Allreduce::Linear, "from OXMPI_ALLREDUCE_LONG");
        set_crowded(false, usize::MAX);
        assert_eq!(barrier(4), Barrier::Dissemination);
        assert_eq!(allreduce(4, 1, 8), Allreduce::RecursiveDoubling);
        assert_eq!(allgather(4, 32), Allgather::RecursiveDoubling);
        assert_eq!(alltoall(4, Some(8)), Alltoall::Bruck);
    }

    #[test]
    fn two_ranks_allreduce_by_recursive_doubling_at_every_size() {
        // the defaults: no algorithm forced
        for bytes in [8, 16 << 10, 64 << 10, 1 << 20, 64 << 20] {
            assert_eq!(allreduce(2, bytes / 8, bytes), Allreduce::RecursiveDoubling, "{bytes} bytes");
        }
        // more ranks: Rabenseifner for long vectors (crowded or not, past
        // the crowded host's linear range), recursive doubling for short
        assert_eq!(allreduce(4, 1 << 16, 512 << 10), Allreduce::Rabenseifner);
        assert_eq!(allreduce(3, 1 << 16, 512 << 10), Allreduce::Rabenseifner);
    }
}
