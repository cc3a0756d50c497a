//! What a connection has still to write, in order: bytes of its own
//! (headers, eager payloads), and bytes lent by a long message's sender,
//! written straight from the user's buffer; such a send completes only
//! once nothing it lent is queued (`lent`).

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::os::fd::AsRawFd;

enum Piece {
    Own(Vec<u8>),
    /// `len` bytes at address `at`, the lender's.
    Lent {
        at: usize,
        len: usize,
    },
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Own(v) => v.len(),
            Piece::Lent { len, .. } => *len,
        }
    }
}

#[derive(Default)]
pub struct Queue {
    pieces: VecDeque<Piece>,
    /// Bytes of the front piece already written.
    done: usize,
    /// Bytes queued, all pieces together.
    bytes: usize,
    /// Lent pieces queued.
    lent: usize,
    /// A written piece's buffer, kept for the next one (no allocation per
    /// frame).
    spare: Vec<u8>,
}

/// Buffers up to this size are kept for reuse.
const SPARE_MAX: usize = 64 << 10;

/// iovecs per write.
const IOV: usize = 64;

impl Queue {
    /// Bytes still to write.
    pub fn len(&self) -> usize {
        self.bytes - self.done
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn has_lent(&self) -> bool {
        self.lent > 0
    }

    /// Append `len` bytes of our own, written by `fill`.
    pub fn push_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) {
        if !matches!(self.pieces.back(), Some(Piece::Own(_))) {
            self.pieces.push_back(Piece::Own(std::mem::take(&mut self.spare)));
        }
        let Some(Piece::Own(v)) = self.pieces.back_mut() else { unreachable!("pushed above") };
        let at = v.len();
        v.resize(at + len, 0);
        fill(&mut v[at..]);
        self.bytes += len;
    }

    pub fn push(&mut self, b: &[u8]) {
        self.push_with(b.len(), |d| d.copy_from_slice(b));
    }

    /// Append `b` as lent: it must stay readable until `has_lent` says
    /// false.
    pub fn lend(&mut self, b: &[u8]) {
        if !b.is_empty() {
            self.pieces.push_back(Piece::Lent { at: b.as_ptr() as usize, len: b.len() });
            self.bytes += b.len();
            self.lent += 1;
        }
    }

    /// Pieces queued.
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// Copy what is left of the last `k` pieces (or of all, if fewer are
    /// left) if they are lent: their lender is about to take them back.
    pub fn own_last(&mut self, k: usize) {
        let n = self.pieces.len();
        for i in n - k.min(n)..n {
            let skip = if i == 0 { std::mem::take(&mut self.done) } else { 0 };
            if let Piece::Lent { at, len } = self.pieces[i] {
                // SAFETY: lent bytes are readable while queued (`lend`).
                let rest = unsafe { std::slice::from_raw_parts((at + skip) as *const u8, len - skip) };
                self.pieces[i] = Piece::Own(rest.to_vec());
                self.lent -= 1;
                self.bytes -= skip;
            } else if skip > 0 {
                self.done = skip;
            }
        }
    }

    /// Append everything of `other` (still to write) after ours.
    pub fn append(&mut self, mut other: Queue) {
        if let Some(front) = other.pieces.front_mut() {
            if other.done > 0 {
                match front {
                    Piece::Own(v) => {
                        v.drain(..other.done);
                    }
                    Piece::Lent { at, len } => (*at, *len) = (*at + other.done, *len - other.done),
                }
            }
        }
        self.bytes += other.len();
        self.lent += other.lent;
        self.pieces.extend(other.pieces);
    }

    /// Write what `s` takes now.
    pub fn write_to(&mut self, s: &impl AsRawFd) -> std::io::Result<()> {
        while !self.is_empty() {
            let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; IOV];
            let mut k = 0;
            for (i, p) in self.pieces.iter().take(IOV).enumerate() {
                let skip = if i == 0 { self.done } else { 0 };
                let base = match p {
                    Piece::Own(v) => v.as_ptr() as usize,
                    Piece::Lent { at, .. } => *at,
                };
                iov[k] = libc::iovec { iov_base: (base + skip) as *mut libc::c_void, iov_len: p.len() - skip };
                k += 1;
            }
            // SAFETY: every iovec covers our own bytes or lent bytes, which
            // stay readable while queued (`lend`'s contract); the header
            // points at `iov` for the call only.
            let n = unsafe {
                let mut msg: libc::msghdr = std::mem::zeroed();
                msg.msg_iov = iov.as_mut_ptr();
                msg.msg_iovlen = k as _;
                // a peer gone is an error to report, not a SIGPIPE
                libc::sendmsg(s.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.kind() {
                    ErrorKind::WouldBlock => Ok(()),
                    ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            self.advance(n as usize);
        }
        Ok(())
    }

    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let front = self.pieces.front().expect("written bytes were queued").len() - self.done;
            if n < front {
                self.done += n;
                return;
            }
            n -= front;
            self.bytes -= self.done + front;
            self.done = 0;
            match self.pieces.pop_front() {
                Some(Piece::Lent { .. }) => self.lent -= 1,
                Some(Piece::Own(mut v)) if v.capacity() <= SPARE_MAX => {
                    v.clear();
                    self.spare = v;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn own_and_lent_bytes_go_out_in_order() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let lent = vec![7u8; 100_000];
        let mut q = Queue::default();
        q.push(b"head");
        q.lend(&lent);
        q.push_with(3, |d| d.copy_from_slice(b"end"));
        assert_eq!((q.len(), q.has_lent()), (100_007, true));
        let mut got = Vec::new();
        a.set_nonblocking(true).unwrap();
        while !q.is_empty() {
            q.write_to(&a).unwrap();
            let mut buf = [0u8; 65536];
            let n = b.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        while got.len() < 100_007 {
            let mut buf = [0u8; 65536];
            let n = b.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert!(!q.has_lent());
        assert_eq!(&got[..4], b"head");
        // lent bytes the socket did not take become our own
        let mut q = Queue::default();
        let lent = vec![9u8; 10];
        q.push(b"h");
        q.lend(&lent);
        q.advance(3);
        q.own_last(1);
        assert!(!q.has_lent());
        assert_eq!(q.len(), 8);
        assert!(got[4..100_004].iter().all(|&x| x == 7));
        assert_eq!(&got[100_004..], b"end");
    }
}
