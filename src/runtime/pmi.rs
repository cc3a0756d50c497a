//! PMI-1 wire client: how a rank learns its rank, the job size, and
//! exchanges business cards with the others through the launcher's
//! key-value store. The launcher hands over a connected socket in `PMI_FD`
//! (our mpiexec, MPICH's Hydra), or names a TCP port to connect to in
//! `PMI_PORT` with our id in `PMI_ID` (Hydra's `-pmi-port`, our mpiexec's
//! ranks on other hosts). Under Slurm's `srun --mpi=pmi2` (which sets
//! PMI_JOBID) the same store is reached through the PMI-2 wire protocol:
//! commands as `cmd=NAME;key=value;...;` behind a 6-character length.
//! Without a launcher the process is a one-rank world with a private store.

use crate::err;
use crate::error::{MpiError, MpiResult};
use std::collections::HashMap;
use std::io::Read;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};

/// The launcher's socket, for `abort_unlocked`.
static WIRE_FD: AtomicI32 = AtomicI32::new(-1);
/// It speaks PMI-2.
static WIRE_V2: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// It decodes percent-encoded values (oxmpi's mpiexec says so at init;
/// Hydra does not).
static WIRE_PERCENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub struct Pmi {
    pub rank: usize,
    pub size: usize,
    wire: Option<Wire>,
    local: HashMap<String, String>,
    kvsname: String,
}

struct Wire {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
    /// The socket under both.
    fd: i32,
    /// PMI-2 framing (else PMI-1 lines).
    v2: bool,
    /// Processes whose end also ends a wait for a reply: this host's
    /// other ranks (rank, pidfd) while MPI_Init runs.
    watch: Vec<(usize, OwnedFd)>,
    /// A watched rank that had ended before the watch began.
    gone: Option<usize>,
}

impl Wire {
    fn new(reader: Box<dyn Read + Send>, writer: Box<dyn Write + Send>, fd: i32) -> Wire {
        Wire { reader: BufReader::new(reader), writer, fd, v2: false, watch: Vec::new(), gone: None }
    }

    fn send(&mut self, line: &str) -> MpiResult<()> {
        self.writer
            .write_all(line.as_bytes())
            .map_err(|e| MpiError::new(crate::error::ErrorClass::Other, format!("PMI: lost the launcher: {e}")))
    }

    fn call(&mut self, line: &str) -> MpiResult<HashMap<String, String>> {
        self.send(line)?;
        self.receive(&none)
    }

    /// Send command `cmd` with `args` in the wire's framing; the reply.
    fn request(&mut self, cmd: &str, args: &[(&str, &str)]) -> MpiResult<HashMap<String, String>> {
        self.ask(cmd, args)?;
        self.answer(&none)
    }

    /// Send command `cmd` with `args` in the wire's framing.
    fn ask(&mut self, cmd: &str, args: &[(&str, &str)]) -> MpiResult<()> {
        if self.v2 {
            return self.send(&v2_command(cmd, args));
        }
        let mut line = format!("cmd={cmd}");
        for (k, v) in args {
            line += &format!(" {k}={v}");
        }
        self.send(&(line + "\n"))
    }

    /// The launcher's reply to what we asked; a watched rank that ends
    /// first fails the wait unless `excused(rank)`.
    fn answer(&mut self, excused: &dyn Fn(usize) -> bool) -> MpiResult<HashMap<String, String>> {
        if !self.v2 {
            return self.receive(excused);
        }
        self.await_reply(excused)?;
        let mut len = [0u8; 6];
        let lost = |_: std::io::Error| {
            MpiError::new(crate::error::ErrorClass::Other, "PMI: the launcher closed the connection".to_string())
        };
        self.reader.read_exact(&mut len).map_err(lost)?;
        let n: usize = String::from_utf8_lossy(&len).trim().parse().unwrap_or(0);
        let mut body = vec![0u8; n];
        self.reader.read_exact(&mut body).map_err(lost)?;
        Ok(parse_v2(&String::from_utf8_lossy(&body)))
    }

    fn receive(&mut self, excused: &dyn Fn(usize) -> bool) -> MpiResult<HashMap<String, String>> {
        self.await_reply(excused)?;
        let mut reply = String::new();
        match self.reader.read_line(&mut reply) {
            Ok(0) | Err(_) => return err!(Other, "PMI: the launcher closed the connection"),
            Ok(_) => {}
        }
        Ok(parse(&reply))
    }

    /// Wait until the launcher's reply can be read, or a watched process
    /// ends first: a rank of this host that died inside MPI_Init, which
    /// `srun` (unlike Hydra and our mpiexec) leaves the others waiting
    /// on in a fence for good unless told to kill on a bad exit. A rank
    /// `excused` ended after asking for what we wait for (the launcher
    /// answers without it): it is watched no more.
    fn await_reply(&mut self, excused: &dyn Fn(usize) -> bool) -> MpiResult<()> {
        if let Some(r) = self.gone {
            return err!(Other, "rank {r} on this host ended during MPI_Init");
        }
        if self.watch.is_empty() || !self.reader.buffer().is_empty() {
            return Ok(());
        }
        let fds = std::iter::once(self.fd).chain(self.watch.iter().map(|(_, f)| f.as_raw_fd()));
        let mut fds: Vec<libc::pollfd> = fds.map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
        loop {
            // SAFETY: poll on an array we own, of its own length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            // a reply (or the launcher gone) comes first: the read tells
            if n <= 0 || fds[0].revents != 0 {
                return Ok(());
            }
            if let Some(i) = fds[1..].iter().position(|p| p.revents != 0) {
                let rank = self.watch[i].0;
                if !excused(rank) {
                    return err!(Other, "rank {rank} on this host ended during MPI_Init");
                }
                self.watch.remove(i);
                fds.remove(i + 1);
            }
        }
    }
}

/// No watched rank's end is excused (`Wire::await_reply`).
fn none(_: usize) -> bool {
    false
}

/// `cmd=get_result rc=0 value=x` -> {cmd: get_result, rc: 0, value: x}
pub fn parse(line: &str) -> HashMap<String, String> {
    line.split_whitespace().filter_map(|w| w.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A PMI-2 command: its length in 6 characters, then
/// `cmd=NAME;k=v;...;` (a `;` in a value doubled).
fn v2_command(cmd: &str, args: &[(&str, &str)]) -> String {
    let mut body = format!("cmd={cmd};");
    for (k, v) in args {
        body += &format!("{k}={};", v.replace(';', ";;"));
    }
    format!("{:<6}{body}", body.len())
}

/// `cmd=kvs-get-response;rc=0;found=TRUE;value=x;` -> its fields.
fn parse_v2(body: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut field = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ';' && chars.peek() == Some(&';') {
            chars.next();
            field.push(';');
        } else if c == ';' {
            if let Some((k, v)) = field.split_once('=') {
                out.insert(k.to_string(), v.to_string());
            }
            field.clear();
        } else {
            field.push(c);
        }
    }
    out
}

impl Pmi {
    pub fn connect() -> MpiResult<Pmi> {
        let bad = |what: String| MpiError::new(crate::error::ErrorClass::Other, what);
        let mut wire = if let Ok(v) = std::env::var("PMI_FD") {
            let fd = v.parse::<i32>().map_err(|_| bad(format!("PMI_FD={v} is not a descriptor")))?;
            // SAFETY: the launcher passed this descriptor to us for PMI
            // alone; we take ownership of it once, here.
            let stream = unsafe { UnixStream::from_raw_fd(fd) };
            let writer = stream.try_clone().map_err(|e| bad(format!("PMI: {e}")))?;
            Wire::new(Box::new(stream), Box::new(writer), fd)
        } else if let Ok(port) = std::env::var("PMI_PORT") {
            let stream =
                TcpStream::connect(&port).map_err(|e| bad(format!("PMI: cannot reach PMI_PORT={port}: {e}")))?;
            let _ = stream.set_nodelay(true);
            let fd = stream.as_raw_fd();
            let writer = stream.try_clone().map_err(|e| bad(format!("PMI: {e}")))?;
            Wire::new(Box::new(stream), Box::new(writer), fd)
        } else {
            return Ok(Pmi { rank: 0, size: 1, wire: None, local: HashMap::new(), kvsname: "singleton".into() });
        };
        // The descriptor must not leak into programs this rank execs.
        // SAFETY: plain fcntl on a descriptor we own.
        unsafe { libc::fcntl(wire.fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        WIRE_FD.store(wire.fd, Ordering::Relaxed);
        let (mut rank, mut size) = (std::env::var("PMI_RANK").ok(), std::env::var("PMI_SIZE").ok());
        if std::env::var("PMI_FD").is_err() {
            // PMI_PORT: say who we are; the launcher answers with our rank
            // and the job size
            let id = std::env::var("PMI_ID").map_err(|_| bad("PMI: PMI_PORT is set but PMI_ID is not".into()))?;
            let r = wire.call(&format!("cmd=initack pmiid={id}\n"))?;
            if r.get("cmd").map(String::as_str) != Some("initack") {
                return err!(Other, "PMI: the launcher refused id {id} ({r:?})");
            }
            for _ in 0..3 {
                let r = wire.receive(&none)?;
                rank = r.get("rank").cloned().or(rank);
                size = r.get("size").cloned().or(size);
            }
        }
        let v2 = std::env::var("PMI_JOBID").is_ok();
        let r = wire.call(if v2 {
            "cmd=init pmi_version=2 pmi_subversion=0\n"
        } else {
            "cmd=init pmi_version=1 pmi_subversion=1\n"
        })?;
        if r.get("rc").map(String::as_str) != Some("0") {
            return err!(Other, "PMI: the launcher refused init ({r:?})");
        }
        WIRE_PERCENT.store(r.get("escapes").map(String::as_str) == Some("percent"), Ordering::Relaxed);
        let kvsname = if v2 {
            if r.get("pmi_version").map(String::as_str) != Some("2") {
                return err!(Other, "PMI: PMI_JOBID is set but the launcher does not speak PMI-2 ({r:?})");
            }
            wire.v2 = true;
            WIRE_V2.store(true, Ordering::Relaxed);
            let jobid = std::env::var("PMI_JOBID").unwrap_or_default();
            let me = rank.clone().unwrap_or_default();
            let r = wire.request("fullinit", &[("pmijobid", &jobid), ("pmirank", &me), ("threaded", "FALSE")])?;
            if r.get("rc").map(String::as_str) != Some("0") {
                return err!(Other, "PMI: the launcher refused fullinit ({r:?})");
            }
            (rank, size) = (r.get("rank").cloned().or(rank), r.get("size").cloned().or(size));
            wire.request("job-getid", &[])?.get("jobid").cloned().unwrap_or(jobid)
        } else {
            wire.call("cmd=get_my_kvsname\n")?.get("kvsname").cloned().unwrap_or_default()
        };
        let rank = number("rank", rank)?;
        let size = number("size", size)?;
        Ok(Pmi { rank, size, wire: Some(wire), local: HashMap::new(), kvsname })
    }

    /// Whether a launcher started this process (not a singleton).
    pub fn launched(&self) -> bool {
        self.wire.is_some()
    }

    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    pub fn put(&mut self, key: &str, value: &str) -> MpiResult<()> {
        match &mut self.wire {
            None => {
                self.local.insert(key.into(), value.into());
                Ok(())
            }
            Some(w) => {
                let r = if w.v2 {
                    w.request("kvs-put", &[("key", key), ("value", value)])?
                } else {
                    w.request("put", &[("kvsname", &self.kvsname), ("key", key), ("value", value)])?
                };
                if r.get("rc").map(String::as_str) != Some("0") {
                    return err!(Other, "PMI: put {key} refused");
                }
                Ok(())
            }
        }
    }

    pub fn get(&mut self, key: &str) -> MpiResult<String> {
        match &mut self.wire {
            None => self
                .local
                .get(key)
                .cloned()
                .ok_or_else(|| MpiError::new(crate::error::ErrorClass::Other, format!("PMI: no key {key}"))),
            Some(w) => {
                let r = if w.v2 {
                    w.request("kvs-get", &[("jobid", &self.kvsname), ("srcid", "-1"), ("key", key)])?
                } else {
                    w.request("get", &[("kvsname", &self.kvsname), ("key", key)])?
                };
                let found = !w.v2 || r.get("found").map(String::as_str) == Some("TRUE");
                match (r.get("rc").map(String::as_str), r.get("value")) {
                    (Some("0"), Some(v)) if found => Ok(v.clone()),
                    _ => err!(Other, "PMI: no key {key} in the job's store"),
                }
            }
        }
    }

    pub fn barrier(&mut self) -> MpiResult<()> {
        self.ask_barrier()?;
        self.await_barrier(&none)
    }

    /// Ask the launcher for a barrier; `await_barrier` takes its reply.
    pub fn ask_barrier(&mut self) -> MpiResult<()> {
        match &mut self.wire {
            None => Ok(()),
            Some(w) => w.ask(if w.v2 { "kvs-fence" } else { "barrier_in" }, &[]),
        }
    }

    /// The reply to `ask_barrier`; a watched rank that ends meanwhile
    /// fails the wait unless `excused(rank)`. For MPI_Init's last barrier:
    /// a rank that asked for it may get its reply before we do, leave
    /// MPI_Init and end (a program that exits without MPI_Finalize), and
    /// the launcher answers us all the same.
    pub fn await_barrier(&mut self, excused: &dyn Fn(usize) -> bool) -> MpiResult<()> {
        match &mut self.wire {
            None => Ok(()),
            Some(w) => {
                let answer = if w.v2 { "kvs-fence-response" } else { "barrier_out" };
                let r = w.answer(excused)?;
                if r.get("cmd").map(String::as_str) != Some(answer) {
                    return err!(Other, "PMI: unexpected reply to barrier: {r:?}");
                }
                Ok(())
            }
        }
    }

    /// Watch these processes (rank, pid) while waiting for the launcher:
    /// should one end, the wait fails (an empty list ends the watch).
    /// Without pidfd_open (before Linux 5.3) nothing is watched.
    pub fn watch(&mut self, ranks: &[(usize, i32)]) {
        let Some(w) = &mut self.wire else { return };
        w.watch.clear();
        w.gone = None;
        for &(rank, pid) in ranks {
            // SAFETY: pidfd_open takes a pid and flags; a descriptor it
            // returns is ours alone (and close-on-exec).
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            if fd >= 0 {
                // SAFETY: as above, a fresh descriptor we own.
                w.watch.push((rank, unsafe { OwnedFd::from_raw_fd(fd as i32) }));
            } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
                w.gone = w.gone.or(Some(rank));
            }
        }
    }

    pub fn finalize(&mut self) {
        if let Some(w) = &mut self.wire {
            let _ = w.request("finalize", &[]);
        }
    }

    /// Tell the launcher the job must end; it kills the other ranks.
    pub fn abort(&mut self, code: i32, msg: &str) {
        if let Some(w) = &mut self.wire {
            let _ = w.send(&abort_line(code, msg));
        }
    }
}

/// PMI values are single words: spaces and '%' are percent-encoded.
pub fn encode(s: &str) -> String {
    s.replace('%', "%25").replace(' ', "%20").replace('\n', "%0A").replace(';', "%3B")
}

pub fn decode(s: &str) -> String {
    s.replace("%20", " ").replace("%0A", "\n").replace("%3B", ";").replace("%25", "%")
}

fn number(what: &str, v: Option<String>) -> MpiResult<usize> {
    match v.as_deref().map(str::parse) {
        Some(Ok(n)) => Ok(n),
        _ => err!(Other, "PMI: the launcher did not give this process its {what}"),
    }
}

/// Whether the launcher closed its end of the PMI connection (it never
/// speaks unasked, so anything readable there is its end).
pub fn launcher_gone() -> bool {
    let fd = WIRE_FD.load(Ordering::Relaxed);
    if fd < 0 {
        return false;
    }
    let mut b = 0u8;
    // SAFETY: a one-byte peek into a local; the socket stays ours.
    let n = unsafe { libc::recv(fd, &mut b as *mut u8 as *mut libc::c_void, 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    n == 0
}

/// Tell the launcher the job must end, without the state's lock (which
/// the failing caller may hold).
pub fn abort_unlocked(code: i32, msg: &str) {
    let fd = WIRE_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let line = abort_line(code, msg);
        // SAFETY: writing a buffer we own to the launcher's socket.
        unsafe { libc::write(fd, line.as_ptr() as *const libc::c_void, line.len()) };
    }
}

/// The abort command: PMI-2 carries the message as it is, a PMI-1 launcher
/// that decodes percent escapes gets them, and any other one (Hydra) a
/// single word, whitespace turned into underscores.
fn abort_line(code: i32, msg: &str) -> String {
    if WIRE_V2.load(Ordering::Relaxed) {
        let code = code.to_string();
        return v2_command("abort", &[("isworld", "TRUE"), ("msg", msg), ("exitcode", &code)]);
    }
    let msg = if WIRE_PERCENT.load(Ordering::Relaxed) {
        encode(msg)
    } else {
        msg.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect()
    };
    format!("cmd=abort exitcode={code} message={msg}\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn replies_parse_into_fields() {
        let r = super::parse("cmd=get_result rc=0 value=abc=d\n");
        assert_eq!(r["cmd"], "get_result");
        assert_eq!(r["rc"], "0");
        assert_eq!(r["value"], "abc=d");
        let m = "MPI_Send: 50% of rank 3; then";
        assert_eq!(super::decode(&super::encode(m)), m);
        assert!(!super::encode(m).contains(' ') && !super::encode(m).contains(';'));
    }

    #[test]
    fn pmi2_commands_frame_and_parse() {
        let c = super::v2_command("kvs-put", &[("key", "a"), ("value", "x;y")]);
        assert_eq!(c, "29    cmd=kvs-put;key=a;value=x;;y;");
        let r = super::parse_v2(&c[6..]);
        assert_eq!((r["cmd"].as_str(), r["key"].as_str(), r["value"].as_str()), ("kvs-put", "a", "x;y"));
    }

    #[test]
    fn abort_messages_keep_their_spaces_where_the_launcher_can_read_them() {
        use std::sync::atomic::Ordering;
        let m = "MPI_Abort(7) on rank 0";
        assert_eq!(super::abort_line(7, m), "cmd=abort exitcode=7 message=MPI_Abort(7)_on_rank_0\n", "Hydra's PMI-1");
        super::WIRE_PERCENT.store(true, Ordering::Relaxed);
        let line = super::abort_line(7, m);
        super::WIRE_PERCENT.store(false, Ordering::Relaxed);
        assert_eq!(super::decode(&super::parse(&line)["message"]), m, "oxmpi's mpiexec");
    }

    /// A launcher's end of a PMI-1 wire, and the rank's `Pmi` over it.
    fn wired() -> (std::os::unix::net::UnixStream, super::Pmi) {
        use std::os::unix::io::AsRawFd;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        // a wait that nothing ends fails after this, not hangs the test
        ours.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("timeout");
        let fd = ours.as_raw_fd();
        let writer = ours.try_clone().expect("clone");
        let wire = super::Wire::new(Box::new(ours), Box::new(writer), fd);
        let pmi = super::Pmi { rank: 0, size: 2, wire: Some(wire), local: Default::default(), kvsname: "kvs".into() };
        (theirs, pmi)
    }

    #[test]
    fn a_watched_rank_that_ends_ends_the_wait_for_the_launcher() {
        use std::io::{BufRead, Write};
        let (launcher, mut pmi) = wired();
        let mut peer = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        pmi.watch(&[(1, peer.id() as i32)]);
        // the launcher answers: the reply wins while the peer lives
        let mut l = launcher.try_clone().expect("clone");
        l.write_all(b"cmd=barrier_out\n").expect("reply");
        pmi.barrier().expect("a barrier answered");
        let mut asked = String::new();
        std::io::BufReader::new(&launcher).read_line(&mut asked).expect("request");
        assert_eq!(asked, "cmd=barrier_in\n");
        // no answer comes, and the peer dies: the wait ends with its rank
        let killer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            peer.kill().expect("kill");
            peer
        });
        let e = pmi.barrier().expect_err("the peer died");
        assert!(e.to_string().contains("rank 1 on this host ended during MPI_Init"), "{e}");
        let mut peer = killer.join().expect("killer");
        peer.wait().expect("reaped");
        // one already gone (reaped) when the watch begins fails the next wait
        pmi.watch(&[(1, peer.id() as i32)]);
        assert!(pmi.barrier().is_err());
        // an empty watch: the wait is the plain read again
        pmi.watch(&[]);
        l.write_all(b"cmd=barrier_out\n").expect("reply");
        pmi.barrier().expect("no watch");
    }

    #[test]
    fn a_watched_rank_that_asked_for_the_barrier_may_end_before_the_reply() {
        use std::io::Write;
        let (launcher, mut pmi) = wired();
        let mut peer = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        pmi.watch(&[(1, peer.id() as i32)]);
        // the peer had its reply first and ends; ours comes after
        let replier = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            peer.kill().expect("kill");
            peer.wait().expect("reaped");
            std::thread::sleep(std::time::Duration::from_millis(100));
            (&launcher).write_all(b"cmd=barrier_out\n").expect("reply");
            launcher
        });
        pmi.ask_barrier().expect("asked");
        pmi.await_barrier(&|r| r == 1).expect("excused: the reply is awaited");
        drop(replier.join().expect("replier"));
    }
}
