//! Where frames go: each world rank is reached through this host's
//! shared segment (its ring to us, by local rank) or over TCP, chosen at
//! init (`Route`). The rest of the engine sends and takes frames through
//! these few functions and never asks which.

use super::request::Request;
use super::Engine;
use crate::transport::FrameHeader;
use std::sync::atomic::Ordering;

/// How a world rank is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// On this host: the rank's index in the shared segment.
    Shm(usize),
    Tcp,
}

/// A sleeping rank with peers on both transports wakes this often to look
/// at the rings (their doorbells cannot wake a wait on sockets).
const MIXED_SLEEP_US: u64 = 100;

/// How often a waiting rank checks that its peers on this host live.
const ROLL_CALL_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// How long a rank that lost a peer waits for the launcher to end the job.
const LAUNCHER_GRACE_MS: u64 = 500;

impl Engine {
    /// Put a frame for `dst` on its way, its `len` payload bytes written
    /// by `fill`; false when there is no room now (a full ring, a
    /// congested connection).
    pub(super) fn try_push(&mut self, dst: usize, h: &FrameHeader, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        match self.route[dst] {
            Route::Shm(l) => {
                let ok = self.seg.ring(self.seg.me, l).try_push(h, len, fill);
                if ok {
                    self.seg.ring_bell(l);
                }
                ok
            }
            Route::Tcp => match self.tcp.as_mut().map(|t| t.push(dst, h, len, fill)) {
                Some(Ok(ok)) => ok,
                Some(Err(why)) => self.lost(&why),
                None => unreachable!("a TCP route exists only with the TCP transport"),
            },
        }
    }

    /// As `try_push` for a payload already in memory (over TCP written
    /// from there without a copy when the socket takes it). With `lend`,
    /// what the socket does not take at once stays there too: the caller
    /// keeps `data` until `lends_to(dst)` is false.
    pub(super) fn try_push_bytes(&mut self, dst: usize, h: &FrameHeader, data: &[u8], lend: bool) -> bool {
        match (self.route[dst], self.tcp.as_mut()) {
            (Route::Tcp, Some(t)) => match t.push_bytes(dst, h, data, lend) {
                Ok(ok) => ok,
                Err(why) => self.lost(&why),
            },
            _ => self.try_push(dst, h, data.len(), |b| b.copy_from_slice(data)),
        }
    }

    /// Whether bytes lent for `dst` wait to be written.
    pub(super) fn lends_to(&self, dst: usize) -> bool {
        self.route[dst] == Route::Tcp && self.tcp.as_ref().is_some_and(|t| t.lends_to(dst))
    }

    /// The next frame from `src`, left in place until `pop_frame`; the
    /// payload stays valid until then (the caller detaches its lifetime).
    pub(super) fn peek_frame(&mut self, src: usize) -> Option<(FrameHeader, &[u8])> {
        match self.route[src] {
            Route::Shm(l) => self.seg.ring(l, self.seg.me).peek(),
            Route::Tcp => self.tcp.as_mut()?.peek(src),
        }
    }

    pub(super) fn pop_frame(&mut self, src: usize) {
        match self.route[src] {
            Route::Shm(l) => self.seg.ring(l, self.seg.me).pop(),
            Route::Tcp => {
                if let Some(t) = self.tcp.as_mut() {
                    t.pop(src)
                }
            }
        }
    }

    /// Bytes of a long message per pushed `Data` frame to `dst`.
    pub(super) fn chunk_for(&self, dst: usize) -> usize {
        match self.route[dst] {
            Route::Shm(_) => self.seg.payload(),
            Route::Tcp => crate::transport::tcp::DATA_CHUNK,
        }
    }

    /// Whether `r` shares this host's segment (its memory is readable
    /// by cross-memory attach, its mailbox is in our segment).
    pub fn is_local(&self, r: usize) -> bool {
        matches!(self.route[r], Route::Shm(_))
    }

    /// The index of world rank `r` in this host's segment.
    pub(crate) fn local_index(&self, r: usize) -> usize {
        match self.route[r] {
            Route::Shm(l) => l,
            Route::Tcp => unreachable!("rank {r} is not on this host"),
        }
    }

    /// The world rank of index `l` in this host's segment.
    pub(crate) fn world_of_local(&self, l: usize) -> usize {
        (0..self.size).find(|&r| self.route[r] == Route::Shm(l)).unwrap_or(l)
    }

    /// Whether every rank of `group` shares this host's segment.
    pub fn all_local(&self, group: &crate::comm::Group) -> bool {
        self.seg.nranks == self.size || (0..group.size()).all(|r| self.is_local(group.world_rank(r)))
    }

    /// Socket work: accept, write, read. Part of every progress call when
    /// there are TCP peers.
    pub(super) fn poll_tcp(&mut self) {
        if let Some(Err(why)) = self.tcp.as_mut().map(|t| t.poll_io()) {
            self.lost(&why);
        }
    }

    /// Wait up to `timeout_us` for something to do, unless `done`.
    pub(super) fn sleep(&self, timeout_us: u64, done: impl Fn() -> bool) {
        self.roll_call();
        // nothing of ours waits to go out
        let quiet = self.outbox_frames == 0 && self.pushing.is_empty();
        let (seg, me) = (&self.seg, self.seg.me);
        let rings_empty = || (0..seg.nranks).all(|s| seg.ring(s, me).is_empty());
        match &self.tcp {
            // Frames may wait for a congested socket: its sleep wakes when
            // the socket takes more.
            Some(t) => {
                if (quiet || self.waits_for_room()) && !done() && rings_empty() && !t.holds_frames() {
                    t.sleep(if seg.nranks > 1 { timeout_us.min(MIXED_SLEEP_US) } else { timeout_us });
                }
            }
            None if quiet => seg.sleep(timeout_us, false, || !done() && rings_empty()),
            // Frames wait for room: sleep while every ring they wait for
            // is full (a rank spinning here would hold the core its
            // receiver needs when ranks outnumber cores); the receivers
            // ring as they empty slots.
            None => seg.sleep(timeout_us, true, || !done() && rings_empty() && self.waits_for_room()),
        }
    }

    /// Whether every frame of ours that waits to go out waits for room in
    /// a full ring or a congested socket.
    fn waits_for_room(&self) -> bool {
        // (a frame of `len` bytes has no room to `dst`)
        let full = |dst: usize, len: usize| match self.route[dst] {
            Route::Shm(l) => !self.seg.ring(self.seg.me, l).has_room(len),
            Route::Tcp => self.tcp.as_ref().is_some_and(|t| t.congested(dst)),
        };
        (0..self.size).all(|d| self.outbox[d].front().is_none_or(|o| full(d, o.payload.len())))
            && self.pushing.iter().all(
                |&id| matches!(self.requests.get(id), Some(Request::Send(s)) if full(s.dst, self.chunk_for(s.dst))),
            )
    }

    /// Now and then while waiting: a peer on this host whose process is
    /// gone before MPI_Finalize ends the job (whatever started it: a
    /// launcher that leaves the others running, such as Slurm's default,
    /// would let them wait forever), and so does the launcher going away
    /// (a rank started over ssh outlives a killed mpiexec otherwise).
    /// Peers over TCP are watched by their connections.
    fn roll_call(&self) {
        if self.last_roll_call.get().elapsed() < ROLL_CALL_EVERY {
            return;
        }
        self.last_roll_call.set(std::time::Instant::now());
        if crate::runtime::pmi::launcher_gone() {
            self.lost("the launcher's PMI connection closed: mpiexec (or the process manager) is gone");
        }
        for r in 0..self.size {
            let (Route::Shm(l), pid) = (self.route[r], self.pids[r]) else { continue };
            if r == self.rank || pid <= 0 || self.seg.doorbell(l).finalizing.load(Ordering::Acquire) != 0 {
                continue;
            }
            // SAFETY: signal 0 only asks whether the process exists.
            if unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
            {
                self.lost(&format!("rank {r} (process {pid}) on this host ended before MPI_Finalize"));
            }
        }
    }

    /// A peer is gone: end the job with one clear line.
    /// The launcher, which saw the peer die, usually ends the job first
    /// and names the rank that died: give it a moment to.
    pub(super) fn lost(&self, why: &str) -> ! {
        crate::runtime::report(&format!("oxmpi: rank {}: {why}; ending the job\n", self.rank));
        std::thread::sleep(std::time::Duration::from_millis(LAUNCHER_GRACE_MS));
        crate::runtime::abort_job(1, why)
    }

    /// At MPI_Finalize, once the last collective is done: tell TCP peers
    /// we are going, so our connections closing is no failure.
    pub fn goodbye(&mut self) {
        self.seg.doorbell(self.seg.me).finalizing.store(1, Ordering::Release);
        if let Some(t) = self.tcp.as_mut() {
            t.goodbye(std::time::Duration::from_secs(10));
            if t.refused > 0 && crate::runtime::tunables::flag("OXMPI_DEBUG") {
                crate::runtime::report(&format!(
                    "oxmpi: rank {}: refused {} TCP connection(s) without the job's key\n",
                    self.rank, t.refused
                ));
            }
        }
    }
}
