//! Buffered mode: the user's attached buffer (MPI_Buffer_attach) holds a
//! copy of each buffered message until it is delivered, so MPI_Bsend
//! returns before the matching receive is posted.

use super::protocol::Mode;
use super::request::{ReqId, Request, Status};
use super::{Engine, SendArgs};
use crate::err;
use crate::error::MpiResult;
use crate::runtime::backoff::Backoff;

/// Bytes of bookkeeping counted per buffered message (MPI_BSEND_OVERHEAD).
pub const BSEND_OVERHEAD: usize = 96;

#[derive(Default)]
pub struct Attached {
    base: usize,
    size: usize,
    attached: bool,
    /// (offset, length) of blocks in use, sorted by offset.
    used: Vec<(usize, usize)>,
}

impl Attached {
    /// First fit: the offset of a free run of `len` bytes.
    fn alloc(&mut self, len: usize) -> Option<usize> {
        let mut at = 0;
        for (i, &(off, l)) in self.used.iter().enumerate() {
            if off - at >= len {
                self.used.insert(i, (at, len));
                return Some(at);
            }
            at = off + l;
        }
        if self.size - at >= len {
            self.used.push((at, len));
            return Some(at);
        }
        None
    }

    pub fn release(&mut self, off: usize) {
        self.used.retain(|&(o, _)| o != off);
    }

    fn free_bytes(&self) -> usize {
        self.size - self.used.iter().map(|&(_, l)| l).sum::<usize>()
    }
}

impl Engine {
    pub fn buffer_attach(&mut self, base: usize, size: usize) -> MpiResult<()> {
        if self.bsend.attached {
            return err!(
                Buffer,
                "a buffer of {} bytes is already attached; detach it first (MPI_Buffer_detach)",
                self.bsend.size
            );
        }
        self.bsend = Attached { base, size, attached: true, used: Vec::new() };
        Ok(())
    }

    /// Wait until every buffered message is delivered, then detach.
    pub fn buffer_detach(&mut self) -> MpiResult<(usize, usize)> {
        if !self.bsend.attached {
            return err!(Buffer, "no buffer is attached");
        }
        let mut backoff = Backoff::new();
        loop {
            self.progress();
            self.reap_orphans();
            if self.bsend.used.is_empty() {
                break;
            }
            self.idle(&mut backoff);
        }
        let b = std::mem::take(&mut self.bsend);
        Ok((b.base, b.size))
    }

    /// MPI_Bsend/Ibsend: copy into the attached buffer and send from there;
    /// the returned request is already complete.
    ///
    /// # Safety
    /// `a.buf` must be readable over the items during this call.
    pub(super) unsafe fn bsend_start(&mut self, a: SendArgs, dst: usize, len: usize) -> MpiResult<ReqId> {
        let need = len + BSEND_OVERHEAD;
        let Some(off) = self.bsend.alloc(need) else {
            return err!(
                Buffer,
                "buffered send of {len} bytes needs {need} bytes of attached buffer but {} are free (attached: {}); attach a larger buffer with MPI_Buffer_attach (each message needs its size + MPI_BSEND_OVERHEAD)",
                self.bsend.free_bytes(),
                if self.bsend.attached { format!("{} bytes", self.bsend.size) } else { "none".into() }
            );
        };
        let copy = self.bsend.base + off;
        // SAFETY: the block lies inside the attached buffer, which the user
        // keeps valid until detach; `a.buf` is readable (caller).
        unsafe {
            crate::datatype::pack::pack(&a.ty, a.count, a.buf, std::slice::from_raw_parts_mut(copy as *mut u8, len))
        };
        let inner = SendArgs {
            buf: copy as *const u8,
            count: len,
            ty: crate::datatype::byte(),
            dst: Some(dst),
            tag: a.tag,
            ctx: a.ctx,
            mode: Mode::Standard,
            label: a.label,
            // the packed copy travels as bytes but carries the original's signature
            sig: self.check_types.then(|| crate::datatype::signature::of_message(&a.ty, a.count) as u32),
        };
        // SAFETY: the copy stays valid until the block is released, which
        // happens only when the inner send completes.
        let id = unsafe { self.isend(inner)? };
        match self.requests.get_mut(id) {
            Some(Request::Send(s)) => {
                s.bsend_block = Some(off);
                self.orphans.push(id);
            }
            _ => {
                self.requests.remove(id);
                self.bsend.release(off);
            }
        }
        Ok(self.requests.insert(Request::Done(Status {
            source: super::PROC_NULL,
            tag: super::ANY_TAG,
            ..Default::default()
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_reuses_released_space() {
        let mut a = Attached { base: 0, size: 100, attached: true, used: Vec::new() };
        assert_eq!(a.alloc(40), Some(0));
        assert_eq!(a.alloc(40), Some(40));
        assert_eq!(a.alloc(40), None);
        assert_eq!(a.free_bytes(), 20);
        a.release(0);
        assert_eq!(a.alloc(30), Some(0));
        assert_eq!(a.alloc(10), Some(30));
        assert_eq!(a.alloc(20), Some(80));
        assert_eq!(a.free_bytes(), 0);
    }
}
