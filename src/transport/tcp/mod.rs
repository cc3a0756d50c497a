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
//! One connection per pair carries both directions (so the answer to a
//! message carries the acknowledgement of its bytes). The side that
//! accepts a connection answers the hello with a welcome, and the side
//! that opened it sends no frame before the welcome arrives. When two
//! ranks open connections to each other at the same moment, the one the
//! lower rank opened wins: the higher rank welcomes it and moves the
//! frames it had queued on its own (none of which went out) there; the
//! lower rank closes the other.
//!
//! Sockets are nonblocking: frames queue in a connection's outgoing
//! buffer and go out as the socket takes them; `poll_io` (from the
//! progress engine) accepts, writes and reads. Before MPI_Finalize
//! closes them, a rank says `Bye` on each connection; a connection that
//! ends without it means its rank died or its host went away, which ends
//! the job (`poll_io` reports it).
//!
//! A connection's buffers and framing are in `conn`, opening, accepting
//! and the hello/welcome check in `handshake`, the outgoing queue in
//! `queue`.

pub mod addr;
mod conn;
mod handshake;
mod queue;

use super::{FrameHeader, FrameKind, HEADER_BYTES};
use conn::{Conn, Landings, Link};
use queue::Queue;
use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

pub const KEY_BYTES: usize = 32;
const MAGIC: &[u8; 8] = b"oxmpiTC1";
const HELLO_BYTES: usize = MAGIC.len() + KEY_BYTES + 4;
/// The acceptor's answer to a good hello.
const WELCOME: &[u8; 8] = b"oxmpiOK1";
/// A connection holding this many unconsumed bytes is not read further:
/// its sender then waits on TCP's window (back-pressure, as a full ring).
const IN_CAP: usize = 8 << 20;
/// A peer whose connection has this many bytes waiting to be written
/// takes no new frames for now (the caller keeps them, as for a full ring).
const OUT_CAP: usize = 8 << 20;
/// Bytes of a long message per `Data` frame.
pub const DATA_CHUNK: usize = 1024 << 10;
/// Connections that have not said hello yet, at most; beyond, the oldest
/// goes.
const MAX_PENDING: usize = 64;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Tcp {
    me: usize,
    key: [u8; KEY_BYTES],
    listener: TcpListener,
    /// Per world rank: where it listens; None for ranks reached otherwise.
    peers: Vec<Option<SocketAddr>>,
    conns: Vec<Option<Conn>>,
    /// Per world rank: our connection with it.
    link: Vec<Option<usize>>,
    /// Per world rank whose connection won over ours: the frames for it,
    /// until its connection arrives.
    held: Vec<Option<Queue>>,
    /// Per world rank: it said Bye (it is in MPI_Finalize).
    finished: Vec<bool>,
    /// Receive buffers `Data` frames may be read into (`expect`).
    landings: Landings,
    /// Connections closed because they did not prove the job's key.
    pub refused: u64,
    /// The listener and every connection, level-triggered for reading:
    /// one call says which sockets to read (a receive that finds nothing
    /// would contend for the socket's lock with what arrives, and an
    /// accept that finds nothing costs the kernel a socket).
    epoll: std::os::fd::OwnedFd,
    events: Vec<libc::epoll_event>,
    /// Polls since epoll was last asked (see `poll_io`).
    polls: u32,
    /// The poll at which a long message last went or came (see
    /// `BULK_BYTES`).
    bulk_at: Option<u32>,
}

/// In a `Data` frame `peek` hands over: its payload was read straight
/// into the receive buffer registered by `expect` (the frame carries none).
pub const FLAG_LANDED: u32 = 1 << 8;

/// With a lone connection, epoll is still asked this often (the listener).
const LONE_EPOLL_EVERY: u32 = 64;
/// A frame of this many bytes, an RTS or a long message's data read into
/// place makes a lone connection bulky: its reads wait for epoll again
/// until this many polls pass without one.
const BULK_BYTES: usize = 32 << 10;
const BULK_POLLS: u32 = 256;

/// The epoll tag of the listener (connections are tagged by index).
const LISTENER: u64 = u64::MAX;

/// Have `epoll` report `fd` readable (level-triggered), tagged `tag`.
fn watch(epoll: &std::os::fd::OwnedFd, fd: i32, tag: u64) -> std::io::Result<()> {
    let mut e = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
    // SAFETY: valid descriptors and event.
    if unsafe { libc::epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut e) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
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
        // SAFETY: plain syscall; the descriptor is owned right away.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let epoll = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        watch(&epoll, listener.as_raw_fd(), LISTENER)?;
        Ok(Tcp {
            me,
            key,
            listener,
            peers: vec![None; n],
            conns: Vec::new(),
            link: vec![None; n],
            held: (0..n).map(|_| None).collect(),
            finished: vec![false; n],
            landings: Default::default(),
            refused: 0,
            epoll,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 64],
            polls: 0,
            bulk_at: None,
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
        self.note_bulk(h, len);
        self.queue(dst, true, |q| {
            q.push(header_bytes(h));
            q.push_with(len, fill);
        })
    }

    /// As `push` for a frame whose payload is `data`: when nothing waits
    /// to go out before it, written straight from `data`; what the socket
    /// does not take now is copied, or with `lend` queued as lent (the
    /// caller keeps `data` until `lends_to(dst)` is false).
    pub fn push_bytes(&mut self, dst: usize, h: &FrameHeader, data: &[u8], lend: bool) -> Result<bool, String> {
        // queued as lent and written from `data` by the same gathered write; what
        // the socket did not take is then copied unless it may stay lent
        self.note_bulk(h, data.len());
        self.queue(dst, lend, |q| {
            q.push(header_bytes(h));
            q.lend(data);
        })
    }

    /// A frame of a long message makes the connection bulky (`BULK_BYTES`).
    fn note_bulk(&mut self, h: &FrameHeader, len: usize) {
        if len >= BULK_BYTES || h.kind == FrameKind::Rts as u32 {
            self.bulk_at = Some(self.polls);
        }
    }

    /// Whether bytes lent for `dst` (`push_bytes`) are still queued.
    pub fn lends_to(&self, dst: usize) -> bool {
        let link = self.link[dst].and_then(|i| self.conns[i].as_ref());
        link.is_some_and(|c| c.out.has_lent()) || self.held[dst].as_ref().is_some_and(Queue::has_lent)
    }

    /// Queue bytes for `dst` by `add` (connecting first if need be), and
    /// write what the socket takes; false if too much waits already.
    /// Unless `keep_lent`, what `add` lent and the socket did not take is
    /// copied before returning.
    fn queue(&mut self, dst: usize, keep_lent: bool, add: impl FnOnce(&mut Queue)) -> Result<bool, String> {
        if self.finished[dst] {
            return Ok(true);
        }
        if self.link[dst].is_none() && self.held[dst].is_none() {
            self.connect(dst)?;
        }
        let (q, open) = match (self.link[dst], self.held[dst].as_mut()) {
            (_, Some(held)) => (held, None),
            (Some(i), None) => {
                let c = self.conns[i].as_mut().expect("a link stays");
                let open = c.link == Link::Open;
                (&mut c.out, open.then_some(i))
            }
            (None, None) => unreachable!("connected above"),
        };
        if q.len() > OUT_CAP {
            return Ok(false);
        }
        let before = q.pieces();
        add(q);
        let added = q.pieces() - before;
        let mut written = Ok(());
        if let Some(i) = open {
            let c = self.conns[i].as_mut().expect("a link stays");
            written = c.flush().map_err(|e| format!("lost the connection to rank {dst}: {e}"));
        }
        if !keep_lent {
            let q = match (self.link[dst], self.held[dst].as_mut()) {
                (_, Some(held)) => held,
                (Some(i), None) => &mut self.conns[i].as_mut().expect("a link stays").out,
                (None, None) => unreachable!("connected above"),
            };
            q.own_last(added);
        }
        written.map(|()| true)
    }

    /// Accept, write and read what the sockets allow now. Err: a peer
    /// vanished (its connection ended before it said Bye).
    pub fn poll_io(&mut self) -> Result<(), String> {
        self.polls = self.polls.wrapping_add(1);
        // a lone connection is read without asking epoll first (a message
        // is found one system call sooner), but not while long messages
        // flow: then a read finding nothing contends for the socket's lock
        // with the kernel delivering their data (at 256 KiB over loopback
        // the ping-pong took twice as long)
        let bulky = self.bulk_at.is_some_and(|b| self.polls.wrapping_sub(b) <= BULK_POLLS);
        let epoll_turn = self.polls.is_multiple_of(LONE_EPOLL_EVERY) || bulky;
        let n = match self.lone() {
            Some(c) if !epoll_turn => {
                c.readable = true;
                0
            }
            // SAFETY: `events` is a valid buffer of its length.
            _ => unsafe {
                libc::epoll_wait(self.epoll.as_raw_fd(), self.events.as_mut_ptr(), self.events.len() as i32, 0)
            },
        };
        let mut knocked = false;
        for e in &self.events[..n.max(0) as usize] {
            match e.u64 {
                LISTENER => knocked = true,
                i => {
                    if let Some(Some(c)) = self.conns.get_mut(i as usize) {
                        c.readable = true;
                    }
                }
            }
        }
        if knocked {
            self.accept();
        }
        for i in 0..self.conns.len() {
            let Some(c) = self.conns[i].as_mut() else { continue };
            let peer = c.peer;
            let readable = std::mem::replace(&mut c.readable, false) || !c.watched;
            let io = if c.link == Link::Open { c.flush() } else { Ok(()) };
            let before = c.got;
            let io = io.and_then(|()| if readable { c.fill(&self.landings) } else { Ok(()) });
            if c.got - before >= BULK_BYTES || c.landing.is_some() {
                self.bulk_at = Some(self.polls);
            }
            match (c.link, peer) {
                (Link::Hello, _) => self.check_hello(i, io.is_err()),
                (Link::Welcome, Some(p)) => self.check_welcome(i, p, io.is_err()),
                (_, None) => unreachable!("only an accepted connection has no rank yet"),
                (Link::Open, Some(p)) => {
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

    /// The one connection there is, if it is open: reading it directly
    /// finds a message one system call sooner than asking epoll first.
    fn lone(&mut self) -> Option<&mut Conn> {
        let mut live = self.conns.iter_mut().flatten();
        match (live.next(), live.next()) {
            (Some(c), None) if c.link == Link::Open => Some(c),
            _ => None,
        }
    }

    /// The open connection with `src`.
    fn open(&mut self, src: usize) -> Option<&mut Conn> {
        let c = self.conns[self.link[src]?].as_mut()?;
        (c.link == Link::Open).then_some(c)
    }

    /// `Data` frames from `src` for receive request `rreq` may be read
    /// straight into `cap` bytes at `base` (a contiguous receive buffer).
    ///
    /// # Safety
    /// The buffer must stay writable until `forget(src, rreq)`.
    pub unsafe fn expect(&mut self, src: usize, rreq: u64, base: *mut u8, cap: usize) {
        self.landings.insert((src, rreq), (base as usize, cap));
    }

    pub fn forget(&mut self, src: usize, rreq: u64) {
        self.landings.remove(&(src, rreq));
    }

    /// The next frame from `src`, left in place until `pop`. `Bye`
    /// frames are taken here; a `Data` frame for an expected receive whose
    /// payload has not all arrived starts landing in place.
    pub fn peek(&mut self, src: usize) -> Option<(FrameHeader, &[u8])> {
        let landings = &self.landings;
        let c = self.conns[self.link[src]?].as_mut().filter(|c| c.link == Link::Open)?;
        if c.landed.is_none() && c.landing.is_none() && c.land(landings) {
            // the rest of the payload comes with the next reads
            return None;
        }
        if let Some(h) = c.landed {
            return Some((h, &[]));
        }
        if c.landing.is_some() {
            return None;
        }
        let (h, _) = c.frame()?;
        if h.kind == FrameKind::Bye as u32 {
            c.consume(HEADER_BYTES);
            self.finished[src] = true;
            return self.peek(src);
        }
        self.open(src)?.frame()
    }

    /// Consume the frame `peek` gave.
    pub fn pop(&mut self, src: usize) {
        if let Some(c) = self.open(src) {
            if c.landed.take().is_some() {
                return;
            }
            if let Some((h, _)) = c.frame() {
                c.consume(HEADER_BYTES + h.frag_len as usize);
            }
        }
    }

    /// Whether frames for `dst` are refused until the socket takes some of
    /// what is queued (see `queue`).
    pub fn congested(&self, dst: usize) -> bool {
        let q = match (self.link[dst], self.held[dst].as_ref()) {
            (_, Some(held)) => held,
            (Some(i), None) => match self.conns[i].as_ref() {
                Some(c) => &c.out,
                None => return false,
            },
            (None, None) => return false,
        };
        q.len() > OUT_CAP
    }

    /// Whether a whole frame was read and waits to be taken.
    pub fn holds_frames(&self) -> bool {
        self.conns.iter().flatten().any(|c| c.link == Link::Open && (c.landed.is_some() || c.frame().is_some()))
    }

    /// Whether frames for a peer wait for a connection to open or to be
    /// written.
    fn undelivered(&self) -> bool {
        self.held.iter().any(Option::is_some) || self.conns.iter().flatten().any(|c| c.peer.is_some() && c.unsent() > 0)
    }

    /// Block until a socket is ready or `timeout_us` passes.
    pub fn sleep(&self, timeout_us: u64) {
        let mut fds = vec![libc::pollfd { fd: self.epoll.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        for c in self.conns.iter().flatten().filter(|c| c.link == Link::Open && c.unsent() > 0) {
            fds.push(libc::pollfd { fd: c.stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 });
        }
        let ts =
            libc::timespec { tv_sec: (timeout_us / 1_000_000) as _, tv_nsec: ((timeout_us % 1_000_000) * 1000) as _ };
        // SAFETY: `fds` is a valid array of pollfd for the call's duration.
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    }

    /// At MPI_Finalize: say Bye on every connection and write everything
    /// out (waiting at most `limit` for slow peers).
    pub fn goodbye(&mut self, limit: Duration) {
        // Frames queued on a connection still waiting for its welcome (or
        // held for the peer's winning connection) must go first: keep
        // answering hellos and welcomes until they are out.
        let until = std::time::Instant::now() + limit;
        while std::time::Instant::now() < until && self.undelivered() {
            let _ = self.poll_io();
            self.sleep(1000);
        }
        let bye = FrameHeader { kind: FrameKind::Bye as u32, src: self.me as u32, ..Default::default() };
        for c in self.conns.iter_mut().flatten().filter(|c| c.link == Link::Open) {
            c.out.push(header_bytes(&bye));
        }
        while std::time::Instant::now() < until {
            let mut left = false;
            for c in self.conns.iter_mut().flatten().filter(|c| c.link == Link::Open) {
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
    use std::io::Write;
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
    fn ranks_connecting_at_once_end_with_one_connection_and_order_kept() {
        let (mut a, mut b) = pair();
        for t in 0..3 {
            assert!(a.push(1, &frame(t, 10), 10, |p| p.fill(1)).unwrap());
            assert!(b.push(0, &frame(10 + t, 10), 10, |p| p.fill(2)).unwrap());
        }
        for t in 0..3 {
            assert_eq!(next(&mut a, &mut b, 0).0.tag, t);
            assert_eq!(next(&mut b, &mut a, 1).0.tag, 10 + t);
        }
        assert!(b.push(0, &frame(20, 0), 0, |_| {}).unwrap());
        assert_eq!(next(&mut b, &mut a, 1).0.tag, 20);
        let open = |t: &Tcp| t.conns.iter().flatten().filter(|c| c.link == Link::Open).count();
        assert_eq!((open(&a), open(&b)), (1, 1));
        assert_eq!(a.conns.iter().flatten().count() + b.conns.iter().flatten().count(), 2);
        assert_eq!(a.refused + b.refused, 0, "the losing connection is no stranger");
    }

    #[test]
    fn data_lands_in_its_receive_and_early_data_never_does() {
        const LEN: usize = 1 << 20; // more than one read: landing starts mid-frame
        let (mut a, mut b) = pair();
        let mut buf = vec![0u8; LEN];
        // SAFETY: `buf` outlives every use of `b` below.
        unsafe { b.expect(0, 5, buf.as_mut_ptr(), LEN) };
        let data =
            |kind: FrameKind| FrameHeader { kind: kind as u32, a: 5, frag_len: LEN as u32, ..Default::default() };
        // sender request 5 sends its first part early: not receive 5's
        assert!(a.push(1, &data(FrameKind::Early), LEN, |p| p.fill(0xee)).unwrap());
        let (h, p) = next(&mut a, &mut b, 0);
        assert_eq!((h.flags & FLAG_LANDED, p.len()), (0, LEN));
        assert!(p.iter().all(|&x| x == 0xee));
        assert!(buf.iter().all(|&x| x == 0), "early data landed in receive 5");
        assert!(a.push(1, &data(FrameKind::Data), LEN, |p| p.fill(0x5a)).unwrap());
        let (h, p) = next(&mut a, &mut b, 0);
        assert_eq!((h.flags & FLAG_LANDED, p.len()), (FLAG_LANDED, 0));
        assert!(buf.iter().all(|&x| x == 0x5a));
        b.forget(0, 5);
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
