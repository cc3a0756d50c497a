//! mpiexec / mpirun: start the ranks of a job on this host and others,
//! serve them PMI-1, forward stdio and signals, and end the whole job
//! promptly when one rank fails, leaving no process and no shared-memory
//! segment behind. Ranks on other hosts are started through a launcher
//! command (`ssh host COMMAND` by default) and reach PMI over TCP.

mod hosts;
mod pmi_server;

/// A line on stderr; a write that fails (the reader went away) is no
/// reason to stop before the job is ended and its segments swept.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use std::io::{BufRead, BufReader, Write};
use std::os::unix::io::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

pub enum Event {
    Exited { rank: usize, status: ExitStatus },
    Abort { rank: usize, code: i32, msg: String },
}

struct Options {
    n: usize,
    hosts: Option<Vec<hosts::Host>>,
    ppn: Option<usize>,
    launcher: Vec<String>,
    label: bool,
    timeout: Option<u64>,
    env: Vec<(String, String)>,
    program: Vec<String>,
}

const USAGE: &str = "usage: mpiexec -n N [-hosts H1,H2:SLOTS | -f HOSTFILE] [-ppn N] [--launcher CMD] [-l]
               [--timeout SECONDS] [-genv NAME VALUE]... program [args...]
  -n, -np N          number of ranks
  -hosts LIST        hosts to run on, each with its slots (host:N, default 1)
  -f, -hostfile F    the hosts from a file: one per line, host, host:N or host slots=N
  -ppn N             ranks per host in each round (instead of the slots)
  --launcher CMD     how to start a rank on another host: CMD HOST COMMAND (default ssh)
  -l                 prefix every output line with the rank that wrote it
  --timeout S        end the job if it runs longer than S seconds (also MPIEXEC_TIMEOUT)
  -env, -genv N V    set environment variable N to V in every rank
  the environment of mpiexec is passed to every rank; stdin goes to rank 0";

fn die(msg: &str) -> ! {
    say!("mpiexec: {msg}\n{USAGE}");
    std::process::exit(2)
}

fn parse_args() -> Options {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        n: 1,
        hosts: None,
        ppn: None,
        launcher: vec!["ssh".into()],
        label: false,
        timeout: None,
        env: Vec::new(),
        program: Vec::new(),
    };
    o.timeout = std::env::var("MPIEXEC_TIMEOUT").ok().and_then(|v| v.parse().ok());
    while let Some(a) = args.next() {
        match a.as_str() {
            "-n" | "-np" | "--n" | "--np" => {
                o.n = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| die(&format!("{a} needs a positive number")))
            }
            "-hosts" | "--hosts" | "-host" | "--host" => {
                let list = args.next().unwrap_or_else(|| die(&format!("{a} needs a host list")));
                o.hosts = Some(hosts::parse_list(&list).unwrap_or_else(|e| die(&e)));
            }
            "-f" | "-hostfile" | "--hostfile" | "-machinefile" | "--machinefile" => {
                let path = args.next().unwrap_or_else(|| die(&format!("{a} needs a file")));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| die(&format!("cannot read {path}: {e}")));
                o.hosts = Some(hosts::parse_file(&text).unwrap_or_else(|e| die(&format!("{path}: {e}"))));
            }
            "-ppn" | "--ppn" | "-perhost" => {
                o.ppn = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|&n| n > 0)
                        .unwrap_or_else(|| die(&format!("{a} needs a positive number"))),
                )
            }
            "--launcher" | "-launcher" => {
                let l = args.next().unwrap_or_else(|| die(&format!("{a} needs a command")));
                o.launcher = l.split_whitespace().map(String::from).collect();
                if o.launcher.is_empty() {
                    die(&format!("{a} needs a command"));
                }
            }
            "-l" | "--label" | "-prepend-rank" => o.label = true,
            "--timeout" | "-timeout" => {
                o.timeout =
                    Some(args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| die("--timeout needs seconds")))
            }
            "-env" | "-genv" | "--env" => {
                let (k, v) = (args.next(), args.next());
                match (k, v) {
                    (Some(k), Some(v)) => o.env.push((k, v)),
                    _ => die(&format!("{a} needs a name and a value")),
                }
            }
            "-h" | "--help" | "-help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            "--" => {
                o.program.extend(args.by_ref());
            }
            s if s.starts_with('-') && o.program.is_empty() => die(&format!("unknown option {s}")),
            _ => {
                o.program.push(a);
                o.program.extend(args.by_ref());
            }
        }
    }
    if o.program.is_empty() {
        die("no program to run");
    }
    o
}

static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::Relaxed);
}

fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a pointer to a static or thread-local string.
    let s = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) };
    s.to_string_lossy().into_owned()
}

fn forward_output(rank: usize, src: impl std::io::Read + Send + 'static, to_stderr: bool) {
    std::thread::spawn(move || {
        for line in BufReader::new(src).lines() {
            let Ok(line) = line else { break };
            if to_stderr {
                let _ = writeln!(std::io::stderr().lock(), "[{rank}] {line}");
            } else {
                let _ = writeln!(std::io::stdout().lock(), "[{rank}] {line}");
            }
        }
    });
}

fn main() {
    let o = parse_args();
    let job = std::process::id();
    let shm_prefix = format!("/oxmpi-{job}");
    let server = pmi_server::Server::new(o.n, format!("kvs_{job}_0"));
    let (tx, rx) = channel::<Event>();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1, libc::SIGUSR2] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    // A reader of our output that goes away (`mpiexec ... | head`) must not
    // kill us before we end the job and sweep its segments.
    // SAFETY: setting a disposition; the ranks get the default back below.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };

    let me = mpi::runtime::hostname();
    let placement = o.hosts.as_ref().map(|h| hosts::place(h, o.n, o.ppn));
    let remote: Vec<bool> =
        (0..o.n).map(|r| placement.as_ref().is_some_and(|p| !hosts::is_local(&p[r], &me))).collect();
    // Ranks on other hosts reach PMI over TCP, at the address ranks would
    // listen on (OXMPI_ADDR / OXMPI_IFACE apply).
    let pmi_port = remote.contains(&true).then(|| {
        let ip = mpi::transport::tcp::addr::choose(
            &std::env::var("OXMPI_ADDR").unwrap_or_default(),
            &std::env::var("OXMPI_IFACE").unwrap_or_default(),
        )
        .unwrap_or_else(|e| die(&e.to_string()));
        let l = std::net::TcpListener::bind((ip, 0)).unwrap_or_else(|e| die(&format!("cannot listen on {ip}: {e}")));
        let port = l.local_addr().expect("bound").to_string();
        let (srv, remote, etx) = (server.clone(), remote.clone(), tx.clone());
        std::thread::spawn(move || srv.serve_tcp(l, remote, etx));
        port
    });

    let mut children: Vec<Child> = Vec::with_capacity(o.n);
    let mut pids = Vec::with_capacity(o.n);
    for (rank, &is_remote) in remote.iter().enumerate() {
        // a local rank inherits its end of a socket pair as PMI_FD; a remote
        // one connects to PMI_PORT
        let pair = (!is_remote).then(|| UnixStream::pair().unwrap_or_else(|e| die(&format!("socketpair: {e}"))));
        let (ours, fd) = match pair {
            Some((ours, theirs)) => (Some(ours), theirs.into_raw_fd()),
            None => (None, -1),
        };
        let mut cmd;
        if is_remote {
            let mut extra: std::collections::BTreeMap<String, String> = o.env.iter().cloned().collect();
            extra.insert("PMI_PORT".into(), pmi_port.clone().expect("listening for remote ranks"));
            extra.insert("PMI_ID".into(), rank.to_string());
            extra.insert("OXMPI_SHM_PREFIX".into(), shm_prefix.clone());
            let host = &placement.as_ref().expect("remote ranks have hosts")[rank];
            cmd = Command::new(&o.launcher[0]);
            cmd.args(&o.launcher[1..]).arg(host).arg(hosts::remote_command(&o.program, &extra));
        } else {
            cmd = Command::new(&o.program[0]);
            cmd.args(&o.program[1..])
                .env("PMI_FD", fd.to_string())
                .env("PMI_RANK", rank.to_string())
                .env("PMI_SIZE", o.n.to_string())
                .env("OXMPI_SHM_PREFIX", &shm_prefix)
                .envs(o.env.iter().map(|(k, v)| (k, v)));
            // gfortran buffers its preconnected units whole when they are
            // files (ours are, where our output is), and a rank the job's
            // end kills loses what it printed; through Hydra's pipes they
            // are unbuffered. Alike here, unless the user says otherwise.
            // (C's stdout: `runtime::output`)
            const UNBUFFERED: &str = "GFORTRAN_UNBUFFERED_PRECONNECTED";
            if std::env::var_os(UNBUFFERED).is_none() && !o.env.iter().any(|(k, _)| k == UNBUFFERED) {
                cmd.env(UNBUFFERED, "y");
            }
        }
        if rank != 0 {
            cmd.stdin(Stdio::null());
        }
        if o.label {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        let keep = fd;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // Own process group, so killing the rank kills what it started.
                libc::setpgid(0, 0);
                // Die with mpiexec, whatever kills it.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // The PMI descriptor must survive exec.
                if keep >= 0 {
                    libc::fcntl(keep, libc::F_SETFD, 0);
                }
                for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGUSR1, libc::SIGUSR2, libc::SIGPIPE] {
                    libc::signal(s, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                let what = if is_remote { &o.launcher[0] } else { &o.program[0] };
                say!("mpiexec: cannot start {what}: {e}");
                kill_all(&pids);
                sweep_shm(&shm_prefix);
                std::process::exit(127);
            }
        };
        if fd >= 0 {
            // SAFETY: the child has its copy; ours is closed.
            unsafe { libc::close(fd) };
        }
        if o.label {
            forward_output(rank, child.stdout.take().unwrap(), false);
            forward_output(rank, child.stderr.take().unwrap(), true);
        }
        pids.push(child.id() as i32);
        if let Some(ours) = ours {
            let (srv, etx) = (server.clone(), tx.clone());
            let out = ours.try_clone().unwrap_or_else(|e| die(&format!("socket: {e}")));
            std::thread::spawn(move || srv.serve(rank, BufReader::new(ours), out, etx));
        }
        children.push(child);
    }
    for (rank, mut child) in children.into_iter().enumerate() {
        let etx = tx.clone();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = etx.send(Event::Exited { rank, status });
            }
        });
    }
    drop(tx);

    let start = Instant::now();
    let mut running = o.n;
    let mut exit_code = 0;
    while running > 0 {
        let sig = SIGNAL.swap(0, Ordering::Relaxed);
        if sig != 0 {
            if sig == libc::SIGUSR1 || sig == libc::SIGUSR2 {
                signal_all(&pids, sig);
            } else {
                say!("mpiexec: got signal {sig} ({}); ending the job", signal_name(sig));
                end_job(&pids, &shm_prefix, 128 + sig);
            }
        }
        if let Some(t) = o.timeout {
            if start.elapsed() > Duration::from_secs(t) {
                say!("mpiexec: the job ran longer than --timeout {t} s; ending it");
                end_job(&pids, &shm_prefix, 124);
            }
        }
        let ev = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match ev {
            Event::Abort { rank, code, msg } => {
                say!(
                    "mpiexec: rank {rank} aborted the job with code {code}{}",
                    if msg.is_empty() { String::new() } else { format!(": {msg}") }
                );
                end_job(&pids, &shm_prefix, if code == 0 { 1 } else { code });
            }
            Event::Exited { rank, status } => {
                running -= 1;
                pids[rank] = 0;
                let (initialized, finalized) = {
                    let s = server.store.lock().unwrap();
                    (s.initialized[rank], s.finalized[rank])
                };
                let failure = if let Some(sig) = status.signal() {
                    Some((format!("was killed by signal {sig} ({})", signal_name(sig)), 128 + sig))
                } else {
                    let code = status.code().unwrap_or(1);
                    if code != 0 {
                        Some((format!("exited with code {code}"), code))
                    } else if initialized && !finalized && o.n > 1 {
                        Some(("exited without calling MPI_Finalize".to_string(), 1))
                    } else {
                        None
                    }
                };
                if let Some((how, code)) = failure {
                    // An abort message may be on its way: it says more.
                    if let Ok(Event::Abort { rank: r, code: c, msg }) = rx.recv_timeout(Duration::from_millis(100)) {
                        say!(
                            "mpiexec: rank {r} aborted the job with code {c}{}",
                            if msg.is_empty() { String::new() } else { format!(": {msg}") }
                        );
                        end_job(&pids, &shm_prefix, if c == 0 { 1 } else { c });
                    }
                    say!("mpiexec: rank {rank} {how}; ending the job");
                    end_job(&pids, &shm_prefix, code);
                }
                exit_code = exit_code.max(status.code().unwrap_or(0));
            }
        }
    }
    sweep_shm(&shm_prefix);
    std::process::exit(exit_code);
}

fn signal_all(pids: &[i32], sig: i32) {
    for &p in pids.iter().filter(|&&p| p > 0) {
        // SAFETY: signalling a child's process group.
        unsafe { libc::kill(-p, sig) };
    }
}

fn kill_all(pids: &[i32]) {
    signal_all(pids, libc::SIGKILL);
}

/// Kill every rank, remove the job's segments, and exit with `code`.
fn end_job(pids: &[i32], shm_prefix: &str, code: i32) -> ! {
    kill_all(pids);
    // Reap them so none is left even briefly as a zombie of ours.
    for &p in pids.iter().filter(|&&p| p > 0) {
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(p, std::ptr::null_mut(), 0) };
    }
    sweep_shm(shm_prefix);
    std::process::exit(code)
}

/// Remove /dev/shm entries of this job a failed rank may have left.
fn sweep_shm(prefix: &str) {
    let name = prefix.trim_start_matches('/');
    if let Ok(dir) = std::fs::read_dir("/dev/shm") {
        for e in dir.flatten() {
            if e.file_name().to_string_lossy().starts_with(name) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
