//! One TCP connection: its socket, where it stands (hello, welcome,
//! open), the bytes read and not yet taken as frames, the frames queued
//! to go out, and `Data` payloads read straight into their receive
//! buffers.

use super::*;
use std::io::Read;

/// Where a connection stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    /// We accepted it and wait for the hello.
    Hello,
    /// We opened it and wait for the welcome (frames queue, unsent).
    Welcome,
    /// Frames flow both ways.
    Open,
}

pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) link: Link,
    /// The world rank at the other end: known to the side that connected,
    /// proved by the hello to the side that accepted.
    pub(super) peer: Option<usize>,
    /// Bytes read: `inbuf[start..end]` are not consumed yet.
    pub(super) inbuf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Bytes to write.
    pub(super) out: Queue,
    /// The other end closed (or the connection broke).
    pub(super) eof: bool,
    /// epoll says there is something to read.
    pub(super) readable: bool,
    /// epoll watches it (else it is read at every poll).
    pub(super) watched: bool,
    /// The payload being read into place, then the frame it completes.
    pub(super) landing: Option<Landing>,
    pub(super) landed: Option<FrameHeader>,
    /// Bytes read in all.
    pub(super) got: usize,
}

impl Conn {
    pub(super) fn new(stream: TcpStream, peer: Option<usize>) -> Conn {
        Conn {
            stream,
            link: if peer.is_some() { Link::Welcome } else { Link::Hello },
            peer,
            inbuf: vec![0; 64 << 10],
            start: 0,
            end: 0,
            out: Queue::default(),
            eof: false,
            readable: true,
            watched: false,
            landing: None,
            landed: None,
            got: 0,
        }
    }

    pub(super) fn unsent(&self) -> usize {
        self.out.len()
    }

    /// Write what the socket takes now.
    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        self.out.write_to(&self.stream)
    }

    /// Read what the socket has now (up to IN_CAP unconsumed). A `Data`
    /// frame for a receive in `landings` reaching the head has the rest of
    /// its payload read straight into place.
    pub(super) fn fill(&mut self, landings: &Landings) -> std::io::Result<()> {
        loop {
            if let Some(l) = self.landing.as_mut() {
                // SAFETY: `expect`'s caller keeps the buffer writable over
                // `left` bytes from `at` until the receive completes.
                let room = unsafe { std::slice::from_raw_parts_mut(l.at as *mut u8, l.left) };
                match self.stream.read(room) {
                    Ok(0) => self.eof = true,
                    Ok(n) => {
                        self.got += n;
                        (l.at, l.left) = (l.at + n, l.left - n);
                        if l.left == 0 {
                            let mut h = self.landing.take().expect("landing").header;
                            h.flags |= FLAG_LANDED;
                            self.landed = Some(h);
                        }
                        continue;
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                return Ok(());
            }
            if self.landed.is_none() && self.land(landings) {
                continue;
            }
            if self.eof || self.end - self.start >= IN_CAP {
                break;
            }
            if self.end == self.inbuf.len() {
                if self.start > 0 {
                    self.inbuf.copy_within(self.start..self.end, 0);
                    self.end -= self.start;
                    self.start = 0;
                } else {
                    self.inbuf.resize(self.inbuf.len() * 2, 0);
                }
            }
            let room = self.inbuf.len() - self.end;
            match self.stream.read(&mut self.inbuf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.end += n;
                    self.got += n;
                    // a short read means the socket is empty for now: stop
                    // (no second call to hear so), unless a frame header is
                    // half read while receives wait to be landed (the rest
                    // of a long message is on its way)
                    if n < room && (self.landed.is_some() || !self.may_land(landings)) {
                        break;
                    }
                }
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

    /// The head frame, if it is a `Data` frame for a receive of `landings`
    /// that fits and has not all arrived: (where its payload goes, its size).
    pub(super) fn landing_spot(&self, landings: &Landings) -> Option<(FrameHeader, usize)> {
        let have = &self.inbuf[self.start..self.end];
        if have.len() < HEADER_BYTES {
            return None;
        }
        // SAFETY: as in `frame`.
        let h = unsafe { std::ptr::read_unaligned(have.as_ptr() as *const FrameHeader) };
        let (off, n) = (h.b as usize, h.frag_len as usize);
        // only `Data` names a receive (an `Early` frame's `a` is the
        // sender's request)
        if h.kind != FrameKind::Data as u32 || have.len() >= HEADER_BYTES + n {
            return None;
        }
        let &(base, cap) = landings.get(&(self.peer?, h.a))?;
        (off + n <= cap).then_some((h, base + off))
    }

    /// Whether the head frame would land once its header is whole.
    pub(super) fn may_land(&self, landings: &Landings) -> bool {
        !landings.is_empty() && self.end - self.start < HEADER_BYTES && self.end > self.start
    }

    /// Start landing the head frame (see `landing_spot`): what of its
    /// payload was read goes into place now, the rest as it comes.
    pub(super) fn land(&mut self, landings: &Landings) -> bool {
        let Some((h, at)) = self.landing_spot(landings) else { return false };
        let got = self.end - self.start - HEADER_BYTES;
        // SAFETY: the registered buffer holds the whole payload from `at`
        // (checked by landing_spot) and got < its size.
        unsafe { std::ptr::copy_nonoverlapping(self.inbuf[self.start + HEADER_BYTES..].as_ptr(), at as *mut u8, got) };
        self.landing = Some(Landing { header: h, at: at + got, left: h.frag_len as usize - got });
        // the frame was the last thing read: nothing else is buffered
        (self.start, self.end) = (0, 0);
        true
    }

    /// The first whole frame read and not consumed.
    pub(super) fn frame(&self) -> Option<(FrameHeader, &[u8])> {
        let have = &self.inbuf[self.start..self.end];
        if have.len() < HEADER_BYTES {
            return None;
        }
        // SAFETY: FrameHeader is plain old data of HEADER_BYTES bytes; the
        // read is unaligned-safe.
        let h = unsafe { std::ptr::read_unaligned(have.as_ptr() as *const FrameHeader) };
        have.get(HEADER_BYTES..HEADER_BYTES + h.frag_len as usize).map(|p| (h, p))
    }

    pub(super) fn consume(&mut self, n: usize) {
        self.start += n;
    }
}

/// Receive buffers for `Data` frames, by (source, receive request):
/// where the message starts and how many bytes fit.
pub(super) type Landings = std::collections::HashMap<(usize, u64), (usize, usize)>;

/// A `Data` frame whose payload is being read into its receive buffer.
pub(super) struct Landing {
    pub(super) header: FrameHeader,
    /// Where the next byte goes.
    pub(super) at: usize,
    pub(super) left: usize,
}
