//! Joining the transports at MPI_Init (DESIGN.md §5). Through the PMI
//! store each rank tells where it runs; ranks of one host (same kernel
//! boot and network namespace) share a segment the lowest of them
//! creates; ranks on other hosts are reached over TCP, at the address
//! each publishes. `OXMPI_TRANSPORT=tcp` puts every rank on a host of
//! its own as far as transports go; `shm` refuses a job that spans hosts.

use super::affinity;
use super::pmi::Pmi;
use super::tunables;
use crate::err;
use crate::error::MpiResult;
use crate::p2p::Route;
use crate::transport::shm::{Geometry, Segment};
use crate::transport::tcp::{addr, Tcp, KEY_BYTES};

pub struct Wired {
    pub seg: Segment,
    pub route: Vec<Route>,
    pub tcp: Option<Tcp>,
    pub pids: Vec<i32>,
    /// Per world rank: the lowest world rank on its host (its
    /// MPI_COMM_TYPE_SHARED color).
    pub host_of: Vec<usize>,
    /// The segment's name (for OXMPI_DEBUG).
    pub shm_name: String,
    /// The cores this host's ranks may run on between them (the union of
    /// their CPU affinities, capped by a CPU quota): alike on every rank
    /// of the host, whatever each one's own binding.
    pub cores: usize,
    /// The CPU this rank was bound to (`OXMPI_BIND`), if any.
    pub bound: Option<usize>,
}

/// What tells hosts apart: two processes share memory and can read each
/// other's when they run on one kernel (boot id) in one network
/// namespace; `ip netns exec` makes separate hosts of one machine.
fn host_id() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let netns = std::fs::read_link("/proc/self/ns/net").map(|p| p.display().to_string()).unwrap_or_default();
    let id = format!("{}/{}/{}", super::hostname(), boot.trim(), netns);
    id.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect()
}

/// The CPUs this process may run on (its affinity mask), and how many
/// of them it may keep busy at once (fewer under a cgroup CPU quota).
fn cpu_card() -> (Vec<usize>, usize) {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    (affinity::mask().unwrap_or_else(|| (0..usable).collect()), usable)
}

/// "0-3,6/4": the CPUs as ranges, then how many are usable (no spaces:
/// a PMI-1 value ends at one).
fn write_card((cpus, usable): &(Vec<usize>, usize)) -> String {
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        ranges.push(if j == i { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    format!("{}/{usable}", ranges.join(","))
}

fn read_card(s: &str) -> Option<(Vec<usize>, usize)> {
    let (list, usable) = s.split_once('/')?;
    let mut cpus = Vec::new();
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<usize>().ok()?..=b.parse::<usize>().ok()?);
    }
    Some((cpus, usable.parse().ok()?))
}

/// The cores a host's ranks share, from each one's card: the union of
/// their CPUs, capped where a quota left a rank fewer usable CPUs than
/// its mask holds (all ranks of a host count alike, so collectives that
/// choose their algorithm by it choose alike).
fn host_cores(cards: &[(Vec<usize>, usize)]) -> usize {
    let mut all: Vec<usize> = cards.iter().flat_map(|(c, _)| c.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let quota = cards.iter().filter(|(c, u)| *u < c.len()).map(|&(_, u)| u).min();
    quota.map_or(all.len(), |q| q.min(all.len())).max(1)
}

/// Where ranks run (`OXMPI_BIND`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Bind {
    Spread,
    Auto,
    Core,
    None,
}

fn bind_mode() -> MpiResult<Bind> {
    match tunables::value("OXMPI_BIND").as_str() {
        "spread" => Ok(Bind::Spread),
        "auto" => Ok(Bind::Auto),
        "core" => Ok(Bind::Core),
        "none" => Ok(Bind::None),
        other => err!(Arg, "OXMPI_BIND={other} is not one of spread, auto, core, none"),
    }
}

/// The CPU the `me`-th of a host's `ranks` ranks is bound to, from their
/// CPU cards (this rank's first): the `me`-th CPU of their mask, round
/// robin; none where they are not to be bound (`OXMPI_BIND`) or were
/// bound already (masks that differ), or under a CPU quota (usable CPUs
/// fewer than the mask's: the quota, not the CPUs, is what is shared).
///
/// Left to itself, the kernel puts oversubscribed ranks that wait by
/// yielding three on one core and one on the other now and then, and
/// does not move them back for a while: measured, 4 ranks on 2 cores, a
/// barrier loop printing its ranks' CPUs every 10000 barriers, 12 of 48
/// prints (8 runs) showed 3 + 1 at 4.2-5.0 us a barrier against 2.2-2.3
/// for 2 + 2; bound (`auto`), every print 2.2-2.8. Bound, though, a
/// 1 MiB Scan's best of 14 interleaved rounds was 344 us against 267 (a
/// rank shares its core with the same one for good), so the default is
/// `spread`, which binds no one but has a rank on a crowded core move
/// itself (`Segment::spread`): the same loop, 8 runs each alternated,
/// 17 of 48 prints 3 + 1 (4.52 us a barrier) with `none`, none of 48
/// with `spread` (2.47 us a barrier, against 2.62 for `none`'s 2 + 2).
/// NAS CG at 4 ranks, whose ranks compute between waits, is left to the
/// kernel (see `FRESH_NS` in the doorbell module).
fn bind_to(bind: Bind, cards: &[(Vec<usize>, usize)], ranks: usize, me: usize) -> Option<usize> {
    let cpus = match bind {
        Bind::None | Bind::Spread => None,
        Bind::Core => shared_cpus(cards),
        Bind::Auto => crowded_cpus(cards, ranks),
    }?;
    Some(cpus[me % cpus.len()])
}

/// The CPUs a host's ranks share, from their CPU cards: none if their
/// masks differ (someone bound them already) or under a CPU quota
/// (usable CPUs fewer than the mask's: the quota, not the CPUs, is what
/// is shared).
fn shared_cpus(cards: &[(Vec<usize>, usize)]) -> Option<&[usize]> {
    let (cpus, usable) = cards.first()?;
    let alike = cards.iter().all(|(c, _)| c == cpus);
    (alike && *usable >= cpus.len() && !cpus.is_empty()).then_some(cpus.as_slice())
}

/// `shared_cpus`, if the host's `ranks` ranks outnumber them.
fn crowded_cpus(cards: &[(Vec<usize>, usize)], ranks: usize) -> Option<&[usize]> {
    shared_cpus(cards).filter(|c| ranks > c.len())
}

/// Removes a segment's name when dropped.
struct Unlink(String);

impl Drop for Unlink {
    fn drop(&mut self) {
        Segment::unlink(&self.0);
    }
}

/// Removes a segment's name should its creator die before every rank of
/// its host has mapped it (the name's window), under a launcher that
/// sweeps nothing: Hydra SIGKILLs the other ranks as soon as one dies, so
/// no rank is left to remove it. A process of its own, forked twice (so
/// that init reaps it) into a session of its own (so that a kill of the
/// job's process group spares it), holding no descriptor but the read end
/// of a pipe whose only writer is the creator, waits for that pipe's end
/// of file: the creator dropped the sentry (the window is over, the name
/// gone already) or died. Either way it removes the name and exits.
struct Sentry(libc::c_int);

impl Sentry {
    /// Post a sentry for `name` (None if the system refuses a pipe or a
    /// process: the name is then as safe as before).
    fn post(name: &str) -> Option<Sentry> {
        let path = std::ffi::CString::new(format!("/dev/shm{name}")).ok()?;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills `fds`; fork's children below make only
        // async-signal-safe calls (close, setsid, read, unlink, _exit),
        // as a child of a process that may have threads must.
        unsafe {
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return None;
            }
            let [read_end, write_end] = fds;
            match libc::fork() {
                -1 => {
                    libc::close(read_end);
                    libc::close(write_end);
                    return None;
                }
                0 => {
                    if libc::fork() == 0 {
                        libc::setsid();
                        // none of the launcher's pipes or sockets held open
                        let keep = read_end as libc::c_uint;
                        if keep > 0 {
                            libc::syscall(libc::SYS_close_range, 0, keep - 1, 0);
                        }
                        libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0);
                        // nobody writes: 0 at the end of file, or -1
                        let mut b = 0u8;
                        while libc::read(read_end, &mut b as *mut u8 as *mut libc::c_void, 1) < 0
                            && *libc::__errno_location() == libc::EINTR
                        {}
                        libc::unlink(path.as_ptr());
                    }
                    libc::_exit(0);
                }
                child => {
                    libc::close(read_end);
                    libc::waitpid(child, std::ptr::null_mut(), 0);
                }
            }
            Some(Sentry(write_end))
        }
    }
}

impl Drop for Sentry {
    fn drop(&mut self) {
        // SAFETY: our end of the sentry's pipe, closed once.
        unsafe { libc::close(self.0) };
    }
}

fn new_key() -> [u8; KEY_BYTES] {
    let mut k = [0u8; KEY_BYTES];
    // SAFETY: getrandom writes at most k.len() bytes into k.
    let n = unsafe { libc::getrandom(k.as_mut_ptr() as *mut libc::c_void, k.len(), 0) };
    assert_eq!(n, KEY_BYTES as isize, "getrandom failed");
    k
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; KEY_BYTES]> {
    let mut k = [0u8; KEY_BYTES];
    if s.len() != 2 * KEY_BYTES {
        return None;
    }
    for (i, b) in k.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(k)
}

/// A setting every rank of the job must share, or they would wait for
/// each other forever: rank 0 publishes its `value` under `key`, and
/// every other rank whose own differs refuses to start, saying
/// `differs(its value, rank 0's)`.
pub struct Alike {
    pub key: &'static str,
    pub value: String,
    pub differs: fn(&str, &str) -> String,
}

/// Publish what others need, then map the segment and open the sockets;
/// every setting of `alike` (and the transport) is checked across the job.
/// `geometry(ranks, crowded)` gives the geometry of a segment shared by
/// `ranks` ranks, on a host running more ranks than cores or not.
pub fn wire_up(
    pmi: &mut Pmi,
    geometry: impl FnOnce(usize, bool) -> Geometry,
    mut alike: Vec<Alike>,
) -> MpiResult<Wired> {
    let (rank, size) = (pmi.rank, pmi.size);
    let transport = tunables::value("OXMPI_TRANSPORT");
    if !["auto", "shm", "tcp"].contains(&transport.as_str()) {
        return err!(Arg, "OXMPI_TRANSPORT={transport} is not one of auto, shm, tcp");
    }
    // ranks that disagree on who is reached how would wait for each other
    alike.push(Alike {
        key: "transport",
        value: transport.clone(),
        differs: |mine, first| {
            format!("OXMPI_TRANSPORT is {mine} here but {first} on rank 0; set it alike for the whole job (in mpiexec's environment)")
        },
    });
    pmi.put(&format!("host-{rank}"), &host_id())?;
    pmi.put(&format!("pid-{rank}"), &std::process::id().to_string())?;
    let card = cpu_card();
    pmi.put(&format!("cpus-{rank}"), &write_card(&card))?;
    if rank == 0 && size > 1 {
        pmi.put("tcp-key", &hex(&new_key()))?;
        for a in &alike {
            pmi.put(a.key, &a.value)?;
        }
    }
    // under srun, a task of this host that ends before the exchange below
    // ends our wait for it (`slurm`); past it, every rank of the host is
    // watched (`others` below)
    pmi.watch(&super::slurm::siblings(rank)?);
    pmi.barrier()?;
    for a in alike.iter().filter(|_| rank != 0) {
        let first = pmi.get(a.key)?;
        if first != a.value {
            return err!(Arg, "{}", (a.differs)(&a.value, &first));
        }
    }

    let hosts: Vec<String> = if size == 1 {
        vec![host_id()]
    } else {
        (0..size).map(|r| pmi.get(&format!("host-{r}"))).collect::<MpiResult<_>>()?
    };
    let host_of: Vec<usize> = hosts.iter().map(|h| hosts.iter().position(|x| x == h).expect("listed")).collect();
    let mut cards = vec![card];
    for r in (0..size).filter(|&r| r != rank && host_of[r] == host_of[rank]) {
        let c = pmi.get(&format!("cpus-{r}"))?;
        let Some(c) = read_card(&c) else {
            return err!(Other, "PMI: rank {r}'s CPU list {c} is malformed");
        };
        cards.push(c);
    }
    let cores = host_cores(&cards);
    let host: Vec<usize> = (0..size).filter(|&r| host_of[r] == host_of[rank]).collect();
    let mut pids = vec![0; size];
    for &r in &host {
        pids[r] =
            if r == rank { std::process::id() as i32 } else { pmi.get(&format!("pid-{r}"))?.parse().unwrap_or(0) };
    }
    // from here on a rank of this host that dies ends the others' waits
    // for the launcher (srun may not end the job by itself)
    let others = |ranks: &[usize], pids: &[i32]| -> Vec<(usize, i32)> {
        ranks.iter().filter(|&&r| r != rank && pids[r] > 0).map(|&r| (r, pids[r])).collect()
    };
    pmi.watch(&others(&host, &pids));
    let nth = host.iter().position(|&r| r == rank).expect("a rank is on its own host");
    let mode = bind_mode()?;
    let bound = bind_to(mode, &cards, host.len(), nth).filter(|&cpu| affinity::bind(cpu));
    let together = |r: usize| if transport == "tcp" { r == rank } else { host_of[r] == host_of[rank] };
    if transport == "shm" && host_of.iter().any(|&h| h != 0) {
        let far = (0..size).find(|&r| host_of[r] != 0).expect("found above");
        return err!(
            Arg,
            "OXMPI_TRANSPORT=shm, but rank {far} runs on another host ({}) than rank 0 ({}); use auto or tcp",
            hosts[far],
            hosts[0]
        );
    }
    let locals: Vec<usize> = (0..size).filter(|&r| together(r)).collect();
    let me = locals.iter().position(|&r| r == rank).expect("a rank is on its own host");
    let route: Vec<Route> =
        (0..size).map(|r| locals.iter().position(|&l| l == r).map_or(Route::Tcp, Route::Shm)).collect();

    // TCP first: a bad OXMPI_ADDR/OXMPI_IFACE fails MPI_Init before any
    // segment exists
    let remote = locals.len() < size;
    let mut tcp = None;
    if remote {
        let ip = addr::choose(&tunables::value("OXMPI_ADDR"), &tunables::value("OXMPI_IFACE"))?;
        let Some(key) = unhex(&pmi.get("tcp-key")?) else {
            return err!(Other, "PMI: the job's key is malformed");
        };
        let t = match Tcp::listen(rank, size, ip, key) {
            Ok(t) => t,
            Err(e) => return err!(Other, "cannot listen for TCP peers on {ip}: {e}"),
        };
        pmi.put(&format!("tcp-{rank}"), &t.address().to_string())?;
        tcp = Some(t);
    }
    // The lowest rank of each host creates the host's segment; the name is
    // unique to the job and, under our mpiexec, carries its prefix so the
    // launcher can sweep leftovers.
    let prefix = std::env::var("OXMPI_SHM_PREFIX").unwrap_or_else(|_| format!("/oxmpi-{}", std::process::id()));
    let leader = locals[0];
    let name = format!("{prefix}-{}-{leader}", pmi.kvsname().replace('/', "_"));
    // the name goes once the host's last rank mapped the segment
    // (`Segment::attach`); if joining fails first, rank 0 removes it as
    // this function returns (under any launcher)
    let (mut _name_goes, mut _sentry) = (None, None);
    let created = if me == 0 {
        let s = Segment::create(&name, locals.len(), 0, &geometry(locals.len(), host.len() > cores))?;
        if locals.len() > 1 {
            _name_goes = Some(Unlink(name.clone()));
            if std::env::var_os("OXMPI_SHM_PREFIX").is_none() {
                // no oxmpi launcher to sweep it should this process die
                _sentry = Sentry::post(&name);
            }
            pmi.put(&format!("shm-{leader}"), &name)?;
        } else {
            // alone on its host: no one opens it by name, so the name goes
            // now (a rank killed during MPI_Init leaves nothing behind)
            Segment::unlink(&name);
        }
        Some(s)
    } else {
        None
    };
    if size > 1 {
        pmi.barrier()?;
    }
    let mut seg = match created {
        Some(s) => s,
        None => Segment::attach(&pmi.get(&format!("shm-{leader}"))?, me)?,
    };
    seg.populate()?;
    if let Some(t) = tcp.as_mut() {
        for r in (0..size).filter(|&r| route[r] == Route::Tcp) {
            let a = pmi.get(&format!("tcp-{r}"))?;
            let Ok(at) = a.parse() else {
                return err!(Other, "PMI: rank {r}'s TCP address {a} is malformed");
            };
            t.add_peer(r, at);
        }
    }
    // the ranks that share the segment (all of the host's but under
    // OXMPI_TRANSPORT=tcp, where the rank is alone)
    for r in (0..size).filter(|&r| !together(r)) {
        pids[r] = 0;
    }
    if mode == Bind::Spread && locals.len() == host.len() {
        seg.spread_over(crowded_cpus(&cards, host.len()).map_or(Vec::new(), <[usize]>::to_vec));
    }
    // (a job bound to some of the machine's CPUs, or under a quota,
    // cannot tell other programs on its cores from those elsewhere; with
    // a core per rank, a waiting rank's peers run beside it and its spin
    // catches their replies, while asleep it would wait for a wake-up:
    // measured, 2 ranks beside two busy loops, 8-byte Allreduce 0.2 us
    // in most runs spinning and yielding, 13-22 us sleeping)
    // SAFETY: sysconf has no memory arguments.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if locals.len() == host.len() && host.len() > cores && online > 0 && cores == online as usize {
        seg.watch_load(cores);
    }
    // Everyone has mapped its segment (its name is gone): rank 0's
    // guard, which removes the name should joining fail, may run now
    // without taking it from a rank yet to map it.
    if size > 1 {
        // A rank that asked for this barrier may have its reply before we
        // do, leave MPI_Init and end at once (exit without MPI_Finalize):
        // the launcher answers us all the same, so that end is no reason
        // to fail. The segment says who asked; the host's ranks outside
        // it (OXMPI_TRANSPORT=tcp) go unwatched from here.
        pmi.watch(&others(&locals, &pids));
        pmi.ask_barrier()?;
        seg.note_joined();
        pmi.await_barrier(&|r| locals.iter().position(|&l| l == r).is_some_and(|i| seg.joined(i)))?;
    }
    // past MPI_Init the dead-peer watch of the progress engine takes over
    // (and a rank done with MPI_Finalize may end while another still
    // waits for the launcher's last reply)
    pmi.watch(&[]);
    Ok(Wired { seg, route, tcp, pids, host_of, shm_name: name, cores, bound })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_cards_round_trip() {
        for card in [(vec![0, 1, 2, 3, 6], 5), (vec![5], 1), (vec![0, 2, 4, 5], 2), (vec![], 1)] {
            assert_eq!(read_card(&write_card(&card)), Some(card.clone()), "{}", write_card(&card));
        }
        assert_eq!(write_card(&(vec![0, 1, 2, 3, 6], 5)), "0-3,6/5");
        assert_eq!(read_card("0-1"), None);
        assert_eq!(read_card("x/2"), None);
    }

    #[test]
    fn oversubscribed_ranks_alike_are_bound_round_robin() {
        let two = |n: usize| vec![(vec![4, 5], 2); n];
        let cpus: Vec<_> = (0..4).map(|me| bind_to(Bind::Auto, &two(4), 4, me)).collect();
        assert_eq!(cpus, [Some(4), Some(5), Some(4), Some(5)], "two ranks on each CPU of the mask");
        assert_eq!(bind_to(Bind::Auto, &two(2), 2, 1), None, "a CPU each: the kernel places them");
        assert_eq!(bind_to(Bind::Core, &two(2), 2, 1), Some(5), "core: bound at any count");
        assert_eq!(bind_to(Bind::None, &two(4), 4, 0), None);
        let mut bound = two(4);
        bound[2] = (vec![5], 1);
        assert_eq!(bind_to(Bind::Auto, &bound, 4, 0), None, "someone bound them already");
        let quota = vec![((0..8).collect(), 2); 4];
        assert_eq!(bind_to(Bind::Core, &quota, 4, 0), None, "under a CPU quota");
    }

    #[test]
    fn host_cores_is_the_union_capped_by_a_quota() {
        // each rank bound to a core of its own: as many cores as ranks
        assert_eq!(host_cores(&[(vec![0], 1), (vec![1], 1)]), 2);
        // one bound, one free: the free one's CPUs cover the bound one's
        assert_eq!(host_cores(&[(vec![0], 1), (vec![0, 1], 2)]), 2);
        // all on one core
        assert_eq!(host_cores(&[(vec![3], 1), (vec![3], 1), (vec![3], 1)]), 1);
        // a quota of 2 CPUs over a mask of 8
        assert_eq!(host_cores(&[((0..8).collect(), 2), ((0..8).collect(), 2)]), 2);
    }

    #[test]
    fn keys_survive_the_store() {
        let k = new_key();
        assert_eq!(unhex(&hex(&k)), Some(k));
        assert_eq!(unhex("zz"), None);
        assert!(!host_id().contains(' '));
    }
}
