//! The process's MPI state: init and finalize, identity, the job's
//! key-value store, and the one lock that serialises entry into the core.

pub mod affinity;
pub mod backoff;
pub mod helper;
mod lock;
mod output;
pub mod pmi;
mod slurm;
pub mod tunables;
mod wireup;

use crate::comm::Comm;
use crate::err;
use crate::error::MpiResult;
use crate::p2p::{Config, Engine};
use crate::transport::shm::Geometry;
pub use lock::{lock, Guard, Reentered};
use pmi::Pmi;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub const THREAD_SINGLE: i32 = 0;
pub const THREAD_FUNNELED: i32 = 1;
pub const THREAD_SERIALIZED: i32 = 2;

/// The highest thread level oxmpi provides so far: one lock serialises
/// every call, and a thread blocked in a call holds it.
pub const THREAD_MAX: i32 = THREAD_SERIALIZED;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Phase {
    Before = 0,
    Running = 1,
    Finalized = 2,
}

static PHASE: AtomicU8 = AtomicU8::new(Phase::Before as u8);
pub struct State {
    pub engine: Engine,
    pub pmi: Pmi,
    /// Communicators by handle index: 0 is MPI_COMM_WORLD, 1 MPI_COMM_SELF.
    pub comms: Vec<Option<Comm>>,
    /// Groups by handle index (lists of world ranks).
    pub groups: Vec<Option<std::sync::Arc<[usize]>>>,
    /// Shared with agreements in flight (MPI_Comm_idup's schedule).
    pub cids: std::sync::Arc<Mutex<crate::comm::group::ContextIds>>,
    pub thread_level: i32,
    pub main_thread: std::thread::ThreadId,
    pub hostname: String,
    /// The lowest world rank on this host (MPI_COMM_TYPE_SHARED's color).
    pub host_color: usize,
    pub start: Instant,
    /// Nonblocking collectives kept to run again (`abi::coll::Kept`).
    pub kept_colls: Vec<crate::abi::coll::Kept>,
}

impl State {
    pub fn cids(&self) -> std::sync::MutexGuard<'_, crate::comm::group::ContextIds> {
        self.cids.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn world(&self) -> &Comm {
        self.comms[0].as_ref().expect("MPI_COMM_WORLD is never freed")
    }
}

pub fn phase() -> Phase {
    match PHASE.load(Ordering::Acquire) {
        0 => Phase::Before,
        1 => Phase::Running,
        _ => Phase::Finalized,
    }
}

/// This process's rank as the launcher gave it (PMI_RANK), for messages
/// written where the state cannot be had; -1 when unknown.
pub fn launcher_rank() -> i64 {
    std::env::var("PMI_RANK").ok().and_then(|r| r.parse().ok()).unwrap_or(-1)
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes.
    unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// OXMPI_LONG_EAGER_LIMIT: a size, or `auto` (what the comment at its
/// use in `init` says, by whether the host is `crowded`); anything else
/// is reported and taken as `auto`. With it, the calm limit
/// (`p2p::Config::calm_eager_limit`): `auto`'s on a host with a core for
/// each rank, or the size given.
fn long_eager_limits(value: &str, crowded: bool) -> (usize, usize) {
    let auto = |crowded: bool| if crowded { 64 << 10 } else { crate::p2p::SPLIT_MIN - 1 };
    match value.trim() {
        "auto" => (auto(crowded), auto(false)),
        v => match tunables::parse_size(v) {
            Some(size) => (size, size),
            None => {
                report(&format!("oxmpi: OXMPI_LONG_EAGER_LIMIT={v} is neither a size nor auto; using auto\n"));
                (auto(crowded), auto(false))
            }
        },
    }
}

/// MPI_Init_thread: join the job. Returns the provided thread level.
pub fn init(required: i32) -> MpiResult<i32> {
    if phase() != Phase::Before {
        return err!(Other, "MPI is already initialized (MPI_Init may be called once per process)");
    }
    let start = Instant::now();
    let mut pmi = Pmi::connect()?;
    let (rank, size) = (pmi.rank, pmi.size);
    if pmi.launched() {
        output::line_buffer_stdout();
    }
    // Let peers read our memory for single-copy transfers even where Yama
    // restricts ptrace to descendants.
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
    crate::coll::tuning::init()?;
    let eager = tunables::size("OXMPI_EAGER_LIMIT");
    let slots = match tunables::value("OXMPI_SLOTS").trim() {
        "auto" => None,
        v => match tunables::parse_size(v) {
            Some(n) if (2..=1024).contains(&n) && n.is_power_of_two() => Some(n),
            _ => return err!(Arg, "OXMPI_SLOTS={v} must be auto or a power of two from 2 to 1024"),
        },
    };
    let payload = eager.clamp(1024, 64 << 20).div_ceil(64) * 64;
    let geometry = |ranks, crowded| Geometry {
        nslots: slots.unwrap_or_else(|| crate::transport::shm::auto_slots(ranks, crowded, payload)),
        payload,
    };
    // ranks that chose collective algorithms differently would wait for
    // each other forever: refuse to start instead
    let coll = wireup::Alike {
        key: "coll-tuning",
        value: crate::coll::tuning::fingerprint(),
        differs: |_, _| {
            "the collective settings (OXMPI_COLL_*, OXMPI_*_LONG, OXMPI_*_SHORT, OXMPI_SHM_COLL_MAX, OXMPI_CHECK_COLLECTIVES) differ from rank 0's; set them alike for the whole job (in mpiexec's environment)".into()
        },
    };
    let w = wireup::wire_up(&mut pmi, geometry, vec![coll])?;
    let on_host = w.host_of.iter().filter(|&&h| h == w.host_of[rank]).count();
    let cores = w.cores;
    // A pipelined push stalls whenever one of its two ranks is descheduled:
    // with more ranks than cores, only what fits in a ring at once
    // (measured at 4 ranks on 2 cores: a 256 KiB push took 10x the
    // cross-memory read; 64 KiB ones beat it by a fifth).
    let mut single_copy_min = tunables::size("OXMPI_SINGLE_COPY_MIN");
    if on_host > cores {
        single_copy_min = single_copy_min.min(w.seg.slots() * payload);
    }
    // Messages of a few slots go eagerly, in slots in a row
    // (`Ring::max_frame`): below the size where a rendezvous has both
    // sides copy at once (`p2p::SPLIT_MIN`), since before that its
    // handshake is all it adds; and on a crowded host up to 64 KiB, since
    // a rendezvous waits for its receiver to run, which there it often is
    // not. Measured, 2 ranks, best of 5 x 2000, two runs (Open MPI): an
    // exchange (Sendrecv) of 20000 bytes 3.00-3.24 us against 3.98-4.08
    // by rendezvous (3.32-3.95), 28000 bytes 4.19-4.23 against 5.07-5.14
    // (3.95-4.31); ping-pong alike (28000 bytes: 4.17-4.24 against
    // 3.97-4.18); 32 KiB split 3.41 against 4.85-4.99 eagerly. 4 ranks
    // on 2 cores, CG's pattern without its compute (3 Sendrecv, 2
    // Allreduce of 8 B), 400 rounds, best of 3 runs: 28 KB messages
    // 9.9-10.7 ms against 17.3-19.0 by rendezvous (Open MPI 23.7-27.7);
    // 56 KB 13.7-17.8 against 23.9-27.2; while at 2 ranks 56 KB went in
    // 3.0-3.8 ms split against 3.8-12 eagerly in one slot.
    // (the engine cuts it to what a ring's frame holds)
    // (while the ranks that want a core have one each, the receiver runs:
    // the calm limit)
    let (long_eager, calm_long_eager) = long_eager_limits(&tunables::value("OXMPI_LONG_EAGER_LIMIT"), on_host > cores);
    let cfg = Config {
        eager_limit: eager.max(long_eager),
        // (`p2p::Alone::Fan`)
        fan_eager_limit: if on_host > cores { eager } else { eager.max(long_eager) },
        calm_eager_limit: eager.max(calm_long_eager),
        tcp_eager_limit: tunables::size("OXMPI_TCP_EAGER_LIMIT"),
        unexpected_budget: tunables::size("OXMPI_UNEXPECTED_BYTES"),
        single_copy: tunables::flag("OXMPI_SINGLE_COPY"),
        single_copy_min,
        check_types: tunables::flag("OXMPI_CHECK_TYPES"),
    };
    let set_up = tunables::flag("OXMPI_DEBUG").then(|| {
        let tcp = w.tcp.as_ref().map_or("no TCP peers".to_string(), |t| format!("TCP on {}", t.address()));
        format!(
            "oxmpi: rank {rank} of {size}: segment {} ({} ranks), {on_host} ranks on {cores} cores of this host{}, {tcp}",
            w.shm_name,
            w.seg.nranks,
            w.bound.map_or(String::new(), |cpu| format!(" (bound to CPU {cpu})")),
        )
    });
    let single_copy_from = if cfg.single_copy { single_copy_min } else { usize::MAX };
    let ring_slots = w.seg.slots();
    let engine = Engine::new(rank, w.seg, w.route, w.tcp, w.pids, cfg);
    if let Some(set_up) = set_up {
        report(&format!(
            "{set_up}, eager limit {}, {} ring slots a pair, single copy {} from {single_copy_min} bytes\n",
            engine.eager_limit,
            ring_slots,
            tunables::flag("OXMPI_SINGLE_COPY")
        ));
    }
    backoff::set_host(on_host, cores);
    crate::coll::tuning::set_crowded(on_host == size && on_host > cores, single_copy_from);
    let provided = required.clamp(THREAD_SINGLE, THREAD_MAX);
    let (bell, tcp): (*const _, _) = (engine.doorbell(), engine.has_tcp_peers());
    lock::own();
    let Ok(mut guard) = lock() else {
        return err!(Other, "MPI_Init called from a callback inside an MPI call");
    };
    *guard = Some(State {
        engine,
        pmi,
        comms: vec![Some(Comm::world(rank, size)), Some(Comm::self_(rank))],
        groups: Vec::new(),
        cids: std::sync::Arc::new(Mutex::new(crate::comm::group::ContextIds::new(
            crate::p2p::arrival::SPARE_LINE_SETS,
        ))),
        thread_level: provided,
        main_thread: std::thread::current().id(),
        hostname: hostname(),
        host_color: w.host_of[rank],
        start,
        kept_colls: Vec::new(),
    });
    PHASE.store(Phase::Running as u8, Ordering::Release);
    drop(guard);
    // SAFETY: the handler only stores to an atomic.
    unsafe { libc::signal(libc::SIGUSR2, on_dump_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    if tunables::flag("OXMPI_ASYNC_PROGRESS") {
        if let Err(e) = helper::start(bell, tcp) {
            return err!(Other, "OXMPI_ASYNC_PROGRESS=1, but the progress thread could not start: {e}");
        }
    }
    Ok(provided)
}

/// MPI_Finalize: wait for every rank, then leave the job.
pub fn finalize() -> MpiResult<()> {
    let Ok(mut guard) = lock() else {
        return err!(Other, "MPI_Finalize called from a callback inside an MPI call");
    };
    let Some(st) = guard.as_mut() else {
        return err!(Other, "MPI_Finalize called before MPI_Init or twice");
    };
    helper::stop(st.engine.doorbell());
    // (a rank of this host still waiting for this one in a collective
    // fails now, rather than wait for ever)
    st.engine.enter_finalize();
    let world = st.world().clone();
    crate::coll::barrier(&mut st.engine, &world)?;
    st.engine.goodbye();
    st.pmi.barrier()?;
    st.pmi.finalize();
    PHASE.store(Phase::Finalized as u8, Ordering::Release);
    *guard = None;
    Ok(())
}

/// End the whole job now: write out the program's buffered output, tell
/// the launcher, then exit with `code`.
pub fn abort_job(code: i32, why: &str) -> ! {
    // (before the launcher hears: it then kills the job's ranks, this one too)
    output::flush_all();
    match lock::try_lock() {
        Some(mut g) => {
            if let Some(st) = g.as_mut() {
                st.pmi.abort(code, why);
            }
        }
        None => pmi::abort_unlocked(code, why),
    }
    // SAFETY: _exit ends the process without running atexit handlers,
    // which could block on state this failing process holds.
    unsafe { libc::_exit(if code == 0 { 1 } else { code }) }
}

static DUMP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_dump_signal(_: libc::c_int) {
    DUMP.store(true, Ordering::Relaxed);
}

/// True once after SIGUSR2 arrived: a waiting rank then prints its queues
/// (`mpiexec` forwards the signal to every rank).
pub fn dump_requested() -> bool {
    DUMP.load(Ordering::Relaxed) && DUMP.swap(false, Ordering::Relaxed)
}

/// Write to stderr in one write, so lines of ranks sharing the terminal
/// never interleave.
pub fn report(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::long_eager_limits;

    #[test]
    fn the_long_eager_limit_is_a_size_or_auto() {
        let calm = 32 * 1024 - 1;
        assert_eq!(long_eager_limits("auto", false), (calm, calm));
        assert_eq!(long_eager_limits(" auto ", true), (64 * 1024, calm));
        assert_eq!(long_eager_limits("40k", false), (40 * 1024, 40 * 1024));
        assert_eq!(long_eager_limits("40k", true), (40 * 1024, 40 * 1024), "a size given holds calm or not");
        assert_eq!(long_eager_limits("0", true), (0, 0));
        assert_eq!(long_eager_limits("lots", true), (64 * 1024, calm), "not a size: auto, calm limit too");
    }
}
