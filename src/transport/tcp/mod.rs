//! The TCP transport (DESIGN.md §5): frames between ranks on different
//! hosts, or everywhere with `OXMPI_TRANSPORT=tcp`.
//!
//! Every rank listens on one port (its address goes through the PMI
//! store). A connection to a peer is opened the first time a frame is
//! sent to it, and starts with a hello: magic, the job's secret key and
//! the sender's rank. Whoever accepts a connection reads nothing of it as
//! frames before the hello checked out; a connection that fails the check
//! is closed and counted (`refused`). Frames then travel as on the rings:
//! a `FrameHeader`, then `frag_len` payload bytes.
//!
//! One connection per pair carries both directions: a rank sends on the
//! first connection it has with the peer (opened by either side), and
//! never changes it, so frames between a pair keep their order. Two ranks
//! that open at the same moment keep both connections, each sending on
//! its own.
//!
//! Sockets are nonblocking: frames queue in a connection's outgoing
//! buffer and go out as the socket takes them; `poll_io` (from the
//! progress engine) accepts, writes and reads. Before MPI_Finalize
//! closes them, a rank says `Bye` on each connection; a connection that
//! ends without it means its rank died or its host went away, which ends
//! the job (`poll_io` reports it).

pub mod addr;

use super::{FrameHeader, FrameKind, HEADER_BYTES};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

pub const KEY_BYTES: usize = 32;
const MAGIC: &[u8; 8] = b"oxmpiTC1";
const HELLO_BYTES: usize = MAGIC.len() + KEY_BYTES + 4;
/// A connection holding this many unconsumed bytes is not read further:
/// its sender then waits on TCP's window (back-pressure, as a full ring).
const IN_CAP: usize = 8 << 20;
/// A peer whose connection has this many bytes waiting to be written
/// takes no new frames for now (the caller keeps them, as for a full ring).
const OUT_CAP: usize = 8 << 20;
/// Bytes of a long message per `Data` frame.
pub const DATA_CHUNK: usize = 256 << 10;
/// Connections that have not said hello yet, at most; beyond, the oldest
/// goes.
const MAX_PENDING: usize = 64;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

struct Conn {
    stream: TcpStream,
    /// The world rank at the other end: known to the side that connected,
    /// proved by the hello to the side that accepted.
    peer: Option<usize>,
    /// Bytes read: `inbuf[start..end]` are not consumed yet.
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes to write: `out[sent..]`.
    out: Vec<u8>,
    sent: usize,
    /// The other end closed (or the connection broke).
    eof: bool,
}

impl Conn {
    fn new(stream: TcpStream, peer: Option<usize>) -> Conn {
        Conn { stream, peer, inbuf: vec![0; 64 << 10], start: 0, end: 0, out: Vec::new(), sent: 0, eof: false }
    }

    fn unsent(&self) -> usize {
        self.out.len() - self.sent
    }

    /// Write what the socket takes now.
    fn flush(&mut self) -> std::io::Result<()> {
        while self.sent < self.out.len() {
            match self.stream.write(&self.out[self.sent..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
        Ok(())
    }

    /// Read what the socket has now (up to IN_CAP unconsumed).
    fn fill(&mut self) -> std::io::Result<()> {
        while !self.eof && self.end - self.start < IN_CAP {
            if self.end == self.inbuf.len() {
                if self.start > 0 {
                    self.inbuf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    self.inbuf.resize(self.inbuf.len() * 2, 0);
                }
            }
            match self.stream.read(&mut self.inbuf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        Ok(())
    }

    /// The first whole frame read and not consumed.
    fn frame(&self) -> Option<(FrameHeader, &[u8])> {
        let have = &self.inbuf[self.start..self.end];
        if have.len() < HEADER_BYTES {
            return None;
        }
        // SAFETY: FrameHeader is plain old data of HEADER_BYTES bytes; the
        // read is unaligned-safe.
        let h = unsafe { std::ptr::read_unaligned(have.as_ptr() as *const FrameHeader) };
        have.get(HEADER_BYTES..HEADER_BYTES + h.frag_len as usize).map(|p| (h, p))
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
    }
}

pub struct Tcp {
    me: usize,
    key: [u8; KEY_BYTES],
    listener: TcpListener,
    /// Per world rank: where it listens; None for ranks reached otherwise.
    peers: Vec<Option<SocketAddr>>,
    conns: Vec<Option<Conn>>,
    /// Per world rank: the connection our frames to it go on.
    send: Vec<Option<usize>>,
    /// Per world rank: the connections with it (frames from it come on one).
    of_peer: Vec<Vec<usize>>,
    /// Per world rank: it said Bye (it is in MPI_Finalize).
    finished: Vec<bool>,
    /// Connections closed because they did not prove the job's key.
    pub refused: u64,
}

/// A frame header as the bytes that travel.
fn header_bytes(h: &FrameHeader) -> &[u8] {
    // SAFETY: FrameHeader is repr(C) plain old data without padding
    // (HEADER_BYTES, asserted in transport).
    unsafe { std::slice::from_raw_parts(h as *const FrameHeader as *const u8, HEADER_BYTES) }
}

impl Tcp {
    /// Listen on `ip` (any free port) for a job of `n` ranks.
    pub fn listen(me: usize, n: usize, ip: IpAddr, key: [u8; KEY_BYTES]) -> std::io::Result<Tcp> {
        let listener = TcpListener::bind((ip, 0))?;
        listener.set_nonblocking(true)?;
        Ok(Tcp {
            me,
            key,
            listener,
            peers: vec![None; n],
            conns: Vec::new(),
            send: vec![None; n],
            of_peer: vec![Vec::new(); n],
            finished: vec![false; n],
            refused: 0,
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener has an address")
    }

    /// World rank `r` is reached over TCP at `addr`.
    pub fn add_peer(&mut self, r: usize, addr: SocketAddr) {
        self.peers[r] = Some(addr);
    }

    pub fn is_peer(&self, r: usize) -> bool {
        self.peers[r].is_some()
    }

    /// Queue a frame for `dst` with `len` payload bytes written by `fill`;
    /// false if too much waits for `dst` already (try again later).
    /// Frames for a rank that said Bye are dropped: it needs none.
    pub fn push(
        &mut self,
        dst: usize,
        h: &FrameHeader,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<bool, String> {
        if self.finished[dst] {
            return Ok(true);
        }
        let i = match self.send[dst] {
            Some(i) => i,
            None => self.connect(dst)?,
        };
        let c = self.conns[i].as_mut().expect("a send connection stays");
        if c.unsent() > OUT_CAP {
            return Ok(false);
        }
        c.out.extend_from_slice(header_bytes(h));
        let at = c.out.len();
        c.out.resize(at + len, 0);
        fill(&mut c.out[at..]);
        c.flush().map_err(|e| format!("lost the connection to rank {dst}: {e}"))?;
        Ok(true)
    }

    /// The connection to send to `dst` on: one it already has with us, or
    /// a new one.
    fn connect(&mut self, dst: usize) -> Result<usize, String> {
        if let Some(&i) = self.of_peer[dst].first() {
            self.send[dst] = Some(i);
            return Ok(i);
        }
        let addr = self.peers[dst].ok_or_else(|| format!("rank {dst} is not reached over TCP"))?;
        let fail = |e: std::io::Error| format!("cannot connect to rank {dst} at {addr}: {e}");
        let mut s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(fail)?;
        s.set_nodelay(true).map_err(fail)?;
        let mut hello = Vec::with_capacity(HELLO_BYTES);
        hello.extend_from_slice(MAGIC);
        hello.extend_from_slice(&self.key);
        hello.extend_from_slice(&(self.me as u32).to_le_bytes());
        s.write_all(&hello).map_err(fail)?;
        s.set_nonblocking(true).map_err(fail)?;
        let i = self.insert(Conn::new(s, Some(dst)));
        self.of_peer[dst].push(i);
        self.send[dst] = Some(i);
        Ok(i)
    }

    fn insert(&mut self, c: Conn) -> usize {
        match self.conns.iter().position(Option::is_none) {
            Some(i) => {
                self.conns[i] = Some(c);
                i
            }
            None => {
                self.conns.push(Some(c));
                self.conns.len() - 1
            }
        }
    }

    /// Accept, write and read what the sockets allow now. Err: a peer
    /// vanished (its connection ended before it said Bye).
    pub fn poll_io(&mut self) -> Result<(), String> {
        self.accept();
        for i in 0..self.conns.len() {
            let Some(c) = self.conns[i].as_mut() else { continue };
            let peer = c.peer;
            let io = c.flush().and_then(|()| c.fill());
            match peer {
                None => self.check_hello(i, io.is_err()),
                Some(p) => {
                    let ended = io.is_err() || c.eof && c.frame().is_none();
                    if ended && !self.finished[p] {
                        let why = io.err().map_or("it closed".to_string(), |e| e.to_string());
                        return Err(format!(
                            "the connection to rank {p} ended before rank {p} finalized ({why}): \
                             it died or its host is unreachable"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((s, _)) => {
                    if s.set_nonblocking(true).is_err() || s.set_nodelay(true).is_err() {
                        continue;
                    }
                    let pending: Vec<usize> = (0..self.conns.len())
                        .filter(|&i| self.conns[i].as_ref().is_some_and(|c| c.peer.is_none()))
                        .collect();
                    if pending.len() >= MAX_PENDING {
                        self.conns[pending[0]] = None;
                        self.refused += 1;
                    }
                    self.insert(Conn::new(s, None));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// A connection we accepted: admit it once its hello proves the key,
    /// close it as soon as it cannot.
    fn check_hello(&mut self, i: usize, broken: bool) {
        let c = self.conns[i].as_mut().expect("checked by the caller");
        let have = &c.inbuf[c.start..c.end];
        let magic_ok = have.len() < MAGIC.len() || have[..MAGIC.len()] == MAGIC[..];
        if have.len() < HELLO_BYTES && magic_ok && !broken && !c.eof {
            return;
        }
        let rank = have
            .get(MAGIC.len() + KEY_BYTES..HELLO_BYTES)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        let key_ok = have.get(MAGIC.len()..MAGIC.len() + KEY_BYTES) == Some(&self.key[..]);
        match rank {
            Some(r) if magic_ok && key_ok && r < self.peers.len() && self.peers[r].is_some() => {
                c.consume(HELLO_BYTES);
                c.peer = Some(r);
                self.of_peer[r].push(i);
            }
            _ => {
                self.conns[i] = None;
                self.refused += 1;
                if crate::runtime::tunables::flag("OXMPI_DEBUG") {
                    crate::runtime::report(&format!(
                        "oxmpi: rank {}: closed a TCP connection that did not prove the job's key\n",
                        self.me
                    ));
                }
            }
        }
    }

    /// The next frame from `src`, left in place until `pop`. `Bye`
    /// frames are taken here.
    pub fn peek(&mut self, src: usize) -> Option<(FrameHeader, &[u8])> {
        let (k, bye) = self.of_peer[src].iter().enumerate().find_map(|(k, &i)| {
            let c = self.conns[i].as_ref()?;
            c.frame().map(|(h, _)| (k, h.kind == FrameKind::Bye as u32))
        })?;
        let i = self.of_peer[src][k];
        if bye {
            self.finished[src] = true;
            self.conns[i].as_mut().expect("listed").consume(HEADER_BYTES);
            return self.peek(src);
        }
        self.conns[i].as_ref().and_then(Conn::frame)
    }

    /// Consume the frame `peek` gave.
    pub fn pop(&mut self, src: usize) {
        for &i in &self.of_peer[src] {
            if let Some(c) = self.conns[i].as_mut() {
                if let Some((h, _)) = c.frame() {
                    c.consume(HEADER_BYTES + h.frag_len as usize);
                    return;
                }
            }
        }
    }

    /// Whether a whole frame was read and waits to be taken.
    pub fn holds_frames(&self) -> bool {
        self.conns.iter().flatten().any(|c| c.peer.is_some() && c.frame().is_some())
    }

    /// Whether frames wait to be written.
    pub fn has_unsent(&self) -> bool {
        self.conns.iter().flatten().any(|c| c.unsent() > 0)
    }

    /// Block until a socket is ready or `timeout_us` passes.
    pub fn sleep(&self, timeout_us: u64) {
        let mut fds = vec![libc::pollfd { fd: self.listener.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        for c in self.conns.iter().flatten() {
            let mut events = 0;
            if !c.eof && c.end - c.start < IN_CAP {
                events |= libc::POLLIN;
            }
            if c.unsent() > 0 {
                events |= libc::POLLOUT;
            }
            fds.push(libc::pollfd { fd: c.stream.as_raw_fd(), events, revents: 0 });
        }
        let ts =
            libc::timespec { tv_sec: (timeout_us / 1_000_000) as _, tv_nsec: ((timeout_us % 1_000_000) * 1000) as _ };
        // SAFETY: `fds` is a valid array of pollfd for the call's duration.
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    }

    /// At MPI_Finalize: say Bye on every connection and write everything
    /// out (waiting at most `limit` for slow peers).
    pub fn goodbye(&mut self, limit: Duration) {
        let bye = FrameHeader { kind: FrameKind::Bye as u32, src: self.me as u32, ..Default::default() };
        for c in self.conns.iter_mut().flatten().filter(|c| c.peer.is_some()) {
            c.out.extend_from_slice(header_bytes(&bye));
        }
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until {
            let mut left = false;
            for c in self.conns.iter_mut().flatten() {
                left |= c.flush().is_ok() && c.unsent() > 0;
            }
            if !left {
                break;
            }
            self.sleep(1000);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn pair() -> (Tcp, Tcp) {
        let key = [7u8; KEY_BYTES];
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (mut a, mut b) = (Tcp::listen(0, 2, lo, key).unwrap(), Tcp::listen(1, 2, lo, key).unwrap());
        a.add_peer(1, b.address());
        b.add_peer(0, a.address());
        (a, b)
    }

    /// Poll both until `b` has a frame from `src`.
    fn next(a: &mut Tcp, b: &mut Tcp, src: usize) -> (FrameHeader, Vec<u8>) {
        for _ in 0..10_000 {
            a.poll_io().unwrap();
            b.poll_io().unwrap();
            if let Some((h, p)) = b.peek(src) {
                let out = (h, p.to_vec());
                b.pop(src);
                return out;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        panic!("no frame arrived");
    }

    fn frame(tag: i32, len: usize) -> FrameHeader {
        FrameHeader { kind: FrameKind::Eager as u32, tag, frag_len: len as u32, ..Default::default() }
    }

    #[test]
    fn frames_keep_order_both_ways_on_one_connection() {
        let (mut a, mut b) = pair();
        for t in 0..3 {
            assert!(a.push(1, &frame(t, 100_000), 100_000, |p| p.fill(t as u8)).unwrap());
        }
        for t in 0..3 {
            let (h, p) = next(&mut a, &mut b, 0);
            assert_eq!((h.tag, p.len()), (t, 100_000));
            assert!(p.iter().all(|&x| x == t as u8));
        }
        // b answers on the connection a opened
        assert!(b.push(0, &frame(9, 3), 3, |p| p.copy_from_slice(b"abc")).unwrap());
        let (h, p) = next(&mut b, &mut a, 1);
        assert_eq!((h.tag, &p[..]), (9, &b"abc"[..]));
        assert_eq!(a.conns.iter().flatten().count() + b.conns.iter().flatten().count(), 2);
    }

    #[test]
    fn strangers_are_counted_and_never_read() {
        let (mut a, mut b) = pair();
        let mut garbage = TcpStream::connect(b.address()).unwrap();
        garbage.write_all(&[0x55; 200]).unwrap();
        let mut wrong = TcpStream::connect(b.address()).unwrap();
        let mut hello = MAGIC.to_vec();
        hello.extend_from_slice(&[8u8; KEY_BYTES]);
        hello.extend_from_slice(&0u32.to_le_bytes());
        hello.extend_from_slice(header_bytes(&frame(5, 0)));
        wrong.write_all(&hello).unwrap();
        assert!(a.push(1, &frame(1, 0), 0, |_| {}).unwrap());
        let (h, _) = next(&mut a, &mut b, 0);
        assert_eq!(h.tag, 1);
        for _ in 0..100 {
            b.poll_io().unwrap();
            if b.refused == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(b.refused, 2);
        assert!(b.peek(0).is_none(), "the stranger's frame was not taken as rank 0's");
    }

    #[test]
    fn a_peer_that_vanishes_without_bye_is_an_error_and_with_bye_is_not() {
        let (mut a, mut b) = pair();
        assert!(a.push(1, &frame(1, 0), 0, |_| {}).unwrap());
        next(&mut a, &mut b, 0);
        drop(a);
        let mut failed = None;
        for _ in 0..1000 {
            if let Err(e) = b.poll_io() {
                failed = Some(e);
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(failed.expect("the loss is reported").contains("rank 0"));

        let (mut a, mut b) = pair();
        assert!(a.push(1, &frame(1, 0), 0, |_| {}).unwrap());
        next(&mut a, &mut b, 0);
        a.goodbye(Duration::from_secs(5));
        drop(a);
        for _ in 0..200 {
            b.poll_io().unwrap();
            assert!(b.peek(0).is_none());
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(b.finished[0]);
    }
}
